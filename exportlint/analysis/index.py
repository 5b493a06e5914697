"""Per-file index: imports, classes, module-level functions and constants.

Built from the top-level statements of a parsed module only (class bodies are read for
their methods and ``self.<attr>`` assignments); nothing here walks function bodies, so it is
cheap.  Names are resolved to qualified names (``F`` -> ``torch.nn.functional``) so that
rules never care how something was imported.
"""

from __future__ import annotations

import ast
import io
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import libcst as cst

if TYPE_CHECKING:
    from exportlint.analysis.positions import Positions
    from exportlint.analysis.project import Project

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


# The analysis under way (see ClassInfo.loaded): one number per analyze_source call.
_ANALYSIS = [0]


def begin_analysis() -> None:
    """A new file's analysis starts: classes of other files count as loaded only once it needs them."""
    _ANALYSIS[0] += 1


def _is_module_name(qual: str) -> bool:
    if qual in NOT_MODULES or qual in AUTOGRAD_FUNCTIONS:
        return False
    return qual.startswith(MODULE_PACKAGES) and qual.rsplit(".", 1)[-1][:1].isupper()


def _base_name(expr: cst.BaseExpression) -> str:
    """Dotted name of a base class expression (``Generic[T]`` -> ``Generic``); '' if none."""
    if isinstance(expr, cst.Subscript):
        expr = expr.value
    return dotted(expr) or ""


# FileIndex -> Python's syntax tree of its text, for the latest few (see FileIndex.python_tree)
_PYTHON_TREES: "dict[int, tuple[weakref.ref[FileIndex], ast.Module]]" = {}


def _keep_python_tree(index: "FileIndex", tree: ast.Module) -> None:
    while len(_PYTHON_TREES) >= 24:
        del _PYTHON_TREES[next(iter(_PYTHON_TREES))]  # the oldest
    _PYTHON_TREES[id(index)] = (weakref.ref(index), tree)


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


