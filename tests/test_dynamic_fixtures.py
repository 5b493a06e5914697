"""Dynamic pass over the repository's fixtures/ with the real exporters (one worker per target)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from exportlint.config import load_settings  # noqa: E402
from exportlint.diagnostics import Diagnostic, FileReport, Target  # noqa: E402
from exportlint.dynamic import DynamicOptions, run_dynamic  # noqa: E402
from exportlint.runner import lint_paths  # noqa: E402

pytestmark = pytest.mark.dynamic

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXPORT_SET = ["clean_cnn.py", "detection_postprocess.py", "rnn_greedy_decoder.py",
              "vit_interpolate_pos.py"]
TRACE_SET = ["trace_divergence.py", "keypoint_heatmap.py"]


def run(names: list[str], target: Target) -> tuple[dict[str, FileReport], list[dict]]:
    paths = [str(FIXTURES / n) for n in names]
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        pytest.skip(f"fixtures not there yet: {missing}")
    reports = lint_paths(paths, load_settings(FIXTURES.parent, {"target": target.value}))
    rows = run_dynamic(reports, DynamicOptions(target=target), progress=False)
    return {Path(r.path).name: r for r in reports}, rows


@pytest.fixture(scope="module")
def export_run() -> tuple[dict[str, FileReport], list[dict]]:
    return run(EXPORT_SET, Target.EXPORT)


@pytest.fixture(scope="module")
def trace_run() -> tuple[dict[str, FileReport], list[dict]]:
    return run(TRACE_SET, Target.TRACE)


def at(reports: dict[str, FileReport], name: str, needle: str) -> list[Diagnostic]:
    lines = (FIXTURES / name).read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if needle in text)
    found = [d for d in reports[name].diagnostics if d.line == line]
    assert found, f"no finding at {name}:{line}"
    return found


def statuses(rows: list[dict], name: str) -> dict[str, str]:
    return {r["exporter"]: r["status"] for r in rows if r["path"].endswith(name)}


def test_every_finding_gets_a_verdict(export_run, trace_run) -> None:
    for reports, _ in (export_run, trace_run):
        for report in reports.values():
            for d in report.diagnostics:
                assert d.dynamic and d.dynamic["status"] in {
                    "confirmed", "diverges", "passes", "not-reached", "not-verifiable"}, d


def test_clean_cnn_exports(export_run) -> None:
    assert statuses(export_run[1], "clean_cnn.py") == {"torch.export": "ok", "onnx-dynamo": "ok"}


def test_detection_postprocess_fails_on_the_empty_check(export_run) -> None:
    reports, rows = export_run
    assert {d.dynamic["status"] for d in at(reports, "detection_postprocess.py",
                                             "if boxes.numel() == 0")} == {"confirmed"}
    assert statuses(rows, "detection_postprocess.py") == {"torch.export": "failed",
                                                          "onnx-dynamo": "failed"}


def test_rnn_decoder_fails_on_the_early_exit(export_run) -> None:
    reports, _ = export_run
    (brk,) = at(reports, "rnn_greedy_decoder.py", "if finished.all()")
    assert brk.dynamic["status"] == "confirmed" and brk.dynamic["exporter"] == "torch.export"
    streaming = at(reports, "rnn_greedy_decoder.py", "not done.item()")
    assert {d.dynamic["status"] for d in streaming} == {"not-reached"}  # a subclass build() skips


def test_vit_size_tensor_exports_with_torch_export(export_run) -> None:
    reports, rows = export_run
    assert statuses(rows, "vit_interpolate_pos.py") == {"torch.export": "ok", "onnx-dynamo": "ok"}
    (size,) = at(reports, "vit_interpolate_pos.py", "size=(grid[0], grid[1])")
    assert size.dynamic["status"] == "passes"


def test_trace_divergence_is_silent_for_jit_trace(trace_run) -> None:
    reports, rows = trace_run
    (item,) = at(reports, "trace_divergence.py", "scale = x.detach().abs().max().item()")
    assert item.dynamic["status"] == "diverges" and item.dynamic["exporter"] == "jit.trace"
    assert statuses(rows, "trace_divergence.py") == {"jit.trace": "diverges", "onnx-legacy": "diverges"}
    assert statuses(rows, "keypoint_heatmap.py")["jit.trace"] == "diverges"
