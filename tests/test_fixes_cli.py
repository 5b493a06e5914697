"""``--fix``, ``--unsafe-fixes``, ``--diff``, ``--fix-only``, ``--show-fixes``, ``--add-noqa`` and the
``fixable`` / ``unfixable`` / ``unsafe-fixes`` settings, end to end with the real analyzer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from exportlint.cli import main

SCHEMA = json.loads((Path(__file__).parent.parent / "exportlint" / "schema" / "diagnostics.schema.json").read_text())

# EXL042 (safe fix) at line 8, EXL020 (unsafe fix) at line 9, EXL001 (no fix) at line 11.
MODEL = """\
import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x):
        h, w = x.shape[-2:]
        y = F.interpolate(x, size=(int(h / 2), w))
        if y.sum() > 0:  # keep this comment
            return y * 2
        s = x.max().item()
        return y / s
"""
SAFE_FIXED = MODEL.replace("int(h / 2)", "h // 2")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EXPORTLINT_CACHE_DIR", str(tmp_path / ".cache"))
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fix_applies_safe_fixes_and_reports_what_remains(project, capsys):
    code, out, err = run(capsys, "--fix", "model.py")
    assert (project / "model.py").read_text() == SAFE_FIXED
    assert "Fixed 1 problem." in out
    assert "EXL042" not in out and "EXL020" in out  # what remains is reported
    assert code == 1  # EXL020 is an error
    assert run(capsys, "--fix", "model.py")[1].count("Fixed") == 0  # nothing more to do
    (project / "model.py").write_text(MODEL.replace("        s = x.max().item()\n        return y / s\n", "        return y\n"))
    out = run(capsys, "--fix", "model.py")[1]
    assert "1 more fix available with `--unsafe-fixes`" in out


def test_unsafe_fixes_apply_the_unsafe_ones_too(project, capsys):
    code, out, _ = run(capsys, "--fix", "--unsafe-fixes", "--show-fixes", "model.py")
    text = (project / "model.py").read_text()
    assert "h // 2" in text and "torch.where" not in text  # the `if` returns: the return after it is not a plain return
    assert "Fixed 1 problem:" in out and "1 × EXL042 (shape-specialisation)" in out


def test_unsafe_fix_for_an_if_return_pair(project, capsys):
    (project / "model.py").write_text(MODEL.replace("        s = x.max().item()\n        return y / s\n", "        return y\n"))
    code, out, _ = run(capsys, "--fix", "--unsafe-fixes", "model.py")
    text = (project / "model.py").read_text()
    assert "        return torch.where(y.sum() > 0, y * 2, y)  # keep this comment\n" in text
    assert code == 0 and "Fixed 2 problems." in out


def test_diff_changes_nothing_and_exits_1_when_there_is_something_to_fix(project, capsys):
    code, out, err = run(capsys, "--diff", "model.py")
    assert code == 1 and (project / "model.py").read_text() == MODEL
    assert "-        y = F.interpolate(x, size=(int(h / 2), w))\n+        y = F.interpolate(x, size=(h // 2, w))\n" in out
    assert out.startswith("--- a/model.py\n+++ b/model.py\n")
    assert "Would fix 1 problem." in err
    (project / "model.py").write_text(SAFE_FIXED)
    assert run(capsys, "--diff", "model.py")[:2] == (0, "")


def test_fix_only_reports_the_count_and_exits_0(project, capsys):
    code, out, _ = run(capsys, "--fix-only", "model.py")
    assert code == 0 and out == "Fixed 1 problem.\n"
    assert run(capsys, "--fix-only", "model.py")[1] == "No fixes applied.\n"


def test_settings_fixable_unfixable_and_unsafe_fixes(project, capsys):
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.exportlint]\nunfixable = ["EXL042"]\n')
    assert run(capsys, "--fix-only", "model.py")[1] == "No fixes applied.\n"
    pyproject.write_text('[tool.exportlint]\nfixable = ["EXL020"]\nunsafe-fixes = true\n')
    (project / "model.py").write_text(MODEL.replace("        s = x.max().item()\n        return y / s\n", "        return y\n"))
    assert run(capsys, "--fix-only", "--no-unsafe-fixes", "model.py")[1] == "No fixes applied.\n"
    assert run(capsys, "--fix-only", "model.py")[1] == "Fixed 1 problem.\n"
    assert "int(h / 2)" in (project / "model.py").read_text()  # not in `fixable`
    pyproject.write_text('[tool.exportlint]\nunsafe-fixes = "yes"\n')
    code, _, err = run(capsys, "--fix", "model.py")
    assert code == 2 and "unsafe-fixes" in err and "Traceback" not in err


def test_json_output_carries_the_fix_and_validates(project, capsys):
    code, out, _ = run(capsys, "--format", "json", "model.py")
    data = json.loads(out)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    by_code = {d["code"]: d["fix"] for d in data}
    assert by_code["EXL042"] == {
        "message": "integer division `h // 2`", "applicability": "safe",
        "edits": [{"line": 8, "column": 36, "end_line": 8, "end_column": 46, "content": "h // 2"}],
    }
    assert by_code["EXL001"] is None
    sarif = json.loads(run(capsys, "--format", "sarif", "model.py")[1])
    results = sarif["runs"][0]["results"]
    fixed = [r for r in results if r["ruleId"] == "EXL042"][0]
    assert fixed["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "h // 2"


def test_text_output_marks_fixable_findings(project, capsys):
    out = run(capsys, "--show-fixes", "model.py")[1]
    assert "model.py:8:36: [*] EXL042" in out and "model.py:9:9: EXL020" in out
    assert "= fix (safe): integer division `h // 2`" in out
    assert "[*] 1 fixable with `--fix`." in out


def test_add_noqa_then_the_run_is_clean(project, capsys):
    code, out, err = run(capsys, "--add-noqa", "model.py")
    assert code == 0 and "Added 3 noqa directives." in err
    text = (project / "model.py").read_text()
    assert "if y.sum() > 0:  # keep this comment  # noqa: EXL020\n" in text
    assert run(capsys, "model.py")[0] == 0
    assert "Added 0 noqa directives." in run(capsys, "--add-noqa", "model.py")[2]


def test_stdin_fix_prints_the_fixed_source_and_the_findings_on_stderr(project):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, "-m", "exportlint", "--fix", "--stdin-filename", "model.py", "-"],
        input=MODEL.encode(), capture_output=True, env=env, timeout=120,
    )
    assert proc.stdout.decode() == SAFE_FIXED
    assert "EXL020" in proc.stderr.decode() and proc.returncode == 1


def test_fix_keeps_the_encoding_bom_and_line_endings(project, capsys):
    data = b"\xef\xbb\xbf" + MODEL.replace("import torch\n", "import torch  # caf\xc3\xa9\n", 1).encode().replace(b"\n", b"\r\n")
    (project / "model.py").write_bytes(data)
    run(capsys, "--fix", "model.py")
    after = (project / "model.py").read_bytes()
    assert after == data.replace(b"int(h / 2)", b"h // 2")


def test_github_and_json_lines_carry_the_fix(project, capsys):
    out = run(capsys, "--format", "github", "model.py")[1]
    assert "fix: integer division `h // 2` (`exportlint --fix`)" in out
    lines = [json.loads(x) for x in run(capsys, "--format", "json-lines", "model.py")[1].splitlines()]
    assert [d["fix"]["applicability"] for d in lines if d["code"] == "EXL042"] == ["safe"]


def test_suppressed_and_unselected_findings_are_not_fixed(project, capsys):
    (project / "model.py").write_text(MODEL.replace("(int(h / 2), w))", "(int(h / 2), w))  # noqa: EXL042"))
    assert run(capsys, "--fix-only", "model.py")[1] == "No fixes applied.\n"
    (project / "model.py").write_text(MODEL)
    assert run(capsys, "--fix-only", "--select", "EXL020", "model.py")[1] == "No fixes applied.\n"
    assert (project / "model.py").read_text() == MODEL
