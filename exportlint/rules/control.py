"""EXL010, EXL020–EXL022, EXL060: Python control flow the exporters cannot keep."""

from __future__ import annotations

from typing import Iterator

from exportlint.analysis import events as ev
from exportlint.analysis.dims import declared_axis, sized_by_data
from exportlint.analysis.values import CONST
from exportlint.diagnostics import Severity
from exportlint.rules import fixers_control
from exportlint.rules.base import Finding, Rule, RuleContext

_KEYWORD = {
    "if": "if", "elif": "elif", "guard": "if", "while": "while", "ifexp": "conditional expression", "assert": "assert",
    "comprehension-if": "comprehension filter",
}


_HOW = {
    "for": "this `for` loop",
    "comprehension": "this comprehension",
    "*-unpacking": "`*` unpacking",
}


def _what(v) -> str:
    return "a data-dependent scalar" if v.is_dds and not v.is_tensor else "a tensor value"


class TensorIteration(Rule):
    code = "EXL010"
    events = (ev.Iteration,)

    def check(self, e: ev.Iteration, ctx: RuleContext) -> Iterator[Finding]:
        data_sized = sized_by_data(e.value)  # the first dim is what iteration unrolls
        if e.value.has("rank_lead"):
            return  # `tuple(mask.nonzero().t())`: one index tensor per dim of `mask`, a fixed count
        lead = declared_axis(e.value, 0)
        if not data_sized and lead is not None and lead.kinds <= {CONST}:
            return  # `for row in torch.stack(parts):`: a static leading dim unrolls correctly (like p04e)
        expr = ctx.code(e.value_node)
        how = _HOW.get(e.how, f"`{e.how}`")
        if data_sized:
            yield self.finding(
                ctx,
                e.node,
                f"{how} iterates over `{expr}`, whose size depends on tensor data: "
                + ("jit.trace unrolls it for the example's count" if ctx.trace else "torch.export cannot unroll it (it fails)"),
                "keep the loop in tensor ops: mask or `torch.where` over the whole tensor, `index_select` / `gather` "
                "with the index tensor, or pad to a fixed maximum count",
                e.value,
                severity=Severity.ERROR,
            )
            return
        yield self.finding(
            ctx,
            e.node,
            f"{how} iterates over the tensor `{expr}`: Python unrolls it for the example's size",
            f"vectorize over that dimension, or iterate `{expr}.unbind(0)` when its size is fixed by design "
            "(a dynamic dimension here is specialised to the example's size)",
            e.value,
        )


class DataDependentBranch(Rule):
    code = "EXL020"
    events = (ev.Branch,)

    def check(self, e: ev.Branch, ctx: RuleContext) -> Iterator[Finding]:
        if not e.cond.proven_data or e.cond.truth is not None:
            return
        if e.kind == "assert" and not e.cond.is_tensor:
            return  # `assert n.item() <= limit`: torch.export keeps it as a runtime assertion (measured)
        cond = ctx.condition(e.cond_node, e.deciding)
        if e.cond.has("same_data_sizes") and not e.cond.is_tensor:
            yield self.finding(
                ctx, e.node,
                f"`{_KEYWORD[e.kind]}` condition `{cond}` compares sizes that depend on data, of tensors one "
                "data-dependent step made: torch.export holds them as one size and decides the test without a guard",
                "fine as long as both sides keep coming from that one step; sizes from two data-dependent ops would "
                "fail export (`GuardOnDataDependentSymNode`): state the relation with `torch._check(a == b)` then",
                e.cond, severity=Severity.INFO,
            )
            return
        if e.kind == "guard" and not ctx.trace:
            hint = (
                "a check on tensor data fails non-strict torch.export: assert it in the graph with "
                "`torch._assert_async(cond)` (tensor condition), or `torch._check(...)` on a Python int, or check "
                "inputs before calling the model"
            )
        elif e.kind == "guard":
            hint = "jit.trace records the check for the example only (TracerWarning): validate inputs before calling the model"
        elif e.kind == "assert":
            hint = (
                "drop the assert from forward or check on the host before export"
                if ctx.trace
                else f"use `torch._check(...)` on Python ints, or `torch._assert_async({cond})` for a tensor condition"
            )
        elif ctx.trace:
            hint = (
                "jit.trace records only the branch the example takes: compute both sides and select with "
                "`torch.where(cond, a, b)` (`torch.cond` and `torch._check` break jit.trace)"
            )
        else:
            hint = (
                "compute both sides and select with `torch.where(cond, a, b)`, or use "
                "`torch.cond(pred, true_fn, false_fn, operands)`"
            )
        gated = e.cond.has("dtype_gated")
        yield self.finding(
            ctx,
            e.node,
            f"`{_KEYWORD[e.kind]}` condition `{cond}` depends on tensor data ({_what(e.cond)})"
            + ("; only when the model is exported in the dtype it tests" if gated else ""),
            hint,
            e.cond,
            severity=Severity.WARNING if gated else None,
            fix=fixers_control.data_branch(e, ctx),
        )


