"""Child side: run one exporter, run its artifact on the second input, compare with eager.

Exporter ids are a public interface: ``torch.export``, ``torch.export-strict``, ``onnx-dynamo``,
``jit.trace``, ``onnx-legacy``.  Every function returns an outcome dict:
``{exporter, status, phase, exception, message, detail, seconds, max_abs_diff, points,
implicated, warnings}`` with status ``ok`` / ``failed`` / ``diverges`` / ``unavailable`` /
``out-of-memory``.
"""

from __future__ import annotations

import importlib
import inspect
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from exportlint.dynamic.harness import Inputs, is_out_of_memory, leaves
from exportlint.dynamic.locate import (
    UserFiles, failure_points, key_line, message_locations, root_cause, strip_ansi,
    tracer_warnings,
)

EXPORTERS_BY_TARGET = {
    "export": ("torch.export", "torch.export-strict", "onnx-dynamo"),
    "trace": ("jit.trace", "onnx-legacy"),
}


@dataclass
class Context:
    model: nn.Module
    example: Inputs
    second: Inputs
    eager_second: list[torch.Tensor]
    names: list[str]  # one per positional input
    dims: dict[tuple[str, int], str]  # (input key, dim) -> dim name
    files: UserFiles
    workdir: Path
    atol: float
    rtol: float
    containers: str | None = None  # "a dict" / "a list" when forward returns one (jit.trace's strict)


class _Failed(Exception):
    def __init__(self, phase: str, exc: BaseException) -> None:
        super().__init__(phase)
        self.phase = phase
        self.exc = exc


def run(exporter: str, ctx: Context) -> dict:
    fn = _RUNNERS[exporter]
    out: dict[str, Any] = {"exporter": exporter, "status": "ok", "phase": None, "exception": None,
                           "message": None, "detail": None, "max_abs_diff": None, "points": [],
                           "implicated": [], "warnings": [], "settings": None}
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        try:
            fn(ctx, out)
        except _Failed as failed:
            _record_failure(out, failed.phase, failed.exc, ctx.files)
    out["warnings"] = tracer_warnings(records, ctx.files)
    if out["status"] == "diverges":
        out["implicated"] = [[w["path"], w["line"], "TracerWarning: " + w["message"].split(". ")[0]]
                             for w in out["warnings"]] + out["implicated"]
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


def _record_failure(out: dict, phase: str, exc: BaseException, files: UserFiles) -> None:
    cause = root_cause(exc)
    missing = isinstance(cause, ImportError)  # onnx, onnxscript or onnxruntime not installed
    out["status"] = "out-of-memory" if is_out_of_memory(cause) else (
        "unavailable" if phase == "probe" or missing else "failed")
    out["phase"] = phase
    out["exception"] = type(cause).__name__
    out["message"] = key_line(cause)
    out["detail"] = strip_ansi(str(exc))[:4000]
    out["points"] = [list(p) for p in failure_points(exc, files)]


