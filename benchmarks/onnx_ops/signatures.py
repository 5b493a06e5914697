"""The export APIs' signatures per torch version; writes exportlint/data/exporter_signatures.json (EXL104's table).

    python benchmarks/onnx_ops/signatures.py

The installed torch's signatures are measured (inspect.signature), and so is what a removed parameter does
on it (each one is passed to the real call). Other versions are written below as Python parameter lists
with their evidence; each version's entry says where it comes from:
- `measured`: inspect.signature on the installed torch;
- `documented`: backed by a source read while writing this (that release's code or docstring, or the pull
  request that made the change; named in `evidence`);
- `inferred`: from release history recalled without such a source, or copied from a neighbouring version with
  no recorded change; parameters whose presence there is not established are listed in `uncertain` (a rule
  should not flag them).
"""

from __future__ import annotations

import ast
import inspect
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "exportlint" / "data" / "exporter_signatures.json"
VERSIONS = [f"2.{m}" for m in range(0, 14)]
FUNCTIONS = [
    "torch.onnx.export",
    "torch.export.export",
    "torch.export.export_for_training",
    "torch.export.draft_export",
    "torch.jit.trace",
    "torch.jit.trace_module",
    "torch.jit.script",
]

_ONNX_LEGACY = (
    "model, args, f, export_params=True, verbose=False, training=TrainingMode.EVAL, input_names=None, "
    "output_names=None, operator_export_type=OperatorExportTypes.ONNX, opset_version=None, do_constant_folding=True, "
    "dynamic_axes=None, keep_initializers_as_inputs=None, custom_opsets=None, export_modules_as_functions=False"
)
_ONNX_DEPRECATED = (
    "training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True, "
    "custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True"
)
_ONNX_25 = (
    "model, args=(), f=None, *, kwargs=None, export_params=True, verbose=None, input_names=None, output_names=None, "
    "opset_version=None, dynamic_axes=None, keep_initializers_as_inputs=False, dynamo=False, external_data=True, "
    "dynamic_shapes=None, {extra}report=False, {optimize}verify=False, profile=False, dump_exported_program=False, "
    "artifacts_dir='.', fallback=False, " + _ONNX_DEPRECATED + "{rest}"
)
_ONNX_29 = (
    "model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None, opset_version=None, "
    "dynamo={dynamo}, external_data=True, dynamic_shapes=None, custom_translation_table=None, report=False, "
    "optimize=True, verify=False, profile=False, dump_exported_program=False, artifacts_dir='.', fallback=False, "
    "export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None, " + _ONNX_DEPRECATED
)
_EXPORT = "{first}, args, kwargs=None, *, {constraints}dynamic_shapes=None, strict={strict}, preserve_module_call_signature=()"
_EVIDENCE_ONNX_25 = "torch/onnx/__init__.py of 2.5 (keyword-only API, `**_: Any,  # ignored options`)"

