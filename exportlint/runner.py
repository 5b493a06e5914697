"""The driver: files in, filtered and suppressed :class:`FileReport` objects out.

``lint_paths`` / ``run`` discover and read files, serve unchanged files from the cache, analyze
the rest (in a process pool for more than :data:`PARALLEL_THRESHOLD` files), regroup the raw
diagnostics by path, de-duplicate them, and apply severity overrides, select / ignore,
per-file-ignores and suppressions.  A file that cannot be read becomes an EXL900 diagnostic on
it; an analyzer exception or a crashed worker becomes an EXL901 diagnostic on the file being
analyzed; the run always goes on.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from exportlint.cache import Cache, content_hash, file_keys
from exportlint.catalogue import CATALOGUE, SUPERSEDED, SUPERSEDES, SUPERSEDING
from exportlint.config import Settings
from exportlint.diagnostics import Diagnostic, FileReport, Note, Target
from exportlint.files import SourceError, check_size, decode_source, discover, read_source, split_lines
from exportlint.parts import is_marker, resolve_parts
from exportlint.suppressions import FileSuppressions, apply_suppressions, parse_suppressions

if TYPE_CHECKING:
    from concurrent.futures import Future

PARALLEL_THRESHOLD = 8  # more files than this are analyzed in a process pool
PROGRESS_THRESHOLD = 20  # more files than this show a progress bar (stderr is a terminal)

_HINTS = {
    "EXL900": "exportlint reads Python source (UTF-8 or a PEP 263 encoding); fix or exclude the file",
    "EXL901": "this is a bug in exportlint: please report it with the file; other files are unaffected",
}


@dataclass
class UnusedSuppression:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class LintResult:
    reports: list[FileReport]
    missing: list[str] = field(default_factory=list)  # command-line paths that do not exist
    unused_suppressions: list[UnusedSuppression] = field(default_factory=list)
    analyzed: int = 0  # files given to the engine (the rest came from the cache or were skipped)
    cached: int = 0
    context: Any = None  # the run's ExportContext (export calls found, declared roots)


def file_diagnostic(code: str, path: str, line: int, message: str, target: Target) -> Diagnostic:
    """An EXL900/EXL901 diagnostic the driver itself reports on a whole file (at column 1)."""
    rule = CATALOGUE[code]
    return Diagnostic(
        path=path, line=line, column=1, end_line=line, end_column=1,
        code=code, name=rule.name, severity=rule.severity(target), target=target,
        message=message, hint=_HINTS[code], url=rule.url,
    )


# ---------------------------------------------------------------------------------------------
# Analysis (in this process or in pool workers)

_WORKER_STATE: tuple[Target, Any, Any] | None = None


def _analyze_one(
    text: str, path: str, target: Target, project: Any, incremental: bool = False, context: Any = None
) -> list[Diagnostic]:
    from exportlint import engine

    try:
        if incremental:  # only the editor path asks for it
            return engine.analyze_source(text, path, target, project, incremental=True, context=context)
        return engine.analyze_source(text, path, target, project, context=context)
    except Exception as e:  # the engine promises not to raise; a bug must not stop the run
        return [file_diagnostic("EXL901", path, 1, f"internal error: {type(e).__name__}: {e}", target)]


def _init_worker(target: Target, project: Any, context: Any) -> None:
    import signal

    global _WORKER_STATE
    _WORKER_STATE = (target, project, context)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C


def _analyze_chunk(items: list[tuple[str, str]]) -> list[tuple[str, list[Diagnostic]]]:
    assert _WORKER_STATE is not None
    target, project, context = _WORKER_STATE
    return [(path, _analyze_one(text, path, target, project, context=context)) for path, text in items]


def _make_project(paths: list[str]) -> Any:
    from exportlint.analysis.project import Project  # imports libcst: only when analyzing

    return Project(paths)


def _pool_context():
    import multiprocessing

    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _pool_round(
    chunks: list[list[tuple[str, str]]],
    jobs: int,
    target: Target,
    project: Any,
    done: Callable[[str, list[Diagnostic]], None],
    context: Any = None,
) -> list[list[tuple[str, str]]]:
    """Analyze ``chunks`` in one pool; returns the chunks lost to a crashed worker."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    failed: list[list[tuple[str, str]]] = []
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(chunks)), mp_context=_pool_context(),
        initializer=_init_worker, initargs=(target, project, context),
    ) as pool:
        futures: dict[Future, list[tuple[str, str]]] = {
            pool.submit(_analyze_chunk, chunk): chunk for chunk in chunks
        }
        try:
            for future in as_completed(futures):
                chunk = futures[future]
                try:
                    results = future.result()
                except BrokenProcessPool:
                    failed.append(chunk)
                    continue
                except Exception as e:  # e.g. a result that cannot be sent back
                    results = [
                        (path, [file_diagnostic("EXL901", path, 1, f"internal error: {e}", target)])
                        for path, _ in chunk
                    ]
                for path, diagnostics in results:
                    done(path, diagnostics)
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)  # workers finish their current chunk
            raise
    return failed