@dataclass(eq=False)
class ClassInfo:
    """A class of the linted set.  Built from libcst for the analyzed file; for other files
    built from ``ast`` and parsed with libcst only when a method body is needed."""

    name: str
    file: "FileIndex"
    base_names: list[str]  # dotted names of the positional bases (``nn.Module``)
    method_names: set[str] = field(default_factory=set)
    staticmethods: set[str] = field(default_factory=set)
    # Class-level simple assignments (constants): name -> value expression (None when light)
    class_consts: dict[str, Any] = field(default_factory=dict)
    # self.<attr> assignments found in any method: attr -> value expressions (see scan_attrs)
    attr_exprs: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    # What `self.<attr>.append(x)` adds to a container attribute (x, or the call a local `x` was built by)
    appended: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    # register_buffer / register_parameter names -> the tensor registered (None when not given)
    tensor_attrs: dict[str, cst.BaseExpression | None] = field(default_factory=dict)
    # id(an attribute expression of `__init__`) -> the setting it needs, when only an arm the constructor's
    # defaults do not take assigns it (`elif radial_type == "chebyshev": self.radial = ChebychevBasis()`)
    attr_gates: dict[int, str] = field(default_factory=dict)
    # id(every attribute expression `__init__` assigns): values the built module holds from the start
    init_exprs: set[int] = field(default_factory=set)
    _node: cst.ClassDef | None = None
    _loader: "Callable[[], cst.ClassDef] | None" = None
    _used_in: int = -1  # the analysis (see begin_analysis) that last needed this class's code
    _methods: dict[str, cst.FunctionDef] | None = None
    _scanned: bool = False
    _bases: list["ClassInfo | str"] | None = None
    _is_module: bool | None = None

    @classmethod
    def from_cst(cls, node: cst.ClassDef, file: "FileIndex") -> "ClassInfo":
        info = cls(node.name.value, file, [_base_name(a.value) for a in node.bases if a.keyword is None], _node=node)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef):
                info.method_names.add(stmt.name.value)
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
        return info

    @property
    def node(self) -> cst.ClassDef:
        if self._node is None:
            assert self._loader is not None
            self._node = self._loader()
        self._used_in = _ANALYSIS[0]
        return self._node

    @property
    def loaded(self) -> bool:
        """Has the current analysis needed this class's code (always, for the analyzed file)?  Only
        this analysis counts: a class an earlier file's analysis parsed is not "loaded" here, so a
        file's findings do not depend on what the same process analysed before."""
        return self._node is not None and self._used_in == _ANALYSIS[0]

    @property
    def methods(self) -> dict[str, cst.FunctionDef]:
        if self._methods is None:
            body = self.node.body.body if isinstance(self.node.body, cst.IndentedBlock) else []
            self._methods = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}
        return self._methods

    def bases(self) -> list["ClassInfo | str"]:
        """Resolved bases: ClassInfo for classes of the linted set (their files are loaded),
        qualified names otherwise."""
        if self._bases is None:
            resolved = (self.file.resolve_class_name(n) for n in self.base_names if n)
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
        for name in self.base_names:
            local = self.file.classes.get(name)
            if local is not None and local is not self:
                if local._derives(test):
                    return True
                continue
            qual = self.file.qualify_name(name)
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
            if name in c.method_names:
                return c, c.methods[name]
        return None

    def scan_attrs(self) -> None:
        """Collect ``self.<attr>`` assignments of every method (once, on first use)."""
        if not self._scanned:
            self._scanned = True
            for name, fn in self.methods.items():
                if name not in self.staticmethods:
                    before = {a: len(v) for a, v in self.attr_exprs.items()}
                    _collect_self_attrs(self, fn)
                    if name == "__init__":
                        self.init_exprs |= {id(e) for a, v in self.attr_exprs.items() for e in v[before.get(a, 0):]}

    def has_symbolic(self) -> bool:
        return any("symbolic" in c.method_names for c in self.mro())


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
    built: dict[str, cst.BaseExpression] = {}  # `layer = Block(...)` before `self.layers.append(layer)`
    # A setter (`def set_input_embeddings(self, value): self.embeddings = value`) replaces the attribute
    # from outside: what it holds then is unknown, and it does not make the built submodule unknown.
    setter_args = {p.name.value for p in params[1:]} if fn.name.value != "__init__" else set()
    for stmt in iter_statements(fn.body):
        if isinstance(stmt, cst.Assign):
            if isinstance(stmt.value, cst.Name) and stmt.value.value in setter_args:
                continue
            for t in stmt.targets:
                _record_target(cls, self_name, t.target, stmt.value)
                if isinstance(t.target, cst.Name):
                    built[t.target.value] = stmt.value
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            _record_target(cls, self_name, stmt.target, stmt.value)
        elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
            call = stmt.value
            if dotted(call.func) in registers and call.args:
                first = call.args[0].value
                if isinstance(first, cst.SimpleString) and isinstance(first.evaluated_value, str):
                    cls.tensor_attrs[first.evaluated_value] = call.args[1].value if len(call.args) > 1 else None
            func = call.func
            if (isinstance(func, cst.Attribute) and func.attr.value == "append" and len(call.args) == 1
                    and isinstance(func.value, cst.Attribute) and isinstance(func.value.value, cst.Name)
                    and func.value.value.value == self_name):
                item = call.args[0].value
                if isinstance(item, cst.Name):
                    item = built.get(item.value, item)
                cls.appended.setdefault(func.value.attr.value, []).append(item)
    if fn.name.value == "__init__" and isinstance(fn.body, cst.IndentedBlock):
        preset: list[cst.BaseExpression] = []  # `self.pos_embed = None` before `if use_abs_pos: self.pos_embed = ...`
        for stmt in fn.body.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                preset += [v for v in _assigned_self_attrs(cst.IndentedBlock(body=[stmt]), self_name).values()
                           if isinstance(v, cst.Name) and v.value == "None"]
            if isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else):
                _record_built_if(cls, self_name, stmt)
            if isinstance(stmt, cst.If):
                _drop_non_default_none(cls, fn, self_name, stmt, preset)


def _assigned_self_attrs(block: cst.BaseSuite, self_name: str) -> dict[str, cst.BaseExpression]:
    """The `self.<attr> = value` (or `self.<attr>: T = value`) statements at the top of ``block``:
    attribute -> value."""
    out: dict[str, cst.BaseExpression] = {}
    for line in getattr(block, "body", ()):
        for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                t, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                t, value = small.target, small.value
            else:
                continue
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == self_name:
                out[t.attr.value] = value
    return out


