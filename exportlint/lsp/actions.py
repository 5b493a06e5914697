"""Text edits behind the server's quick fixes, independent of pygls (plain LSP JSON shapes).

A finding's fix travels as LSP ``TextEdit`` s in its diagnostic's data (``reporters/lsp.py``'s
``fix_edits``); the server's "Fix: …" and ``source.fixAll.exportlint`` actions read it there
(``lsp/features.py``).

``noqa_edit`` adds a suppression for one code to one line: it merges into an existing
``# noqa: A, B`` or ``# exportlint: ignore[A]`` list, and otherwise appends ``  # noqa: CODE``.
Whether a line already suppresses a code is :mod:`exportlint.suppressions`' call.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Any

from exportlint.reporters.lsp import UTF16, to_units
from exportlint.suppressions import parse_suppressions

# Where a code list ends, to merge into it (another tool's `# noqa: E501` list included).
_CODE_LIST_END = re.compile(
    r"#\s*noqa\s*:\s*[a-z]+[0-9]+(?:\s*,\s*[a-z]+[0-9]+)*|#\s*exportlint\s*:\s*ignore\[[^\]]*(?=\])",
    re.IGNORECASE,
)


def _comment_column(line: str) -> int | None:
    """Where the line's real comment starts (not a ``#`` inside a string), if it has one."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return token.start[1]
    except (tokenize.TokenError, SyntaxError):
        pass  # an open bracket at the end of the line: the comment, if any, came before
    return None


def _edit(line_number: int, line: str, start: int, end: int, text: str, encoding: str) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line_number, "character": to_units(line, start, encoding)},
            "end": {"line": line_number, "character": to_units(line, end, encoding)},
        },
        "newText": text,
    }


def noqa_insertion(line: str, code: str) -> tuple[int, int, str] | None:
    """(start, end, text) in code points that suppresses ``code`` on ``line``, or None.

    None when the line already suppresses it, or ends in a backslash continuation (a comment
    there would swallow the backslash and break the statement).
    """
    if any(s.covers(code) for s in parse_suppressions(line).by_line.get(1, [])):
        return None
    comment_at = _comment_column(line)
    listed = None if comment_at is None else _CODE_LIST_END.search(line, comment_at)
    if listed:
        return listed.end(), listed.end(), f", {code}"
    content = line.rstrip()
    if content.endswith("\\"):
        return None
    return len(content), len(line), f"  # noqa: {code}" if content else f"# noqa: {code}"


def noqa_edit(lines: list[str], line_number: int, code: str, encoding: str = UTF16) -> dict[str, Any] | None:
    """The ``TextEdit`` that suppresses ``code`` on 0-based ``line_number``, or None
    (see :func:`noqa_insertion`)."""
    if not 0 <= line_number < len(lines):
        return None
    line = lines[line_number]
    insertion = noqa_insertion(line, code)
    if insertion is None:
        return None
    start, end, text = insertion
    return _edit(line_number, line, start, end, text, encoding)
