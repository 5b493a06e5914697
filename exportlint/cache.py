"""A result cache so that re-linting an unchanged tree does not analyze anything.

What is cached: the raw engine output of each analyzed file (before filtering, severity
overrides and suppressions, which are cheap and always re-applied), clean files included.
EXL901 results (analyzer failures, crashes) are never cached.

The key of one cache entry covers everything the raw output depends on: the exportlint version,
a fingerprint of exportlint's own source files (so a development install never serves stale
results), the target, and the path and content hash of *every* file of the linted set (the
analysis follows imports between linted files, so any change in the set invalidates the entry).
Re-linting an unchanged set is served entirely from the cache; changing one file re-analyzes
the set.

Entries live in ``$EXPORTLINT_CACHE_DIR`` or ``<project root>/.exportlint_cache`` (which holds a
``.gitignore`` of ``*``), one JSON file per key, written atomically; the newest
:data:`MAX_ENTRIES` are kept.  An unreadable, corrupt or unwritable cache is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from exportlint import __version__
from exportlint.diagnostics import Diagnostic, Target

MAX_ENTRIES = 32


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# Subpackages that cannot change what the static analysis finds.
_NOT_ANALYSIS = {"dynamic", "lsp", "reporters", "schema", "_ruledocs", "__pycache__"}


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Changes whenever a source file of the installed exportlint analysis changes."""
    package = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for directory, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d not in _NOT_ANALYSIS)
        for name in sorted(filenames):
            if name.endswith(".py"):
                st = os.stat(os.path.join(directory, name))
                h.update(f"{directory}/{name}:{st.st_mtime_ns}:{st.st_size};".encode())
    return h.hexdigest()


class Cache:
    """Raw results of one linted set: ``get`` before analyzing, ``put`` after, then ``save``."""

    def __init__(self, directory: Path, target: Target, files: dict[str, str]):
        """``files`` maps each path of the linted set to its content hash."""
        self.directory = directory
        h = hashlib.sha256(f"{code_fingerprint()}\0{target.value}\0".encode())
        for path in sorted(files):
            h.update(f"{path}\0{files[path]}\0".encode())
        self.path = directory / f"{h.hexdigest()[:40]}.json"
        self._entries = self._load()
        self._dirty = False

    def _load(self) -> dict[str, list[dict]]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
            entries = data["files"]
            if not isinstance(entries, dict):
                return {}
            return entries
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def get(self, path: str) -> list[Diagnostic] | None:
        raw = self._entries.get(path)
        if raw is None:
            return None
        try:
            return [Diagnostic.from_dict(d) for d in raw]
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, path: str, diagnostics: list[Diagnostic]) -> None:
        if any(d.code == "EXL901" for d in diagnostics):
            return
        self._entries[path] = [d.to_dict() for d in diagnostics]
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            self._prepare_directory()
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"version": __version__, "files": self._entries}, f)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
            self._prune()
        except OSError:
            pass  # a cache that cannot be written is no cache

    def _prepare_directory(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by exportlint\n*\n", encoding="utf-8")

    def _prune(self) -> None:
        entries = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for old in entries[:-MAX_ENTRIES]:
            old.unlink(missing_ok=True)
