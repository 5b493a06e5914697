"""A minimal LSP client speaking JSON-RPC over a subprocess's stdio, as an editor does.

The framing (``Content-Length`` header, blank line, UTF-8 JSON body) is written by hand on
purpose: the server is tested against the wire protocol, not against pygls's own client.
Used by the language-server tests (which import its ``workspace`` and ``client`` fixtures) and by
``benchmarks/bench_lsp.py``.  Every wait has a timeout, so a hung server fails fast instead of
hanging the run.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

DEFAULT_TIMEOUT = 30.0


class ServerGone(AssertionError):
    pass


class LspClient:
    def __init__(self, cwd: Path, args: list[str] | None = None, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(
            args or [sys.executable, "-m", "exportlint", "lsp"],
            cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.backlog: list[dict[str, Any]] = []  # received, not yet consumed by a wait
        self._next_id = 0
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.extend(self.proc.stderr), daemon=True).start()

    # -- wire ------------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                header = out.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            self.messages.put(json.loads(out.read(length).decode("utf-8")))

    def send_raw(self, body: bytes) -> None:
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8"))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, "params": params})

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def reply(self, msg_id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The response (result or error) to the request ``msg_id``."""
        return self.wait(lambda m: "id" in m and m["id"] == msg_id and "method" not in m, timeout, f"reply to {msg_id!r}")

    def call(self, method: str, params: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Send a request; its whole response message (``result`` or ``error``)."""
        msg_id = self.next_id()
        self.send({"id": msg_id, "method": method, "params": params})
        return self.reply(msg_id, timeout)

    def request(self, method: str, params: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        reply = self.call(method, params, timeout)
        if "error" in reply:
            raise AssertionError(f"{method} failed: {reply['error']}")
        return reply.get("result")

    # -- waiting ---------------------------------------------------------------------------

    def wait(self, match: Callable[[dict[str, Any]], bool], timeout: float = DEFAULT_TIMEOUT,
             what: str = "a message") -> dict[str, Any]:
        for i, message in enumerate(self.backlog):
            if match(message):
                return self.backlog.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}; stderr:\n{self.stderr}")
            try:
                message = self.messages.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self.proc.poll() is not None and self.messages.empty():
                    raise ServerGone(f"server exited ({self.proc.returncode}) while waiting for {what}:\n{self.stderr}")
                continue
            if match(message):
                return message
            self.backlog.append(message)

    def diagnostics(self, uri: str, timeout: float = DEFAULT_TIMEOUT,
                    where: Callable[[list[dict]], bool] = lambda ds: True) -> list[dict[str, Any]]:
        """The next publishDiagnostics for ``uri`` whose list satisfies ``where``."""
        message = self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri and where(m["params"]["diagnostics"]),
            timeout, f"diagnostics for {uri}",
        )
        return message["params"]["diagnostics"]

    # -- lifecycle -------------------------------------------------------------------------

    def initialize(self, root: Path, options: dict[str, Any] | None = None,
                   capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.request("initialize", {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": capabilities or {},
            "initializationOptions": options or {},
        })
        self.notify("initialized", {})
        return result

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}],
        })

    def exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        self.request("shutdown")
        self.notify("exit")
        return self.proc.wait(timeout=timeout)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except (BrokenPipeError, OSError):
                pass


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    return tmp_path


@pytest.fixture
def client(workspace: Path):
    c = LspClient(workspace)
    yield c
    c.kill()
    assert "Traceback" not in c.stderr, c.stderr
