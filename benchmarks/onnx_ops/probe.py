"""Export one op module with both ONNX exporters and check each artifact in onnxruntime (measure.py's worker).

Run by measure.py as `python probe.py ID [ID ...]`; prints one `RESULT <json>` line per op.

Per op:
- legacy (TorchScript) exporter, `torch.onnx.export(..., dynamo=False, opset_version=k)` for k in 9..20;
- dynamo exporter at its default opset (a real export);
- dynamo at every lower opset: one real export at the exporter's own opset (TORCHLIB_OPSET, 18) without
  optimisation, then the exporter's own post-capture steps for each requested opset k < 18 (its
  `convert_version(model, k)` and `optimize`), exactly what `torch.onnx.export(dynamo=True, opset_version=k)`
  runs after the (opset-independent) capture; the lowest opset found is then confirmed by a real export.
Each artifact: status `ok` (loads, runs, matches eager), `mismatch` (runs, wrong numbers or shapes),
`ort_error` (onnxruntime rejects or fails to run it), `export_error` (the exporter raised; error class and
the first line of its message, and for dynamo the innermost cause).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops import BY_ID  # noqa: E402

LEGACY_OPSETS = range(9, 21)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class OpModule(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _flat(out):
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for o in out for t in _flat(o)]


def _first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")), "")
    line = re.sub(r"/tmp/\S+", "<tmp>", line)
    return line[:300]


def _error(exc: BaseException) -> dict:
    out = {"status": "export_error", "error": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": _first_line(exc)}
    cause = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    if cause is not exc:
        out["cause"] = f"{type(cause).__qualname__}: {_first_line(cause)}"
    return out


def _opset(proto: onnx.ModelProto) -> int | None:
    return next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)


def check(proto: onnx.ModelProto, args, expected) -> dict:
    """Load and run the model in onnxruntime on the example; compare with eager."""
    result = {"opset": _opset(proto)}
    try:
        sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        feed = {i.name: args[int(i.name[2:])].numpy() for i in sess.get_inputs()}
        got = sess.run(None, feed)
    except Exception as exc:  # noqa: BLE001 - any onnxruntime failure is a measured outcome
        return {**result, "status": "ort_error", "error": type(exc).__qualname__, "message": _first_line(exc)}
    want = [t.detach().numpy() for t in expected]
    same = len(got) == len(want) and all(
        g.shape == w.shape and np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-3, atol=1e-4, equal_nan=True)
        for g, w in zip(got, want)
    )
    return {**result, "status": "ok" if same else "mismatch"}


def _names(args):
    return [f"in{i}" for i in range(len(args))]


def legacy(model, args, expected, opset: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        try:
            torch.onnx.export(model, args, path, dynamo=False, opset_version=opset, input_names=_names(args))
        except Exception as exc:  # noqa: BLE001
            return _error(exc)
        return check(onnx.load(path), args, expected)


def dynamo(model, args, expected, **kw):
    """A real dynamo export, its model run in onnxruntime; returns (result, program or None)."""
    result, prog = capture(model, args, **kw)
    return (result if prog is None else check(prog.model_proto, args, expected)), prog


def capture(model, args, **kw):
    """A real dynamo export, not run: the unoptimised capture is an intermediate, not what users get (and
    onnxruntime 1.32 crashed on one, embedding_bag's)."""
    try:
        return {"status": "captured"}, torch.onnx.export(model, args, dynamo=True, verbose=False, input_names=_names(args), **kw)
    except Exception as exc:  # noqa: BLE001
        return _error(exc), None


def down_convert(prog, args, expected, opset: int) -> dict:
    """The dynamo exporter's post-capture steps for `opset_version=opset` (see _core.export)."""
    from onnxscript import ir
    from torch.onnx._internal._lazy_import import onnxscript_apis

    model = ir.from_proto(ir.to_proto(prog.model))  # a fresh copy of the unoptimised capture
    try:
        model = onnxscript_apis.convert_version(model, opset)
        model = onnxscript_apis.optimize(model)
        proto = ir.to_proto(model)
    except Exception as exc:  # noqa: BLE001
        return _error(exc)
    return check(proto, args, expected)


def measure(op_id: str) -> dict:
    from torch.onnx._internal.exporter._constants import TORCHLIB_OPSET

    op = BY_ID[op_id]
    torch.manual_seed(0)
    args = tuple(op.inputs())
    model = OpModule(op.fn).eval()
    expected = _flat(model(*args))
    legacy_rows = {str(k): legacy(model, args, expected, k) for k in LEGACY_OPSETS}
    default, _ = dynamo(model, args, expected)
    native, prog = capture(model, args, opset_version=TORCHLIB_OPSET, optimize=False)
    rows = {}
    if prog is not None:
        rows = {str(k): down_convert(prog, args, expected, k) for k in range(LEGACY_OPSETS.start, TORCHLIB_OPSET + 1)}
    accepted = [k for k in range(LEGACY_OPSETS.start, TORCHLIB_OPSET + 1) if rows.get(str(k), {}).get("opset") == k
                and rows[str(k)]["status"] in ("ok", "mismatch")]
    lowest = next((k for k in accepted if all(j in accepted for j in range(k, TORCHLIB_OPSET + 1))), None)
    confirmed = None
    if lowest is not None and lowest < TORCHLIB_OPSET:
        confirmed, _ = dynamo(model, args, expected, opset_version=lowest)
    return {
        "id": op.id,
        "legacy": legacy_rows,
        "dynamo": {"default": default, "native_opset": TORCHLIB_OPSET, "native": native, "opsets": rows,
                   "lowest_opset": lowest, "lowest_confirmed": confirmed},
    }


def main(ids: list[str]) -> None:
    """Results go to the original stdout; the exporters' own output (also from C++) goes nowhere."""
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    out = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    for op_id in ids:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                row = measure(op_id)
            except Exception as exc:  # noqa: BLE001 - the op's own eager run failed: say so, go on
                row = {"id": op_id, "probe_error": f"{type(exc).__qualname__}: {_first_line(exc)}"}
        out.write("RESULT " + json.dumps(row) + "\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