def _step(phase: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - every exporter error is a result, not a crash
        raise _Failed(phase, exc) from exc


# -- comparison --------------------------------------------------------------------------------


def compare(out: dict, got: list, want: list[torch.Tensor], atol: float, rtol: float) -> None:
    """Set ``max_abs_diff`` and turn ``out`` into a divergence when the artifact disagrees.

    Outputs that hold the same rows as eager in another order (detections whose scores tie:
    sort and top-k break ties differently in onnxruntime) match when the rows that moved are
    tied in a float vector output (the scores); the message says so."""
    if len(got) != len(want):
        out.update(status="diverges", phase="compare",
                   message=f"the artifact returned {len(got)} tensors, eager {len(want)}")
        return
    got = [torch.as_tensor(g).detach() for g in got]
    for i, (g, w) in enumerate(zip(got, want)):
        if tuple(g.shape) != tuple(w.shape):
            out.update(status="diverges", phase="compare", message=(
                f"output {i} has shape {tuple(g.shape)}, eager {tuple(w.shape)} on the second input"))
            return
    worst, bad = _differences(got, want, atol, rtol)
    if bad:
        reordered = _reordered(got, want, bad, atol, rtol)
        if reordered is None or reordered[1] is None:
            out.update(status="diverges", phase="compare", message=(
                f"output {bad[0]} differs from eager on the second input (max abs diff {worst:.3g})"
                + (" — the same rows in another order, not explained by tied values"
                   if reordered is not None else "")))
        else:
            perm, tied = reordered
            worst, _ = _differences([g[perm] if g.dim() and g.shape[0] == len(perm) else g for g in got],
                                    want, atol, rtol)
            moved = int((perm != torch.arange(len(perm))).sum())
            out["message"] = (f"matches eager up to the order of {moved} rows whose values in output "
                              f"{tied} tie (onnxruntime and torch break ties differently)")
    out["max_abs_diff"] = worst if math.isfinite(worst) else None


def _differences(got: list[torch.Tensor], want: list[torch.Tensor], atol: float,
                 rtol: float) -> tuple[float, list[int]]:
    """(largest |artifact - eager|, indices of the outputs out of tolerance); NaN == NaN."""
    worst, bad = 0.0, []
    for i, (g, w) in enumerate(zip(got, want)):
        g64, w64 = g.to(torch.float64), w.detach().to(torch.float64)
        both_nan = torch.isnan(g64) & torch.isnan(w64)
        diff = torch.where(both_nan, torch.zeros_like(g64), (g64 - w64).abs())
        if diff.numel():
            m = diff.max().item()
            worst = max(worst, m) if not math.isnan(m) else math.inf
            if bool((~(diff <= atol + rtol * w64.abs())).any()):
                bad.append(i)
    return worst, bad


def _reordered(got: list[torch.Tensor], want: list[torch.Tensor], bad: list[int], atol: float,
               rtol: float) -> tuple[torch.Tensor, int | None] | None:
    """When the outputs with ``bad``'s leading size hold eager's rows in another order:
    (the permutation taking the artifact's rows to eager's, the float vector output in which
    the moved rows tie, or None when none does); None when they are not a permutation."""
    n = want[bad[0]].shape[0] if want[bad[0]].dim() else 0
    group = [i for i, w in enumerate(want) if w.dim() and w.shape[0] == n]
    if n < 2 or n > 4096 or not set(bad) <= set(group):
        return None
    rows_w = torch.cat([want[i].detach().reshape(n, -1).to(torch.float64) for i in group], 1)
    rows_g = torch.cat([got[i].reshape(n, -1).to(torch.float64) for i in group], 1)
    close = ((rows_g[None] - rows_w[:, None]).abs() <= atol + rtol * rows_w[:, None].abs()).all(-1)
    perm, used = [], set()
    for i in range(n):  # eager row i <- the artifact's row j; keep rows in place where they match
        j = i if bool(close[i, i]) and i not in used else next(
            (int(j) for j in close[i].nonzero().flatten() if int(j) not in used), None)
        if j is None:
            return None
        perm.append(j)
        used.add(j)
    perm_t = torch.tensor(perm)
    moved = (perm_t != torch.arange(n)).nonzero().flatten()
    for i in group:
        w = want[i].detach()
        if w.dim() == 1 and w.is_floating_point():
            v = w[moved].to(torch.float64)
            ties = ((v[None] - v[:, None]).abs() <= atol + rtol * v.abs()).sum(0)
            if len(v) and bool((ties >= 2).all()):
                return perm_t, i
    return perm_t, None


# -- torch.export ------------------------------------------------------------------------------


def _auto_dim() -> Any:
    dim = torch.export.Dim
    return getattr(dim, "AUTO", None)


def dynamic_shapes(ctx: Context) -> Any:
    """torch.export's ``dynamic_shapes`` for the declared dims: Dim.AUTO (named Dims with
    ``min=2`` on torches without AUTO), aligned with forward's inputs."""
    if not ctx.dims:
        return None
    auto = _auto_dim()
    dims: dict[str, Any] = {}
    for (key, d), name in ctx.dims.items():
        spec = auto if auto is not None else torch.export.Dim(name, min=2)
        dims.setdefault(key, {})[d] = spec
    if ctx.example.kwargs:
        per_name = {ctx.names[i]: dims.get(str(i)) for i in range(len(ctx.example.args))}
        per_name.update({k: dims.get(k) for k in ctx.example.kwargs})
        return per_name
    return tuple(dims.get(str(i)) for i in range(len(ctx.example.args)))


def _export(ctx: Context, out: dict, strict: bool) -> None:
    shapes = dynamic_shapes(ctx)
    out["settings"] = f"strict={strict}" + (", dynamic_shapes=Dim.AUTO on the declared dims" if shapes else "")
    ep = _step("export", lambda: torch.export.export(
        ctx.model, ctx.example.args, kwargs=ctx.example.kwargs or None,
        dynamic_shapes=shapes, strict=strict))
    got = _step("run", lambda: _no_grad(ep.module(), ctx.second))
    compare(out, leaves(got), ctx.eager_second, ctx.atol, ctx.rtol)


def _no_grad(fn: Callable, inputs: Inputs) -> Any:
    with torch.no_grad():
        return fn(*inputs.args, **inputs.kwargs)


# -- ONNX --------------------------------------------------------------------------------------


def _onnx_feed(ctx: Context, session: Any) -> dict[str, Any]:
    """Map the second input's tensors to the ONNX graph's inputs (by name, else by position)."""
    named = [(n, a) for n, a in zip(ctx.names, ctx.second.args) if isinstance(a, torch.Tensor)]
    named += [(k, v) for k, v in ctx.second.kwargs.items() if isinstance(v, torch.Tensor)]
    by_name = dict(named)
    wanted = [i.name for i in session.get_inputs()]
    if all(n in by_name for n in wanted):
        return {n: by_name[n].numpy() for n in wanted}
    flat = leaves((ctx.second.args, ctx.second.kwargs))
    return {n: t.numpy() for n, t in zip(wanted, flat)}


def _run_onnx(ctx: Context, out: dict, path: Path) -> None:
    onnx = _step("probe", lambda: importlib.import_module("onnx"))
    ort = _step("probe", lambda: importlib.import_module("onnxruntime"))
    _step("check", lambda: onnx.checker.check_model(str(path)))
    session = _step("run", lambda: ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]))
    got = _step("run", lambda: session.run(None, _onnx_feed(ctx, session)))
    compare(out, [torch.from_numpy(g) for g in got], ctx.eager_second, ctx.atol, ctx.rtol)