def _registered_tensors(block: cst.BaseSuite, self_name: str) -> set[str]:
    """The names `self.register_buffer('name', ...)` / `register_parameter` give at the top of ``block``."""
    out: set[str] = set()
    registers = (f"{self_name}.register_buffer", f"{self_name}.register_parameter")
    for line in getattr(block, "body", ()):
        for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and dotted(small.value.func) in registers:
                first = small.value.args[0].value if small.value.args else None
                if isinstance(first, cst.SimpleString) and isinstance(first.evaluated_value, str):
                    out.add(first.evaluated_value)
    return out


def _default_arm(cls: ClassInfo, init: cst.FunctionDef, stmt: cst.If) -> "tuple[list[cst.BaseSuite], int, list[str]] | None":
    """The arms of an `if` / `elif` / `else` chain of ``init``, the one the defaults take (the constructor's
    literal defaults, or a field's default in the configuration class next to ``cls``: `config.mask_type`;
    decided like a setting's gate: code_facts.gating_setting) and, per arm, the setting it needs described
    for a hint ("`radial_type` (default 'bessel')"); None when the defaults do not decide."""
    from exportlint.analysis.code_facts import config_default, describe_setting, gating_setting, literal, named_params

    params = {p.name.value: p for p in named_params(init)}
    defaults = {name: value for name, p in params.items() if p.default is not None
                for ok, value in [literal(p.default)] if ok}

    def setting(expr: cst.BaseExpression) -> tuple[str, object] | None:
        if isinstance(expr, cst.Name):
            return (expr.value, defaults[expr.value]) if expr.value in defaults else None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in params \
                and expr.value.value != init.params.params[0].name.value:
            return config_default(cls, expr.attr.value)  # `config.position_embedding_type == "rotary"`
        return None

    arms: list[cst.BaseSuite] = []
    needs: list[str] = []
    chosen: int | None = None
    decided_by: tuple[str, object] | None = None
    node: cst.If | cst.Else | None = stmt
    while isinstance(node, cst.If):
        fails, holds = gating_setting(node.test, setting), gating_setting(node.test, setting, negated=True)
        if (fails is None) == (holds is None):
            return None  # not decided by the defaults
        if holds is not None and chosen is None:
            chosen, decided_by = len(arms), holds
        arms.append(node.body)
        needs.append(describe_setting(*(fails or holds)))  # type: ignore[misc]
        node = node.orelse
    if isinstance(node, cst.Else):
        arms.append(node.body)
        needs.append(describe_setting(*decided_by) if decided_by is not None else needs[-1])
        chosen = len(arms) - 1 if chosen is None else chosen
    return None if chosen is None else (arms, chosen, needs)


def _drop_non_default_none(cls: ClassInfo, init: cst.FunctionDef, self_name: str, stmt: cst.If,
                           preset: Sequence[cst.BaseExpression] = ()) -> None:
    """`if positional_embedding == 'none': self.pos = None` / `elif ...: self.pos = nn.Parameter(...)` / `else:
    self.register_buffer('pos', ...)` with the default `'sine'`: the attribute is None only under a setting
    that is not the default, so it is not None (vit-pytorch's CCT; holdout4: `not exists(self.pos) and
    x.size(1) < n` never reads the size by default).  A `self.<attr> = None` earlier in `__init__`
    (``preset``) is replaced too when the default arm sets it (SAM's `self.pos_embed = None` then
    `if use_abs_pos:` with the default True: holdout10, its fixed token grid).  What only the other arms
    assign needs their setting (``ClassInfo.attr_gates``: MACE's `radial_type='chebyshev'` basis)."""
    found = _default_arm(cls, init, stmt)
    if found is None:
        return
    arms, chosen, needs = found
    default_arm = _assigned_self_attrs(arms[chosen], self_name)
    for i, body in enumerate(arms):
        if i != chosen:
            for value in _assigned_self_attrs(body, self_name).values():
                cls.attr_gates[id(value)] = needs[i]
    kept = {a for a, v in default_arm.items() if not (isinstance(v, cst.Name) and v.value == "None")}
    kept |= _registered_tensors(arms[chosen], self_name)
    nones = [v for i, body in enumerate(arms) if i != chosen for v in _assigned_self_attrs(body, self_name).values()
             if isinstance(v, cst.Name) and v.value == "None"] + list(preset)
    for attr in kept:
        exprs = cls.attr_exprs.get(attr, [])
        cls.attr_exprs[attr] = [e for e in exprs if not any(e is n for n in nones)]


