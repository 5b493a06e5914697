"""Parent side: run the jobs in a worker process, with a per-model timeout and a memory cap.

One worker (``python -m exportlint.dynamic.child``) serves the model files one after the
other, so ``import torch`` and the exporters' first-use costs are paid once.  When it hangs
past a model's timeout, crashes or is killed, that model gets a result saying so and a fresh
worker carries on with the next model.  The user's stdout/stderr go to a log file.

Every process the worker starts, also in a new session or after its parent died, inherits
``EXPORTLINT_DYNAMIC_RUN=<token>`` in its environment: when a worker ends (done, timed out,
or the run is interrupted) every process carrying the run's token is killed, with the
worker's process group.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

POLL_SECONDS = 0.2
STARTUP_GRACE = 120.0  # on top of the timeout for the worker's `import torch` & co.
TAG = "EXPORTLINT_DYNAMIC_RUN"

Progress = Callable[[str], None]


@dataclass
class Worker:
    """One worker process over ``jobs``, its event file read incrementally."""

    jobs: list[dict]
    settings: dict
    workdir: Path
    number: int
    token: str
    events: list[dict] = field(default_factory=list)
    _offset: int = 0
    proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.jobs_file = self.workdir / f"jobs-{self.number}.json"
        self.events_file = self.workdir / f"events-{self.number}.jsonl"
        self.log_file = self.workdir / f"output-{self.number}.log"
        self.jobs_file.write_text(json.dumps({**self.settings, "jobs": self.jobs}))
        self.events_file.touch()
        with open(self.log_file, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "exportlint.dynamic.child", str(self.jobs_file),
                 str(self.events_file)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, env=_child_env(self.token), cwd=self.workdir,
            )

    def poll(self) -> list[dict]:
        """New complete events since the last call."""
        with open(self.events_file, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1
        self._offset += end
        new = [json.loads(line) for line in data[:end].splitlines() if line.strip()]
        self.events += new
        return new

    def kill(self) -> None:
        """Kill the worker's process group and every process that carries the run's token
        (what the model started, also in a new session); wait for the worker."""
        if self.proc is None:
            return
        for _ in range(20):  # until no tagged process is left (they may fork meanwhile)
            tagged = tagged_pids(self.token)
            for pid, group in [(self.proc.pid, True)] + [(p, False) for p in tagged]:
                try:
                    (os.killpg if group else os.kill)(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if not tagged:
                break
            time.sleep(0.05)
        self.proc.wait()

    def log_tail(self, where: str, lines: int = 3) -> str:
        text = self.log_file.read_text(errors="replace")
        text = text.rsplit(f"=== exportlint: {where} ===", 1)[-1]
        kept = [ln for ln in text.splitlines() if ln.strip()]
        return " | ".join(kept[-lines:])


def tagged_pids(token: str) -> list[int]:
    """Processes whose environment carries the run's token (Linux /proc; [] elsewhere)."""
    needle = f"{TAG}={token}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                env = fh.read()
        except OSError:  # gone, or another user's
            continue
        if needle in env.split(b"\0"):
            found.append(int(name))
    return found


def _child_env(token: str) -> dict[str, str]:
    """The worker's environment: the run's token; PYTHONPATH absolute (the worker runs in a
    scratch directory), exportlint importable even if not installed."""
    env = dict(os.environ)
    raw = env.get("PYTHONPATH")  # an empty entry is the working directory: this one
    entries = [os.path.abspath(p or os.curdir) for p in raw.split(os.pathsep)] if raw else []
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2])] + entries)
    env[TAG] = token
    return env


def run_jobs(jobs: list[dict], settings: dict, timeout: float, workdir: Path,
             progress: Progress | None = None) -> dict[str, dict]:
    """{job id: result}; every job gets a result, whatever happens to the worker."""
    results: dict[str, dict] = {}
    where = {j["id"]: j["where"] for j in jobs}
    remaining = list(jobs)
    number = 0
    token = secrets.token_hex(8)
    while remaining:
        worker = Worker(remaining, settings, workdir, number, token)
        number += 1
        try:
            worker.start()
            _watch(worker, timeout, results, where, progress)
        finally:  # done, timed out, crashed or interrupted: nothing of it outlives the run
            worker.kill()
        remaining = [j for j in remaining if j["id"] not in results]
    return results


