"""How one file is analyzed under the export context: which classes are entry points, under
which target, and which dims of each root's inputs are dynamic."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from exportlint.context.model import ONNX_EXPORTERS, ExportContext, Judgement, Site
from exportlint.diagnostics import Target

# forward parameter -> (rank of the example input if known, the dims declared dynamic)
Dims = dict[str, tuple[int | None, frozenset[int]]]


@dataclass
class Plan:
    target: Target
    entries: list[Any] | None = None  # ClassInfo of the roots in this file; None: every Module
    dims: dict[int, Dims] = field(default_factory=dict)  # id(root ClassInfo) -> its declared dims
    sites: list[Site] = field(default_factory=list)

    @property
    def onnx(self) -> list[Site]:
        return [s for s in self.sites if s.exporter in ONNX_EXPORTERS]

    def dims_of(self, cls: Any) -> Dims | None:
        return self.dims.get(id(cls))


def plans(index: Any, context: ExportContext, target: Target) -> list[Plan]:
    """One Plan per target the file's roots are exported under (none when the file is in the
    scope of export sites but holds no root; one plan with every Module outside every scope)."""
    sites = context.scope_of(index.path)
    if sites is None:
        return [Plan(target)]
    here = os.path.abspath(index.path)
    by_target: dict[Target, Plan] = {}
    for (path, name), judgements in sorted(context.judgements(sites).items()):
        cls = index.classes.get(name) if path == here else None
        if cls is None:
            continue
        for j in judgements:
            plan = by_target.setdefault(j.target, Plan(j.target, []))
            assert plan.entries is not None
            plan.entries.append(cls)
            plan.sites += j.sites
            dims = declared_dims(j)
            if dims is not None:
                plan.dims[id(cls)] = dims
    return [by_target[t] for t in sorted(by_target, key=lambda t: t.value)]


def declared_dims(judgement: Judgement) -> Dims | None:
    """The dynamic dims of a root's forward parameters, when every site exporting it under this
    target declares them (a site without declaration leaves every dim possibly dynamic: None).
    A parameter no declaration names is static, as the exporters make it."""
    sites = judgement.sites
    if not sites or any(not s.dims_from for s in sites):
        return None
    root = sites[0].root
    assert root is not None
    out: dict[str, tuple[int | None, set[int]]] = {}
    for site in sites:
        for i, param in enumerate(root.params):
            rank = None
            if site.inputs is not None and i < len(site.inputs) and site.inputs[i].shape is not None:
                rank = len(site.inputs[i].shape)  # type: ignore[arg-type]
            declared = site.dynamic_dims(param, i) or {}
            dyn = {d if d >= 0 or rank is None else d + rank for d, spec in declared.items() if spec.dynamic}
            old_rank, old = out.get(param, (rank, set()))
            out[param] = (old_rank if old_rank is not None else rank, old | dyn)
    return {p: (r, frozenset(d)) for p, (r, d) in out.items()}
