"""The rule protocol: a rule reads dataflow events and says which are findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator

import libcst as cst

from exportlint.analysis.events import Event
from exportlint.analysis.index import FileIndex
from exportlint.analysis.values import DDS, SHAPE, TENSOR, Step, Val, dedupe_steps, optional_of
from exportlint.catalogue import CATALOGUE, RuleInfo
from exportlint.diagnostics import Severity, Target

if TYPE_CHECKING:
    from exportlint.fixes.syntax import FixPlan, FixSite


@dataclass
class Finding:
    code: str
    file: FileIndex
    node: cst.CSTNode
    message: str
    hint: str
    prov: tuple[Step, ...] = ()
    top: object = None  # the top-level statement holding ``node``, if known
    severity: Severity | None = None  # instead of the rule's default for the target
    # The fix producer, called once the finding is kept: the edits, or None (no fix here).
    fix: "Callable[[FixSite], FixPlan | None] | None" = None
    # Provenance beyond the value's history, e.g. the export call a finding is about: Notes.
    notes: tuple = ()
    # An error on the same root's unconditional path that torch.export stops at first (engine).
    after: "Finding | None" = None
    # The optional input of the root every path to this line needs given (engine), if any.
    needs: str | None = None
    # The optional input the values it is about were computed from (`optional:` tags), if one: the line
    # runs on them only where that input is given.
    from_optional: str | None = None
    # Lowered to info because this path skips it by default (a non-default setting, an input given,
    # a root's unused output: engine); a path that does not lower it wins.
    lowered: bool = False
    # The non-default setting it was lowered for, when the function's caller made the call only under
    # it (id of that function): another call on the default path runs the same line (engine.results)
    gated_in: tuple[int, str] | None = None
    # The modules analysed on their own (library mode) whose analysis found it (engine.results)
    roots: tuple[str, ...] = ()


@dataclass
class RuleContext:
    file: FileIndex
    target: Target
    plan: Any = None  # context.plan.Plan: the export context (roots, sites, ONNX opsets), if any

    def code(self, node: cst.CSTNode, limit: int = 60) -> str:
        text = " ".join(self.file.code(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def condition(self, node: cst.CSTNode, deciding: tuple[cst.CSTNode, ...], limit: int = 60) -> str:
        """A condition as quoted in a message: whole when short, else the largest part that
        decides it and fits (a comparison, else its deciding operand)."""
        text = " ".join(self.file.code(node).split())
        if len(text) <= limit or not deciding:
            return self.code(node, limit)
        for part in deciding:
            if len(" ".join(self.file.code(part).split())) <= limit:
                return f"… {self.code(part, limit)} …"
        return f"… {self.code(deciding[-1], limit)} …"

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

    def finding(
        self, ctx: RuleContext, node: cst.CSTNode, message: str, hint: str, *vals: Val, severity: Severity | None = None,
        fix: "Callable[[FixSite], FixPlan | None] | None" = None,
    ) -> Finding:
        """A finding at ``node``, explained by the provenance of ``vals`` that matters here;
        ``severity`` when this case is measured to differ from the rule's default."""
        prov: tuple[Step, ...] = ()
        for v in vals:
            prov += explain(v)
        found = Finding(self.code, ctx.file, node, message, hint, tuple(dedupe_steps(prov)), severity=severity, fix=fix)
        inputs = {t[len("optional:"):] for t in optional_of(list(vals))}
        found.from_optional = inputs.pop() if len(inputs) == 1 else None
        return found


# What makes a value interesting, most telling first; a tensor's history is cut to its last steps.
_EXPLAIN_ORDER = ("size_tensor", DDS, SHAPE, TENSOR)
_TENSOR_STEPS = 2


def explain(v: Val) -> tuple[Step, ...]:
    """The provenance steps of ``v`` that explain its most telling kind."""
    if v.has("specialised_float"):  # `float(w0) / sqrt_N`: a Python float now, explained by the sizes it came from
        return tuple(s for s in v.prov if s.kind == SHAPE)
    for k in _EXPLAIN_ORDER:
        if (k == "size_tensor" and v.has(k)) or (k != "size_tensor" and k in v.kinds):
            steps = tuple(s for s in v.prov if s.kind == k)
            if k == DDS and v.has("size_tensor"):  # a size read back from a size tensor
                steps = tuple(s for s in v.prov if s.kind in (DDS, "size_tensor"))
            return steps[-_TENSOR_STEPS:] if k == TENSOR else steps
    return ()
