"""Tiny probe modules for the exporter claims (benchmarks/claims/probe_claims.py, tests/test_exporter_claims.py).

Each probe is a module plus an example input A, one or more other inputs B (another size of the
dimension declared dynamic, sometimes other values) and the dimensions to declare dynamic
(`dyn`: {argument index: [dims]}). The line of each expression under test is kept short so that
TracerWarnings point at it.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Probe:
    id: str
    title: str
    make: Callable[[], nn.Module]
    a: Callable[[], tuple]
    bs: list[tuple[str, Callable[[], tuple]]]
    dyn: dict[int, list[int]]
    group: str = "shape"
    notes: str = ""
    extra: dict = field(default_factory=dict)


PROBES: dict[str, Probe] = {}


def ort_runner(model_bytes):
    """(run, session) for an ONNX model in onnxruntime: ``run(*tensors)`` feeds the inputs named
    ``in0``, ``in1``, … that the model has and returns its outputs as tensors."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]

    def run(*args):
        feed = {f"in{i}": a.numpy() for i, a in enumerate(args) if f"in{i}" in names}
        return [torch.from_numpy(o) for o in sess.run(None, feed)]

    return run, sess


def probe(id, title, a, bs, dyn, group="shape", notes=""):
    def deco(cls):
        PROBES[id] = Probe(id, title, cls, a, bs if isinstance(bs, list) else [("B", bs)], dyn, group, notes)
        return cls
    return deco


def r(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g)


# --------------------------------------------------------------------------- shape arithmetic


@probe("p01", "`h = int(x.shape[0])` unused", lambda: (r(3, 4),), lambda: (r(5, 4),), {0: [0]})
class P01(nn.Module):
    def forward(self, x):
        h = int(x.shape[0])  # noqa: F841
        return x * 2


@probe("p02", "`x.view(int(x.shape[0]), -1)`", lambda: (r(3, 4, 2),), lambda: (r(5, 4, 2),), {0: [0]})
class P02(nn.Module):
    def forward(self, x):
        return x.view(int(x.shape[0]), -1)


@probe("p03", "`F.interpolate(x, scale_factor=float(x.shape[-1]) / 7)`",
       lambda: (r(1, 1, 4, 14),), lambda: (r(1, 1, 4, 21),), {0: [3]})
class P03(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=float(x.shape[-1]) / 7)


class _PosEmbedBase(nn.Module):
    """DINOv2 / Depth-Anything-V2 ViT patch embedding + position embedding for any resolution."""

    patch = 14

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Conv2d(3, 8, self.patch, self.patch)
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + 16, 8))  # cls + 4x4 patches

    def forward(self, img):
        x = self.proj(img).flatten(2).transpose(1, 2)
        h, w = img.shape[-2:]
        return x + self.interpolate_pos_encoding(x, w, h)


@probe("p04", "DINOv2 `interpolate_pos_encoding` with `scale_factor=(float(w0) / sqrt_N, …)`",
       lambda: (r(1, 3, 70, 84),), lambda: (r(1, 3, 98, 112),), {0: [2, 3]})
class P04(_PosEmbedBase):
    def interpolate_pos_encoding(self, x, w, h):
        pos = self.pos_embed[:, 1:]
        N = self.pos_embed.shape[1] - 1
        dim = x.shape[-1]
        w0 = w // self.patch
        h0 = h // self.patch
        sqrt_N = math.sqrt(N)
        sx, sy = float(w0) / sqrt_N, float(h0) / sqrt_N
        M = int(sqrt_N)
        pos = F.interpolate(
            pos.reshape(1, M, M, dim).permute(0, 3, 1, 2),
            scale_factor=(sx, sy),
            mode="bicubic",
        )
        return pos.permute(0, 2, 3, 1).reshape(1, -1, dim)


@probe("p04b", "Depth-Anything-V2 verbatim: `w0 + 0.1` offset, `float(w0) / sqrt_N`, `assert int(w0) == …`",
       lambda: (r(1, 3, 70, 84),), lambda: (r(1, 3, 98, 112),), {0: [2, 3]})
class P04B(_PosEmbedBase):
    interpolate_offset = 0.1

    def interpolate_pos_encoding(self, x, w, h):
        pos = self.pos_embed[:, 1:]
        N = self.pos_embed.shape[1] - 1
        dim = x.shape[-1]
        w0 = w // self.patch
        h0 = h // self.patch
        w0, h0 = w0 + self.interpolate_offset, h0 + self.interpolate_offset
        sqrt_N = math.sqrt(N)
        sx, sy = float(w0) / sqrt_N, float(h0) / sqrt_N
        pos = F.interpolate(
            pos.reshape(1, int(sqrt_N), int(sqrt_N), dim).permute(0, 3, 1, 2),
            scale_factor=(sx, sy),
            mode="bicubic",
        )
        assert int(w0) == pos.shape[-2]
        assert int(h0) == pos.shape[-1]
        return pos.permute(0, 2, 3, 1).reshape(1, -1, dim)


