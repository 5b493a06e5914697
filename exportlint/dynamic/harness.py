"""Child side: import the model file, build the model and its two inputs, run it eagerly.

Imports torch; only ``exportlint.dynamic.child`` imports this module, in the child process.
Every user-facing failure is a :class:`SetupError` whose message says what to add.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import itertools
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import torch
from torch import nn
from torch.utils import _pytree as pytree

from exportlint.dynamic.locate import Location, UserFiles, failure_points, key_line

FACTORY_NAMES = ("build", "get_model")
_counter = itertools.count()


class SetupError(Exception):
    """The dynamic pass could not get as far as running an exporter."""

    def __init__(self, kind: str, message: str, points: list[Location] | None = None,
                 exception: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind  # import | resolve | inputs | eager | cuda
        self.message = message
        self.points = points or []
        self.exception = exception


@dataclass
class Inputs:
    args: tuple
    kwargs: dict
    source: str  # where the example came from, for messages
    notes: list[str] = field(default_factory=list)


# -- importing ---------------------------------------------------------------------------------


def load_module(target: str, base: Path) -> ModuleType:
    """Import a model file (``x.py``, also inside a package) or a dotted module name."""
    try:
        if not target.endswith(".py"):
            sys.path.insert(0, str(base))
            return importlib.import_module(target)
        path = Path(target) if Path(target).is_absolute() else base / target
        path = path.resolve()
        package, top = _package_of(path)
        if package:
            sys.path.insert(0, str(top))
            return importlib.import_module(package)
        sys.path.insert(0, str(path.parent))
        name = f"_exportlint_model_{next(_counter)}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from user code too
        raise _setup_from("import", f"importing {target} failed", exc)


def _package_of(path: Path) -> tuple[str | None, Path]:
    """``a.b.mod`` and the directory above ``a`` when ``path`` lives inside a package."""
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    if len(parts) <= (1 if path.name != "__init__.py" else 0) or not all(p.isidentifier() for p in parts):
        return None, folder
    return ".".join(parts), folder


# -- the model ---------------------------------------------------------------------------------


def resolve_model(module: ModuleType, attr: str | None, where: str) -> tuple[nn.Module, Any, str]:
    """(model, inputs returned by the factory or None, how it was found)."""
    if attr is not None:
        if not hasattr(module, attr):
            raise SetupError("resolve", f"{where} defines no {attr!r}; defined here: "
                             f"{', '.join(_public_callables(module)) or 'nothing callable'}")
        return (*_call_factory(getattr(module, attr), attr, where), f"{attr}() in {where}")
    for name in FACTORY_NAMES:
        obj = getattr(module, name, None)
        if callable(obj) and not isinstance(obj, type):
            return (*_call_factory(obj, name, where), f"{name}() in {where}")
    candidates = [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, nn.Module)
                  and c.__module__ == module.__name__ and not _abstract(c)]
    if not candidates:
        raise SetupError("resolve", f"{where} defines no nn.Module subclass and no build()/get_model() "
                         "factory: add `def build(): return MyModel(...)` or pass --model FILE:Factory")
    top = _top_level(candidates)
    if len(top) != 1:
        names = ", ".join(c.__name__ for c in top or candidates)
        raise SetupError("resolve", f"{where} has several nn.Module classes ({names}) and no "
                         "build()/get_model() factory: add `def build(): return TheModel(...)` "
                         f"or pass --model {where}:TheModel")
    return (*_call_factory(top[0], top[0].__name__, where), f"{top[0].__name__}() in {where}")


def _abstract(cls: type) -> bool:
    """A base class: no own ``forward``, or a method (own or inherited from user code) whose
    body is only ``raise NotImplementedError``."""
    if getattr(cls, "forward", None) is nn.Module.forward:
        return True
    for klass in cls.__mro__:
        if klass.__module__.startswith("torch") or klass is object:
            continue
        for name, fn in vars(klass).items():
            if inspect.isfunction(fn) and getattr(cls, name, None) is fn and _only_raises(fn):
                return True
    return False


def _only_raises(fn: Callable) -> bool:
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0].body
    except (OSError, TypeError, SyntaxError, IndexError, AttributeError):
        return False
    body = [st for st in body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.dump(body[0])


def _public_callables(module: ModuleType) -> list[str]:
    return sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                  and getattr(v, "__module__", None) == module.__name__)


def _top_level(classes: list[type]) -> list[type]:
    """Classes constructible without arguments that no other candidate class mentions."""
    def no_args(cls: type) -> bool:
        try:
            sig = inspect.signature(cls)
        except (TypeError, ValueError):
            return False
        return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in sig.parameters.values())

    def source(cls: type) -> str:
        try:
            return inspect.getsource(cls)
        except (OSError, TypeError):
            return ""

    ok = [c for c in classes if no_args(c)]
    if len(ok) <= 1:
        return ok or [c for c in classes if len(classes) == 1]
    texts = {c: source(c) for c in classes}
    return [c for c in ok if not any(c.__name__ in texts[o] for o in classes if o is not c)]


def _call_factory(obj: Any, name: str, where: str) -> tuple[nn.Module, Any]:
    if not callable(obj):
        raise SetupError("resolve", f"{where}:{name} is not a class or a function")
    try:
        result = obj()
    except TypeError as exc:
        if _needs_arguments(obj):
            what = "class" if isinstance(obj, type) else "factory"
            raise SetupError("resolve", f"the {what} {name}{_signature(obj)} in {where} needs "
                             "arguments: add a factory without arguments, e.g. "
                             f"`def build(): return {name}(...)`, and pass --model {where}:build "
                             "(or name it build() for the convention)",
                             exception="TypeError") from exc
        raise _setup_from("resolve", f"building the model with {name}() failed", exc)
    except BaseException as exc:
        raise _setup_from("resolve", f"building the model with {name}() failed", exc)
    inputs = None
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], nn.Module):
        result, inputs = result
    if not isinstance(result, nn.Module):
        raise SetupError("resolve", f"{name}() in {where} returned {type(result).__name__}, "
                         "not an nn.Module")
    return result, inputs


def _needs_arguments(obj: Any) -> bool:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    return any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


_files_for_errors: UserFiles = UserFiles([])


def set_user_files(files: UserFiles) -> None:
    global _files_for_errors
    _files_for_errors = files


def _setup_from(kind: str, what: str, exc: BaseException) -> SetupError:
    detail = key_line(exc)
    text = f"{what}: {type(exc).__name__}" + (f": {detail}" if detail else "")
    err = SetupError(kind, text, failure_points(exc, _files_for_errors), type(exc).__name__)
    err.__cause__ = exc
    return err


def forward_location(model: nn.Module, files: UserFiles) -> tuple[str, int] | None:
    """Where the model's ``forward`` is defined, looking through decorators (``@torch.no_grad()``
    wraps it in a function of torch/utils/_contextlib.py), else its class; only in user files."""
    for obj in (inspect.unwrap(type(model).forward), type(model)):
        try:
            path = files.match(inspect.getsourcefile(obj))
            lines, line = inspect.getsourcelines(obj)
        except (OSError, TypeError, ValueError):
            continue
        if path is not None:  # the `def` / `class` line, after the decorators
            return path, line + next((i for i, text in enumerate(lines)
                                      if text.lstrip().startswith(("def ", "async def ", "class "))), 0)
    return None


# -- inputs ------------------------------------------------------------------------------------


def make_inputs(model: nn.Module, module: ModuleType, factory_inputs: Any,
                specs: list[dict] | None, spec_source: str) -> Inputs:
    """The example, in the resolution order: specs (CLI/config), example_inputs(), factory, synthesized."""
    if specs:
        return Inputs(tuple(_from_spec(s, model) for s in specs), {}, spec_source)
    conv = getattr(module, "example_inputs", None)
    if conv is not None:
        try:
            value = conv() if callable(conv) else conv
        except BaseException as exc:
            raise _setup_from("inputs", "example_inputs() failed", exc)
        return _as_inputs(value, "example_inputs()")
    if factory_inputs is not None:
        return _as_inputs(factory_inputs, "the factory's (model, inputs)")
    return synthesize(model)


def _as_inputs(value: Any, source: str) -> Inputs:
    if isinstance(value, torch.Tensor):
        return Inputs((value,), {}, source)
    if isinstance(value, dict):
        return Inputs((), dict(value), source)
    if (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict)
            and isinstance(value[0], (tuple, list))):
        return Inputs(tuple(value[0]), dict(value[1]), source)
    if isinstance(value, (tuple, list)):
        return Inputs(tuple(value), {}, source)
    raise SetupError("inputs", f"{source} returned {type(value).__name__}: return a tensor, a tuple "
                     "of positional inputs, a dict of keyword inputs or (args, kwargs)")


def _int_high(model: nn.Module) -> int:
    sizes = [m.num_embeddings for m in model.modules() if isinstance(m, nn.Embedding)]
    return min(sizes) if sizes else 10


def _from_spec(spec: dict, model: nn.Module) -> torch.Tensor:
    dtype = getattr(torch, spec["dtype"])
    shape = tuple(spec["shape"])
    if dtype is torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    return torch.randint(0, _int_high(model), shape, dtype=dtype)


def synthesize(model: nn.Module) -> Inputs:
    """An input for ``forward``'s single required tensor parameter, shaped after the first layer."""
    params = _required_params(model)
    hint = ("add `def example_inputs(): return (torch.randn(...),)` to the model file, "
            "or pass --input 1x3x224x224 (one per forward input)")
    if len(params) != 1:
        names = ", ".join(p.name for p in params)
        raise SetupError("inputs", f"cannot synthesize inputs for forward({names}): {hint}")
    param = params[0]
    if param.annotation not in (param.empty, torch.Tensor, "torch.Tensor", "Tensor"):
        raise SetupError("inputs", f"cannot synthesize {param.name}: {param.annotation}: {hint}")
    first = next((m for m in model.modules() if not list(m.children())), None)
    x = _input_for_layer(first)
    if x is None:
        kind = type(first).__name__ if first is not None else "no layers"
        raise SetupError("inputs", f"cannot synthesize an input for forward({param.name}) "
                         f"(first layer: {kind}): {hint}")
    return Inputs((x,), {}, f"synthesized from the first layer ({type(first).__name__})",
                  [f"input synthesized as {tuple(x.shape)} {str(x.dtype).replace('torch.', '')}"])


def _required_params(model: nn.Module) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters.values() if p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _input_for_layer(layer: nn.Module | None) -> torch.Tensor | None:
    if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        spatial = {nn.Conv1d: (64,), nn.Conv2d: (64, 64), nn.Conv3d: (16, 16, 16)}[type(layer)]
        return torch.randn(2, layer.in_channels, *spatial)
    if isinstance(layer, nn.Linear):
        return torch.randn(2, layer.in_features)
    if isinstance(layer, nn.Embedding):
        return torch.randint(0, layer.num_embeddings, (2, 8))
    if isinstance(layer, (nn.RNN, nn.LSTM, nn.GRU)):
        return torch.randn(*((2, 8) if layer.batch_first else (8, 2)), layer.input_size)
    if isinstance(layer, nn.LayerNorm):
        return torch.randn(2, 8, *layer.normalized_shape)
    return None


def check_signature(model: nn.Module, inputs: Inputs) -> None:
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*inputs.args, **inputs.kwargs)
    except TypeError as exc:
        raise SetupError("inputs", f"the inputs from {inputs.source} do not match "
                         f"forward{sig}: {exc}") from None


def param_names(model: nn.Module, inputs: Inputs) -> list[str]:
    """A name for each positional input (forward's parameter names where known)."""
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input_{i}" for i in range(len(inputs.args))]


# -- the second input --------------------------------------------------------------------------


def resolve_dims(dims: list[dict], model: nn.Module, inputs: Inputs) -> dict[tuple[str, int], str]:
    """{(input key, dim): name}; input key = positional index as str, or kwarg name."""
    names = param_names(model, inputs)
    out: dict[tuple[str, int], str] = {}
    for d in dims:
        ref = d["input"]
        key = str(names.index(ref)) if ref in names else ref
        tensor = _input_tensor(inputs, key)
        if tensor is None:
            raise SetupError("inputs", f"dynamic dim {ref}:{d['dim']}: forward has no tensor input "
                             f"{ref!r} (inputs: {', '.join(names + list(inputs.kwargs)) or 'none'})")
        if d["dim"] >= tensor.dim():
            raise SetupError("inputs", f"dynamic dim {ref}:{d['dim']}: input {ref!r} has only "
                             f"{tensor.dim()} dims (shape {tuple(tensor.shape)})")
        out[(key, d["dim"])] = d["name"]
    return out


def _input_tensor(inputs: Inputs, key: str) -> torch.Tensor | None:
    value = inputs.kwargs.get(key) if not key.isdigit() else (
        inputs.args[int(key)] if int(key) < len(inputs.args) else None)
    return value if isinstance(value, torch.Tensor) else None


def _map_inputs(inputs: Inputs, fn: Callable[[str, torch.Tensor], torch.Tensor]) -> Inputs:
    args = tuple(fn(str(i), a) if isinstance(a, torch.Tensor) else a for i, a in enumerate(inputs.args))
    kwargs = {k: fn(k, v) if isinstance(v, torch.Tensor) else v for k, v in inputs.kwargs.items()}
    return Inputs(args, kwargs, inputs.source, list(inputs.notes))


def widen_example(inputs: Inputs, dims: dict[tuple[str, int], str]) -> Inputs:
    """torch.export specialises sizes 0 and 1: grow such dynamic dims of the example to 2."""
    def grow(key: str, t: torch.Tensor) -> torch.Tensor:
        for (k, d), name in dims.items():
            if k == key and t.shape[d] < 2:
                inputs.notes.append(f"dynamic dim {name} of the example grown from {t.shape[d]} to 2 "
                                    "(torch.export specialises sizes 0 and 1)")
                t = resize(t, d, 2)
        return t
    return _map_inputs(inputs, grow)


def second_input(inputs: Inputs, dims: dict[tuple[str, int], str], seed: int,
                 new_sizes: bool = True) -> Inputs:
    """New values everywhere; dynamic dims doubled (one new size per dim name)."""
    gen = torch.Generator().manual_seed(seed)
    sizes: dict[str, int] = {}

    def other(key: str, t: torch.Tensor) -> torch.Tensor:
        for (k, d), name in dims.items():
            if k == key and new_sizes:
                t = resize(t, d, sizes.setdefault(name, 2 * max(t.shape[d], 1)))
        return fresh_values(t, gen)
    return _map_inputs(inputs, other)


def resize(t: torch.Tensor, dim: int, n: int) -> torch.Tensor:
    if n <= t.shape[dim]:
        return t.narrow(dim, 0, n).clone()
    reps = -(-n // t.shape[dim]) if t.shape[dim] else 1
    if t.shape[dim] == 0:
        shape = list(t.shape)
        shape[dim] = n
        return fresh_values(torch.zeros(shape, dtype=t.dtype), torch.Generator().manual_seed(1))
    return torch.cat([t] * reps, dim).narrow(dim, 0, n).clone()


def fresh_values(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """New values: floats negated and rescaled elementwise by U(0.5, 1.5) (sign-based branches
    and baked scalars then differ), ints redrawn within the example's range, bools redrawn."""
    if t.numel() == 0:
        return t.clone()
    if t.dtype is torch.bool:
        return torch.rand(t.shape, generator=gen) > 0.5
    if t.dtype.is_floating_point or t.dtype.is_complex:
        if not bool(t.any()):
            return torch.rand(t.shape, generator=gen, dtype=torch.float64).to(t.dtype)
        scale = 0.5 + torch.rand(t.shape, generator=gen, dtype=torch.float64)
        return (-t.to(torch.float64) * scale).to(t.dtype)
    lo, hi = int(t.min().item()), int(t.max().item())
    if lo == hi:
        return t.clone()
    return torch.randint(lo, hi + 1, t.shape, generator=gen, dtype=t.dtype)


# -- eager -------------------------------------------------------------------------------------


class LineRecorder:
    """Which lines of the user files ran: for each, the order of its first and of its last
    execution (one counter over all line events, sys.settrace)."""

    def __init__(self, files: UserFiles) -> None:
        self.files = files
        self.first: dict[str, dict[int, int]] = {}
        self.last: dict[str, dict[int, int]] = {}
        self._n = itertools.count()

    def _global(self, frame, event, arg):  # noqa: ANN001 (settrace signature)
        path = self.files.match(frame.f_code.co_filename)
        if path is None:
            return None
        first = self.first.setdefault(path, {})
        last = self.last.setdefault(path, {})

        def local(frame, event, arg):  # noqa: ANN001
            if event == "line":
                n = last[frame.f_lineno] = next(self._n)
                first.setdefault(frame.f_lineno, n)
            return local
        n = last[frame.f_lineno] = next(self._n)
        first.setdefault(frame.f_lineno, n)
        return local

    def __enter__(self) -> "LineRecorder":
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(None)

    def to_json(self) -> dict[str, list[list[int]]]:
        """{path: [[line, first, last], ...]} in order of first execution."""
        return {p: sorted(([ln, i, self.last[p][ln]] for ln, i in lines.items()), key=lambda x: x[1])
                for p, lines in self.first.items()}


def run_eager(model: nn.Module, inputs: Inputs, what: str) -> Any:
    try:
        with torch.no_grad():
            return model(*inputs.args, **inputs.kwargs)
    except BaseException as exc:
        if _is_cuda_error(exc):
            raise _setup_from("cuda", f"the model needs CUDA, which this torch does not have ({what})",
                              exc)
        if is_out_of_memory(exc):
            raise _setup_from("memory", f"the model ran out of memory in eager mode on {what} "
                              "(raise the limit with [tool.exportlint.dynamic] memory)", exc)
        raise _setup_from("eager", f"the model fails in eager mode on {what}", exc)


def is_out_of_memory(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, MemoryError) or "can't allocate memory" in text or (
        "DefaultCPUAllocator" in text)


def _is_cuda_error(exc: BaseException) -> bool:
    text = str(exc)
    return ("not compiled with CUDA" in text or "NVIDIA driver" in text
            or "no CUDA GPUs" in text or "CUDA_VISIBLE" in text)


def containers(value: Any) -> str | None:
    """"a dict" / "a list" when ``value`` (a forward's output) holds one, else None."""
    if isinstance(value, dict):
        return "a dict"
    if isinstance(value, list):
        return "a list of dicts" if any(isinstance(v, dict) for v in value) else "a list"
    if isinstance(value, tuple):
        return next((c for c in map(containers, value) if c), None)
    return None


def leaves(value: Any) -> list[torch.Tensor]:
    return [x for x in pytree.tree_leaves(value) if isinstance(x, torch.Tensor)]


