"""`exportlint lsp` answers every request as the LSP specification says, over the real wire.

Errors for invalid params, unknown methods and non-JSON-RPC messages; ServerNotInitialized
before ``initialize``; InvalidRequest after ``shutdown``; no traceback for a code action on a
document that was never opened; the framing recovers after a lying ``Content-Length``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from integrations_lsp_client import LspClient, client, workspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

SERVER_NOT_INITIALIZED, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, PARSE_ERROR = (
    -32002, -32600, -32601, -32602, -32700)
MODEL = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n" \
        "        n = x.sum().item()\n        return x * n\n"


def hover_params(uri: str) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}


def error_code(reply: dict) -> int:
    assert "result" not in reply, reply
    assert set(reply["error"]) == {"code", "message"}, reply  # no traceback in "data"
    return reply["error"]["code"]


def test_requests_before_initialize_are_refused(client: LspClient, workspace: Path) -> None:
    uri = (workspace / "model.py").as_uri()
    assert error_code(client.call("textDocument/hover", hover_params(uri))) == SERVER_NOT_INITIALIZED
    assert error_code(client.call("shutdown")) == SERVER_NOT_INITIALIZED
    # A notification before initialize is dropped: the document was never opened.
    client.open(uri, MODEL)
    client.initialize(workspace)
    assert client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 6, "character": 0}, "end": {"line": 6, "character": 0}},
        "context": {"diagnostics": []}}) == []
    assert error_code(client.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})) \
        == INVALID_REQUEST
    assert client.exit() == 0


def test_exit_before_initialize_is_honoured(client: LspClient) -> None:
    client.notify("exit")
    assert client.proc.wait(timeout=30) == 1


@pytest.mark.parametrize(("method", "params", "complaint"), [
    ("textDocument/hover", {"textDocument": 3}, "textDocument"),
    ("textDocument/hover", {"textDocument": {"uri": "file:///m.py"}, "position": {"line": "one", "character": 0}},
     "position.line"),
    ("textDocument/hover", 42, "params"),
    ("textDocument/codeAction", {"textDocument": {"uri": "file:///m.py"}}, "range"),
    ("initialize", {"processId": None, "rootUri": None}, "capabilities"),
])
def test_invalid_params_get_an_invalid_params_error(client: LspClient, workspace: Path,
                                                    method: str, params: object, complaint: str) -> None:
    if method != "initialize":
        client.initialize(workspace)
    reply = client.call(method, params)
    assert error_code(reply) == INVALID_PARAMS
    assert method in reply["error"]["message"] and complaint in reply["error"]["message"]
    if method == "initialize":  # a failed initialize leaves the server uninitialized, still answering
        assert error_code(client.call("textDocument/hover", hover_params("file:///m.py"))) == SERVER_NOT_INITIALIZED
        client.initialize(workspace)
    assert client.request("textDocument/hover", hover_params((workspace / "m.py").as_uri())) is None
    assert client.exit() == 0


def test_malformed_messages_get_json_rpc_errors(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    assert error_code(client.call("workspace/noSuchMethod", {})) == METHOD_NOT_FOUND

    client.send_raw(b'{"id": 70, "method": "textDocument/hover", "params": {}}')  # no "jsonrpc": "2.0"
    assert error_code(client.reply(70)) == INVALID_REQUEST
    client.send_raw(b'[{"jsonrpc": "2.0", "id": 71, "method": "shutdown"}]')  # a batch: LSP has none
    assert error_code(client.reply(None)) == INVALID_REQUEST
    client.send({"id": 72, "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///m.py", "languageId": "python", "version": 1, "text": ""}}})  # a notification sent as a request
    assert error_code(client.reply(72)) == INVALID_REQUEST
    client.send_raw(b"this is not json")
    assert error_code(client.reply(None)) == PARSE_ERROR
    assert client.request("textDocument/hover", hover_params((workspace / "m.py").as_uri())) is None
    assert client.exit() == 0


def test_requests_after_shutdown_are_invalid(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    uri = (workspace / "model.py").as_uri()
    assert client.request("shutdown") is None
    assert error_code(client.call("textDocument/hover", hover_params(uri))) == INVALID_REQUEST
    assert error_code(client.call("shutdown")) == INVALID_REQUEST
    client.open(uri, MODEL)  # dropped, not an error
    client.notify("exit")
    assert client.proc.wait(timeout=30) == 0


def test_code_action_on_an_unopened_document_is_empty(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    for uri in [(workspace / "missing.py").as_uri(), "untitled:Untitled-1"]:
        assert client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], "only": ["source.fixAll"]}}) == []
    assert client.exit() == 0


def framed(message: dict, lie: int = 0) -> tuple[bytes, bytes]:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + lie), body


def test_framing_recovers_after_a_lying_content_length(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    hover = {"method": "textDocument/hover", "params": hover_params((workspace / "m.py").as_uri())}

    def write(*parts: bytes) -> None:
        client.proc.stdin.write(b"".join(parts))
        client.proc.stdin.flush()

    # Too long, followed by more requests in the same write: each one answered.
    write(*framed({"id": 1, **hover}, lie=+40), *framed({"id": 2, **hover}), *framed({"id": 3, **hover}))
    assert [client.reply(i)["result"] for i in (1, 2, 3)] == [None, None, None]

    # Too long, and nothing follows: answered without waiting for bytes that never come.
    write(*framed({"id": 4, **hover}, lie=+1000))
    assert client.reply(4)["result"] is None

    # Too short: that request is cut (a parse error for its id), the next one is answered.
    write(*framed({"id": 5, **hover}, lie=-12), *framed({"id": 6, **hover}))
    assert error_code(client.reply(5)) == PARSE_ERROR
    assert client.reply(6)["result"] is None

    # Junk between messages, and a header split over two writes.
    header, body = framed({"id": 7, **hover})
    write(b"garbage line\r\n", header[:9])
    write(header[9:], body)
    assert client.reply(7)["result"] is None
    assert client.exit() == 0


def test_notifications_about_an_unopened_document_are_ignored(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    uri = (workspace / "never-opened.py").as_uri()
    client.change(uri, MODEL, version=2)
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.request("textDocument/hover", hover_params(uri)) is None
    assert [m for m in client.backlog if m.get("method") == "window/showMessage"] == []
    assert client.exit() == 0
