"""`exportlint lsp` end to end: a subprocess spoken to over stdio exactly like an editor would.

initialize -> initialized -> didOpen -> publishDiagnostics -> codeAction -> didChange (broken
file) -> EXL900 -> hover -> shutdown -> exit, plus the bad-input paths (garbage, invalid UTF-8,
a closed pipe) and the workspace's ``[tool.exportlint]``.  Every wait has a timeout.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from exportlint.catalogue import CATALOGUE, doc_path
from integrations_lsp_client import LspClient, client, workspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

MODEL = '''\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        tag = "😀漢"; n = x.sum().item()
        return x * n
'''
ITEM_LINE = 6
ITEM_LINE_TEXT = MODEL.splitlines()[ITEM_LINE]
BROKEN = MODEL.replace("def forward(self, x):", "def forward(self, x:")


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def codes(diagnostics: list[dict]) -> set[str]:
    return {d["code"] for d in diagnostics}


def has(code: str):
    return lambda diagnostics: code in codes(diagnostics)


def apply_edit(text: str, edit: dict) -> str:
    """Apply one single-line LSP TextEdit (UTF-16 positions) to ``text``."""
    lines = text.split("\n")
    start, end = edit["range"]["start"], edit["range"]["end"]
    assert start["line"] == end["line"]
    encoded = lines[start["line"]].encode("utf-16-le")
    before = encoded[: 2 * start["character"]].decode("utf-16-le")
    after = encoded[2 * end["character"]:].decode("utf-16-le")
    lines[start["line"]] = before + edit["newText"] + after
    return "\n".join(lines)


def test_editor_session(client: LspClient, workspace: Path) -> None:
    init = client.initialize(workspace)
    capabilities = init["capabilities"]
    assert capabilities["hoverProvider"] and capabilities["codeActionProvider"]
    assert capabilities.get("positionEncoding", "utf-16") == "utf-16"

    uri = (workspace / "model.py").as_uri()
    client.open(uri, MODEL)
    [item] = [d for d in client.diagnostics(uri, where=has("EXL001")) if d["code"] == "EXL001"]
    start = ITEM_LINE_TEXT.index("x.sum().item()")
    assert item["range"]["start"] == {"line": ITEM_LINE, "character": utf16(ITEM_LINE_TEXT[:start])}
    assert item["source"] == "exportlint"
    assert item["codeDescription"]["href"] == CATALOGUE["EXL001"].url
    assert item["data"]["name"] == "tensor-item"

    # Quick fix: the noqa suppression, appended to the reported line.
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri},
        "range": item["range"],
        "context": {"diagnostics": [item]},
    })
    [noqa] = [a for a in actions if "noqa" in a["title"] and "EXL001" in a["title"]]
    assert noqa["kind"] == "quickfix"
    [edit] = noqa["edit"]["changes"][uri]
    assert edit["newText"] == "  # noqa: EXL001"
    assert edit["range"]["start"] == {"line": ITEM_LINE, "character": utf16(ITEM_LINE_TEXT)}

    # Hover over the diagnostic shows the rule's documentation.
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": item["range"]["start"]})
    assert hover["contents"]["kind"] == "markdown"
    assert "EXL001" in hover["contents"]["value"]
    doc = doc_path(CATALOGUE["EXL001"])
    if doc.is_file():
        assert doc.read_text(encoding="utf-8").strip() in hover["contents"]["value"]
    assert client.request("textDocument/hover", {
        "textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}) is None

    # Applying the edit in the buffer: the suppression is honoured on the next lint.
    suppressed = apply_edit(MODEL, edit)
    assert suppressed.splitlines()[ITEM_LINE].endswith("n = x.sum().item()  # noqa: EXL001")
    client.change(uri, suppressed, version=2)
    client.diagnostics(uri, where=lambda ds: "EXL001" not in codes(ds))

    # A broken buffer mid-edit: EXL900, and the server stays alive.
    client.change(uri, BROKEN, version=3)
    [parse_error] = client.diagnostics(uri, where=has("EXL900"))
    assert parse_error["severity"] == 1
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": parse_error["range"]["start"]})
    assert "EXL900" in hover["contents"]["value"]

    # Fixed again: the findings come back, nothing stale is left.
    client.change(uri, MODEL, version=4)
    assert "EXL900" not in codes(client.diagnostics(uri, where=has("EXL001")))

    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []

    assert client.exit() == 0


def test_negotiated_utf8_positions(client: LspClient, workspace: Path) -> None:
    init = client.initialize(workspace, capabilities={"general": {"positionEncodings": ["utf-8", "utf-16"]}})
    assert init["capabilities"]["positionEncoding"] == "utf-8"
    uri = (workspace / "model.py").as_uri()
    client.open(uri, MODEL)
    [item] = [d for d in client.diagnostics(uri, where=has("EXL001")) if d["code"] == "EXL001"]
    start = ITEM_LINE_TEXT.index("x.sum().item()")
    assert item["range"]["start"] == {"line": ITEM_LINE, "character": len(ITEM_LINE_TEXT[:start].encode("utf-8"))}
    assert client.exit() == 0


def test_debounce_lints_only_the_last_of_a_burst_of_changes(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace, options={"debounceMs": 1000})
    uri = (workspace / "model.py").as_uri()
    client.open(uri, "x = 1\n")
    client.diagnostics(uri)
    for version in range(2, 7):
        client.change(uri, MODEL if version == 6 else BROKEN, version=version)
    message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics", what="diagnostics")
    assert message["params"]["version"] == 6
    assert "EXL001" in codes(message["params"]["diagnostics"])
    assert client.exit() == 0


def test_workspace_config_is_honoured(client: LspClient, workspace: Path) -> None:
    config = workspace / "pyproject.toml"
    config.write_text('[project]\nname = "demo"\n\n[tool.exportlint]\nseverity = { EXL001 = "info" }\n')
    client.initialize(workspace)
    uri = (workspace / "pkg" / "model.py").as_uri()  # the nearest pyproject.toml is one level up
    client.open(uri, MODEL)
    [item] = [d for d in client.diagnostics(uri, where=has("EXL001")) if d["code"] == "EXL001"]
    assert item["severity"] == 3

    # The configuration is read again for every lint: an edit to it applies without a restart.
    config.write_text('[tool.exportlint]\nignore = ["EXL001"]\n')
    client.change(uri, MODEL + "\n", version=2)
    assert "EXL001" not in codes(client.diagnostics(uri))
    assert client.exit() == 0


def test_bad_config_is_reported_and_linting_goes_on(client: LspClient, workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text('[tool.exportlint]\nselect = ["NOPE999"]\n')
    client.initialize(workspace)
    uri = (workspace / "model.py").as_uri()
    client.open(uri, MODEL)
    shown = client.wait(lambda m: m.get("method") == "window/showMessage", what="showMessage")
    assert "NOPE999" in shown["params"]["message"]
    assert "EXL001" in codes(client.diagnostics(uri, where=has("EXL001")))
    assert client.exit() == 0


def test_garbage_and_invalid_utf8_do_not_kill_the_server(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    client.send_raw(b"this is not json")
    client.send_raw(b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": 42}')
    client.proc.stdin.write(b"Garbage-Header: 1\r\n")
    client.proc.stdin.flush()

    # A didOpen whose text holds bytes that are not UTF-8.
    uri = (workspace / "latin1.py").as_uri()
    body = ('{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "%s",'
            ' "languageId": "python", "version": 1, "text": "s = \'caf' % uri).encode() + b"\xe9\xff" + b'\'\\n"}}}'
    client.send_raw(body)
    assert client.diagnostics(uri) == []

    # A lone surrogate (valid JSON escape, not encodable text) in a model with a finding.
    uri2 = (workspace / "surrogate.py").as_uri()
    client.open(uri2, MODEL.replace("😀", "\udcff"))
    assert "EXL001" in codes(client.diagnostics(uri2, where=has("EXL001")))

    # Still answering requests.
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}) is None
    assert client.exit() == 0


def test_closed_pipe_exits_cleanly(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    client.open((workspace / "model.py").as_uri(), MODEL)
    client.proc.stdin.close()
    assert client.proc.wait(timeout=30) == 0


def test_exit_without_shutdown_is_exit_code_1(client: LspClient, workspace: Path) -> None:
    client.initialize(workspace)
    client.notify("exit")
    assert client.proc.wait(timeout=30) == 1


def test_server_subcommand_is_an_alias(workspace: Path) -> None:
    c = LspClient(workspace, [sys.executable, "-m", "exportlint", "server"])
    try:
        assert c.initialize(workspace)["serverInfo"]["name"] == "exportlint"
        assert c.exit() == 0
    finally:
        c.kill()
