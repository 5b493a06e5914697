"""``--format github``: GitHub Actions workflow commands that become pull-request annotations.

``::error file=…,line=…,col=…,endLine=…,endColumn=…,title=EXL001 tensor-item::message``, with
``warning``/``notice`` for the lower severities; a finding with a fix says so (``fix: … (`exportlint --fix`)``).  Escaping follows ``@actions/core``
(``toolkit/packages/core/src/command.ts``): data escapes ``%``, CR and LF; property values
also escape ``:`` and ``,``.
"""

from __future__ import annotations

import os
from pathlib import Path

from exportlint.diagnostics import Diagnostic, FileReport, Severity
from exportlint.reporters import RenderContext

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` (the checkout root in a workflow), else absolute; ``/``-separated."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, cwd)
    outside = relative == os.pardir or relative.startswith(os.pardir + os.sep)
    return Path(absolute if outside else relative).as_posix()


def command(diag: Diagnostic, cwd: str) -> str:
    properties = {
        "file": workspace_path(diag.path, cwd),
        "line": diag.line,
        "col": diag.column,
        "endLine": diag.end_line,
        "endColumn": diag.end_column,
        "title": f"{diag.code} {diag.name}",
    }
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    message = f"{diag.message}\nhint: {diag.hint}" if diag.hint else diag.message
    if diag.fix:
        how = {"safe": "exportlint --fix", "unsafe": "exportlint --fix --unsafe-fixes"}.get(diag.fix.get("applicability", ""))
        message += f"\nfix: {diag.fix.get('message', '')}" + (f" (`{how}`)" if how else "")
    return f"::{COMMAND[diag.severity]} {props}::{escape_data(message)}"


def render(reports: list[FileReport], ctx: RenderContext) -> str:
    cwd = os.path.abspath(ctx.extra.get("cwd", os.getcwd()))
    return "".join(command(d, cwd) + "\n" for r in reports for d in r.diagnostics)
