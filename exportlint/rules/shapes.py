"""EXL011, EXL030, EXL032, EXL040, EXL041, EXL042, EXL043: sizes, slices and shapes made of data or fixed by the
exporter."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from exportlint.analysis import events as ev
from exportlint.analysis import torchapi as api
from exportlint.analysis.code_facts import literal
from exportlint.analysis.dims import declared_axis, sized_by_data
from exportlint.analysis.values import CONST, SEQ
from exportlint.diagnostics import Severity
from exportlint.rules import fixers
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
        if data.is_tensor and SEQ not in data.kinds:
            return  # `torch.as_tensor(t, dtype=...)`: a cast of a tensor, not data frozen into a constant
        # Under export, Python ints read from tensors (`.tolist()`, `.item()`) are unbacked symbols that
        # `torch.tensor([...])` keeps (measured p17g); only tensors inside the data fail (p17h).
        holds_data = data.contains(lambda v: v.proven_data if ctx.trace else (v.is_tensor and v.proven_data))
        if not holds_data and (not ctx.trace or SEQ not in data.kinds):
            # sizes only: torch.export and ONNX dynamo keep them symbolic, and jit.trace records one
            # size (`torch.tensor(seq_len)`) as `aten::size`; only a list of sizes is baked (p17)
            return
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
            consequence = (
                "the data holds tensors, whose values torch.export cannot read into Python (non-strict export fails: "
                "`data is not allocated yet`)"
            )
        yield self.finding(ctx, e.node, f"`{ctx.code(e.node)}` builds a tensor from run-time values: {consequence}", hint, data)


class DataDependentSlice(Rule):
    code = "EXL030"
    events = (ev.Index, ev.SliceArg)

    def check(self, e: ev.Event, ctx: RuleContext) -> Iterator[Finding]:
        # Measured (rule doc): torch.export and ONNX dynamo cut correctly at a data-dependent bound
        # in a load (an unbacked size) and fail on a store (`y[:, n:] = 0`, non-strict); jit.trace
        # bakes a bound read into Python (`.item()`, `int()`) and records one that stays a 0-d tensor.
        if isinstance(e, ev.SliceArg):
            bad = [(e.arg_node, e.value, f"`{e.op}` size")] if e.value.is_index_like else []
            store = False
        else:
            assert isinstance(e, ev.Index)
            if not (e.value.is_tensor or e.value.has("shape_seq")):
                return
            bad = [(n, v, "slice bound") for n, v in e.bounds if v.unchecked_data]
            bad += [(n, v, "index") for n, v in e.indices if v.is_index_like]
            store = e.store
        if ctx.trace:
            bad = [b for b in bad if not b[1].is_tensor]  # read into Python: baked
        elif not store:
            return
        else:
            # a store through a 0-d tensor used as a Python int (`y[:, length:] = 0`, `y[x.argmax()] = 0`)
            # fails non-strict export; one through a `.item()` value exports (audit rounds 5 and 6)
            bad = [b for b in bad if b[1].is_tensor]
        for node, value, what in bad:
            expr = ctx.code(node)
            if ctx.trace:
                hint = "jit.trace bakes the value: select with a tensor of indices (`index_select`, `gather`) or a mask"
            else:
                hint = (
                    f"add `torch._check({expr} >= 0)` and an upper bound (`torch._check({expr} <= x.shape[d])`) "
                    "right after computing it, or index with a tensor (`index_select`)"
                )
            source = "a 0-d tensor computed from sizes" if value.has("from_sizes") else "computed from tensor data"
            yield self.finding(ctx, node, f"{what} `{expr}` is {source}", hint, value)


class DataDependentOutputShape(Rule):
    code = "EXL032"
    events = (ev.DataShapeOp,)

    def check(self, e: ev.DataShapeOp, ctx: RuleContext) -> Iterator[Finding]:
        if e.checking:
            return  # `torch._check(torch.unique_consecutive(n).numel() == 1)`: exports (audit round 7)
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
        # tensors holding sizes (`grid[0]` of `torch.tensor([h, w])`), not Python ints read from them
        whole = e.value.has("size_tensor") and e.value.is_tensor and not e.element
        # a 0-d tensor of one size among sizes (`x.reshape(torch.tensor(n), -1)`): every exporter keeps it
        # tied to the size (rule doc, measured)
        bad = [v for v in _size_parts(e) if v.has("size_tensor") and v.is_tensor and (whole or not v.has("one_size"))]
        if not bad:
            return
        if whole:
            why = "a tensor is not a valid size (eager raises `TypeError` in torch 2.13, so every exporter fails)"
        elif ctx.trace:
            why = "jit.trace records the tensor's values as constants: the size is the example's"
        else:
            why = (
                "torch.export reads each element as an unbacked size: fine for `F.interpolate`, but a `-1` read "
                "this way fails at run time (`Runtime assertion failed for expression u1 >= 0`)"
            )
        yield self.finding(
            ctx,
            e.node,
            f"`{e.param}` of `{e.op}` comes from a tensor of sizes (`{ctx.code(e.node)}`): {why}",
            "pass Python ints computed from `x.shape`, e.g. `size=(h // patch, w // patch)`, "
            "instead of concatenating sizes into a tensor",
            *bad,
            severity=Severity.ERROR if whole else None,
            fix=None if whole else fixers.size_tensor_elements(e, ctx),
        )


class TensorSizeArg(Rule):
    code = "EXL041"
    events = (ev.SizeArg,)

    def check(self, e: ev.SizeArg, ctx: RuleContext) -> Iterator[Finding]:
        parts = _size_parts(e)
        if any(v.has("size_tensor") for v in parts):
            return  # EXL040
        # not a tuple a submodule may have returned; under trace not a 0-d tensor computed from sizes
        # only (`torch.div(seq_len, w)` is how jit.trace keeps such a size dynamic)
        bad = [v for v in parts if v.is_definite_tensor and not (ctx.trace and v.has("from_sizes"))]
        if e.param != "scale_factor":
            # Measured (rule doc; audit rounds 5-7 re-measured it in a dozen library call sites): every
            # exporter handles a tensor *size* in the call itself; what breaks is a later Python use of
            # the shape, reported where it happens.  Kept: a size tensor computed from sizes as a `.view`
            # size, which failed Longformer's and LED's export there (bench_zoo; audit round 9); as a
            # `.reshape` / `.new_zeros` size the same models exported and matched eager (round 9).
            bad = [v for v in bad if v.has("from_sizes") and e.op == ".view()"]
        if not bad:
            return
        severity = None
        if all(v.has("from_sizes") for v in bad):
            message = (
                f"tensor `{ctx.code(e.node)}` computed from sizes is passed as `{e.param}` of `{e.op}`: torch.export "
                "reads it back as an unbacked size, and the view cannot relate it to the input's dims (Longformer's "
                "`_chunk` fails here: `GuardOnDataDependentSymNode`)"
            )
            hint = "compute it with integer arithmetic on the sizes (`seq_len // (2 * w)` instead of `torch.div(...)`)"
            severity = Severity.ERROR
        else:
            message = f"tensor `{ctx.code(e.node)}` is passed as `{e.param}` of `{e.op}`"
            hint = "pass Python numbers computed from `x.shape` (e.g. `size=(h * 2, w * 2)`) instead of tensors"
        yield self.finding(ctx, e.node, message, hint, *bad, severity=severity)


class ShapeSpecialisation(Rule):
    """EXL042: ``int(h)``, ``float(w0) / sqrt_N``, ``math.sqrt(n)`` on sizes of a dynamic input."""

    code = "EXL042"
    events = (ev.ShapeConversion, ev.SizeArg)

    def check(self, e: ev.Event, ctx: RuleContext) -> Iterator[Finding]:
        if isinstance(e, ev.SizeArg):
            yield from self._float_size(e, ctx)
            return
        assert isinstance(e, ev.ShapeConversion)
        if not e.specialises:
            return
        operand = ctx.code(e.operand)
        severity = _severity(e, ctx)
        if _scales_by_last_axis(e):
            # `/ math.sqrt(q.size(-1))`: the feature axis, which nothing shows to be dynamic (a finding needs
            # proof); correct under every exporter while it is static (p10).  Judged noise even at info.
            return
        why = _why(e, ctx)
        yield self.finding(
            ctx,
            e.node,
            f"`{ctx.code(e.node)}` turns the shape value `{operand}` into a "
            + ("Python list" if e.form == "range()" else "tensor" if e.form[:-2] in api.SIZE_PINNING_CTORS else "Python number")
            + f": {why}",
            _hint(e.form, operand),
            e.value,
            severity=severity,
            fix=fixers.conversion(e, ctx),
        )

    def _float_size(self, e: ev.SizeArg, ctx: RuleContext) -> Iterator[Finding]:
        parts = _size_parts(e)
        floats = [v for v in parts if v.is_shape and not v.is_data and v.has("float")]
        converted = [v for v in parts if v.has("specialised_float")]
        if not floats and not ctx.trace and e.param == "scale_factor" and converted:
            # `scale_factor=(float(w0) / sqrt_N, ...)`: the conversion is reported where it happens (a
            # warning by itself, p10e); reaching a scale factor it pins the program (p04) and the ONNX
            # dynamo model is wrong on other sizes (p03)
            yield self.finding(
                ctx,
                e.node,
                f"`{e.param}` of `{e.op}` is a float converted from input sizes (`{ctx.code(e.node)}`): torch.export "
                "pins it to the example's size (the program fails on the next size) and the ONNX dynamo model is "
                "wrong on other sizes",
                "compute integer sizes from the shape and pass them instead, e.g. `size=(h // p, w // p)`",
                *converted,
            )
            return
        if not floats or e.recomputed:
            # with `recompute_scale_factor=True` the output size is computed from the scale as an
            # integer: every exporter followed other sizes (p03d, torchvision's `_resize_image_and_masks`,
            # audit rounds 7-8); without it, they guard on the float or fail (p03e)
            return
        if ctx.trace:
            why = "under jit.trace sizes are traced tensors, so this is a tensor `scale_factor` (the trace fails or bakes it)"
        else:
            why = "torch.export guards on the float expression: the exported program fails on the next input size"
        yield self.finding(
            ctx,
            e.node,
            f"`{e.param}` of `{e.op}` is a float computed from input sizes (`{ctx.code(e.node)}`): {why}",
            "compute integer sizes from the shape and pass them instead, e.g. `size=(h // p, w // p)`; "
            "keep divisions integral (`h // s`, `(h + s - 1) // s` for a ceiling)",
            *floats,
        )


def _scales_by_last_axis(e: ev.ShapeConversion) -> bool:
    """`/ math.sqrt(q.size(-1))`, `q.size(-1) ** -0.5`: a scale from the last (feature) axis.  An
    `int()` / `float()` / `len()` of the last axis is a size like any other (`int(buckets.shape[-1])` in
    Reformer is a sequence length; `float(w0)` of an image's width)."""
    return e.value.has("last_axis") and (e.form == "math.sqrt()" or e.value.has("root"))


def _severity(e: ev.ShapeConversion, ctx: RuleContext) -> Severity:
    """Under the export target a conversion torch.export passes (it pins the dim, or the ONNX dynamo model
    computes with the example's value on other sizes) is a warning, per the severity definitions: the
    exported program rejects or mis-computes other sizes.  An error is reserved for torch.export failing at
    the line (NumPy on a symbolic size, p09c).  Audit rounds 11-17 judged 10 of 11 error-severity
    conversions "pinning is a warning"."""
    if ctx.trace:
        return Severity.ERROR  # every conversion bakes the example's value (p01-p15: silent or raising)
    return Severity.ERROR if e.form == "numpy()" else Severity.WARNING


_FIXES_DIMS = (
    "torch.export fixes the input dims it came from to the example's size (`Dim.AUTO` exports a static model that "
    "rejects other sizes; a named `Dim` fails)"
)


def _why(e: ev.ShapeConversion, ctx: RuleContext) -> str:
    """What the target's exporters measurably do with this form (rule doc table, benchmarks/claims)."""
    if ctx.trace:
        return "jit.trace records the example's value as a constant (the traced model is wrong on other sizes)"
    if e.form == "round()":
        return "torch.export keeps it symbolic, but the ONNX dynamo exporter has no translation for `round` (it fails)"
    if e.form == "numpy()":  # p09c
        return "torch.export fails on it (NumPy cannot compute with a symbolic size: `'SymInt' object has no attribute ...`)"
    if e.form[:-2] in api.NUMPY_PINNING:  # rule doc EXL042, measured
        return (
            "torch.export computes it on the example's size and guards on the result (export passes; the program "
            f"rejects every size for which `{e.form[:-2].replace('numpy.', 'np.')}` gives another value)"
        )
    if e.form in ("int()", "float()") and e.value.has("float") and not e.value.has("root"):  # p05, p04b
        return (
            "torch.export pins it to the example's size (export passes, the program rejects the next size) and the "
            "ONNX dynamo model computes with the example's value on other sizes (wrong results, or a shape error "
            "in onnxruntime)"
        )
    if e.form[:-2] in api.SIZE_PINNING_CTORS:  # rule doc EXL042, measured
        return (
            f"{_FIXES_DIMS}; the ONNX dynamo model keeps the example's value on other sizes (`torch.tensor(n)` "
            "stays symbolic)"
        )
    if e.form.startswith("math."):  # p09, p09h, p09k
        return (
            f"{_FIXES_DIMS}; torch.onnx.export(dynamo=True) fails on the symbolic `{e.form[:-2]}` with a named "
            "dynamic axis, and with `Dim.AUTO` exports a model that computes with the example's value on other sizes"
        )
    return _FIXES_DIMS


def _hint(form: str, operand: str) -> str:
    if form in ("math.ceil()", "math.floor()", "round()", "numpy.ceil()", "numpy.floor()", "numpy.trunc()", "numpy.fix()"):
        return (
            f"keep it integral with floor division on the size: `{operand.replace('/', '//')}`"
            + (" (for a ceiling: `(h + s - 1) // s`; `-(-h // s)` is computed wrongly by both ONNX exporters)" if form in ("math.ceil()", "numpy.ceil()") else "")
        )
    if form == "len()":
        return f"use `{operand}.shape[0]` (a symbolic size) instead of `len({operand})`"
    if form[:-2] in api.SIZE_PINNING_CTORS:
        return f"use `torch.tensor({operand})`, which every exporter keeps symbolic (same value and dtype in eager)"
    if form == "range()":
        return "build the sequence with tensor ops on the size (`torch.arange(n)`) instead of a Python list"
    if form == "math.sqrt()":
        return (
            "derive the grid from integer sizes instead of a square root (pass `h // p`, `w // p` explicitly); "
            "where a root is unavoidable, `torch.sym_int(torch.sym_float(n) ** 0.5)` stays symbolic under torch.export "
            "(not under jit.trace)"
        )
    return (
        f"keep `{operand}` as the shape's own integer (`h // s` instead of `int(h / s)`; no `int()`/`float()` "
        "on sizes); where a float is unavoidable use `torch.sym_float(...)` / `torch.sym_int(...)`; if it feeds "
        "`F.interpolate`, pass `size=(h // p, w // p)` instead of a `scale_factor`"
    )


# torch.nn recurrent layers: torch.export runs their time loop in Python (measured, p30)
_RECURRENT_LAYERS = {"LSTM", "GRU", "RNN"}


class RecurrentSequenceLength(Rule):
    """EXL043: ``self.lstm(x)`` of a ``torch.nn`` LSTM / GRU / RNN over an input whose time dim may vary."""

    code = "EXL043"
    events = (ev.ModuleCall,)

    def check(self, e: ev.ModuleCall, ctx: RuleContext) -> Iterator[Finding]:
        layer = e.qual.rsplit(".", 1)[-1]
        if ctx.trace or not e.qual.startswith("torch.nn.") or layer not in _RECURRENT_LAYERS or not e.inputs:
            return  # jit.trace and the legacy ONNX exporter record one recurrent op for every length (p30)
        x = e.inputs[0]
        batch_first = _batch_first(e.ctor)
        if batch_first is None or not x.is_tensor or x.has("param") or sized_by_data(x):
            return  # `batch_first=cfg.batch_first`: which dim is time is not known; a packed sequence is no tensor
        axis = 1 if batch_first else 0
        static = declared_axis(x, axis)
        if static is not None and static.kinds <= {CONST}:
            return  # the time dim is fixed (`x.view(b, 16, -1)`, a declared static dim)
        # Many models run their recurrent layers over a length fixed by design (a forecaster's context window,
        # one decoding step, a fixed-width OCR crop): judged on real code, a warning was right a quarter of the
        # time (rule doc).  A warning only where the export call declares that dim dynamic.
        declared = static is not None and static.has("declared_dim")
        yield self.finding(
            ctx,
            e.node,
            f"`{ctx.code(e.node)}` runs `nn.{layer}` over the input's dim {axis} (its sequence): torch.export fixes "
            "that length to the example's (`Dim.AUTO` exports a program that rejects other lengths; a named `Dim` "
            "fails)" + ("" if declared else "; fine when the model is served at that one length"),
            "export at the length you serve, or pad / chunk inputs to it; `torch.onnx.export` (dynamo or legacy) "
            "and `torch.jit.trace` keep the length dynamic (measured, though the dynamo ONNX model declares the "
            "example's length in its output shape)",
            x,
            severity=Severity.WARNING if declared else Severity.INFO,
        )


def _batch_first(ctor: "cst.Call") -> "bool | None":
    """``batch_first`` of a recurrent layer's constructor call: its literal keyword (a `**dd` beside it
    cannot pass it again), False when not passed; None when not known (not a literal, maybe in `*args` /
    `**kwargs`, or passed by position: `nn.RNN` takes `nonlinearity` where `nn.LSTM` takes `bias`, so only
    calls of at most four positional arguments are read)."""
    for a in ctor.args:
        if a.keyword is not None and a.keyword.value == "batch_first":
            ok, value = literal(a.value)
            return value if ok and isinstance(value, bool) else None
    if any(a.star for a in ctor.args) or sum(a.keyword is None for a in ctor.args) > 4:
        return None
    return False
