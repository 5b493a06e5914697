"""Output formats.  Every reporter renders the same :class:`~exportlint.diagnostics.FileReport` list.

A reporter module exposes ``render(reports: list[FileReport], ctx: RenderContext) -> str``.
Modules are imported lazily so that ``--format json`` never pays for rich, and no format
ever imports torch.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from exportlint.diagnostics import FileReport, Target

# format name -> module under exportlint.reporters
FORMATS: dict[str, str] = {
    "text": "text",
    "json": "json",
    "json-lines": "jsonlines",
    "lsp": "lsp",
    "sarif": "sarif",
    "github": "github",
}


@dataclass
class RenderContext:
    target: Target = Target.EXPORT
    color: bool = False
    quiet: bool = False
    statistics: bool = False
    show_suppressed: bool = False
    # Per-exporter rows from the dynamic pass (None: the dynamic pass did not run).
    dynamic_summary: list[dict[str, Any]] | None = None
    # Anything else a format may want (e.g. the tool version, the working directory).
    extra: dict[str, Any] = field(default_factory=dict)


def get_renderer(name: str) -> Callable[[list[FileReport], RenderContext], str]:
    """The ``render`` function of format ``name``; ValueError for an unknown name."""
    if name not in FORMATS:
        raise ValueError(
            f"unknown format {name!r} (expected one of: {', '.join(FORMATS)})"
        )
    module = importlib.import_module(f"exportlint.reporters.{FORMATS[name]}")
    return module.render
