"""``--format json``: one JSON array of diagnostics (see ``exportlint/schema/diagnostics.schema.json``).

Objects are :meth:`Diagnostic.to_dict`, sorted by path, line, column and code.  Suppressed
diagnostics appear only with ``--show-suppressed`` (with ``"suppressed": true``).
"""

from __future__ import annotations

import json

from exportlint.diagnostics import Diagnostic, FileReport
from exportlint.reporters import RenderContext


def render(reports: list[FileReport], ctx: RenderContext) -> str:
    diagnostics = sorted((d for r in reports for d in r.diagnostics), key=Diagnostic.sort_key)
    return json.dumps([d.to_dict() for d in diagnostics], indent=2, ensure_ascii=False) + "\n"