def _chunks(items: list[tuple[str, str]], jobs: int) -> list[list[tuple[str, str]]]:
    """Largest files first; small files grouped (up to 16) to cut per-task overhead, so that
    each chunk holds about 1/(8 * jobs) of the source."""
    items = sorted(items, key=lambda item: -len(item[1]))
    budget = sum(len(text) for _, text in items) / (8 * jobs)
    chunks: list[list[tuple[str, str]]] = []
    weight = budget
    for item in items:
        if weight >= budget or len(chunks[-1]) >= 16:
            chunks.append([])
            weight = 0
        chunks[-1].append(item)
        weight += len(item[1])
    return chunks


def _analyze_parallel(
    items: list[tuple[str, str]], jobs: int, target: Target, project: Any,
    done: Callable[[str, list[Diagnostic]], None], context: Any = None,
) -> None:
    """Chunks first; after a worker crash, the lost files one per task, then each file alone,
    so that only the file that really crashes the analyzer gets EXL901."""
    chunks = _pool_round(_chunks(items, jobs), jobs, target, project, done, context)
    if chunks:
        chunks = _pool_round([[it] for c in chunks for it in c], jobs, target, project, done, context)
    for chunk in chunks:
        if _pool_round([chunk], 1, target, project, done, context):
            path = chunk[0][0]
            done(path, [file_diagnostic(
                "EXL901", path, 1,
                "the analyzer process crashed on this file (segmentation fault or out of memory)",
                target,
            )])


def tune_gc() -> None:
    """A parse allocates hundreds of thousands of nodes that live until the file is done, so
    the default generation-0 threshold (700) runs the cyclic collector thousands of times per
    file for nothing: raising it made the analysis about 35% faster (benchmarks/bench_static.py).
    Garbage is still collected, just in larger batches.  Forked workers inherit the setting."""
    gc.set_threshold(50_000, 20, 100)


def _analyze(
    items: list[tuple[str, str]], settings: Settings, project: Any, progress: bool, context: Any = None
) -> dict[str, list[Diagnostic]]:
    tune_gc()
    results: dict[str, list[Diagnostic]] = {}
    bar = _ProgressBar(len(items)) if progress and len(items) > PROGRESS_THRESHOLD else None

    def done(path: str, diagnostics: list[Diagnostic]) -> None:
        results[path] = diagnostics
        if bar is not None:
            bar.advance()

    jobs = settings.jobs or os.cpu_count() or 1
    try:
        if jobs > 1 and len(items) > PARALLEL_THRESHOLD:
            _analyze_parallel(items, jobs, settings.target, project, done, context)
        else:
            for path, text in items:
                done(path, _analyze_one(text, path, settings.target, project, context=context))
    finally:
        if bar is not None:
            bar.stop()
    return results


class _ProgressBar:
    """A rich progress bar on stderr (imported only when shown).

    Refreshed by hand, at most 10 times a second: no refresh thread, so forking pool workers
    while it is shown is safe.
    """

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._progress = Progress(
            "linting", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=True), transient=True, auto_refresh=False,
        )
        self._task = self._progress.add_task("lint", total=total)
        self._progress.start()
        self._last = 0.0

    def advance(self) -> None:
        self._progress.advance(self._task)
        now = time.monotonic()
        if now - self._last > 0.1:
            self._last = now
            self._progress.refresh()

    def stop(self) -> None:
        self._progress.stop()


def export_context(texts: dict[str, str], settings: Settings, project: Any, partial: bool = False) -> Any:
    """The run's export context (export calls of the linted files, declared roots)."""
    from exportlint.context import build_context

    return build_context(texts, settings, project, partial)


