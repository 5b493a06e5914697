"""Measure ONNX operator support per opset for torch's two ONNX exporters; write the table EXL105 uses.

    python benchmarks/onnx_ops/measure.py                 # every op in ops.py (511 s for 108 ops, shared 2 cores)
    python benchmarks/onnx_ops/measure.py --ops triu,sdpa # re-measure some ops, keep the others' rows

Writes exportlint/data/onnx_ops.json (package data, read by exportlint.data without torch) and
benchmarks/onnx_ops/results.md (the same table for people). The ops and their source spellings are in
ops.py; the export-and-run procedure for one op is probe.py, run in worker processes (several ops each,
with a timeout; ops a worker did not report (it timed out or crashed) are retried alone once, then recorded as `probe_error`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT / "exportlint" / "data" / "onnx_ops.json"
REPORT = HERE / "results.md"
sys.path.insert(0, str(HERE))
from jsonfmt import write_json  # noqa: E402

CONVERTS = ("ok", "mismatch")
STATUSES = {
    "ok": "exported, loaded and ran in onnxruntime, outputs match eager (rtol 1e-3, atol 1e-4)",
    "mismatch": "exported and ran in onnxruntime, but outputs differ from eager (values or shapes)",
    "ort_error": "exported, but onnxruntime could not load or run the model",
    "export_error": "the exporter raised (error: exception class and the first line of its message)",
    "kept_18": "dynamo only: down-conversion to the requested opset failed and the exporter kept opset 18",
}


FIELDS = {
    "form": "the source form measured",
    "match": "how source code spells the op (see match_format)",
    "legacy.min_opset": "lowest opset from which every higher one converts (ok or mismatch); null: none of 9-20",
    "legacy.status": "status per opset 9-20",
    "legacy.mismatch_opsets": "opsets where the model ran but disagreed with eager",
    "legacy.error": "the error at the highest failing opset",
    "dynamo.converts": "the default dynamo export (opset_version unset) converted",
    "dynamo.error": "its error; cause: the innermost exception",
    "dynamo.status_by_opset": "outcome of opset_version=k for k in 9-18 (kept_18: the exporter silently kept 18)",
    "dynamo.lowest_opset": "lowest opset_version the dynamo exporter really produces (all higher ones too)",
    "dynamo.lowest_confirmed": "a real export at lowest_opset produced that opset and ran",
}


def run_workers(ids: list[str], chunk: int, timeout: int) -> dict[str, dict]:
    """RESULT rows of probe.py for ids, several ops per worker process."""
    results: dict[str, dict] = {}
    retry: list[str] = []
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
        results.update(_worker(part, timeout * len(part)))
        retry += [i for i in part if i not in results]
        print(f"{len(results)}/{len(ids)} ops measured", file=sys.stderr, flush=True)
    for op_id in retry:
        results.update(_worker([op_id], timeout))
    return results


def _worker(ids: list[str], timeout: int) -> dict[str, dict]:
    cmd = [sys.executable, str(HERE / "probe.py"), *ids]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE)
        out, ended = proc.stdout, f"worker exited with {proc.returncode}"
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        ended = f"timeout after {timeout} s"
    rows = {row["id"]: row for row in (json.loads(ln[len("RESULT ") :]) for ln in out.splitlines() if ln.startswith("RESULT "))}
    if len(ids) == 1 and not rows:
        rows[ids[0]] = {"id": ids[0], "probe_error": ended}
    return rows


def _error_of(row: dict) -> dict:
    return {k: row[k] for k in ("error", "message", "cause") if k in row}


def _min_opset(status: dict[int, str]) -> int | None:
    """The lowest opset from which every higher measured opset converts (runs, right or wrong)."""
    best = None
    for k in sorted(status, reverse=True):
        if status[k] not in CONVERTS:
            break
        best = k
    return best


def summarise_legacy(rows: dict) -> dict:
    status = {int(k): r["status"] for k, r in rows.items()}
    failing = [int(k) for k, r in rows.items() if r["status"] not in CONVERTS]
    out = {"min_opset": _min_opset(status), "status": {str(k): v for k, v in sorted(status.items())}}
    out["mismatch_opsets"] = [k for k, v in sorted(status.items()) if v == "mismatch"]
    if failing:
        out["error"] = _error_of(rows[str(max(failing))])  # the failure nearest the threshold
    return out


def summarise_dynamo(d: dict) -> dict:
    default = d["default"]
    out = {"converts": default["status"] in CONVERTS, "default_opset": default.get("opset"), "status": default["status"]}
    if default["status"] not in CONVERTS:
        out["error"] = _error_of(default)
    status = {}
    for k, r in d["opsets"].items():
        status[k] = "kept_18" if r["status"] in CONVERTS and r.get("opset") != int(k) else r["status"]
    out["status_by_opset"] = status
    out["lowest_opset"] = d["lowest_opset"]
    confirmed = d.get("lowest_confirmed")
    out["lowest_confirmed"] = None if confirmed is None else (
        confirmed["status"] in CONVERTS and confirmed.get("opset") == d["lowest_opset"])
    return out


def summarise(op, row: dict) -> dict:
    entry = {"id": op.id, "form": op.form, "match": op.match}
    if "probe_error" in row:
        entry["probe_error"] = row["probe_error"]
        return entry
    entry["legacy"] = summarise_legacy(row["legacy"])
    entry["dynamo"] = summarise_dynamo(row["dynamo"])
    return entry


def versions() -> dict:
    import onnx
    import onnxruntime
    import onnxscript
    import torch

    return {"python": platform.python_version(), **{m.__name__: m.__version__ for m in (torch, onnx, onnxruntime, onnxscript)}}


def write_table(entries: list[dict], partial_runs: list[str]) -> dict:
    doc = {
        "schema": 1,
        "about": "ONNX operator support per opset for torch.onnx.export, measured: one tiny module per op, "
        "exported with the legacy exporter (dynamo=False) at opsets 9-20 and the dynamo exporter (default opset, "
        "and down-converted to 9-17), each artifact run in onnxruntime against eager",
        "command": "python benchmarks/onnx_ops/measure.py",
        "partial_runs": partial_runs,
        "measured": datetime.date.today().isoformat(),
        "versions": versions(),
        "legacy_opsets": [9, 20],
        "statuses": STATUSES,
        "fields": FIELDS,
        "match_format": "see benchmarks/onnx_ops/ops.py (module docstring)",
        "ops": entries,
    }
    write_json(DATA, doc)
    return doc


def main(argv=None) -> int:
    from ops import OPS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", help="comma-separated op ids (default: all); other ops keep their rows")
    ap.add_argument("--chunk", type=int, default=8, help="ops per worker process")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per op")
    args = ap.parse_args(argv)
    wanted = [o.id for o in OPS]
    if args.ops:
        unknown = sorted(set(args.ops.split(",")) - set(wanted))
        if unknown:
            ap.error(f"unknown op ids: {', '.join(unknown)} (see benchmarks/onnx_ops/ops.py)")
        wanted = args.ops.split(",")
    previous = json.loads(DATA.read_text()) if args.ops and DATA.exists() else {}
    old = {e["id"]: e for e in previous.get("ops", [])}
    rows = run_workers(wanted, args.chunk, args.timeout)
    entries = []
    for op in OPS:
        if op.id in rows:
            entries.append(summarise(op, rows[op.id]))
        elif op.id in old:
            entries.append({**old[op.id], "form": op.form, "match": op.match})
    doc = write_table(entries, previous.get("partial_runs", []) + ([f"--ops {args.ops}"] if args.ops else []))
    from report import write_report

    write_report(doc, REPORT)
    print(f"wrote {DATA.relative_to(ROOT)} ({len(entries)} ops) and {REPORT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
