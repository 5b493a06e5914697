"""``exportlint sites`` (what exportlint believes is exported, and how) and ``exportlint spec``
(a ready export call with ``dynamic_shapes`` for a root)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from exportlint.context.model import ExportContext, Site


class CommandError(Exception):
    """A user mistake: one line on stderr, exit 2."""


def _settings_and_context(paths: list[str], config: str | None, overrides: dict[str, Any]) -> tuple[Any, ExportContext, dict[str, str]]:
    from exportlint.config import ConfigError, load_settings
    from exportlint.context import ContextError
    from exportlint.files import SourceError, discover, read_source
    from exportlint.runner import _make_project, export_context

    start = Path(paths[0]) if paths else Path(".")
    try:
        settings = load_settings(start, overrides, config)
    except ConfigError as e:
        raise CommandError(str(e)) from None
    found = discover(paths or ["."], settings.exclude, settings.root, settings.force_exclude, settings.include_modular_sources)
    for path in found.missing:
        raise CommandError(f"path does not exist: {path}")
    texts: dict[str, str] = {}
    for path in found.files:
        try:
            texts[path] = read_source(path)[1]
        except SourceError:
            continue
    try:
        context = export_context(texts, settings, _make_project(list(texts)) if texts else None)
    except ContextError as e:
        raise CommandError(str(e)) from None
    return settings, context, texts


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    p.add_argument("--config", metavar="PATH", help="use this pyproject.toml")
    p.add_argument("--torch-version", metavar="X.Y", help="the torch the export runs on (default: the installed one)")


def sites_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="exportlint sites",
        description="List the export calls and declared roots exportlint found, and what it resolved them to.",
    )
    _common(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    args = p.parse_args(argv)
    overrides = {"export": {"torch-version": args.torch_version}} if args.torch_version else {}
    _, context, _ = _settings_and_context(args.paths, args.config, overrides)
    if args.format == "json":
        print(json.dumps([_relative(s.describe()) for s in context.sites], indent=2))
        return 0
    if not context.sites:
        print("No export calls or declared roots found: every nn.Module is linted as exported, every dim dynamic.")
        return 0
    for site in context.sites:
        print(render_site(site))
    judged = context.judgements()
    if judged and context.restricts:
        roots = ", ".join(
            f"{name} ({'/'.join(j.target.value for j in js)})" for (_, name), js in sorted(judged.items(), key=lambda kv: kv[0][1])
        )
        scopes = ", ".join(_rel(d) or "." for d in sorted(context.scopes()))
        print(f"\nExport code below {scopes}: what is reachable from {roots}; other Modules there are not "
              "linted as exported. Files elsewhere are linted as if every Module were exported.")
    else:
        unresolved = sum(1 for s in context.sites if s.target is not None and s.root is None)
        print(f"\n{unresolved} export call(s) could not be resolved to a class of the linted files: "
              "every nn.Module is linted as exported (declare the roots with --root or [tool.exportlint.export]).")
    return 0


def render_site(site: Site) -> str:
    d = _relative(site.describe())
    where = "declared" if site.declared else f"{d['path']}:{d['line']}:{d['column']}"
    root = f"{site.root.name} ({_rel(site.root.path)})" if site.root else f"unresolved: {site.why_unresolved}"
    lines = [f"{where}: {site.exporter} via `{site.func}` of `{site.model}` -> {root}"]
    if site.inputs is not None:
        shapes = ", ".join(
            ("x".join("?" if n is None else str(n) for n in i.shape) if i.shape is not None else f"`{i.text}`") for i in site.inputs
        )
        lines.append(f"    inputs: {shapes}")
    if site.dims_from:
        dims = "; ".join(f"{k}: " + (", ".join(f"{dim}={t}" for dim, t in v.items()) or "static")
                         for k, v in d["dynamic_dims"].items())
        lines.append(f"    dynamic dims ({site.dims_from}): {dims or 'none'}")
    else:
        lines.append("    dynamic dims: not declared (every dim treated as possibly dynamic)")
    extras = [f"{k}={v}" for k, v in (("opset", site.opset), ("dynamo", site.dynamo), ("strict", site.strict),
                                        ("training", site.training)) if v is not None]
    mode = {True: "eval mode", False: "training mode (no .eval())", None: "mode unknown"}[site.eval_mode]
    lines.append("    " + ", ".join([mode, *extras]))
    return "\n".join(lines)


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _relative(d: dict[str, Any]) -> dict[str, Any]:
    d = dict(d)
    d["path"] = _rel(d["path"])
    if d.get("root"):
        d["root"] = {**d["root"], "path": _rel(d["root"]["path"])}
    return d
