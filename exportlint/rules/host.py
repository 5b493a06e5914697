"""EXL001–EXL003, EXL050: tensor values leaving the graph for Python or NumPy."""

from __future__ import annotations

from typing import Iterator

from exportlint.analysis import events as ev
from exportlint.analysis import torchapi as api
from exportlint.analysis.dims import sized_by_data
from exportlint.diagnostics import Severity
from exportlint.rules.base import Finding, Rule, RuleContext


class TensorItem(Rule):
    code = "EXL001"
    events = (ev.MethodCall,)

    def check(self, e: ev.MethodCall, ctx: RuleContext) -> Iterator[Finding]:
        if e.name != "item" or e.checking:
            return  # `assert n.item() <= limit`, `torch._check(n.item() > 0)`: measured to export (audit round 4)
        expr = ctx.code(e.node)
        if e.converted and not ctx.trace:
            yield self.finding(
                ctx,
                e.node,
                f"`{expr}` copies a tensor value into a Python number that is converted at once: non-strict "
                "torch.export cannot guard on it (`GuardOnDataDependentSymNode`)",
                f"keep it a tensor (use `{ctx.code(e.receiver_node)}` in tensor ops); if a Python number is "
                "unavoidable, use `.item()` without the conversion and bound it with `torch._check(...)`",
                e.receiver,
                severity=Severity.ERROR,
            )
            return
        if ctx.trace:
            hint = (
                "jit.trace records the example's value as a constant: keep it a tensor "
                f"(use the 0-d tensor `{ctx.code(e.receiver_node)}` directly in arithmetic, `torch.where`, `clamp`)"
            )
        else:
            hint = (
                f"keep it a tensor (use `{ctx.code(e.receiver_node)}` directly in tensor ops); if a Python int is "
                "really needed for a size or slice, add `torch._check(v >= 0)` (and an upper bound) on it right after"
            )
        yield self.finding(ctx, e.node, f"`{expr}` copies a tensor value into a Python number", hint, e.receiver)


class TensorToHost(Rule):
    code = "EXL002"
    events = (ev.MethodCall, ev.FunctionCall)

    def check(self, e: ev.Event, ctx: RuleContext) -> Iterator[Finding]:
        if isinstance(e, ev.MethodCall) and e.name == "tolist" and e.checking:
            return  # `h, w = size.tolist()` bounded by `torch._check(h <= limit)` after it (torchtune's export modules)
        if isinstance(e, ev.MethodCall) and e.name in ("tolist", "numpy"):
            value = e.receiver
        elif isinstance(e, ev.FunctionCall) and e.qual in api.HOST_NUMPY and e.args and e.args[0].is_tensor:
            value = e.args[0]
        else:
            return
        hint = (
            "keep the computation in torch ops; where Python numbers are needed, compute them from "
            "`x.shape` (sizes) instead of from tensor data"
        )
        severity = None
        if ctx.trace:
            hint += " — jit.trace bakes the copied values into the graph as constants"
        elif isinstance(e, ev.MethodCall) and e.name == "tolist" and sized_by_data(value):
            # measured (p22c): the list's length is the unbacked row count; unbinding it fails every export
            yield self.finding(
                ctx, e.node,
                f"`{ctx.code(e.node)}` copies a tensor whose length depends on data into a Python list: torch.export "
                "cannot unbind a data-dependent number of elements (`Could not guard on data-dependent expression`)",
                "keep the selected values a tensor (mask with `torch.where` instead of selecting rows); where a Python "
                "list is needed, build it before export, outside the model",
                value, severity=Severity.ERROR,
            )
            return
        elif isinstance(e, ev.MethodCall) and e.name == "tolist":
            hint += " — under torch.export each element is an unbacked symbol: fine in tensor ops, any Python decision on one fails"
            severity = Severity.WARNING  # measured: `torch.split(x, n.tolist())` exports; the decision is EXL020
        else:
            hint += " — non-strict torch.export fails here (`.numpy() is not supported for tensor subclasses`)"
        yield self.finding(ctx, e.node, f"`{ctx.code(e.node)}` copies a tensor to the host", hint, value, severity=severity)


