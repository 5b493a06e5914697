"""The ``exportlint`` command.

``exportlint [PATH ...]`` lints; ``exportlint rule CODE|NAME``, ``exportlint rules``,
``exportlint sites``, ``exportlint spec`` and ``exportlint lsp`` (alias ``server``) are subcommands when they are the first argument (lint a
directory with one of those names as ``exportlint ./rules`` or ``exportlint -- rules``).

Exit codes: 0 nothing at or above ``--fail-on``; 1 findings; 2 usage error, bad configuration,
a path that does not exist, or an internal error.  User input never produces a traceback;
``EXPORTLINT_DEBUG=1`` shows the traceback of an internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exportlint import __version__
from exportlint.reporters import FORMATS

if TYPE_CHECKING:
    from exportlint.config import Settings
    from exportlint.diagnostics import FileReport
    from exportlint.runner import LintResult

SUBCOMMANDS = ("rule", "rules", "lsp", "server", "sites", "spec")
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """A problem with what the user asked for: one line on stderr, exit 2."""


def _error(message: str) -> None:
    sys.stderr.write(f"exportlint: error: {message}\n")


# ---------------------------------------------------------------------------------------------
# Argument parsing


def _lint_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="exportlint",
        description="Find PyTorch model code that breaks or silently corrupts model export.",
        epilog="Subcommands: `exportlint rule CODE|NAME` (a rule's documentation), "
        "`exportlint rules` (the catalogue), `exportlint sites` (the export calls found), "
        "`exportlint spec FILE:Class` (an export call with dynamic_shapes), `exportlint lsp` (language server).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or directories to lint (default: .); - reads stdin")
    p.add_argument("--version", action="version", version=f"exportlint {__version__}")
    out = p.add_argument_group("output")
    out.add_argument("--format", default="text", choices=list(FORMATS), help="output format")
    out.add_argument("--output-file", metavar="PATH", help="write the output to PATH")
    out.add_argument("--statistics", action="store_true", help="a count of findings by rule")
    out.add_argument("--no-color", action="store_true", help="never colour the output")
    out.add_argument("-q", "--quiet", action="store_true",
                     help="print only the summary line, nothing when clean")
    rules = p.add_argument_group("rules")
    rules.add_argument("--select", action="append", metavar="CODES",
                       help="comma-separated codes, prefixes (EXL0) or names to report")
    rules.add_argument("--ignore", action="append", metavar="CODES",
                       help="comma-separated codes, prefixes or names not to report")
    rules.add_argument("--target", choices=["export", "trace"],
                       help="export: torch.export and ONNX dynamo (default); "
                       "trace: jit.trace and TorchScript ONNX")
    rules.add_argument("--fail-on", choices=["error", "warning", "info"],
                       help="lowest severity that fails the run (default: error)")
    rules.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    rules.add_argument("--show-suppressed", action="store_true",
                       help="also list suppressed findings (marked as such)")
    rules.add_argument("--report-unused-suppressions", action="store_true",
                       help="warn on stderr about suppression comments that suppress nothing")
    fixes = p.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply safe fixes and report what remains")
    fixes.add_argument("--unsafe-fixes", action="store_true",
                       help="also apply unsafe fixes (eager behaviour may change; review them)")
    fixes.add_argument("--no-unsafe-fixes", action="store_true", help="override unsafe-fixes = true of the config")
    fixes.add_argument("--fix-only", action="store_true", help="apply fixes, report only how many")
    fixes.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff and change nothing (exit 1 when there are fixes)")
    fixes.add_argument("--show-fixes", action="store_true",
                       help="show each finding's fix, and what --fix fixed per file and code")
    fixes.add_argument("--add-noqa", action="store_true",
                       help="add a `# noqa: CODE` to every line with a finding (to adopt exportlint on existing code)")
    run = p.add_argument_group("files and run")
    run.add_argument("--config", metavar="PATH",
                     help="use this pyproject.toml (or a .toml holding the settings at top level)")
    run.add_argument("--stdin-filename", metavar="PATH",
                     help="the file name stdin stands for (without PATHs: read stdin)")
    run.add_argument("--force-exclude", action="store_true",
                     help="apply exclusions to files named on the command line too")
    run.add_argument("--include-modular-sources", action="store_true",
                     help="also lint transformers-style modular_*.py files that have a generated modeling_*.py twin")
    run.add_argument("--jobs", "-j", type=_positive_int, metavar="N",
                     help="processes to use (default: CPU count)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    ctx = p.add_argument_group(
        "export context (otherwise read from the export calls in the linted files; see `exportlint sites`)")
    ctx.add_argument("--root", action="append", metavar="SPEC",
                     help="an exported Module class, module_or_file:Class (repeatable); "
                     "with --dynamic-dim / --input it is judged with those dims and inputs")
    ctx.add_argument("--exporter", metavar="NAME",
                     help="the declared roots' exporter: torch.export, draft_export, onnx-dynamo, onnx-legacy, jit.trace")
    ctx.add_argument("--opset", type=_positive_int, metavar="N", help="the declared roots' ONNX opset")
    ctx.add_argument("--torch-version", metavar="X.Y",
                     help="the torch the export runs on (default: the installed one); decides defaults like dynamo=")
    dyn = p.add_argument_group("dynamic pass (needs exportlint[dynamic])")
    dyn.add_argument("--dynamic", action="store_true",
                     help="also run the real exporters on the model to confirm findings")
    dyn.add_argument("--model", metavar="SPEC",
                     help="the model to build: module_or_file:ClassOrFactory")
    dyn.add_argument("--input", action="append", default=[], metavar="SPEC",
                     help="an example input, e.g. 1x3x224x224:float32 (repeatable, in order)")
    dyn.add_argument("--dynamic-dim", action="append", default=[], metavar="SPEC",
                     help="a dynamic dimension, input:dim[:name] (repeatable)")
    dyn.add_argument("--dynamic-timeout", type=float, metavar="SECONDS",
                     help="time limit per model file (default: 300)")
    dyn.add_argument("--dynamic-memory", metavar="SIZE",
                     help="memory cap of the exporter process, e.g. 8G (default: 3/4 of RAM)")
    dyn.add_argument("--strict-export", action="store_true", help="torch.export(strict=True)")
    dyn.add_argument("--summary-json", metavar="PATH",
                     help="write the per-exporter summary as JSON")
    return p


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    def joined(values: list[str] | None) -> list[str] | None:
        if values is None:
            return None
        return [v.strip() for item in values for v in item.split(",") if v.strip()]

    return {
        "select": joined(args.select),
        "ignore": joined(args.ignore),
        "target": args.target,
        "fail_on": args.fail_on,
        "jobs": args.jobs,
        "cache": False if args.no_cache else None,
        "show_suppressed": True if args.show_suppressed else None,
        "report_unused_suppressions": True if args.report_unused_suppressions else None,
        "force_exclude": True if args.force_exclude else None,
        "include_modular_sources": True if args.include_modular_sources else None,
        "export": _declared_export(args),
        "unsafe_fixes": True if args.unsafe_fixes else (False if args.no_unsafe_fixes else None),
    }


def _declared_export(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--root`` and the flags that describe it, as a ``[tool.exportlint.export]`` table."""
    if not args.root:
        if args.exporter or args.opset is not None or args.torch_version:
            raise UsageError("--exporter, --opset and --torch-version describe a declared root: also give --root")
        return None
    table: dict[str, Any] = {"roots": args.root, "dynamic-dims": args.dynamic_dim, "inputs": args.input}
    for key, value in (("exporter", args.exporter), ("opset", args.opset), ("torch-version", args.torch_version)):
        if value is not None:
            table[key] = value
    return table


