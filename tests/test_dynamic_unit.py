"""Dynamic pass, parent side: specs, options, job planning and verdicts (no torch, no worker)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from exportlint.diagnostics import Diagnostic, FileReport, Note, Severity, Target
from exportlint.dynamic import DynamicOptions, DynamicOptionsError
from exportlint.dynamic.options import plan_jobs
from exportlint.dynamic.specs import (
    DynamicDim, InputSpec, SpecError, parse_dynamic_dim, parse_input, parse_memory, parse_model,
)
from exportlint.dynamic.verdicts import Judge

MODEL = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        s = x.sum().item()
        y = x * 2
        if s > 0:
            return y
        n = max(s, 1e-3)
        return y / n
"""


# -- specs -------------------------------------------------------------------------------------


def test_parse_input_shapes_and_dtypes() -> None:
    assert parse_input("1x3x224x224") == InputSpec((1, 3, 224, 224), "float32")
    assert parse_input("2x16:int64") == InputSpec((2, 16), "int64")
    assert parse_input("4:long") == InputSpec((4,), "int64")
    assert parse_input("scalar:float64") == InputSpec((), "float64")


@pytest.mark.parametrize("bad", ["1xAx3", "1x3:float99", "", "x3"])
def test_parse_input_rejects_malformed(bad: str) -> None:
    with pytest.raises(SpecError, match="input spec"):
        parse_input(bad)


def test_parse_model_and_dims() -> None:
    spec = parse_model("fixtures/x.py:build")
    assert (spec.target, spec.attr, spec.is_file) == ("fixtures/x.py", "build", True)
    assert parse_model("pkg.models:Net").is_file is False
    assert parse_model("model.py").attr is None
    assert parse_dynamic_dim("x:0:batch") == DynamicDim("x", 0, "batch")
    assert parse_dynamic_dim("0:2") == DynamicDim("0", 2, "0_2")
    with pytest.raises(SpecError):
        parse_model("not a module:build")
    with pytest.raises(SpecError):
        parse_dynamic_dim("x:batch")


def test_parse_memory() -> None:
    assert parse_memory("8G") == 8 * 2**30
    assert parse_memory("512M") == 512 * 2**20
    assert parse_memory(2048) == 2048 * 2**20
    with pytest.raises(SpecError):
        parse_memory("lots")


# -- options -----------------------------------------------------------------------------------


