"""Measure what torch 2.13's exporters do with the probe modules in probes.py.

    python benchmarks/claims/probe_claims.py [--group shape|guard|autograd|pred] [--only p04,p04f] [--json out.json]

Per probe and exporter cell a compact verdict:

- ``ok``           exported, the declared dims stayed symbolic, the artifact matches eager on every B
- ``SPECIALISED``  export passed but made a declared dim static; the artifact rejects B
- ``PINNED``       the dims stayed symbolic in the signature, but a guard pins a value computed from
                   them to the example's (`Guard failed: math.trunc(x.size()[2] / 2) == 4`): rejects B
- ``RTERR``        the artifact raises on B otherwise (runtime assert, onnxruntime shape error, …)
- ``SILENT``       the artifact runs on B and disagrees with eager
- ``NOCHECK``      eager raises on B (a validation guard) but the artifact runs
- ``FAIL <Error>`` the export call raised
- ``EAGER-ERR``    eager itself raises on A
- trace cells add ``(n TW)`` = TracerWarnings recorded, and ``nosave`` when torch.jit.save of the
  traced module fails (e.g. a custom autograd.Function is recorded as prim::PythonOp)

Cells: ns-AUTO / strict-AUTO = torch.export.export(strict=False/True) with Dim.AUTO on the dims in
`dyn`; ns-DYNAMIC = non-strict with Dim.DYNAMIC; onnx-dyn = torch.onnx.export(dynamo=True,
dynamic_shapes=<strings>) + onnxruntime; trace = torch.jit.trace on A (TracerWarnings with the
probe line) then traced(B); legacy = torch.onnx.export(dynamo=False, dynamic_axes=…) + onnxruntime.
"""

from __future__ import annotations

import argparse
import io
import json
import linecache
import logging
import os
import re
import sys
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.export import Dim  # noqa: E402
from torch.fx.experimental.symbolic_shapes import is_concrete_int  # noqa: E402

import probes as P  # noqa: E402

PROBE_FILE = os.path.abspath(P.__file__)
CELLS = ["eager", "ns-AUTO", "strict-AUTO", "ns-DYNAMIC", "onnx-dyn", "trace", "legacy"]

logging.disable(logging.WARNING)
os.environ.setdefault("TORCH_LOGS", "-all")


def _flat(o):
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (list, tuple)):
        return [t for x in o for t in _flat(x)]
    return [torch.as_tensor(o)]


def same(a, b) -> bool:
    fa, fb = _flat(a), _flat(b)
    if len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb):
        x, y = torch.as_tensor(x), torch.as_tensor(y)
        if tuple(x.shape) != tuple(y.shape):
            return False
        if not torch.allclose(x.double(), y.double(), rtol=1e-4, atol=1e-4, equal_nan=True):
            return False
    return True


def short(e: BaseException, n: int = 160) -> str:
    msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()
    first = next((m for m in msg if m.strip()), "")
    return f"{type(e).__name__}: {first[:n]}"


def root(e: BaseException) -> BaseException:
    seen = set()
    while e.__cause__ is not None and id(e) not in seen:
        seen.add(id(e))
        e = e.__cause__
    return e


