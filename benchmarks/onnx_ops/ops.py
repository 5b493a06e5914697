"""The torch ops / call forms measured by measure.py: one tiny module per op and how source code spells it.

Each `Op` has
- `id`: a stable key (the rule and the tests use it),
- `form`: the source form measured, as a user would write it,
- `fn`: the forward body (a function of the example tensors) and `inputs`: a function making the examples,
- `match`: how the static pass recognises the op without importing torch. Each entry is one spelling:
  `{"function": [qualified names]}` (after import resolution: `F.x` is `torch.nn.functional.x`),
  `{"method": [tensor method names]}` (`x.tril()`; positions then exclude `self`), or
  `{"module": [qualified class names]}` (`nn.Upsample(mode=...)`: the constructor's arguments),
  each with an optional `where`: argument name -> `{"pos": positional index or None (keyword-only),
  "equals": [literal values], "default": value when absent}`. A call matches when every `where`
  argument's literal value (keyword, else positional, else default) is in `equals`; an argument with no
  `default` must be given. A non-literal argument value matches nothing (the rule cannot know).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

NN = "torch.nn."
FN = "torch.nn.functional."


def arg(pos, equals, default=...):
    spec = {"pos": pos, "equals": list(equals)}
    if default is not ...:
        spec["default"] = default
    return spec


def fn(*names, **where):
    return {"function": list(names), **({"where": where} if where else {})}


def meth(*names, **where):
    return {"method": list(names), **({"where": where} if where else {})}


def mod(*names, **where):
    return {"module": list(names), **({"where": where} if where else {})}


@dataclass
class Op:
    id: str
    form: str
    fn: Callable
    inputs: Callable[[], tuple]
    match: list = field(default_factory=list)


def _x(*shape):
    return lambda: (torch.randn(*shape),)


def _img():
    return (torch.randn(1, 3, 8, 8),)


def _interp(mode, ac, antialias=False):
    """F.interpolate / nn.Upsample with this mode and align_corners (None and False are the same)."""
    acs = [True] if ac else [None, False]
    where_f = dict(mode=arg(3, [mode], "nearest"), align_corners=arg(4, acs, None), antialias=arg(6, [antialias], False))
    where_m = dict(mode=arg(2, [mode], "nearest"), align_corners=arg(3, acs, None))
    match = [fn(FN + "interpolate", FN + "upsample", **where_f)]
    if not antialias:
        match.append(mod(NN + "Upsample", **where_m))
    ac_src = ", align_corners=True" if ac else ""
    aa_src = ", antialias=True" if antialias else ""
    kind = f"interpolate_{mode}" + ("_ac" if ac else "") + ("_antialias" if antialias else "")
    kwargs = {"scale_factor": 2, "mode": mode}
    if mode not in ("nearest", "nearest-exact"):
        kwargs["align_corners"] = ac
    if antialias:
        kwargs["antialias"] = True
        kwargs["scale_factor"] = 0.5
    src = f"F.interpolate(x, scale_factor={kwargs['scale_factor']}, mode={mode!r}{ac_src}{aa_src})"
    return Op(kind, src, lambda x: F.interpolate(x, **kwargs), _img, match)


def _grid(mode):
    def inputs():
        return torch.randn(1, 3, 8, 8), torch.rand(1, 4, 4, 2) * 2 - 1

    return Op(
        f"grid_sample_{mode}",
        f"F.grid_sample(x, grid, mode={mode!r}, align_corners=False)",
        lambda x, g: F.grid_sample(x, g, mode=mode, align_corners=False),
        inputs,
        [fn(FN + "grid_sample", mode=arg(2, [mode], "bilinear"))],
    )


def _same(name, call, inputs, *, function=True, method=True, module=None, where=None, src=None):
    """An op spelled torch.<name>(x, ...) and/or x.<name>(...) (and an optional nn module)."""
    w = where or {}
    match = []
    if function:
        match.append(fn(f"torch.{name}", **w))
    if method:
        match.append(meth(name, **{k: dict(v, pos=None if v["pos"] is None else v["pos"] - 1) for k, v in w.items()}))
    if module:
        match.append(mod(*module))
    return Op(name, src or f"torch.{name}(x)", call, inputs, match)


def _linalg(name, call, inputs, *aliases, src=None):
    return Op(f"linalg_{name}", src or f"torch.linalg.{name}(a)", call, inputs, [fn(f"torch.linalg.{name}", *aliases)])


def _spd():
    a = torch.randn(4, 4)
    return (a @ a.T + 4 * torch.eye(4),)


def _ints(*shape):
    return lambda: (torch.randint(0, 64, shape),)


def _sdpa():
    return torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)


SDPA = FN + "scaled_dot_product_attention"


class First(torch.nn.Module):
    """Calls a layer and keeps its first output (nn.LSTM, nn.MultiheadAttention return tuples)."""

    def __init__(self, layer: torch.nn.Module, self_attention: bool = False):
        super().__init__()
        self.layer = layer
        self.self_attention = self_attention

    def forward(self, x):
        out = self.layer(x, x, x) if self.self_attention else self.layer(x)
        return out[0] if isinstance(out, tuple) else out


def _pad(mode, module):
    return Op(f"pad_{mode}", f"F.pad(x, (1, 1, 1, 1), mode={mode!r})",
              lambda x: F.pad(x, (1, 1, 1, 1), mode=mode), _img,
              [fn(FN + "pad", mode=arg(2, [mode], "constant")), mod(NN + module)])


def _layer(op_id, src, layer, inputs, classes, self_attention=False):
    """A torch.nn layer with weights, measured in eval mode (the module is built once, at import)."""
    torch.manual_seed(0)
    return Op(op_id, src, First(layer.eval(), self_attention), inputs, [mod(*(NN + c for c in classes))])


OPS: list[Op] = [
    _interp("nearest", False),
    _interp("nearest-exact", False),
    _interp("bilinear", False),
    _interp("bilinear", True),
    _interp("bicubic", False),
    _interp("bicubic", True),
    _interp("bilinear", False, antialias=True),
    _interp("bicubic", False, antialias=True),
    Op("interpolate_trilinear", "F.interpolate(v, scale_factor=2, mode='trilinear')",
       lambda x: F.interpolate(x, scale_factor=2, mode="trilinear", align_corners=False), _x(1, 2, 4, 4, 4),
       [fn(FN + "interpolate", FN + "upsample", mode=arg(3, ["trilinear"], "nearest")),
        mod(NN + "Upsample", mode=arg(2, ["trilinear"], "nearest"))]),
    Op("adaptive_avg_pool2d_uneven", "F.adaptive_avg_pool2d(x, 3) on an 8x8 input (3 does not divide 8)",
       lambda x: F.adaptive_avg_pool2d(x, 3), _img,
       [fn(FN + "adaptive_avg_pool2d"), mod(NN + "AdaptiveAvgPool2d")]),
    Op("sdpa", "F.scaled_dot_product_attention(q, k, v)", lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
       _sdpa, [fn(SDPA, is_causal=arg(5, [False], False))]),
    Op("sdpa_causal", "F.scaled_dot_product_attention(q, k, v, is_causal=True)",
       lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), _sdpa,
       [fn(SDPA, is_causal=arg(5, [True]))]),
    _same("tril", lambda x: torch.tril(x), _x(6, 6)),
    _same("triu", lambda x: torch.triu(x, 1), _x(6, 6), src="torch.triu(x, 1)"),
    _grid("bilinear"),
    _grid("nearest"),
    _grid("bicubic"),
    _same("masked_select", lambda x: torch.masked_select(x, x > 0), _x(4, 5), src="torch.masked_select(x, x > 0)"),
    _same("nonzero", lambda x: torch.nonzero(x > 0), _x(4, 5), src="torch.nonzero(x > 0)"),
    _same("argwhere", lambda x: torch.argwhere(x > 0), _x(4, 5), src="torch.argwhere(x > 0)"),
    _same("unique", lambda x: torch.unique(x), _ints(12)),
    _same("unique_consecutive", lambda x: torch.unique_consecutive(x), _ints(12)),
    _linalg("inv", lambda a: torch.linalg.inv(a), _spd, "torch.inverse"),
    _linalg("det", lambda a: torch.linalg.det(a), _spd, "torch.det"),
    _linalg("slogdet", lambda a: torch.linalg.slogdet(a).logabsdet, _spd, "torch.slogdet", "torch.logdet"),
    _linalg("svd", lambda a: torch.linalg.svd(a).S, _spd, "torch.svd", "torch.linalg.svdvals"),
    _linalg("eigh", lambda a: torch.linalg.eigh(a).eigenvalues, _spd, "torch.linalg.eigvalsh"),
    _linalg("solve", lambda a: torch.linalg.solve(a, torch.ones(4, 1)), _spd, src="torch.linalg.solve(a, b)"),
    _linalg("cholesky", lambda a: torch.linalg.cholesky(a), _spd, "torch.cholesky"),
    _linalg("qr", lambda a: torch.linalg.qr(a).R.abs(), _spd, "torch.qr"),
    _linalg("pinv", lambda a: torch.linalg.pinv(a), _spd, "torch.pinverse"),
    _linalg("norm", lambda a: torch.linalg.norm(a, dim=-1), _spd, "torch.linalg.vector_norm", "torch.norm"),
    Op("fft_fft", "torch.fft.fft(x).abs()", lambda x: torch.fft.fft(x).abs(), _x(2, 16), [fn("torch.fft.fft", "torch.fft.ifft")]),
    Op("fft_rfft", "torch.fft.rfft(x).abs()", lambda x: torch.fft.rfft(x).abs(), _x(2, 16), [fn("torch.fft.rfft")]),
    Op("fft_irfft", "torch.fft.irfft(torch.fft.rfft(x))", lambda x: torch.fft.irfft(torch.fft.rfft(x)), _x(2, 16),
       [fn("torch.fft.irfft")]),
    Op("fft_fft2", "torch.fft.fft2(x).abs()", lambda x: torch.fft.fft2(x).abs(), _x(1, 8, 8),
       [fn("torch.fft.fft2", "torch.fft.fftn", "torch.fft.ifft2", "torch.fft.ifftn", "torch.fft.rfft2", "torch.fft.rfftn")]),
    Op("stft", "torch.stft(x, 16, window=torch.hann_window(16), return_complex=True).abs()",
       lambda x: torch.stft(x, 16, window=torch.hann_window(16), return_complex=True).abs(), _x(1, 64),
       [fn("torch.stft"), meth("stft")]),
    Op("complex_view", "torch.view_as_complex(x).abs()", lambda x: torch.view_as_complex(x).abs(), _x(4, 2),
       [fn("torch.view_as_complex", "torch.complex", "torch.polar")]),
    Op("einsum", "torch.einsum('bij,bjk->bik', a, b)", lambda a, b: torch.einsum("bij,bjk->bik", a, b),
       lambda: (torch.randn(2, 3, 4), torch.randn(2, 4, 5)), [fn("torch.einsum")]),
    _same("cumsum", lambda x: torch.cumsum(x, 1), _x(3, 6), src="torch.cumsum(x, 1)"),
    _same("cumprod", lambda x: torch.cumprod(x, 1), _x(3, 6), src="torch.cumprod(x, 1)"),
    _same("logcumsumexp", lambda x: torch.logcumsumexp(x, 1), _x(3, 6), src="torch.logcumsumexp(x, 1)"),
    _same("bucketize", lambda x: torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0])), _x(10), method=False,
          src="torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0]))"),
    _same("searchsorted", lambda x: torch.searchsorted(torch.tensor([-1.0, 0.0, 1.0]), x), _x(10), method=False,
          src="torch.searchsorted(torch.tensor([-1.0, 0.0, 1.0]), x)"),
    _same("histc", lambda x: torch.histc(x, bins=4, min=-2, max=2), _x(20), src="torch.histc(x, bins=4, min=-2, max=2)"),
    _same("argsort", lambda x: torch.argsort(x, dim=1), _x(3, 6), src="torch.argsort(x, dim=1)"),
    _same("sort", lambda x: torch.sort(x, dim=1).values, _x(3, 6), src="torch.sort(x, dim=1)"),
    _same("topk", lambda x: torch.topk(x, 2).values, _x(3, 6), src="torch.topk(x, 2)"),
    _same("kthvalue", lambda x: torch.kthvalue(x, 2).values, _x(3, 6), src="torch.kthvalue(x, 2)"),
    _same("median", lambda x: torch.median(x, dim=1).values, _x(3, 5), src="torch.median(x, dim=1)"),
    _same("quantile", lambda x: torch.quantile(x, 0.25, dim=1), _x(3, 5), src="torch.quantile(x, 0.25, dim=1)"),
    _same("scatter_reduce", lambda x: torch.zeros(3).scatter_reduce(0, torch.tensor([0, 1, 0, 2]), x, reduce="amax"),
          _x(4), src="torch.zeros(3).scatter_reduce(0, idx, x, reduce='amax'), idx with repeats"),
    _same("scatter_add", lambda x: torch.zeros(3).scatter_add(0, torch.tensor([0, 1, 0, 2]), x), _x(4),
          src="torch.zeros(3).scatter_add(0, idx, x), idx with repeats"),
    Op("index_put_accumulate", "y.index_put_((idx,), x, accumulate=True), idx with repeats",
       lambda x: torch.zeros(3).index_put_((torch.tensor([0, 1, 0, 2]),), x, accumulate=True), _x(4),
       [fn("torch.index_put", accumulate=arg(3, [True])), meth("index_put", "index_put_", accumulate=arg(2, [True]))]),
    _same("index_add", lambda x: torch.zeros(3, 2).index_add(0, torch.tensor([0, 1, 0, 2]), x), _x(4, 2),
          src="torch.zeros(3, 2).index_add(0, idx, x), idx with repeats"),
    Op("repeat_interleave_int", "torch.repeat_interleave(x, 2, dim=0)", lambda x: torch.repeat_interleave(x, 2, dim=0),
       _x(3, 4), [fn("torch.repeat_interleave"), meth("repeat_interleave")]),
    Op("repeat_interleave_tensor", "torch.repeat_interleave(x, torch.tensor([1, 2, 3]), dim=0)",
       lambda x: torch.repeat_interleave(x, torch.tensor([1, 2, 3]), dim=0), _x(3, 4), []),
    Op("pixel_shuffle", "F.pixel_shuffle(x, 2)", lambda x: F.pixel_shuffle(x, 2), _x(1, 8, 4, 4),
       [fn(FN + "pixel_shuffle", "torch.pixel_shuffle"), mod(NN + "PixelShuffle")]),
    Op("pixel_unshuffle", "F.pixel_unshuffle(x, 2)", lambda x: F.pixel_unshuffle(x, 2), _x(1, 2, 4, 4),
       [fn(FN + "pixel_unshuffle", "torch.pixel_unshuffle"), mod(NN + "PixelUnshuffle")]),
    Op("unfold", "F.unfold(x, kernel_size=2)", lambda x: F.unfold(x, kernel_size=2), _img,
       [fn(FN + "unfold"), mod(NN + "Unfold")]),
    Op("fold", "F.fold(x, output_size=(4, 4), kernel_size=2)", lambda x: F.fold(x, output_size=(4, 4), kernel_size=2),
       _x(1, 12, 9), [fn(FN + "fold"), mod(NN + "Fold")]),
    Op("tensor_unfold", "x.unfold(1, 4, 2)", lambda x: x.unfold(1, 4, 2), _x(2, 10), [meth("unfold")]),
    Op("layer_norm", "F.layer_norm(x, (8,))", lambda x: F.layer_norm(x, (8,)), _x(2, 4, 8),
       [fn(FN + "layer_norm"), mod(NN + "LayerNorm")]),
    Op("group_norm", "F.group_norm(x, 2)", lambda x: F.group_norm(x, 2), _x(1, 4, 5, 5),
       [fn(FN + "group_norm"), mod(NN + "GroupNorm")]),
    Op("rms_norm", "F.rms_norm(x, (8,))", lambda x: F.rms_norm(x, (8,)), _x(2, 4, 8),
       [fn(FN + "rms_norm"), mod(NN + "RMSNorm")]),
    Op("gelu_tanh", "F.gelu(x, approximate='tanh')", lambda x: F.gelu(x, approximate="tanh"), _x(4, 8),
       [fn(FN + "gelu", approximate=arg(1, ["tanh"], "none")), mod(NN + "GELU", approximate=arg(0, ["tanh"], "none"))]),
    Op("gelu", "F.gelu(x)", lambda x: F.gelu(x), _x(4, 8),
       [fn(FN + "gelu", approximate=arg(1, ["none"], "none")), mod(NN + "GELU", approximate=arg(0, ["none"], "none"))]),
    Op("silu", "F.silu(x)", lambda x: F.silu(x), _x(4, 8), [fn(FN + "silu"), mod(NN + "SiLU")]),
    Op("mish", "F.mish(x)", lambda x: F.mish(x), _x(4, 8), [fn(FN + "mish"), mod(NN + "Mish")]),
    Op("hardswish", "F.hardswish(x)", lambda x: F.hardswish(x), _x(4, 8), [fn(FN + "hardswish"), mod(NN + "Hardswish")]),
    Op("hardsigmoid", "F.hardsigmoid(x)", lambda x: F.hardsigmoid(x), _x(4, 8),
       [fn(FN + "hardsigmoid"), mod(NN + "Hardsigmoid")]),
    _same("erfinv", lambda x: torch.erfinv(x), lambda: (torch.rand(4, 8) * 1.8 - 0.9,)),
    _same("atan2", lambda a, b: torch.atan2(a, b), lambda: (torch.randn(4, 8), torch.randn(4, 8)), src="torch.atan2(a, b)"),
    _same("isin", lambda x: torch.isin(x, torch.tensor([1, 3, 5])), _ints(10), method=False,
          src="torch.isin(x, torch.tensor([1, 3, 5]))"),
    _same("std", lambda x: torch.std(x, dim=1), _x(3, 6), src="torch.std(x, dim=1)"),
    _same("var", lambda x: torch.var(x, dim=1), _x(3, 6), src="torch.var(x, dim=1)"),
    _same("var_mean", lambda x: torch.var_mean(x, dim=1)[0], _x(3, 6), method=False, src="torch.var_mean(x, dim=1)"),
    _same("nan_to_num", lambda x: torch.nan_to_num(torch.log(x)), _x(4, 8), src="torch.nan_to_num(torch.log(x))"),
    _same("bitwise_and", lambda a: torch.bitwise_and(a, 6), _ints(10), src="torch.bitwise_and(a, 6)"),
    _same("bitwise_xor", lambda a: torch.bitwise_xor(a, 6), _ints(10), src="torch.bitwise_xor(a, 6)"),
    _same("bitwise_not", lambda a: torch.bitwise_not(a), _ints(10), src="torch.bitwise_not(a)"),
    _same("bitwise_left_shift", lambda a: torch.bitwise_left_shift(a, 2), _ints(10), src="torch.bitwise_left_shift(a, 2)"),
    _same("roll", lambda x: torch.roll(x, 2, 1), _x(3, 6), src="torch.roll(x, 2, 1)"),
    _same("cdist", lambda a, b: torch.cdist(a, b), lambda: (torch.randn(4, 3), torch.randn(5, 3)), method=False,
          src="torch.cdist(a, b)"),
    _same("logsumexp", lambda x: torch.logsumexp(x, 1), _x(3, 6), src="torch.logsumexp(x, 1)"),
    Op("one_hot", "F.one_hot(i, 5)", lambda i: F.one_hot(i, 5), lambda: (torch.tensor([0, 3, 1, 4]),),
       [fn(FN + "one_hot")]),
    _linalg("cross", lambda a, b: torch.linalg.cross(a, b), lambda: (torch.randn(4, 3), torch.randn(4, 3)), "torch.cross",
            src="torch.linalg.cross(a, b)"),
    _same("diff", lambda x: torch.diff(x, dim=1), _x(3, 6), src="torch.diff(x, dim=1)"),
    _same("trace", lambda x: torch.trace(x), _x(4, 4)),
    _same("diagonal", lambda x: torch.diagonal(x), _x(4, 4)),
    _same("rot90", lambda x: torch.rot90(x, 1, (0, 1)), _x(3, 4), src="torch.rot90(x, 1, (0, 1))"),
    _same("meshgrid", lambda a, b: torch.meshgrid(a, b, indexing="ij")[0], lambda: (torch.randn(3), torch.randn(4)),
          method=False, src="torch.meshgrid(a, b, indexing='ij')"),
    _same("cummax", lambda x: torch.cummax(x, 1).values, _x(3, 6), src="torch.cummax(x, 1)"),
    _same("renorm", lambda x: torch.renorm(x, 2, 0, 1.0), _x(3, 6), src="torch.renorm(x, 2, 0, 1.0)"),
    Op("embedding_bag", "F.embedding_bag(i, w, offsets)",
       lambda i, w: F.embedding_bag(i, w, torch.tensor([0, 2])), lambda: (torch.tensor([0, 2, 1, 3]), torch.randn(5, 3)),
       [fn(FN + "embedding_bag"), mod(NN + "EmbeddingBag")]),
    _layer("multihead_attention", "nn.MultiheadAttention(8, 2, batch_first=True)(x, x, x)",
           torch.nn.MultiheadAttention(8, 2, batch_first=True), _x(2, 5, 8), ["MultiheadAttention"], self_attention=True),
    _layer("transformer_encoder_layer", "nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()(x)",
           torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), _x(2, 5, 8),
           ["TransformerEncoderLayer", "TransformerEncoder"]),
    _layer("lstm", "nn.LSTM(4, 8, batch_first=True)(x)", torch.nn.LSTM(4, 8, batch_first=True), _x(2, 5, 4), ["LSTM"]),
    _layer("gru", "nn.GRU(4, 8, batch_first=True)(x)", torch.nn.GRU(4, 8, batch_first=True), _x(2, 5, 4), ["GRU"]),
    _layer("conv_transpose2d", "nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1)(x)",
           torch.nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1), _img, ["ConvTranspose2d"]),
    _pad("reflect", "ReflectionPad2d"),
    _pad("replicate", "ReplicationPad2d"),
    _pad("circular", "CircularPad2d"),
    _same("round", lambda x: torch.round(x * 3), _x(4, 8), src="torch.round(x)"),
    _same("flip", lambda x: torch.flip(x, [1]), _x(3, 6), src="torch.flip(x, [1])"),
    Op("max_pool2d_ceil", "F.max_pool2d(x, 3, 2, ceil_mode=True)", lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True), _img,
       [fn(FN + "max_pool2d", ceil_mode=arg(5, [True], False)), mod(NN + "MaxPool2d", ceil_mode=arg(5, [True], False))]),
    Op("affine_grid", "F.affine_grid(theta, (1, 3, 8, 8), align_corners=False)",
       lambda t: F.affine_grid(t, [1, 3, 8, 8], align_corners=False), lambda: (torch.randn(1, 2, 3),),
       [fn(FN + "affine_grid")]),
    Op("ctc_loss", "F.ctc_loss(logp, targets, in_lens, tgt_lens)",
       lambda lp: F.ctc_loss(lp.log_softmax(2), torch.tensor([[1, 2]]), torch.tensor([6]), torch.tensor([2])),
       _x(6, 1, 4), [fn(FN + "ctc_loss"), mod(NN + "CTCLoss")]),
]

# repeat_interleave with a tensor of repeats is spelled like the int form: the rule cannot tell them apart
# statically, so only the int form carries the match (see results.md).
BY_ID = {op.id: op for op in OPS}
assert len(BY_ID) == len(OPS), "duplicate op ids"
