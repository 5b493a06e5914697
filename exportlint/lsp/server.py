"""``exportlint lsp``: a language server over stdio (pygls 2).

* Diagnostics for the unsaved buffer on ``didOpen``/``didSave`` (at once) and ``didChange``
  (debounced, ``initializationOptions.debounceMs``, default 200 ms), linted with the
  ``[tool.exportlint]`` of the file's nearest ``pyproject.toml`` (re-read every time).  One lint
  at a time per document; edits during a lint supersede each other (:mod:`.scheduler`).
* Code actions (``textDocument/codeAction``) for every diagnostic on the requested lines: the
  rule's fix when it has edits, a ``# noqa: CODE`` suppression merged into the line's existing
  comment, and ``source.fixAll.exportlint`` (every safe fix at once).
* Hover over a diagnostic: the rule's documentation, as markdown or plain text (the client's
  ``hover.contentFormat``).

Every request is answered as the specification says (:mod:`.protocol`), framing errors are
recovered (:mod:`.framing`).  Bad input never kills the server and never prints a traceback: a
file that does not parse is EXL900 from the engine, an analyzer crash becomes an EXL901
diagnostic, undecodable bytes are replaced, a closed pipe is logged in one line.
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from exportlint import __version__
from exportlint.catalogue import lookup
from exportlint.config import ConfigError, Settings, load_settings
from exportlint.lsp.actions import noqa_edit
from exportlint.lsp.features import FIX_ALL, fix_of, hover_text, markup_kind, on_lines, safe_fix_edits, wants
from exportlint.lsp.protocol import ExportlintProtocol, serve
from exportlint.lsp.scheduler import LintScheduler
from exportlint.files import split_lines
from exportlint.reporters.lsp import SOURCE, to_lsp_diagnostic
from exportlint.runner import lint_text

logger = logging.getLogger("exportlint.lsp")
DEFAULT_DEBOUNCE_MS = 200
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def uri_to_path(uri: str, root: str | None) -> str:
    """The file a document URI names; a non-file document (``untitled:``) lives in the root."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return str(to_fs_path(uri))
    name = Path(unquote(parsed.path)).name or "untitled"
    return str(Path(root or os.getcwd()) / (name if name.endswith((".py", ".pyi")) else f"{name}.py"))


@dataclass
class LintJob:
    """A document as it was when its lint started."""

    uri: str
    version: int | None
    path: str
    text: str
    settings: Settings


class ExportlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("exportlint", __version__, protocol_cls=ExportlintProtocol, max_workers=2)
        self.converter = default_converter()
        self.debounce = DEFAULT_DEBOUNCE_MS / 1000
        self.lints = LintScheduler(self.snapshot, self.lint, self.lint_done, lambda: self.thread_pool)
        # uri -> the diagnostics last published for it, and the version they are for
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.published_version: dict[str, int | None] = {}
        self.shutdown_requested = False
        self._config_errors: set[str] = set()

    def open_document(self, uri: str) -> TextDocument | None:
        """The document the client opened, or None (pygls would read an unopened one from disk)."""
        return self.workspace.text_documents.get(unquote(uri))

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)

    def settings_for(self, path: str) -> Settings:
        """The file's ``[tool.exportlint]``; on a bad config: say so once, lint with defaults."""
        try:
            return load_settings(Path(path).parent)
        except ConfigError as exc:
            message = f"exportlint: {exc} (linting with the default settings)"
            if message not in self._config_errors:
                self._config_errors.add(message)
                logger.warning("%s", message)
                self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))
            return Settings(root=Path(self.workspace.root_path or os.getcwd()))

    def lint(self, job: LintJob) -> list[dict[str, Any]]:
        """LSP diagnostics (JSON shapes) for the job's text; never raises.  Runs in a worker thread."""
        text = _LONE_SURROGATE.sub("\ufffd", job.text)  # JSON may carry them; no codec accepts them
        lines = split_lines(text)
        try:
            report = lint_text(text, job.path, job.settings)
            return [to_lsp_diagnostic(d, job.uri, lines, self.encoding) for d in report.diagnostics]
        except Exception as exc:  # an analyzer bug must not take the editor's linting down
            logger.warning("linting %s failed: %s: %s", job.path, type(exc).__name__, exc)
            return [internal_error(f"{type(exc).__name__}: {exc}")]

    def snapshot(self, uri: str) -> LintJob | None:
        """What to lint for ``uri`` now (on the event loop: reading the settings may message the client)."""
        document = self.open_document(uri)
        if document is None:
            return None
        path = uri_to_path(uri, self.workspace.root_path)
        return LintJob(uri, document.version, path, document.source, self.settings_for(path))

    def lint_done(self, uri: str, job: LintJob, found: list[dict[str, Any]]) -> None:
        self.publish(uri, [self.converter.structure(d, types.Diagnostic) for d in found], job.version)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None) -> None:
        self.published[uri] = diagnostics
        self.published_version[uri] = version
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def forget(self, uri: str) -> None:
        self.lints.forget(uri)
        self.published.pop(uri, None)
        self.published_version.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def overlapping(self, uri: str, area: types.Range) -> list[types.Diagnostic]:
        """Published diagnostics whose range touches ``area`` (bounds included)."""
        lo = (area.start.line, area.start.character)
        hi = (area.end.line, area.end.character)
        return [
            d for d in self.published.get(uri, [])
            if (d.range.start.line, d.range.start.character) <= hi
            and lo <= (d.range.end.line, d.range.end.character)
        ]