class Interrupted(BaseException):
    """SIGTERM or SIGHUP arrived during the dynamic pass (raised so that clean-up runs)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def signals_clean_up() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into :class:`Interrupted` inside the block (SIGINT already raises
    KeyboardInterrupt), so that the worker is killed and the scratch directory removed; after
    the block, die of that signal as the default action would have."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_(signum: int, frame: object) -> None:
        raise Interrupted(signum)
    caught = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
    old = {s: signal.signal(s, raise_) for s in caught}
    try:
        yield
    except Interrupted as exc:
        for s, handler in old.items():
            signal.signal(s, handler)
        os.kill(os.getpid(), exc.signum)  # the old handler (default: terminate) takes it from here
        raise
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _watch(worker: Worker, timeout: float, results: dict[str, dict], where: dict[str, str],
           progress: Progress | None) -> None:
    started = time.monotonic()
    deadline = started + timeout + STARTUP_GRACE
    current: str | None = None
    partial: list[dict] = []
    info: dict = {}
    running: str | None = None
    while True:
        exited = _wait(worker.proc, POLL_SECONDS)
        for ev in worker.poll():
            kind = ev["event"]
            if kind == "ready":
                deadline = time.monotonic() + timeout
            elif kind == "start":
                current, partial, info, running = ev["job"], [], {}, None
                deadline = time.monotonic() + timeout
                _say(progress, f"{where[current]}: loading the model")
            elif kind == "phase":
                running = ev["exporter"]
                _say(progress, f"{where[current]}: {running}")
            elif kind == "model":
                info = {k: ev[k] for k in ("model", "forward", "inputs", "executed")}
            elif kind == "exporter":
                partial.append(ev["result"])
            elif kind == "done":
                results[ev["job"]] = ev["result"]
                current = running = None
            elif kind == "fatal":
                for job in worker.jobs:
                    results.setdefault(job["id"], _error_result("worker", ev["message"], []))
        if exited:
            if current is not None:
                results[current] = _death_result(worker, where[current], running, partial, info)
            elif worker.proc.returncode != 0 and not results:
                msg = f"the dynamic-pass worker exited with {_exit_text(worker.proc.returncode)}: " \
                      f"{worker.log_tail('', 3)}"
                for job in worker.jobs:
                    results.setdefault(job["id"], _error_result("worker", msg, []))
            return
        if time.monotonic() > deadline:
            worker.kill()
            worker.poll()
            if current is None:  # still importing torch: give every job the same answer
                for job in worker.jobs:
                    results.setdefault(job["id"], _error_result(
                        "timeout", f"the dynamic-pass worker did not start within {timeout:g} s", []))
                return
            msg = f"did not finish within {timeout:g} s (--dynamic-timeout)"
            results[current] = _interrupted(running, partial, info, "timeout", msg)
            return


def _wait(proc: subprocess.Popen, seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _death_result(worker: Worker, where: str, running: str | None, partial: list[dict],
                  info: dict) -> dict:
    code = worker.proc.returncode
    how = _exit_text(code)
    if code == -signal.SIGKILL:
        how += " (killed: out of memory?)"
    tail = worker.log_tail(where)
    msg = f"the worker process died ({how})" + (f"; its last output: {tail}" if tail else "")
    status = "out-of-memory" if code == -signal.SIGKILL else "crashed"
    return _interrupted(running, partial, info, status, msg)


def _interrupted(running: str | None, partial: list[dict], info: dict, status: str, msg: str) -> dict:
    """A job cut short: as an exporter outcome when an exporter was running, else a setup error."""
    if running is None:
        return _error_result(status, msg, partial)
    outcome = {"exporter": running, "status": status, "phase": "export", "exception": None,
               "message": msg, "detail": None, "max_abs_diff": None, "points": [],
               "implicated": [], "warnings": [], "seconds": None}
    return {"error": None, "model": None, "forward": None, "inputs": None, "executed": {},
            **info, "exporters": partial + [outcome]}


def _error_result(kind: str, message: str, partial: list[dict]) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message, "exception": None, "points": []},
            "model": None, "forward": None, "inputs": None, "executed": {}, "exporters": partial}


def _say(progress: Progress | None, text: str) -> None:
    if progress is not None:
        progress(text)