# function -> [(versions, source, parameter list or None when the function does not exist, evidence, uncertain)]
DOCUMENTED = {
    "torch.onnx.export": [
        (["2.0"], "inferred", _ONNX_LEGACY,
         "the 1.x signature without the parameters removed in 1.10-1.12 (1.x torch/onnx/__init__.py snapshots)", []),
        (["2.1", "2.2", "2.3", "2.4"], "inferred", _ONNX_LEGACY + ", autograd_inlining=True",
         "autograd_inlining appears in every later signature; added in 2.1 (ONNX release notes)", ["autograd_inlining"]),
        (["2.5"], "documented", _ONNX_25.format(extra="", optimize="", rest=", **_"), _EVIDENCE_ONNX_25, []),
        (["2.6"], "documented",
         _ONNX_25.format(extra="custom_translation_table=None, ", optimize="optimize=False, ", rest=", **_"),
         "docstring `versionchanged:: 2.6` (training, operator_export_type, do_constant_folding, "
         "export_modules_as_functions, autograd_inlining deprecated) and `2.7` (optimize now True by default); "
         "`**_` removed by pytorch#146003/#146425 (Feb 2025, 2.7)", []),
        (["2.7", "2.8"], "documented", _ONNX_29.format(dynamo="False"),
         "docstring `versionchanged:: 2.7` (optimize True); pytorch#146425 removed `**_` so unknown keywords raise", []),
        (["2.9"], "documented", _ONNX_29.format(dynamo="True"),
         "docstring `versionchanged:: 2.9` (dynamo True by default), pytorch#159646; fallback default False: "
         "pytorch#162726", []),
        (["2.10", "2.11"], "inferred", _ONNX_29.format(dynamo="True"),
         "as 2.9; `fallback` removed by pytorch#173189 (23 Jan 2026), near the 2.10 release: which of 2.10 / 2.11 "
         "first lacks it is not established", ["fallback"]),
        (["2.12"], "inferred", _ONNX_29.format(dynamo="True").replace("fallback=False, ", ""),
         "as 2.9 without `fallback` (pytorch#173189, Jan 2026)", []),
    ],
    "torch.export.export": [
        (["2.0"], "inferred", None, "torch.export was introduced in 2.1 (2.0 had torch._export only)", []),
        (["2.1"], "inferred", "f, args, kwargs=None, *, constraints=None", "the 2.1 prototype API", []),
        (["2.2"], "inferred", _EXPORT.format(first="f", constraints="constraints=None, ", strict="True"),
         "2.2 adds dynamic_shapes (constraints deprecated), strict, preserve_module_call_signature; the first "
         "parameter is renamed mod (and must be an nn.Module) in 2.3", []),
        (["2.3", "2.4", "2.5", "2.6"], "inferred", _EXPORT.format(first="mod", constraints="", strict="True"),
         "constraints removed in 2.3 (use dynamic_shapes)", []),
        (["2.7", "2.8", "2.9", "2.10", "2.11", "2.12"], "documented",
         _EXPORT.format(first="mod", constraints="", strict="False") + ", prefer_deferred_runtime_asserts_over_guards=False",
         "strict default False from 2.7: pytorch#148790 (Mar 2025); prefer_deferred_runtime_asserts_over_guards "
         "present in 2.13, its first release not established", ["prefer_deferred_runtime_asserts_over_guards"]),
    ],
    "torch.export.export_for_training": [
        (["2.0", "2.1", "2.2", "2.3", "2.4"], "inferred", None,
         "added in 2.5 (replacing capture_pre_autograd_graph; executorch#5730 migrates to it, Sep 2024)", []),
        (["2.5", "2.6", "2.7"], "inferred", _EXPORT.format(first="mod", constraints="", strict="True"), "torch/export/__init__.py", []),
        (["2.8", "2.9", "2.10"], "documented", _EXPORT.format(first="mod", constraints="", strict="False"),
         "strict default False: pytorch#150941 (Apr 2025); deprecated in 2.9 (warning: 'will be removed in 2.10', "
         "pytorch#158203)", []),
        (["2.11", "2.12"], "documented", None, "removed by pytorch#171714 (Jan 2026); use torch.export.export", []),
    ],
    "torch.export.draft_export": [
        ([f"2.{m}" for m in range(0, 7)], "inferred", None,
         "public as torch.export.draft_export from 2.7; before, torch.export._draft_export returned (ep, report) "
         "(pytorch#147558, Feb 2025)", []),
        ([f"2.{m}" for m in range(7, 13)], "inferred", "@measured",
         "same as measured 2.13 (draft-export docs: pytorch#152637, May 2025)", []),
    ],
}
for _name in ("torch.jit.trace", "torch.jit.trace_module", "torch.jit.script"):
    DOCUMENTED[_name] = [(VERSIONS[:-1], "inferred", "@measured", "no signature change recorded in 2.0-2.12", [])]

