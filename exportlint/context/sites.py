"""Find the export calls of the linted files and read what they export, statically.

Calls of ``torch.export.export`` / ``draft_export`` / ``export_for_training``,
``torch.onnx.export`` (dynamo or legacy, from ``dynamo=`` and the torch version's default),
``torch.jit.trace`` / ``trace_module`` / ``script``.  For each: the exported object resolved to
its Module class in the linted files (a constructor or factory call, a variable assigned from one,
through ``.eval()`` / ``.to()`` chains and imports), whether it was put in eval mode, the example
inputs with their literal shapes, the dynamic dims (``dynamic_shapes`` / ``dynamic_axes``),
``input_names`` / ``output_names``, ``opset_version``, ``dynamo=``, ``strict=``, ``training=``.

Python's ``ast`` only (no libcst, no torch): a file is parsed only when a cheap text search says it
may call an exporter.  Flow-insensitive where it must be: the last assignment before the call in
the same function (or at module level) is the one that counts.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from exportlint.context.model import (
    DRAFT, EXPORT, ONNX_DYNAMO, ONNX_LEGACY, SCRIPT, TRACE, TRAINING_IR, DimSpec, InputSpec, Root, Site, Span,
)
from exportlint.context.versions import dynamo_default, effective

# Qualified exporter functions -> exporter kind (None: torch.onnx.export, decided by `dynamo=`).
EXPORT_FUNCS: dict[str, str | None] = {
    "torch.export.export": EXPORT,
    "torch.export.draft_export": DRAFT,
    "torch.export.export_for_training": TRAINING_IR,
    "torch.onnx.export": None,
    "torch.onnx.dynamo_export": ONNX_DYNAMO,
    "torch.jit.trace": TRACE,
    "torch.jit.trace_module": TRACE,
    "torch.jit.script": SCRIPT,
}
# Positional parameters of each function (what a positional argument binds to).
POSITIONAL = {
    "torch.export.export": ("mod", "args", "kwargs"),
    "torch.export.draft_export": ("mod", "args", "kwargs"),
    "torch.export.export_for_training": ("mod", "args", "kwargs"),
    "torch.onnx.export": ("model", "args", "f"),
    "torch.onnx.dynamo_export": ("model", "args"),
    "torch.jit.trace": ("func", "example_inputs"),
    "torch.jit.trace_module": ("mod", "inputs"),
    "torch.jit.script": ("obj",),
}
_MODEL_PARAMS = ("mod", "model", "func", "obj")
_INPUT_PARAMS = ("args", "example_inputs", "inputs")

_TRAIN_LAYERS = re.compile(r"Dropout|dropout|BatchNorm|batch_norm|DropPath|drop_path")
_MAYBE_SITE = re.compile(r"\b(?:export|trace|trace_module|draft_export|export_for_training|dynamo_export|script)\s*\(")

# Calls that create a tensor whose shape is their size arguments.
_FACTORIES = {"randn", "rand", "zeros", "ones", "empty"}
_FULL = {"full"}
# Calls that return their receiver in another mode / place (the model is the same object).
_SAME_OBJECT = {"to", "cpu", "cuda", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory"}
# Library factories known to return a model in training mode.
_TRAINING_FACTORIES = ("timm.create_model", "torchvision.models.", "torch.hub.load")


def may_have_sites(text: str) -> bool:
    return "torch" in text and _MAYBE_SITE.search(text) is not None


def file_sites(
    path: str, text: str, project: Any = None, torch_version: str | None = None, parsed: dict | None = None
) -> list[Site]:
    """The export calls of one file (empty when it has none or does not parse).  ``parsed``: the
    other linted files read so far by this discovery (shared by the calls of one run)."""
    if not may_have_sites(text):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    reader = _File(path, text, tree, project, torch_version, {} if parsed is None else parsed)
    try:
        return list(reader.sites())
    except RecursionError:
        return []


@dataclass
class _Scope:
    node: ast.AST  # a function or the module
    params: set[str] = field(default_factory=set)
    assigns: dict[str, list[tuple[int, ast.expr]]] = field(default_factory=dict)
    modes: dict[str, list[tuple[int, bool]]] = field(default_factory=dict)  # name -> (line, eval?)


class _File:
    def __init__(
        self, path: str, text: str, tree: ast.Module, project: Any, torch_version: str | None, parsed: dict
    ) -> None:
        self.path = path
        self.abspath = os.path.abspath(path)
        self.text = text
        self.lines = text.splitlines()
        self.tree = tree
        self.project = project
        self.torch_version = torch_version
        self.parsed = parsed  # path -> _File of the other linted files this discovery has read
        self.imports: dict[str, str] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports[a.asname] = a.name
                    else:
                        self.imports[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                for a in node.names:
                    self.imports[a.asname or a.name] = f"{node.module}.{a.name}" if node.module else a.name
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node  # type: ignore[assignment]
        self._index = None
        self._scopes: dict[int, _Scope] = {}

    # -- positions ------------------------------------------------------------------------------
    def _col(self, line: int, offset: int) -> int:
        """1-based code-point column of a UTF-8 byte offset."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return Span(line, self._col(line, node.col_offset), end_line, self._col(end_line, node.end_col_offset or 0))  # type: ignore[attr-defined]

    def code(self, node: ast.AST, limit: int = 80) -> str:
        text = " ".join((ast.get_source_segment(self.text, node) or "").split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    # -- names ----------------------------------------------------------------------------------
    def qualify(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.imports.get(node.id, "torch" if node.id == "torch" else None)
        return None if head is None else ".".join([head, *reversed(parts)])

    def local_name(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None

    # -- scopes ---------------------------------------------------------------------------------
    def scope_of(self, call: ast.Call) -> tuple[_Scope, _Scope]:
        """(innermost function scope holding ``call``, module scope)."""
        module = self._scope(self.tree)
        best: ast.AST = self.tree
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= call.lineno <= (node.end_lineno or 0):
                if best is self.tree or node.lineno >= best.lineno:  # type: ignore[attr-defined]
                    best = node
        return self._scope(best), module

    def _scope(self, node: ast.AST) -> _Scope:
        if id(node) in self._scopes:
            return self._scopes[id(node)]
        scope = _Scope(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            scope.params = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]}
        for stmt in _own_nodes(node):
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        scope.assigns.setdefault(t.id, []).append((stmt.lineno, stmt.value))
            elif isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute) and isinstance(stmt.func.value, ast.Name):
                mode = _mode_call(stmt)
                if mode is not None:
                    scope.modes.setdefault(stmt.func.value.id, []).append((stmt.lineno, mode))
        return scope

    def last_assignment(self, name: str, line: int, scope: _Scope, module: _Scope) -> tuple[ast.expr | None, _Scope | None]:
        for s in (scope, module) if scope is not module else (module,):
            found = [(ln, v) for ln, v in s.assigns.get(name, []) if ln < line or (s is module and scope is not module)]
            if found:
                return max(found, key=lambda item: item[0])[1], s
            if name in s.params:
                return None, s
        return None, None

    # -- sites ----------------------------------------------------------------------------------
    def sites(self) -> Iterator[Site]:
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            func = self.qualify(node.func)
            if func not in EXPORT_FUNCS:
                continue
            yield self.site(node, func)

    def site(self, call: ast.Call, func: str) -> Site:
        bound = self._bind(call, func)
        keywords = {k: self.span(v) for k, v in bound.items()}
        dynamo = _literal(bound.get("dynamo"))
        exporter = EXPORT_FUNCS[func]
        if exporter is None:
            dynamo_on = dynamo if isinstance(dynamo, bool) else dynamo_default(self.torch_version)
            exporter = ONNX_DYNAMO if dynamo_on else ONNX_LEGACY
        scope, module = self.scope_of(call)
        model = next((bound[p] for p in _MODEL_PARAMS if p in bound), None)
        site = Site(
            path=self.path, span=self.span(call), func=func, exporter=exporter,
            model=self.code(model) if model is not None else "", keywords=keywords,
            open_kwargs=any(kw.arg is None for kw in call.keywords), torch_version=effective(self.torch_version),
        )
        if model is not None:
            site.root, site.why_unresolved, site.eval_mode = self.resolve_model(model, call.lineno, scope, module)
        else:
            site.why_unresolved = "no model argument"
        inputs = next((bound[p] for p in _INPUT_PARAMS if p in bound), None)
        if func == "torch.jit.trace_module" and isinstance(inputs, ast.Dict):
            inputs = next((v for k, v in zip(inputs.keys, inputs.values) if _literal(k) == "forward"), None)
        if inputs is not None:
            site.inputs = self.example_inputs(inputs, call.lineno, scope, module)
        site.opset = _int(bound.get("opset_version"))
        site.dynamo = dynamo if isinstance(dynamo, bool) else None
        strict = _literal(bound.get("strict"))
        site.strict = strict if isinstance(strict, bool) else None
        if "training" in bound:
            site.training = self.code(bound["training"])
        site.input_names = self.names(bound.get("input_names"), call.lineno, scope, module)
        site.output_names = self.names(bound.get("output_names"), call.lineno, scope, module)
        if "dynamic_shapes" in bound:
            site.dims, site.dims_from = self.dynamic_shapes(bound["dynamic_shapes"], call.lineno, scope, module), "dynamic_shapes"
        elif "dynamic_axes" in bound:
            site.dims, site.dims_from = self.dynamic_axes(bound["dynamic_axes"], site, call.lineno, scope, module), "dynamic_axes"
        return site

    def _bind(self, call: ast.Call, func: str) -> dict[str, ast.expr]:
        bound: dict[str, ast.expr] = {}
        names = POSITIONAL[func]
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            bound[names[i] if i < len(names) else f"#{i}"] = arg
        for kw in call.keywords:
            if kw.arg is not None:
                bound[kw.arg] = kw.value
        return bound

    # -- the model ------------------------------------------------------------------------------
    def resolve_model(self, node: ast.expr, line: int, scope: _Scope, module: _Scope, depth: int = 0
                      ) -> tuple[Root | None, str, bool | None]:
        """(root, why unresolved, eval mode) of the exported expression."""
        if depth > 6:
            return None, "too many indirections", None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            mode = _mode_call(node)
            if mode is not None or node.func.attr in _SAME_OBJECT:
                root, why, current = self.resolve_model(node.func.value, line, scope, module, depth + 1)
                return root, why, mode if mode is not None else current
            if node.func.attr == "from_pretrained":  # transformers: returns the model in eval mode
                root, why, _ = self._class_call(node.func.value, node)
                return root, why, True
        if isinstance(node, ast.Call):
            return self._class_call(node.func, node, line, scope, module, depth)
        if isinstance(node, ast.Name):
            value, where = self.last_assignment(node.id, line, scope, module)
            if value is None:
                if where is not None and node.id in where.params:
                    root, why, mode = self._through_callers(where.node, node.id, depth)
                    for ln, m in sorted(where.modes.get(node.id, [])):
                        if ln < line:
                            mode = m  # `def export(model): model.eval(); torch.export.export(model, ...)`
                    return root, why, mode
                return None, f"`{node.id}` is not assigned in this file", None
            root, why, mode = self.resolve_model(value, line, scope, module, depth + 1)
            assigned = max(ln for ln, v in where.assigns[node.id] if v is value)  # type: ignore[union-attr]
            for ln, m in sorted(where.modes.get(node.id, [])):  # type: ignore[union-attr]
                if assigned <= ln < line or (where is module and where is not scope):
                    mode = m
            return root, why, mode
        return None, f"`{self.code(node, 40)}` is not a constructor, factory or variable exportlint can follow", None

    def _through_callers(self, fn: ast.AST, param: str, depth: int) -> tuple[Root | None, str, bool | None]:
        """A model passed in as ``param`` of function ``fn``: what the calls of ``fn`` in this file
        pass (all of them must resolve to the same root)."""
        name = getattr(fn, "name", "?")
        why = f"`{param}` is a parameter of `{name}()`"
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or depth > 3:
            return None, why, None
        names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        results = []
        for call in ast.walk(self.tree):
            if not (isinstance(call, ast.Call) and self.local_name(call.func) in (name, f"self.{name}")):
                continue
            offset = 1 if names[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute) else 0
            pos = names.index(param) - offset if param in names else -1
            arg = call.args[pos] if 0 <= pos < len(call.args) else next((k.value for k in call.keywords if k.arg == param), None)
            if arg is None or any(isinstance(a, ast.Starred) for a in call.args):
                return None, why + " called with arguments exportlint cannot follow", None
            scope, module = self.scope_of(call)
            results.append(self.resolve_model(arg, call.lineno, scope, module, depth + 1))
        if not results:
            return None, why + " (no call of it in this file)", None
        roots = {(r.path, r.name) if r is not None else None for r, _, _ in results}
        if None in roots or len(roots) != 1:
            return None, why + " called with " + ("a model exportlint cannot follow" if None in roots else "different models"), None
        modes = {m for _, _, m in results}
        return results[0][0], "", modes.pop() if len(modes) == 1 else None

    def _class_call(self, func: ast.expr, call: ast.Call, line: int = 0, scope: _Scope | None = None,
                    module: _Scope | None = None, depth: int = 0) -> tuple[Root | None, str, bool | None]:
        name = self.local_name(func)
        if name is None:
            return None, "the model is built by an expression exportlint does not follow", None
        if name in self.classes:
            return self._root(self.abspath, self.classes[name]), "", _fresh_mode(self.classes[name], call)
        if name in self.functions and scope is not None:
            return self._factory(self.functions[name], depth)
        qual = self.qualify(func) or name
        found = self._library_or_linted(qual, call)
        if found is not None:
            return found
        if qual.startswith(_TRAINING_FACTORIES) or qual.split(".")[-1][:1].isupper():
            return None, f"`{qual}` is not defined in the linted files", _fresh_mode(None, call)
        return None, f"`{qual}` is not defined in the linted files", None

    def _library_or_linted(self, qual: str, call: ast.Call) -> tuple[Root | None, str, bool | None] | None:
        if self.project is None:
            return None
        cls = self._sibling_class(qual) or (self.project.find_class(qual) if self.project.defines(qual) else None)
        if cls is not None:
            other = self.linted_file(cls.file.path)
            node = other.classes.get(cls.name) if other is not None else None
            return self._root_info(cls), "", _fresh_mode(node, call) if node is not None else None
        fn = self.project.find_function(qual) if self.project.defines(qual) else None
        if fn is not None:
            other = self.linted_file(fn[0].path)
            if other is not None:
                node = other.functions.get(qual.split(".")[-1])
                if node is not None:
                    return other._factory(node, 1)
        return None

    def linted_file(self, path: str) -> "_File | None":
        """Another linted file, read through the project (once per discovery)."""
        if path not in self.parsed:
            index = self.project.index(path)
            text = index.source if index is not None else None
            try:
                self.parsed[path] = (
                    _File(path, text, ast.parse(text), self.project, self.torch_version, self.parsed) if text else None
                )
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                self.parsed[path] = None
        return self.parsed[path]

    def _sibling_class(self, qual: str) -> Any:
        """``from models import Net`` in a script imports the ``models.py`` next to it first (the
        script's directory is ``sys.path[0]``), whatever other linted file is named ``models``."""
        module, _, name = qual.rpartition(".")
        if not module:
            return None
        here = os.path.dirname(self.abspath)
        for candidate in (os.path.join(here, *module.split(".")) + ".py", os.path.join(here, *module.split("."), "__init__.py")):
            if candidate in self.project.paths:
                index = self.project.index(candidate)
                return index.classes.get(name) if index is not None else None
        return None

    def _factory(self, fn: ast.FunctionDef, depth: int) -> tuple[Root | None, str, bool | None]:
        """A function that builds the model: what its (last) return statement returns."""
        returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if not returns:
            return None, f"`{fn.name}()` returns nothing exportlint can follow", None
        ret = max(returns, key=lambda r: r.lineno)
        inner = self._scope(fn)
        return self.resolve_model(ret.value, ret.lineno + 1, inner, self._scope(self.tree), depth + 1)  # type: ignore[arg-type]

    def _root(self, path: str, cls: ast.ClassDef) -> Root:
        params: tuple[str, ...] = ()
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
                a = stmt.args
                params = tuple(p.arg for p in [*a.posonlyargs, *a.args][1:])
        if not params and self.project is not None:
            for b in cls.bases:  # inherited forward
                q = self.qualify(b) or self.local_name(b)
                info = self.project.find_class(q) if q and self.project.defines(q) else None
                if info is not None:
                    return Root(path, cls.name, self._root_info(info).params, self._root_info(info).train_layers)
        return Root(path, cls.name, params, _TRAIN_LAYERS.search(self.text) is not None)

    def _root_info(self, info: Any) -> Root:
        """A Root for a ClassInfo of the project (its forward's parameters from libcst)."""
        found = info.find_method("forward")
        params: tuple[str, ...] = ()
        if found is not None:
            fn = found[1]
            params = tuple(p.name.value for p in [*fn.params.posonly_params, *fn.params.params][1:])
        text = info.file.source
        return Root(os.path.abspath(info.file.path), info.name, params, bool(text and _TRAIN_LAYERS.search(text)))

    # -- example inputs -------------------------------------------------------------------------
    def example_inputs(self, node: ast.expr, line: int, scope: _Scope, module: _Scope, depth: int = 0) -> list[InputSpec] | None:
        if isinstance(node, ast.Name) and depth < 4:
            value, _ = self.last_assignment(node.id, line, scope, module)
            if value is not None and isinstance(value, (ast.Tuple, ast.List, ast.Name)):
                return self.example_inputs(value, line, scope, module, depth + 1)
        if isinstance(node, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return None
            return [self.example(e, line, scope, module) for e in node.elts]
        return [self.example(node, line, scope, module)]

    def example(self, node: ast.expr, line: int, scope: _Scope, module: _Scope, depth: int = 0) -> InputSpec:
        text, span = self.code(node, 60), self.span(node)
        if isinstance(node, ast.Name) and depth < 4:
            value, _ = self.last_assignment(node.id, line, scope, module)
            if value is not None:
                inner = self.example(value, line, scope, module, depth + 1)
                return InputSpec(text, inner.shape, inner.is_tensor, span, inner.dtype)
        if isinstance(node, ast.Call):
            qual = self.qualify(node.func) or ""
            fname = qual.split(".")[-1] if qual.startswith("torch.") else ""
            if isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_OBJECT | {"contiguous"} and not fname:
                inner = self.example(node.func.value, line, scope, module, depth + 1)
                return InputSpec(text, inner.shape, inner.is_tensor, span, inner.dtype)
            if fname in _FACTORIES | _FULL | {"randint", "tensor", "as_tensor", "from_numpy", "arange", "linspace"}:
                dtype = "int64" if fname == "randint" else None
                return InputSpec(text, self._factory_shape(node, fname, line, scope, module), True, span, dtype)
        if isinstance(node, ast.Constant) or isinstance(node, (ast.Dict, ast.Tuple, ast.List)):
            return InputSpec(text, None, False if isinstance(node, (ast.Constant, ast.Dict)) else None, span)
        return InputSpec(text, None, None, span)

    def _factory_shape(self, call: ast.Call, fname: str, line: int, scope: _Scope, module: _Scope) -> tuple[int | None, ...] | None:
        size_kw = next((k.value for k in call.keywords if k.arg == "size"), None)
        args = list(call.args)
        if fname in _FULL:
            args = args[:1]
        elif fname == "randint":
            args = args[2:3] if len(args) >= 3 else args[1:2] if len(args) == 2 and isinstance(args[1], (ast.Tuple, ast.List)) else []
        elif fname not in _FACTORIES:
            return None
        if size_kw is not None:
            args = [size_kw]
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        if not args or any(isinstance(a, ast.Starred) for a in args):
            return None
        return tuple(self.int_value(a, line, scope, module) for a in args)

    def int_value(self, node: ast.expr | None, line: int, scope: _Scope, module: _Scope, depth: int = 0) -> int | None:
        value = _literal(node)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(node, ast.Name) and depth < 3:
            assigned, _ = self.last_assignment(node.id, line, scope, module)
            return self.int_value(assigned, line, scope, module, depth + 1)
        return None

    def names(self, node: ast.expr | None, line: int, scope: _Scope, module: _Scope) -> list[str] | None:
        if isinstance(node, ast.Name):
            node, _ = self.last_assignment(node.id, line, scope, module)
        value = _literal(node)
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        return None

    # -- dynamic dims ---------------------------------------------------------------------------
    def dynamic_shapes(self, node: ast.expr, line: int, scope: _Scope, module: _Scope) -> dict[str | int, dict[int, DimSpec]]:
        """Per input (forward parameter name, or position): its dims (a dict keyed by names, or a
        tuple aligned with the inputs)."""
        return {
            key: self.input_dims(v, line, scope, module)
            for key, v in _entries(self._deref(node, line, scope, module)) if isinstance(key, (str, int))
        }

    def input_dims(self, node: ast.expr, line: int, scope: _Scope, module: _Scope) -> dict[int, DimSpec]:
        """One input's dims: ``{0: batch}`` or ``(batch, None)``; ``None`` entries are static."""
        return {
            d: self.dim(v, line, scope, module)
            for d, v in _entries(self._deref(node, line, scope, module))
            if isinstance(d, int) and not (isinstance(v, ast.Constant) and v.value is None)
        }

    def dim(self, node: ast.expr, line: int, scope: _Scope, module: _Scope, depth: int = 0) -> DimSpec:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return DimSpec("string", node.value)
        if isinstance(node, ast.Name) and depth < 3:
            value, _ = self.last_assignment(node.id, line, scope, module)
            if value is not None:
                spec = self.dim(value, line, scope, module, depth + 1)
                return spec if spec.name or spec.kind != "named" else DimSpec("named", node.id, spec.min, spec.max)
        hint = self.local_name(node.func if isinstance(node, ast.Call) else node) or ""
        last = hint.split(".")[-1]
        if last in ("AUTO", "DYNAMIC", "STATIC") and hint.split(".")[-2:-1] == ["Dim"]:
            kw = {k.arg: self.int_value(k.value, line, scope, module) for k in getattr(node, "keywords", [])}
            return DimSpec(last.lower(), None, kw.get("min"), kw.get("max"))
        if isinstance(node, ast.Call) and last == "Dim":
            name = _literal(node.args[0]) if node.args else None
            kw = {k.arg: self.int_value(k.value, line, scope, module) for k in node.keywords}
            return DimSpec("named", name if isinstance(name, str) else None, kw.get("min"), kw.get("max"))
        if isinstance(node, ast.BinOp):
            return DimSpec("derived", self.code(node, 40))
        return DimSpec("unknown", self.code(node, 40))

    def dynamic_axes(self, node: ast.expr, site: Site, line: int, scope: _Scope, module: _Scope) -> dict[str | int, dict[int, DimSpec]]:
        node = self._deref(node, line, scope, module)
        out: dict[str | int, dict[int, DimSpec]] = {}
        if not isinstance(node, ast.Dict):
            return out
        for k, v in zip(node.keys, node.values):
            name = _literal(k)
            if not isinstance(name, str):
                continue
            key: str | int = site.input_names.index(name) if site.input_names and name in site.input_names else name
            v = self._deref(v, line, scope, module)
            dims: dict[int, DimSpec] = {}
            if isinstance(v, ast.Dict):
                for dk, dv in zip(v.keys, v.values):
                    d, label = _literal(dk), _literal(dv)
                    if isinstance(d, int):
                        dims[d] = DimSpec("string", label if isinstance(label, str) else None)
            elif isinstance(v, (ast.List, ast.Tuple)):
                for e in v.elts:
                    d = _literal(e)
                    if isinstance(d, int):
                        dims[d] = DimSpec("string", None)
            out[key] = dims
        return out

    def _deref(self, node: ast.expr, line: int, scope: _Scope, module: _Scope) -> ast.expr:
        """The literal a name or an optional value stands for: `axes` assigned above, `{...} if dynamic
        else None` (easyocr's export script: the dims, when there are any)."""
        for _ in range(3):
            if isinstance(node, ast.IfExp):
                none = [isinstance(arm, ast.Constant) and arm.value is None for arm in (node.body, node.orelse)]
                if none.count(True) != 1:
                    break
                node = node.orelse if none[0] else node.body
                continue
            if not isinstance(node, ast.Name):
                break
            value, _s = self.last_assignment(node.id, line, scope, module)
            if value is None:
                break
            node = value
        return node


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Statements and calls of a scope, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _fresh_mode(cls: ast.ClassDef | None, call: ast.Call) -> bool | None:
    """False (training mode: a module just built) — or None when the call hands it a module built
    elsewhere that it wraps (``Wrapper(model)``: the wrapped model keeps its own mode).  A wrapped
    argument is one ``__init__`` stores as ``self.x`` and the class calls as ``self.x(...)``; a
    library class (``cls`` None) counts as freshly built only from literal arguments."""
    args = [*call.args, *(k.value for k in call.keywords)]
    if cls is None:
        return False if all(isinstance(a, ast.Constant) or _literal(a) is not None for a in args) else None
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None or not args:
        return False
    params = [a.arg for a in [*init.args.posonlyargs, *init.args.args][1:]]
    stored = {
        t.attr: n.value.id
        for n in ast.walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in params
        for t in n.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }
    called = {
        n.func.attr for n in ast.walk(cls)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self" and n.func.attr in stored
    }
    wrapped = {stored[a] for a in called}
    passed = {params[i] for i in range(min(len(call.args), len(params)))} | {k.arg for k in call.keywords if k.arg}
    return None if wrapped & passed else False


def _entries(node: ast.expr) -> Iterator[tuple[Any, ast.expr]]:
    """(literal key, value) of a dict display, (position, element) of a tuple or list display."""
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            yield _literal(k), v
    elif isinstance(node, (ast.Tuple, ast.List)):
        yield from enumerate(node.elts)


def _mode_call(call: ast.Call) -> bool | None:
    """True for ``m.eval()`` / ``m.train(False)``, False for ``m.train()``, else None."""
    if not isinstance(call.func, ast.Attribute):
        return None
    if call.func.attr == "eval" and not call.args:
        return True
    if call.func.attr == "train":
        arg = _literal(call.args[0]) if call.args else next((_literal(k.value) for k in call.keywords if k.arg == "mode"), True)
        return None if not isinstance(arg, bool) else not arg
    return None


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _int(node: ast.expr | None) -> int | None:
    value = _literal(node)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
