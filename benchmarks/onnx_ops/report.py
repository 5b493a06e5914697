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
        f"Python {v['python']}; measured {doc['measured']} with `{doc['command']}`. Machine-readable: "
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
    lines += ["", "Statuses:", ""] + [f"- `{k}`: {v}" for k, v in doc["statuses"].items()]
    return "\n".join(lines) + "\n"


def write_report(doc: dict, path: Path) -> None:
    path.write_text(render(doc))


if __name__ == "__main__":
    write_report(json.loads(DATA.read_text()), HERE / "results.md")
