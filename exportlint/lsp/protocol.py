"""JSON-RPC as the LSP specification wants it, on top of pygls: every request gets an answer.

pygls 2 drops some requests without a response and answers others in ways the specification
does not allow; :class:`ExportlintProtocol` checks each message before pygls sees it:

* a body that is not JSON: ``ParseError`` (-32700), sent to the request's id when it can be read
  from the start of the body (a truncated request), else to ``null`` as JSON-RPC prescribes;
* not a JSON-RPC 2.0 message: ``InvalidRequest`` (-32600);
* params that do not match the method's type: ``InvalidParams`` (-32602) saying what is wrong;
* a request before ``initialize``: ``ServerNotInitialized`` (-32002); notifications then are
  dropped, except ``exit``; a second ``initialize``: ``InvalidRequest``;
* a request after ``shutdown``: ``InvalidRequest``; notifications other than ``exit`` are dropped;
* ``didChange`` / ``didSave`` / ``didClose`` of a document that is not open: dropped with a
  warning in the log (pygls would show the client a ``KeyError``);
* an error response never carries a Python traceback (pygls puts one in ``error.data``).

:func:`serve` is the stdio loop: a reader thread feeds :class:`~exportlint.lsp.framing.FrameReader`
bodies to the protocol on the event loop (pygls's thread pool stays free for linting).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from threading import Event
from typing import Any, BinaryIO
from urllib.parse import unquote

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage

from exportlint.lsp.framing import FrameReader

logger = logging.getLogger("exportlint.lsp")

# The id of a request whose body is cut short: a top-level "id" among the leading members.
_LEADING_ID = re.compile(rb'\A\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*(-?\d+|"[^"\\]*")')
_SNAKE = re.compile(r"_([a-z])")
_ABOUT_AN_OPEN_DOCUMENT = {types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_SAVE, types.TEXT_DOCUMENT_DID_CLOSE}


def leading_id(body: bytes) -> int | str | None:
    found = _LEADING_ID.match(body)
    return None if found is None else json.loads(found.group(1))


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _what_is_wrong(exc: Exception) -> str:
    """cattrs' complaints, with the JSON (camelCase) field names the client sent."""
    if isinstance(exc, ClassValidationError):
        problems = [f"{why} @ {_SNAKE.sub(lambda m: m.group(1).upper(), where)}"
                    for why, _, where in (p.partition(" @ ") for p in transform_error(exc))]
        return "; ".join(problems)
    return f"{type(exc).__name__}: {exc}"


class ExportlintProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.initialize_seen = False

    # -- entry point -------------------------------------------------------------------------

    def handle_body(self, body: bytes) -> None:
        """One message body off the wire: answered (or dropped) per the specification.

        Raises only ``BrokenPipeError`` (the client is gone)."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            logger.warning("message is not valid UTF-8 (%s); undecodable bytes replaced by U+FFFD", exc.reason)
            text = body.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError as exc:
            self.reply_error(leading_id(body), JsonRpcParseError(f"Parse error: {exc}"))
            return
        try:
            self.handle_data(data)
        except BrokenPipeError:
            raise  # the client is gone: the session ends
        except Exception as exc:  # a pygls bug must not end the session
            logger.error("could not handle a message: %s: %s", type(exc).__name__, exc)

    def handle_data(self, data: Any) -> None:
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            msg_id = data.get("id") if isinstance(data, dict) else None
            self.reply_error(msg_id if _is_id(msg_id) else None,
                             JsonRpcInvalidRequest("Invalid request: not a JSON-RPC 2.0 message"))
            return
        if "method" not in data:  # a response to a request of ours
            self.handle_message(self.structure_message(data))
            return
        method, msg_id = data["method"], data.get("id")
        is_request = "id" in data
        if not isinstance(method, str) or (is_request and not _is_id(msg_id)):
            self.reply_error(msg_id if _is_id(msg_id) else None,
                             JsonRpcInvalidRequest("Invalid request: bad method or id"))
            return
        refusal = self.refusal(method)
        if refusal is not None:
            if is_request:
                self.reply_error(msg_id, refusal)
            else:
                logger.info("dropped notification %s: %s", method, refusal.message)
            return
        try:
            message = self._converter.structure(data, self._message_type(method, is_request))
        except Exception as exc:
            detail = f"Invalid params for {method}: {_what_is_wrong(exc)}"
            if is_request:
                self.reply_error(msg_id, JsonRpcInvalidParams(detail))
            else:
                logger.warning("ignored notification: %s", detail)
            return
        if is_request != hasattr(message, "id"):
            kind = "notification" if is_request else "request"
            self.reply_error(msg_id, JsonRpcInvalidRequest(f"Invalid request: {method} is a {kind}"))
            return
        if method in _ABOUT_AN_OPEN_DOCUMENT and not self._is_open(message.params.text_document.uri):
            logger.warning("ignored %s for %s: the document is not open", method, message.params.text_document.uri)
            return
        if method == types.INITIALIZE:
            self.initialize_seen = True
        self.handle_message(message)

    def _is_open(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents

    # -- the rules ---------------------------------------------------------------------------

    def refusal(self, method: str) -> JsonRpcException | None:
        """Why a message must not be handled now, or None."""
        if method == types.EXIT:
            return None
        if self._shutdown:
            return JsonRpcInvalidRequest(f"Invalid request: {method} after shutdown")
        if method == types.INITIALIZE and self.initialize_seen:
            return JsonRpcInvalidRequest("Invalid request: initialize may only be sent once")
        if method != types.INITIALIZE and not self.initialize_seen:
            return JsonRpcServerNotInitialized(f"Server not initialized: {method} before initialize")
        return None

    def _message_type(self, method: str, is_request: bool) -> type:
        known = self.get_message_type(method)
        if known is not None:
            return known
        return JsonRPCRequestMessage if is_request else JsonRPCNotification

    # -- replies -----------------------------------------------------------------------------

    def reply_error(self, msg_id: int | str | None, error: JsonRpcException) -> None:
        """An error response (``"id": null`` when the request's id is unknown)."""
        logger.warning("answered %s: %s", "null" if msg_id is None else msg_id, error.message)
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": error.code, "message": error.message}})

    def _send_response(self, msg_id: Any, result: Any = None, error: types.ResponseError | None = None) -> None:
        if error is not None and error.data is not None:
            error = types.ResponseError(code=error.code, message=error.message)  # no traceback to the client
        super()._send_response(msg_id, result=result, error=error)


async def _read_loop(server: Any, reader: FrameReader) -> None:
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="exportlint-lsp-reader") as reading:
        while not server._stop_event.is_set():
            body = await loop.run_in_executor(reading, reader.next_body)
            if body is None:
                return
            server.protocol.handle_body(body)


def serve(server: Any, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve ``server`` (whose protocol is an :class:`ExportlintProtocol`) until stdin ends."""
    server._stop_event = Event()
    server.protocol.set_writer(StdoutWriter(stdout))
    fd = stdin.fileno()
    try:
        asyncio.run(_read_loop(server, FrameReader(lambda size: os.read(fd, size))))
    except BrokenPipeError:
        logger.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