def call(fn, args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001
        return "raise", e


def judge(run, probe, eager_b, static_dims=()):
    """Verdict of an artifact `run(args)` against eager on every B input."""
    parts, worst = [], "ok"
    order = ["ok", "RTERR", "PINNED", "SPECIALISED", "NOCHECK", "SILENT"]
    for (label, mk), (estate, eout) in zip(probe.bs, eager_b):
        args = mk()
        state, out = call(run, args)
        if estate == "raise":
            v = "ok" if state == "raise" else "NOCHECK"
            detail = f"{label}: eager raises, artifact {'raises' if state == 'raise' else 'runs'}"
        elif state == "raise":
            v = "SPECIALISED" if static_dims else ("PINNED" if "Guard failed" in str(out) else "RTERR")
            detail = f"{label}: {short(out, 110)}"
        elif same(eout, out):
            v, detail = "ok", f"{label}: match"
        else:
            v, detail = "SILENT", f"{label}: mismatch"
        parts.append(detail)
        if order.index(v) > order.index(worst):
            worst = v
    return worst, parts


def ds_for(probe, hint):
    n = len(probe.a())
    return tuple({d: hint for d in probe.dyn.get(i, [])} or None for i in range(n))


def ep_static_dims(ep, probe):
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    static, syms = [], []
    for i, name in enumerate(names):
        val = nodes[name].meta.get("val")
        for d in probe.dyn.get(i, []):
            s = val.shape[d]
            (static if is_concrete_int(s) else syms).append(f"a{i}.d{d}={s}")
    return static, syms


def ranges(ep):
    return "; ".join(f"{k}:[{v.lower},{v.upper}]" for k, v in ep.range_constraints.items())


def cell_export(probe, eager_b, strict, hint):
    try:
        ep = torch.export.export(probe.make(), probe.a(), dynamic_shapes=ds_for(probe, hint), strict=strict)
    except Exception as e:  # noqa: BLE001
        e = root(e)
        return f"FAIL {type(e).__name__}", [short(e)]
    static, syms = ep_static_dims(ep, probe)
    v, parts = judge(ep.module(), probe, eager_b, static)
    notes = []
    if static:
        notes.append("static: " + ",".join(static))
    notes.append("ranges " + ranges(ep))
    if static and v == "ok":
        v = "ok (dim static)"
    return v, notes + parts


def _onnx_static(model, probe):
    out = []
    for i, inp in enumerate(model.graph.input):
        if not inp.name.startswith("in"):
            continue
        idx = int(inp.name[2:])
        dims = inp.type.tensor_type.shape.dim
        for d in probe.dyn.get(idx, []):
            if d < len(dims) and not dims[d].dim_param:
                out.append(f"a{idx}.d{d}={dims[d].dim_value}")
    missing = [i for i in probe.dyn if f"in{i}" not in {x.name for x in model.graph.input}]
    return out, missing


def cell_onnx_dynamo(probe, eager_b):
    n = len(probe.a())
    ds = tuple({d: f"a{i}d{d}" for d in probe.dyn.get(i, [])} or None for i in range(n))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prog = torch.onnx.export(probe.make(), probe.a(), dynamo=True, dynamic_shapes=ds, verbose=False,
                                     input_names=[f"in{i}" for i in range(n)])
    except Exception as e:  # noqa: BLE001
        e = root(e)
        return f"FAIL {type(e).__name__}", [short(e)]
    model = prog.model_proto
    static, missing = _onnx_static(model, probe)
    run, _ = P.ort_runner(model.SerializeToString())
    v, parts = judge(run, probe, eager_b, static)
    notes = []
    if static:
        notes.append("static: " + ",".join(static))
    if missing:
        notes.append(f"inputs dropped: {missing}")
    if static and v == "ok":
        v = "ok (dim static)"
    return v, notes + parts


def tracer_warnings(ws):
    hits = []
    for w in ws:
        if issubclass(w.category, torch.jit.TracerWarning):
            where = f"L{w.lineno}" if os.path.abspath(w.filename) == PROBE_FILE else os.path.basename(w.filename)
            code = linecache.getline(w.filename, w.lineno).strip()[:60]
            msg = str(w.message).split(".")[0][:60]
            item = f"TW {where} `{code}`: {msg}"
            if item not in hits:
                hits.append(item)
    return hits


def cell_trace(probe, eager_b):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            traced = torch.jit.trace(probe.make(), probe.a(), check_trace=False)
        except Exception as e:  # noqa: BLE001
            return f"FAIL {type(e).__name__}", [short(root(e))] + tracer_warnings(ws)
    v, parts = judge(traced, probe, eager_b)
    tw = tracer_warnings(ws)
    try:
        torch.jit.save(traced, io.BytesIO())
    except Exception as e:  # noqa: BLE001
        parts.append("jit.save: " + short(e, 90))
        v += " nosave"
    return v + (f" ({len(tw)} TW)" if tw else ""), tw + parts


def cell_legacy(probe, eager_b):
    n = len(probe.a())
    axes = {f"in{i}": {d: f"a{i}d{d}" for d in dims} for i, dims in probe.dyn.items()}
    buf = io.BytesIO()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            torch.onnx.export(probe.make(), probe.a(), buf, dynamo=False, input_names=[f"in{i}" for i in range(n)],
                              dynamic_axes=axes)
        except Exception as e:  # noqa: BLE001
            return f"FAIL {type(e).__name__}", [short(root(e))]
    import onnx

    model = onnx.load_from_string(buf.getvalue())
    static, missing = _onnx_static(model, probe)
    try:
        run, _ = P.ort_runner(buf.getvalue())
    except Exception as e:  # noqa: BLE001
        return f"FAIL ort {type(e).__name__}", [short(e)]
    v, parts = judge(run, probe, eager_b, static)
    notes = [f"inputs dropped: {missing}"] if missing else []
    return v, notes + parts


def run_probe(probe, cells):
    res = {"id": probe.id, "title": probe.title, "group": probe.group, "cells": {}, "details": {}, "secs": {}}
    torch.manual_seed(0)
    m = probe.make()
    state, out_a = call(m, probe.a())
    eager_b = [call(probe.make(), mk()) for _, mk in probe.bs]
    if state == "raise":
        res["cells"]["eager"] = "EAGER-ERR"
        res["details"]["eager"] = [short(out_a)]
        return res
    res["cells"]["eager"] = "ok"
    res["details"]["eager"] = [f"{lbl}: {'raises ' + short(o, 80) if s == 'raise' else 'ok'}"
                               for (lbl, _), (s, o) in zip(probe.bs, eager_b)]
    fns = {
        "ns-AUTO": lambda: cell_export(probe, eager_b, False, Dim.AUTO),
        "strict-AUTO": lambda: cell_export(probe, eager_b, True, Dim.AUTO),
        "ns-DYNAMIC": lambda: cell_export(probe, eager_b, False, Dim.DYNAMIC),
        "onnx-dyn": lambda: cell_onnx_dynamo(probe, eager_b),
        "trace": lambda: cell_trace(probe, eager_b),
        "legacy": lambda: cell_legacy(probe, eager_b),
    }
    for c in cells:
        if c == "eager":
            continue
        t = time.perf_counter()
        try:
            v, d = fns[c]()
        except Exception as e:  # noqa: BLE001  (harness error, reported as such)
            v, d = "HARNESS", [short(e), traceback.format_exc(limit=3)]
        res["cells"][c] = v
        res["details"][c] = d
        res["secs"][c] = round(time.perf_counter() - t, 2)
    return res


# --------------------------------------------------------------------------- predicates

def run_predicates():
    x = torch.zeros(2, 3)
    out = {}
    for name, fn in P._predicates().items():
        row = {}

        def branch(o):
            o = _flat(o)[0]
            return "True" if float(o.flatten()[0]) == 1.0 else "False"

        def attempt(label, f):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row[label] = f()
            except Exception as e:  # noqa: BLE001
                row[label] = "FAIL " + short(root(e), 80)

        attempt("eager", lambda: branch(P.predicate_module(fn)(x)))
        attempt("ns", lambda: branch(torch.export.export(P.predicate_module(fn), (x,)).module()(x)))
        attempt("strict", lambda: branch(torch.export.export(P.predicate_module(fn), (x,), strict=True).module()(x)))

        def onnx_dyn():
            prog = torch.onnx.export(P.predicate_module(fn), (x,), dynamo=True, verbose=False, input_names=["in0"])
            return branch(P.ort_runner(prog.model_proto.SerializeToString())[0](x))

        attempt("onnx-dyn", onnx_dyn)
        attempt("trace", lambda: branch(torch.jit.trace(P.predicate_module(fn), (x,), check_trace=False)(x)))

        def legacy():
            buf = io.BytesIO()
            torch.onnx.export(P.predicate_module(fn), (x,), buf, dynamo=False, input_names=["in0"])
            return branch(P.ort_runner(buf.getvalue())[0](x))

        attempt("legacy", legacy)
        if name == "torch.jit.is_scripting()":  # the only predicate TorchScript compiles; scripting is no exporter
            attempt("jit.script", lambda: branch(torch.jit.script(P.ScriptingPred())(x)))
        out[name] = row
        print(name, row, flush=True)
    print()
    cols = ["eager", "ns", "strict", "onnx-dyn", "trace", "legacy", "jit.script"]
    print("| predicate | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for name, row in out.items():
        print(f"| `{name}` | " + " | ".join(row.get(c, "") for c in cols) + " |")
    return out


# --------------------------------------------------------------------------- rendering

def render(results):
    lines = ["| probe | " + " | ".join(CELLS) + " |", "|---|" + "---|" * len(CELLS)]
    for r in results:
        lines.append(f"| {r['id']} {r['title']} | " + " | ".join(r["cells"].get(c, "") for c in CELLS) + " |")
    return "\n".join(lines)


def render_details(results):
    out = []
    for r in results:
        out.append(f"- **{r['id']}** {r['title']}")
        for c in CELLS:
            if c in r["cells"]:
                d = "; ".join(x.replace("|", "/").replace("\n", " ") for x in r["details"].get(c, []))
                out.append(f"  - {c}: {r['cells'][c]} — {d}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--group", default=None, help="shape | guard | autograd | pred (default: all but pred)")
    ap.add_argument("--only", default=None)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    print(f"torch {torch.__version__}", flush=True)
    if a.group == "pred":
        res = run_predicates()
        if a.json:
            json.dump(res, open(a.json, "w"), indent=1)
        return
    if a.group is None and a.only is None:
        run_predicates()
    sel = [p for p in P.PROBES.values() if (a.group is None or p.group == a.group)
           and (a.only is None or p.id in a.only.split(","))]
    cells = a.cells.split(",")
    results = []
    for p in sel:
        t = time.perf_counter()
        r = run_probe(p, cells)
        results.append(r)
        print(f"{p.id:6} {time.perf_counter() - t:5.1f}s " + " | ".join(f"{c}={r['cells'].get(c, '')}" for c in cells),
              flush=True)
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)
    print(render(results))
    print()
    print(render_details(results))


if __name__ == "__main__":
    main()
