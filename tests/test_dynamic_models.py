"""Dynamic pass with the real exporters on small models written to a temporary directory.

One run_dynamic call per target covers all the models (one worker process), shared by the
assertions through module-scoped fixtures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from exportlint.diagnostics import Diagnostic, FileReport, Severity, Target  # noqa: E402
from exportlint.dynamic import DynamicOptions, run_dynamic  # noqa: E402
from exportlint.engine import analyze_source  # noqa: E402

pytestmark = pytest.mark.dynamic

HEAD = "import torch\nfrom torch import nn\n\n\n"
MODELS = {
    "item_branch.py": HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        s = y.sum().item()
        if s > 0:
            return y * 2
        return y - 1


def example_inputs():
    return (torch.randn(2, 4),)
""",
    "clean_cnn.py": HEAD + """\
print("user output at import")


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x))) + x


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = Block(8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        print("user output in forward")
        x = self.pool(self.block(self.stem(x)))
        return self.fc(x.mean((2, 3)))
""",
    "fake_quant.py": HEAD + """\
class FakeQuant(nn.Module):
    def forward(self, x):
        scale = x.abs().max().item() / 7
        return torch.round(x / scale).clamp(-8, 7) * scale


def build():
    return nn.Sequential(nn.Linear(6, 6), FakeQuant())


def example_inputs():
    return (torch.randn(3, 6),)
""",
    "detect.py": HEAD + """\
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 5, 3, padding=1)

    def forward(self, images):
        out = self.head(images)
        boxes = out[:, :4].permute(0, 2, 3, 1).reshape(-1, 4)
        scores = out[:, 4].reshape(-1).sigmoid()
        keep = scores > 0.5
        boxes, scores = boxes[keep], scores[keep]
        if boxes.numel() == 0:
            return boxes, scores
        order = scores.argsort(descending=True)
        picked = []
        while order.numel() > 0:
            i = order[0]
            picked.append(i)
            order = order[1:][(boxes[order[1:]] - boxes[i]).abs().sum(-1) > 1.0]
        idx = torch.stack(picked)
        return boxes[idx], scores[idx]


def build():
    torch.manual_seed(0)
    return Detector()


def example_inputs():
    return (torch.randn(1, 3, 8, 8),)
""",
    "rnn_decoder.py": HEAD + """\
class Decoder(nn.Module):
    def __init__(self, vocab=12, hidden=16, max_len=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.proj = nn.Linear(hidden, vocab)
        self.max_len = max_len

    def forward(self, src):
        hidden = self.embed(src).mean(1)
        token = torch.zeros(src.shape[0], dtype=torch.long)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        tokens = []
        for _ in range(self.max_len):
            hidden = self.cell(self.embed(token), hidden)
            token = self.proj(hidden).argmax(-1)
            tokens.append(token)
            finished = finished | (token == 0)
            if finished.all():
                break
        return torch.stack(tokens, 1)


def example_inputs():
    return (torch.randint(0, 12, (2, 5)),)
""",
    "needs_cuda.py": HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        x = x.cuda()
        return self.lin(x)


def example_inputs():
    return (torch.randn(2, 4),)
""",
    "unreached.py": HEAD + """\
class Net(nn.Module):
    def forward(self, x):
        if x.shape[-1] > 1000:
            return x * x.sum().item()
        return x + 1


def example_inputs():
    return (torch.randn(2, 4),)
""",
    "guarded.py": HEAD + """\
class Pairs(nn.Module):
    def forward(self, x):
        return x.reshape(2, -1) * 2


def example_inputs():
    return (torch.randn(2, 6),)
""",
    "decorated.py": HEAD + """\
class Positive(nn.Module):
    @torch.no_grad()
    def forward(self, x):
        return torch.masked_select(x, x > 0) * 2


def example_inputs():
    return (torch.randn(3, 4),)
""",
    "dict_input.py": HEAD + """\
class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, batch):
        return self.lin(batch["x"]) + batch["y"]


def example_inputs():
    return ({"x": torch.randn(2, 3), "y": torch.randn(2, 3)},)
""",
    "dict_output.py": HEAD + """\
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 5)

    def forward(self, x):
        out = self.lin(x)
        return {"boxes": out[:, :4], "scores": out[:, 4].sigmoid()}


def example_inputs():
    return (torch.randn(3, 4),)
