"""Analyze one file's source: parse once, find entry points, run the dataflow, apply the rules.

This is the boundary between the analysis and the driver (``runner``): the driver reads
files, applies configuration and suppressions; this module only turns source text into raw
diagnostics (default severity for the target, not yet filtered).
"""

from __future__ import annotations

from exportlint.diagnostics import Diagnostic, Target


def analyze_source(
    text: str,
    path: str,
    target: Target = Target.EXPORT,
    project: "object | None" = None,
) -> list[Diagnostic]:
    """Raw diagnostics for ``text`` (the content of ``path``).

    May return diagnostics whose ``path`` is another file of ``project`` (a helper function
    imported from there and reached from this file's modules); the driver regroups and
    de-duplicates them by :meth:`Diagnostic.identity`.  Never raises for bad input:
    syntax errors become EXL900, analyzer failures EXL901.
    """
    return []  # replaced by the real analysis
