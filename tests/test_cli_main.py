"""The command line end to end: exit codes, flags, formats, stdin, subcommands, bad input.

Most tests drive ``exportlint.cli.main`` in-process with the stand-in engine of ``cli_support``
(the plumbing); the ones at the bottom use the real engine on real model source.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import jsonschema
import pytest
from cli_support import MODEL, _private_cache, fake_engine  # noqa: F401

from exportlint import __version__, runner
from exportlint.cli import main
from exportlint.diagnostics import Diagnostic, FileReport, Note, Severity, Target
from exportlint.reporters import RenderContext
from exportlint.reporters.text import caret_span, render

SCHEMA = json.loads(
    (Path(__file__).parent.parent / "exportlint" / "schema" / "diagnostics.schema.json").read_text()
)
ANSI = "\x1b["


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A directory with one bad model (EXL001 at 6:13, EXL002 at 7:13) and one clean file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    (tmp_path / "model.py").write_text(MODEL.replace("        return x[:n]\n",
                                                     "        m = x.tolist()\n        return x[:n]\n"))
    (tmp_path / "clean.py").write_text("x = 1\n")
    return tmp_path


def lint(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- exit codes ------------------------------------------------------------------------------

def test_findings_exit_1_and_clean_exit_0(project, fake_engine, capsys):
    assert lint(capsys, "model.py")[0] == 1  # EXL002 is an error
    assert lint(capsys, "clean.py")[0] == 0
    assert lint(capsys, "model.py", "--exit-zero")[0] == 0


def test_fail_on_and_target(project, fake_engine, capsys):
    assert lint(capsys, "model.py", "--select", "EXL001")[0] == 0  # a warning under export
    assert lint(capsys, "model.py", "--select", "EXL001", "--fail-on", "warning")[0] == 1
    assert lint(capsys, "model.py", "--select", "EXL001", "--target", "trace")[0] == 1
    code, out, _ = lint(capsys, "model.py", "--select", "EXL001", "--target", "trace")
    assert "EXL001 [error]" in out


@pytest.mark.parametrize("argv, words", [
    (["--format", "xml"], ["invalid choice: 'xml'"]),
    (["--jobs", "0"], ["--jobs", "positive integer"]),
    (["--target", "onnx"], ["--target", "invalid choice"]),
    (["--select", "EXL999"], ["--select", "EXL999"]),
    (["--bogus"], ["unrecognized arguments: --bogus"]),
])
def test_usage_errors_exit_2(project, fake_engine, capsys, argv, words):
    code, out, err = lint(capsys, *argv)
    assert code == 2 and out == ""
    for word in words:
        assert word in err
    assert "Traceback" not in err


def test_missing_path_exits_2_but_lints_the_rest(project, fake_engine, capsys):
    code, out, err = lint(capsys, "model.py", "nope.py")
    assert code == 2
    assert "path does not exist: nope.py" in err
    assert "model.py:6:13: EXL001" in out


def test_bad_config_exits_2_naming_the_key(project, fake_engine, capsys):
    (project / "pyproject.toml").write_text('[tool.exportlint]\nfail-on = "sometimes"\n')
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == ""
    assert "pyproject.toml" in err and "fail-on" in err and "'sometimes'" in err


def test_explicit_config(project, fake_engine, capsys):
    (project / "lint.toml").write_text('ignore = ["EXL0"]\n')
    assert lint(capsys, "model.py", "--config", "lint.toml")[0] == 0
    code, _, err = lint(capsys, "model.py", "--config", "missing.toml")
    assert code == 2 and "missing.toml" in err


def test_config_from_pyproject_and_cli_override(project, fake_engine, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.exportlint]\nignore = ["tensor-to-host"]\n[tool.exportlint.severity]\nEXL001 = "error"\n')
    code, out, _ = lint(capsys, ".")
    assert code == 1 and "EXL002" not in out and "EXL001 [error]" in out
    code, out, _ = lint(capsys, ".", "--select", "EXL002", "--ignore", "EXL001")
    assert "EXL001" not in out and "EXL002" not in out  # --ignore adds to the configured ignore


def test_internal_error_is_one_line_and_debug_shows_the_traceback(project, monkeypatch, capsys):
    def boom(*args, **kwargs):
        raise RuntimeError("kaput")

    monkeypatch.setattr(runner, "run", boom)
    code, out, err = lint(capsys, ".")
    assert code == 2 and "internal error: RuntimeError: kaput" in err and "Traceback" not in err
    monkeypatch.setenv("EXPORTLINT_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(["."])


def test_version(capsys):
    code, out, _ = lint(capsys, "--version")
    assert code == 0 and out.strip() == f"exportlint {__version__}"


# --- text output -----------------------------------------------------------------------------

def test_text_output(project, fake_engine, capsys):
    code, out, err = lint(capsys, ".")
    lines = out.splitlines()
    i = lines.index("model.py:6:13: EXL001 [warning] `x.sum().item()` on a tensor value")
    assert lines[i + 1 : i + 6] == [
        "  |",
        "6 |         n = x.sum().item()",
        "  |             ^^^^^^^^^^^^^^",
        "  = note: line 6: `x.sum().item()` is a tensor value",
        "  = help: keep it a tensor",
    ]
    assert "model.py:7:13: EXL002 [error]" in out
    assert lines[-1] == "Found 2 problems (1 error, 1 warning) in 1 of 2 files."
    assert ANSI not in out and err == ""


def test_clean_summary_and_quiet(project, fake_engine, capsys):
    assert lint(capsys, "clean.py")[1] == "No problems found in 1 file.\n"
    assert lint(capsys, "clean.py", "-q")[1] == ""
    code, out, _ = lint(capsys, ".", "--quiet")
    assert code == 1 and out == "Found 2 problems (1 error, 1 warning) in 1 of 2 files.\n"


def test_statistics(project, fake_engine, capsys):
    out = lint(capsys, ".", "--statistics")[1]
    table = out[out.index("count"):].splitlines()
    assert table[0].split() == ["count", "code", "name", "severity"]
    assert table[1].split() == ["1", "EXL001", "tensor-item", "warning"]
    assert table[2].split() == ["1", "EXL002", "tensor-to-host", "error"]


def test_color_only_when_asked(project, fake_engine, capsys, monkeypatch):
    assert ANSI not in lint(capsys, ".")[1]  # not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert ANSI in lint(capsys, ".")[1]
    assert ANSI not in lint(capsys, ".", "--no-color")[1]


def diag(line, column, end_column, lines_text):
    return FileReport(
        path="u.py",
        diagnostics=[Diagnostic(
            path="u.py", line=line, column=column, end_line=line, end_column=end_column,
            code="EXL001", name="tensor-item", severity=Severity.WARNING, target=Target.EXPORT,
            message="[bold]not markup[/bold]", hint="", provenance=[Note(1, 1, "x", path="o.py")],
            dynamic={"status": "confirmed", "exporter": "torch.export", "message": "it fails",
                     "max_abs_diff": None},
        )],
        lines=lines_text,
    )


def test_caret_line_with_tabs_and_wide_characters():
    line = "\t数据 = x.item()  # 😀"
    start = line.index("x.item()") + 1
    drawn, before, width = caret_span(line, start, start + len("x.item()"))
    assert drawn.startswith("    数据 = ")
    assert before == 4 + 4 + 3  # tab, two wide characters, " = "
    assert width == len("x.item()")
    out = render([diag(1, start, start + 8, [line])], RenderContext())
    source, carets = out.splitlines()[2:4]
    assert source == "1 |     数据 = x.item()  # 😀"
    # Carets are placed by terminal cells: the two wide characters take two cells each.
    assert carets == "  | " + " " * 11 + "^" * 8


def test_caret_for_empty_span_and_multiline_span():
    assert caret_span("abc", 2, 2)[1:] == (1, 1)
    assert caret_span("abcdef", 3, None)[1:] == (2, 4)


def test_source_text_is_not_markup_and_notes_and_dynamic_verdict_are_shown():
    out = render([diag(1, 1, 2, ["[red]x[/red]"])], RenderContext())
    assert "[bold]not markup[/bold]" in out and "1 | [red]x[/red]" in out
    assert "= note: o.py:1: x" in out
    assert "= dynamic: ✔ confirmed by torch.export: it fails" in out


# --- JSON ------------------------------------------------------------------------------------

def test_json_output_validates_against_the_schema(project, fake_engine, capsys):
    code, out, _ = lint(capsys, ".", "--format", "json")
    data = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert code == 1
    assert [(d["path"], d["line"], d["column"], d["end_column"], d["code"]) for d in data] == [
        ("model.py", 6, 13, 27, "EXL001"), ("model.py", 7, 13, 23, "EXL002")]
    first = data[0]
    assert first["severity"] == "warning" and first["target"] == "export"
    assert first["name"] == "tensor-item" and first["fix"] is None
    assert first["provenance"] == [{"line": 6, "column": 13,
                                    "message": "`x.sum().item()` is a tensor value"}]
    assert first["url"].endswith("EXL001-tensor-item.md")


def test_schema_rejects_wrong_objects():
    good = Diagnostic("a.py", 1, 1, 1, 2, "EXL001", "tensor-item", Severity.ERROR, Target.TRACE,
                      "m", "h").to_dict()
    jsonschema.validate([good], SCHEMA, cls=jsonschema.Draft202012Validator)
    for broken in ({**good, "line": 0}, {**good, "severity": "fatal"},
                   {k: v for k, v in good.items() if k != "hint"}, {**good, "extra": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([broken], SCHEMA, cls=jsonschema.Draft202012Validator)


def test_json_clean_is_an_empty_array(project, fake_engine, capsys):
    assert lint(capsys, "clean.py", "--format", "json")[1:] == ("[]\n", "")


def test_show_suppressed_in_json(project, fake_engine, capsys):
    (project / "model.py").write_text(MODEL.replace(".item()", ".item()  # noqa: EXL001"))
    assert json.loads(lint(capsys, "model.py", "--format", "json")[1]) == []
    code, out, _ = lint(capsys, "model.py", "--format", "json", "--show-suppressed")
    (d,) = json.loads(out)
    assert d["suppressed"] is True and code == 0
    jsonschema.validate([d], SCHEMA, cls=jsonschema.Draft202012Validator)


def test_report_unused_suppressions(project, fake_engine, capsys):
    (project / "clean.py").write_text("x = 1  # noqa: EXL003\n")
    code, out, err = lint(capsys, "clean.py", "--report-unused-suppressions")
    assert code == 0 and err == "clean.py:1: unused suppression for EXL003\n"


def test_output_file(project, fake_engine, capsys):
    code, out, _ = lint(capsys, ".", "--format", "json", "--output-file", "out.json")
    assert code == 1 and out == ""
    assert len(json.loads((project / "out.json").read_text())) == 2
    code, _, err = lint(capsys, ".", "--output-file", str(project / "no" / "such" / "dir.txt"))
    assert code == 2 and "cannot write output file" in err


# --- stdin -----------------------------------------------------------------------------------

def feed(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(data)))


def test_stdin_with_filename(project, fake_engine, capsys, monkeypatch):
    (project / "pyproject.toml").write_text(
        '[tool.exportlint.per-file-ignores]\n"tests/**" = ["EXL002"]\n')
    feed(monkeypatch, MODEL.encode())
    code, out, _ = lint(capsys, "-", "--stdin-filename", "pkg/m.py")
    assert code == 0 and "pkg/m.py:6:13: EXL001" in out
    feed(monkeypatch, b"y = t.tolist()\n")
    assert lint(capsys, "--stdin-filename", "tests/t.py")[0] == 0  # per-file-ignores apply
    feed(monkeypatch, b"y = t.tolist()\n")
    code, out, _ = lint(capsys, "-", "--format", "json")
    assert code == 1 and json.loads(out)[0]["path"] == "-"
    assert fake_engine.calls == ["pkg/m.py", "tests/t.py", "-"]  # nothing else was linted


def test_stdin_binary(project, fake_engine, capsys, monkeypatch):
    feed(monkeypatch, b"\x00\x00")
    code, out, _ = lint(capsys, "-", "--stdin-filename", "x.py")
    assert code == 1 and "x.py:1:1: EXL900 [error] binary file" in out


# --- bad input through the CLI ---------------------------------------------------------------

def test_bad_files_are_reported_and_the_run_goes_on(project, fake_engine, capsys):
    (project / "latin.py").write_bytes(b"s = '\xe9'\n")
    (project / "empty.py").write_text("")
    os.symlink("nowhere.py", project / "dangling.py")
    code, out, err = lint(capsys, ".")
    assert code == 1 and err == ""
    assert "latin.py:1:1: EXL900 [error] cannot decode as utf-8: byte 0xe9 at line 1" in out
    assert "dangling.py:1:1: EXL900 [error] cannot read file: broken symbolic link" in out
    assert "model.py:6:13: EXL001" in out
    assert out.splitlines()[-1] == "Found 4 problems (3 errors, 1 warning) in 3 of 5 files."


# --- subcommands -----------------------------------------------------------------------------

def test_rules_lists_the_catalogue(capsys):
    code, out, _ = lint(capsys, "rules")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("EXL022"))
    assert row.split()[:4] == ["EXL022", "shape-dependent-branch", "warning", "error"]
    code, out, _ = lint(capsys, "rules", "--format", "json")
    assert {r["code"] for r in json.loads(out)} >= {"EXL001", "EXL900"}


@pytest.mark.parametrize("name", ["EXL001", "tensor-item", "exl001"])
def test_rule_renders_the_doc(capsys, name):
    code, out, _ = lint(capsys, "rule", name)
    assert code == 0 and "EXL001 tensor-item" in out and "What it does" in out


def test_unknown_rule_lists_the_rules(capsys):
    code, out, err = lint(capsys, "rule", "EXL999")
    assert code == 2 and "unknown rule 'EXL999'" in err and "EXL040  size-tensor-concat" in err


def test_a_directory_named_like_a_subcommand(project, fake_engine, capsys):
    (project / "rules").mkdir()
    (project / "rules" / "m.py").write_text(MODEL)
    for argv in (["--", "rules"], ["./rules"]):
        code, out, _ = lint(capsys, *argv)
        assert code == 0 and "m.py:6:13: EXL001" in out


def test_lsp_is_dispatched_lazily(monkeypatch):
    seen = []
    fake = types.ModuleType("exportlint.lsp.server")
    fake.main = lambda argv: seen.append(argv) or 7
    monkeypatch.setitem(sys.modules, "exportlint.lsp.server", fake)
    assert main(["lsp", "--log-level", "debug"]) == 7 and main(["server"]) == 7
    assert seen == [["--log-level", "debug"], []]


def test_dynamic_without_the_dynamic_package_is_a_clear_error(project, fake_engine, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "exportlint.dynamic", None)
    code, _, err = lint(capsys, "model.py", "--dynamic", "--model", "model:M")
    assert code == 2 and "dynamic pass is not available" in err and "Traceback" not in err


# --- the real engine -------------------------------------------------------------------------

def run_module(*argv, cwd, stdin=None):
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "exportlint", *argv], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120, env=env)


def test_python_dash_m_on_a_real_model(project):
    proc = run_module("--format", "json", "--no-cache", "--fail-on", "warning", "model.py", cwd=project)
    found = [(d["code"], d["line"], d["column"]) for d in json.loads(proc.stdout)]
    assert ("EXL001", 6, 13) in found and ("EXL002", 7, 13) in found
    assert proc.returncode == 1 and proc.stderr == ""


def test_syntax_error_is_exl900_with_position_and_other_files_are_linted(project):
    (project / "broken.py").write_text("import torch\n\ndef f(:\n    pass\n")
    proc = run_module("--format", "json", "--no-cache", ".", cwd=project)
    data = json.loads(proc.stdout)
    (broken,) = [d for d in data if d["path"] == "broken.py"]
    assert broken["code"] == "EXL900" and broken["line"] == 3
    assert any(d["path"] == "model.py" and d["code"] == "EXL001" for d in data)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_tabs_crlf_and_unicode_identifiers(project):
    source = (
        "import torch\r\n\r\n\r\nclass Modèle(torch.nn.Module):\r\n"
        "\tdef forward(self, entrée):\r\n"
        "\t\tdonnées = entrée.sum().item()\r\n"
        "\t\treturn entrée * données\r\n"
    )
    (project / "uni.py").write_bytes(source.encode("utf-8"))
    proc = run_module("--no-cache", "--select", "EXL001", "uni.py", cwd=project)
    assert "uni.py:6:13: EXL001 [info]" in proc.stdout
    lines = proc.stdout.splitlines()
    i = lines.index(next(x for x in lines if x.startswith("uni.py:6:13")))
    assert lines[i + 2] == "6 |         données = entrée.sum().item()"
    assert lines[i + 3] == "  |                   " + "^" * len("entrée.sum().item()")


def test_stdin_through_the_real_engine(project):
    proc = run_module("-", "--stdin-filename", "buffer.py", "--format", "json", cwd=project,
                      stdin=MODEL)
    found = [(d["path"], d["code"], d["line"]) for d in json.loads(proc.stdout)]
    assert ("buffer.py", "EXL001", 6) in found and {path for path, _, _ in found} == {"buffer.py"}


def fake_dynamic(monkeypatch, error=None):
    """A stand-in exportlint.dynamic that confirms every finding and adds an EXL090 elsewhere."""
    module = types.ModuleType("exportlint.dynamic")
    seen = {}

    class DynamicOptionsError(ValueError):
        pass

    class DynamicOptions:
        def __init__(self, **kwargs):
            seen["options"] = kwargs

    def run_dynamic(reports, options, progress=None, context=None):
        if error:
            raise DynamicOptionsError(error)
        for r in reports:
            for d in r.diagnostics:
                d.dynamic = {"status": "confirmed", "exporter": "torch.export", "message": "boom",
                             "max_abs_diff": None}
        clean = next(r for r in reports if r.path == "clean.py")
        clean.diagnostics.append(Diagnostic(
            "clean.py", 1, 1, 1, 2, "EXL090", "export-failure", Severity.ERROR, seen["options"]["target"],
            "torch.export failed here", "see the exporter's message"))
        return [{"model": "m", "exporter": "torch.export", "status": "failed"}]

    module.DynamicOptions, module.DynamicOptionsError = DynamicOptions, DynamicOptionsError
    module.run_dynamic = run_dynamic
    module.render_summary = lambda rows, console: console.print(f"SUMMARY {len(rows)} row")
    monkeypatch.setitem(sys.modules, "exportlint.dynamic", module)
    return seen


def test_dynamic_pass_is_wired(project, fake_engine, capsys, monkeypatch):
    seen = fake_dynamic(monkeypatch)
    code, out, err = lint(capsys, ".", "--select", "EXL001", "--dynamic", "--model", "model.py:M",
                          "--input", "2x3", "--dynamic-dim", "0:0:batch", "--dynamic-timeout", "9",
                          "--strict-export", "--target", "trace")
    assert code == 1
    options = seen["options"]
    assert options["model"] == "model.py:M" and options["inputs"] == ["2x3"]
    assert options["dynamic_dims"] == ["0:0:batch"] and options["timeout"] == 9.0
    assert options["strict"] is True and options["target"] is Target.TRACE
    assert "= dynamic: ✔ confirmed by torch.export: boom" in out
    lines = out.splitlines()
    i = lines.index("clean.py:1:1: EXL090 [error] torch.export failed here")
    assert lines[i + 2] == "1 | x = 1"  # the added finding gets its source line
    assert lines[-1] == "SUMMARY 1 row"
    code, out, err = lint(capsys, ".", "--dynamic", "--ignore", "EXL090", "--format", "json")
    assert "EXL090" not in out and "SUMMARY" in err


def test_dynamic_bad_options_exit_2(project, fake_engine, capsys, monkeypatch):
    fake_dynamic(monkeypatch, error="model spec 'x' is not module:Class")
    code, out, err = lint(capsys, ".", "--dynamic", "--model", "x")
    assert code == 2 and "model spec 'x' is not module:Class" in err and out == ""


def test_stdin_filename_and_force_exclude(project, fake_engine, capsys, monkeypatch):
    (project / "pyproject.toml").write_text('[tool.exportlint]\nexclude = ["generated/"]\n')
    feed(monkeypatch, MODEL.encode())
    assert "generated/m.py:6:13: EXL001" in lint(capsys, "-", "--stdin-filename", "generated/m.py")[1]
    feed(monkeypatch, MODEL.encode())
    code, out, _ = lint(capsys, "-", "--stdin-filename", "generated/m.py", "--force-exclude")
    assert code == 0 and out == "No problems found in 0 files.\n"


def test_real_output_on_the_fixtures_validates_against_the_schema(tmp_path):
    fixtures = Path(__file__).parent.parent / "fixtures"
    (tmp_path / "broken.py").write_text("class M(torch.nn.Module:\n")
    proc = run_module("--format", "json", "--no-cache", str(fixtures), str(tmp_path), cwd=tmp_path)
    data = json.loads(proc.stdout)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert {"EXL001", "EXL040", "EXL900"} <= {d["code"] for d in data}
    assert data == sorted(data, key=lambda d: (d["path"], d["line"], d["column"], d["code"]))
