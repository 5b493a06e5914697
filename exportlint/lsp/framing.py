"""Reading LSP messages (``Content-Length`` framing) from a byte stream, recovering from bad framing.

A client's ``Content-Length`` can lie.  pygls's own loop trusts it, so one lie costs the next
messages: a length that is too long swallows the following message (and blocks until more bytes
arrive), one that is too short leaves the rest of the body in front of the next header, which
is then not recognised.  :class:`FrameReader` recovers both ways:

* A body ends early where a complete JSON value ends before the declared length (only
  whitespace may follow one), even before the declared length has arrived, so a lying length
  never waits for bytes that will not come; or, for a body that is not JSON at all, where the
  next message's header starts inside it (``Content-Length: N`` and a line break cannot occur in
  JSON, whose strings cannot hold a raw line break).
* A header is found at the end of a line even behind junk (the tail of a body cut short).

The caller gets each body as bytes (decoded and parsed by :mod:`exportlint.lsp.protocol`).
Imports neither pygls nor lsprotocol.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Callable

logger = logging.getLogger("exportlint.lsp")

# A Content-Length header at the end of a line (what precedes it on the line is junk).
_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)
# The start of the next message's header inside a body.
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
CHUNK = 65536
_LONGEST_HEADER = 64  # a header cut by a piece's end is found again when the rest arrives


class FrameReader:
    """Message bodies from ``read`` (``os.read``-like: returns what is available, ``b""`` at end)."""

    def __init__(self, read: Callable[[int], bytes]):
        self._read = read
        self._buffer = bytearray()
        self._eof = False

    def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = self._read(CHUNK)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _take(self, size: int) -> bytes:
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _readline(self) -> bytes | None:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                return self._take(end + 1)
            if not self._fill():
                return self._take(len(self._buffer)) or None

    def next_body(self) -> bytes | None:
        """The next message's body; None once the stream has ended."""
        length = None
        while True:
            line = self._readline()
            if line is None:
                return None
            header = _HEADER.search(line)
            if header is not None:
                if header.start():
                    logger.warning("skipped %d bytes of junk before a message header", header.start())
                length = int(header.group(1))
            elif not line.strip():
                if length is not None:
                    return self._body(length)
            elif not line.lower().startswith(b"content-type:"):
                logger.warning("skipped a line that is not a message header (%d bytes)", len(line))

    def _body(self, length: int) -> bytes:
        scanned = 0  # a body arriving in many pieces is scanned once, not once per piece
        while len(self._buffer) < length:
            cut = _next_header_at(self._buffer, max(0, scanned - _LONGEST_HEADER))
            scanned = len(self._buffer)
            end = _json_end(self._buffer) if _ends_with_brace(self._buffer) else None
            if end is not None or cut is not None:  # the message is complete: the length lies
                return self._short_body(length, end if end is not None else cut)
            if not self._fill():
                logger.warning("the stream ended %d bytes into a %d-byte message", len(self._buffer), length)
                return self._take(len(self._buffer))
        if _is_json(self._buffer[:length]):
            return self._take(length)
        end = _json_end(self._buffer)
        if end is not None and end < length:
            return self._short_body(length, end)
        cut = _next_header_at(self._buffer)
        return self._take(length) if cut is None or cut >= length else self._short_body(length, cut)

    def _short_body(self, length: int, size: int) -> bytes:
        logger.warning("Content-Length said %d bytes but the message has %d; reading on from there", length, size)
        return self._take(size)


def _next_header_at(data: bytes | bytearray, start: int = 0) -> int | None:
    found = _NEXT_HEADER.search(data, start)
    return None if found is None else found.start()


def _ends_with_brace(data: bytes | bytearray) -> bool:
    at = len(data) - 1
    while at >= 0 and data[at] in b" \t\r\n":
        at -= 1
    return at >= 0 and data[at] == ord("}")


def _is_json(data: bytes | bytearray) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


_DECODER = json.JSONDecoder()


def _json_end(data: bytes | bytearray) -> int | None:
    """Where the complete JSON value at the start of ``data`` ends (in bytes), if there is one."""
    text = bytes(data).decode("utf-8", "surrogateescape")
    start = len(text) - len(text.lstrip())
    try:
        _, end = _DECODER.raw_decode(text, start)
    except ValueError:
        return None
    return len(text[:end].encode("utf-8", "surrogateescape"))
