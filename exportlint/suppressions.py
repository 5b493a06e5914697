"""Suppression comments.

* ``# noqa`` (every code) and ``# noqa: EXL001, EXL002`` on the line a diagnostic is reported on;
  codes of other tools in a ``noqa`` list are ignored;
* ``# exportlint: ignore`` (every code) and ``# exportlint: ignore[EXL001, tensor-to-host]``
  (codes or rule names) on that line;
* ``# exportlint: skip-file`` as a comment anywhere in the file: the file is not analyzed.

Only real comments count (the file is tokenized when a marker appears in it), so a marker inside
a string literal does nothing.  Unused suppressions of exportlint codes can be reported; a bare
``# noqa`` is never reported unused (it may serve another linter).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from exportlint.catalogue import lookup
from exportlint.diagnostics import Diagnostic

_CANDIDATE = re.compile(r"#.*?(?:noqa|exportlint\s*:)", re.IGNORECASE)
_NOQA = re.compile(
    r"#\s*noqa\b(?::\s*(?P<codes>[a-z]+[0-9]+(?:[\s,]+[a-z]+[0-9]+)*))?", re.IGNORECASE
)
_DIRECTIVE = re.compile(
    r"#\s*exportlint\s*:\s*(?P<verb>ignore|skip-file)\b(?:\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)
_COMMENT_IN_LINE = re.compile(r"#.*$")


@dataclass
class Suppression:
    line: int
    comment: str  # the marker as written, e.g. "# noqa: EXL001"
    codes: tuple[str, ...] | None  # resolved codes / unknown names as written; None = all
    reportable: bool  # whether it may be reported as unused
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


@dataclass
class FileSuppressions:
    skip_file: bool = False
    by_line: dict[int, list[Suppression]] = field(default_factory=dict)

    def unused(self) -> list[tuple[int, str]]:
        """(line, message) for each reportable suppression (or code in one) that matched nothing."""
        out: list[tuple[int, str]] = []
        for line in sorted(self.by_line):
            for s in self.by_line[line]:
                if not s.reportable:
                    continue
                if s.codes is None:
                    if not s.used:
                        out.append((line, f"unused suppression `{s.comment}`"))
                    continue
                for code in s.codes:
                    if code not in s.used:
                        known = "" if lookup(code) else " (unknown code)"
                        out.append((line, f"unused suppression for {code}{known}"))
        return out


def _codes(raw: str, *, noqa: bool) -> tuple[str, ...]:
    out: list[str] = []
    for item in re.split(r"[\s,]+", raw.strip()):
        if not item:
            continue
        rule = lookup(item)
        if rule is not None:
            out.append(rule.code)
        elif not noqa or item.upper().startswith("EXL"):
            out.append(item.upper() if noqa else item)
    return tuple(out)


def _parse_comment(comment: str, line: int, found: FileSuppressions) -> None:
    for m in _NOQA.finditer(comment):
        raw = m.group("codes")
        codes = None if raw is None else _codes(raw, noqa=True)
        if codes == ():
            continue  # only other tools' codes
        found.by_line.setdefault(line, []).append(
            Suppression(line, m.group(0).strip(), codes, reportable=codes is not None)
        )
    for m in _DIRECTIVE.finditer(comment):
        if m.group("verb").lower() == "skip-file":
            found.skip_file = True
            continue
        raw = m.group("codes")
        codes = None if raw is None or not raw.strip() else _codes(raw, noqa=False)
        found.by_line.setdefault(line, []).append(
            Suppression(line, m.group(0).strip(), codes, reportable=True)
        )


def _comments(text: str) -> list[tuple[int, str]]:
    """(line, comment text) of every comment; a regex per line when the file does not tokenize."""
    import tokenize

    out: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
        return out
    except (tokenize.TokenError, SyntaxError):
        from exportlint.files import split_lines

        return [
            (number, m.group(0))
            for number, line in enumerate(split_lines(text), start=1)
            if (m := _COMMENT_IN_LINE.search(line))
        ]


def _might_suppress(text: str) -> bool:
    """Cheap pre-check: would any line suppress something if its marker were a real comment?

    Most files have no marker, or only other tools' (``# noqa: F401``): they are not tokenized.
    """
    scratch = FileSuppressions()
    for m in _CANDIDATE.finditer(text):
        end = text.find("\n", m.end())
        _parse_comment(text[m.start() : len(text) if end == -1 else end], 0, scratch)
        if scratch.skip_file or scratch.by_line:
            return True
    return False


def parse_suppressions(text: str) -> FileSuppressions:
    found = FileSuppressions()
    if not _might_suppress(text):
        return found
    for line, comment in _comments(text):
        if _CANDIDATE.search(comment):
            _parse_comment(comment, line, found)
    return found


def apply_suppressions(
    diagnostics: list[Diagnostic], suppressions: FileSuppressions, keep: bool
) -> list[Diagnostic]:
    """Mark suppressed diagnostics; drop them unless ``keep`` (``--show-suppressed``)."""
    if not suppressions.by_line:
        return diagnostics
    out: list[Diagnostic] = []
    for d in diagnostics:
        matching = [s for s in suppressions.by_line.get(d.line, ()) if s.covers(d.code)]
        for s in matching:
            s.used.add(d.code)
        d.suppressed = bool(matching)
        if keep or not matching:
            out.append(d)
    return out
