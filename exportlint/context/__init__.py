"""The export context: what is exported, by which exporter, with which inputs and dynamic dims.

Read statically from the export calls of the linted files (:mod:`.sites`) and from
``[tool.exportlint.export]`` / ``--root`` (:mod:`.declared`).  When at least one exported root
resolves to a Module class of the linted files, only code reachable from the roots is export code,
each root is judged under its exporter's target, and declared dynamic dims decide which shapes
vary.  Without any, exportlint behaves as if every Module were exported with every dim dynamic.
"""

from __future__ import annotations

from typing import Any

from exportlint.context.model import ExportContext, Judgement, Root, Site
from exportlint.context.sites import file_sites, may_have_sites

__all__ = ["ContextError", "ExportContext", "Judgement", "Root", "Site", "build_context"]


class ContextError(ValueError):
    """A declared root that does not resolve (a usage error: exit 2, one line)."""


def build_context(texts: dict[str, str], settings: Any, project: Any, partial: bool = False) -> ExportContext:
    """Sites of every linted file (in path and line order), then the declared roots.  ``partial``:
    ``texts`` is part of the project (an editor buffer): declared roots in other files are left out
    instead of being an error."""
    declared = getattr(settings, "export", None)
    version = declared.torch_version if declared is not None else None
    sites: list[Site] = []
    parsed: dict = {}  # the other linted files the resolution reads, once each
    for path in sorted(texts):
        if may_have_sites(texts[path]):
            sites += file_sites(path, texts[path], project, version, parsed)
    sites.sort(key=lambda s: (s.path, s.span.line, s.span.column))
    if declared is not None and not declared.empty:
        from exportlint.context.declared import declared_sites

        if project is None:
            from exportlint.analysis.project import Project

            project = Project(list(texts))
        try:
            sites += declared_sites(declared, str(settings.root), project, skip_missing=partial)
        except ValueError as e:
            raise ContextError(f"[tool.exportlint.export] / --root: {e}") from None
    return ExportContext(sites, settings.target if getattr(settings, "target_explicit", False) else None)