class DataDependentLoop(Rule):
    code = "EXL021"
    events = (ev.CountedLoop,)

    def check(self, e: ev.CountedLoop, ctx: RuleContext) -> Iterator[Finding]:
        bad = [(n, v) for n, v in e.counts if v.proven_data]
        if not bad:
            return
        node, value = bad[0]
        count = ctx.code(node)
        yield self.finding(
            ctx,
            e.node,
            f"loop count `{count}` is {_what(value)}: the trip count depends on tensor data",
            "vectorize the loop, or bound it by a constant and mask the extra iterations"
            + (" (jit.trace unrolls it for the example)" if ctx.trace else " (torch.export cannot specialise `range()` of a data-dependent value)"),
            *[v for _, v in bad],
        )


class ShapeDependentBranch(Rule):
    code = "EXL022"
    events = (ev.Branch, ev.CountedLoop)

    def check(self, e: ev.Event, ctx: RuleContext) -> Iterator[Finding]:
        if isinstance(e, ev.CountedLoop):
            yield from self._loop(e, ctx)
            return
        assert isinstance(e, ev.Branch)
        # A validation guard (`if bad: raise`, `assert`) on shapes becomes a range constraint or a
        # runtime assert under torch.export and is dropped by jit.trace: never a finding.
        if e.cond.has("pins_dim") and e.cond.truth is None and not e.cond.is_data:
            yield self._pinned(e, ctx)
            return
        if e.kind in ("guard", "assert") or e.cond.truth is not None:
            return
        if e.cond.is_data or not e.cond.is_shape or e.cond.has("export_mode"):
            return
        cond = ctx.condition(e.cond_node, e.deciding)
        if e.cond.has("size_ge2") and not ctx.trace:
            yield self._size_ge2(e, cond, ctx)
            return
        if e.cond.has("table_bound") and not ctx.trace:
            yield self.finding(
                ctx, e.node,
                f"`{_KEYWORD[e.kind]}` condition `{cond}` orders a size against the size of a parameter or buffer: "
                "torch.export keeps it as a bound at that size (the exported program accepts the sizes on the example's "
                "side of it, such as lengths up to a position table's, and rejects the others, where eager would take "
                "the other arm and, say, grow the table)",
                "export with an example on the side real inputs take, and treat the table's size as the model's "
                "maximum; to accept longer inputs, build the table for the longest size before exporting",
                e.cond, severity=Severity.INFO,
            )
            return
        if e.cond.has("relates_dims") and not ctx.trace:
            yield self.finding(
                ctx, e.node,
                f"`{_KEYWORD[e.kind]}` condition `{cond}` compares two sizes: torch.export keeps the example's relation "
                "between them (equal or not, which is larger) as a guard; both stay dynamic, and inputs that take the other arm are rejected",
                "export with an example whose sizes relate as real inputs do (equal batch sizes for equal batches); if both "
                "relations occur at run time, make both arms one computation",
                e.cond, severity=Severity.INFO,
            )
            return
        if ctx.trace:
            hint = (
                "jit.trace freezes the branch taken for the example shape (silently wrong with `dynamic_axes`); "
                "make the code shape-agnostic or export with torch.export"
            )
        else:
            hint = (
                "torch.export specialises on it (a named `Dim` fails, `Dim.AUTO` narrows the range; dynamic ONNX and "
                "empty inputs can be silently wrong): make it shape-agnostic, or use `torch.cond` / `torch._check(...)`"
            )
        yield self.finding(
            ctx, e.node, f"`{_KEYWORD[e.kind]}` condition `{cond}` depends on input shapes: decided for the example's shape", hint, e.cond
        )

    def _size_ge2(self, e: ev.Branch, cond: str, ctx: RuleContext) -> Finding:
        """`if seq_len == 1:` on a dim read from a tensor: torch.export takes a dynamic dim to be >= 2
        and decides the test with no guard (measured, torch 2.13): the program is general for sizes
        >= 2 and runs a size-1 input through the same arm."""
        return self.finding(
            ctx, e.node,
            f"`{_KEYWORD[e.kind]}` condition `{cond}` compares a size with 0, 1 or 2: torch.export takes dynamic dims to be "
            "at least 2, so the exported program always runs the arm for sizes >= 2 (a size-1 input runs it too, silently)",
            "if a size of 1 (one token, one image) or 0 must take the other arm, export that case separately with a "
            "static size, or make both arms one computation",
            e.cond, severity=Severity.INFO,
        )

    def _pinned(self, e: ev.Branch, ctx: RuleContext) -> Finding:
        """A test of a declared dynamic dim against one size (a guard included): torch.export
        fails a named `Dim` with a constraint violation and narrows `Dim.AUTO` to that size."""
        cond = ctx.condition(e.cond_node, e.deciding)
        if ctx.trace:
            why = "jit.trace keeps only the example's arm; the ONNX model's dynamic axis then runs code decided for one size"
        else:
            why = ("torch.export fails with a constraint violation for a named `Dim` "
                   "(`Dim.AUTO` silently fixes the dim to the example's size)")
        return self.finding(
            ctx, e.node, f"`{_KEYWORD[e.kind]}` condition `{cond}` pins a dim the export declares dynamic to one size: {why}",
            "drop the check or test a range instead (`torch._check(h % 14 == 0)`, `torch._check(h >= 32)`), "
            "or declare the dim static in the export call",
            e.cond, severity=Severity.ERROR,
        )

    def _loop(self, e: ev.CountedLoop, ctx: RuleContext) -> Iterator[Finding]:
        # `for i in range(x.shape[1])`: measured (p14) to specialise the dim under torch.export
        # (`Dim.AUTO`; a named Dim and ONNX dynamo fail) and to unroll silently under jit.trace.
        shaped = [(n, v) for n, v in e.counts if v.is_shape and not v.is_data]
        if not shaped or any(v.is_data for _, v in e.counts):
            return
        node, value = shaped[0]
        count = ctx.code(node)
        why = (
            "jit.trace unrolls it for the example's size, without a warning"
            if ctx.trace
            else "torch.export unrolls it for the example's size and fixes that dim (`Dim.AUTO`; a named `Dim` fails)"
        )
        yield self.finding(
            ctx,
            e.node,
            f"loop count `{count}` depends on input shapes: {why}",
            "vectorize over that dim (batched tensor ops, `torch.arange(n)` with broadcasting) instead of a Python loop",
            *[v for _, v in shaped],
        )