# ---------------------------------------------------------------------------------------------
# Linting


def _use_color(args: argparse.Namespace) -> bool:
    if args.no_color or args.output_file or args.format != "text":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout is not None and sys.stdout.isatty()


def _config_start(args: argparse.Namespace) -> Path:
    for path in args.paths:
        if path != "-":
            return Path(path)
    return Path(args.stdin_filename) if args.stdin_filename else Path(".")


def _lint(args: argparse.Namespace) -> int:
    from exportlint.config import ConfigError, load_settings

    _check_working_directory()
    try:
        settings = load_settings(_config_start(args), _overrides(args), args.config)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    renderer = _renderer(args.format)
    result = _collect(args, settings)
    for path in result.missing:
        _error(f"path does not exist: {path}")
    outcome = None
    if args.add_noqa:
        return _add_noqa(result)
    if _fixes().wants_fixes(args):
        outcome, result, done = _fix(args, settings, result)
        if done is not None:
            return done
    dynamic_summary = _run_dynamic(args, result.reports, settings, result.context) if args.dynamic else None

    from exportlint.reporters import RenderContext

    ctx = RenderContext(
        target=settings.target, color=_use_color(args), quiet=args.quiet,
        statistics=args.statistics, show_suppressed=settings.show_suppressed,
        dynamic_summary=dynamic_summary,
        extra={"version": __version__, "cwd": os.getcwd(), "root": str(settings.root),
               "fix_policy": settings.fix_policy, "show_fixes": args.show_fixes, "fixed": outcome},
    )
    output = renderer(result.reports, ctx)
    if outcome is not None and getattr(args, "stdin_source", None) and not args.output_file:
        _fixes().stream(output, err=True)  # stdout holds the fixed source
    else:
        _write(output, args.output_file)
    if dynamic_summary is not None and not args.quiet:
        on_stdout = args.format == "text" and not args.output_file
        _render_dynamic_summary(dynamic_summary, ctx.color, stderr=not on_stdout)
    for unused in result.unused_suppressions:
        sys.stderr.write(f"{unused}\n")
    return _exit_code(args, settings, result)


