"""Lint source snippets with the real engine (shared by the analysis tests)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from exportlint.analysis.project import Project
from exportlint.diagnostics import Diagnostic, Target
from exportlint.engine import analyze_source
from exportlint.parts import resolve_parts

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def lint(src: str, target: str = "export", header: bool = True) -> list[Diagnostic]:
    text = (HEADER if header else "") + textwrap.dedent(src)
    return analyze_source(text, "snippet.py", Target(target))


def codes(src: str, target: str = "export", header: bool = True) -> set[tuple[int, str]]:
    """{(line, code)}; lines count from the first line of ``src`` (the header is not counted)."""
    offset = HEADER.count("\n") if header else 0
    return {(d.line - offset, d.code) for d in lint(src, target, header)}


def just_codes(src: str, target: str = "export") -> set[str]:
    return {c for _, c in codes(src, target)}


def write_tree(root: Path, files: dict[str, str]) -> tuple[list[Path], Project]:
    """Write ``files`` (dedented) under ``root``: their paths and one project of them."""
    paths = []
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src), encoding="utf-8")
        paths.append(p)
    return paths, Project([str(p) for p in paths])


def lint_tree(root: Path, files: dict[str, str]) -> dict[str, set[tuple[int, str]]]:
    """Write ``files`` under ``root``, lint each with one project: {relative path: {(line, code)}}."""
    paths, project = write_tree(root, files)
    raw = {str(p): analyze_source(p.read_text(encoding="utf-8"), str(p), Target.EXPORT, project) for p in paths}
    resolve_parts(raw)  # what the driver does with every file's results
    out: dict[str, set[tuple[int, str]]] = {}
    for diagnostics in raw.values():
        for d in diagnostics:
            rel = str(Path(d.path).resolve().relative_to(root.resolve()))
            out.setdefault(rel, set()).add((d.line, d.code))
    return out
