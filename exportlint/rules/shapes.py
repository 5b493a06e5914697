"""EXL011, EXL030, EXL032, EXL040, EXL041: sizes, slices and shapes made of data."""

from __future__ import annotations

from typing import Iterator

from exportlint.analysis import events as ev
from exportlint.analysis import torchapi as api
from exportlint.rules.base import Finding, Rule, RuleContext


class TensorFromRuntimeValues(Rule):
    code = "EXL011"
    events = (ev.FunctionCall,)

    def check(self, e: ev.FunctionCall, ctx: RuleContext) -> Iterator[Finding]:
        if e.qual not in api.TENSOR_CTORS or not e.args:
            return
        if e.qual in api.LEGACY_CTORS and len(e.args) > 1:
            return  # torch.LongTensor(2, 3): sizes, not data
        data = e.args[0]
        if not data.carries_runtime_values:
            return
        holds_data = data.contains(lambda v: v.is_data)
        if not ctx.trace and not holds_data:
            return  # sizes and constants only: torch.export and ONNX dynamo keep them symbolic (measured)
        if data.contains(lambda v: v.is_tensor):
            hint = "combine the tensors with `torch.stack([...])` / `torch.cat` instead of re-wrapping their values"
        elif data.contains(lambda v: v.is_dds):
            hint = (
                "keep the values as tensors (collect 0-d tensors and `torch.stack` them, or keep a boolean mask) "
                "instead of Python numbers read from tensors"
            )
        else:
            hint = (
                "use the shape numbers directly where Python ints are accepted (`size=(h, w)`); "
                "for a tensor of sizes under jit.trace use `torch._shape_as_tensor(x)`"
            )
        if ctx.trace:
            consequence = "jit.trace records it as a constant"
        else:
            consequence = "torch.export must read the values into Python (it fails on data-dependent ones)"
        yield self.finding(ctx, e.node, f"`{ctx.code(e.node)}` builds a tensor from run-time values: {consequence}", hint, data)


class DataDependentSlice(Rule):
    code = "EXL030"
    events = (ev.Index, ev.SliceArg)

    def check(self, e: ev.Event, ctx: RuleContext) -> Iterator[Finding]:
        if isinstance(e, ev.SliceArg):
            bad = [(e.arg_node, e.value, f"`{e.op}` size")] if e.value.is_index_like else []
        else:
            assert isinstance(e, ev.Index)
            if not (e.value.is_tensor or e.value.has("shape_seq")):
                return
            bad = [(n, v, "slice bound") for n, v in e.bounds if v.is_data]
            bad += [(n, v, "index") for n, v in e.indices if v.is_index_like]
        for node, value, what in bad:
            expr = ctx.code(node)
            if ctx.trace:
                hint = "jit.trace bakes the value: select with a tensor of indices (`index_select`, `gather`) or a mask"
            else:
                hint = (
                    f"add `torch._check({expr} >= 0)` and an upper bound (`torch._check({expr} <= x.shape[d])`) "
                    "right after computing it, or index with a tensor (`index_select`)"
                )
            yield self.finding(ctx, node, f"{what} `{expr}` is computed from tensor data", hint, value)


class DataDependentOutputShape(Rule):
    code = "EXL032"
    events = (ev.DataShapeOp,)

    def check(self, e: ev.DataShapeOp, ctx: RuleContext) -> Iterator[Finding]:
        extra = " (the ONNX dynamo exporter has no translation for masked_select)" if "masked_select" in e.op else ""
        yield self.finding(
            ctx,
            e.node,
            f"`{ctx.code(e.node)}`: the output size of {e.op} depends on tensor data{extra}",
            "fine while its size only feeds tensor ops; never read that size into Python (`if`, `range`, `.item()`); "
            "for a fixed-size result use `torch.where(mask, x, 0)` or `topk`",
            *([e.operand] if e.operand is not None else []),
        )


def _size_parts(e: ev.SizeArg):
    return [e.value] + list(e.elements)


class SizeTensorConcat(Rule):
    code = "EXL040"
    events = (ev.SizeArg,)

    def check(self, e: ev.SizeArg, ctx: RuleContext) -> Iterator[Finding]:
        bad = [v for v in _size_parts(e) if v.has("size_tensor")]
        if not bad:
            return
        yield self.finding(
            ctx,
            e.node,
            f"`{e.param}` of `{e.op}` comes from a tensor of sizes (`{ctx.code(e.node)}`)",
            "pass Python ints computed from `x.shape`, e.g. `size=(h // patch, w // patch)`, "
            "instead of concatenating sizes into a tensor",
            *bad,
        )


class TensorSizeArg(Rule):
    code = "EXL041"
    events = (ev.SizeArg,)

    def check(self, e: ev.SizeArg, ctx: RuleContext) -> Iterator[Finding]:
        parts = _size_parts(e)
        if any(v.has("size_tensor") for v in parts):
            return  # EXL040
        bad = [v for v in parts if v.is_tensor]
        if not bad:
            return
        yield self.finding(
            ctx,
            e.node,
            f"tensor `{ctx.code(e.node)}` is passed as `{e.param}` of `{e.op}`",
            "pass Python numbers computed from `x.shape` (e.g. `size=(h * 2, w * 2)`) instead of tensors",
            *bad,
        )
