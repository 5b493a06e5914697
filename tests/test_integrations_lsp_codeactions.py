"""Code actions for every diagnostic on the cursor's line, ``source.fixAll.exportlint``, hover formats.

Over JSON-RPC with a real server.  No rule has a fix yet, so the fix-all tests start the server
with ``lint_text`` wrapped to give each finding a fix in the documented shape (``Diagnostic.fix``:
message, applicability, 1-based edits with an exclusive end): the finding's expression replaced.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from exportlint.lsp.features import safe_fix_edits
from integrations_lsp_client import LspClient

pytestmark = pytest.mark.slow

MODEL = '''\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        n = x.sum().item()
        m = x.max().item()
        k = x.min().item()
        return x * n * m * k
'''
ITEM_LINES = [6, 7, 8]  # 0-based lines of the three EXL001 findings

# The server, with a fix on every finding: applicability by 1-based line, from argv.
INJECT_FIXES = '''
import json, sys
from exportlint.lsp import server

applicability = {int(k): v for k, v in json.loads(sys.argv[1]).items()}
real = server.lint_text

def lint_text(text, path, settings):
    report = real(text, path, settings)
    for d in report.diagnostics:
        if d.line in applicability:
            d.fix = {"message": "use a fixed value", "applicability": applicability[d.line], "edits": [
                {"line": d.line, "column": d.column, "end_line": d.end_line, "end_column": d.end_column,
                 "content": f"fixed_{d.line}"}]}
    return report

server.lint_text = lint_text
sys.exit(server.main([]))
'''


def start(workspace: Path, fixes: dict[int, str] | None = None) -> LspClient:
    args = None if fixes is None else [sys.executable, "-c", INJECT_FIXES, json.dumps(fixes)]
    return LspClient(workspace, args)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    return tmp_path


@pytest.fixture
def clients():
    started: list[LspClient] = []
    yield started
    for c in started:
        c.kill()
        assert "Traceback" not in c.stderr, c.stderr


def opened(clients: list, workspace: Path, fixes: dict[int, str] | None = None,
           capabilities: dict | None = None, options: dict | None = None) -> tuple[LspClient, str, list[dict]]:
    client = start(workspace, fixes)
    clients.append(client)
    init = client.initialize(workspace, options=options, capabilities=capabilities)
    assert "source.fixAll.exportlint" in init["capabilities"]["codeActionProvider"]["codeActionKinds"]
    uri = (workspace / "model.py").as_uri()
    client.open(uri, MODEL)
    found = client.diagnostics(uri, where=lambda ds: len([d for d in ds if d["code"] == "EXL001"]) == 3)
    return client, uri, found


def actions(client: LspClient, uri: str, start: tuple[int, int], end: tuple[int, int] | None = None,
            only: list[str] | None = None) -> list[dict]:
    end = end or start
    context: dict = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    return client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}},
        "context": context,
    })


def apply(text: str, edits: list[dict]) -> str:
    """Apply single-line LSP edits (ASCII text), last first."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        start, end = e["range"]["start"], e["range"]["end"]
        assert start["line"] == end["line"]
        line = lines[start["line"]]
        lines[start["line"]] = line[: start["character"]] + e["newText"] + line[end["character"]:]
    return "\n".join(lines)


def test_actions_for_every_diagnostic_on_the_cursors_line(clients: list, workspace: Path) -> None:
    client, uri, _ = opened(clients, workspace)
    # The cursor at the start of the line, before the finding's column (Neovim, Emacs).
    [noqa] = actions(client, uri, (ITEM_LINES[0], 0))
    assert noqa["kind"] == "quickfix" and "EXL001" in noqa["title"]
    [edit] = noqa["edit"]["changes"][uri]
    assert edit["range"]["start"]["line"] == ITEM_LINES[0] and edit["newText"] == "  # noqa: EXL001"
    # The end of the line, past the finding.
    assert len(actions(client, uri, (ITEM_LINES[1], 40))) == 1
    # A selection over two lines: both lines' findings; a selection ending at column 0 stops before that line.
    assert {a["edit"]["changes"][uri][0]["range"]["start"]["line"]
            for a in actions(client, uri, (ITEM_LINES[0], 3), (ITEM_LINES[1], 2))} == set(ITEM_LINES[:2])
    assert len(actions(client, uri, (ITEM_LINES[0], 3), (ITEM_LINES[1], 0))) == 1
    # A line without a finding: nothing.
    assert actions(client, uri, (5, 4)) == []
    # No fixes anywhere: no fix-all action, whatever is asked.
    for only in (["source.fixAll"], ["source.fixAll.exportlint"], ["source"], None):
        assert all(a["kind"] == "quickfix" for a in actions(client, uri, (0, 0), only=only))
    assert client.exit() == 0


