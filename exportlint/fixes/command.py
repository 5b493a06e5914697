"""The command-line side of fixes: ``--fix``, ``--fix-only``, ``--diff``, ``--add-noqa``.

Conventions are ruff's: ``--fix`` writes the fixes and reports what remains (exit 1 when
something at ``--fail-on`` remains); ``--fix-only`` writes and reports only the count (exit 0);
``--diff`` writes nothing, prints a unified diff and exits 1 when there is something to fix;
stdin (``-``) with ``--fix`` prints the fixed source on stdout and the remaining findings on
stderr.  ``--add-noqa`` suppresses every current finding on its line.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

from exportlint.catalogue import CATALOGUE
from exportlint.config import Settings
from exportlint.fixes.driver import FixOutcome, add_noqa, fix_files, write_source

FIXING_FLAGS = ("fix", "fix_only", "diff")


def wants_fixes(args: Any) -> bool:
    return any(getattr(args, flag, False) for flag in FIXING_FLAGS)


def fixed_lines(outcome: FixOutcome) -> list[str]:
    """``--show-fixes`` after ``--fix``: what was fixed, per file and code."""
    lines = []
    for path, counts in sorted(outcome.fixed.items()):
        lines.append(f"  {path}:")
        for code, n in sorted(counts.items()):
            lines.append(f"    {n} × {code} ({CATALOGUE[code].name})")
    return lines


def plural(n: int, word: str) -> str:
    """``1 problem``, ``2 problems``, ``2 more fixes``."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('x', 's', 'sh', 'ch')) else 's'}"


def run_fixes(args: Any, settings: Settings, result: Any, stdin: tuple[str, str] | None) -> FixOutcome:
    """Apply the fixes of ``result`` (the first lint); ``stdin`` is (name, text) when linted."""
    from exportlint.runner import lint_text

    def relint(text: str, path: str):
        return lint_text(text, path, settings)

    texts = {stdin[0]: stdin[1]} if stdin else None
    return fix_files(result.reports, settings, settings.fix_policy, not args.diff, relint, texts)


def report_fix_only(outcome: FixOutcome, show_fixes: bool) -> str:
    if not outcome.total:
        return "No fixes applied.\n"
    lines = [f"Fixed {plural(outcome.total, 'problem')}" + (":" if show_fixes else ".")]
    if show_fixes:
        lines += fixed_lines(outcome)
    return "\n".join(lines) + "\n"


def run_add_noqa(result: Any) -> tuple[int, list[str]]:
    """Add suppressions for every finding of ``result``; (directives added, errors)."""
    from exportlint.files import SourceError, read_source

    added, errors = 0, []
    for report in result.reports:
        findings = [d for d in report.diagnostics if not d.suppressed and d.code not in ("EXL900", "EXL901")]
        if not findings:
            continue
        try:
            data, text = read_source(report.path)
        except SourceError:
            continue
        new, n = add_noqa(text, findings)
        if n:
            error = write_source(report.path, data, new)
            if error:
                errors.append(error)
            else:
                added += n
    return added, errors


def fix_counts(reports: list[Any], policy: Any) -> tuple[int, int]:
    """(findings ``--fix`` would fix, more that ``--unsafe-fixes`` would fix) under the policy."""
    from exportlint.fixes.model import Fix

    counts: Counter = Counter()
    for r in reports:
        for d in r.diagnostics:
            if d.suppressed or not d.fix:
                continue
            fix = Fix.from_dict(d.fix)
            if policy.applies(d.code, fix):
                counts["fixable"] += 1
            elif policy.hidden(d.code, fix):
                counts["hidden"] += 1
    return counts["fixable"], counts["hidden"]


def stream(text: str, err: bool = False) -> None:
    out = sys.stderr if err else sys.stdout
    out.write(text)
    out.flush()
