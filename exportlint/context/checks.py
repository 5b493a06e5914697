"""Rules for the export call itself (EXL100-EXL104): one small class per code, reading a
:class:`~exportlint.context.model.Site`.  Severities and claims are measured on torch 2.13
(see each rule's document in ``rules/`` and ``tests/test_export_call_claims.py``)."""

from __future__ import annotations

import difflib
from typing import ClassVar, Iterator

from exportlint.catalogue import CATALOGUE
from exportlint.context.model import (
    DRAFT, EXPORT, ONNX_DYNAMO, ONNX_LEGACY, TORCH_EXPORTERS, TRACE, ExportContext, Site, Span,
)
from exportlint.context.sites import POSITIONAL
from exportlint.diagnostics import Diagnostic, Note, Severity, Target


class SiteRule:
    code: ClassVar[str]

    def check(self, site: Site) -> Iterator[tuple[Span, str, str, Severity | None]]:
        """(where, message, hint, severity or None for the default) of each finding."""
        raise NotImplementedError


class ExampleTooSmall(SiteRule):
    """EXL100: torch.export specialises sizes 0 and 1, so a dynamic dim whose example is 0 or 1
    fails (a named Dim, Dim.DYNAMIC) or is silently fixed (Dim.AUTO)."""

    code = "EXL100"

    def check(self, site: Site) -> Iterator[tuple[Span, str, str, Severity | None]]:
        if site.exporter not in TORCH_EXPORTERS or site.dims_from != "dynamic_shapes" or site.inputs is None:
            return
        params = site.root.params if site.root is not None else ()
        for i, example in enumerate(site.inputs):
            if example.shape is None:
                continue
            name = params[i] if i < len(params) else None
            dims = (site.dims.get(name) if name is not None else None) or site.dims.get(i) or {}
            for d, spec in sorted(dims.items()):
                if not spec.dynamic or not -len(example.shape) <= d < len(example.shape):
                    continue
                size = example.shape[d]
                if size in (0, 1):
                    outcome = (
                        "exports a model fixed to that size (Dim.AUTO: no error; the program rejects any other size)"
                        if spec.kind == "auto" else "fails with a constraint violation"
                    )
                    yield (
                        example.span or site.span,
                        f"example input `{example.text}` has size {size} on dim {d}, declared dynamic as "
                        f"{spec.text()}: torch.export specialises sizes 0 and 1 and {outcome}",
                        f"give the example a size of at least 2 on dim {d} (e.g. a batch of 2)", None,
                    )


class DynamicAxesOnDynamo(SiteRule):
    """EXL101: `dynamic_axes` is the legacy exporter's argument; the dynamo exporter converts it
    best effort (measured: it warns, and fails on names it cannot map)."""

    code = "EXL101"

    def check(self, site: Site) -> Iterator[tuple[Span, str, str, Severity | None]]:
        if site.exporter != ONNX_DYNAMO or "dynamic_axes" not in site.keywords:
            return
        if site.dynamo is None and site.open_kwargs:
            return  # `**extra_args` may hold `dynamo=False`
        why = "`dynamo=True`" if site.dynamo else "the default `dynamo=True` of torch ≥ 2.9"
        known = _axes_names(site)
        if site.dims_from == "dynamic_axes" and site.dims and all(isinstance(k, int) or k in known for k in site.dims):
            # every key names an input or output: converted, with a deprecation warning (measured); held-out
            # judging found such calls exporting dynamic models that onnxruntime runs right (yolov5,
            # super-gradients, easyocr)
            yield (
                site.keywords["dynamic_axes"],
                f"`dynamic_axes` with {why}: converted to `dynamic_shapes` (torch warns that the conversion is "
                "deprecated; it will be removed)",
                f"pass {equivalent_dynamic_shapes(site)} instead, or `dynamo=False` to keep the legacy exporter",
                Severity.INFO,
            )
            return
        yield (
            site.keywords["dynamic_axes"],
            f"`dynamic_axes` with {why}: converted to `dynamic_shapes` best effort "
            "(torch warns; names it cannot map fail with \"Failed to convert 'dynamic_axes' to 'dynamic_shapes'\")",
            f"pass {equivalent_dynamic_shapes(site)} instead, or `dynamo=False` to keep the legacy exporter",
            None,
        )