def test_fix_all_applies_every_safe_fix(clients: list, workspace: Path) -> None:
    # A long debounce: an edit's lint waits (for a save), so the published diagnostics go stale.
    client, uri, found = opened(clients, workspace, fixes={7: "safe", 8: "unsafe", 9: "safe"},
                                options={"debounceMs": 600000})
    assert [d["data"]["fix"]["applicability"] for d in found if d["code"] == "EXL001"] == ["safe", "unsafe", "safe"]
    for only in (["source.fixAll"], ["source.fixAll.exportlint"], ["source"], None):
        [fix_all] = [a for a in actions(client, uri, (0, 0), only=only) if a["kind"] != "quickfix"]
        assert fix_all["kind"] == "source.fixAll.exportlint"
        assert "2 safe fixes" in fix_all["title"]
        assert {d["range"]["start"]["line"] for d in fix_all["diagnostics"]} == {ITEM_LINES[0], ITEM_LINES[2]}
        fixed = apply(MODEL, fix_all["edit"]["changes"][uri])
        assert fixed.splitlines()[6:9] == ["        n = fixed_7", "        m = x.max().item()", "        k = fixed_9"]
    assert [a for a in actions(client, uri, (0, 0), only=["quickfix"]) if a["kind"] != "quickfix"] == []

    # Per-finding quick fixes are there too (the safe one preferred), next to the noqa suppression.
    on_line = actions(client, uri, (ITEM_LINES[1], 0), only=["quickfix"])
    assert sorted(a["title"].split(" ")[0] for a in on_line) == ["Fix", "Suppress"]

    # The buffer changed and its lint is not published yet: the fixes' positions are stale, so
    # neither fix-all nor the fix quick fixes are offered (the noqa suppression still is).
    client.change(uri, "\n" + MODEL, version=2)
    assert actions(client, uri, (0, 0), only=["source.fixAll"]) == []
    assert [a["title"].split(" ")[0] for a in actions(client, uri, (ITEM_LINES[0], 0))] == ["Suppress"]
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})  # lints at once
    fresh = client.diagnostics(uri)
    assert fresh and all(d["range"]["start"]["line"] > 0 for d in fresh)
    [fix_all] = actions(client, uri, (0, 0), only=["source.fixAll"])
    # (the injected applicability goes by line: after the new first line, only `m = ...` is safe)
    assert apply("\n" + MODEL, fix_all["edit"]["changes"][uri]).splitlines()[7:10] == [
        "        n = x.sum().item()", "        m = fixed_9", "        k = x.min().item()"]
    assert client.exit() == 0


def test_fix_all_without_safe_fixes_offers_nothing(clients: list, workspace: Path) -> None:
    client, uri, _ = opened(clients, workspace, fixes={7: "unsafe", 8: "display-only"})
    assert actions(client, uri, (0, 0), only=["source.fixAll"]) == []
    assert client.exit() == 0


@pytest.mark.parametrize(("formats", "kind"), [
    (["plaintext"], "plaintext"),
    (["plaintext", "markdown"], "plaintext"),
    (["markdown", "plaintext"], "markdown"),
    (None, "markdown"),
])
def test_hover_honours_the_clients_markup_kind(clients: list, workspace: Path, formats: list | None, kind: str) -> None:
    capabilities = {} if formats is None else {"textDocument": {"hover": {"contentFormat": formats}}}
    client, uri, _ = opened(clients, workspace, capabilities=capabilities)
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": ITEM_LINES[0], "character": 12}})
    assert hover["contents"]["kind"] == kind
    first = hover["contents"]["value"].splitlines()[0]
    if kind == "plaintext":
        assert first.startswith("EXL001 tensor-item: ") and "**" not in first and "`tensor-item`" not in first
    else:
        assert first.startswith("**EXL001** `tensor-item`: ")
    assert client.exit() == 0


def edit(line: int, start: int, end: int) -> dict:
    return {"range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}},
            "newText": "x"}


def test_overlapping_safe_fixes_keep_the_first() -> None:
    from lsprotocol import types

    def diag(*edits: dict, applicability: str = "safe") -> types.Diagnostic:
        first = edits[0]["range"]
        return types.Diagnostic(
            range=types.Range(start=types.Position(**first["start"]), end=types.Position(**first["end"])),
            message="m", data={"fix": {"message": "f", "applicability": applicability, "edits": list(edits)}})

    a, b, c, d, e = (diag(edit(1, 0, 5)), diag(edit(1, 3, 8)), diag(edit(1, 5, 6), edit(4, 0, 1)),
                     diag(edit(4, 0, 1)), diag(edit(2, 0, 1), applicability="unsafe"))
    edits, fixed = safe_fix_edits([d, c, b, a, e])
    assert fixed == [a, c]  # b overlaps a; d's edit is c's second one; e is not safe
    assert edits == [edit(1, 0, 5), edit(1, 5, 6), edit(4, 0, 1)]