# Which exports see the predicate True (measured, torch 2.13): the other path is what eager runs.
_TRACING = "torch.jit.trace and the TorchScript ONNX exporter"
_COMPILING = "torch.export, the ONNX dynamo exporter and torch.compile"
_TRUE_UNDER = {
    "torch.onnx.is_in_onnx_export": "torch.onnx.export (both exporters)",
    "torch.jit.is_tracing": _TRACING,
    "torch.jit._trace.is_tracing": _TRACING,
    "torch._C._get_tracing_state": _TRACING,
    "torch.compiler.is_exporting": "torch.export and the ONNX dynamo exporter",
    "torch.compiler.is_compiling": _COMPILING,
    "torch.compiler.is_dynamo_compiling": _COMPILING,
    "torch._dynamo.is_compiling": _COMPILING,
    "torch._utils.is_compiling": _COMPILING,
    "transformers.utils.is_tracing": "every exporter (torch.export, ONNX dynamo, jit.trace, TorchScript ONNX)",
}


class ExportModeBranch(Rule):
    code = "EXL060"
    events = (ev.Branch,)

    def check(self, e: ev.Branch, ctx: RuleContext) -> Iterator[Finding]:
        # Only a predicate whose value under this target's exporters is not eager's (False), on
        # a branch that computes something (never logging-only bodies).
        if not e.cond.has("mode_differs") or e.kind in ("assert", "comprehension-if", "guard") or e.inert:
            return
        if e.alternatives:
            # A predicate choosing between two ways to compute the same names: the library's
            # export-friendly variant, equal to the eager one by design (audit round 9 measured
            # Qwen3-Next's at 4.8e-7; on held-out code mmpose's ScaleNorm `torch.linalg.norm` under
            # `is_in_onnx_export()` vs `torch.norm`, segmentation_models_pytorch's area interpolation
            # vs adaptive pooling were judged the same computation); nothing shows the outputs differ.
            return
        quals = sorted(t.split(":", 1)[1] for t in e.cond.tags if t.startswith("export_mode:"))
        when = "; ".join(f"`{q}()` is True under {_TRUE_UNDER.get(q, 'export')}" for q in quals)
        # only is_in_onnx_export() differs between the exporters of one target; a condition that is also
        # undecided for another reason (`size is not None and is_exporting()`) is still one path per target
        split = e.cond.truth is None and any(q.endswith("is_in_onnx_export") for q in quals)
        yield self.finding(
            ctx,
            e.node,
            f"`{_KEYWORD[e.kind]}` on `{ctx.condition(e.cond_node, e.deciding)}`: the exported graph "
            + ("takes a different path under different exporters and in eager" if split else "runs another path than eager"),
            (f"{when}; " if when else "")
            + "make both paths compute the same thing, or test the exported artifact against eager",
            e.cond,
            # A predicate that is constant under the target (is_exporting(), is_compiling(), is_tracing())
            # is a deliberate export path: info.  One that splits the target's exporters
            # (is_in_onnx_export()) gives different artifacts for the same target: warning.
            severity=None if split else Severity.INFO,
        )
