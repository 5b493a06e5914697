"""``--fix`` / ``--diff`` / ``--add-noqa`` over the linted files.

:func:`fix_files` lints, applies the fixes the policy allows to each file, re-lints the changed
texts and applies again until nothing changes (at most :data:`MAX_ROUNDS` rounds): a fix that
overlapped another waits for the next round.  Files are written only when ``write`` is set, in
their own encoding (BOM and line endings kept); the caller re-lints them for the report.
"""

from __future__ import annotations

import codecs
import difflib
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from exportlint.config import Settings
from exportlint.diagnostics import Diagnostic, FileReport
from exportlint.files import SourceError, _declared_encoding, read_source
from exportlint.fixes.apply import apply_fixes, parses
from exportlint.fixes.model import Fix, FixPolicy

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (before, after), changed only
    fixed: dict[str, Counter] = field(default_factory=dict)  # path -> fixes applied per code
    errors: list[str] = field(default_factory=list)  # files that could not be written

    @property
    def total(self) -> int:
        return sum(sum(c.values()) for c in self.fixed.values())

    def diff(self) -> str:
        out = []
        for path, (before, after) in sorted(self.texts.items()):
            out += difflib.unified_diff(
                before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
            )
            if out and not out[-1].endswith(("\n", "\r")):
                out[-1] += "\n\\ No newline at end of file\n"
        return "".join(out)


def fixes_to_apply(report: FileReport, policy: FixPolicy) -> list[tuple[str, Fix]]:
    out = []
    for d in report.diagnostics:
        fix = Fix.from_dict(d.fix)
        if not d.suppressed and fix is not None and policy.applies(d.code, fix):
            out.append((d.code, fix))
    return out


def fix_files(
    reports: list[FileReport],
    settings: Settings,
    policy: FixPolicy,
    write: bool,
    relint: Callable[[str, str], FileReport],
    texts: dict[str, str] | None = None,
) -> FixOutcome:
    """Apply fixes to the files of ``reports`` (their first lint).  ``relint(text, path)`` lints a
    changed text; ``texts`` gives the content of files that are not on disk (stdin)."""
    outcome = FixOutcome()
    for report in reports:
        todo = fixes_to_apply(report, policy)
        if not todo:
            continue
        path = report.path
        try:
            data, before = (None, texts[path]) if texts and path in texts else read_source(path)
        except SourceError:
            continue
        text, counts = before, Counter()
        for _ in range(MAX_ROUNDS):
            new, applied = apply_fixes(text, [fix for _, fix in todo])
            if not applied or new == text:
                break
            for fix in applied:
                counts[next(code for code, f in todo if f is fix)] += 1
            text = new
            todo = fixes_to_apply(relint(text, path), policy)
        if text == before:
            continue
        outcome.texts[path] = (before, text)
        outcome.fixed[path] = counts
        if write and data is not None:
            error = write_source(path, data, text)
            if error:
                outcome.errors.append(error)
    return outcome


def write_source(path: str, original: bytes, text: str) -> str | None:
    """Write ``text`` in the encoding (and BOM) ``original`` was read with; an error message or None."""
    encoding, _ = _declared_encoding(original)
    if codecs.lookup(encoding).name == "utf-8-sig":
        encoding = "utf-8"  # the BOM is written below, once
    bom = b"\xef\xbb\xbf" if original.startswith(b"\xef\xbb\xbf") else b""
    try:
        data = bom + text.encode(encoding)
    except UnicodeEncodeError:
        return f"{path}: the fixed text cannot be encoded as {encoding}; file left unchanged"
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        return f"{path}: cannot write: {e.strerror or e}"
    return None


# ---------------------------------------------------------------------------------------------
# --add-noqa


def add_noqa(text: str, diagnostics: list[Diagnostic]) -> tuple[str, int]:
    """``text`` with a ``# noqa: CODE`` for every unsuppressed diagnostic on its line (merged into
    an existing list); (new text, directives added).  A line where a comment would break the
    statement (backslash continuation, or a result that no longer parses) is left alone."""
    import re

    from exportlint.lsp.actions import noqa_insertion

    parts = re.split(r"(\r\n|\r|\n)", text)  # line, break, line, break, …
    wanted: dict[int, list[str]] = {}
    for d in diagnostics:
        if not d.suppressed and 0 <= 2 * (d.line - 1) < len(parts):
            wanted.setdefault(2 * (d.line - 1), []).append(d.code)
    edited: dict[int, tuple[str, int]] = {}
    for index, codes in wanted.items():
        line, count = parts[index], 0
        for code in sorted(set(codes)):
            insertion = noqa_insertion(line, code)
            if insertion is not None:
                start, end, content = insertion
                line, count = line[:start] + content + line[end:], count + 1
        if count:
            edited[index] = (line, count)

    def joined(indices) -> str:
        return "".join(edited[i][0] if i in indices else p for i, p in enumerate(parts))

    if parses(joined(edited)) or not parses(text):
        return joined(edited), sum(n for _, n in edited.values())
    kept = {i for i in edited if parses(joined({i}))}  # rare: a comment that ends a statement early
    return joined(kept), sum(edited[i][1] for i in kept)


def fix_text(text: str, path: str, settings: Settings) -> tuple[str, Counter]:
    """``text`` (the content of ``path``) with the fixes ``settings.fix_policy`` allows applied to a
    fixed point, and the count of fixes per code; nothing is written."""
    from exportlint.runner import lint_text

    def relint(new: str, where: str) -> FileReport:
        return lint_text(new, where, settings)

    outcome = fix_files([relint(text, path)], settings, settings.fix_policy, False, relint, {path: text})
    return outcome.texts.get(path, (text, text))[1], outcome.fixed.get(path, Counter())