def test_cli_wins_over_config(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(MODEL)
    opts = DynamicOptions(inputs=["2x4"], config={
        "model": "m.py:Net", "inputs": ["9x9"], "dynamic-dims": ["x:0:batch"], "timeout": 12,
        "strict": True}, base=str(tmp_path)).resolved()
    assert [i.shape for i in opts.inputs] == [(2, 4)]
    assert opts.inputs_source == "--input"
    assert opts.model_file == (tmp_path / "m.py").resolve()
    assert opts.dims == [DynamicDim("x", 0, "batch")]
    assert opts.timeout == 12
    assert opts.exporters == ("torch.export", "torch.export-strict", "onnx-dynamo")


def test_exporters_follow_the_target() -> None:
    assert DynamicOptions(target=Target.TRACE).resolved().exporters == ("jit.trace", "onnx-legacy")
    assert DynamicOptions().resolved().exporters == ("torch.export", "onnx-dynamo")
    assert DynamicOptions(config={"exporters": ["onnx-dynamo"]}).resolved().exporters == ("onnx-dynamo",)


@pytest.mark.parametrize("config, message", [
    ({"modle": "x.py"}, "unknown key"),
    ({"inputs": ["1xA"]}, "input spec"),
    ({"model": "missing.py:build"}, "not found"),
    ({"exporters": ["jit.trace"]}, "not run for target export"),
    ({"timeout": -1}, "timeout must be a number > 0"),
    ({"timeout": "nan"}, "timeout must be a number > 0, got 'nan'"),
    ({"timeout": float("inf")}, "timeout must be"),
    ({"timeout": 0}, "timeout must be"),
    ({"atol": -1}, "atol must be a number >= 0, got -1"),
    ({"rtol": float("nan")}, "rtol must be"),
    ({"atol": "tight"}, "atol must be"),
    ({"strict": "no"}, "strict must be true or false"),
    ({"seed": 1.5}, "seed must be a whole number"),
    ({"memory": "0"}, "too small"),
    ({"inputs": "1x3", "dynamic-dims": [3]}, "list of strings"),
])
def test_bad_options_are_usage_errors(tmp_path: Path, config: dict, message: str) -> None:
    with pytest.raises(DynamicOptionsError, match=message):
        DynamicOptions(config=config, base=str(tmp_path)).resolved()


def test_jobs_are_the_files_that_define_a_model(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "factory.py").write_text("def build():\n    return None\n")
    (tmp_path / "utils.py").write_text("def helper(x):\n    return x\n")
    reports = [FileReport(str(tmp_path / n)) for n in ("model.py", "factory.py", "utils.py")]
    jobs = plan_jobs(reports, DynamicOptions().resolved())
    assert [Path(j.where).name for j in jobs] == ["model.py", "factory.py"]
    only = plan_jobs(reports, DynamicOptions(model=str(tmp_path / "utils.py")).resolved())
    assert [j.file.name for j in only] == ["utils.py"]


# -- verdicts ----------------------------------------------------------------------------------


def diag(path: Path, line: int, code: str, severity: Severity = Severity.ERROR,
         provenance: tuple[int, ...] = ()) -> Diagnostic:
    return Diagnostic(str(path), line, 5, line, 30, code, "name", severity, Target.EXPORT, "msg",
                      "hint", [Note(ln, 1, "from here") for ln in provenance])


def outcome(exporter: str, status: str, points: list | None = None, implicated: list | None = None,
            warnings: list | None = None, message: str = "boom", diff: float | None = None) -> dict:
    return {"exporter": exporter, "status": status, "phase": "export", "exception": "Err",
            "message": message, "detail": None, "seconds": 0.5, "max_abs_diff": diff,
            "points": points or [], "implicated": implicated or [], "warnings": warnings or []}


def result(path: Path, outcomes: list[dict], lines: list[int], error: dict | None = None) -> dict:
    return {"error": error, "model": "Net() in m.py", "forward": [str(path), 6],
            "inputs": {"resized": False}, "executed": {str(path): [[ln, i] for i, ln in enumerate(lines)]},
            "exporters": outcomes}


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.py"
    path.write_text(MODEL)
    return path


def judge(path: Path, diags: list[Diagnostic], res: dict) -> tuple[FileReport, list[dict]]:
    report = FileReport(str(path), diags)
    j = Judge([report], Target.EXPORT)
    j.add_run("m.py", path, res)
    return report, j.finish()


def test_failure_confirms_the_finding_and_its_provenance_source(model_file: Path) -> None:
    item = diag(model_file, 7, "EXL001", Severity.WARNING)
    branch = diag(model_file, 9, "EXL020", provenance=(6, 7))
    other = diag(model_file, 8, "EXL051", Severity.WARNING)
    res = result(model_file, [outcome("torch.export", "failed", [[str(model_file), 9, "traceback"]])],
                 [6, 7, 8, 9, 10])
    report, rows = judge(model_file, [item, branch, other], res)
    assert branch.dynamic["status"] == "confirmed" and branch.dynamic["exporter"] == "torch.export"
    assert "Err: boom" in branch.dynamic["message"]
    assert item.dynamic["status"] == "confirmed"  # on the chain: `s` comes from line 7
    assert other.dynamic["status"] == "passes"  # line 8 ran before the failure another finding explains
    assert other.severity is Severity.INFO and "lowered from warning to info" in other.dynamic["message"]
    assert sorted(d.code for d in report.diagnostics) == ["EXL001", "EXL020", "EXL051"]  # nothing new
    assert rows == [{"model": "Net() in m.py", "path": "m.py", "exporter": "torch.export",
                     "status": "failed", "phase": "export", "exception": "Err", "message": "boom",
                     "seconds": 0.5, "max_abs_diff": None, "settings": None, "wrote": []}]


def test_a_line_that_runs_again_after_the_first_failure_never_passes(model_file: Path) -> None:
    """A helper called before the failing line (where export got through) and again after it
    (where it was never captured): not "passes" — the exporter stopped at the first failure."""
    item = diag(model_file, 7, "EXL001", Severity.WARNING)
    branch = diag(model_file, 9, "EXL020", provenance=(6, 7))
    helper = diag(model_file, 8, "EXL020")
    res = result(model_file, [outcome("torch.export", "failed", [[str(model_file), 9, "traceback"]])],
                 [6, 7, 8, 9, 10])
    res["executed"][str(model_file)][2].append(6)  # line 8: first run 2nd, last run 6th, after line 9
    judge(model_file, [item, branch, helper], res)
    assert branch.dynamic["status"] == "confirmed"
    assert helper.dynamic["status"] == "not-verifiable" and helper.severity is Severity.ERROR
    assert helper.dynamic["message"].startswith("after the first failure: torch.export failed at line 9")


def test_failure_where_the_value_is_consumed_ties_the_assigning_finding(model_file: Path) -> None:
    item = diag(model_file, 7, "EXL001", Severity.WARNING)
    res = result(model_file, [outcome("torch.export", "failed", [[str(model_file), 11, "traceback"]])],
                 [6, 7, 8, 9, 11])
    report, _ = judge(model_file, [item], res)
    assert item.dynamic["status"] == "confirmed"  # line 11 uses `s`, assigned at line 7
    assert all(d.code != "EXL090" for d in report.diagnostics)


def test_unexplained_failure_becomes_exl090_and_later_lines_were_not_reached(model_file: Path) -> None:
    late = diag(model_file, 11, "EXL003")
    res = result(model_file, [outcome("onnx-dynamo", "failed", [[str(model_file), 8, "traceback"]])],
                 [6, 7, 8, 9, 11])
    report, _ = judge(model_file, [late], res)
    new = [d for d in report.diagnostics if d.code == "EXL090"]
    assert len(new) == 1 and new[0].line == 8 and new[0].column == 9
    assert new[0].dynamic["status"] == "confirmed" and "onnx-dynamo failed: Err: boom" in new[0].message
    assert late.dynamic["status"] == "not-verifiable"
    assert late.dynamic["message"].startswith("after the first failure: onnx-dynamo failed at line 8")
    assert late.severity is Severity.ERROR


def test_divergence_at_a_tracer_warning_and_unlocated_divergence(model_file: Path) -> None:
    item = diag(model_file, 7, "EXL001")
    warn = [{"path": str(model_file), "line": 7, "message": "Converting a tensor to a Python number"}]
    res = result(model_file, [
        outcome("jit.trace", "diverges", implicated=[[str(model_file), 7, "TracerWarning: x"]],
                warnings=warn, message="output 0 differs", diff=0.5),
        outcome("onnx-legacy", "diverges", message="output 0 differs", diff=0.7),
    ], [6, 7, 8, 9])
    report, _ = judge(model_file, [item], res)
    assert item.dynamic == {"status": "diverges", "exporter": "jit.trace",
                            "message": "output 0 differs — TracerWarning: x", "max_abs_diff": 0.5}
    new = [d for d in report.diagnostics if d.code == "EXL091"]
    assert [(d.line, d.dynamic["exporter"]) for d in new] == [(6, "onnx-legacy")]  # at forward


def test_not_reached_and_not_verifiable(model_file: Path) -> None:
    unreached = diag(model_file, 11, "EXL003")
    ran = diag(model_file, 7, "EXL001")
    warn = [{"path": str(model_file), "line": 7, "message": "Converting a tensor to a Python number"}]
    res = result(model_file, [outcome("jit.trace", "ok", warnings=warn, diff=0.0)], [6, 7, 8, 9, 10])
    judge(model_file, [unreached, ran], res)
    assert unreached.dynamic["status"] == "not-reached"
    assert ran.dynamic["status"] == "not-verifiable"  # baked, though the second input agreed
    assert "TracerWarning" in ran.dynamic["message"] and ran.severity is Severity.ERROR


def test_setup_error_gives_one_diagnostic_and_marks_findings(model_file: Path) -> None:
    item = diag(model_file, 7, "EXL001")
    error = {"kind": "import", "message": "importing m.py failed: ImportError: nope",
             "exception": "ImportError", "points": [[str(model_file), 1, "traceback"]]}
    res = result(model_file, [], [], error)
    res["forward"] = None
    report, rows = judge(model_file, [item], res)
    assert item.dynamic["status"] == "not-verifiable"
    assert "could not check this: importing m.py failed" in item.dynamic["message"]
    setup = [d for d in report.diagnostics if d is not item]
    assert len(setup) == 1 and setup[0].line == 1 and "ImportError: nope" in setup[0].message
    assert rows[-1]["exporter"] == "setup" and rows[-1]["status"] == "error"


def test_cuda_finding_is_not_verifiable_without_extra_diagnostic(model_file: Path) -> None:
    device = diag(model_file, 8, "EXL051", Severity.WARNING)
    error = {"kind": "cuda", "message": "the model needs CUDA", "exception": "AssertionError",
             "points": [[str(model_file), 8, "traceback"]]}
    report, _ = judge(model_file, [device], result(model_file, [], [6, 7, 8], error))
    assert device.dynamic["status"] == "not-verifiable"
    assert device.dynamic["message"].startswith("cannot be checked on this machine")
    assert report.diagnostics == [device]


def test_files_no_model_ran_are_not_reached(tmp_path: Path, model_file: Path) -> None:
    helper = tmp_path / "helper.py"
    helper.write_text("def f(t):\n    return t.item()\n")
    d = diag(helper, 2, "EXL001")
    report = FileReport(str(helper), [d])
    j = Judge([report], Target.EXPORT)
    j.add_run("m.py", model_file, result(model_file, [outcome("torch.export", "ok")], [6, 7]))
    j.finish()
    assert d.dynamic["status"] == "not-reached"


def test_the_parent_never_imports_torch() -> None:
    import subprocess

    code = ("import sys, exportlint.dynamic, exportlint.dynamic.options, exportlint.dynamic.verdicts; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_library_file_without_its_own_model_takes_the_verdicts_of_the_model_using_it(
        tmp_path: Path, model_file: Path) -> None:
    lib = tmp_path / "layers.py"
    lib.write_text("class Block:\n    def f(self, t):\n        return t.item()\n")
    d = diag(lib, 3, "EXL001", Severity.WARNING)
    report = FileReport(str(lib), [d])
    j = Judge([report], Target.EXPORT)
    unresolved = {"kind": "resolve", "message": "the class Block(width) in layers.py needs arguments",
                  "exception": "TypeError", "points": []}
    lib_run = result(lib, [], [], unresolved)
    lib_run["forward"] = None
    j.add_run("layers.py", lib, lib_run)
    model_run = result(model_file, [outcome("torch.export", "ok")], [6, 7])
    model_run["executed"][str(lib)] = [[3, 2]]
    j.add_run("m.py", model_file, model_run)
    j.finish()
    assert d.dynamic["status"] == "passes"  # the real run wins over "could not check"
    assert report.diagnostics == [d]  # no "needs arguments" diagnostic: a model runs this file


def test_unlocated_divergence_is_blamed_on_an_export_mode_branch(model_file: Path) -> None:
    branch = diag(model_file, 9, "EXL060", Severity.WARNING)
    res = result(model_file, [outcome("torch.export", "diverges", message="output 0 differs", diff=2.0)],
                 [6, 7, 8, 9, 11])
    report, _ = judge(model_file, [branch], res)
    assert branch.dynamic["status"] == "diverges" and branch.dynamic["max_abs_diff"] == 2.0
    assert "export-mode branch" in branch.dynamic["message"]
    assert report.diagnostics == [branch]  # no EXL091 at forward


def test_unwritable_summary_json_is_a_usage_error_before_running(tmp_path: Path) -> None:
    from exportlint.dynamic import run_dynamic

    options = DynamicOptions(summary_json=str(tmp_path / "no" / "such" / "dir.json"))
    with pytest.raises(DynamicOptionsError, match="folder does not exist"):
        run_dynamic([], options, progress=False)


@pytest.mark.parametrize("flag, value", [("--dynamic-timeout", "nan"), ("--dynamic-timeout", "-3"),
                                         ("--dynamic-memory", "1K")])
def test_bad_numbers_on_the_command_line_are_one_line_usage_errors(tmp_path: Path, flag: str,
                                                                    value: str) -> None:
    import subprocess

    (tmp_path / "m.py").write_text(MODEL)
    proc = subprocess.run([sys.executable, "-m", "exportlint", "--dynamic", flag, value, "m.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("exportlint: error: ")
    assert repr(value) in proc.stderr or value in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("message, line", [
    ("Tracing failed sanity checks!\nERROR: Graphs differed across invocations!\n\tGraph diff:",
     "ERROR: Graphs differed across invocations!"),
    ("\x1b[1mFailed to export the model with torch.export. \x1b[96mThis is step 1/3\x1b[0m of exporting "
     "the model to ONNX. Next steps:\n- Modify the model code", "Modify the model code"),
    ("Constraints violated (batch)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
     "  - Not all values of batch = L['x'].size()[0] are valid because batch was inferred to be "
     "a constant (2).", "Not all values of batch = L['x'].size()[0] are valid because batch was "
     "inferred to be a constant (2)."),
    ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: x for the "
     "following indices\n index: 0 Got: 4 Expected: 2\n Please fix either the inputs/shapes or the model.",
     "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: x for the "
     "following indices index: 0 Got: 4 Expected: 2"),
    ("Could not guard on data-dependent expression Eq(u0, 0)\n\nCaused by: ...", 
     "Could not guard on data-dependent expression Eq(u0, 0)"),
    ("", ""),
])
def test_the_message_keeps_the_line_that_says_what_failed(message: str, line: str) -> None:
    from exportlint.dynamic.locate import key_line

    assert key_line(RuntimeError(message)) == line


def test_the_good_verdict_reads_as_good_in_text_output() -> None:
    from exportlint.reporters.text import _dynamic_line

    line = _dynamic_line({"status": "passes", "exporter": "torch.export",
                          "message": "ran under torch.export without problems", "max_abs_diff": None})
    assert line == "○ passes: ran under torch.export without problems"
    assert "✘" not in line and "not reproduced" not in line


def test_the_worker_environment_carries_the_token_and_an_absolute_pythonpath(tmp_path: Path,
                                                                            monkeypatch) -> None:
    import os

    from exportlint.dynamic.process import TAG, _child_env

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["src", "", "/abs/lib"]))
    env = _child_env("abc123")
    assert env[TAG] == "abc123"
    entries = env["PYTHONPATH"].split(os.pathsep)
    assert entries[1:] == [str(tmp_path / "src"), str(tmp_path), "/abs/lib"]  # the worker runs elsewhere
    assert (Path(entries[0]) / "exportlint" / "dynamic" / "child.py").is_file()