def _onnx_args(ctx: Context) -> tuple:
    """The positional inputs as torch.onnx.export wants them: it reads a trailing dict as the
    keyword arguments, so a dict that is a positional input gets an empty dict after it."""
    args = ctx.example.args
    if ctx.example.kwargs:
        return args + (ctx.example.kwargs,)
    return args + ({},) if args and isinstance(args[-1], dict) else args


def _tensor_names(ctx: Context) -> list[str]:
    names = [n for n, a in zip(ctx.names, ctx.example.args) if isinstance(a, torch.Tensor)]
    return names + [k for k, v in ctx.example.kwargs.items() if isinstance(v, torch.Tensor)]


def _onnx_params() -> set[str]:
    return set(inspect.signature(torch.onnx.export).parameters)


def _onnx_dynamo(ctx: Context, out: dict) -> None:
    params = _onnx_params()
    if "dynamo" not in params:
        raise _Failed("probe", RuntimeError("this torch has no torch.onnx.export(dynamo=True)"))
    path = ctx.workdir / "dynamo.onnx"
    extra = {k: v for k, v in (("external_data", False), ("verbose", False), ("report", False))
             if k in params}
    shapes = dynamic_shapes(ctx)
    out["settings"] = "dynamo=True" + (", dynamic_shapes=Dim.AUTO on the declared dims" if shapes else "")
    _step("export", lambda: torch.onnx.export(
        ctx.model, _onnx_args(ctx), str(path), dynamo=True,
        dynamic_shapes=shapes, input_names=_tensor_names(ctx), **extra))
    _run_onnx(ctx, out, path)


