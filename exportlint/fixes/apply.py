"""Applying fixes to one text.

Fixes are taken in source order; one that overlaps a fix already taken waits for the next round
(the driver re-lints and applies again, to a fixed point).  The result must parse: when the
fixes together do not, each is tried on its own and a fix whose result does not parse is
dropped.  Text outside the edits is kept byte for byte (comments, formatting, line endings).
"""

from __future__ import annotations

import ast
import warnings

from exportlint.files import _LINE_BREAK
from exportlint.fixes.model import Edit, Fix


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _LINE_BREAK.finditer(text)]


def _newline(text: str) -> str:
    m = _LINE_BREAK.search(text)
    return m.group(0) if m else "\n"


def _offset(starts: list[int], text: str, line: int, column: int) -> int:
    if line > len(starts):
        return len(text)
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    return min(start + column - 1, end)


def splice(text: str, edits: list[Edit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (a ``\\n`` in an edit's content becomes
    the text's own line ending)."""
    starts = _line_starts(text)
    newline = _newline(text)
    placed = sorted(
        ((_offset(starts, text, e.line, e.column), _offset(starts, text, e.end_line, e.end_column), e.content)
         for e in edits),
        reverse=True,
    )
    out = text
    for begin, end, content in placed:
        out = out[:begin] + content.replace("\n", newline) + out[end:]
    return out


def parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences are not ours to report
            ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def non_overlapping(fixes: list[Fix]) -> list[Fix]:
    """The fixes to apply together: in source order, each that overlaps none taken before."""
    chosen: list[Fix] = []
    for fix in sorted(fixes, key=lambda f: min(e.start for e in f.edits)):
        if not any(fix.overlaps(c) for c in chosen):
            chosen.append(fix)
    return chosen


def apply_fixes(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """(new text, fixes applied).  The new text parses whenever ``text`` did."""
    chosen = non_overlapping([f for f in fixes if f.edits])
    if not chosen:
        return text, []
    new = splice(text, [e for f in chosen for e in f.edits])
    if parses(new):
        return new, chosen
    applied: list[Fix] = []
    for fix in chosen:  # rare: find the fix that breaks the syntax and leave it out
        if parses(splice(text, [e for f in applied + [fix] for e in f.edits])):
            applied.append(fix)
    return splice(text, [e for f in applied for e in f.edits]), applied
