"""When the language server lints: one lint at a time per document, edits supersede, never queue.

A lint runs in a worker thread and cannot be interrupted, so cancelling it (as the server did
before) only abandoned it: with no debounce, every edit of a burst still ran its lint, one after
the other, and the diagnostics shown fell further behind with each edit.  Here, per document:

* at most one lint runs; edits that arrive meanwhile only mark the document as changed;
* when it ends, its result is published (with its version: at most one lint behind) and, if
  the document changed, one lint of the latest text starts at once; all the edits in between
  are never linted;
* the debounce (``delay``) waits for a quiet moment before a lint starts.

So after a burst of edits the last version's diagnostics arrive within the rest of the lint in
progress plus one lint, whatever the length of the burst.  Independent of pygls.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

logger = logging.getLogger("exportlint.lsp")
Job = TypeVar("Job")


@dataclass
class _Document:
    due: float = 0.0  # loop time at which a lint may start
    wanted: asyncio.Event = field(default_factory=asyncio.Event)  # changed since the last lint started
    nudged: asyncio.Event = field(default_factory=asyncio.Event)  # a request came: ``due`` may be earlier
    task: asyncio.Task | None = None


class LintScheduler(Generic[Job]):
    """``snapshot(uri)`` on the event loop takes what to lint (None: nothing), ``work(job)`` lints it
    in ``executor``, ``done(uri, job, result)`` publishes on the event loop."""

    def __init__(self, snapshot: Callable[[str], Job | None], work: Callable[[Job], Any],
                 done: Callable[[str, Job, Any], None], executor: Callable[[], Executor | None] = lambda: None):
        self._snapshot, self._work, self._done, self._executor = snapshot, work, done, executor
        self._documents: dict[str, _Document] = {}
        self.lints_started = 0

    def request(self, uri: str, delay: float) -> None:
        """Lint ``uri`` once ``delay`` seconds pass without another request for it."""
        document = self._documents.setdefault(uri, _Document())
        document.due = asyncio.get_running_loop().time() + delay
        document.wanted.set()
        document.nudged.set()
        if document.task is None:
            document.task = asyncio.ensure_future(self._serve(uri, document))

    def forget(self, uri: str) -> None:
        """No more lints for ``uri``; a lint in progress is left to finish, unpublished."""
        document = self._documents.pop(uri, None)
        if document is not None and document.task is not None:
            document.task.cancel()

    async def _serve(self, uri: str, document: _Document) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await document.wanted.wait()
            while (left := document.due - loop.time()) > 0:
                document.nudged.clear()
                try:
                    await asyncio.wait_for(document.nudged.wait(), left)
                except asyncio.TimeoutError:
                    pass
            document.wanted.clear()
            try:
                job = self._snapshot(uri)
                if job is None:
                    continue
                self.lints_started += 1
                result = await loop.run_in_executor(self._executor(), self._work, job)
                self._done(uri, job, result)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # keep serving this document
                logger.error("linting %s failed: %s: %s", uri, type(exc).__name__, exc)
