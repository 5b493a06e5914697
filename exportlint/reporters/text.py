"""Human output, rustc/ruff style::

    model.py:42:13: EXL001 [warning] `keep.sum().item()` turns a tensor into a Python number
       |
    42 |         n = keep.sum().item()
       |             ^^^^^^^^^^^^^^^^^
       = note: line 41: `keep` is a tensor value: ...
       = help: ...

then a summary line; ``--statistics`` adds a table by rule; ``--quiet`` prints only the summary
(nothing when clean).  Colour (ANSI SGR codes) only when ``ctx.color``; source text is written as
is.  The caret line accounts for tabs (4 columns), wide (CJK) and zero-width characters.  No
third-party import: this module is on the path of every run (start-up time counts for one file).
"""

from __future__ import annotations

import unicodedata
from collections import Counter

from exportlint.diagnostics import Diagnostic, FileReport, Severity
from exportlint.fixes.model import Fix
from exportlint.reporters import RenderContext

TAB = "    "
_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
# Dynamic-pass verdicts (exportlint.dynamic.verdicts): (what happened, preposition for the exporter).
_VERDICT = {
    "confirmed": ("✔ confirmed", "by"),
    "diverges": ("✔ confirmed, the exported output diverges", "under"),
    "passes": ("○ passes: exported fine", "with"),
    "not-verifiable": ("? not verifiable", "with"),
    "not-reached": ("– not reached", "by"),
}


def _shown(ch: str) -> str:
    """How one source character is drawn (tabs expanded, control characters made visible)."""
    if ch == "\t":
        return TAB
    if ord(ch) < 32 or ord(ch) == 127:
        return "?"
    return ch


