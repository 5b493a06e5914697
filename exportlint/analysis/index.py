"""Per-file index: imports, classes, module-level functions and constants.

Built from the top-level statements of a parsed module only (class bodies are read for
their methods and ``self.<attr>`` assignments); nothing here walks function bodies, so it is
cheap.  Names are resolved to qualified names (``F`` -> ``torch.nn.functional``) so that
rules never care how something was imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator, Union

import libcst as cst

if TYPE_CHECKING:
    from exportlint.analysis.positions import Positions
    from exportlint.analysis.project import Project

FuncNode = Union[cst.FunctionDef, cst.Lambda]

# Packages whose classes are nn.Modules even when their source is not in the linted set.
MODULE_PACKAGES = (
    "torch.nn.",
    "torch.ao.nn.",
    "torch.jit.ScriptModule",
    "transformers.",
    "timm.",
    "torchvision.",
    "lightning.",
    "pytorch_lightning.",
    "diffusers.",
    "torch_geometric.nn.",
)
NOT_MODULES = {
    "torch.nn.Parameter",
    "torch.nn.parameter.Parameter",
    "torch.nn.Buffer",
    "transformers.PretrainedConfig",
    "transformers.PreTrainedConfig",
    "transformers.PreTrainedTokenizer",
    "transformers.PreTrainedTokenizerFast",
    "transformers.ProcessorMixin",
    "transformers.GenerationMixin",
}
AUTOGRAD_FUNCTIONS = {
    "torch.autograd.Function",
    "torch.autograd.function.Function",
    "torch.autograd.function.InplaceFunction",
    "torch.autograd.function.once_differentiable",
}


def _is_module_name(qual: str) -> bool:
    if qual in NOT_MODULES or qual in AUTOGRAD_FUNCTIONS:
        return False
    return qual.startswith(MODULE_PACKAGES) and qual.rsplit(".", 1)[-1][:1].isupper()


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for Name/Attribute chains, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _import_module_name(module: cst.BaseExpression | None) -> str:
    return (dotted(module) if module is not None else "") or ""


@dataclass
class ClassInfo:
    name: str
    node: cst.ClassDef
    file: "FileIndex"
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    staticmethods: set[str] = field(default_factory=set)
    # self.<attr> assignments found in any method: attr -> value expressions (see scan_attrs)
    attr_exprs: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    # register_buffer / register_parameter names
    tensor_attrs: set[str] = field(default_factory=set)
    _scanned: bool = False
    # Class-level simple assignments (constants).
    class_consts: dict[str, cst.BaseExpression] = field(default_factory=dict)
    _bases: list["ClassInfo | str"] | None = None
    _is_module: bool | None = None

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    @property
    def qualname(self) -> str:
        return f"{self.file.path}:{self.name}"

    def _base_exprs(self) -> list[cst.BaseExpression]:
        return [arg.value for arg in self.node.bases if arg.keyword is None]

    def bases(self) -> list["ClassInfo | str"]:
        """Resolved bases: ClassInfo for classes of the linted set (their files are loaded),
        qualified names otherwise."""
        if self._bases is None:
            resolved = (self.file.resolve_class_expr(e) for e in self._base_exprs())
            self._bases = [b for b in resolved if b is not None]
        return self._bases

    def iter_mro(self) -> Iterator["ClassInfo"]:
        """Depth-first, left-to-right linearisation of the known classes (close to C3 for the
        hierarchies model code uses); lazy, so a lookup that stops early loads fewer files."""
        seen: set[int] = set()
        stack: list[ClassInfo] = [self]
        while stack:
            c = stack.pop()
            if id(c) in seen:
                continue
            seen.add(id(c))
            yield c
            stack.extend(reversed([b for b in c.bases() if isinstance(b, ClassInfo)]))

    def mro(self) -> list["ClassInfo"]:
        return list(self.iter_mro())

    def external_bases(self) -> Iterator[str]:
        for c in self.iter_mro():
            for b in c.bases():
                if isinstance(b, str):
                    yield b

    def is_module(self) -> bool:
        """Does this class derive from torch.nn.Module (or a known Module library class)?
        Decided from qualified names where possible, loading other files only when needed."""
        if self._is_module is None:
            self._is_module = False  # guards against cycles
            self._is_module = self._derives(_is_module_name)
        return self._is_module

    def is_autograd_function(self) -> bool:
        return self._derives(lambda q: q in AUTOGRAD_FUNCTIONS)

    def _derives(self, test: "Callable[[str], bool]") -> bool:
        for expr in self._base_exprs():
            local = self.file.classes.get(dotted(expr) or "")
            if local is not None and local is not self:
                if local._derives(test):
                    return True
                continue
            qual = self.file.qualify(expr)
            if qual is None:
                continue
            project = self.file.project
            if project is None or not project.defines(qual):
                if test(qual):  # a library class: decided by its name
                    return True
                continue
            base = project.find_class(qual)
            if base is not None and base is not self and base._derives(test):
                return True
        return False

    def find_method(self, name: str, after: "ClassInfo | None" = None) -> tuple["ClassInfo", cst.FunctionDef] | None:
        """Resolve ``name`` through the MRO (optionally starting after class ``after``: super())."""
        skipping = after is not None
        for c in self.iter_mro():
            if skipping:
                skipping = c is not after
                continue
            if name in c.methods:
                return c, c.methods[name]
        return None

    def scan_attrs(self) -> None:
        """Collect ``self.<attr>`` assignments of every method (once, on first use)."""
        if not self._scanned:
            self._scanned = True
            for name, fn in self.methods.items():
                if name not in self.staticmethods:
                    _collect_self_attrs(self, fn)

    def has_symbolic(self) -> bool:
        return any("symbolic" in c.methods for c in self.mro())


def _is_staticmethod(fn: cst.FunctionDef) -> bool:
    return any(dotted(d.decorator) in ("staticmethod",) for d in fn.decorators)


def iter_statements(body: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement | cst.BaseCompoundStatement]:
    """Every statement of a suite, descending into compound statements but not into
    nested functions or classes (and never into expressions: cheap)."""
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            stack.extend(reversed(node.body))
        elif isinstance(node, cst.SimpleStatementLine):
            yield from node.body
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(node, cst.BaseCompoundStatement):
            yield node
            stack.extend(reversed(list(_suites_of(node))))


def _suites_of(node: cst.BaseCompoundStatement) -> Iterator[cst.BaseSuite]:
    if isinstance(node, cst.Match):
        for case in node.cases:
            yield case.body
        return
    yield node.body  # type: ignore[attr-defined]
    if isinstance(node, cst.If):
        if isinstance(node.orelse, cst.If):
            yield from _suites_of(node.orelse)
        elif node.orelse is not None:
            yield node.orelse.body
    elif isinstance(node, (cst.For, cst.While)) and node.orelse is not None:
        yield node.orelse.body
    elif isinstance(node, (cst.Try, cst.TryStar)):
        for h in node.handlers:
            yield h.body
        if node.orelse is not None:
            yield node.orelse.body
        if node.finalbody is not None:
            yield node.finalbody.body


def _collect_self_attrs(cls: ClassInfo, fn: cst.FunctionDef) -> None:
    """Record ``self.x = value`` and ``self.register_buffer('x', ...)`` in a method body."""
    params = fn.params.params
    if not params:
        return
    self_name = params[0].name.value
    registers = (f"{self_name}.register_buffer", f"{self_name}.register_parameter")
    for stmt in iter_statements(fn.body):
        if isinstance(stmt, cst.Assign):
            for t in stmt.targets:
                _record_target(cls, self_name, t.target, stmt.value)
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            _record_target(cls, self_name, stmt.target, stmt.value)
        elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
            call = stmt.value
            if dotted(call.func) in registers and call.args:
                first = call.args[0].value
                if isinstance(first, cst.SimpleString) and isinstance(first.evaluated_value, str):
                    cls.tensor_attrs.add(first.evaluated_value)


def _record_target(cls: ClassInfo, self_name: str, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == self_name:
        cls.attr_exprs.setdefault(target.attr.value, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements):
            for te, ve in zip(target.elements, value.elements):
                _record_target(cls, self_name, te.value, ve.value)


class FileIndex:
    """What one module defines and imports."""

    def __init__(self, path: str, module: cst.Module, project: "Project | None" = None) -> None:
        self.path = path
        self.module = module
        self.project = project
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.functions: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.consts: dict[str, cst.BaseExpression] = {}
        self._positions: "Positions | None" = None
        for stmt in module.body:
            self._index_statement(stmt)

    # -- building ---------------------------------------------------------------------------
    def _index_statement(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        full = _import_module_name(alias.name)
                        if alias.asname is not None:
                            self.imports[alias.asname.name.value] = full  # type: ignore[union-attr]
                        else:
                            top = full.split(".")[0]
                            self.imports[top] = top
                elif isinstance(small, cst.ImportFrom):
                    base = self._from_module(small)
                    if isinstance(small.names, cst.ImportStar):
                        continue
                    for alias in small.names:
                        name = _import_module_name(alias.name)
                        local = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
                        self.imports[local] = f"{base}.{name}" if base else name
                elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    if small.value is None:
                        continue
                    for t in targets:
                        if isinstance(t, cst.Name):
                            self.consts[t.value] = small.value
        elif isinstance(stmt, cst.FunctionDef):
            self.functions[stmt.name.value] = stmt
        elif isinstance(stmt, cst.ClassDef):
            self._index_class(stmt)
        elif isinstance(stmt, (cst.If, cst.Try)):
            # `try: import x except ImportError: ...` and `if TYPE_CHECKING:` blocks
            for block in _blocks_of(stmt):
                for inner in block:
                    self._index_statement(inner)

    def _from_module(self, node: cst.ImportFrom) -> str:
        name = _import_module_name(node.module)
        level = len(node.relative)
        if level == 0:
            return name
        if self.project is not None:
            pkg = self.project.package_of(self.path, level)
            if pkg is not None:
                return f"{pkg}.{name}" if name else pkg
        return "." * level + name

    def _index_class(self, node: cst.ClassDef) -> None:
        info = ClassInfo(node.name.value, node, self)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef):
                info.methods[stmt.name.value] = stmt
                if _is_staticmethod(stmt):
                    info.staticmethods.add(stmt.name.value)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            if isinstance(t.target, cst.Name):
                                info.class_consts[t.target.value] = small.value
                    elif isinstance(small, cst.AnnAssign) and small.value is not None:
                        if isinstance(small.target, cst.Name):
                            info.class_consts[small.target.value] = small.value
        self.classes[info.name] = info

    # -- resolution ---------------------------------------------------------------------------
    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name of a Name/Attribute chain rooted at an import (``F.relu`` ->
        ``torch.nn.functional.relu``); None when the root is not an import."""
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.imports:
            q = self.imports[head]
            return f"{q}.{rest}" if rest else q
        return None

    def resolve_class_expr(self, expr: cst.BaseExpression) -> "ClassInfo | str | None":
        name = dotted(expr)
        if name is None:
            if isinstance(expr, cst.Subscript):  # Generic[T] and friends
                return self.resolve_class_expr(expr.value)
            return None
        if name in self.classes:
            return self.classes[name]
        q = self.qualify(expr)
        if q is None:
            return name
        if self.project is not None:
            found = self.project.find_class(q)
            if found is not None:
                return found
        return q

    def resolve_function(self, qual: str) -> tuple["FileIndex", cst.FunctionDef] | None:
        """A function of the linted set by qualified name (through the project)."""
        if self.project is None:
            return None
        return self.project.find_function(qual)

    def positions(self) -> "Positions":
        if self._positions is None:
            from exportlint.analysis.positions import Positions

            self._positions = Positions(self.module)
        return self._positions

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


def _blocks_of(stmt: cst.CSTNode) -> Iterator[list[cst.BaseStatement]]:
    if isinstance(stmt, cst.If):
        yield list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else []
        if stmt.orelse is not None:
            if isinstance(stmt.orelse, cst.If):
                yield from _blocks_of(stmt.orelse)
            else:
                yield list(stmt.orelse.body.body) if isinstance(stmt.orelse.body, cst.IndentedBlock) else []
    elif isinstance(stmt, cst.Try):
        yield list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else []
        for h in stmt.handlers:
            yield list(h.body.body) if isinstance(h.body, cst.IndentedBlock) else []
        if stmt.orelse is not None:
            yield list(stmt.orelse.body.body) if isinstance(stmt.orelse.body, cst.IndentedBlock) else []
