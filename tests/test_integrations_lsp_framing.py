"""The language server's message framing, in process: bodies out of a byte stream cut anywhere.

The stream arrives in pieces of any size (a pipe gives what is there); a lying Content-Length
costs the lying message at most, never the ones after it.
"""

from __future__ import annotations

import json
import random

import pytest

from exportlint.lsp.framing import FrameReader
from exportlint.lsp.protocol import leading_id


def frame(body: bytes, lie: int = 0, content_type: bool = False) -> bytes:
    extra = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" if content_type else b""
    return b"Content-Length: %d\r\n%s\r\n" % (len(body) + lie, extra) + body


def message(i: int, text: str = "") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "textDocument/hover",
                       "params": {"text": text or f"x = {i}\n"}}).encode()


def bodies(stream: bytes, sizes: list[int]) -> list[bytes]:
    """Everything a FrameReader reads from ``stream`` delivered in pieces of ``sizes`` (cycled)."""
    pieces, at, i = [], 0, 0
    while at < len(stream):
        pieces.append(stream[at: at + sizes[i % len(sizes)]])
        at += sizes[i % len(sizes)]
        i += 1
    feed = iter(pieces)
    reader = FrameReader(lambda _size: next(feed, b""))
    out = []
    while (body := reader.next_body()) is not None:
        out.append(body)
    return out


BODIES = [message(1), message(2, "s = 'Content-Length: 12\\r\\n\\r\\n'  # in a string"), message(3, "😀 漢" * 500)]
CHUNKINGS = [[1], [7], [1 << 16], [3, 1, 50, 2], [random.Random(0).randint(1, 40) for _ in range(50)]]


@pytest.mark.parametrize("sizes", CHUNKINGS)
def test_honest_frames_in_any_pieces(sizes: list[int]) -> None:
    stream = b"".join(frame(b, content_type=i == 1) for i, b in enumerate(BODIES))
    assert bodies(stream, sizes) == BODIES


@pytest.mark.parametrize("sizes", CHUNKINGS)
@pytest.mark.parametrize("lie", [+1, +40, +100000])
def test_too_long_a_length_costs_nothing(sizes: list[int], lie: int) -> None:
    stream = frame(BODIES[0], lie=lie) + frame(BODIES[1]) + frame(BODIES[2], lie=lie)
    assert bodies(stream, sizes) == BODIES


@pytest.mark.parametrize("sizes", CHUNKINGS)
def test_too_short_a_length_costs_only_that_message(sizes: list[int]) -> None:
    stream = frame(BODIES[0]) + frame(BODIES[1], lie=-10) + frame(BODIES[2])
    read = bodies(stream, sizes)
    assert read[0] == BODIES[0] and read[-1] == BODIES[2] and len(read) == 3
    assert read[1] == BODIES[1][:-10]
    assert leading_id(read[1]) == 2


def test_junk_between_frames_is_skipped() -> None:
    stream = b"garbage\r\n" + frame(BODIES[0]) + b"\r\n\r\nmore junk " + frame(BODIES[1])
    assert bodies(stream, [5]) == BODIES[:2]


@pytest.mark.parametrize("sizes", CHUNKINGS)
def test_a_body_that_is_not_json_with_too_long_a_length(sizes: list[int]) -> None:
    assert bodies(frame(b"not json at all", lie=+30) + frame(BODIES[0]), sizes) == [b"not json at all", BODIES[0]]


def test_a_stream_ending_mid_message_ends_cleanly() -> None:
    cut = frame(BODIES[1])[:30]
    assert bodies(frame(BODIES[0]) + cut, [8]) == [BODIES[0], cut[cut.index(b"\r\n\r\n") + 4:]]
    assert bodies(b"Content-Length: 10\r\n", [4]) == []


@pytest.mark.parametrize(("body", "expected"), [
    (b'{"jsonrpc": "2.0", "id": 12, "method": "textDocument/hov', 12),
    (b'{"id": "a-7", "jsonrpc": "2.0", "meth', "a-7"),
    (b'{"jsonrpc": "2.0", "method": "textDocument/hover", "id": -3, "par', -3),
    (b'{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 4', None),
    (b"not json", None),
])
def test_the_id_of_a_cut_request(body: bytes, expected: object) -> None:
    assert leading_id(body) == expected
