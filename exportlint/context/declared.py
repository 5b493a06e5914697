"""``[tool.exportlint.export]``: the export context of a project without an export script.

.. code-block:: toml

    [tool.exportlint.export]
    roots = ["pkg.models:Net"]          # module_or_file:Class, one or more
    exporter = "torch.export"           # torch.export | draft_export | onnx-dynamo | onnx-legacy | jit.trace
    dynamic-dims = ["x:0:batch", "x:2"] # forward parameter (or position) : dim [: name]
    inputs = ["1x3x224x224"]            # example inputs, in forward's order
    opset = 17                          # ONNX opset (ONNX exporters)
    torch-version = "2.13"              # the torch the export runs on (default: the installed one)

The command line mirrors it: ``--root``, ``--exporter``, ``--dynamic-dim``, ``--input``,
``--opset``, ``--torch-version``.  Every problem is a ValueError naming the key and the value.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from exportlint.context.model import DRAFT, EXPORT, ONNX_DYNAMO, ONNX_LEGACY, TRACE, TRAINING_IR, DimSpec, InputSpec, Root, Site, Span
from exportlint.data import minor_version
from exportlint.dynamic.specs import SpecError, parse_dynamic_dim, parse_input, parse_model

EXPORTER_NAMES = {
    "torch.export": EXPORT, "export": EXPORT, "draft_export": DRAFT, "export_for_training": TRAINING_IR,
    "onnx-dynamo": ONNX_DYNAMO, "onnx": ONNX_DYNAMO, "onnx-legacy": ONNX_LEGACY, "onnx-torchscript": ONNX_LEGACY,
    "jit.trace": TRACE, "trace": TRACE,
}
KEYS = ("roots", "exporter", "dynamic-dims", "inputs", "opset", "torch-version")
OPSETS = range(7, 26)


@dataclass
class Declared:
    """The validated declaration (roots not yet resolved to files)."""

    roots: list[str] = field(default_factory=list)
    exporter: str = EXPORT
    dims: list[Any] = field(default_factory=list)  # DynamicDim
    inputs: list[Any] = field(default_factory=list)  # dynamic.specs.InputSpec
    opset: int | None = None
    torch_version: str | None = None

    @property
    def empty(self) -> bool:
        return not self.roots


def validate(table: Any) -> Declared:
    """A Declared from the raw TOML table (or CLI values); ValueError on any bad value."""
    if not isinstance(table, dict):
        raise ValueError(f"expected a table, got {table!r}")
    for key in table:
        if key not in KEYS:
            raise ValueError(f"unknown key {key!r} (expected one of: {', '.join(KEYS)})")
    out = Declared()
    try:
        out.roots = [str(parse_model(r)) for r in _strings(table.get("roots", []), "roots")]
        for r in out.roots:
            if ":" not in r:
                raise ValueError(f"roots: {r!r} names no class (expected module_or_file:Class)")
        out.dims = [parse_dynamic_dim(d) for d in _strings(table.get("dynamic-dims", []), "dynamic-dims")]
        out.inputs = [parse_input(i) for i in _strings(table.get("inputs", []), "inputs")]
    except SpecError as e:
        raise ValueError(str(e)) from None
    exporter = table.get("exporter", "torch.export")
    if exporter not in EXPORTER_NAMES:
        raise ValueError(f"exporter: unknown exporter {exporter!r} (expected one of: {', '.join(EXPORTER_NAMES)})")
    out.exporter = EXPORTER_NAMES[exporter]
    opset = table.get("opset")
    if opset is not None and (isinstance(opset, bool) or not isinstance(opset, int) or opset not in OPSETS):
        raise ValueError(f"opset: expected an ONNX opset between {OPSETS[0]} and {OPSETS[-1]}, got {opset!r}")
    out.opset = opset
    version = table.get("torch-version")
    if version is not None:
        if minor_version(str(version)) is None:
            raise ValueError(f"torch-version: expected a torch version like 2.13, got {version!r}")
        out.torch_version = str(version)
    if (out.dims or out.inputs or "opset" in table or "exporter" in table) and not out.roots:
        raise ValueError("dynamic-dims, inputs, exporter and opset describe a root: also give `roots`")
    return out


def _strings(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key}: expected a list of strings, got {value!r}")
    return value


def declared_sites(decl: Declared, base: str, project: Any, skip_missing: bool = False) -> list[Site]:
    """One Site per declared root, resolved in the linted files; ValueError when a root does not
    name a Module class of the linted files (``skip_missing``: a root outside them is left out), or
    a dim names no forward parameter."""
    sites = []
    for text in decl.roots:
        spec = parse_model(text)
        path = _root_file(spec, base, project)
        if path is None and skip_missing:
            continue
        if path is None:
            raise ValueError(f"roots: {text!r}: {spec.target} is not among the linted files")
        index = project.index(path)
        cls = index.classes.get(spec.attr) if index is not None else None
        if cls is None or not cls.is_module() or cls.find_method("forward") is None:
            raise ValueError(f"roots: {text!r}: {spec.attr} is not an nn.Module class with a forward in {path}")
        fn = cls.find_method("forward")[1]
        params = tuple(p.name.value for p in [*fn.params.posonly_params, *fn.params.params][1:])
        dims: dict[str | int, dict[int, DimSpec]] = {}
        for d in decl.dims:
            if not d.input.isdigit() and d.input not in params:
                raise ValueError(f"dynamic-dims: {d.input!r} is not a parameter of {spec.attr}.forward{params}")
            key: str | int = int(d.input) if d.input.isdigit() else d.input
            dims.setdefault(key, {})[d.dim] = DimSpec("named", d.name)
        inputs = [InputSpec("x".join(map(str, i.shape)) or "scalar", tuple(i.shape), True) for i in decl.inputs]
        sites.append(Site(
            path=path, span=Span(1, 1, 1, 1), func="declared", exporter=decl.exporter, model=text,
            root=Root(path, spec.attr, params), inputs=inputs or None, dims=dims,
            dims_from="declared" if dims else "", opset=decl.opset, declared=True, project_root=os.path.abspath(base),
        ))
    return sites


def _root_file(spec: Any, base: str, project: Any) -> str | None:
    if spec.is_file:
        path = os.path.abspath(os.path.join(base, spec.target))
        return path if path in project.paths else None
    return project.path_of_module(spec.target)