def _axes_names(site: Site) -> set[str]:
    """The names a `dynamic_axes` key may give: `input_names`, `output_names`, `forward`'s parameters."""
    params = site.root.params if site.root is not None else ()
    return set(site.input_names or ()) | set(site.output_names or ()) | set(params)


def equivalent_dynamic_shapes(site: Site) -> str:
    """The ``dynamic_shapes=`` argument equivalent to the site's ``dynamic_axes`` (inputs only)."""
    params = site.root.params if site.root is not None else ()
    names = site.input_names or []
    entries = []
    for key, dims in site.dims.items():
        if isinstance(key, int):
            name = params[key] if key < len(params) else names[key] if key < len(names) else f"input{key}"
        elif key in params:
            name = key
        else:
            continue  # an output: the dynamo exporter infers output dims
        inner = ", ".join(f'{d}: "{spec.name or f"{name}_{d}"}"' for d, spec in sorted(dims.items()))
        entries.append(f'"{name}": {{{inner}}}')
    return "dynamic_shapes={" + ", ".join(entries) + "}"


class DynamicSpecMismatch(SiteRule):
    """EXL102: entries that name no input or a dim the example does not have."""

    code = "EXL102"

    def check(self, site: Site) -> Iterator[tuple[Span, str, str, Severity | None]]:
        if not site.dims_from or site.declared:
            return
        where = site.keywords.get(site.dims_from, site.span)
        params = site.root.params if site.root is not None else ()
        n_inputs = len(site.inputs) if site.inputs is not None else None
        if site.dims_from == "dynamic_axes":
            known = _axes_names(site)
            for key in site.dims:
                if isinstance(key, str) and known and key not in known:
                    outcome = (
                        "the dynamo exporter fails (\"Failed to convert 'dynamic_axes' to 'dynamic_shapes'\")"
                        if site.exporter == ONNX_DYNAMO else "the legacy exporter only warns and exports that axis static"
                    )
                    yield (
                        where,
                        f"`dynamic_axes` key {key!r} names no input or output "
                        f"(input_names={site.input_names}, output_names={site.output_names}): {outcome}",
                        "use one of the names given in `input_names` / `output_names`", None,
                    )
        else:
            for key in site.dims:
                if isinstance(key, str) and params and key not in params:
                    yield (
                        where,
                        f"`dynamic_shapes` key {key!r} is not a parameter of `{site.root}.forward({', '.join(params)})`: "
                        "torch.export fails (UserError: top-level keys must be the arg names)",
                        f"key the dict by forward's parameter names: {', '.join(map(repr, params))}", None,
                    )
            ints = [k for k in site.dims if isinstance(k, int)]
            if ints and n_inputs is not None and len(site.dims) != n_inputs and not any(isinstance(k, str) for k in site.dims):
                yield (
                    where,
                    f"`dynamic_shapes` has {len(site.dims)} entries for {n_inputs} example inputs: torch.export fails "
                    "(the structures of `inputs` and `dynamic_shapes` must match)",
                    "give one entry per input, `None` for an input with no dynamic dim", None,
                )
        for i, example in enumerate(site.inputs or ()):
            if example.shape is None:
                continue
            names = (params[i] if i < len(params) else None, site.input_names[i] if i < len(site.input_names or ()) else None)
            for key in dict.fromkeys(k for k in (i, *names) if k is not None):
                for d in sorted(site.dims.get(key, {})):
                    if not -len(example.shape) <= d < len(example.shape):
                        yield (
                            where,
                            f"dim {d} of input {key!r} is declared dynamic, but the example `{example.text}` has only "
                            f"{len(example.shape)} dims: the exporter fails",
                            f"declare a dim between 0 and {len(example.shape) - 1}", None,
                        )


