"""Turning a kept finding's fix producer into ``Diagnostic.fix`` data."""

from __future__ import annotations

import os
from typing import Any

from exportlint.diagnostics import Target
from exportlint.fixes.syntax import FixSite


def fix_of(finding: Any, target: Target, sites: dict[tuple[int, int], Any]) -> dict[str, Any] | None:
    """The finding's fix as ``Diagnostic.fix`` data, or None.  A producer that fails (a bug)
    costs the fix, never the finding (``EXPORTLINT_DEBUG=1`` raises instead)."""
    key = (id(finding.file), id(finding.top))
    try:
        site = sites.get(key)
        if site is None:
            site = sites[key] = FixSite(finding.file, finding.top, target)
        if not site.known(finding.node):
            return None
        plan = finding.fix(site)
        if plan is None:
            return None
        fix = site.resolve(plan)
    except Exception:
        if os.environ.get("EXPORTLINT_DEBUG"):
            raise
        return None
    return fix.to_dict() if fix.edits else None