""",
    "tied_scores.py": HEAD + """\
class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 5)

    def forward(self, x):
        out = self.lin(x)
        scores = torch.relu(out[:, 4])  # many exact zeros: tied scores
        order = scores.argsort(descending=True)
        return out[:, :4][order], scores[order]


def example_inputs():
    return (torch.randn(40, 4, generator=torch.Generator().manual_seed(0)),)
""",
}
# The same model as item_branch.py, linted as if the static pass had found nothing there.
MODELS["no_findings.py"] = MODELS["item_branch.py"]
EXPORT_SET = [n for n in MODELS if n not in ("dict_input.py", "dict_output.py", "tied_scores.py")]


def line_of(name: str, text: str) -> int:
    return next(i for i, ln in enumerate(MODELS[name].splitlines(), 1) if text in ln)


def lint(folder: Path, names: list[str], target: Target) -> list[FileReport]:
    reports = []
    for name in names:
        path = str(folder / name)
        diags = [] if name == "no_findings.py" else analyze_source(MODELS[name], path, target)
        reports.append(FileReport(path, diags, MODELS[name].splitlines()))
    return reports


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("models")
    for name, text in MODELS.items():
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def export_run(folder: Path) -> tuple[dict[str, FileReport], list[dict], Path]:
    reports = lint(folder, EXPORT_SET, Target.EXPORT)
    summary = folder / "summary.json"
    rows = run_dynamic(reports, DynamicOptions(target=Target.EXPORT, dynamic_dims=["0:0:batch"],
                                               strict=True, summary_json=str(summary)), progress=False)
    return {Path(r.path).name: r for r in reports}, rows, summary


@pytest.fixture(scope="module")
def trace_run(folder: Path) -> tuple[dict[str, FileReport], list[dict]]:
    reports = lint(folder, ["fake_quant.py", "clean_cnn.py", "dict_input.py", "dict_output.py",
                            "tied_scores.py"], Target.TRACE)
    rows = run_dynamic(reports, DynamicOptions(target=Target.TRACE), progress=False)
    return {Path(r.path).name: r for r in reports}, rows


@pytest.fixture(scope="module")
def plain_run(folder: Path) -> tuple[dict[str, FileReport], list[dict]]:
    """Target export without dynamic dims (a dict input has no tensor to declare one on)."""
    reports = lint(folder, ["dict_input.py"], Target.EXPORT)
    rows = run_dynamic(reports, DynamicOptions(target=Target.EXPORT), progress=False)
    return {Path(r.path).name: r for r in reports}, rows


def at(report: FileReport, line: int, code: str | None = None) -> list[Diagnostic]:
    found = [d for d in report.diagnostics if d.line == line and (code is None or d.code == code)]
    assert found, f"no finding at {report.path}:{line}: {[(d.line, d.code) for d in report.diagnostics]}"
    return found


def rows_of(rows: list[dict], name: str) -> dict[str, dict]:
    return {r["exporter"]: r for r in rows if r["path"].endswith(name)}


def test_data_dependent_branch_is_confirmed_by_torch_export(export_run) -> None:
    reports, rows, _ = export_run
    report = reports["item_branch.py"]
    (branch,) = at(report, line_of("item_branch.py", "if s > 0"), "EXL020")
    assert branch.dynamic["status"] == "confirmed"
    assert branch.dynamic["exporter"] == "torch.export"
    assert "Could not guard on data-dependent expression" in branch.dynamic["message"]
    (item,) = at(report, line_of("item_branch.py", ".item()"), "EXL001")
    assert item.dynamic["status"] == "confirmed"  # the value behind the failing `if`
    assert not [d for d in report.diagnostics if d.code in ("EXL090", "EXL091")]
    by = rows_of(rows, "item_branch.py")
    assert by["torch.export"]["status"] == "failed"
    assert by["torch.export"]["exception"] == "GuardOnDataDependentSymNode"
    assert by["onnx-dynamo"]["status"] == "failed"
    assert by["torch.export-strict"]["status"] == "failed"
    assert by["torch.export-strict"]["exception"] == "UserError"


def test_strict_failure_alone_is_located_through_dynamo_frames(export_run) -> None:
    reports, _, _ = export_run
    (new,) = [d for d in reports["no_findings.py"].diagnostics]
    assert "torch.export-strict failed: UserError" in new.message  # same line, merged


def test_clean_cnn_passes_with_synthesized_input_and_quiet_user_output(export_run, capfd) -> None:
    reports, rows, _ = export_run
    assert reports["clean_cnn.py"].diagnostics == []
    by = rows_of(rows, "clean_cnn.py")
    assert {r["status"] for r in by.values()} == {"ok"}
    assert all(r["max_abs_diff"] is not None and r["max_abs_diff"] < 1e-4 for r in by.values())
    assert by["torch.export"]["model"] == "CNN() in " + reports["clean_cnn.py"].path
    assert "user output" not in capfd.readouterr().out


def test_item_into_tensor_math_passes_torch_export(export_run) -> None:
    reports, rows, _ = export_run
    (item,) = at(reports["fake_quant.py"], line_of("fake_quant.py", ".item()"), "EXL001")
    # the static pass already says info (the number only feeds tensor ops); the real export agrees
    assert item.dynamic["status"] == "passes"
    assert "lowered" not in item.dynamic["message"] and item.severity is Severity.INFO
    assert {r["status"] for r in rows_of(rows, "fake_quant.py").values()} == {"ok"}


def test_item_into_tensor_math_diverges_under_trace(trace_run) -> None:
    reports, rows = trace_run
    (item,) = at(reports["fake_quant.py"], line_of("fake_quant.py", ".item()"), "EXL001")
    assert item.dynamic["status"] == "diverges"
    assert item.dynamic["exporter"] == "jit.trace"
    assert item.dynamic["max_abs_diff"] > 1e-3
    assert "TracerWarning" in item.dynamic["message"]
    by = rows_of(rows, "fake_quant.py")
    assert by["jit.trace"]["status"] == by["onnx-legacy"]["status"] == "diverges"
    assert {r["status"] for r in rows_of(rows, "clean_cnn.py").values()} == {"ok"}


def test_detection_postprocess_fails_at_the_empty_check(export_run) -> None:
    reports, rows, _ = export_run
    report = reports["detect.py"]
    (empty,) = at(report, line_of("detect.py", "boxes.numel() == 0"))
    assert empty.dynamic["status"] == "confirmed"
    masks = at(report, line_of("detect.py", "boxes[keep], scores[keep]"), "EXL032")
    assert {d.dynamic["status"] for d in masks} == {"confirmed"}  # the data-dependent size behind it
    (loop,) = at(report, line_of("detect.py", "while order.numel()"))
    assert loop.dynamic["status"] == "not-verifiable"
    assert loop.dynamic["message"].startswith("after the first failure: torch.export")
    assert rows_of(rows, "detect.py")["torch.export"]["status"] == "failed"


def test_rnn_decoder_early_exit_is_confirmed(export_run) -> None:
    reports, _, _ = export_run
    (brk,) = at(reports["rnn_decoder.py"], line_of("rnn_decoder.py", "if finished.all()"))
    assert brk.dynamic["status"] == "confirmed"


def test_cuda_is_not_verifiable_on_cpu(export_run) -> None:
    reports, rows, _ = export_run
    (device,) = at(reports["needs_cuda.py"], line_of("needs_cuda.py", ".cuda()"))
    assert device.dynamic["status"] == "not-verifiable"
    assert "CUDA" in device.dynamic["message"]
    assert device.severity is Severity.WARNING  # not lowered
    assert rows_of(rows, "needs_cuda.py")["setup"]["phase"] == "cuda"


def test_branch_the_example_does_not_take_is_not_reached(export_run) -> None:
    reports, _, _ = export_run
    (item,) = at(reports["unreached.py"], line_of("unreached.py", ".item()"), "EXL001")
    assert item.dynamic["status"] == "not-reached"
    (shape_if,) = at(reports["unreached.py"], line_of("unreached.py", "if x.shape"))
    assert shape_if.dynamic["status"] == "passes"


def test_failure_without_static_finding_becomes_exl090_at_the_user_line(export_run) -> None:
    reports, _, _ = export_run
    new = reports["no_findings.py"].diagnostics
    assert [(d.code, d.line) for d in new] == [("EXL090", line_of("no_findings.py", "if s > 0"))]
    assert new[0].dynamic["status"] == "confirmed"
    assert new[0].message.startswith("torch.export failed: GuardOnDataDependentSymNode")
    assert new[0].column == 9 and new[0].severity is Severity.ERROR


def test_summary_json_has_the_documented_fields(export_run) -> None:
    _, rows, summary = export_run
    written = json.loads(summary.read_text())
    assert written == rows
    assert set(written[0]) == {"model", "path", "exporter", "status", "phase", "exception",
                               "message", "seconds", "max_abs_diff", "settings", "wrote"}
    assert {r["exporter"] for r in written} == {"torch.export", "torch.export-strict", "onnx-dynamo",
                                                "setup"}


def test_a_guard_that_rejects_the_second_input_is_said_as_such(export_run) -> None:
    """Export succeeds (Dim.AUTO specialises the batch to 2), the program raises on batch 4."""
    reports, rows, _ = export_run
    run = rows_of(rows, "guarded.py")["torch.export"]
    assert (run["status"], run["phase"]) == ("failed", "run")
    (new,) = [d for d in reports["guarded.py"].diagnostics if d.code == "EXL090"]
    assert "exported, then the exported program raised on the second input (a guard" in new.message
    assert "could not capture" not in new.hint and "specialised to the example" in new.hint
    assert new.message.startswith("torch.export: exported, then")


def test_a_decorated_forward_is_reported_in_the_user_file(export_run) -> None:
    """onnx-dynamo fails to translate masked_select without naming a line; forward is wrapped
    by @torch.no_grad() (torch/utils/_contextlib.py): the finding is at the user's forward."""
    reports, rows, _ = export_run
    assert rows_of(rows, "decorated.py")["onnx-dynamo"]["status"] == "failed"
    assert rows_of(rows, "decorated.py")["torch.export"]["status"] == "ok"
    (new,) = [d for d in reports["decorated.py"].diagnostics if d.code == "EXL090"]
    assert new.line == line_of("decorated.py", "def forward") and "reported at forward" in new.message
    assert not any("torch" in Path(r.path).parts or "_contextlib" in r.path for r in reports.values())