class TensorToScalar(Rule):
    code = "EXL003"
    events = (ev.FunctionCall, ev.DimArg)

    def check(self, e: ev.Event, ctx: RuleContext) -> Iterator[Finding]:
        return self._dim_arg(e, ctx) if isinstance(e, ev.DimArg) else self._conversion(e, ctx)  # type: ignore[arg-type]

    def _conversion(self, e: ev.FunctionCall, ctx: RuleContext) -> Iterator[Finding]:
        if e.qual not in api.CONVERTERS or not e.args:
            return
        arg = ctx.code(e.arg_nodes[0]) if e.arg_nodes else "t"
        value = e.args[0]
        if value.is_dds and not value.is_tensor and not ctx.trace and not value.has("converted"):
            # `int(n)` with `n = x.item()`: non-strict torch.export must guard on the unbacked value
            # (measured: fails).  `int(x.item())` is EXL001's, at error.
            yield self.finding(
                ctx,
                e.node,
                f"`{ctx.code(e.node)}` converts the data-dependent value `{arg}` to a Python {e.qual}: non-strict "
                "torch.export cannot guard on it (`GuardOnDataDependentSymNode`)",
                "keep the value a tensor (tensor ops, `torch.where`) instead of converting it; if a Python number is "
                f"unavoidable, use the `.item()` result as it is (no `{e.qual}()` around it) and bound it with "
                "`torch._check(...)` right after reading it",
                value,
            )
            return
        if not value.is_definite_tensor:
            return  # `int(x)` of a value that may be a Python number is not shown to read a tensor
        if e.qual == "bool":
            hint = "keep the condition a tensor and select with `torch.where(cond, a, b)` instead of converting it"
        elif ctx.trace:
            hint = f"jit.trace bakes `{e.qual}({arg})` as a constant: keep `{arg}` a tensor, or derive the number from `x.shape`"
        else:
            hint = (
                f"keep `{arg}` a tensor (`{arg}.to(torch.int64)`), or derive the number from `x.shape`; torch.export "
                "cannot guard on the converted value (`GuardOnDataDependentSymNode`)"
            )
        yield self.finding(
            ctx, e.node, f"`{ctx.code(e.node)}` converts a tensor to a Python {e.qual}", hint, e.args[0]
        )

    def _dim_arg(self, e: ev.DimArg, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.trace:
            return  # jit.trace reads the values it saw (TracerWarning); unrolling a `*`-unpacked one is EXL010's
        arg = ctx.code(e.arg_node)
        yield self.finding(
            ctx, e.node,
            f"`{arg}` is a tensor passed as dim indices of `{e.op}`: each element is read from tensor data as a Python "
            "int, which torch.export cannot guard on (`GuardOnDataDependentSymNode`, even with static shapes)",
            f"build the dims as Python ints (`perm = (1, 0, *range(2, x.ndim))`) instead of a tensor; `{e.op}` "
            "takes no tensor of dims",
            e.value,
            severity=Severity.ERROR,
        )


class NumpyOnTensor(Rule):
    code = "EXL050"
    events = (ev.FunctionCall,)

    def check(self, e: ev.FunctionCall, ctx: RuleContext) -> Iterator[Finding]:
        root = e.qual.split(".")[0]
        if root not in api.MATH_ROOTS or e.qual in api.HOST_NUMPY:
            return
        tensors = [v for v in e.args if v.is_definite_tensor] + [v for v in e.kwargs.values() if v.is_definite_tensor]
        if not tensors:
            return
        func = e.qual.rsplit(".", 1)[-1]
        torch_name = {"random": "torch.rand / torch.randint"}.get(root, f"torch.{func}")
        yield self.finding(
            ctx,
            e.node,
            f"`{ctx.code(e.node)}` applies {root} to a tensor value",
            f"use the torch equivalent (`{torch_name}`) so the op stays in the graph; "
            f"{root} on a tensor reads its data on the host and is baked or fails under export",
            *tensors,
        )