def _record_built_if(cls: ClassInfo, self_name: str, stmt: cst.If) -> None:
    """`if config.use_absolute_embeddings: self.pos = nn.Parameter(...)` / `else: self.pos = None`: one
    attribute expression, `nn.Parameter(...) if config.use_absolute_embeddings else None`, so that the
    setting that builds it is known (binding._classify_attr_expr)."""
    assert isinstance(stmt.orelse, cst.Else)
    then, other = _assigned_self_attrs(stmt.body, self_name), _assigned_self_attrs(stmt.orelse.body, self_name)
    for attr, value in then.items():
        none = other.get(attr)
        exprs = cls.attr_exprs.get(attr, [])
        # also `if rec_dropout > 0: self.lstm = LSTMwRecDropout(...)` / `else: self.lstm = nn.LSTM(...)`: which
        # part a setting builds (binding._classify_attr_expr gives each its gate)
        alternative = (isinstance(none, cst.Name) and none.value == "None") or (
            isinstance(none, cst.Call) and isinstance(value, cst.Call))
        if alternative and any(e is value for e in exprs) and any(e is none for e in exprs):
            built = cst.IfExp(test=stmt.test, body=value, orelse=none)
            cls.attr_exprs[attr] = [built] + [e for e in exprs if e is not value and e is not none]


