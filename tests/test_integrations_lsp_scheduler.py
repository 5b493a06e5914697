"""Stale lints are superseded, never queued: in process (exact) and over JSON-RPC (a real burst).

In process the lint is held until the test lets it go, so what runs is exact: the lint in
progress, then one lint of the latest text, whatever the number of edits in between.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import pytest

from exportlint.lsp.scheduler import LintScheduler
from integrations_lsp_client import LspClient


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(3000):  # a bound so that a bug fails instead of hanging, not a timing claim
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


class Harness:
    """A scheduler whose lints record what they lint and wait for ``release``."""

    def __init__(self, pool: ThreadPoolExecutor):
        self.version = 1
        self.started: list[int] = []
        self.published: list[tuple[int, str]] = []
        self.release = threading.Event()
        self.scheduler = LintScheduler(self.snapshot, self.work, self.done, lambda: pool)

    def snapshot(self, uri: str) -> int | None:
        if self.version < 0:
            raise OSError("the document went away")
        return self.version

    def work(self, version: int) -> str:
        self.started.append(version)
        assert self.release.wait(30)
        return f"diagnostics of {version}"

    def done(self, uri: str, version: int, result: str) -> None:
        self.published.append((version, result))

    def edit(self, version: int) -> None:
        self.version = version
        self.scheduler.request("file:///m.py", 0)


def run(scenario: Callable[[Harness], object]) -> None:
    async def main() -> None:
        with ThreadPoolExecutor(max_workers=2) as pool:
            harness = Harness(pool)
            try:
                await scenario(harness)
            finally:
                harness.release.set()
    asyncio.run(main())


def test_edits_during_a_lint_supersede_each_other() -> None:
    async def scenario(h: Harness) -> None:
        h.edit(1)
        await until(lambda: h.started == [1], "the first lint starts")
        for version in range(2, 12):
            h.edit(version)
            await asyncio.sleep(0)
        assert h.started == [1]  # one lint at a time per document
        h.release.set()
        await until(lambda: len(h.published) == 2, "two publishes")
        assert h.started == [1, 11]  # versions 2..10 are never linted
        assert h.published == [(1, "diagnostics of 1"), (11, "diagnostics of 11")]
        assert h.scheduler.lints_started == 2
    run(scenario)


def test_a_forgotten_document_is_not_published() -> None:
    async def scenario(h: Harness) -> None:
        h.edit(1)
        await until(lambda: h.started == [1], "the lint starts")
        h.scheduler.forget("file:///m.py")
        h.release.set()
        h.edit(2)  # opened again: served afresh
        await until(lambda: h.published, "a publish")
        assert h.published == [(2, "diagnostics of 2")]
    run(scenario)


def test_a_failing_snapshot_does_not_stop_the_document() -> None:
    async def scenario(h: Harness) -> None:
        h.release.set()
        h.edit(-1)
        await asyncio.sleep(0.05)
        h.edit(3)
        await until(lambda: h.published, "a publish")
        assert h.published == [(3, "diagnostics of 3")]
    run(scenario)


MODEL = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n" \
        "        n = x.sum().item()\n        return x * n\n"


@pytest.mark.slow
def test_a_burst_of_edits_ends_with_the_diagnostics_of_the_last_version(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    client = LspClient(tmp_path)
    try:
        client.initialize(tmp_path, options={"debounceMs": 0})
        uri = (tmp_path / "model.py").as_uri()
        client.open(uri, MODEL)
        client.diagnostics(uri)
        broken = MODEL.replace("(self, x):", "(self, x:")
        last = 41
        for version in range(2, last + 1):  # back to back, as fast typing with no debounce sends them
            client.change(uri, MODEL if version == last else broken + "#" * version, version)
        final = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["version"] == last, what="the last version's diagnostics")
        codes = {d["code"] for d in final["params"]["diagnostics"]}
        assert "EXL001" in codes and "EXL900" not in codes
        assert client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                     "position": {"line": 0, "character": 0}}) is None
        versions = [m["params"]["version"] for m in client.backlog
                    if m.get("method") == "textDocument/publishDiagnostics"]
        assert versions == sorted(versions) and all(v < last for v in versions)  # never a stale one after
        assert client.exit() == 0
    finally:
        client.kill()
    assert "Traceback" not in client.stderr, client.stderr


# The server, with every lint held until the file named by argv[1] exists.
HOLD_LINTS = '''
import os, sys, time
from exportlint.lsp import server

real = server.lint_text

def lint_text(text, path, settings):
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.01)
    return real(text, path, settings)

server.lint_text = lint_text
sys.exit(server.main([]))
'''


@pytest.mark.slow
def test_requests_are_answered_while_lints_run(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    release = tmp_path / "release"
    client = LspClient(tmp_path, [sys.executable, "-c", HOLD_LINTS, str(release)])
    try:
        client.initialize(tmp_path)
        uris = [(tmp_path / f"model{i}.py").as_uri() for i in range(3)]
        for uri in uris:  # more held lints than the server has worker threads
            client.open(uri, MODEL)
        assert client.request("textDocument/hover", {"textDocument": {"uri": uris[0]},
                                                     "position": {"line": 0, "character": 0}}) is None
        assert client.request("textDocument/codeAction", {
            "textDocument": {"uri": uris[1]}, "range": {"start": {"line": 6, "character": 0},
                                                        "end": {"line": 6, "character": 0}},
            "context": {"diagnostics": []}}) == []
        assert not [m for m in client.backlog if m.get("method") == "textDocument/publishDiagnostics"]
        release.touch()
        for uri in uris:
            assert "EXL001" in {d["code"] for d in client.diagnostics(uri)}
        assert client.exit() == 0
    finally:
        client.kill()
    assert "Traceback" not in client.stderr, client.stderr
