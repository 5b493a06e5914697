"""Measured tables shipped with exportlint, read without importing torch.

- `onnx_ops.json` (EXL105): ONNX operator support per opset for torch.onnx.export's legacy (TorchScript) and
  dynamo exporters, one row per torch op / call form, with how source code spells the op. Regenerate with
  `python benchmarks/onnx_ops/measure.py` (readable copy: benchmarks/onnx_ops/results.md).
- `exporter_signatures.json` (EXL104): the export APIs' parameters per torch minor version, the removed
  parameters and the `dynamo=` default. Regenerate with `python benchmarks/onnx_ops/signatures.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

UNKNOWN = object()  # an argument whose value is not a literal: matches no `where` condition


@lru_cache(maxsize=None)
def _load(name: str) -> dict:
    return json.loads(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))


# -- ONNX operator support (EXL105) ------------------------------------------------------------------------


def onnx_op_support() -> dict:
    """The whole table: versions it was measured with, the command, statuses, and `ops`."""
    return _load("onnx_ops.json")


def onnx_op(op_id: str) -> dict | None:
    return _ops_by_id().get(op_id)


@lru_cache(maxsize=None)
def _ops_by_id() -> dict[str, dict]:
    return {op["id"]: op for op in onnx_op_support()["ops"]}


def legacy_converts(op_id: str, opset: int) -> bool | None:
    """Whether the legacy exporter converted the op at this opset (a model that ran in onnxruntime);
    None when the op or the opset was not measured."""
    op = onnx_op(op_id)
    status = op and op.get("legacy", {}).get("status", {}).get(str(opset))
    return None if status is None else status in ("ok", "mismatch")


def dynamo_converts(op_id: str) -> bool | None:
    """Whether the dynamo exporter converted the op at its default opset; None when not measured."""
    op = onnx_op(op_id)
    return None if op is None or "dynamo" not in op else op["dynamo"]["converts"]


@lru_cache(maxsize=None)
def _match_index() -> dict[tuple[str, str], list[tuple[dict, dict]]]:
    index: dict[tuple[str, str], list[tuple[dict, dict]]] = {}
    for op in onnx_op_support()["ops"]:
        for form in op["match"]:
            kind = next(k for k in ("function", "method", "module") if k in form)
            for name in form[kind]:
                index.setdefault((kind, name), []).append((op, form.get("where", {})))
    return index


def find_ops(kind: str, name: str, args=(), kwargs=None) -> list[dict]:
    """The table rows a call spells. kind: "function" (qualified name after import resolution, e.g.
    "torch.nn.functional.interpolate"), "method" (tensor method name, e.g. "tril"; args exclude self) or
    "module" (qualified class name of a constructor call, e.g. "torch.nn.Upsample"). args / kwargs: the
    call's literal argument values, UNKNOWN for those that are not literals. Method names are common words
    (sort, std, trace, unique, diff): match a method form only on a receiver known to be a tensor."""
    kwargs = kwargs or {}
    return [op for op, where in _match_index().get((kind, name), []) if _satisfies(where, args, kwargs)]


def _satisfies(where: dict, args, kwargs) -> bool:
    for arg, spec in where.items():
        if arg in kwargs:
            value = kwargs[arg]
        elif spec["pos"] is not None and spec["pos"] < len(args):
            value = args[spec["pos"]]
        elif "default" in spec:
            value = spec["default"]
        else:
            return False
        if value is UNKNOWN or not any(_same(value, v) for v in spec["equals"]):
            return False
    return True


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b or (a is None and b is None)


# -- Exporter signatures (EXL104) --------------------------------------------------------------------------


@dataclass(frozen=True)
class Signature:
    function: str
    version: str  # the table's torch minor version used ("2.13")
    source: str  # measured | documented | inferred
    exists: bool
    parameters: tuple[str, ...]  # Python syntax: "name", "name=default", "/", "*", "*args", "**kwargs"
    accepts_unknown_keywords: bool
    uncertain: tuple[str, ...]
    evidence: str
    extrapolated: bool  # the requested version is newer than the table; this is the newest entry

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.lstrip("*").split("=")[0] for p in self.parameters if p not in ("*", "/"))

    @property
    def keywords(self) -> tuple[str, ...]:
        """The names a call may pass as keyword=..."""
        out, positional_only = [], "/" in self.parameters
        for p in self.parameters:
            if p == "/":
                positional_only = False
            elif not p.startswith("*") and not positional_only:
                out.append(p.split("=")[0])
        return tuple(out)

    def accepts(self, keyword: str) -> bool | None:
        """Whether keyword=... is accepted; None when the table cannot tell (uncertain in this version)."""
        if keyword in self.uncertain:
            return None
        return self.accepts_unknown_keywords or keyword in self.keywords


def exporter_signatures() -> dict:
    return _load("exporter_signatures.json")


def minor_version(torch_version) -> tuple[int, int] | None:
    """"2.13.0+cpu", "2.13", (2, 13) -> (2, 13); None when unreadable."""
    if isinstance(torch_version, tuple):
        parts = list(torch_version[:2])
    else:
        parts = str(torch_version).split("+")[0].split(".")[:2]
    try:
        return int(parts[0]), int("".join(ch for ch in str(parts[1]) if ch.isdigit()))
    except (IndexError, ValueError):
        return None


def exporter_signature(function: str, torch_version) -> Signature | None:
    """The signature of an export API ("torch.onnx.export", "torch.export.export", "torch.jit.trace", ...)
    in a torch version; None for an unknown function or a version older than the table. A version newer than
    the table gets the newest entry with extrapolated=True."""
    versions = exporter_signatures()["functions"].get(function)
    want = minor_version(torch_version)
    if versions is None or want is None:
        return None
    known = sorted(versions, key=minor_version)
    if want < minor_version(known[0]):
        return None
    key = next((v for v in known if minor_version(v) == want), None)
    extrapolated = key is None and want > minor_version(known[-1])
    if key is None and not extrapolated:
        return None
    entry = versions[key or known[-1]]
    return Signature(
        function=function,
        version=key or known[-1],
        source=entry["source"],
        exists=entry["exists"],
        parameters=tuple(entry.get("parameters", ())),
        accepts_unknown_keywords=entry.get("accepts_unknown_keywords", False),
        uncertain=tuple(entry.get("uncertain", ())),
        evidence=entry["evidence"],
        extrapolated=extrapolated,
    )


def removed_parameter(function: str, name: str) -> dict | None:
    """The table's row for a parameter the API no longer has (removed_in, replacement, why, evidence)."""
    rows = exporter_signatures()["removed_parameters"]
    return next((r for r in rows if r["function"] == function and r["parameter"] == name), None)


def dynamo_default(torch_version) -> bool | None:
    """The default of torch.onnx.export's dynamo= in a torch version (False before 2.9, True from 2.9);
    None for a version older than 2.0 or unreadable."""
    table = exporter_signatures()["dynamo_default"]["versions"]
    want = minor_version(torch_version)
    if want is None or want < (2, 0):
        return None
    newest = max(table, key=minor_version)
    return table.get(f"{want[0]}.{want[1]}", table[newest] if want > minor_version(newest) else None)


def default_opset(dynamo: bool) -> int:
    """The opset torch.onnx.export writes without opset_version (measured on the table's torch, 2.13: 20 for
    both exporters)."""
    return exporter_signatures()["default_opset"]["dynamo" if dynamo else "legacy"]