def _record_target(cls: ClassInfo, self_name: str, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == self_name:
        cls.attr_exprs.setdefault(target.attr.value, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements):
            for te, ve in zip(target.elements, value.elements):
                _record_target(cls, self_name, te.value, ve.value)


class FileIndex:
    """What one module defines and imports.

    ``FileIndex(path, module)`` indexes a libcst module (the file being analyzed);
    :meth:`light` indexes another file of the linted set from Python's own (much faster)
    parser and parses a class or function with libcst only when its body is needed.
    """

    def __init__(self, path: str, module: cst.Module | None, project: "Project | None" = None, text: str | None = None) -> None:
        self.path = path
        self.module = module
        self.project = project
        self._text = text
        # Facts of the whole file, each computed once from its text or Python tree (code_facts.file_fact)
        self.facts: dict[str, Any] = {}
        self._tops: dict[int, cst.CSTNode] | None = None  # id(def in a top-level statement) -> it
        self._top_lines: dict[int, int] | None = None  # id(top-level def) -> its first line
        self._top_positions: dict[int, "Positions"] = {}
        self.reuse_segments = False
        # name -> first lines of module-level definitions, from Python's parser (when known)
        self.def_lines: dict[str, list[int]] | None = None
        self._segment_of: dict[int, int] = {}  # id(top-level def parsed alone) -> its _positions index
        self._segment_entries: list[list[Any]] = []
        self._light_tops: dict[int, cst.CSTNode] = {}  # id(method/function) -> its parsed top-level def
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.functions: "dict[str, cst.FunctionDef] | _LazyDefs" = {}
        self.classes: dict[str, ClassInfo] = {}
        self.consts: set[str] = set()
        # Module-level tables of classes (`ATTENTION_CLASSES = {"eager": Attention, "sdpa": SdpaAttention}`):
        # name -> the classes' names, for `ATTENTION_CLASSES[config._attn_implementation](config)`
        self.class_tables: dict[str, list[str]] = {}
        self._positions: "list[tuple[cst.Module, int, Positions | None]]" = []
        # line -> characters removed from its indentation before parsing (form feeds, see
        # budget.leading_form_feeds): added back to the columns reported on that line.
        self.column_shifts: dict[int, int] = {}
        if module is not None:
            self._positions.append((module, 0, None))
            for stmt in module.body:
                self._index_statement(stmt)

    # -- building from libcst ------------------------------------------------------------------
    def _index_statement(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        self._add_import(_import_module_name(alias.name), alias.asname.name.value if alias.asname is not None else None)  # type: ignore[union-attr]
                elif isinstance(small, cst.ImportFrom):
                    if isinstance(small.names, cst.ImportStar):
                        continue
                    base = self._from_module(small)
                    for alias in small.names:
                        name = _import_module_name(alias.name)
                        local = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
                        self.imports[local] = f"{base}.{name}" if base else name
                elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    self.consts.update(t.value for t in targets if isinstance(t, cst.Name))
                    value = small.value
                    if isinstance(value, cst.Dict) and value.elements and all(
                            isinstance(e, cst.DictElement) and isinstance(e.value, cst.Name) for e in value.elements):
                        for t in targets:
                            if isinstance(t, cst.Name):
                                self.class_tables[t.value] = [e.value.value for e in value.elements]  # type: ignore[union-attr]
        elif isinstance(stmt, cst.FunctionDef):
            self.functions[stmt.name.value] = stmt  # type: ignore[index]
        elif isinstance(stmt, cst.ClassDef):
            self.classes[stmt.name.value] = ClassInfo.from_cst(stmt, self)
        elif isinstance(stmt, (cst.If, cst.Try)):
            # `try: import x except ImportError: ...` and `if TYPE_CHECKING:` blocks
            for block in _blocks_of(stmt):
                for inner in block:
                    self._index_statement(inner)

    def _add_import(self, full: str, asname: str | None) -> None:
        if asname is not None:
            self.imports[asname] = full
        else:
            top = full.split(".")[0]
            self.imports[top] = top

    def _relative_base(self, name: str, level: int) -> str:
        if level == 0:
            return name
        if self.project is not None:
            pkg = self.project.package_of(self.path, level)
            if pkg is not None:
                return f"{pkg}.{name}" if name else pkg
        return "." * level + name

    def _from_module(self, node: cst.ImportFrom) -> str:
        return self._relative_base(_import_module_name(node.module), len(node.relative))

    def python_tree(self) -> ast.Module | None:
        """Python's own syntax tree of this file's text (the one :meth:`light` was built from, or parsed
        now), kept for the latest few files only: the trees of a whole project would not fit.  None when
        the text is not at hand or does not parse."""
        hit = _PYTHON_TREES.get(id(self))
        if hit is not None and hit[0]() is self:
            return hit[1]
        text = self._text if self._text is not None else (self.module.code if self.module is not None else None)
        if text is None:
            return None
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        _keep_python_tree(self, tree)
        return tree

    def share_python_tree(self, other: "FileIndex") -> None:
        """This index is of the same text as ``other``: the Python tree ``other`` was built from serves it too."""
        hit = _PYTHON_TREES.get(id(other))
        if hit is not None and hit[0]() is other:
            _keep_python_tree(self, hit[1])

    # -- building from ast (other files of the linted set) --------------------------------------
    @classmethod
    def light(
        cls, path: str, text: str, project: "Project | None" = None, reuse_segments: bool = False,
        tree: ast.Module | None = None,
    ) -> "FileIndex | None":
        """Index ``text`` with ``ast`` (None on a syntax error); bodies are parsed on demand.
        With ``reuse_segments`` (an editor re-linting a buffer), a class or function whose text
        did not change since an earlier lint is not parsed again, nor are its positions.
        ``tree`` is ``text`` already parsed by ``ast``."""
        if tree is None:
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                return None
        index = cls(path, None, project)
        index.reuse_segments = reuse_segments
        index._lines = io.StringIO(text, newline="").readlines()
        index._text = text
        index.functions = _LazyDefs()
        index.def_lines = _def_lines(tree)
        index._index_ast(tree.body)
        _keep_python_tree(index, tree)  # for the facts read with Python's parser (code_facts)
        return index

    def _index_ast(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    self._add_import(alias.name, alias.asname)
            elif isinstance(stmt, ast.ImportFrom):
                base = self._relative_base(stmt.module or "", stmt.level or 0)
                for alias in stmt.names:
                    if alias.name != "*":
                        self.imports[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                self.consts.update(t.id for t in targets if isinstance(t, ast.Name))
                if isinstance(stmt.value, ast.Dict) and stmt.value.values and all(
                        k is not None and isinstance(v, ast.Name) for k, v in zip(stmt.value.keys, stmt.value.values)):
                    for t in targets:
                        if isinstance(t, ast.Name):
                            self.class_tables[t.id] = [v.id for v in stmt.value.values]  # type: ignore[attr-defined]
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.add(stmt.name, self._loader(stmt, cst.FunctionDef))  # type: ignore[union-attr]
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = self._light_class(stmt)
            elif isinstance(stmt, ast.If):
                self._index_ast(stmt.body)
                self._index_ast(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                self._index_ast(stmt.body)
                for h in stmt.handlers:
                    self._index_ast(h.body)
                self._index_ast(stmt.orelse)

    def _light_class(self, node: ast.ClassDef) -> ClassInfo:
        info = ClassInfo(node.name, self, [_ast_dotted(b) for b in node.bases], _loader=self._loader(node, cst.ClassDef))
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.method_names.add(stmt.name)
                if any(_ast_dotted(d) == "staticmethod" for d in stmt.decorator_list):
                    info.staticmethods.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                info.class_consts.update((t.id, None) for t in stmt.targets if isinstance(t, ast.Name))
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
                info.class_consts[stmt.target.id] = None
        return info

    def _loader(self, node: ast.stmt, kind: type) -> Callable[[], Any]:
        """Parse just this top-level definition with libcst (the whole file if it is nested)."""
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        last = node.end_lineno or node.lineno
        name = node.name  # type: ignore[attr-defined]
        top_level = node.col_offset == 0

        def load() -> Any:
            if top_level:
                try:
                    text = "".join(self._lines[first - 1 : last])
                    entry = _SEGMENTS.get(text) if self.reuse_segments else None
                    if entry is None:
                        entry = [cst.parse_module(text), None]
                        if self.reuse_segments:
                            _SEGMENTS[text] = entry
                            while len(_SEGMENTS) > _SEGMENTS_KEPT:
                                _SEGMENTS.popitem(last=False)
                    segment = entry[0]
                    found = segment.body[0] if segment.body else None
                    if isinstance(found, kind) and found.name.value == name:  # type: ignore[attr-defined]
                        self._segment_of[id(found)] = len(self._positions)
                        self._positions.append((segment, first - 1, entry[1]))
                        self._segment_entries.append(entry)
                        for m in found.body.body if isinstance(found, cst.ClassDef) and isinstance(found.body, cst.IndentedBlock) else ():
                            if isinstance(m, cst.FunctionDef):
                                self._light_tops[id(m)] = found
                        self._light_tops[id(found)] = found
                        return found
                except Exception:
                    pass
            return self._whole(name, kind)

        return load

    def _whole(self, name: str, kind: type) -> Any:
        """Fallback: parse the whole file once and take the definition from it."""
        module = cst.parse_module(self._text)
        self._positions.append((module, 0, None))
        full = FileIndex(self.path, module, self.project)
        if kind is cst.ClassDef:
            return full.classes[name].node
        return full.functions[name]

    @property
    def source(self) -> str | None:
        """The file's text (None for an index built from a syntax tree alone)."""
        return self._text

    # -- resolution ---------------------------------------------------------------------------
    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name of a Name/Attribute chain rooted at an import (``F.relu`` ->
        ``torch.nn.functional.relu``); None when the root is not an import."""
        name = dotted(expr)
        return self.qualify_name(name) if name is not None else None

    def qualify_name(self, name: str) -> str | None:
        head, _, rest = name.partition(".")
        if head in self.imports:
            q = self.imports[head]
            return f"{q}.{rest}" if rest else q
        return None

    def resolve_class_name(self, name: str) -> "ClassInfo | str | None":
        """A base class by dotted name: ClassInfo (linted set) or qualified name (library)."""
        if not name:
            return None
        if name in self.classes:
            return self.classes[name]
        q = self.qualify_name(name)
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

    # -- positions and text ---------------------------------------------------------------------
    def top_of(self, fn: cst.CSTNode) -> cst.CSTNode | None:
        """The top-level class or function statement that defines method/function ``fn``
        (only for the analyzed file, where it saves generating the whole module's code)."""
        if self.module is None:
            return self._light_tops.get(id(fn))
        if self._tops is None:
            self._tops = {}
            for c in self.classes.values():
                if c.loaded:
                    for m in c.methods.values():
                        self._tops[id(m)] = c.node
            for f in self.functions.values():  # type: ignore[union-attr]
                self._tops[id(f)] = f
        return self._tops.get(id(fn))

    def _top_span(self, node: cst.CSTNode, top: cst.CSTNode) -> tuple[int, int, int, int] | None:
        """Span of ``node`` from the code of its top-level statement alone, placed with the
        line Python's parser gives that statement; None when that cannot be done."""
        from exportlint.analysis.positions import Positions

        if self.module is None:  # a definition parsed alone: its segment's positions
            i = self._segment_of.get(id(top))
            if i is None:
                return None
            module, offset, positions = self._positions[i]
            if positions is None:
                positions = Positions(module)
                self._positions[i] = (module, offset, positions)
                entry = next((e for e in self._segment_entries if e[0] is module), None)
                if entry is not None:
                    entry[1] = positions  # kept with the cached segment
            if not positions.has(node):
                return None
            line, col, end_line, end_col = positions.span(node)
            return line + offset, col, end_line + offset, end_col
        if self._top_lines is None:
            self._top_lines = _top_level_lines(self.module, self._text, self.def_lines)  # type: ignore[arg-type]
        first = self._top_lines.get(id(top))
        if first is None:
            return None
        positions = self._top_positions.get(id(top))
        if positions is None:
            assert self.module is not None
            holder = self.module.with_changes(body=[top], header=[], footer=[])
            positions = self._top_positions[id(top)] = Positions(holder)
        if not positions.has(node):
            return None
        line, col, end_line, end_col = positions.span(node)
        return line + first - 1, col, end_line + first - 1, end_col

    def span(self, node: cst.CSTNode, top: object = None) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of ``node``: 1-based, end exclusive."""
        line, col, end_line, end_col = self._span(node, top)
        if self.column_shifts:
            col += self.column_shifts.get(line, 0)
            end_col += self.column_shifts.get(end_line, 0)
        return line, col, end_line, end_col

    def _span(self, node: cst.CSTNode, top: object = None) -> tuple[int, int, int, int]:
        from exportlint.analysis.positions import Positions

        if top is not None and self._text is not None:
            found = self._top_span(node, top)  # type: ignore[arg-type]
            if found is not None:
                return found
        for i, (module, offset, positions) in enumerate(self._positions):
            if positions is None:
                positions = Positions(module)
                self._positions[i] = (module, offset, positions)
            if positions.has(node):
                line, col, end_line, end_col = positions.span(node)
                return line + offset, col, end_line + offset, end_col
        raise KeyError("node not in this file")

    def start(self, node: cst.CSTNode, top: object = None) -> tuple[int, int]:
        line, col, _, _ = self.span(node, top)
        return line, col

    def code(self, node: cst.CSTNode) -> str:
        return (self.module or _EMPTY_MODULE).code_for_node(node)


_EMPTY_MODULE = cst.Module(body=[])

# Parsed top-level definitions by source text, with their positions once computed: an editor
# re-linting a buffer after a keystroke re-parses only the definition that changed.
_SEGMENTS: "OrderedDict[str, list[Any]]" = OrderedDict()
_SEGMENTS_KEPT = 2048


def _def_lines(tree: ast.Module) -> dict[str, list[int]]:
    """name -> first lines (decorators included) of the module-level classes and functions."""
    firsts: dict[str, list[int]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([stmt.lineno] + [d.lineno for d in stmt.decorator_list])
            firsts.setdefault(stmt.name, []).append(first)
    return firsts


def _top_level_lines(module: cst.Module, text: str | None, firsts: dict[str, list[int]] | None) -> dict[int, int]:
    """id(top-level class/def of ``module``) -> the line its generated code starts on (leading
    blank and comment lines included), from Python's own parser; unique names only."""
    if firsts is None:
        if text is None:
            return {}
        try:
            firsts = _def_lines(ast.parse(text))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return {}
    out: dict[int, int] = {}
    for stmt in module.body:
        if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
            lines = firsts.get(stmt.name.value, [])
            if len(lines) == 1:
                before = len(stmt.leading_lines) + (len(stmt.decorators[0].leading_lines) if stmt.decorators else 0)
                out[id(stmt)] = lines[0] - before
    return out


class _LazyDefs:
    """name -> FunctionDef, parsed on first access."""

    def __init__(self) -> None:
        self._loaders: dict[str, Callable[[], cst.FunctionDef]] = {}
        self._done: dict[str, cst.FunctionDef] = {}

    def add(self, name: str, loader: Callable[[], cst.FunctionDef]) -> None:
        self._loaders[name] = loader
        self._done.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._loaders

    def __getitem__(self, name: str) -> cst.FunctionDef:
        if name not in self._done:
            self._done[name] = self._loaders[name]()
        return self._done[name]


def _ast_dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        node = node.value
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


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