# Parameters that no longer exist: passing one is a TypeError (from 2.7; 2.5 and 2.6 ignored unknown keywords).
REMOVED = [
    {"function": "torch.onnx.export", "parameter": "example_outputs", "deprecated_in": "1.10", "removed_in": "1.11",
     "replacement": None, "why": "outputs are computed by running the model", "evidence": "pytorch#64380, #67809"},
    {"function": "torch.onnx.export", "parameter": "enable_onnx_checker", "deprecated_in": "1.10", "removed_in": "1.11",
     "replacement": None, "why": "the checker always runs; catch torch.onnx.errors.CheckerError to keep an invalid model",
     "evidence": "pytorch#61708, #66611"},
    {"function": "torch.onnx.export", "parameter": "use_external_data_format", "deprecated_in": "1.10",
     "removed_in": "1.12", "replacement": "external_data",
     "why": "the legacy exporter writes external data by itself above 2 GB; the dynamo path has external_data=",
     "evidence": "pytorch#64382, #67811; facebookresearch/dlrm#229"},
    {"function": "torch.onnx.export", "parameter": "_retain_param_name", "deprecated_in": "1.10", "removed_in": "1.11",
     "replacement": None, "why": "parameter names are always kept", "evidence": "pytorch#64370, #67277"},
    {"function": "torch.onnx.export", "parameter": "strip_doc_string", "deprecated_in": "1.10", "removed_in": "1.11",
     "replacement": "verbose", "why": "doc strings are kept when verbose=True", "evidence": "pytorch#64371, #67278"},
    {"function": "torch.onnx.export", "parameter": "aten", "deprecated_in": None, "removed_in": "before 2.0",
     "replacement": "operator_export_type", "why": "operator_export_type=OperatorExportTypes.ONNX_ATEN",
     "evidence": "present in 1.x torch/onnx/__init__.py snapshots, absent from 2.0's torch/onnx/utils.py"},
    {"function": "torch.onnx.export", "parameter": "export_raw_ir", "deprecated_in": None, "removed_in": "before 2.0",
     "replacement": "operator_export_type", "why": "operator_export_type=OperatorExportTypes.RAW",
     "evidence": "present in 1.x torch/onnx/__init__.py snapshots, absent from 2.0's torch/onnx/utils.py"},
    {"function": "torch.onnx.export", "parameter": "fallback", "deprecated_in": None, "removed_in": "2.11",
     "replacement": "dynamo=False", "why": "added in 2.5; to fall back, call torch.onnx.export(..., dynamo=False) "
     "yourself when the dynamo export raises", "evidence": "pytorch#173189 (Jan 2026); absent in 2.13 (measured)"},
    {"function": "torch.export.export", "parameter": "constraints", "deprecated_in": "2.2", "removed_in": "2.3",
     "replacement": "dynamic_shapes", "why": "torch.export.Dim / dynamic_shapes replaced dynamic_dim constraints",
     "evidence": "torch 2.2 / 2.3 release notes (recalled, not re-read); TypeError on 2.13 (measured)"},
]
# Parameters still accepted by torch 2.13's torch.onnx.export but deprecated since 2.6 (ignored by the dynamo path).
DEPRECATED = {"torch.onnx.export": {"since": "2.6", "parameters": ["training", "operator_export_type",
              "do_constant_folding", "custom_opsets", "export_modules_as_functions", "autograd_inlining"],
              "evidence": "docstring `versionchanged:: 2.6`"}}
REMOVED_FUNCTIONS = [
    {"function": "torch.export.export_for_training", "removed_in": "2.11", "replacement": "torch.export.export",
     "evidence": "pytorch#158203 (deprecation), #171714 (removal); absent in 2.13 (measured)"},
    {"function": "torch.onnx.dynamo_export", "removed_in": "2.9", "replacement": "torch.onnx.export(..., dynamo=True)",
     "evidence": "pytorch#146003 (deprecated 2.6), #158130 (deleted)"},
]
DYNAMO_DEFAULT = {"evidence": "no dynamo= before 2.5; False in 2.5-2.8; True from 2.9 (pytorch#159646, docstring "
                  "`versionchanged:: 2.9`)", "versions": {v: (int(v.split(".")[1]) >= 9) for v in VERSIONS}}


def parse(params: str) -> list[str]:
    """A parameter list written as Python source -> its tokens (see tokens())."""
    fn = ast.parse(f"def f({params}): pass").body[0].args
    positional = fn.posonlyargs + fn.args
    defaults = [None] * (len(positional) - len(fn.defaults)) + fn.defaults
    rows = [(a.arg, "POSITIONAL_ONLY" if a in fn.posonlyargs else "POSITIONAL_OR_KEYWORD", d)
            for a, d in zip(positional, defaults)]
    if fn.vararg:
        rows.append((fn.vararg.arg, "VAR_POSITIONAL", None))
    rows += [(a.arg, "KEYWORD_ONLY", d) for a, d in zip(fn.kwonlyargs, fn.kw_defaults)]
    if fn.kwarg:
        rows.append((fn.kwarg.arg, "VAR_KEYWORD", None))
    return tokens([(n, k, None if d is None else ast.unparse(d)) for n, k, d in rows])