def _cell_width(ch: str) -> int:
    """Terminal cells of one character: 2 for wide (CJK, most emoji), 0 for combining marks and
    zero-width format characters, else 1."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _cells(text: str) -> int:
    return sum(_cell_width(c) for c in text)


_SGR = {"bold": "1", "dim": "2", "red": "31", "yellow": "33", "blue": "34", "cyan": "36"}


class Text:
    """A line made of (text, style) parts; a style is space-separated words of ``_SGR``."""

    def __init__(self, text: str = "", style: str | None = None) -> None:
        self.parts: list[tuple[str, str | None]] = []
        if text:
            self.append(text, style)

    def append(self, text: str, style: str | None = None) -> None:
        self.parts.append((text, style))

    def styled(self, color: bool) -> str:
        if not color:
            return "".join(t for t, _ in self.parts)
        return "".join(
            f"\x1b[{';'.join(_SGR[w] for w in style.split())}m{t}\x1b[0m" if style and t else t for t, style in self.parts
        )


class Console:
    """Collects printed lines (no wrapping: long messages stay on one line, like ruff's)."""

    def __init__(self, color: bool) -> None:
        self.color = color
        self.lines: list[str] = []

    def print(self, text: "Text | None" = None) -> None:
        self.lines.append("" if text is None else text.styled(self.color))

    def getvalue(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def caret_span(line: str, column: int, end_column: int | None) -> tuple[str, int, int]:
    """(line as drawn, cells before the span, cells of the span (at least 1)).

    ``column``/``end_column`` are 1-based code-point columns, ``end_column`` exclusive (None:
    to the end of the line).
    """
    drawn = [_shown(c) for c in line]
    start = min(max(column - 1, 0), len(drawn))
    end = len(drawn) if end_column is None else min(max(end_column - 1, start), len(drawn))
    before = _cells("".join(drawn[:start]))
    width = _cells("".join(drawn[start:end]))
    return "".join(drawn), before, max(width, 1)


def _dynamic_line(dynamic: dict) -> str:
    status = str(dynamic.get("status", ""))
    what, preposition = _VERDICT.get(status, (status, "with"))
    exporter = dynamic.get("exporter")
    message = dynamic.get("message")
    if status == "passes" and message:  # the message already names the exporters it ran under
        what, exporter = "○ passes", None
    head = f"{what} {preposition} {exporter}" if exporter else what
    diff = dynamic.get("max_abs_diff")
    tail = f": {message}" if message else ""
    if diff is not None:
        tail += f" (max abs diff {diff})"
    return head + tail


def _render_diagnostic(console: Console, d: Diagnostic, lines: list[str] | None, ctx: RenderContext) -> None:
    """A finding judged under another target than the run's (an export call's exporter) says so."""
    style = _STYLE[d.severity]
    policy = ctx.extra.get("fix_policy")
    fix = Fix.from_dict(d.fix)
    head = Text()
    head.append(f"{d.path}:{d.line}:{d.column}:", style="bold")
    head.append(" ")
    if policy is not None and policy.applies(d.code, fix):
        head.append("[*] ", style="bold")  # ruff's mark: `--fix` fixes it
    head.append(d.code, style=style)
    other = f", {d.target.value}" if d.target != ctx.target else ""  # judged under an export call's target
    head.append(f" [{d.severity.value}{other}]", style=style)
    head.append(" ")
    head.append(d.message)
    if d.suppressed:
        head.append(" (suppressed)", style="dim")
    console.print(head)
    gutter = len(str(d.line))
    pad = " " * gutter
    if lines is not None and 1 <= d.line <= len(lines):
        end = d.end_column if d.end_line == d.line else None
        drawn, before, width = caret_span(lines[d.line - 1], d.column, end)
        console.print(Text(f"{pad} |", style="blue"))
        source = Text(f"{d.line} | ", style="blue")
        source.append(drawn)
        console.print(source)
        carets = Text(f"{pad} | ", style="blue")
        carets.append(" " * before + "^" * width, style=style)
        console.print(carets)
    for note in d.provenance:
        where = f"{note.path}:{note.line}" if note.path else f"line {note.line}"
        console.print(_labelled(pad, "note", f"{where}: {note.message}"))
    if d.hint:
        console.print(_labelled(pad, "help", d.hint))
    if fix is not None and ctx.extra.get("show_fixes"):
        console.print(_labelled(pad, f"fix ({fix.applicability})", fix.message))
    if d.dynamic:
        console.print(_labelled(pad, "dynamic", _dynamic_line(d.dynamic)))


def _labelled(pad: str, label: str, message: str) -> Text:
    text = Text(f"{pad} = ", style="blue")
    text.append(f"{label}:", style="bold")
    text.append(f" {message}")
    return text


def summary(reports: list[FileReport]) -> str:
    """One line: what was found, by severity, in how many files."""
    active = [d for r in reports for d in r.diagnostics if not d.suppressed]
    suppressed = sum(d.suppressed for r in reports for d in r.diagnostics)
    files = len(reports)
    where = f"{files} file" + ("" if files == 1 else "s")
    extra = f"; {suppressed} suppressed shown" if suppressed else ""
    if not active:
        return f"No problems found in {where}{extra}."
    counts = Counter(d.severity for d in active)
    parts = [
        f"{counts[s]} {s.value}" + ("" if counts[s] == 1 or s is Severity.INFO else "s")
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        if counts[s]
    ]
    in_files = len({d.path for d in active})
    n = len(active)
    return (
        f"Found {n} problem{'' if n == 1 else 's'} ({', '.join(parts)}) in {in_files} of "
        f"{where}{extra}."
    )


def _statistics(console: Console, reports: list[FileReport]) -> None:
    counts = Counter((d.code, d.name, d.severity) for r in reports for d in r.diagnostics
                     if not d.suppressed)
    rows = [(str(n), code, name, severity) for (code, name, severity), n
            in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    header = ("count", "code", "name", "severity")
    widths = [max([len(header[i])] + [len(r[i] if i < 3 else r[i].value) for r in rows]) for i in range(4)]

    def line(cells: list[tuple[str, str | None]]) -> Text:
        text = Text()
        for i, (cell, style) in enumerate(cells):
            padded = cell.rjust(widths[i]) if i == 0 else cell.ljust(widths[i]) if i < 3 else cell
            text.append(("" if i == 0 else "  ") + padded, style)
        return text

    console.print(line([(h, "bold") for h in header]))
    for n, code, name, severity in rows:
        console.print(line([(n, None), (code, _STYLE[severity]), (name, None), (severity.value, None)]))


def render(reports: list[FileReport], ctx: RenderContext) -> str:
    console = Console(ctx.color)
    found = any(r.diagnostics for r in reports)
    if ctx.quiet:
        if any(not d.suppressed for r in reports for d in r.diagnostics):
            console.print(Text(summary(reports), style="bold"))
        return console.getvalue()
    for report in reports:
        for d in report.diagnostics:
            _render_diagnostic(console, d, report.lines, ctx)
            console.print()
    if ctx.statistics and found:
        _statistics(console, reports)
        console.print()
    for line in _fix_lines(reports, ctx):
        console.print(Text(line))
    console.print(Text(summary(reports), style="bold"))
    return console.getvalue()


def _fix_lines(reports: list[FileReport], ctx: RenderContext) -> list[str]:
    """What ``--fix`` did and what it (or ``--unsafe-fixes``) would do."""
    from exportlint.fixes.command import fix_counts, fixed_lines, plural

    out = []
    outcome = ctx.extra.get("fixed")
    if outcome is not None and outcome.total:
        out.append(f"Fixed {plural(outcome.total, 'problem')}" + (":" if ctx.extra.get("show_fixes") else "."))
        if ctx.extra.get("show_fixes"):
            out += fixed_lines(outcome)
    policy = ctx.extra.get("fix_policy")
    if policy is not None:
        fixable, hidden = fix_counts(reports, policy)
        if fixable:
            out.append(f"[*] {fixable} fixable with `--fix`.")
        if hidden:
            out.append(f"{plural(hidden, 'more fix')} available with `--unsafe-fixes` (review them: eager behaviour may change).")
    return out
