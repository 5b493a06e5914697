"""The linted set: which file is which module, and lazy, cached access to their indexes.

A ``Project`` is cheap to build and to pickle (paths only); a worker process loads the
files it needs on first use, so following ``from .layers import Block`` parses
``layers.py`` at most once per process.
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict
from typing import Any, Callable

from exportlint.analysis.index import ClassInfo, FileIndex


def module_name_for(path: str) -> str:
    """Dotted module name of ``path``: the stem plus every enclosing package directory, including a
    folder without `__init__.py` inside a package (a namespace portion: anomalib's
    `anomalib/data/validators/torch/` is `anomalib.data.validators.torch`, never `torch`)."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    parts = [] if stem == "__init__" else [stem]
    while _is_package(directory) or _is_package(os.path.dirname(directory)):
        directory, pkg = os.path.split(directory)
        parts.append(pkg)
        if not pkg:
            break
    return ".".join(reversed(parts)) or stem


def _is_package(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


# Top-level modules a dotted suffix of a linted file's name must never stand for: the standard library
# and the libraries model code imports by these names.  A package's own `torch` subpackage
# (`gluonts.torch`, `timesfm.torch`) registered as `torch` made every `torch.*` call project code, and
# a run linting such a package next to others reported nothing at all.
_NEVER_SHADOWED = frozenset(sys.stdlib_module_names) | {
    "torch", "torchvision", "torchaudio", "torchtext", "numpy", "scipy", "einops", "transformers", "timm",
    "onnx", "onnxruntime", "onnxscript", "jax", "flax", "tensorflow", "keras", "PIL", "cv2", "triton",
}


class Project:
    def __init__(self, paths: list[str] | tuple[str, ...] = ()) -> None:
        self.paths = [os.path.abspath(p) for p in paths]
        self._by_module: dict[str, str] | None = None
        self._roots: set[str] = set()
        # Most recently used parsed files; bounded so that a worker linting thousands of files
        # keeps memory flat (an evicted file is parsed again if something imports it later).
        self._indexes: OrderedDict[str, FileIndex | None] = OrderedDict()
        self._reader: Callable[[str], str | None] = _read_source

    def __getstate__(self) -> dict:
        return {"paths": self.paths}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["paths"])  # type: ignore[misc]

    # -- module names ---------------------------------------------------------------------------
    def _modules(self) -> dict[str, str]:
        """Every dotted name a linted file can be imported as: its full module name and each
        dotted suffix of it (for files linted outside their installed package root)."""
        if self._by_module is None:
            full: dict[str, str] = {}
            for p in self.paths:
                full.setdefault(module_name_for(p), p)
            self._by_module = dict(full)
            for name, p in full.items():
                parts = name.split(".")
                for i in range(1, len(parts)):
                    if parts[i] in _NEVER_SHADOWED:
                        continue  # `gluonts/torch/`, `timesfm/torch/`: never the `torch` the model imports
                    self._by_module.setdefault(".".join(parts[i:]), p)
            self._roots = {name.split(".")[0] for name in self._by_module}
        return self._by_module

    def package_of(self, path: str, level: int) -> str | None:
        """The package a relative import of ``level`` dots in ``path`` refers to."""
        name = module_name_for(path)
        parts = name.split(".")
        if os.path.basename(path) != "__init__.py":
            parts = parts[:-1]
        drop = level - 1
        if drop > len(parts):
            return None
        parts = parts[: len(parts) - drop] if drop else parts
        return ".".join(parts) or None

    def path_of_module(self, module: str) -> str | None:
        return self._modules().get(module)

    def defines(self, qual: str) -> bool:
        """Could ``qual`` (``pkg.mod.Name``) live in a linted file?  Cheap: no file is loaded."""
        mods = self._modules()
        if qual.split(".")[0] not in self._roots:
            return False
        parts = qual.split(".")
        return any(".".join(parts[:cut]) in mods for cut in range(len(parts) - 1, 0, -1))

    # -- indexes -----------------------------------------------------------------------------------
    CACHE_SIZE = 384

    def register(self, index: FileIndex) -> None:
        self._remember(os.path.abspath(index.path), index)

    def _remember(self, path: str, index: FileIndex | None) -> None:
        self._indexes[path] = index
        self._indexes.move_to_end(path)
        while len(self._indexes) > self.CACHE_SIZE:
            self._indexes.popitem(last=False)

    def index(self, path: str) -> FileIndex | None:
        path = os.path.abspath(path)
        if path in self._indexes:
            self._indexes.move_to_end(path)
        else:
            self._remember(path, None)  # guards against import cycles while loading
            text = self._reader(path)
            if text is not None:
                self._remember(path, FileIndex.light(path, text, self))
        return self._indexes.get(path)

    def _split(self, qual: str) -> tuple[FileIndex, str] | None:
        """(index of the defining module, remaining attribute path) for a qualified name."""
        parts = qual.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            p = self.path_of_module(".".join(parts[:cut]))
            if p is not None:
                idx = self.index(p)
                if idx is not None:
                    return idx, ".".join(parts[cut:])
        return None

    def find_class(self, qual: str, _depth: int = 0) -> ClassInfo | None:
        found = self._split(qual)
        if found is None or _depth > 5:
            return None
        idx, name = found
        if name in idx.classes:
            return idx.classes[name]
        if name in idx.imports and idx.imports[name] != qual:  # re-export
            return self.find_class(idx.imports[name], _depth + 1)
        return None

    def find_function(self, qual: str, _depth: int = 0) -> "tuple[FileIndex, Any] | None":
        found = self._split(qual)
        if found is None or _depth > 5:
            return None
        idx, name = found
        if name in idx.functions:
            return idx, idx.functions[name]
        if name in idx.imports and idx.imports[name] != qual:
            return self.find_function(idx.imports[name], _depth + 1)
        return None


def _read_source(path: str) -> str | None:
    """The text of another linted file, read like the driver reads it (size limit, PEP 263,
    regular files only); None if it cannot be."""
    from exportlint.files import SourceError, read_source

    try:
        return read_source(path)[1]
    except SourceError:
        return None
