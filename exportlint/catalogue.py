"""The rule catalogue: stable codes, names, default severities per target.

Codes and names are a public interface: never renumber or rename.  Severities
come from what torch 2.13's exporters were measured to do (see each rule's doc in
``rules/``):

* ``export`` target = ``torch.export`` (non-strict by default) and
  ``torch.onnx.export(dynamo=True)``;
* ``trace`` target = ``torch.jit.trace`` and ``torch.onnx.export(dynamo=False)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from exportlint.diagnostics import Severity, Target

DOCS_URL = "https://github.com/exportlint/exportlint/blob/main/rules/{code}-{name}.md"

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    export: Severity
    trace: Severity

    def severity(self, target: Target) -> Severity:
        return self.export if target is Target.EXPORT else self.trace

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code, name=self.name)

    @property
    def doc_filename(self) -> str:
        return f"{self.code}-{self.name}.md"


_TABLE = [
    # code, name, summary, export, trace
    ("EXL001", "tensor-item", "`.item()` turns a tensor into a Python number", W, E),
    ("EXL002", "tensor-to-host", "`.tolist()` / `.numpy()` / `np.array(t)` copy a tensor to the host", E, E),
    ("EXL003", "tensor-to-scalar", "`int(t)` / `float(t)` / `bool(t)` / `complex(t)` on a tensor, or a tensor as dim indices", E, E),
    ("EXL010", "tensor-iteration", "iterating or unpacking a tensor unrolls it for the example size", W, W),
    ("EXL011", "tensor-from-runtime-values", "`torch.tensor(...)` built from run-time values is traced as a constant", E, E),
    ("EXL020", "data-dependent-branch", "Python control flow on a tensor value or data-dependent scalar", E, E),
    ("EXL021", "data-dependent-loop", "a loop whose trip count is a tensor value or data-dependent scalar", E, E),
    ("EXL022", "shape-dependent-branch", "Python control flow on input shapes is specialized for the example shape", W, E),
    ("EXL030", "data-dependent-slice", "slice bounds or indices computed from tensor data", W, E),
    ("EXL032", "data-dependent-output-shape", "an op whose output shape depends on tensor data", I, I),
    ("EXL040", "size-tensor-concat", "a size argument built by concatenating or stacking sizes into a tensor", W, E),
    ("EXL041", "tensor-size-arg", "a tensor passed where a size or scale factor is expected", W, W),
    ("EXL042", "shape-specialisation", "a shape value leaves symbolic integer arithmetic (`int()`, `float()`, `math.*`): the export is fixed to the example's size", W, E),
    ("EXL043", "recurrent-sequence-length", "an `nn.LSTM` / `nn.GRU` / `nn.RNN` over an input whose sequence may vary: torch.export fixes its length to the example's", I, I),
    ("EXL050", "numpy-on-tensor", "numpy / math / random applied to a tensor value", E, E),
    ("EXL051", "hardcoded-device", "a hard-coded device string in model code", W, W),
    ("EXL060", "export-mode-branch", "a branch on an is-exporting / is-tracing predicate", W, W),
    ("EXL070", "autograd-function-without-symbolic", "a custom autograd.Function with no `symbolic`", I, W),
    ("EXL100", "example-too-small-for-dynamic-dim", "an example input of size 0 or 1 on a dim declared dynamic (torch.export specialises it)", E, E),
    ("EXL101", "dynamic-axes-on-dynamo", "`dynamic_axes` passed to the dynamo ONNX exporter (the default since torch 2.9)", W, W),
    ("EXL102", "dynamic-spec-mismatch", "a `dynamic_shapes` / `dynamic_axes` entry names no input, or a dim beyond the example's rank", E, E),
    ("EXL103", "exported-in-training-mode", "the model is exported or traced without `.eval()` (dropout and batch-norm export in training mode)", W, W),
    ("EXL104", "unknown-exporter-argument", "an argument the exporter does not take in this torch version (removed or misspelled): a TypeError", E, E),
    ("EXL105", "onnx-unsupported-operator", "an operator the site's ONNX exporter cannot convert (or converts wrongly) at its opset", E, E),
    ("EXL090", "export-failure", "an exporter failed at this line (dynamic pass)", E, E),
    ("EXL091", "export-divergence", "the exported artifact disagrees with eager (dynamic pass)", E, E),
    ("EXL092", "dynamic-setup", "the dynamic pass could not build or run the model (nothing was verified)", W, W),
    ("EXL900", "parse-error", "the file does not parse", E, E),
    ("EXL901", "internal-error", "the analyzer failed on this file", E, E),
    ("EXL902", "too-complex", "a valid file beyond the per-file budget was not analyzed", W, W),
]

# One finding per condition: when both codes fire on the same expression, the first one wins
# (a condition that is data-dependent in one analysis and shape-dependent in another is EXL020;
# an `int()` of a value that is data-dependent in one analysis and a size in another is EXL003; a tensor
# `*`-unpacked into dim indices, `x.permute(*perm)`, is EXL003's read of its values, not EXL010's unrolling).
SUPERSEDES = {("EXL020", "EXL022"), ("EXL003", "EXL042"), ("EXL003", "EXL010")}
SUPERSEDING = {win for win, _ in SUPERSEDES}
SUPERSEDED = {lose for _, lose in SUPERSEDES}

CATALOGUE: dict[str, RuleInfo] = {
    code: RuleInfo(code, name, summary, export, trace)
    for code, name, summary, export, trace in _TABLE
}
BY_NAME: dict[str, RuleInfo] = {r.name: r for r in CATALOGUE.values()}


def lookup(code_or_name: str) -> RuleInfo | None:
    """Find a rule by code (``EXL001``, case-insensitive) or name (``tensor-item``)."""
    key = code_or_name.strip()
    return CATALOGUE.get(key.upper()) or BY_NAME.get(key.lower())


def docs_dir() -> Path:
    """Where the rule documents are: inside the installed package, or the repo's ``rules/``."""
    here = Path(__file__).resolve().parent
    packaged = here / "_ruledocs"
    if packaged.is_dir():
        return packaged
    return here.parent / "rules"


def doc_path(rule: RuleInfo) -> Path:
    return docs_dir() / rule.doc_filename