def tokens(rows: list[tuple[str, str, str | None]]) -> list[str]:
    """(name, inspect kind name, default source or None) -> Python-syntax tokens: `name`, `name=default`,
    `/` after the positional-only ones, `*` before the keyword-only ones, `*args`, `**kwargs`."""
    out: list[str] = []
    kinds = [k for _, k, _ in rows]
    for i, (name, kind, default) in enumerate(rows):
        if kind == "KEYWORD_ONLY" and "VAR_POSITIONAL" not in kinds and "*" not in out:
            out.append("*")
        prefix = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(kind, "")
        out.append(prefix + name + ("" if default is None else f"={default}"))
        if kind == "POSITIONAL_ONLY" and (i + 1 == len(rows) or rows[i + 1][1] != "POSITIONAL_ONLY"):
            out.append("/")
    return out


def measured(func) -> list[str]:
    rows = []
    for p in inspect.signature(func).parameters.values():
        default = None if p.default is inspect.Parameter.empty else _default_text(p.default)
        rows.append((p.name, p.kind.name, default))
    return tokens(rows)


def _default_text(value) -> str:
    text = repr(value)
    if text.startswith("<") and ":" in text:  # enum members: <TrainingMode.EVAL: 0>
        return text[1:].split(":")[0]
    if text.startswith("<torch"):  # objects such as a CompilationUnit
        return type(value).__name__ + "()"
    return text


def resolve(name: str):
    import importlib

    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr, None)


def removed_on_installed(torch) -> dict:
    """Pass each removed parameter to the installed exporter: what happens (measured)."""
    out = {}
    model = torch.nn.Linear(2, 2)
    for row in REMOVED:
        func = resolve(row["function"])
        if row["function"] == "torch.onnx.export":
            call = lambda **kw: func(model, (torch.randn(1, 2),), "/nonexistent/m.onnx", **kw)  # noqa: E731
        else:
            call = lambda **kw: func(model, (torch.randn(1, 2),), **kw)  # noqa: E731
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call(**{row["parameter"]: None})
            out[row["parameter"]] = "accepted"
        except Exception as exc:  # noqa: BLE001 - the outcome is the measurement
            out[row["parameter"]] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return out


def default_opsets(torch) -> dict:
    """The opset of a model exported without opset_version, per exporter (measured on the installed torch)."""
    import tempfile

    import onnx

    def opset(proto):
        return next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))

    model, args = torch.nn.Linear(2, 2), (torch.randn(1, 2),)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = str(Path(tmp) / "m.onnx")
        torch.onnx.export(model, args, path, dynamo=False)
        legacy = opset(onnx.load(path))
        dynamo = opset(torch.onnx.export(model, args, dynamo=True, verbose=False).model_proto)
    return {"torch": torch.__version__, "legacy": legacy, "dynamo": dynamo}


def build() -> dict:
    import torch

    installed = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    functions = {}
    for name in FUNCTIONS:
        func = resolve(name)
        now = measured(func) if func is not None else None
        versions = {}
        for vers, source, params, evidence, uncertain in DOCUMENTED.get(name, []):
            for v in vers:
                plist = now if params == "@measured" else (parse(params) if params else None)
                versions[v] = _entry(plist, source, evidence, uncertain)
        versions[installed] = _entry(now, "measured", f"inspect.signature on torch {torch.__version__}", [])
        functions[name] = {v: versions[v] for v in VERSIONS if v in versions}
    return {
        "schema": 1,
        "about": "Parameters of the export APIs per torch minor version (EXL104). Entry per version: source "
        "(measured | documented | inferred), exists, parameters (Python syntax: name, name=default, "
        "'/' and '*' separators, *args, **kwargs), "
        "accepts_unknown_keywords, uncertain (parameters whose presence in that version is not established).",
        "command": "python benchmarks/onnx_ops/signatures.py",
        "measured_torch": torch.__version__,
        "functions": functions,
        "removed_parameters": REMOVED,
        "removed_parameters_on_measured_torch": removed_on_installed(torch),
        "deprecated_parameters": DEPRECATED,
        "removed_functions": REMOVED_FUNCTIONS,
        "dynamo_default": DYNAMO_DEFAULT,
        "default_opset": default_opsets(torch),
    }


def _entry(params, source, evidence, uncertain) -> dict:
    entry = {"source": source, "exists": params is not None, "evidence": evidence}
    if params is not None:
        entry["parameters"] = params
        entry["accepts_unknown_keywords"] = any(p.startswith("**") for p in params)
    if uncertain:
        entry["uncertain"] = uncertain
    return entry


def main() -> int:
    from jsonfmt import write_json  # a sibling: run as a script, this folder is on sys.path

    write_json(OUT, build())
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