def _onnx_legacy(ctx: Context, out: dict) -> None:
    params = _onnx_params()
    path = ctx.workdir / "legacy.onnx"
    names = _tensor_names(ctx)
    key_name = {str(i): n for i, n in enumerate(ctx.names)}
    axes: dict[str, dict[int, str]] = {}
    for (key, d), dim_name in ctx.dims.items():
        axes.setdefault(key_name.get(key, key), {})[d] = dim_name
    args = _onnx_args(ctx)
    extra = {"dynamo": False} if "dynamo" in params else {}
    extra.update({"verbose": False} if "verbose" in params else {})
    out["settings"] = "dynamo=False" + (", dynamic_axes on the declared dims" if axes else "")
    _step("export", lambda: _legacy_call(ctx.model, args, path, names, axes or None, extra))
    _run_onnx(ctx, out, path)


def _legacy_call(model: nn.Module, args: tuple, path: Path, names: list[str],
                 axes: dict | None, extra: dict) -> None:
    try:
        torch.onnx.export(model, args, str(path), input_names=names, dynamic_axes=axes, **extra)
    except TypeError as exc:  # removed in a future torch: say so instead of failing the model
        if "dynamo" in str(exc) or "dynamic_axes" in str(exc):
            raise _Failed("probe", exc) from exc
        raise


# -- jit.trace ---------------------------------------------------------------------------------


def _trace(ctx: Context, out: dict) -> None:
    ex, second = ctx.example, ctx.second
    # strict=False, as users must pass it, when forward returns a dict or a list (detection models)
    kw = {"example_kwarg_inputs": ex.kwargs} if ex.kwargs else {}
    kw["strict"] = ctx.containers is None
    out["settings"] = f"strict={kw['strict']}" + (
        f" (forward returns {ctx.containers})" if ctx.containers else "") + (
        ", check_inputs=[the second input]" if not ex.kwargs else ", no check_inputs (keyword inputs)")
    check_error = None
    try:
        traced = torch.jit.trace(ctx.model, ex.args if not ex.kwargs else None, check_trace=not ex.kwargs,
                                 check_inputs=[second.args] if not ex.kwargs else None, **kw)
    except torch.jit.TracingCheckError as exc:  # graphs or outputs differ across the two inputs
        check_error = exc
        traced = _step("export", lambda: torch.jit.trace(
            ctx.model, ex.args if not ex.kwargs else None, check_trace=False, **kw))
    except Exception as exc:  # noqa: BLE001
        raise _Failed("export", exc) from exc
    got = _step("run", lambda: _no_grad(traced, second))
    compare(out, leaves(got), ctx.eager_second, ctx.atol, ctx.rtol)
    if check_error is not None:
        text = strip_ansi(str(check_error))
        out["implicated"] = [[p, ln, "TracingCheckError"] for p, ln, _ in
                             message_locations(text, ctx.files)]
        if out["status"] == "ok":  # the artifact happened to agree, but the graphs differ
            out.update(status="diverges", phase="check")
        out["exception"] = "TracingCheckError"
        out["message"] = out["message"] or key_line(check_error)
        out["detail"] = text[:4000]


_RUNNERS: dict[str, Callable[[Context, dict], None]] = {
    "torch.export": lambda ctx, out: _export(ctx, out, strict=False),
    "torch.export-strict": lambda ctx, out: _export(ctx, out, strict=True),
    "onnx-dynamo": _onnx_dynamo,
    "jit.trace": _trace,
    "onnx-legacy": _onnx_legacy,
}