def internal_error(reason: str) -> dict[str, Any]:
    rule = lookup("EXL901")
    at = {"line": 0, "character": 0}
    return {
        "range": {"start": at, "end": at},
        "severity": 1,
        "code": rule.code,
        "codeDescription": {"href": rule.url},
        "source": SOURCE,
        "message": f"exportlint could not analyze this file: {reason}",
        "data": {"name": rule.name, "hint": "please report this as a bug", "fix": None, "dynamic": None},
    }


server = ExportlintServer()


@server.feature(types.INITIALIZE)
def initialize(ls: ExportlintServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    debounce = options.get("debounceMs", DEFAULT_DEBOUNCE_MS) if isinstance(options, dict) else None
    if isinstance(debounce, (int, float)) and debounce >= 0:
        ls.debounce = debounce / 1000


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ExportlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.lints.request(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ExportlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.lints.request(params.text_document.uri, ls.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ExportlintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.lints.request(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ExportlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)


def _fix_action(uri: str, diag: types.Diagnostic) -> types.CodeAction | None:
    fix = fix_of(diag)
    if fix is None:
        return None
    edits = [server.converter.structure(e, types.TextEdit) for e in fix["edits"]]
    return types.CodeAction(
        title=f"Fix {diag.code}: {fix.get('message') or 'apply the suggested fix'}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        edit=types.WorkspaceEdit(changes={uri: edits}),
        is_preferred=fix.get("applicability") == "safe",
    )


def _noqa_action(uri: str, lines: list[str], diag: types.Diagnostic, encoding: str) -> types.CodeAction | None:
    edit = noqa_edit(lines, diag.range.start.line, str(diag.code), encoding)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"Suppress {diag.code} on this line (# noqa)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        edit=types.WorkspaceEdit(changes={uri: [server.converter.structure(edit, types.TextEdit)]}),
    )


def _fix_all_action(uri: str, diagnostics: list[types.Diagnostic]) -> types.CodeAction | None:
    edits, fixed = safe_fix_edits(diagnostics)
    if not edits:
        return None
    return types.CodeAction(
        title=f"exportlint: apply {len(fixed)} safe fix{'es' if len(fixed) > 1 else ''}",
        kind=FIX_ALL,
        diagnostics=fixed,
        edit=types.WorkspaceEdit(changes={uri: [server.converter.structure(e, types.TextEdit) for e in edits]}),
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
)
def code_action(ls: ExportlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes for the diagnostics on the requested lines; the fix-all action for the document.

    Nothing for a document the client has not opened.  Fixes are offered only while the published
    diagnostics are those of the document's current version (their edits' positions are).
    """
    uri = params.text_document.uri
    document = ls.open_document(uri)
    if document is None:
        return []
    published = ls.published.get(uri, [])
    current = ls.published_version.get(uri) == document.version
    only = params.context.only
    actions: list[types.CodeAction | None] = []
    if wants(only, types.CodeActionKind.QuickFix.value):
        lines = split_lines(document.source)
        for diag in on_lines(published, params.range):
            actions += [_fix_action(uri, diag) if current else None, _noqa_action(uri, lines, diag, ls.encoding)]
    if current and wants(only, FIX_ALL):
        actions.append(_fix_all_action(uri, published))
    return [a for a in actions if a is not None]


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: ExportlintServer, params: types.HoverParams) -> types.Hover | None:
    here = types.Range(start=params.position, end=params.position)
    found = ls.overlapping(params.text_document.uri, here)
    if not found:
        return None
    kind = markup_kind(ls.client_capabilities)
    return types.Hover(
        contents=types.MarkupContent(kind=kind, value="\n\n---\n\n".join(hover_text(d, kind) for d in found)),
        range=found[0].range,
    )


@server.feature(types.SHUTDOWN)
def shutdown(ls: ExportlintServer, *_: Any) -> None:
    ls.shutdown_requested = True


@server.feature(types.EXIT)
def exit_(ls: ExportlintServer, *_: Any) -> None:
    # Exit now: pygls would wait for its stdin reader thread, i.e. for the client to close the pipe.
    logging.shutdown()
    sys.stdout.flush()
    os._exit(0 if ls.shutdown_requested else 1)


class OneLineFormatter(logging.Formatter):
    """One line per record, no traceback (a language server's stderr is the user's output panel).

    pygls puts whole tracebacks into some messages; only their first line is kept.
    """

    def format(self, record: logging.LogRecord) -> str:
        record = copy.copy(record)
        message = record.getMessage().split("\n", 1)[0]
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            message = f"{message}: {type(error).__name__}: {error}".split("\n", 1)[0]
        record.msg, record.args, record.exc_info, record.exc_text = message, None, None, None
        return super().format(record)


def configure_logging(level: str, log_file: str | None) -> None:
    handler = logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    verbose = level.upper() == "DEBUG"
    handler.setFormatter((logging.Formatter if verbose else OneLineFormatter)("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="exportlint lsp", description="exportlint language server (stdio)")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        type=str.upper, help="log verbosity on stderr or --log-file (default WARNING)")
    parser.add_argument("--log-file", help="write the log to this file instead of stderr")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Serve on stdin/stdout until the client exits or closes the pipe."""
    args = parse_args(argv)
    configure_logging(args.log_level, args.log_file)  # a log file that cannot be written: the CLI's usage error
    serve(server, sys.stdin.buffer, sys.stdout.buffer)
    logger.info("client closed the connection; exiting")
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no "Exception ignored" at exit
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