def site_diagnostics(context: Any, settings: Settings) -> dict[str, list[Diagnostic]]:
    """Findings on the export calls themselves (EXL1xx), by path."""
    from exportlint.context.checks import check_sites

    out: dict[str, list[Diagnostic]] = {}
    for d in check_sites(context, settings.target if settings.target_explicit else None):
        out.setdefault(d.path, []).append(d)
    return out


# ---------------------------------------------------------------------------------------------
# Filtering

_SKIP_MARKER = re.compile("skip-file", re.IGNORECASE)


class Sources:
    """Texts of the linted files, and their suppression comments parsed only when needed."""

    def __init__(self, texts: dict[str, str] | None = None):
        self.texts: dict[str, str] = texts or {}
        self._parsed: dict[str, FileSuppressions] = {}

    def suppressions(self, path: str) -> FileSuppressions | None:
        text = self.texts.get(path)
        if text is None:
            return None
        if path not in self._parsed:
            self._parsed[path] = parse_suppressions(text)
        return self._parsed[path]

    def skipped(self, path: str) -> bool:
        """Does the file say ``# exportlint: skip-file``?"""
        text = self.texts.get(path)
        if text is None or _SKIP_MARKER.search(text) is None:
            return False
        return self.suppressions(path).skip_file  # type: ignore[union-attr]


def _preference(d: Diagnostic) -> tuple:
    return (d.identity(), -d.severity.rank, len(d.hint or ""), d.hint or "", d.message)


def finalize(path: str, diagnostics: list[Diagnostic], settings: Settings, sources: Sources) -> FileReport:
    """De-duplicate, override severities, select/ignore/per-file-ignores, suppress, sort."""
    if sources.skipped(path):
        return FileReport(path=path)
    ignored = settings.ignored_in(path)
    seen: set[tuple] = set()
    kept: list[Diagnostic] = []
    # A helper reached from several models (in several files' analyses) can be found data-dependent
    # in one and shape-dependent in another: one finding per condition, the stronger code.
    data_at = {(d.line, d.column, d.code) for d in diagnostics if d.code in SUPERSEDING}
    # The same finding from several analyses (a helper reached from several files' models) can carry
    # different notes ("runs only when the optional input X is given", an earlier failure) or
    # severities (gated on one path): keep the strongest, then the one with the fewest conditions, so
    # the result does not depend on the order the files were analysed in (`--jobs`).
    for d in sorted(diagnostics, key=_preference):
        identity = d.identity()
        if identity in seen or d.code not in settings.enabled_codes or d.code in ignored:
            continue
        if d.code in SUPERSEDED and any((d.line, d.column, win) in data_at for win, lose in SUPERSEDES if lose == d.code):
            continue
        seen.add(identity)
        d.severity = settings.severity.get(d.code, d.severity)
        kept.append(d)
    suppressions = sources.suppressions(path) if kept else None
    if suppressions is not None:
        kept = apply_suppressions(kept, suppressions, settings.show_suppressed)
    kept.sort(key=Diagnostic.sort_key)
    text = sources.texts.get(path)
    lines = split_lines(text) if kept and text is not None else None
    return FileReport(path=path, diagnostics=kept, lines=lines)


# ---------------------------------------------------------------------------------------------
# Entry points


def lint_text(text: str, path: str, settings: Settings) -> FileReport:
    """Lint one in-memory document (stdin, an editor buffer) as if it were ``path``.

    Diagnostics the analysis reports in other files are dropped.
    """
    sources = Sources({path: text})
    if sources.skipped(path):
        return FileReport(path=path)
    tune_gc()
    context = export_context({path: text}, settings, None, partial=True)
    raw = [d for d in _analyze_one(text, path, settings.target, None, incremental=True, context=context) if d.path == path and not is_marker(d)]
    raw += site_diagnostics(context, settings).get(path, [])
    return finalize(path, raw, settings, sources)


def lint_bytes(data: bytes, path: str, settings: Settings) -> FileReport:
    """Like :func:`lint_text` for undecoded content; undecodable or too large content gives
    EXL900."""
    try:
        check_size(len(data))
        text = decode_source(data)
    except SourceError as e:
        diag = file_diagnostic("EXL900", path, e.line, e.message, settings.target)
        return finalize(path, [diag], settings, Sources())
    return lint_text(text, path, settings)


def lint_paths(paths: list[str], settings: Settings) -> list[FileReport]:
    """Lint files and directories (paths that do not exist are left out; see :func:`run`)."""
    return run(paths, settings).reports