def test_a_dict_input_is_passed_the_way_the_onnx_exporters_expect(trace_run, plain_run) -> None:
    for reports, rows in (trace_run, plain_run):
        assert reports["dict_input.py"].diagnostics == []
        assert {r["exporter"]: r["status"] for r in rows_of(rows, "dict_input.py").values()} in (
            {"jit.trace": "ok", "onnx-legacy": "ok"}, {"torch.export": "ok", "onnx-dynamo": "ok"})


def test_jit_trace_follows_users_for_dict_outputs_and_says_so(trace_run) -> None:
    reports, rows = trace_run
    by = rows_of(rows, "dict_output.py")
    assert by["jit.trace"]["status"] == "ok" and by["onnx-legacy"]["status"] == "ok"
    assert by["jit.trace"]["settings"].startswith("strict=False (forward returns a dict)")
    assert rows_of(rows, "fake_quant.py")["jit.trace"]["settings"].startswith("strict=True")
    assert reports["dict_output.py"].diagnostics == []


def test_tied_scores_reordered_by_onnxruntime_are_not_a_divergence(trace_run) -> None:
    reports, rows = trace_run
    legacy = rows_of(rows, "tied_scores.py")["onnx-legacy"]
    assert legacy["status"] == "ok" and legacy["max_abs_diff"] < 1e-4
    assert legacy["message"].startswith("matches eager up to the order of") and "output 1 tie" in legacy["message"]
    assert not [d for d in reports["tied_scores.py"].diagnostics if d.code == "EXL091"]


def test_rows_in_another_order_without_ties_still_diverge() -> None:
    import torch

    from exportlint.dynamic.exporters import compare

    boxes = torch.arange(12.0).reshape(4, 3)
    swap = torch.tensor([1, 0, 2, 3])
    for scores, status in ((torch.tensor([0.9, 0.9, 0.5, 0.1]), "ok"),
                           (torch.tensor([0.9, 0.8, 0.5, 0.1]), "diverges")):
        out = {"status": "ok", "message": None}
        compare(out, [boxes[swap], scores[swap]], [boxes, scores], 1e-4, 1e-3)
        assert out["status"] == status, out
    out = {"status": "ok", "message": None}
    compare(out, [boxes + 1, scores], [boxes, scores], 1e-4, 1e-3)  # not the same rows at all
    assert out["status"] == "diverges" and "another order" not in out["message"]
