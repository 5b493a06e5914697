"""Recover the user's source lines from exporter exceptions and warnings (runs in the child).

Measured on torch 2.13 (see ../shared/research/exporter-behaviour-torch-2.13.md): non-strict
``torch.export`` failures keep the user's frames in ``__traceback__``; strict (dynamo) ones in
``exc.real_stack`` / ``exc.innermost_user_frame_summary``; ``torch.onnx.export(dynamo=True)``
wraps the capture error in ``__cause__``; several messages embed ``File "...", line N`` or
TorchScript source ranges.  Only files the dynamic pass was asked about ("user files") count.
Nothing here imports torch.
"""

from __future__ import annotations

import os
import re
import traceback
from typing import Iterable, Iterator

Location = tuple[str, int, str]  # (absolute path, line, how it was found)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MESSAGE_RX = [
    re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)'),  # tracebacks, "from user code:"
    re.compile(r"\((?P<file>[^\s()]+\.py):(?P<line>\d+) in (?P<func>[^\s()]+)\)"),  # symbolic_shapes
    re.compile(r"File (?P<file>\S+\.py), lineno (?P<line>\d+)"),  # draft_export report
    re.compile(r'(?P<file>/[^\s:()"]+\.py):(?P<line>\d+):\d+'),  # TorchScript graph dumps
    re.compile(r'(?P<file>/[^\s:()"]+\.py)\((?P<line>\d+)\): \S+'),  # "Trace source location:"
]


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def exception_chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and every exception it was raised from or during, each once."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [e.__cause__, e.__context__]


class UserFiles:
    """Membership test for "is this one of the user's files" on absolute, resolved paths."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = {os.path.realpath(p) for p in paths}
        self._cache: dict[str, str | None] = {}

    def match(self, filename: str | None) -> str | None:
        if not filename:
            return None
        if filename not in self._cache:
            real = os.path.realpath(filename)
            self._cache[filename] = real if real in self.paths else None
        return self._cache[filename]


def _innermost(frames: Iterable, files: UserFiles, how: str) -> Location | None:
    last = None
    for fs in frames:
        path = files.match(getattr(fs, "filename", None))
        if path is not None and getattr(fs, "lineno", None):
            last = (path, int(fs.lineno), how)
    return last


def message_locations(text: str, files: UserFiles, how: str = "message") -> list[Location]:
    """Every user-file location quoted in ``text``, in order of appearance."""
    found: list[tuple[int, Location]] = []
    for rx in _MESSAGE_RX:
        for m in rx.finditer(text):
            path = files.match(m.group("file"))
            if path is not None:
                found.append((m.start(), (path, int(m.group("line")), how)))
    return [loc for _, loc in sorted(found)]


def failure_points(exc: BaseException, files: UserFiles) -> list[Location]:
    """The innermost user location of each source of each exception in the chain, best first.

    Order of trust: dynamo's own ``innermost_user_frame_summary``, then ``real_stack``, then
    the Python traceback (non-strict export, trace and eager really run the user's code),
    then locations quoted in the message.  Duplicated lines are dropped.
    """
    points: list[Location] = []
    for e in exception_chain(exc):
        fs = getattr(e, "innermost_user_frame_summary", None)
        if fs is not None:
            points.append(_innermost([fs], files, "innermost_user_frame"))
        points.append(_innermost(getattr(e, "real_stack", None) or [], files, "real_stack"))
        points.append(_innermost(traceback.extract_tb(e.__traceback__), files, "traceback"))
        quoted = message_locations(strip_ansi(str(e)), files)
        points.append(quoted[-1] if quoted else None)
    return _unique(p for p in points if p is not None)


def _unique(locs: Iterable[Location]) -> list[Location]:
    out: list[Location] = []
    seen: set[tuple[str, int]] = set()
    for loc in locs:
        if (loc[0], loc[1]) not in seen:
            seen.add((loc[0], loc[1]))
            out.append(loc)
    return out


def tracer_warnings(records: Iterable, files: UserFiles) -> list[dict]:
    """TracerWarnings (and other warnings) attributed to user files, deduplicated."""
    out: list[dict] = []
    seen: set[tuple[str, int, str]] = set()
    for w in records:
        path = files.match(w.filename)
        category = getattr(w.category, "__name__", str(w.category))
        if path is None or category != "TracerWarning":
            continue
        text = str(w.message).split("\n")[0]
        key = (path, int(w.lineno), text)
        if key not in seen:
            seen.add(key)
            out.append({"path": path, "line": int(w.lineno), "message": text})
    return out


# Lines that only say that something failed, not what: the next line says what.
_BOILERPLATE = re.compile(
    r"(Tracing failed sanity checks!?|Failed to (export|convert) the .*|Constraints violated .*"
    r"|.*This is step \d/\d .*|Traceback \(most recent call last\):|Exception raised from .*"
    r"|For more information.*|The following call raised this error:?)$")


def key_line(exc: BaseException) -> str:
    """The line of ``exc``'s message that says what failed (ANSI stripped; "" when empty): the
    first line that is not boilerplate such as "Tracing failed sanity checks!", with the next
    line when it ends in ":" (onnxruntime's "... for the following indices" too)."""
    lines = [ln.strip() for ln in strip_ansi(str(exc)).splitlines() if ln.strip()]
    if not lines:
        return ""
    i = next((i for i, ln in enumerate(lines) if not _BOILERPLATE.match(ln)), 0)
    text = lines[i].removeprefix("- ")
    if (text.endswith(":") or text.endswith("indices")) and i + 1 < len(lines):
        text += " " + lines[i + 1]
    return text[:300]


def root_cause(exc: BaseException) -> BaseException:
    """The original error behind wrappers such as ONNX's ``TorchExportError`` (via ``__cause__``)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc
