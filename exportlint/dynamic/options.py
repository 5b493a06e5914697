"""What the dynamic pass runs: options (CLI, then ``[tool.exportlint.dynamic]``) and the jobs."""

from __future__ import annotations

import ast
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exportlint.diagnostics import FileReport, Target
from exportlint.dynamic.specs import (
    DynamicDim, InputSpec, ModelSpec, SpecError, parse_dynamic_dim, parse_input, parse_memory,
    parse_model,
)

DEFAULT_TIMEOUT = 300.0
EXPORTERS = {
    Target.EXPORT: ("torch.export", "torch.export-strict", "onnx-dynamo"),
    Target.TRACE: ("jit.trace", "onnx-legacy"),
}
CONFIG_KEYS = {"model", "inputs", "dynamic-dims", "timeout", "memory", "strict", "exporters",
               "atol", "rtol", "seed"}


class DynamicOptionsError(ValueError):
    """Bad dynamic-pass options or ``[tool.exportlint.dynamic]`` values (a usage error)."""


@dataclass
class DynamicOptions:
    """The dynamic pass's options; CLI values win over ``config`` (the raw config table).

    ``None``/empty means "not given on the command line".  ``base`` is where relative paths of
    the config table resolve (the directory of pyproject.toml; default: the working directory).
    """

    model: str | None = None  # module_or_file:ClassOrFactory
    inputs: list[str] = field(default_factory=list)  # 1x3x224x224[:float32], one per input
    dynamic_dims: list[str] = field(default_factory=list)  # input:dim[:name]
    timeout: float | None = None  # seconds per model file (default 300)
    memory: str | int | None = None  # address-space cap of the worker (8G; default 3/4 of RAM)
    strict: bool | None = None  # also run torch.export(strict=True)
    target: Target = Target.EXPORT
    summary_json: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    base: str | None = None

    def resolved(self) -> "Resolved":
        """Merge CLI and config; :class:`DynamicOptionsError` with a clear message if malformed."""
        unknown = sorted(set(self.config) - CONFIG_KEYS)
        if unknown:
            raise DynamicOptionsError(
                f"[tool.exportlint.dynamic]: unknown key(s) {', '.join(unknown)} "
                f"(known: {', '.join(sorted(CONFIG_KEYS))})")
        try:
            return self._resolve()
        except (SpecError, TypeError, ValueError) as exc:
            raise DynamicOptionsError(str(exc)) from None

    def _resolve(self) -> "Resolved":
        cfg = self.config
        base = Path(self.base or os.getcwd())
        model_text = self.model or cfg.get("model")
        model = parse_model(str(model_text)) if model_text else None
        model_file = None
        if model is not None:
            root = Path.cwd() if self.model else base
            model_file = model.resolve_file(root) or model.resolve_file(Path.cwd())
            if model_file is None:
                raise DynamicOptionsError(f"model {model}: {model.target} not found (relative to {root})")
        inputs_src = "--input" if self.inputs else "[tool.exportlint.dynamic] inputs"
        inputs = [parse_input(s) for s in (self.inputs or _str_list(cfg, "inputs"))]
        dims = [parse_dynamic_dim(s) for s in (self.dynamic_dims or _str_list(cfg, "dynamic-dims"))]
        timeout = _number("timeout", self.timeout if self.timeout is not None
                          else cfg.get("timeout", DEFAULT_TIMEOUT), positive=True)
        memory_text = self.memory if self.memory is not None else cfg.get("memory")
        memory = parse_memory(memory_text) if memory_text is not None else default_memory()
        strict = self.strict if self.strict is not None else cfg.get("strict", False)
        if not isinstance(strict, bool):
            raise DynamicOptionsError(f"[tool.exportlint.dynamic] strict must be true or false, got {strict!r}")
        exporters = _exporters(self.target, strict, _str_list(cfg, "exporters"))
        seed = cfg.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise DynamicOptionsError(f"[tool.exportlint.dynamic] seed must be a whole number >= 0, got {seed!r}")
        return Resolved(model, model_file, inputs, inputs_src, dims, timeout, memory, exporters,
                        _number("atol", cfg.get("atol", 1e-4)), _number("rtol", cfg.get("rtol", 1e-3)),
                        seed, base)


def _number(key: str, value: Any, positive: bool = False) -> float:
    """A finite number (> 0 when ``positive``, else >= 0): nan, inf, negatives and text are errors."""
    what = "a number > 0" if positive else "a number >= 0"
    if isinstance(value, bool):
        raise DynamicOptionsError(f"dynamic {key} must be {what}, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DynamicOptionsError(f"dynamic {key} must be {what}, got {value!r}") from None
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        raise DynamicOptionsError(f"dynamic {key} must be {what}, got {value!r}")
    return number


def _str_list(cfg: dict, key: str) -> list[str]:
    value = cfg.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DynamicOptionsError(f"[tool.exportlint.dynamic] {key} must be a list of strings")
    return value


def _exporters(target: Target, strict: bool, chosen: list[str]) -> tuple[str, ...]:
    known = EXPORTERS[target]
    bad = [c for c in chosen if c not in known]
    if bad:
        raise DynamicOptionsError(f"exporters {', '.join(bad)} are not run for target "
                                  f"{target.value} (known: {', '.join(known)})")
    if chosen:
        return tuple(e for e in known if e in chosen)
    return tuple(e for e in known if strict or e != "torch.export-strict")


def default_memory() -> int | None:
    """Three quarters of the machine's RAM (None where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 3 // 4
    except (ValueError, OSError, AttributeError):
        return None


@dataclass
class Resolved:
    model: ModelSpec | None
    model_file: Path | None
    inputs: list[InputSpec]
    inputs_source: str
    dims: list[DynamicDim]
    timeout: float
    memory: int | None
    exporters: tuple[str, ...]
    atol: float
    rtol: float
    seed: int
    base: Path


@dataclass
class Job:
    id: str
    file: Path  # the model's source file (resolved)
    where: str  # how to name it to the user: the file's path (relative when under the cwd)
    # From an export call of the linted files (no --model): its root class, example inputs and dims.
    attr: str | None = None
    inputs: list[InputSpec] | None = None
    dims: list[DynamicDim] | None = None
    source: str = ""

    def payload(self, opts: Resolved, workdir: Path) -> dict:
        model = opts.model  # set: this is the only job, built from the model spec
        inputs = opts.inputs or self.inputs or []
        return {
            "id": self.id,
            "target": model.target if model is not None and not model.is_file else str(self.file),
            "attr": model.attr if model is not None else self.attr,
            "where": self.where,
            "file": str(self.file),
            "base": str(_import_root(self.file, model)),
            "inputs": [s.to_json() for s in inputs] or None,
            "inputs_source": opts.inputs_source if opts.inputs or not self.inputs else self.source,
            "dims": [d.to_json() for d in (opts.dims or self.dims or [])],
            "exporters": list(opts.exporters),
            "workdir": str(workdir / self.id),
        }


def _import_root(file: Path, model: ModelSpec | None) -> Path:
    """The sys.path entry from which a dotted model module imports (the file's folder otherwise)."""
    if model is None or model.is_file:
        return file.parent
    depth = model.target.count(".") + (file.name == "__init__.py")
    return file.parents[depth]


def plan_jobs(reports: list[FileReport], opts: Resolved, context: Any = None) -> list[Job]:
    """One job per model file: the --model/config one; else, when the linted files' export calls
    decide what is exported (see ``exportlint sites``), one per exported root class, built with no
    arguments from the root's file, with the call's example inputs and dynamic dims; else each
    linted file that defines an ``nn.Module`` subclass (a class whose base's name ends in
    ``Module``) or a ``build()``/``get_model()`` factory."""
    if opts.model_file is not None:
        rel = os.path.relpath(opts.model_file)
        return [Job("0", opts.model_file, str(opts.model_file) if rel.startswith("..") else rel)]
    if context is not None and context.restricts:
        return _site_jobs(context)
    jobs = []
    for report in reports:
        if report.skipped or not _defines_model(report):
            continue
        jobs.append(Job(str(len(jobs)), Path(report.path).resolve(), report.path))
    return jobs


def _site_jobs(context: Any) -> list[Job]:
    jobs: list[Job] = []
    seen: set[tuple[str, str]] = set()
    for scope_sites in context.scopes().values():
        for site in scope_sites:
            root = site.root
            if (root.path, root.name) in seen:
                continue
            seen.add((root.path, root.name))
            inputs = None
            if site.inputs and all(i.shape is not None and None not in i.shape for i in site.inputs):
                inputs = [InputSpec(tuple(i.shape), i.dtype or "float32") for i in site.inputs]
            dims = [
                DynamicDim(str(key if isinstance(key, str) else root.params[key] if key < len(root.params) else key),
                           d, spec.name if spec.kind in ("named", "string") and spec.name else f"{key}_{d}")
                for key, per in site.dims.items() for d, spec in sorted(per.items()) if spec.dynamic
                and (isinstance(key, str) and key in root.params or isinstance(key, int))
            ]
            rel = os.path.relpath(root.path)
            jobs.append(Job(str(len(jobs)), Path(root.path), root.path if rel.startswith("..") else rel,
                            attr=root.name, inputs=inputs, dims=dims,
                            source=f"the example of `{site.func}` at {os.path.relpath(site.path)}:{site.span.line}"))
    return jobs


def _defines_model(report: FileReport) -> bool:
    try:
        text = "\n".join(report.lines) if report.lines is not None else Path(report.path).read_text(
            encoding="utf-8", errors="replace")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(_base_name(b).endswith("Module") for b in node.bases):
            return True
        if isinstance(node, ast.FunctionDef) and node.name in ("build", "get_model"):
            return True
    return False


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""
