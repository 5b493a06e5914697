"""Parsing of the dynamic pass's user-facing specs (no torch here: the parent uses it too).

* model spec: ``module_or_file:ClassOrFactory`` (``fixtures/vit.py:build``, ``pkg.models:Net``);
* input spec: ``1x3x224x224[:float32]`` (one positional input; ``scalar`` for a 0-d tensor);
* dynamic dim: ``input:dim[:name]`` where ``input`` is a ``forward`` parameter name or a
  positional index (``x:0:batch``, ``0:0``); inputs sharing a name share a size;
* memory size: ``8G``, ``512M``, ``2048`` (MiB when no unit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DTYPES = (
    "float32", "float64", "float16", "bfloat16",
    "int64", "int32", "int16", "int8", "uint8", "bool",
)
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32"}


class SpecError(ValueError):
    """A malformed model / input / dynamic-dim / memory spec (message says what is expected)."""


@dataclass(frozen=True)
class ModelSpec:
    target: str  # a file path (ends with .py) or a dotted module name
    attr: str | None  # class or factory name; None: use the file's conventions

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py")

    def resolve_file(self, base: Path) -> Path | None:
        """The model's source file, found without importing anything (None if not found)."""
        if self.is_file:
            p = Path(self.target)
            p = p if p.is_absolute() else base / p
            return p.resolve() if p.is_file() else None
        rel = Path(*self.target.split("."))
        for cand in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
            if cand.is_file():
                return cand.resolve()
        return None

    def __str__(self) -> str:
        return f"{self.target}:{self.attr}" if self.attr else self.target


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]
    dtype: str = "float32"

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "dtype": self.dtype}


@dataclass(frozen=True)
class DynamicDim:
    input: str  # forward parameter name, or a positional index as a string
    dim: int
    name: str

    def to_json(self) -> dict:
        return {"input": self.input, "dim": self.dim, "name": self.name}


def parse_model(text: str) -> ModelSpec:
    text = text.strip()
    target, sep, attr = text.rpartition(":")
    if not sep or re.fullmatch(r"[A-Za-z]", target):  # no attr (a Windows drive is not one)
        target, attr = text, ""
    if not target:
        raise SpecError(f"model spec {text!r}: expected module_or_file:ClassOrFactory")
    if attr and not attr.isidentifier():
        raise SpecError(f"model spec {text!r}: {attr!r} is not a Python name")
    if not target.endswith(".py") and not all(p.isidentifier() for p in target.split(".")):
        raise SpecError(
            f"model spec {text!r}: {target!r} is neither a .py file nor a dotted module name"
        )
    return ModelSpec(target, attr or None)


def parse_input(text: str) -> InputSpec:
    shape_text, _, dtype = text.strip().partition(":")
    dtype = _ALIASES.get(dtype.strip(), dtype.strip()) or "float32"
    if dtype not in DTYPES:
        raise SpecError(f"input spec {text!r}: unknown dtype {dtype!r} (one of: {', '.join(DTYPES)})")
    if shape_text.strip() == "scalar":
        return InputSpec((), dtype)
    parts = shape_text.strip().lower().split("x")
    if not all(p.isdigit() for p in parts):
        raise SpecError(f"input spec {text!r}: expected sizes joined by 'x', e.g. 1x3x224x224[:float32]")
    return InputSpec(tuple(int(p) for p in parts), dtype)


def parse_dynamic_dim(text: str) -> DynamicDim:
    parts = text.strip().split(":")
    if len(parts) not in (2, 3) or not parts[1].isdigit() or not parts[0]:
        raise SpecError(f"dynamic dim {text!r}: expected input:dim[:name], e.g. x:0:batch")
    name = parts[2] if len(parts) == 3 and parts[2] else f"{parts[0]}_{parts[1]}"
    return DynamicDim(parts[0], int(parts[1]), name)


def parse_memory(value: str | int) -> int:
    """Bytes from ``8G`` / ``512M`` / ``2048`` (MiB)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", str(value), re.IGNORECASE)
    if not m:
        raise SpecError(f"memory limit {value!r}: expected a size like 8G or 512M")
    unit = {"": 2**20, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[m.group(2).upper()]
    size = int(float(m.group(1)) * unit)
    if size < 2**26:  # below 64 MiB not even `import torch` fits
        raise SpecError(f"memory limit {value!r}: too small for the worker (at least 64M; 8G is typical)")
    return size
