"""What exportlint knows of an export: the call site (or a declaration), the exported root
class, the example inputs, the dynamic dims, the exporter and the opset.

Everything here is plain data, picklable and cheap: it is built from Python's ``ast`` without
importing torch, handed to pool workers, and folded into cache keys (:meth:`ExportContext.key`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from exportlint.diagnostics import Target

# Exporter kinds, and the target whose rules judge each.
EXPORT, DRAFT, TRAINING_IR, ONNX_DYNAMO, ONNX_LEGACY, TRACE, SCRIPT = (
    "torch.export", "draft_export", "export_for_training", "onnx-dynamo", "onnx-legacy", "jit.trace", "jit.script",
)
TARGET_OF = {
    EXPORT: Target.EXPORT, DRAFT: Target.EXPORT, TRAINING_IR: Target.EXPORT, ONNX_DYNAMO: Target.EXPORT,
    ONNX_LEGACY: Target.TRACE, TRACE: Target.TRACE,
}
TORCH_EXPORTERS = (EXPORT, DRAFT, TRAINING_IR)  # the exporters that take `dynamic_shapes` with Dims
ONNX_EXPORTERS = (ONNX_DYNAMO, ONNX_LEGACY)


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class DimSpec:
    """One dynamic dim as declared: ``Dim("h", min=2)``, ``Dim.AUTO``, ``"batch"`` (dynamic_axes)."""

    kind: str  # named | auto | dynamic | static | string | derived | unknown
    name: str | None = None
    min: int | None = None
    max: int | None = None

    @property
    def dynamic(self) -> bool:
        return self.kind != "static"

    def text(self) -> str:
        if self.kind == "named":
            bounds = "".join(f", {k}={v}" for k, v in (("min", self.min), ("max", self.max)) if v is not None)
            return f'Dim("{self.name}"{bounds})'
        if self.kind in ("auto", "dynamic", "static"):
            return f"Dim.{self.kind.upper()}"
        if self.kind == "string":
            return repr(self.name) if self.name else "dynamic"
        return self.name or self.kind


@dataclass(frozen=True)
class InputSpec:
    """One example input of the call."""

    text: str  # its source, shortened
    shape: tuple[int | None, ...] | None = None  # literal sizes (None: not a literal)
    is_tensor: bool | None = None  # None: not known
    span: Span | None = None
    dtype: str | None = None  # "int64" for torch.randint, None: floating point (the factories' default)


@dataclass(frozen=True)
class Root:
    """The exported Module class, in a linted file."""

    path: str  # absolute path of the file defining the class
    name: str  # class name
    params: tuple[str, ...] = ()  # forward's parameters (without self), in order
    train_layers: bool = False  # its file uses dropout or batch norm (they differ in training mode)

    def __str__(self) -> str:
        return f"{self.name}"


@dataclass
class Site:
    """One export call (``kind == "call"``) or one declared root (``kind == "declared"``)."""

    path: str
    span: Span
    func: str  # qualified name of the called function (or "declared")
    exporter: str  # one of the exporter kinds above
    model: str  # the exported expression's source
    root: Root | None = None
    why_unresolved: str = ""
    inputs: list[InputSpec] | None = None
    # forward parameter name or positional index -> {dim index -> DimSpec}
    dims: dict[str | int, dict[int, DimSpec]] = field(default_factory=dict)
    dims_from: str = ""  # dynamic_shapes | dynamic_axes | declared | ""
    input_names: list[str] | None = None
    output_names: list[str] | None = None
    opset: int | None = None
    dynamo: bool | None = None  # as written (None: not passed)
    strict: bool | None = None
    training: str | None = None  # the `training=` argument of torch.onnx.export, as written
    eval_mode: bool | None = None  # True: .eval() seen; False: built here and never put in eval; None: unknown
    keywords: dict[str, Span] = field(default_factory=dict)  # argument name -> span of its value
    declared: bool = False
    open_kwargs: bool = False  # the call also passes `**kwargs`: arguments not written may be in them
    project_root: str = ""  # a declared root's: the project (its scope)
    torch_version: str = ""  # the torch the call is judged for (configured, installed or latest known)

    @property
    def scope(self) -> str:
        """The directory below which this site decides what is export code: the project for a
        declared root, else the directory tree holding both the call and the root class."""
        if self.project_root or self.root is None:
            return self.project_root
        return os.path.commonpath(
            [os.path.dirname(os.path.abspath(self.path)), os.path.dirname(os.path.abspath(self.root.path))]
        )

    @property
    def target(self) -> Target | None:
        return TARGET_OF.get(self.exporter)

    def dynamic_dims(self, param: str, index: int) -> dict[int, DimSpec] | None:
        """Declared dims of forward parameter ``param`` (at position ``index``), None if unknown."""
        if param in self.dims:
            return self.dims[param]
        return self.dims.get(index)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path, "line": self.span.line, "column": self.span.column,
            "exporter": self.exporter, "call": self.func, "model": self.model,
            "root": None if self.root is None else {"path": self.root.path, "class": self.root.name},
        }
        if self.why_unresolved:
            out["unresolved"] = self.why_unresolved
        out["inputs"] = None if self.inputs is None else [
            {"text": i.text, "shape": None if i.shape is None else list(i.shape)} for i in self.inputs
        ]
        params = self.root.params if self.root is not None else ()
        out["dynamic_dims"] = {
            (params[k] if isinstance(k, int) and k < len(params) else str(k)): {str(d): spec.text() for d, spec in sorted(v.items())}
            for k, v in self.dims.items()
        }
        out["dims_from"] = self.dims_from or None
        out["opset"] = self.opset
        out["eval"] = self.eval_mode
        for key in ("input_names", "output_names", "dynamo", "strict", "training"):
            out[key] = getattr(self, key)
        return out


@dataclass
class Judgement:
    """How one root is judged: under which target, with which dims, for which ONNX exporter."""

    target: Target
    sites: list[Site]


@dataclass
class ExportContext:
    """Every site and declared root of the run, and how each resolved root is judged.

    A site decides what is export code only inside its *scope*: the directory tree holding both the
    export call and the root class (a declared root: the whole project).  A file outside every
    scope is linted as before (every Module exported, every dim dynamic), so an export script in
    one corner of a monorepo does not silence the rest.  A scope that also holds an export call
    exportlint cannot resolve (a library exporting whatever model it is given) decides nothing.
    """

    sites: list[Site] = field(default_factory=list)
    target_override: Target | None = None  # --target / `target =` given explicitly

    def resolved(self) -> list[Site]:
        return [s for s in self.sites if s.root is not None and s.target is not None]

    def scopes(self) -> dict[str, list[Site]]:
        """Directory -> the resolved sites that decide what is export code below it."""
        out: dict[str, list[Site]] = {}
        for site in self.resolved():
            out.setdefault(site.scope, []).append(site)
        for site in self.sites:
            if site.target is not None and site.root is None:
                here = os.path.dirname(os.path.abspath(site.path))
                for scope in list(out):
                    if _within(here, scope) or _within(scope, here):
                        del out[scope]
        return out

    @property
    def restricts(self) -> bool:
        return bool(self.scopes())

    def scope_of(self, path: str) -> list[Site] | None:
        """The sites deciding what is export code in ``path`` (None: no scope covers it)."""
        found = [s for scope, sites in self.scopes().items() if _within(os.path.abspath(path), scope) for s in sites]
        return found or None

    def judgements(self, sites: list[Site] | None = None) -> dict[tuple[str, str], list[Judgement]]:
        """(root path, class name) -> one Judgement per target it is exported under."""
        out: dict[tuple[str, str], dict[Target, Judgement]] = {}
        for site in sites if sites is not None else [s for v in self.scopes().values() for s in v]:
            assert site.root is not None and site.target is not None
            target = self.target_override or site.target
            per = out.setdefault((site.root.path, site.root.name), {})
            per.setdefault(target, Judgement(target, [])).sites.append(site)
        return {k: list(v.values()) for k, v in out.items()}

    def key(self) -> str:
        """A fingerprint of everything the analysis reads from the context (for cache keys)."""
        import hashlib
        import json

        if not self.restricts:
            return ""
        data = [
            (k, [(j.target.value, [(s.exporter, s.opset, s.scope, s.root and s.root.params, s.describe()["dynamic_dims"])
                                    for s in j.sites]) for j in v])
            for k, v in sorted(self.judgements().items())
        ]
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)
