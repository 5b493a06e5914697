"""EXL105: an operator the export site's ONNX exporter cannot convert at its opset.

Reads the calls of export-reachable code (torch functions, tensor methods, torch.nn layers called
from ``forward``) and the measured table ``exportlint/data/onnx_ops.json``; reports only when the
export context has an ONNX export call for the code's root (nothing is known of the opset otherwise).
"""

from __future__ import annotations

import ast
import os
from typing import Any, Iterator

import libcst as cst

from exportlint.analysis import events as ev
from exportlint.context.model import ONNX_DYNAMO, Site
from exportlint.data import UNKNOWN, default_opset, dynamo_converts, find_ops, legacy_converts
from exportlint.diagnostics import Note
from exportlint.rules.base import Finding, Rule, RuleContext


class OnnxUnsupportedOperator(Rule):
    code = "EXL105"
    events = (ev.FunctionCall, ev.MethodCall, ev.ModuleCall)

    def check(self, e: ev.Event, ctx: RuleContext) -> Iterator[Finding]:
        sites = ctx.plan.onnx if ctx.plan is not None else []
        if not sites or not isinstance(e.node, cst.Call):
            return
        if isinstance(e, ev.FunctionCall):
            ops = find_ops("function", e.qual, *_literal_args(e.node))
        elif isinstance(e, ev.MethodCall):
            ops = find_ops("method", e.name, *_literal_args(e.node)) if e.receiver.is_tensor else []
        else:
            assert isinstance(e, ev.ModuleCall)
            ops = find_ops("module", e.qual, *_literal_args(e.ctor))
        reported: set[str] = set()
        for op in ops:
            for site in sites:
                why = _fails(op, site)
                if why is None or op["id"] in reported:
                    continue
                reported.add(op["id"])
                finding = self.finding(ctx, e.node, f"`{ctx.code(e.node)}`: {why}", _hint(op, site))
                opset = f", opset_version={site.opset}" if site.opset else ""
                finding.notes = (Note(site.span.line, site.span.column,
                                      f"exported here by `{site.func}` ({site.exporter}{opset})", site.path),)
                yield finding


def _fails(op: dict, site: Site) -> str | None:
    """Why the site's exporter cannot convert ``op`` (None: it can, or it was not measured)."""
    where = f"`{site.func}` at {os.path.basename(site.path)}:{site.span.line}"
    if site.exporter == ONNX_DYNAMO:
        if dynamo_converts(op["id"]) is False:
            error = op["dynamo"].get("error", {})
            cause = error.get("cause") or error.get("message") or "no conversion"
            return f"the dynamo ONNX exporter has no conversion for it: {_first(cause)} (exported by {where})"
        return None
    opset = site.opset or default_opset(False)
    if opset in op["legacy"].get("mismatch_opsets", ()):
        return (f"the legacy ONNX exporter converts it at opset {opset}, but the model's output differs from eager "
                f"(measured in onnxruntime: silently wrong) (exported by {where})")
    if legacy_converts(op["id"], opset) is False:
        error = op["legacy"].get("error", {}).get("message", "UnsupportedOperatorError")
        return f"the legacy ONNX exporter cannot convert it at opset {opset}: {_first(error)} (exported by {where})"
    return None


def _hint(op: dict, site: Site) -> str:
    if site.exporter == ONNX_DYNAMO:
        lowest = op.get("legacy", {}).get("min_opset")
        legacy = f"; the legacy exporter (dynamo=False) converts it from opset {lowest}" if lowest else ""
        return f"replace the op with ops the exporter converts, or register a custom translation{legacy}"
    lowest = op["legacy"].get("min_opset")
    correct = [int(o) for o, status in op["legacy"].get("status", {}).items() if status == "ok"]
    if correct and (site.opset or default_opset(False)) in op["legacy"].get("mismatch_opsets", ()):
        return f"export with opset_version={min(correct)} or later, where the measured output matched eager"
    if lowest:
        dynamo = " (or with `dynamo=True`, whose exporter converts it)" if dynamo_converts(op["id"]) else ""
        return f"export with opset_version={lowest} or later{dynamo}"
    return "no opset of the legacy exporter converts it: use `dynamo=True`" + (
        "" if dynamo_converts(op["id"]) else " is no help either; replace the op"
    )


def _first(message: str) -> str:
    """The first sentence of a measured error message."""
    return message.strip().splitlines()[0].split(". ")[0].rstrip(".")[:200]


def _literal_args(call: cst.Call) -> tuple[list[Any], dict[str, Any]]:
    """The call's arguments as Python values, UNKNOWN where they are not literals."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    module = cst.Module([])
    for arg in call.args:
        if arg.star:
            break
        try:
            value = ast.literal_eval(module.code_for_node(arg.value))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = UNKNOWN
        if arg.keyword is not None:
            kwargs[arg.keyword.value] = value
        else:
            args.append(value)
    return args, kwargs
