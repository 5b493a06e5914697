"""``--format json-lines``: one JSON object per diagnostic per line, for streaming consumers.

Each line is exactly :meth:`Diagnostic.to_dict` (the ``--format json`` object).
"""

from __future__ import annotations

import json

from exportlint.diagnostics import FileReport
from exportlint.reporters import RenderContext


def render(reports: list[FileReport], ctx: RenderContext) -> str:
    return "".join(
        json.dumps(d.to_dict(), ensure_ascii=False) + "\n" for r in reports for d in r.diagnostics
    )