def _collect(args: argparse.Namespace, settings: Settings, stdin: bytes | None = None) -> LintResult:
    """Lint the paths (default ``.``) and stdin (``-``, or ``--stdin-filename`` alone);
    ``stdin``: its content when already read (it is kept in ``args.stdin_source``)."""
    from exportlint.files import is_excluded
    from exportlint.runner import LintResult, lint_bytes, run

    if args.stdin_filename and not args.paths:
        args.paths = ["-"]  # like ruff
    paths = [p for p in args.paths if p != "-"]
    result = LintResult(reports=[])
    if paths or not args.paths:
        from exportlint.context import ContextError

        try:
            result = run(paths, settings, progress=sys.stderr.isatty() and not args.quiet)
        except ContextError as e:
            raise UsageError(str(e)) from None
    if "-" in args.paths:
        name = args.stdin_filename or "-"
        data = _read_stdin() if stdin is None else stdin
        args.stdin_source = (name, data)
        if not (settings.force_exclude and is_excluded(name, settings.exclude, settings.root)):
            result.reports.append(lint_bytes(data, name, settings))
            result.reports.sort(key=lambda r: r.path)
    return result


# ---------------------------------------------------------------------------------------------
# Fixes (exportlint.fixes.command)


def _fixes():
    from exportlint.fixes import command

    return command


def _fix(args: argparse.Namespace, settings: Settings, result: LintResult) -> tuple[Any, LintResult, int | None]:
    """Apply fixes; (outcome, the result to report, an exit code when nothing more is reported)."""
    from exportlint.files import SourceError, decode_source

    cmd = _fixes()
    stdin = getattr(args, "stdin_source", None)
    text = None
    if stdin is not None:
        try:
            text = decode_source(stdin[1])
        except SourceError:
            pass
    outcome = cmd.run_fixes(args, settings, result, (stdin[0], text) if text is not None else None)
    for message in outcome.errors:
        _error(message)
    failed = EXIT_ERROR if result.missing or outcome.errors else None
    if args.diff:
        cmd.stream(outcome.diff())
        cmd.stream(f"Would fix {cmd.plural(outcome.total, 'problem')}.\n", err=True)
        return outcome, result, failed or (EXIT_FINDINGS if outcome.total else EXIT_OK)
    if text is not None:
        cmd.stream(outcome.texts.get(stdin[0], (text, text))[1])
    if args.fix_only:
        cmd.stream(cmd.report_fix_only(outcome, args.show_fixes), err=text is not None)
        return outcome, result, failed or EXIT_OK
    if outcome.texts:  # report what remains in the fixed files
        fixed_stdin = outcome.texts.get(stdin[0]) if stdin else None
        result = _collect(args, settings, fixed_stdin[1].encode("utf-8") if fixed_stdin else (stdin[1] if stdin else None))
    return outcome, result, failed


