"""Suppression comments (exportlint.suppressions) on their own and through the runner."""

from __future__ import annotations

import pytest
from cli_support import _private_cache, fake_engine  # noqa: F401

from exportlint.config import load_settings
from exportlint.runner import lint_text, run
from exportlint.suppressions import parse_suppressions

LINE = "        n = x.sum().item()"


def codes_on(text: str, line: int):
    return [s.codes for s in parse_suppressions(text).by_line.get(line, [])]


@pytest.mark.parametrize("comment, codes", [
    ("# noqa", None),
    ("# noqa: EXL001", ("EXL001",)),
    ("#noqa:EXL001,EXL002", ("EXL001", "EXL002")),
    ("# NOQA: exl001 EXL002", ("EXL001", "EXL002")),
    ("# noqa: E501, EXL001", ("EXL001",)),
    ("# exportlint: ignore", None),
    ("# exportlint: ignore[EXL001]", ("EXL001",)),
    ("# exportlint: ignore[tensor-item, EXL002]", ("EXL001", "EXL002")),
    ("# type: ignore  # exportlint: ignore[EXL001]", ("EXL001",)),
])
def test_forms(comment, codes):
    assert codes_on(f"x = 1  {comment}\n", 1) == [codes]


def test_other_tools_noqa_codes_do_not_count():
    assert parse_suppressions("x = 1  # noqa: E501\n").by_line == {}


def test_markers_inside_strings_do_nothing():
    text = 's = "# noqa: EXL001"\nt = """\n# exportlint: skip-file\n# noqa\n"""\n'
    found = parse_suppressions(text)
    assert found.by_line == {} and not found.skip_file


def test_skip_file_anywhere_as_a_comment():
    assert parse_suppressions("import torch\n\n\nx = 1\n# exportlint: skip-file\n").skip_file
    assert not parse_suppressions("import torch\n").skip_file


def test_broken_file_still_finds_comments():
    found = parse_suppressions('def f(:\n    x = "unterminated\n    y = 1  # noqa: EXL001\n')
    assert found.by_line[3][0].codes == ("EXL001",)


MODEL = """\
import torch


class M(torch.nn.Module):
    def forward(self, x):
        a = x.sum().item(){c1}
        b = x.tolist(){c2}
        return a, b
"""


def lint(tmp_path, c1="", c2="", **overrides):
    text = MODEL.format(c1=c1, c2=c2)
    return lint_text(text, "m.py", load_settings(tmp_path, overrides))


@pytest.mark.parametrize("c1, c2, remaining", [
    ("", "", ["EXL001", "EXL002"]),
    ("  # noqa", "", ["EXL002"]),
    ("  # noqa: EXL001", "", ["EXL002"]),
    ("  # noqa: EXL002", "", ["EXL001", "EXL002"]),
    ("", "  # exportlint: ignore[tensor-to-host]", ["EXL001"]),
    ("  # exportlint: ignore", "  # exportlint: ignore", []),
    ("", "\n# exportlint: skip-file", []),
])
def test_suppressions_through_lint_text(tmp_path, fake_engine, c1, c2, remaining):
    assert [d.code for d in lint(tmp_path, c1, c2).diagnostics] == remaining


def test_skip_file_is_not_analyzed(tmp_path, fake_engine):
    lint(tmp_path, "", "  # exportlint: skip-file")
    assert fake_engine.calls == []


def test_show_suppressed_keeps_them_marked(tmp_path, fake_engine):
    report = lint(tmp_path, "  # noqa: EXL001", "", show_suppressed=True)
    assert [(d.code, d.suppressed) for d in report.diagnostics] == [
        ("EXL001", True), ("EXL002", False)]


def test_unused_suppressions_are_reported(tmp_path, fake_engine):
    model = tmp_path / "m.py"
    model.write_text(MODEL.format(
        c1="  # noqa: EXL001, EXL010, E501",
        c2="  # exportlint: ignore[EXL999]",
    ).replace("        return a, b", "        return a, b  # exportlint: ignore\n    # noqa"))
    settings = load_settings(tmp_path, {"report_unused_suppressions": True})
    result = run([str(model)], settings)
    assert [str(u) for u in result.unused_suppressions] == [
        f"{model}:6: unused suppression for EXL010",
        f"{model}:7: unused suppression for EXL999 (unknown code)",
        f"{model}:8: unused suppression `# exportlint: ignore`",
    ]
    # EXL002 on line 7 was not suppressed by the unknown code:
    assert [d.code for d in result.reports[0].diagnostics] == ["EXL002"]


def test_unused_suppressions_are_not_reported_by_default(tmp_path, fake_engine):
    model = tmp_path / "m.py"
    model.write_text("x = 1  # noqa: EXL001\n")
    assert run([str(model)], load_settings(tmp_path)).unused_suppressions == []


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_numbers_with_any_line_ending(newline):
    text = newline.join(["x = 1", 's = """', "# noqa", '"""', "y = 2  # noqa: EXL001", ""])
    assert list(parse_suppressions(text).by_line) == [5]