@probe("p04c", "DINO v1 form: `scale_factor=(w0 / math.sqrt(N), h0 / math.sqrt(N))` (no float())",
       lambda: (r(1, 3, 70, 84),), lambda: (r(1, 3, 98, 112),), {0: [2, 3]})
class P04C(_PosEmbedBase):
    def interpolate_pos_encoding(self, x, w, h):
        pos = self.pos_embed[:, 1:]
        N = self.pos_embed.shape[1] - 1
        dim = x.shape[-1]
        w0 = w // self.patch
        h0 = h // self.patch
        w0, h0 = w0 + 0.1, h0 + 0.1
        pos = F.interpolate(
            pos.reshape(1, int(math.sqrt(N)), int(math.sqrt(N)), dim).permute(0, 3, 1, 2),
            scale_factor=(w0 / math.sqrt(N), h0 / math.sqrt(N)),
            mode="bicubic",
        )
        return pos.permute(0, 2, 3, 1).reshape(1, -1, dim)


@probe("p04f", "DINOv2 fixed: `size=(w0, h0)`",
       lambda: (r(1, 3, 70, 84),), lambda: (r(1, 3, 98, 112),), {0: [2, 3]})
class P04F(_PosEmbedBase):
    def interpolate_pos_encoding(self, x, w, h):
        pos = self.pos_embed[:, 1:]
        M = int(math.sqrt(self.pos_embed.shape[1] - 1))
        dim = x.shape[-1]
        w0 = w // self.patch
        h0 = h // self.patch
        pos = F.interpolate(
            pos.reshape(1, M, M, dim).permute(0, 3, 1, 2),
            size=(w0, h0),
            mode="bicubic",
        )
        return pos.permute(0, 2, 3, 1).reshape(1, -1, dim)


@probe("p03b", "`scale_factor=torch.sym_float(x.shape[-1]) / 7`",
       lambda: (r(1, 1, 4, 14),), lambda: (r(1, 1, 4, 21),), {0: [3]})
class P03B(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=torch.sym_float(x.shape[-1]) / 7)


@probe("p03c", "`size=x.shape[-1] * x.shape[-1] // 7` (integer form of p03)",
       lambda: (r(1, 1, 4, 14),), lambda: (r(1, 1, 4, 21),), {0: [3]})