def _add_noqa(result: LintResult) -> int:
    cmd = _fixes()
    added, errors = cmd.run_add_noqa(result)
    for message in errors:
        _error(message)
    cmd.stream(f"Added {cmd.plural(added, 'noqa directive')}.\n", err=True)
    return EXIT_ERROR if errors or result.missing else EXIT_OK


def _read_stdin() -> bytes:
    """Standard input, up to one byte over the file size limit (the rest is not read: the
    source is reported as too large)."""
    from exportlint.files import MAX_FILE_BYTES

    if sys.stdin is None:
        raise UsageError("standard input is closed; nothing to lint from -")
    try:
        return sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise UsageError(f"cannot read standard input: {e.strerror or e}") from None


def _check_working_directory() -> None:
    try:
        os.getcwd()
    except OSError:
        raise UsageError(
            "the current working directory no longer exists; run exportlint from an existing directory"
        ) from None


def _exit_code(args: argparse.Namespace, settings: Settings, result: LintResult) -> int:
    if result.missing:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_OK
    failing = any(
        d.severity.rank >= settings.fail_on.rank and not d.suppressed
        for r in result.reports for d in r.diagnostics
    )
    return EXIT_FINDINGS if failing else EXIT_OK


def _renderer(name: str):
    from exportlint.reporters import get_renderer

    try:
        return get_renderer(name)
    except ImportError as e:
        raise UsageError(f"output format {name!r} is not available: {e}") from None


def _write(output: str, output_file: str | None) -> None:
    # A file name that is not UTF-8 (held as surrogate escapes) is written as a \udcXX escape:
    # the output stays valid UTF-8, and JSON readers get the name back as Python spells it.
    data = output.encode("utf-8", "backslashreplace")
    if output_file is None:
        if sys.stdout is None:
            raise UsageError("standard output is closed; use --output-file")
        try:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise UsageError(f"cannot write to standard output: {e.strerror or e}") from None
        return
    try:
        with open(output_file, "wb") as f:
            f.write(data)
    except OSError as e:
        raise UsageError(f"cannot write output file {output_file}: {e.strerror or e}") from None


# ---------------------------------------------------------------------------------------------
# Dynamic pass


def _run_dynamic(args: argparse.Namespace, reports: list[FileReport], settings: Settings, context: Any = None) -> list[dict]:
    try:
        from exportlint.dynamic import DynamicOptions, DynamicOptionsError, run_dynamic
    except ImportError as e:
        raise UsageError(
            f"the dynamic pass is not available ({e}); install it with "
            "`pip install 'exportlint[dynamic]'`"
        ) from None
    options = DynamicOptions(
        model=args.model, inputs=list(args.input), dynamic_dims=list(args.dynamic_dim),
        timeout=args.dynamic_timeout, memory=args.dynamic_memory,
        strict=True if args.strict_export else None, target=settings.target,
        summary_json=args.summary_json, config=settings.dynamic,
        base=str(settings.root) if settings.config_file else None,
    )
    try:
        rows = run_dynamic(reports, options, progress=False if args.quiet else None, context=context)
    except DynamicOptionsError as e:
        raise UsageError(str(e)) from None
    except OSError as e:  # e.g. --summary-json cannot be written
        raise UsageError(f"dynamic pass: {e}") from None
    _tidy_after_dynamic(reports, settings)
    return rows


def _tidy_after_dynamic(reports: list[FileReport], settings: Settings) -> None:
    """The dynamic pass adds findings (EXL090/EXL091): filter, sort, and give them source lines."""
    from exportlint.files import SourceError, read_source, split_lines

    for r in reports:
        r.diagnostics = sorted(
            (d for d in r.diagnostics if settings.is_enabled(d.code, r.path)),
            key=lambda d: d.sort_key(),
        )
        if r.diagnostics and r.lines is None:
            try:
                r.lines = split_lines(read_source(r.path)[1])
            except SourceError:
                pass
    reports.sort(key=lambda r: r.path)


