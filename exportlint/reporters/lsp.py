"""``--format lsp``: a JSON array of LSP ``PublishDiagnosticsParams``.

Diagnostics are 1-based with columns in code points (end exclusive); LSP wants 0-based
positions whose ``character`` counts code units of the negotiated position encoding
(UTF-16 unless the client asked for another).  The conversion helpers here are the one
place that does it: the language server (:mod:`exportlint.lsp.server`) reuses them.

This module imports neither pygls nor lsprotocol: it emits plain JSON that the
``lsprotocol`` types structure (the tests check it with its cattrs converter).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from exportlint.diagnostics import Diagnostic, FileReport, Note, Severity
from exportlint.reporters import RenderContext

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
SOURCE = "exportlint"
LSP_SEVERITY = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}


def _char_units(char: str, encoding: str) -> int:
    if encoding == UTF32:
        return 1
    if encoding == UTF8:
        return len(char.encode("utf-8", "surrogatepass"))
    return 2 if ord(char) > 0xFFFF else 1


def to_units(line: str, column: int, encoding: str = UTF16) -> int:
    """Code units of ``encoding`` before 0-based code-point ``column`` of ``line``.

    Columns past the end of the line (an end position at the line break) count the
    missing characters as one unit each.
    """
    head = line[:column]
    if head.isascii():
        return column
    return sum(_char_units(c, encoding) for c in head) + max(0, column - len(line))


def position(lines: list[str] | None, line: int, column: int, encoding: str = UTF16) -> dict[str, int]:
    """LSP ``Position`` for a 1-based ``line`` and 1-based code-point ``column``."""
    text = lines[line - 1] if lines is not None and 0 < line <= len(lines) else ""
    return {"line": max(line - 1, 0), "character": to_units(text, max(column - 1, 0), encoding)}


def lsp_range(
    lines: list[str] | None,
    line: int,
    column: int,
    end_line: int,
    end_column: int,
    encoding: str = UTF16,
) -> dict[str, dict[str, int]]:
    """LSP ``Range`` for a 1-based, code-point, end-exclusive span."""
    return {
        "start": position(lines, line, column, encoding),
        "end": position(lines, end_line, end_column, encoding),
    }


def path_to_uri(path: str) -> str:
    """A ``file://`` URI for ``path`` (relative paths are taken from the working directory)."""
    return Path(os.path.abspath(path)).as_uri()


def _related(note: Note, uri: str, lines: list[str] | None, encoding: str) -> dict[str, Any]:
    where = uri if note.path is None else path_to_uri(note.path)
    note_lines = lines if note.path is None else None
    start = position(note_lines, note.line, note.column, encoding)
    return {"location": {"uri": where, "range": {"start": start, "end": start}}, "message": note.message}


def fix_edits(diag: Diagnostic, lines: list[str] | None, encoding: str = UTF16) -> list[dict[str, Any]]:
    """The diagnostic's fix as LSP ``TextEdit``s (empty when it has no fix).

    ``Diagnostic.fix`` is ``{"message", "applicability", "edits": [{"line", "column",
    "end_line", "end_column", "content"}]}`` in the diagnostic's own coordinates.
    """
    if not diag.fix:
        return []
    return [
        {
            "range": lsp_range(lines, e["line"], e["column"], e["end_line"], e["end_column"], encoding),
            "newText": e["content"],
        }
        for e in diag.fix.get("edits", [])
    ]


def to_lsp_diagnostic(diag: Diagnostic, uri: str, lines: list[str] | None, encoding: str = UTF16) -> dict[str, Any]:
    """One exportlint diagnostic as an LSP ``Diagnostic`` (JSON-ready)."""
    out: dict[str, Any] = {
        "range": lsp_range(lines, diag.line, diag.column, diag.end_line, diag.end_column, encoding),
        "severity": LSP_SEVERITY[diag.severity],
        "code": diag.code,
        "source": SOURCE,
        "message": diag.message,
        "data": {
            "name": diag.name,
            "hint": diag.hint,
            "fix": None if not diag.fix else {
                "message": diag.fix.get("message", ""),
                "applicability": diag.fix.get("applicability", "unsafe"),
                "edits": fix_edits(diag, lines, encoding),
            },
            "dynamic": diag.dynamic,
        },
    }
    if diag.url:
        out["codeDescription"] = {"href": diag.url}
    if diag.provenance:
        out["relatedInformation"] = [_related(n, uri, lines, encoding) for n in diag.provenance]
    return out


def publish_params(report: FileReport) -> dict[str, Any]:
    """The ``PublishDiagnosticsParams`` of one file (an empty list clears the editor's)."""
    uri = path_to_uri(report.path)
    return {"uri": uri, "diagnostics": [to_lsp_diagnostic(d, uri, report.lines) for d in report.diagnostics]}


def render(reports: list[FileReport], ctx: RenderContext) -> str:
    return json.dumps([publish_params(r) for r in reports], indent=2) + "\n"