class ExportedInTrainingMode(SiteRule):
    """EXL103: torch.export, the dynamo ONNX exporter and jit.trace capture the module in the mode
    it is in: a model built in the script and never put in eval mode exports dropout and batch-norm
    training behaviour.  The legacy ONNX exporter exports eval behaviour (training=EVAL default)."""

    code = "EXL103"

    def check(self, site: Site) -> Iterator[tuple[Span, str, str, Severity | None]]:
        if site.eval_mode is not False:
            return
        if site.exporter in (EXPORT, DRAFT, TRACE, ONNX_DYNAMO):
            what = {TRACE: "jit.trace", ONNX_DYNAMO: "the dynamo ONNX exporter"}.get(site.exporter, "torch.export")
        elif site.exporter == ONNX_LEGACY and site.training and site.training.endswith(("TRAINING", "PRESERVE")):
            what = f"the legacy ONNX exporter with training={site.training}"
        else:
            return
        layers = site.root is not None and site.root.train_layers
        # A resolved root whose file uses no dropout / batch norm: training mode most likely changes
        # nothing (super-gradients' NMS export wrappers, judged so on held-out code): info, saying so.
        quiet = site.root is not None and not layers
        yield (
            site.span,
            f"`{site.model}` is built here and never put in eval mode: {what} captures it in training mode"
            + (" (its dropout / batch norm then export their training behaviour: silently different outputs)"
               if layers else " (its file uses no dropout or batch norm: the same graph unless parts built "
               "elsewhere do)" if quiet else ""),
            f"call `{site.model}.eval()` before exporting",
            Severity.ERROR if layers else Severity.INFO if quiet else None,
        )


class UnknownExporterArgument(SiteRule):
    """EXL104: a keyword the export function does not take in the torch the call runs on (the
    measured signature table ``exportlint/data/exporter_signatures.json``): a TypeError."""

    code = "EXL104"

    def check(self, site: Site) -> Iterator[tuple[Span, str, str, Severity | None]]:
        from exportlint.data import exporter_signature, removed_parameter

        if site.declared:
            return
        signature = exporter_signature(site.func, site.torch_version)
        if signature is None:
            return
        if not signature.exists:
            yield (site.span, f"`{site.func}` does not exist in torch {site.torch_version} ({signature.evidence})",
                   "use `torch.onnx.export(..., dynamo=True)`" if "onnx" in site.func else "see the torch release notes", None)
            return
        for name in site.keywords:
            if name.startswith("#") or name in POSITIONAL.get(site.func, ()) or signature.accepts(name) is not False:
                continue
            removed = removed_parameter(site.func, name)
            if removed is not None:
                what = f"removed in torch {removed['removed_in']}"
                hint = removed.get("replacement") or f"drop `{name}=`"
            else:
                what = "not a parameter of it (misspelled?)"
                close = difflib.get_close_matches(name, signature.keywords, n=1)
                hint = f"did you mean `{close[0]}=`?" if close else f"drop `{name}=`"
            yield (site.keywords[name],
                   f"`{name}=` is {what}: `{site.func}` raises TypeError (unexpected keyword argument) on torch "
                   f"{site.torch_version}", hint, None)


SITE_RULES: tuple[type[SiteRule], ...] = (
    ExampleTooSmall, DynamicAxesOnDynamo, DynamicSpecMismatch, ExportedInTrainingMode, UnknownExporterArgument,
)


def check_sites(context: ExportContext, target_override: Target | None = None) -> list[Diagnostic]:
    """Diagnostics of every rule on every site of the context."""
    out: list[Diagnostic] = []
    rules = [r() for r in SITE_RULES]
    for site in context.sites:
        target = target_override or site.target or Target.EXPORT
        for rule in rules:
            for span, message, hint, severity in rule.check(site):
                info = CATALOGUE[rule.code]
                out.append(Diagnostic(
                    path=site.path, line=span.line, column=span.column, end_line=span.end_line,
                    end_column=span.end_column, code=rule.code, name=info.name,
                    severity=severity or info.severity(target), target=target,
                    message=message, hint=hint, url=info.url,
                    provenance=[Note(site.span.line, site.span.column, f"exported by `{site.func}` ({site.exporter})",
                                     None)] if span != site.span else [],
                ))
    return out
