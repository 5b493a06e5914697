"""The rule protocol: a rule reads dataflow events and says which are findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

import libcst as cst

from exportlint.analysis.events import Event
from exportlint.analysis.index import FileIndex
from exportlint.analysis.values import Step, Val
from exportlint.catalogue import CATALOGUE, RuleInfo
from exportlint.diagnostics import Target


@dataclass
class Finding:
    code: str
    file: FileIndex
    node: cst.CSTNode
    message: str
    hint: str
    prov: tuple[Step, ...] = ()


@dataclass
class RuleContext:
    file: FileIndex
    target: Target

    def code(self, node: cst.CSTNode, limit: int = 60) -> str:
        text = " ".join(self.file.code(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    @property
    def trace(self) -> bool:
        return self.target is Target.TRACE


class Rule:
    """Subclasses set ``code``, the ``events`` they read, and implement :meth:`check`."""

    code: ClassVar[str]
    events: ClassVar[tuple[type[Event], ...]]

    @property
    def info(self) -> RuleInfo:
        return CATALOGUE[self.code]

    def check(self, event: Event, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(self, ctx: RuleContext, node: cst.CSTNode, message: str, hint: str, *vals: Val) -> Finding:
        prov: tuple[Step, ...] = ()
        for v in vals:
            prov += v.prov
        return Finding(self.code, ctx.file, node, message, hint, _dedupe(prov))


def _dedupe(prov: tuple[Step, ...]) -> tuple[Step, ...]:
    seen: set[tuple[int, str]] = set()
    out = []
    for s in prov:
        key = (id(s.node), s.message)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return tuple(out)
