"""Render exportlint/data/onnx_ops.json as benchmarks/onnx_ops/results.md (called by measure.py).

    python benchmarks/onnx_ops/report.py   # re-render from the JSON without measuring
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "exportlint" / "data" / "onnx_ops.json"


def _legacy_cell(leg: dict) -> str:
    if leg["min_opset"] is None:
        return "**none**"
    cell = "9" if leg["min_opset"] == 9 else f"**{leg['min_opset']}**"
    if leg["mismatch_opsets"]:
        cell += f" (wrong output at {_span(leg['mismatch_opsets'])})"
    return cell


def _span(opsets: list[int]) -> str:
    return f"{opsets[0]}" if len(opsets) == 1 else f"{opsets[0]}-{opsets[-1]}"


def _dynamo_cell(dyn: dict) -> str:
    if not dyn["converts"]:
        return "**fails**"
    cell = "ok" if dyn["status"] == "ok" else f"**{dyn['status']}**"
    low = dyn["lowest_opset"]
    return cell + (f", down to {low}" if low is not None else ", kept at 18 below 18")


def _error(entry: dict) -> str:
    errs = []
    for side in ("legacy", "dynamo"):
        err = entry.get(side, {}).get("error")
        if err and (side == "dynamo" and not entry["dynamo"]["converts"] or side == "legacy"):
            text = err.get("cause") if side == "dynamo" and err.get("cause") else err.get("message", "")
            cls = err.get("error", "").rsplit(".", 1)[-1]
            errs.append(f"{side}: `{cls}` {text[:160]}".replace("|", "\\|"))
    return "<br>".join(errs) or entry.get("probe_error", "")


def render(doc: dict) -> str:
    v = doc["versions"]
    lines = [
        "# ONNX operator support per opset (measured)",
        "",
        f"torch {v['torch']}, onnx {v['onnx']}, onnxscript {v['onnxscript']}, onnxruntime {v['onnxruntime']}, "
        f"Python {v['python']}; measured {doc['measured']} with `{doc['command']}`"
        + "".join(f", then `{doc['command']} {p}`" for p in doc.get("partial_runs", []))
        + ". Machine-readable: "
        "`exportlint/data/onnx_ops.json` (what EXL105 reads).",
        "",
        "One tiny module per op (benchmarks/onnx_ops/ops.py), exported by `torch.onnx.export(dynamo=False, "
        "opset_version=k)` for k = 9..20 and by `torch.onnx.export(dynamo=True)` at its default opset; each "
        "artifact is loaded and run in onnxruntime on the example and compared with eager. "
        "*legacy from*: the lowest opset from which every higher one converts (bold when above 9). "
        "*dynamo*: the default export; *down to k*: the lowest `opset_version` for which the dynamo exporter's "
        "own down-conversion produced a model of that opset that runs (below it the exporter silently keeps "
        "opset 18). Errors: the exception at the highest failing legacy opset, and the dynamo error's root cause.",
        "",
        "| op | form | legacy from | dynamo | error |",
        "|---|---|---|---|---|",
    ]
    for e in doc["ops"]:
        if "probe_error" in e:
            lines.append(f"| {e['id']} | `{e['form']}` | ? | ? | not measured: {e['probe_error']} |")
            continue
        lines.append(f"| {e['id']} | `{e['form']}` | {_legacy_cell(e['legacy'])} | {_dynamo_cell(e['dynamo'])} | {_error(e)} |")
    lines += summary([e for e in doc["ops"] if "probe_error" not in e])
    lines += ["", "Statuses:", ""] + [f"- `{k}`: {v}" for k, v in doc["statuses"].items()]
    return "\n".join(lines) + "\n"


def summary(ops: list[dict]) -> list[str]:
    """Counts and the lists a reader (and EXL105's severities) care about, derived from the rows."""
    never = [e["id"] for e in ops if e["legacy"]["min_opset"] is None]
    raised = [e for e in ops if e["legacy"]["min_opset"] not in (None, 9)]
    wrong = [f"{e['id']} ({_span(e['legacy']['mismatch_opsets'])})" for e in ops if e["legacy"]["mismatch_opsets"]]
    dyn_fail = [e["id"] for e in ops if not e["dynamo"]["converts"]]
    dyn_wrong = [e["id"] for e in ops if e["dynamo"]["status"] == "mismatch"]
    both = [i for i in dyn_fail if i in never]
    by_min = {}
    for e in raised:
        by_min.setdefault(e["legacy"]["min_opset"], []).append(e["id"])
    return [
        "",
        "## Summary",
        "",
        f"- {len(ops)} ops measured. Legacy exporter: {len(ops) - len(never) - len(raised)} convert from opset 9, "
        f"{len(raised)} need a higher opset, {len(never)} convert at no opset 9-20.",
        *[f"  - from opset {k}: {', '.join(v)}" for k, v in sorted(by_min.items())],
        f"  - at no opset: {', '.join(never)}",
        f"- Legacy exporter, converted but **wrong output** in onnxruntime: {', '.join(wrong) or 'none'}.",
        f"- Dynamo exporter fails on {len(dyn_fail)}: {', '.join(dyn_fail) or 'none'}"
        + (f"; wrong output on {', '.join(dyn_wrong)}" if dyn_wrong else "") + ".",
        f"- Neither exporter converts: {', '.join(both) or 'none'}.",
        "- Dynamo with `opset_version` below an op's *down to* opset: no error, the model stays at opset 18 "
        "(the exporter's own down-conversion failed and it kept 18).",
    ]


def write_report(doc: dict, path: Path) -> None:
    path.write_text(render(doc))


if __name__ == "__main__":
    write_report(json.loads(DATA.read_text()), HERE / "results.md")
