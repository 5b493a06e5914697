"""The language server's `# noqa` quick fix: where the edit goes and when there is none."""

from __future__ import annotations

import pytest

from exportlint.lsp.actions import noqa_edit
from exportlint.reporters.lsp import UTF8, UTF16


def applied(line: str, code: str = "EXL001") -> str | None:
    """The line after the quick fix (UTF-32 == code points, so slicing is exact)."""
    edit = noqa_edit([line], 0, code, "utf-32")
    if edit is None:
        return None
    start, end = edit["range"]["start"]["character"], edit["range"]["end"]["character"]
    return line[:start] + edit["newText"] + line[end:]


@pytest.mark.parametrize(("line", "expected"), [
    ("    n = x.item()", "    n = x.item()  # noqa: EXL001"),
    ("    n = x.item()   ", "    n = x.item()  # noqa: EXL001"),
    ("    n = x.item()  # noqa: EXL002", "    n = x.item()  # noqa: EXL002, EXL001"),
    ("    n = x.item()  # noqa:E501,W291 long line", "    n = x.item()  # noqa:E501,W291, EXL001 long line"),
    ("    n = x.item()  # exportlint: ignore[EXL002]", "    n = x.item()  # exportlint: ignore[EXL002, EXL001]"),
    ("    n = x.item()  # why: a comment", "    n = x.item()  # why: a comment  # noqa: EXL001"),
    ("    s = '# noqa: EXL002'; n = x.item()", "    s = '# noqa: EXL002'; n = x.item()  # noqa: EXL001"),
    ("    n = foo(x.item(),", "    n = foo(x.item(),  # noqa: EXL001"),
])
def test_noqa_edit_appends_or_merges(line: str, expected: str) -> None:
    assert applied(line) == expected


@pytest.mark.parametrize("line", [
    "    n = x.item()  # noqa: EXL001",
    "    n = x.item()  # noqa: exl002, EXL001",
    "    n = x.item()  # noqa",
    "    n = x.item()  # exportlint: ignore",
    "    n = x.item()  # exportlint: ignore[tensor-item]",
    "    n = x.item() + \\",
])
def test_no_edit_when_already_suppressed_or_a_comment_would_break_the_line(line: str) -> None:
    assert noqa_edit([line], 0, "EXL001") is None


def test_positions_are_in_the_requested_encoding() -> None:
    line = "    label = '😀'; n = x.item()"
    end16 = noqa_edit([line], 0, "EXL001", UTF16)["range"]["start"]["character"]
    end8 = noqa_edit([line], 0, "EXL001", UTF8)["range"]["start"]["character"]
    assert end16 == len(line.encode("utf-16-le")) // 2 == len(line) + 1
    assert end8 == len(line.encode("utf-8"))


def test_line_out_of_range_gives_no_edit() -> None:
    assert noqa_edit(["x = 1"], 3, "EXL001") is None
