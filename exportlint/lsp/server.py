"""``exportlint lsp``: a language server over stdio (pygls 2).

* Diagnostics for the unsaved buffer on ``didOpen``/``didSave`` (at once) and ``didChange``
  (debounced, ``initializationOptions.debounceMs``, default 200 ms), linted with the
  ``[tool.exportlint]`` of the file's nearest ``pyproject.toml`` (re-read every time).
* Quick fixes (``textDocument/codeAction``): the rule's fix when it has edits, and a
  ``# noqa: CODE`` suppression merged into the line's existing comment.
* Hover over a diagnostic: the rule's documentation.

Bad input never kills the server and never prints a traceback: a file that does not parse is
EXL900 from the engine, an analyzer crash becomes an EXL901 diagnostic, undecodable bytes are
replaced, a closed pipe or malformed JSON-RPC is logged in one line.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter
from pygls.uris import to_fs_path

from exportlint import __version__
from exportlint.catalogue import lookup
from exportlint.config import ConfigError, Settings, load_settings
from exportlint.lsp.actions import noqa_edit
from exportlint.files import split_lines
from exportlint.reporters.lsp import SOURCE, to_lsp_diagnostic
from exportlint.reporters.sarif import rule_doc
from exportlint.runner import lint_text

logger = logging.getLogger("exportlint.lsp")
DEFAULT_DEBOUNCE_MS = 200
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class SafeStdin:
    """stdin for pygls's reader: a message body with invalid UTF-8 is repaired, not dropped."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream

    def readline(self) -> bytes:
        return self._stream.readline()

    def read(self, size: int) -> bytes:
        data = self._stream.read(size)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            logger.warning("message is not valid UTF-8 (%s); undecodable bytes replaced by U+FFFD", exc.reason)
            data = data.decode("utf-8", "replace").encode("utf-8")
        return data


def uri_to_path(uri: str, root: str | None) -> str:
    """The file a document URI names; a non-file document (``untitled:``) lives in the root."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return str(to_fs_path(uri))
    name = Path(unquote(parsed.path)).name or "untitled"
    return str(Path(root or os.getcwd()) / (name if name.endswith((".py", ".pyi")) else f"{name}.py"))


class ExportlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("exportlint", __version__, max_workers=2)
        self.converter = default_converter()
        self.debounce = DEFAULT_DEBOUNCE_MS / 1000
        self.pending: dict[str, asyncio.Task] = {}
        # uri -> the diagnostics last published for it (code actions and hover read these)
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.shutdown_requested = False
        self._config_errors: set[str] = set()

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

    def lint(self, uri: str, path: str, text: str, settings: Settings) -> list[dict[str, Any]]:
        """LSP diagnostics (JSON shapes) for ``text``; never raises.  Runs in a worker thread."""
        text = _LONE_SURROGATE.sub("\ufffd", text)  # JSON may carry them; no codec accepts them
        lines = split_lines(text)
        try:
            report = lint_text(text, path, settings)
            return [to_lsp_diagnostic(d, uri, lines, self.encoding) for d in report.diagnostics]
        except Exception as exc:  # an analyzer bug must not take the editor's linting down
            logger.warning("linting %s failed: %s: %s", path, type(exc).__name__, exc)
            return [internal_error(f"{type(exc).__name__}: {exc}")]

    def schedule(self, uri: str, delay: float) -> None:
        """(Re-)lint ``uri`` after ``delay`` seconds, superseding a lint not yet published."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.ensure_future(self._lint_later(uri, delay))

    async def _lint_later(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        path = uri_to_path(uri, self.workspace.root_path)
        settings = self.settings_for(path)  # here, not in the worker: it may message the client
        loop = asyncio.get_running_loop()
        found = await loop.run_in_executor(self.thread_pool, self.lint, uri, path, text, settings)
        if self.workspace.get_text_document(uri).version != version:
            return  # edited meanwhile: a newer lint is scheduled
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]
        self.publish(uri, [self.converter.structure(d, types.Diagnostic) for d in found], version)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None) -> None:
        self.published[uri] = diagnostics
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def forget(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.published.pop(uri, None)
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
    ls.schedule(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ExportlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ExportlintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ExportlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)


def _fix_action(uri: str, diag: types.Diagnostic) -> types.CodeAction | None:
    fix = diag.data.get("fix") if isinstance(diag.data, dict) else None
    if not fix or not fix.get("edits"):
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


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
)
def code_action(ls: ExportlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    lines = split_lines(ls.workspace.get_text_document(uri).source)
    actions = []
    for diag in ls.overlapping(uri, params.range):
        actions += [_fix_action(uri, diag), _noqa_action(uri, lines, diag, ls.encoding)]
    return [a for a in actions if a is not None]


def hover_markdown(diag: types.Diagnostic) -> str:
    data = diag.data if isinstance(diag.data, dict) else {}
    rule = lookup(str(diag.code))
    parts = [f"**{diag.code}** `{data.get('name', '')}`: {diag.message}"]
    if data.get("hint"):
        parts.append(f"**Hint:** {data['hint']}")
    if rule is not None:
        parts.append(rule_doc(rule))
    return "\n\n".join(parts)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: ExportlintServer, params: types.HoverParams) -> types.Hover | None:
    here = types.Range(start=params.position, end=params.position)
    found = ls.overlapping(params.text_document.uri, here)
    if not found:
        return None
    text = "\n\n---\n\n".join(hover_markdown(d) for d in found)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
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
    configure_logging(args.log_level, args.log_file)
    server.start_io(SafeStdin(sys.stdin.buffer), sys.stdout.buffer)
    logger.info("client closed the connection; exiting")
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no "Exception ignored" at exit
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