def run(paths: list[str], settings: Settings, progress: bool = False) -> LintResult:
    """Lint files and directories; ``progress`` shows a bar on stderr for many files."""
    found = discover(paths, settings.exclude, settings.root, settings.force_exclude, settings.include_modular_sources)
    sources = Sources()
    hashes: dict[str, str] = {}
    raw: dict[str, list[Diagnostic]] = {}
    for path in found.files:
        try:
            data, sources.texts[path] = read_source(path)
        except SourceError as e:
            raw[path] = [file_diagnostic("EXL900", path, e.line, e.message, settings.target)]
            continue
        if not sources.skipped(path):
            hashes[path] = content_hash(data)

    for directory, reason in found.unreadable.items():
        raw[directory] = [file_diagnostic(
            "EXL900", directory, 1, f"cannot list this directory: {reason}; the files in it were not linted",
            settings.target,
        )]
    result = LintResult(reports=[], missing=found.missing)
    project = _make_project(list(hashes)) if hashes else None
    context = export_context({p: sources.texts[p] for p in hashes}, settings, project)
    result.context = context
    cache = Cache(settings.resolved_cache_dir(), settings.target) if settings.cache and hashes else None
    keys = file_keys({p: sources.texts[p] for p in hashes}, hashes, settings.target, context.key()) if cache else {}
    todo: list[tuple[str, str]] = []
    for path in hashes:
        cached = cache.get(keys[path]) if cache is not None else None
        if cached is None:
            todo.append((path, sources.texts[path]))
        else:
            raw[path] = cached
            result.cached += 1
    shown = {os.path.abspath(path): path for path in found.files}
    if todo:
        analyzed = _analyze(todo, settings, project, progress, context)
        for path, diagnostics in analyzed.items():
            raw[path] = _as_shown(diagnostics, shown)
            if cache is not None:
                cache.put(keys[path], diagnostics)
        result.analyzed = len(analyzed)
    if cache is not None:
        cache.save()
    resolve_parts(raw)
    for path, diagnostics in site_diagnostics(context, settings).items():
        raw.setdefault(path, []).extend(diagnostics)

    result.reports = _regroup(found.files + list(found.unreadable), raw, sources, settings)
    if settings.report_unused_suppressions:
        for report in result.reports:
            suppressions = None if sources.skipped(report.path) else sources.suppressions(report.path)
            if suppressions is not None:
                result.unused_suppressions += [
                    UnusedSuppression(report.path, line, message)
                    for line, message in suppressions.unused()
                ]
    return result


def _as_shown(diagnostics: list[Diagnostic], shown: dict[str, str]) -> list[Diagnostic]:
    """The analysis may name a linted file differently (absolute when another file's analysis
    loaded it, as given when it was analyzed itself, depending on which process analyzed what):
    every path, provenance notes included, becomes the file's path as discovered, so that the
    output, and the cache, are the same for any ``--jobs``."""
    for d in diagnostics:
        d.path = shown.get(os.path.abspath(d.path), d.path)
        if any(note.path is not None for note in d.provenance):
            d.provenance = [_note_as_shown(note, d.path, shown) for note in d.provenance]
    return diagnostics


def _note_as_shown(note: Note, own: str, shown: dict[str, str]) -> Note:
    if note.path is None:
        return note
    path = shown.get(os.path.abspath(note.path), note.path)
    return dataclasses.replace(note, path=None if path == own else path)


def _regroup(
    files: list[str], raw: dict[str, list[Diagnostic]], sources: Sources, settings: Settings
) -> list[FileReport]:
    by_path: dict[str, list[Diagnostic]] = {path: [] for path in files}
    linted = set(files)
    # Deterministic whatever order the workers finished in: a file's own analysis first (its
    # provenance wins the de-duplication), then findings other files' analyses placed in it.
    for own in (True, False):
        for analyzed in sorted(raw):
            for d in raw[analyzed]:
                if (os.path.abspath(d.path) == os.path.abspath(analyzed)) is own:
                    by_path.setdefault(d.path, []).append(d)
    reports = []
    for path in sorted(by_path):
        if path not in linted:  # a file outside the linted set
            try:
                sources.texts[path] = read_source(path)[1]
            except SourceError:
                pass
        reports.append(finalize(path, by_path[path], settings, sources))
    return reports
