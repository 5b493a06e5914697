"""A result cache so that re-linting unchanged files does not analyze them again.

What is cached: the raw engine output of each analyzed file (before filtering, severity
overrides and suppressions, which are cheap and always re-applied), clean files included.
EXL901 results (analyzer failures, crashes) are never cached.

The key of a file covers everything its raw output depends on: the exportlint version and a
fingerprint of the analysis code (so a development install never serves stale results), the
target, the file's path and content hash, and the paths and content hashes of every linted file
it may import, transitively (the analysis follows imports between linted files).  "May import"
over-approximates: a file depends on each linted file whose module name (its stem, or its
package's directory name for ``__init__.py``) appears in one of its import statements, and on
the ``__init__.py`` files of its packages when it imports relatively.  Editing a file therefore
re-analyzes it and the files that import it, nothing else.

Entries live in ``$EXPORTLINT_CACHE_DIR`` or ``<project root>/.exportlint_cache`` (which holds a
``.gitignore`` of ``*``), one JSON file per analysis-code fingerprint and target, written
atomically; the most recently used :data:`MAX_ENTRIES` entries are kept.  An unreadable,
corrupt or unwritable cache is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from exportlint import __version__
from exportlint.diagnostics import Diagnostic, Target

MAX_ENTRIES = 50_000
MAX_FILES = 8  # cache files of other fingerprints / targets kept

# Subpackages that cannot change what the static analysis finds.
_NOT_ANALYSIS = {"dynamic", "lsp", "reporters", "schema", "_ruledocs", "__pycache__"}
_FROM = re.compile(r"from[ \t]+\.*[\w.]*")
_WORD = re.compile(r"\w+")


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


# ---------------------------------------------------------------------------------------------
# Dependencies between linted files


def _module_word(path: str) -> str:
    head, name = os.path.split(os.path.abspath(path))
    stem = os.path.splitext(name)[0]
    return os.path.basename(head) if stem == "__init__" else stem


def _package_inits(path: str, by_abspath: dict[str, str]) -> list[str]:
    out = []
    directory = os.path.dirname(os.path.abspath(path))
    while True:
        init = by_abspath.get(os.path.join(directory, "__init__.py"))
        if init is None:
            return out
        out.append(init)
        directory = os.path.dirname(directory)


def _import_statements(text: str) -> Iterator[tuple[str, bool]]:
    """(text, is relative) of each ``import`` / ``from ... import`` statement, found cheaply.

    Statements are found from the word ``import`` (a literal search, much faster than a
    line-anchored regex); a parenthesized name list runs to its ``)``.
    """
    if "\\\n" in text:
        text = text.replace("\\\n", " ")
    pos = text.find("import")
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        head = text[start:pos].strip()
        if text[pos + 6 : pos + 7] in (" ", "\t", "(") and (
            not head or head.endswith(";") or _FROM.fullmatch(head)
        ):
            if text[pos + 6 : end].lstrip().startswith("("):
                close = text.find(")", pos)
                end = end if close == -1 else close
            yield text[start:end], head.startswith("from") and head[4:].lstrip().startswith(".")
        pos = text.find("import", end)


def direct_dependencies(texts: dict[str, str]) -> dict[str, set[str]]:
    """For each linted file, the linted files it may import directly (over-approximated)."""
    by_word: dict[str, list[str]] = {}
    for path in texts:
        by_word.setdefault(_module_word(path), []).append(path)
    by_abspath = {os.path.abspath(p): p for p in texts}
    deps: dict[str, set[str]] = {}
    for path, text in texts.items():
        found: set[str] = set()
        for statement, relative in _import_statements(text):
            if relative:
                found.update(_package_inits(path, by_abspath))
            for word in _WORD.findall(statement):
                found.update(by_word.get(word, ()))
        found.discard(path)
        deps[path] = found
    return deps


def _components(deps: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of the dependency graph, dependencies first (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in deps:
        if root in index:
            continue
        work = [(root, iter(sorted(deps[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(deps[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out


def file_keys(texts: dict[str, str], hashes: dict[str, str], target: Target, context: str = "") -> dict[str, str]:
    """Per file: the cache key (see the module docstring).

    Each group of files that import each other gets one digest over its members' paths and
    hashes and the digests of the groups it imports (a Merkle DAG), so a key covers the whole
    transitive closure at linear cost.
    """
    deps = direct_dependencies(texts)
    digest_of: dict[str, str] = {}
    for component in _components(deps):
        members = set(component)
        h = hashlib.sha256(f"{code_fingerprint()}\0{target.value}\0{context}\0".encode())
        for path in component:
            h.update(f"{path}\0{hashes[path]}\0".encode())
        below = {digest_of[d] for p in component for d in deps[p] if d not in members}
        for digest in sorted(below):
            h.update(digest.encode())
        digest = h.hexdigest()
        for path in component:
            digest_of[path] = digest
    return {
        path: hashlib.sha256(f"{path}\0{digest_of[path]}".encode()).hexdigest() for path in texts
    }


# ---------------------------------------------------------------------------------------------
# Storage


class Cache:
    """``get(key)`` before analyzing a file, ``put(key, ...)`` after, then ``save()``."""

    def __init__(self, directory: Path, target: Target):
        self.directory = directory
        self.path = directory / f"{code_fingerprint()[:24]}-{target.value}.json"
        self._old = self._load()
        self._new: dict[str, list[dict]] = {}
        self._dirty = False

    def _load(self) -> dict[str, list[dict]]:
        try:
            with open(self.path, encoding="utf-8") as f:
                entries = json.load(f)["entries"]
            return entries if isinstance(entries, dict) else {}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def get(self, key: str) -> list[Diagnostic] | None:
        raw = self._old.get(key)
        if raw is None:
            return None
        try:
            diagnostics = [Diagnostic.from_dict(d) for d in raw]
        except (KeyError, TypeError, ValueError):
            return None
        self._new[key] = raw
        return diagnostics

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        if not any(d.code == "EXL901" for d in diagnostics):
            self._new[key] = [{**d.to_dict(), **({"alone": d.alone} if d.alone else {})} for d in diagnostics]
            self._dirty = True

    def save(self) -> None:
        """Write the entries used or made by this run after the older ones that still fit."""
        if not self._dirty:
            return
        entries = {k: v for k, v in self._old.items() if k not in self._new}
        entries.update(self._new)
        if len(entries) > MAX_ENTRIES:
            entries = dict(list(entries.items())[-MAX_ENTRIES:])
        try:
            self._prepare_directory()
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"version": __version__, "entries": entries}, f)
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
        files = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for old in files[:-MAX_FILES]:
            old.unlink(missing_ok=True)