def _render_dynamic_summary(rows: list[dict], color: bool, stderr: bool) -> None:
    from rich.console import Console

    from exportlint.dynamic import render_summary

    render_summary(rows, Console(stderr=stderr, no_color=not color, force_terminal=color or None))


# ---------------------------------------------------------------------------------------------
# Subcommands


def _rule(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="exportlint rule", description="Show a rule's documentation.")
    p.add_argument("rule", metavar="CODE|NAME")
    p.add_argument("--no-color", action="store_true")
    args = p.parse_args(argv)
    from exportlint.catalogue import CATALOGUE, doc_path, lookup

    rule = lookup(args.rule)
    if rule is None:
        known = "\n".join(f"  {r.code}  {r.name}" for r in CATALOGUE.values())
        raise UsageError(f"unknown rule {args.rule!r}; known rules:\n{known}")
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(no_color=args.no_color or bool(os.environ.get("NO_COLOR")))
    path = doc_path(rule)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        text = (
            f"# {rule.code} {rule.name}\n\n{rule.summary}\n\n"
            f"Severity: {rule.export.value} (export), {rule.trace.value} (trace).\n\n"
            f"Documentation: {rule.url}\n"
        )
    console.print(Markdown(text))
    return EXIT_OK


def _rules(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="exportlint rules", description="List the rule catalogue.")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--no-color", action="store_true")
    args = p.parse_args(argv)
    from exportlint.catalogue import CATALOGUE

    if args.format == "json":
        import json

        rows = [
            {"code": r.code, "name": r.name, "summary": r.summary, "export": r.export.value,
             "trace": r.trace.value, "url": r.url}
            for r in CATALOGUE.values()
        ]
        _write(json.dumps(rows, indent=2) + "\n", None)
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("code", "name", "export", "trace", "summary"):
        table.add_column(column)
    for r in CATALOGUE.values():
        table.add_row(r.code, r.name, r.export.value, r.trace.value, r.summary)
    console = Console(no_color=args.no_color or bool(os.environ.get("NO_COLOR")))
    if not console.is_terminal:
        console.width = 200  # one line per rule when piped
    console.print(table)
    return EXIT_OK


def _lsp(argv: list[str]) -> int:
    try:
        from exportlint.lsp.server import main as serve
    except ImportError as e:
        raise UsageError(
            f"the language server is not available ({e}); install it with "
            "`pip install 'exportlint[lsp]'`"
        ) from None
    try:
        return serve(argv)
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as e:
        raise UsageError(f"lsp: {e.strerror or e}: {e.filename}") from None


def _sites(argv: list[str]) -> int:
    from exportlint.context.commands import CommandError, sites_command

    try:
        return sites_command(argv)
    except CommandError as e:
        raise UsageError(str(e)) from None


def _spec(argv: list[str]) -> int:
    from exportlint.context.commands import CommandError
    from exportlint.context.spec import spec_command

    try:
        return spec_command(argv)
    except CommandError as e:
        raise UsageError(str(e)) from None


# ---------------------------------------------------------------------------------------------


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        command = {"rule": _rule, "rules": _rules, "lsp": _lsp, "server": _lsp, "sites": _sites, "spec": _spec}[argv[0]]
        return command(argv[1:])
    return _lint(_lint_parser().parse_args(argv))


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (never raises for user input)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if sys.stderr is None:  # closed: messages go nowhere rather than failing
        sys.stderr = open(os.devnull, "w")
    try:
        return _dispatch(argv)
    except SystemExit as e:  # argparse: --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (EXIT_OK if e.code is None else EXIT_ERROR)
    except UsageError as e:
        _error(str(e))
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("exportlint: interrupted\n")
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FINDINGS
    except Exception as e:
        if os.environ.get("EXPORTLINT_DEBUG"):
            raise
        _error(
            f"internal error: {type(e).__name__}: {e} "
            "(set EXPORTLINT_DEBUG=1 for the traceback; please report it)"
        )
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
