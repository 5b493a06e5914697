"""What the language server's requests answer, from the diagnostics it published (no I/O).

* :func:`on_lines`: the diagnostics a code action request is about: every diagnostic on a line
  of the requested range, not only those under the cursor (editors ask with the cursor at the
  start of the line, before the finding's column);
* :func:`wants`: whether a ``context.only`` filter asks for a code action kind (kinds are
  hierarchical: ``source`` and ``source.fixAll`` both ask for ``source.fixAll.exportlint``);
* :func:`safe_fix_edits`: the edits of ``source.fixAll.exportlint``: every fix in the
  diagnostics' ``data.fix`` whose applicability is ``safe``, in document order, a fix whose
  edits overlap an earlier fix's left out (the next lint offers it again);
* :func:`hover_text`: the hover for a diagnostic, in the markup kind the client asked for.
"""

from __future__ import annotations

from typing import Any, Sequence

from lsprotocol import types

from exportlint.catalogue import lookup
from exportlint.reporters.sarif import rule_doc

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.exportlint"


def _last_line(area: types.Range) -> int:
    """The last line ``area`` covers (an end at the start of a line does not cover that line)."""
    end = area.end
    return end.line - 1 if end.character == 0 and end.line > area.start.line else end.line


def on_lines(diagnostics: Sequence[types.Diagnostic], area: types.Range) -> list[types.Diagnostic]:
    first, last = area.start.line, max(area.start.line, _last_line(area))
    return [d for d in diagnostics if d.range.start.line <= last and first <= _last_line(d.range)]


def wants(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a code action request restricted to ``only`` kinds asks for ``kind``."""
    if only is None:
        return True
    return any(kind == str(k) or kind.startswith(f"{k}.") for k in only)


def fix_of(diag: types.Diagnostic) -> dict[str, Any] | None:
    """The diagnostic's fix (LSP ``TextEdit`` shapes), if it has one with edits."""
    fix = diag.data.get("fix") if isinstance(diag.data, dict) else None
    return fix if isinstance(fix, dict) and fix.get("edits") else None


def _span(edit: dict[str, Any]) -> tuple[tuple[int, int], tuple[int, int]]:
    start, end = edit["range"]["start"], edit["range"]["end"]
    return (start["line"], start["character"]), (end["line"], end["character"])


def safe_fix_edits(diagnostics: Sequence[types.Diagnostic]) -> tuple[list[dict[str, Any]], list[types.Diagnostic]]:
    """The edits of every safe fix that does not overlap another, and the diagnostics they fix."""
    fixes = [(d, f) for d in diagnostics if (f := fix_of(d)) is not None and f.get("applicability") == "safe"]
    fixes.sort(key=lambda df: min(_span(e) for e in df[1]["edits"]))
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    edits: list[dict[str, Any]] = []
    fixed: list[types.Diagnostic] = []
    for diag, fix in fixes:
        spans = [_span(e) for e in fix["edits"]]
        if any(s[0] < t[1] and t[0] < s[1] or s == t for s in spans for t in taken):
            continue
        taken += spans
        edits += fix["edits"]
        fixed.append(diag)
    return edits, fixed


def hover_text(diag: types.Diagnostic, kind: types.MarkupKind) -> str:
    data = diag.data if isinstance(diag.data, dict) else {}
    rule = lookup(str(diag.code))
    markdown = kind == types.MarkupKind.Markdown
    name = data.get("name", "")
    parts = [f"**{diag.code}** `{name}`: {diag.message}" if markdown else f"{diag.code} {name}: {diag.message}"]
    if data.get("hint"):
        parts.append(f"**Hint:** {data['hint']}" if markdown else f"Hint: {data['hint']}")
    if rule is not None:
        parts.append(rule_doc(rule))  # markdown reads as plain text too
    return "\n\n".join(parts)


def markup_kind(capabilities: types.ClientCapabilities | None) -> types.MarkupKind:
    """The client's preferred hover format among those we write (markdown if it says nothing)."""
    hover = capabilities.text_document.hover if capabilities and capabilities.text_document else None
    for kind in (hover.content_format if hover and hover.content_format else [types.MarkupKind.Markdown]):
        if kind in (types.MarkupKind.Markdown, types.MarkupKind.PlainText):
            return kind
    return types.MarkupKind.PlainText