class P03C(nn.Module):
    def forward(self, x):
        return F.interpolate(x, size=(x.shape[-2] * x.shape[-1] // 7, x.shape[-1] * x.shape[-1] // 7))


def _resize_scale(x):
    """torchvision's `_resize_image_and_masks` scale: a float from the input's H and W."""
    h, w = x.shape[-2:]
    return min(8 / min(h, w), 13 / max(h, w))


@probe("p03d", "`scale_factor=min(8 / min(H, W), 13 / max(H, W))` with `recompute_scale_factor=True` (torchvision resize)",
       lambda: (r(1, 3, 10, 12),), lambda: (r(1, 3, 12, 14),), {0: [2, 3]})
class P03D(nn.Module):
    recompute = True

    def forward(self, x):
        return F.interpolate(x, scale_factor=_resize_scale(x), mode="bilinear",
                             recompute_scale_factor=self.recompute, align_corners=False)


@probe("p03e", "the same `scale_factor` without `recompute_scale_factor`",
       lambda: (r(1, 3, 10, 12),), lambda: (r(1, 3, 12, 14),), {0: [2, 3]})
class P03E(P03D):
    recompute = None


@probe("p05", "`int(h / 2)` as a size", lambda: (r(1, 2, 8),), lambda: (r(1, 2, 12),), {0: [2]})
class P05(nn.Module):
    def forward(self, x):
        n = int(x.shape[-1] / 2)
        return F.interpolate(x, size=n)


@probe("p05b", "`torch.sym_int(h / 2)` as a size", lambda: (r(1, 2, 8),), lambda: (r(1, 2, 12),), {0: [2]})
class P05B(nn.Module):
    def forward(self, x):
        n = torch.sym_int(x.shape[-1] / 2)
        return F.interpolate(x, size=n)


@probe("p05c", "`h // 2` as a size (control)", lambda: (r(1, 2, 8),), lambda: (r(1, 2, 12),), {0: [2]})
class P05C(nn.Module):
    def forward(self, x):
        n = x.shape[-1] // 2
        return F.interpolate(x, size=n)


@probe("p05d", "`h // 2` into `F.adaptive_avg_pool1d` (control: the op itself pins its output size)",
       lambda: (r(1, 2, 8),), lambda: (r(1, 2, 12),), {0: [2]})
class P05D(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool1d(x, x.shape[-1] // 2)


@probe("p06", "`round(h / 2)` as a size", lambda: (r(1, 2, 8),), lambda: (r(1, 2, 12),), {0: [2]})
class P06(nn.Module):
    def forward(self, x):
        n = round(x.shape[-1] / 2)
        return F.interpolate(x, size=n)


@probe("p07", "`math.ceil(h / s)` (pad to a multiple)", lambda: (r(1, 2, 10),), lambda: (r(1, 2, 13),), {0: [2]})
class P07(nn.Module):
    def forward(self, x):
        n = math.ceil(x.shape[-1] / 4)
        return F.pad(x, (0, n * 4 - x.shape[-1]))


@probe("p07b", "`math.floor(h / s)` as a size", lambda: (r(1, 2, 10),), lambda: (r(1, 2, 13),), {0: [2]})
class P07B(nn.Module):
    def forward(self, x):
        n = math.floor(x.shape[-1] / 4)
        return x[..., : n * 4]


@probe("p07c", "`math.trunc(h / s)` as a size", lambda: (r(1, 2, 10),), lambda: (r(1, 2, 13),), {0: [2]})
class P07C(nn.Module):
    def forward(self, x):
        n = math.trunc(x.shape[-1] / 4)
        return x[..., : n * 4]


@probe("p08", "`-(-h // s)` (integer ceil, control)", lambda: (r(1, 2, 10),), lambda: (r(1, 2, 13),), {0: [2]})
class P08(nn.Module):
    def forward(self, x):
        n = -(-x.shape[-1] // 4)
        return F.pad(x, (0, n * 4 - x.shape[-1]))


@probe("p08b", "`(h + s - 1) // s` (integer ceil, control)", lambda: (r(1, 2, 10),), lambda: (r(1, 2, 13),), {0: [2]})
class P08B(nn.Module):
    def forward(self, x):
        n = (x.shape[-1] + 3) // 4
        return F.pad(x, (0, n * 4 - x.shape[-1]))


@probe("p09", "`int(math.sqrt(n))`, n = token count", lambda: (r(2, 16, 3),), lambda: (r(2, 25, 3),), {0: [1]})
class P09(nn.Module):
    def forward(self, x):
        b, n, c = x.shape
        m = int(math.sqrt(n))
        return x.transpose(1, 2).reshape(b, c, m, m)


@probe("p09b", "`int(n ** 0.5)`, n = token count", lambda: (r(2, 16, 3),), lambda: (r(2, 25, 3),), {0: [1]})
class P09B(nn.Module):
    def forward(self, x):
        b, n, c = x.shape
        m = int(n ** 0.5)
        return x.transpose(1, 2).reshape(b, c, m, m)


@probe("p09c", "`int(np.sqrt(n))`, n = token count", lambda: (r(2, 16, 3),), lambda: (r(2, 25, 3),), {0: [1]})
class P09C(nn.Module):
    def forward(self, x):
        import numpy as np

        b, n, c = x.shape
        m = int(np.sqrt(n))
        return x.transpose(1, 2).reshape(b, c, m, m)


@probe("p09d", "`torch.sym_int(torch.sym_float(n) ** 0.5)`", lambda: (r(2, 16, 3),), lambda: (r(2, 25, 3),), {0: [1]})
class P09D(nn.Module):
    def forward(self, x):
        b, n, c = x.shape
        m = torch.sym_int(torch.sym_float(n) ** 0.5)
        return x.transpose(1, 2).reshape(b, c, m, m)


@probe("p09e", "`int(torch.sym_float(n) ** 0.5)`", lambda: (r(2, 16, 3),), lambda: (r(2, 25, 3),), {0: [1]})
class P09E(nn.Module):
    def forward(self, x):
        b, n, c = x.shape
        m = int(torch.sym_float(n) ** 0.5)
        return x.transpose(1, 2).reshape(b, c, m, m)


@probe("p09f", "`math.isqrt(n)`", lambda: (r(2, 16, 3),), lambda: (r(2, 25, 3),), {0: [1]})
class P09F(nn.Module):
    def forward(self, x):
        b, n, c = x.shape
        m = math.isqrt(n)
        return x.transpose(1, 2).reshape(b, c, m, m)


@probe("p10", "`/ math.sqrt(q.size(-1))`, last dim static, batch+seq dynamic",
       lambda: (r(2, 5, 8),), lambda: (r(3, 7, 8),), {0: [0, 1]})
class P10(nn.Module):
    def forward(self, q):
        scores = q @ q.transpose(-1, -2) / math.sqrt(q.size(-1))
        return scores.softmax(-1)


@probe("p10b", "`/ math.sqrt(q.size(-1))` with the feature dim itself dynamic",
       lambda: (r(2, 5, 8),), lambda: (r(2, 5, 12),), {0: [2]})
class P10B(nn.Module):
    def forward(self, q):
        scores = q @ q.transpose(-1, -2) / math.sqrt(q.size(-1))
        return scores.softmax(-1)


@probe("p10c", "`x * (h / 7)` (true division used as a tensor scalar)", lambda: (r(2, 14),), lambda: (r(2, 21),), {0: [1]})
class P10C(nn.Module):
    def forward(self, x):
        return x * (x.shape[-1] / 7)


@probe("p10d", "`x * h ** 0.5` (power used as a tensor scalar)", lambda: (r(2, 14),), lambda: (r(2, 21),), {0: [1]})
class P10D(nn.Module):
    def forward(self, x):
        return x * x.shape[-1] ** 0.5


@probe("p10e", "`x * float(h)` (float() used as a tensor scalar)", lambda: (r(2, 14),), lambda: (r(2, 21),), {0: [1]})
class P10E(nn.Module):
    def forward(self, x):
        return x * float(x.shape[-1])


@probe("p11", "`h * 0.5` passed directly as a size", lambda: (r(1, 2, 8),), lambda: (r(1, 2, 12),), {0: [2]})
class P11(nn.Module):
    def forward(self, x):
        return F.interpolate(x, size=x.shape[-1] * 0.5)


@probe("p11b", "`int(h * 0.5)` as a size", lambda: (r(1, 2, 8),), lambda: (r(1, 2, 12),), {0: [2]})
class P11B(nn.Module):
    def forward(self, x):
        return F.interpolate(x, size=int(x.shape[-1] * 0.5))


@probe("p12", "`x.reshape(h // 2, -1)` (control)", lambda: (r(4, 4),), lambda: (r(6, 4),), {0: [0]})
class P12(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0] // 2, -1)


@probe("p13", "`int(math.sqrt(self.pos_embed.shape[1]))` (parameter shape)",
       lambda: (r(2, 16, 4),), lambda: (r(3, 16, 4),), {0: [0]})
class P13(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.pos_embed = nn.Parameter(torch.randn(1, 16, 4))

    def forward(self, x):
        m = int(math.sqrt(self.pos_embed.shape[1]))
        pos = self.pos_embed.reshape(1, m, m, 4).flip(1).reshape(1, m * m, 4)
        return x + pos


@probe("p14", "`for i in range(x.shape[1])` over a dynamic dim", lambda: (r(2, 3, 4),), lambda: (r(2, 5, 4),), {0: [1]})
class P14(nn.Module):
    def forward(self, x):
        out = x[:, 0]
        for i in range(1, x.shape[1]):
            out = out * 0.5 + x[:, i]
        return out


@probe("p15", "`torch.tensor(list(range(seq_len)))`", lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P15(nn.Module):
    def forward(self, x):
        seq_len = x.shape[1]
        pos = torch.tensor(list(range(seq_len)))
        return x + pos


@probe("p15b", "`torch.arange(seq_len)` (control)", lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P15B(nn.Module):
    def forward(self, x):
        seq_len = x.shape[1]
        pos = torch.arange(seq_len)
        return x + pos


def double(n):
    return n * 2


@probe("p16", "shape through a plain helper `def f(n): return n * 2` into `view`",
       lambda: (r(3, 4),), lambda: (r(5, 4),), {0: [0]})
class P16(nn.Module):
    def forward(self, x):
        return x.view(double(x.shape[0]), 2)


@probe("p17", "`x.sum(1) / torch.tensor(x.shape[1])`", lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P17(nn.Module):
    def forward(self, x):
        return x.sum(1) / torch.tensor(x.shape[1])


@probe("p17b", "`seq_len = x.shape[1]; torch.tensor(seq_len)` in arithmetic",
       lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P17B(nn.Module):
    def forward(self, x):
        seq_len = x.shape[1]
        return x.sum(1) / torch.tensor(seq_len, dtype=torch.float32)


@probe("p17c", "`torch.tensor([w, h, w, h])` from shapes (control, known trace-silent)",
       lambda: (r(1, 3, 4, 6), r(2, 4)), lambda: (r(1, 3, 5, 9), r(2, 4)), {0: [2, 3]})
class P17C(nn.Module):
    def forward(self, img, boxes):
        h, w = img.shape[-2:]
        return boxes * torch.tensor([w, h, w, h])


@probe("p17i", "`torch.as_tensor(x.shape[0])` as a `reshape` size (StyleGAN's minibatch-std group)",
       lambda: (r(8, 3),), lambda: (r(5, 3),), {0: [0]})
class P17I(nn.Module):
    def forward(self, x):
        g = torch.as_tensor(x.shape[0])
        return x.reshape(g, -1).sum(1)


@probe("p17j", "`torch.min(torch.tensor(4), torch.tensor(n))` as a `reshape` size (the fix of p17i)",
       lambda: (r(8, 2, 4, 4),), lambda: (r(12, 2, 6, 6),), {0: [0, 2, 3]})
class P17J(nn.Module):
    def forward(self, x):
        n, c, h, w = x.shape
        g = torch.min(torch.tensor(4), torch.tensor(n))
        y = x.reshape(g, -1, c, h, w).square().mean(dim=0).mean(dim=[1, 2, 3]).reshape(-1, 1, 1, 1)
        return torch.cat([x, y.repeat(g, 1, h, w)], dim=1)


@probe("p28a", "lengths of two tensors one mask selected, compared in a guard (gliner's word-embedding check)",
       lambda: (r(8, 4), r(8)), lambda: (r(11, 4), r(11)), {0: [0], 1: [0]})
class P18A(nn.Module):
    def forward(self, x, scores):
        keep = scores > 0
        emb, kept = x[keep], scores[keep]
        if kept.shape[0] != emb.shape[0]:
            raise ValueError("mismatch")
        return emb * kept[:, None]


@probe("p28b", "lengths of two tensors two masks selected, compared in a guard (the contrast of p28a)",
       lambda: (r(8, 4), r(8)), lambda: (r(11, 4), r(11)), {0: [0], 1: [0]})
class P18B(nn.Module):
    def forward(self, x, scores):
        first = x[:, 0] * 1.0  # equal to x[:, 0]: eager passes the guard
        emb, kept = x[x[:, 0] > 0], first[first > 0]
        if kept.shape[0] != emb.shape[0]:
            raise ValueError("mismatch")
        return emb.sum() + kept.sum()


@probe("p17d", "`torch.tensor([x.sum().item(), 1.0])` (data-dependent scalar)",
       lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P17D(nn.Module):
    def forward(self, x):
        n = x.sum().item()
        return x * torch.tensor([n, 1.0]).sum()


@probe("p17e", "`torch.tensor(x.max())` (tensor data)", lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P17E(nn.Module):
    def forward(self, x):
        return x / torch.tensor(x.max())


@probe("p17f", "`torch.Tensor([v for v in x.sum(1)])` (tensor elements)", lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P17F(nn.Module):
    def forward(self, x):
        return x * torch.Tensor([v for v in x.sum(1)]).unsqueeze(1)


@probe("p17g", "`torch.tensor(x.sum(1).tolist())`", lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P17G(nn.Module):
    def forward(self, x):
        return x * torch.tensor(x.sum(1).tolist()).unsqueeze(1)


@probe("p17h", "`torch.tensor([x[0, 0], x[1, 0]])` (list of 0-d tensors)", lambda: (r(2, 3),), lambda: (r(2, 5),), {0: [1]})
class P17H(nn.Module):
    def forward(self, x):
        return x * torch.tensor([x[0, 0], x[1, 0]]).unsqueeze(1)


@probe("p18a", "`x.new_zeros(len(x), 3)`", lambda: (r(3, 4),), lambda: (r(5, 4),), {0: [0]})
class P18A(nn.Module):
    def forward(self, x):
        return x[:, :3] + x.new_zeros(len(x), 3)


@probe("p18b", "`x.new_zeros(x.shape[0], 3)` (control)", lambda: (r(3, 4),), lambda: (r(5, 4),), {0: [0]})
class P18B(nn.Module):
    def forward(self, x):
        return x[:, :3] + x.new_zeros(x.shape[0], 3)


@probe("p19a", "rank check `if x.ndim == 4:`", lambda: (r(2, 3, 4, 5),), lambda: (r(3, 3, 6, 5),), {0: [0, 2]})
class P19A(nn.Module):
    def forward(self, x):
        if x.ndim == 4:
            x = x.flatten(2)
        return x.mean(-1)


@probe("p19b", "rank check `if len(x.shape) == 3:`", lambda: (r(2, 3, 4),), lambda: (r(3, 3, 6),), {0: [0, 2]})
class P19B(nn.Module):
    def forward(self, x):
        if len(x.shape) == 3:
            x = x.unsqueeze(1)
        return x.mean(-1)


# --------------------------------------------------------------------------- validation guards


@probe("p20a", "`if x.shape[1] != 3: raise ValueError` (C static; N, H dynamic)",
       lambda: (r(2, 3, 4),), [("B", lambda: (r(3, 3, 6),)), ("bad C", lambda: (r(2, 4, 4),))],
       {0: [0, 2]}, group="guard")
class P20A(nn.Module):
    def forward(self, x):
        if x.shape[1] != 3:
            raise ValueError(f"expected 3 channels, got {x.shape[1]}")
        return x * 2


@probe("p20a2", "`if x.shape[1] != 3: raise ValueError` with C declared dynamic",
       lambda: (r(2, 3, 4),), [("bad C", lambda: (r(2, 4, 4),))], {0: [1]}, group="guard")
class P20A2(P20A):
    pass


@probe("p20b", "`assert x.shape[-1] % 2 == 0` (W dynamic)",
       lambda: (r(2, 4),), [("B even", lambda: (r(2, 6),)), ("B odd", lambda: (r(2, 5),))], {0: [1]}, group="guard")
class P20B(nn.Module):
    def forward(self, x):
        assert x.shape[-1] % 2 == 0, "width must be even"
        return x[..., 0::2] * x[..., 1::2]


@probe("p20c", "`torch._assert(x.shape[0] > 0, …)` (batch dynamic)",
       lambda: (r(2, 4),), [("B", lambda: (r(5, 4),)), ("empty", lambda: (r(0, 4),))], {0: [0]}, group="guard")
class P20C(nn.Module):
    def forward(self, x):
        torch._assert(x.shape[0] > 0, "empty batch")
        return x * 2


@probe("p20d", "`if H % p != 0: warnings.warn(…)` (H dynamic)",
       lambda: (r(1, 2, 8, 4),), [("B multiple", lambda: (r(1, 2, 12, 4),)), ("B non-multiple", lambda: (r(1, 2, 10, 4),))],
       {0: [2]}, group="guard")
class P20D(nn.Module):
    def forward(self, x):
        H = x.shape[2]
        if H % 4 != 0:
            warnings.warn(f"height {H} is not a multiple of 4")
        return x.mean(2)


@probe("p20e", "`if H % p != 0: raise ValueError` (H dynamic)",
       lambda: (r(1, 2, 8, 4),), [("B multiple", lambda: (r(1, 2, 12, 4),)), ("B non-multiple", lambda: (r(1, 2, 10, 4),))],
       {0: [2]}, group="guard")
class P20E(nn.Module):
    def forward(self, x):
        H = x.shape[2]
        if H % 4 != 0:
            raise ValueError(f"height {H} is not a multiple of 4")
        return x.mean(2)


def _nan(*shape):
    t = r(*shape)
    t[0, 0] = float("nan")
    return t


@probe("p21", "data-dependent guard `if torch.isnan(x).any(): raise ValueError`",
       lambda: (r(2, 4),), [("B", lambda: (r(3, 4),)), ("NaN", lambda: (_nan(3, 4),))], {0: [0]}, group="guard")
class P21(nn.Module):
    def forward(self, x):
        if torch.isnan(x).any():
            raise ValueError("NaN in input")
        return x * 2


@probe("p21b", "`torch._assert_async(~torch.isnan(x).any())` (fix for p21)",
       lambda: (r(2, 4),), [("B", lambda: (r(3, 4),)), ("NaN", lambda: (_nan(3, 4),))], {0: [0]}, group="guard")
class P21B(nn.Module):
    def forward(self, x):
        torch._assert_async(~torch.isnan(x).any(), "NaN in input")
        return x * 2


@probe("p21c", "`torch._check(not torch.isnan(x).any().item())` (attempted fix for p21)",
       lambda: (r(2, 4),), [("B", lambda: (r(3, 4),)), ("NaN", lambda: (_nan(3, 4),))], {0: [0]}, group="guard")
class P21C(nn.Module):
    def forward(self, x):
        torch._check(not torch.isnan(x).any().item(), lambda: "NaN in input")
        return x * 2


@probe("p21d", "`torch._check(torch.isnan(x).sum().item() == 0)` (fix for p21)",
       lambda: (r(2, 4),), [("B", lambda: (r(3, 4),)), ("NaN", lambda: (_nan(3, 4),))], {0: [0]}, group="guard")
class P21D(nn.Module):
    def forward(self, x):
        torch._check(torch.isnan(x).sum().item() == 0, lambda: "NaN in input")
        return x * 2


@probe("p22", "`torch.split(x, lengths.tolist())`",
       lambda: (r(6, 3), torch.tensor([1, 2, 3])), lambda: (r(9, 3), torch.tensor([4, 1, 4])), {0: [0]}, group="guard")
class P22(nn.Module):
    def forward(self, x, lengths):
        parts = torch.split(x, lengths.tolist())
        return torch.stack([p.sum(0) for p in parts])


@probe("p22b", "`.tolist()` element reaches an `if`",
       lambda: (r(6, 3), torch.tensor([1, 2, 3])), lambda: (r(9, 3), torch.tensor([4, 1, 4])), {0: [0]}, group="guard")
class P22B(nn.Module):
    def forward(self, x, lengths):
        n = lengths.tolist()
        if n[0] > 2:
            return x * 2
        return x


@probe("p22c", "`tuple(ids[mask != 0].tolist())` (a list as long as the rows a mask selects; OmDet-Turbo's cache key)",
       lambda: (r(2, 3), torch.tensor([3, 0, 5])), lambda: (r(4, 3), torch.tensor([0, 2, 7])), {0: [0]}, group="guard")
class P22C(nn.Module):
    def forward(self, x, ids):
        key = tuple(ids[ids != 0].tolist())
        return x * len(key)


@probe("p23a", "`for e in mask.nonzero():`",
       lambda: (r(3, 4),), lambda: (r(5, 4),), {0: [0]}, group="guard")
class P23A(nn.Module):
    def forward(self, x):
        out = x.new_zeros(())
        for e in (x > 0).nonzero():
            out = out + x[e[0], e[1]]
        return out


@probe("p23b", "`for c in labels.unique():`",
       lambda: (r(6, 2), torch.tensor([0, 1, 1, 2, 0, 1])), lambda: (r(7, 2), torch.tensor([3, 3, 0, 1, 0, 2, 1])),
       {0: [0], 1: [0]}, group="guard")
class P23B(nn.Module):
    def forward(self, x, labels):
        out = x.new_zeros(x.shape[1])
        for c in labels.unique():
            out = out + x[labels == c].mean(0)
        return out


@probe("p26a", "`if (x.max(-1).values > 0).all():`", lambda: (r(3, 4),), lambda: (-r(5, 4).abs(),), {0: [0]}, group="guard")
class P26A(nn.Module):
    def forward(self, x):
        if (x.max(-1).values > 0).all():
            return x * 2
        return x


def _col0(rows, v):
    t = r(rows, 4)
    t[:, 0] = v
    return t


@probe("p26b", "`if (x.topk(2).indices == 0).any():`", lambda: (_col0(3, -10.0),), lambda: (_col0(5, 10.0),), {0: [0]},
       group="guard")
class P26B(nn.Module):
    def forward(self, x):
        if (x.topk(2).indices == 0).any():
            return x * 2
        return x


# --------------------------------------------------------------------------- autograd.Function


class PlainFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clamp(min=0) * 2

    @staticmethod
    def backward(ctx, g):
        return g


class ItemFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        scale = x.abs().max().item()
        return x / scale

    @staticmethod
    def backward(ctx, g):
        return g


@probe("p25a", "`autograd.Function` without `symbolic` (plain forward)",
       lambda: (r(2, 4),), lambda: (r(3, 4),), {0: [0]}, group="autograd")
class P25A(nn.Module):
    def forward(self, x):
        return PlainFn.apply(x)


@probe("p25b", "`autograd.Function` without `symbolic` whose forward calls `.item()`",
       lambda: (r(2, 4),), lambda: (r(3, 4, seed=5) * 3,), {0: [0]}, group="autograd")
class P25B(nn.Module):
    def forward(self, x):
        return ItemFn.apply(x)


@probe("p27a", "`if x.shape[1] == 1:` on a dynamic dim (a decode-step test)", lambda: (r(2, 3, 4),),
       [("B", lambda: (r(2, 5, 4),)), ("one", lambda: (r(2, 1, 4),))], {0: [1]})
class P27A(nn.Module):
    def forward(self, x):
        if x.shape[1] == 1:
            return x * 2
        return x + 1


@probe("p29", "`x.sum() if n else x` / `if not x.numel():` on dynamic dims (a size as a truth value)",
       lambda: (r(2, 3, 4),), lambda: (r(5, 6, 4),), {0: [0, 1]})
class P29(nn.Module):
    def forward(self, x):
        n = x.size(0)
        y = x * 2 if n else x
        if not x.numel():
            return x
        return y + 1


@probe("p30", "`nn.LSTM(..., batch_first=True)` over a dynamic sequence (EXL043)",
       lambda: (r(2, 5, 8),), lambda: (r(3, 7, 8),), {0: [0, 1]})
class P30(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.rnn = nn.LSTM(8, 8, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


@probe("p31", "`x.permute(*perm)` with `perm` a tensor of dims (EXL003, compressai's EntropyBottleneck)",
       lambda: (r(2, 3, 4),), lambda: (r(3, 3, 5),), {0: [0, 2]})
class P31(nn.Module):
    def forward(self, x):
        perm = torch.cat((torch.tensor([1, 0]), torch.arange(2, x.ndim)))
        return x.permute(*perm).contiguous()


@probe("p27b", "`if chunk.shape[1] > 0:` on a slice `x[:, :(s // 4) * 4]`", lambda: (r(2, 5, 4),),
       lambda: (r(2, 3, 4),), {0: [1]})
class P27B(nn.Module):
    def forward(self, x):
        chunk = x[:, : (x.shape[1] // 4) * 4]
        if chunk.shape[1] > 0:
            return x + chunk.mean()
        return x


@probe("p27c", "`if m.shape[0] == x.shape[0]:` relating two dynamic dims",
       lambda: (r(3, 4), r(3, 2)), [("B", lambda: (r(5, 4), r(5, 2))), ("other", lambda: (r(5, 4), r(2, 2)))],
       {0: [0, 1], 1: [0, 1]})
class P27C(nn.Module):
    def forward(self, x, m):
        if m.shape[0] == x.shape[0]:
            return x * m.sum(1, keepdim=True)
        return x + m.sum()


@probe("p27d", "`if m.shape[-1] < x.shape[-1]:` ordering two dynamic dims",
       lambda: (r(2, 3, 8), r(2, 3, 4)), [("B", lambda: (r(2, 3, 16), r(2, 3, 8))), ("other", lambda: (r(2, 3, 8), r(2, 3, 16)))],
       {0: [0, 2], 1: [0, 2]})
class P27D(nn.Module):
    def forward(self, x, m):
        if m.shape[-1] < x.shape[-1]:
            m = F.interpolate(m, size=x.shape[-1])
        return x + m[..., : x.shape[-1]]


@probe("p27e", "`if h != 16 or w != 16: raise` pins H and W; a helper's `int()` of them then pins nothing",
       lambda: (r(2, 3, 16, 16),), [("B", lambda: (r(5, 3, 16, 16),)), ("other", lambda: (r(2, 3, 24, 24),))],
       {0: [0, 2, 3]})
class P27E(nn.Module):
    def forward(self, x):
        b, c, h, w = x.shape
        if h != 16 or w != 16:
            raise ValueError("the model takes 16x16 images")
        y = F.avg_pool2d(x, 4).permute(0, 2, 3, 1)
        n = int(2 * max(y.shape[1], y.shape[2]) - 1)
        return y.flatten(1, 2)[:, :n]


@probe("p27f", "`if h.shape != r.shape:` after a strided pooling and a 2x upsampling (DPT's fusion check)",
       lambda: (r(1, 2, 8, 8),), [("B", lambda: (r(1, 2, 10, 10),)), ("other", lambda: (r(1, 2, 9, 9),))],
       {0: [2, 3]})
class P27F(nn.Module):
    def forward(self, x):
        h = F.interpolate(F.avg_pool2d(x, 3, 2, 1), scale_factor=2.0, mode="bilinear")
        if h.shape != x.shape:
            x = F.interpolate(x, size=(h.shape[2], h.shape[3]), mode="bilinear")
        return h + x


@probe("p27g", "`w = x[..., :4]; if w.shape[-1] * 0.3 > 1.0:` (a constant slice's width; VITS's bin count)",
       lambda: (r(2, 8),), lambda: (r(3, 6),), {0: [0, 1]})
class P27G(nn.Module):
    def forward(self, x):
        w = x[..., :4]
        if w.shape[-1] * 0.3 > 1.0:
            w = w * 2
        return w.softmax(-1)


@probe("p27h", "`if x.shape[0] > 0:` (a size tested for being empty; BoxCoder's `box_sum > 0`)",
       lambda: (r(3, 4),), [("B", lambda: (r(5, 4),)), ("one", lambda: (r(1, 4),))], {0: [0]})
class P27H(nn.Module):
    def forward(self, x):
        if x.shape[0] > 0:
            return x * 2
        return x


@probe("p27i", "`if seq > self.weights.size(0): grow the table` (a sinusoidal position table, MusicGen / XGLM)",
       lambda: (r(2, 8),), [("B", lambda: (r(2, 12),)), ("long", lambda: (r(2, 20),))], {0: [1]})
class P27I(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("weights", torch.arange(16.0)[:, None].repeat(1, 3), persistent=False)

    def forward(self, x):
        seq = x.shape[1]
        if seq > self.weights.size(0):
            self.weights = torch.arange(float(seq))[:, None].repeat(1, 3)
        return x[..., None] + self.weights[:seq]


@probe("p09g", "`x.reshape(x.shape[0], np.prod(x.shape[1:]))`", lambda: (r(2, 3, 4),), lambda: (r(3, 5, 6),), {0: [0, 1, 2]})
class P09G(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], np.prod(x.shape[1:]))


@probe("p09h", "`int(math.log2(w / 8))` levels from a width (DepthPro)", lambda: (r(1, 2, 32),), lambda: (r(1, 2, 64),), {0: [2]})
class P09H(nn.Module):
    def forward(self, x):
        n = int(math.log2(x.shape[-1] / 8))
        return x[..., :n]


@probe("p09k", "`int(c * math.log(L))` as a `topk` count (Autoformer's auto-correlation)",
       lambda: (r(2, 16, 4),), lambda: (r(2, 40, 4),), {0: [1]})
class P09K(nn.Module):
    def forward(self, x):
        k = int(1 * math.log(x.size(1)))
        v, _ = torch.topk(x.mean(-1), k, dim=-1)
        return v.sum(-1)[:, None, None] * x


@probe("p09i", "`np.arange(0, n, 4)` chunk starts (Phi-4 audio)", lambda: (r(1, 2, 16),), lambda: (r(1, 2, 24),), {0: [2]})
class P09I(nn.Module):
    def forward(self, x):
        starts = np.arange(0, x.shape[-1], 4)
        return x[..., : len(starts)]


@probe("p09j", "`x.reshape(x.shape[0], math.prod(x.shape[1:]))`", lambda: (r(2, 3, 4),), lambda: (r(3, 5, 6),), {0: [0, 1, 2]})
class P09J(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], math.prod(x.shape[1:]))


# --------------------------------------------------------------------------- export-mode predicates


def _tv_is_tracing():
    # torchvision.ops.boxes / torchvision.utils: `_is_tracing()` is `torch._C._get_tracing_state()`
    return torch._C._get_tracing_state() is not None


def _predicates():
    import transformers.utils as tu

    preds = {
        "torch.jit.is_scripting()": torch.jit.is_scripting,
        "torch.jit.is_tracing()": torch.jit.is_tracing,
        "torch.compiler.is_exporting()": torch.compiler.is_exporting,
        "torch.compiler.is_compiling()": torch.compiler.is_compiling,
        "torch.onnx.is_in_onnx_export()": torch.onnx.is_in_onnx_export,
        "torch._dynamo.is_compiling()": torch._dynamo.is_compiling,
        "transformers.utils.is_torchdynamo_compiling()": tu.is_torchdynamo_compiling,
        "transformers.utils.is_torchdynamo_exporting()": getattr(tu, "is_torchdynamo_exporting", None),
        "transformers.utils.is_tracing()": getattr(tu, "is_tracing", None),
        "torch._C._get_tracing_state() (torchvision `_is_tracing()`)": _tv_is_tracing,
    }
    return {k: v for k, v in preds.items() if v is not None}


def predicate_module(fn):
    class Pred(nn.Module):
        def forward(self, x):
            if fn():
                return x + 1
            return x - 1

    return Pred()


class ScriptingPred(nn.Module):
    """`torch.jit.is_scripting()` written inline, so that torch.jit.script can compile it too."""

    def forward(self, x):
        if torch.jit.is_scripting():
            return x + 1
        return x - 1
