"""Flow-sensitive abstract interpretation of export-reachable code.

Starting from every ``forward`` of every ``nn.Module`` subclass of a file, the interpreter
walks statements in order, keeps an environment ``name -> Val`` (joined at branch merges,
iterated to a fixed point in loops), follows calls into methods resolved through the class
hierarchy, module-level functions (also of other linted files), nested functions and lambdas
(argument values in, return value out, memoised per argument signature), and hands every
situation a rule may care about to ``sink`` as an event.  Code that no ``forward`` reaches is
never interpreted.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import libcst as cst

from exportlint.analysis import events as ev
from exportlint.analysis import torchapi as api
from exportlint.analysis.code_facts import (
    NodeMemo,
    alternative_arms,
    body_statements,
    checked_before_use,
    class_arguments,
    config_gate,
    constructor_default,
    describe_setting,
    fills_optional_input,
    gating_setting,
    precomputed_bypass,
    ends_in_failure,
    fills_default,
    forward_replaced,
    is_check_function,
    is_data_pipeline,
    is_guard,
    is_inert,
    is_training_only,
    known_false,
    literal,
    may_exit_early,
    overwritten_arm,
    shortcut_return,
    static_predicate,
    takes_a_python_object,
)
from exportlint.analysis.dims import (
    cat_dims,
    ELEMENTWISE_LAYERS,
    NORM_LAYERS,
    broadcast_dims,
    declared_axis,
    layer_fixed_axis,
    raw_dim,
    derived_sizes,
    literal_axis,
    sized_dims,
    param_shape_tag,
    shape_seq_of,
    size_kind,
    split_parts,
    with_data_shape,
    with_declared_dims,
)
from exportlint.analysis.index import ClassInfo, FileIndex, dotted
from exportlint.diagnostics import Target
from exportlint.analysis.values import (
    Alternatives, CONST, DDS, ModuleRef, NONE, SEQ, SHAPE, TENSOR, UNKNOWN, Step, Val, combine, const, element_of,
    join, kind, merge_prov, seq_of, tuple_of,
)

MAX_DEPTH = 12
MAX_CONTEXTS = 6  # analyses of one function with different argument kinds
MAX_ANALYSES = 4000  # function analyses per file

# The result of a callee we cannot see, given tensors: a tensor, a tuple, a number… Nothing is
# reported about it until a tensor-only method is called on it.
OPAQUE = Val(tags=frozenset({"opaque"}))
MAX_LOOP_ROUNDS = 3

Sink = Callable[[ev.Event, FileIndex, "Frame"], None]

KIND_WORDS = {
    DDS: "data-dependent",
    TENSOR: "a tensor",
    SHAPE: "a shape value",
}

NON_TENSOR_ANNOTATIONS = {
    "int", "float", "str", "bool", "complex", "bytes", "dict", "Dict", "None", "torch.dtype",
    "torch.device", "dtype", "device", "Callable", "type",
}
# Unannotated `name=None` parameters named like these are flags (HF's `use_cache=None`).
FLAG_PREFIXES = ("use_", "return_", "output_", "is_", "has_", "do_", "enable_", "disable_", "with_", "apply_")
CHECKPOINTING_FLAGS = {"grad_checkpointing", "gradient_checkpointing", "use_checkpoint", "with_cp"}
SEQ_ANNOTATIONS = {"List", "list", "Sequence", "Tuple", "tuple", "Iterable", "typing.List", "typing.Sequence", "typing.Tuple"}
# Forward parameters that carry training targets: export passes none, so loss code behind
# `if labels is not None:` never runs there.
TARGET_PARAMS = {"labels", "label", "targets", "target", "return_loss", "gt", "gts", "y_true", "ground_truth"}
TARGET_PARAM_SUFFIXES = ("_labels", "_label", "_targets", "_positions_label", "gt_boxes", "gt_masks", "gt_instances")

# Prompts that models take as inputs although their names end like targets (SAM's point labels).
_INPUT_PREFIXES = ("input_", "prompt_", "point_")


def _is_target_param(name: str) -> bool:
    """Training targets an export passes no value for: `labels`, `class_labels`, RoCBert's
    `labels_input_ids`; not prompts (`input_labels`, SAM's point labels)."""
    if name.startswith(_INPUT_PREFIXES):
        return False
    return name in TARGET_PARAMS or name.endswith(TARGET_PARAM_SUFFIXES) or name.startswith("labels_")


FALSY = frozenset({"falsy"})
TRUTHY = frozenset({"truthy"})


@dataclass
class FuncRef:
    """A callable the interpreter can enter."""

    node: cst.FunctionDef | cst.Lambda
    file: FileIndex
    cls: ClassInfo | None = None  # runtime class of ``self`` for methods
    defining: ClassInfo | None = None  # class that defines the method (for super())
    bound_self: bool = False  # called through ``self.``: skip the first parameter
    closure: "Frame | None" = None


@dataclass
class SelfRef:
    cls: ClassInfo


@dataclass
class Instance(ModuleRef):
    """An instance of a class of the linted set (a submodule built from it)."""

    cls: ClassInfo


@dataclass
class LibraryModule:
    """A torch.nn layer built in ``__init__``: its class and the constructor call."""

    qual: str
    ctor: cst.Call
    file: FileIndex


@dataclass
class SuperRef:
    cls: ClassInfo
    after: ClassInfo


@dataclass
class Frame:
    file: FileIndex
    func: FuncRef
    env: dict[str, Val]
    parent: "Frame | None" = None
    returns: list[Val] = field(default_factory=list)
    nested: list[FuncRef] = field(default_factory=list)
    called_nested: set[int] = field(default_factory=set)
    loop_exits: list[list[dict[str, Val]]] = field(default_factory=list)
    # The input a caller can pass precomputed to skip this code (code_facts.fills_optional_input,
    # code_facts.precomputed_bypass): a model's export path that passes it never runs it
    bypass: str | None = None
    # The non-default constructor setting this code needs (see code_facts.config_gate)
    gate: str | None = None

    @property
    def cls(self) -> ClassInfo | None:
        return self.func.cls

    def lookup(self, name: str) -> Val | None:
        f: Frame | None = self
        while f is not None:
            if name in f.env:
                return f.env[name]
            f = f.parent
        return None


def config_tag(param: str, default: object) -> str:
    """The tag a setting's value carries (read back by ``Interpreter._setting``)."""
    return f"config:{param}={default!r}"


class _Conditional:
    """`with interp._conditional():` (a plain class: a generator-based context manager costs more on
    this hot path)."""

    __slots__ = ("interp",)

    def __init__(self, interp: "Interpreter") -> None:
        self.interp = interp

    def __enter__(self) -> None:
        self.interp.regions.append(object())

    def __exit__(self, *exc: object) -> None:
        self.interp.regions.pop()


_COMPOUND = (cst.If, cst.For, cst.While, cst.Try, cst.With)


class Interpreter:
    def __init__(self, file: FileIndex, sink: Sink, target: Target = Target.EXPORT, plan: Any = None) -> None:
        self.file = file
        self.sink = sink
        self.target = target
        self.plan = plan  # context.plan.Plan: the export context of this analysis (None: none)
        # The root whose forward is being entered, and its declared dynamic dims (None: all dynamic).
        self.entry_fn: cst.CSTNode | None = None
        self.entry_dims: dict[str, tuple[int | None, frozenset[int]]] | None = None
        self.memo: dict[tuple, Val] = {}
        self.active: set[tuple] = set()
        self.depth = 0
        self._attr_cache: dict[tuple[int, str], Val | None] = {}
        self.reached: set[int] = set()  # Module classes whose forward has been analyzed
        # Bounds that keep pathological files linear: analyses per function (distinct argument
        # signatures) and per file.
        self.results_of: dict[tuple[int, int], list[Val]] = {}
        self.budget = MAX_ANALYSES
        # The operand that decides a comparison / boolean operation (what a message quotes).
        self.deciding: dict[int, cst.BaseExpression] = {}
        self.converted_items: set[int] = set()  # `.item()` / `round()` calls that int()/float() convert at once
        self.checking = 0  # > 0 while evaluating an assert's test or a torch._check's arguments
        self.assigning: list[tuple[cst.Assign, cst.CSTNode]] = []  # the assignments being evaluated, innermost last
        # (bypass, gate) of the arms being analysed: see Frame
        self.context_stack: list[tuple[str | None, str | None]] = []
        # The conditional regions being analysed, innermost last: one fresh token per entry into code
        # that may not run on an export's path (see _conditional); a failure dominates the code
        # analysed while its regions are still open (see engine._Dispatcher)
        self.regions: list[object] = []
        self.library_mode = False  # every Module is a root (no export call names them)

    # ================================================================ entry points
    def run(self, entries: "list[ClassInfo] | None" = None) -> None:
        """Analyze every Module's forward (or only the ``entries``: the exported roots).  Modules
        that other modules of the file build as submodules are analyzed through those calls first,
        with the arguments their callers really pass (``blk(x, H, W)`` with shapes ``H``, ``W``);
        only the ones no caller reached are analyzed on their own, with tensor inputs."""
        self.library_mode = entries is None
        if entries is None:
            modules = [
                c for c in self.file.classes.values()
                if c.is_module() and c.find_method("forward") and not is_training_only(c) and not is_data_pipeline(c)
                and not forward_replaced(c) and not takes_a_python_object(c)
            ]
        else:
            modules = [c for c in entries if c.find_method("forward")]
        built = _submodule_classes(self.file) if entries is None else set()
        # Roots nobody builds first; then the built ones; later definitions first: a parent class
        # usually follows its parts in the file, so its call reaches them with real arguments.
        order = {id(c): i for i, c in enumerate(modules)}
        for cls in sorted(modules, key=lambda c: (id(c) in built, -order[id(c)])):
            if id(cls) not in self.reached:
                self.reached.add(id(cls))
                defining, fn = cls.find_method("forward")  # type: ignore[misc]
                self.entry_fn, self.entry_dims = fn, self.plan.dims_of(cls) if self.plan is not None else None
                self.regions = []
                begin = getattr(self.sink, "begin_root", None)
                if begin is not None:
                    begin(self)
                self.call_function(FuncRef(fn, defining.file, cls=cls, defining=defining, bound_self=True), None, entry=True)

    # ================================================================ functions
    def call_function(self, ref: FuncRef, call: "CallArgs | None", entry: bool = False) -> Val:
        params = _bind_params(ref, call, entry, self)
        key = (id(ref.node), id(ref.cls), tuple(sorted((k, v.signature()) for k, v in params.items())))
        if key in self.memo:
            return self.memo[key]
        if key in self.active or self.depth >= MAX_DEPTH:
            return Val(kinds=frozenset({TENSOR}), tags=frozenset({"maybe_tuple"}))
        done = self.results_of.setdefault((id(ref.node), id(ref.cls)), [])
        if len(done) >= MAX_CONTEXTS or self.budget <= 0:
            # Enough contexts seen for this function (or for the file): what it returned so far.
            return join(done) if done else Val(kinds=frozenset({TENSOR}), tags=frozenset({"maybe_tuple"}))
        self.budget -= 1
        self.active.add(key)
        self.depth += 1
        caller_assigning, self.assigning = self.assigning, []  # the callee's own statements
        try:
            bypass, gate = self.context_stack[-1] if self.context_stack else (None, None)
            # a helper with a precompute hook (`kwargs.pop("position_ids")`) is bypassed as a whole
            bypass = precomputed_bypass(ref.node) or bypass
            frame = Frame(ref.file, ref, dict(params), parent=ref.closure, bypass=bypass, gate=gate)
            if isinstance(ref.node, cst.Lambda):
                result = self.expr(ref.node.body, frame)
            else:
                self.block(body_statements(ref.node.body), frame)
                result = join(frame.returns) if frame.returns else const()
                if _is_generator(ref.node):
                    result = seq_of(result)
            self._analyze_uncalled_nested(frame)
        finally:
            self.depth -= 1
            self.active.discard(key)
            self.assigning = caller_assigning
        self.memo[key] = result
        done.append(result)
        return result

    def _analyze_uncalled_nested(self, frame: Frame) -> None:
        for ref in frame.nested:
            if isinstance(ref.node, cst.Lambda) and isinstance(
                ref.node.body, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString)
            ):
                continue  # `lambda: f"..."`: the message of a check, built only when it fails
            if id(ref.node) not in frame.called_nested:
                frame.called_nested.add(id(ref.node))
                self.call_function(ref, None)

    # ================================================================ statements
    def block(self, stmts: Iterable[cst.CSTNode], frame: Frame) -> bool:
        """Execute statements; False when control cannot fall through (return/raise/...)."""
        stmts = list(stmts)
        # Statements after one that may leave early (`if c: return x`) may not run: a region of their
        # own.  It is closed without try/finally (hot path): an exception leaves it open, which only
        # makes later failures count as conditional; each root starts with none.
        exited = False
        result = True
        for i, stmt in enumerate(stmts):
            if not self.stmt(stmt, frame):
                result = False
                break
            if not exited and type(stmt) in _COMPOUND and may_exit_early(stmt):
                exited = True
                self.regions.append(object())
            gate = self._gate_after(stmt, frame)
            if gate is not None:
                # `if not self.quant_mode: return x`: what follows runs only with a non-default setting
                with self._context(frame, None, gate):
                    result = self.block(stmts[i + 1 :], frame)
                break
        if exited:
            self.regions.pop()
        return result

    def _gate_after(self, stmt: cst.CSTNode, frame: Frame) -> str | None:
        if not (self.library_mode and isinstance(stmt, cst.If) and stmt.orelse is None):
            return None
        body = body_statements(stmt.body)
        last = body[-1] if body else None
        if not (isinstance(last, cst.SimpleStatementLine) and last.body and isinstance(last.body[-1], cst.Return)):
            return None
        return config_gate(stmt.test, self._setting(frame), negated=True)

    def stmt(self, node: cst.CSTNode, frame: Frame) -> bool:
        if isinstance(node, cst.SimpleStatementLine):
            return self.block(node.body, frame)
        method = getattr(self, "s_" + type(node).__name__, None)
        if method is None:
            return True
        return method(node, frame)

    # -- simple statements
    def s_Expr(self, node: cst.Expr, frame: Frame) -> bool:
        self.expr(node.value, frame)
        return True

    def s_Assign(self, node: cst.Assign, frame: Frame) -> bool:
        self.assigning.append((node, frame.func.node))
        try:
            value = self.expr(node.value, frame)
        finally:
            self.assigning.pop()
        for t in node.targets:
            self.assign(t.target, value, frame, node, node.value)
        return True

    def _item_validates(self) -> bool:
        """Is the `.item()` being evaluated only there to be validated?  Inside a check's arguments or
        an assert; or assigned (`n = x.sum().item()`) to a name whose first use is a check: every use a
        check (both targets), or bounded before any other use under `export` (torch.export keeps the
        bounds; jit.trace has baked the number already)."""
        if self.checking > 0:
            return True
        if not self.assigning:
            return False
        uses = checked_before_use(*self.assigning[-1])  # asked only for the few `.item()` calls
        return uses == "validates" or (uses == "bounded" and self.target is not Target.TRACE)

    def s_AnnAssign(self, node: cst.AnnAssign, frame: Frame) -> bool:
        if node.value is not None:
            value = self.expr(node.value, frame)
            self.assign(node.target, value, frame, node, node.value)
        return True

    def s_AugAssign(self, node: cst.AugAssign, frame: Frame) -> bool:
        right = self.expr(node.value, frame)
        left = self.expr(node.target, frame)
        value = combine([left, right])
        if value.is_tensor and not isinstance(node.operator, cst.MatrixMultiplyAssign):
            value = broadcast_dims(value, [left, right])
        if isinstance(node.target, (cst.Name, cst.Attribute)):
            self.assign(node.target, value, frame, node, node.value)
        elif isinstance(node.target, cst.Subscript):
            self.subscript(node.target, frame, store=True)
        return True

    def s_Return(self, node: cst.Return, frame: Frame) -> bool:
        frame.returns.append(self.expr(node.value, frame) if node.value is not None else kind(NONE))
        return False

    def s_Raise(self, node: cst.Raise, frame: Frame) -> bool:
        return False

    def s_Assert(self, node: cst.Assert, frame: Frame) -> bool:
        self.checking += 1  # `assert lengths.max().item() <= slen`: the value only validates
        try:
            cond = self.expr(node.test, frame)
        finally:
            self.checking -= 1
        self.emit(ev.Branch(node.test, "assert", cond, node.test), frame)
        return True

    def s_Break(self, node: cst.Break, frame: Frame) -> bool:
        if frame.loop_exits:
            frame.loop_exits[-1].append(dict(frame.env))
        return False

    def s_Continue(self, node: cst.Continue, frame: Frame) -> bool:
        return False

    def s_Del(self, node: cst.Del, frame: Frame) -> bool:
        return True

    def s_Import(self, node: cst.Import, frame: Frame) -> bool:
        for alias in node.names:
            full = dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None else full.split(".")[0]  # type: ignore[union-attr]
            target = full if alias.asname is not None else full.split(".")[0]
            frame.env[local] = Val(ref=target)
        return True

    def s_ImportFrom(self, node: cst.ImportFrom, frame: Frame) -> bool:
        if isinstance(node.names, cst.ImportStar):
            return True
        base = frame.file._from_module(node)
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
            frame.env[local] = Val(ref=f"{base}.{name}" if base else name)
        return True

    # -- compound statements
    def s_FunctionDef(self, node: cst.FunctionDef, frame: Frame) -> bool:
        ref = FuncRef(node, frame.file, cls=frame.cls, defining=frame.func.defining, closure=frame)
        frame.nested.append(ref)
        frame.env[node.name.value] = Val(ref=ref)
        return True

    def s_ClassDef(self, node: cst.ClassDef, frame: Frame) -> bool:
        return True

    def s_If(self, node: cst.If, frame: Frame, is_elif: bool = False) -> bool:
        # `if feature_ensemble and x.shape[0] // 2 >= k:`: what follows a setting's conjunct is only
        # evaluated with a non-default setting
        leading = node.test
        while isinstance(leading, cst.BooleanOperation) and isinstance(leading.operator, cst.And):
            leading = leading.left
        lead_gate = config_gate(leading, self._setting(frame)) if self.library_mode and leading is not node.test else None
        with self._context(frame, None, lead_gate) if lead_gate is not None else contextlib.nullcontext():
            cond = self.expr(node.test, frame)
            kind = "guard" if is_guard(node) else ("elif" if is_elif else "if")
            # whether the arms make a difference matters only for a branch on an export-mode predicate (EXL060)
            differs = cond.has("mode_differs")
            inert = differs and (
                is_inert(node) or fills_default(node) or shortcut_return(node, frame) or is_check_function(frame.func.node)
                or overwritten_arm(node, frame.func.node)
            )
            self.emit(ev.Branch(node, kind, cond, node.test, inert=inert, alternatives=differs and alternative_arms(node)), frame)
        if cond.truth is not None:
            return self._if_arms(node, frame, cond)
        with self._conditional():
            return self._if_arms(node, frame, cond)

    def _conditional(self) -> "_Conditional":
        """Code that may not run on an export's path (an arm, a loop body, a handler, what follows an
        early exit): an export failure in it does not stop the path (see engine._Dispatcher)."""
        return _Conditional(self)

    def _if_arms(self, node: cst.If, frame: Frame, cond: Val) -> bool:
        truth = cond.truth  # known while exporting: only the arm export runs is analyzed
        when_true, when_false = _narrowing(node.test, frame)
        before = dict(frame.env)
        outs: list[dict[str, Val]] = []
        gated: list[dict[str, Val]] = []  # arms only a non-default constructor setting takes
        if truth is not False and not ends_in_failure(node.body):  # an error arm only builds its message
            frame.env.update(when_true)
            filled = fills_optional_input(node, frame.func.node)
            gate = config_gate(node.test, self._setting(frame)) if self.library_mode else None
            with self._context(frame, filled, gate):
                if self.block(body_statements(node.body), frame):
                    (gated if gate else outs).append(frame.env)
        frame.env = dict(before)
        if truth is not True:
            frame.env.update(when_false)
            if isinstance(node.orelse, cst.If):
                if self.s_If(node.orelse, frame, is_elif=True):
                    outs.append(frame.env)
            else:
                gate = config_gate(node.test, self._setting(frame), negated=True) if self.library_mode else None
                if isinstance(node.orelse, cst.Else):
                    with self._context(frame, None, gate):
                        if self.block(body_statements(node.orelse.body), frame):
                            (gated if gate else outs).append(frame.env)
                else:
                    (gated if gate else outs).append(frame.env)
        if not outs and not gated:
            frame.env = before
            return False
        frame.env = _join_envs(outs + gated)
        if outs and gated:
            # Dims the default setting's arm fixes stay fixed after the `if` (`if self.use_pos_embed: x =
            # x + self.pos_embed` with the default True pins x's token count); the values stay joined, for
            # the code the same non-default setting reaches later.
            default = _join_envs(outs)
            for name, value in frame.env.items():
                fixed = {t for t in default[name].tags if t.startswith("fixed:")} if name in default else set()
                if fixed - value.tags and value.is_tensor:
                    frame.env[name] = value.with_(tags=value.tags | fixed)
        return True

    def _setting(self, frame: Frame) -> Callable[[cst.BaseExpression], "tuple[str, object] | None"]:
        """Which constructor setting an operand of a test is (`self.crop_scale`, or a parameter that
        received it), with its default: read from the value's ``config:`` tag, without re-evaluating."""

        def setting(expr: cst.BaseExpression) -> "tuple[str, object] | None":
            name = dotted(expr)
            value = frame.lookup(name) if name is not None else None
            if value is None and isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" and frame.cls is not None:
                value = self.self_attribute(frame.cls, expr.attr.value, frame)
            elif value is None and isinstance(expr, cst.Attribute):
                value = self._config_read(expr, frame)
            for tag in value.tags if value is not None else ():
                if tag.startswith("config:"):
                    param, _, default = tag[len("config:"):].partition("=")
                    return param, ast.literal_eval(default)
            return None

        return setting

    @contextlib.contextmanager
    def _context(self, frame: Frame, bypass: str | None, gate: str | None) -> Iterator[None]:
        """While an arm runs: the optional input it computes (``bypass``), the non-default
        configuration it needs (``gate``); frames of the calls it makes inherit them."""
        saved = frame.bypass, frame.gate
        frame.bypass, frame.gate = bypass or frame.bypass, gate or frame.gate
        self.context_stack.append((frame.bypass, frame.gate))
        try:
            yield
        finally:
            self.context_stack.pop()
            frame.bypass, frame.gate = saved

    def s_While(self, node: cst.While, frame: Frame) -> bool:
        return self._loop(node, frame, lambda: self._while_head(node, frame))

    def _while_head(self, node: cst.While, frame: Frame) -> None:
        cond = self.expr(node.test, frame)
        self.emit(ev.Branch(node, "while", cond, node.test), frame)
        if cond.truth is False:
            raise _DeadLoop

    def s_For(self, node: cst.For, frame: Frame) -> bool:
        def head() -> None:
            element = self.iterate(node.iter, frame, node, "for")
            self.assign(node.target, element, frame, node, node.iter, announce=False)

        gate = self._empty_by_default(node.iter, frame) if self.library_mode else None
        if gate is None:
            return self._loop(node, frame, head)
        with self._context(frame, None, gate):  # `for i in range(1, self.merger_times):` with the default 1
            return self._loop(node, frame, head)

    def _empty_by_default(self, iter_node: cst.BaseExpression, frame: Frame) -> str | None:
        """A `range(...)` over constructor settings and literals that is empty with the defaults: the
        loop body needs a non-default setting.  Its description, or None."""
        if not (isinstance(iter_node, cst.Call) and dotted(iter_node.func) == "range" and 1 <= len(iter_node.args) <= 3
                and all(a.keyword is None and not a.star for a in iter_node.args) and frame.lookup("range") is None):
            return None
        setting = self._setting(frame)
        bounds, settings = [], []
        for a in iter_node.args:
            ok, value = literal(a.value)
            if not ok:
                found = setting(a.value)
                if found is None:
                    return None
                settings.append(found)
                value = found[1]
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            bounds.append(value)
        if not settings or (len(bounds) == 3 and bounds[2] == 0) or len(range(*bounds)) > 0:
            return None
        return ", ".join(describe_setting(param, default) for param, default in settings)

    def _loop(self, node: cst.For | cst.While, frame: Frame, head: Callable[[], None]) -> bool:
        entry = dict(frame.env)
        frame.loop_exits.append([])
        state = entry
        for _ in range(MAX_LOOP_ROUNDS):
            frame.env = dict(state)
            try:
                head()
            except _DeadLoop:  # `while` on a condition that is False under export
                frame.env = dict(state)
                break
            with self._conditional():
                self.block(body_statements(node.body), frame)
            new_state = _join_envs([state, frame.env])
            if _same_env(new_state, state):
                break
            state = new_state
        exits = frame.loop_exits.pop()
        frame.env = _join_envs([state] + exits)
        if node.orelse is not None:
            with self._conditional():
                self.block(body_statements(node.orelse.body), frame)
        return True

    def s_With(self, node: cst.With, frame: Frame) -> bool:
        for item in node.items:
            value = self.expr(item.item, frame)
            if item.asname is not None:
                self.assign(item.asname.name, value if value.is_tensor else UNKNOWN, frame, node, item.item, announce=False)
        return self.block(body_statements(node.body), frame)

    def s_Try(self, node: cst.Try, frame: Frame) -> bool:
        with self._conditional():  # a failure inside `try:` may be caught
            return self._try(node, frame)

    def _try(self, node: cst.Try, frame: Frame) -> bool:
        before = dict(frame.env)
        outs = []
        if self.block(body_statements(node.body), frame):
            if node.orelse is not None:
                if self.block(body_statements(node.orelse.body), frame):
                    outs.append(frame.env)
            else:
                outs.append(frame.env)
        for handler in node.handlers:
            frame.env = _join_envs([before, frame.env])
            if self.block(body_statements(handler.body), frame):
                outs.append(frame.env)
        frame.env = _join_envs(outs) if outs else before
        if node.finalbody is not None:
            self.block(body_statements(node.finalbody.body), frame)
        return bool(outs)

    s_TryStar = s_Try

    def s_Match(self, node: cst.Match, frame: Frame) -> bool:
        self.expr(node.subject, frame)
        before = dict(frame.env)
        outs = [before]
        for case in node.cases:
            frame.env = dict(before)
            if self.block(body_statements(case.body), frame):
                outs.append(frame.env)
        frame.env = _join_envs(outs)
        return True

    # ================================================================ assignment
    def assign(
        self,
        target: cst.BaseExpression,
        value: Val,
        frame: Frame,
        stmt: cst.CSTNode,
        value_node: cst.BaseExpression | None,
        announce: bool = True,
    ) -> None:
        if isinstance(target, cst.Name):
            frame.env[target.value] = self._with_step(target.value, value, frame, stmt)
        elif isinstance(target, cst.Attribute):
            name = dotted(target)
            if name is not None:
                frame.env[name] = self._with_step(name, value, frame, stmt)
            else:
                self.expr(target.value, frame)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            if announce and value.is_definite_tensor:
                self.emit(ev.Iteration(target, value, "unpacking", value_node or target), frame)
            for i, el in enumerate(elements):
                if isinstance(el, cst.StarredElement):
                    part = seq_of(element_of(value)) if value.items is None else tuple_of(value.items[i:])
                    self.assign(el.value, part, frame, stmt, None, announce=False)
                    continue
                if value.items is not None and len(value.items) == len(elements):
                    part = value.items[i]
                elif value.has("shape_seq") and any(t.startswith(("dims:", "fixed:")) for t in value.tags) and not any(
                    isinstance(e, cst.StarredElement) for e in elements
                ):
                    part = declared_axis(value, i, len(elements)) or _element(value)  # `B, C, H, W = x.shape`: dim i
                elif value.has("static_tail") and i > 0:
                    part = const()
                else:
                    part = _element(value)
                if (value.has("shape_seq") and value.items is None and part.is_shape and i == len(elements) - 1
                        and not any(isinstance(e, cst.StarredElement) for e in elements)):
                    part = part.with_(tags=part.tags | {"last_axis"})  # `B, N, head_dim = q.size()`
                self.assign(el.value, part, frame, stmt, None, announce=False)
        elif isinstance(target, cst.Subscript):
            self.subscript(target, frame, store=True)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, value, frame, stmt, value_node, announce)

    def _with_step(self, name: str, value: Val, frame: Frame, stmt: cst.CSTNode) -> Val:
        described = _describe(value)
        if described is None:
            return value
        word, k = described
        return value.add_step(Step(frame.file, stmt, name, word, k, top=top_statement(frame)))

    # ================================================================ events
    def emit(self, event: ev.Event, frame: Frame) -> None:
        if isinstance(event, ev.Branch):
            # The parts that decide the condition, outermost first: through `and` / `or` / `not`
            # to the deciding comparison, then its deciding operand.
            chain: list[cst.BaseExpression] = []
            node = event.cond_node
            while True:
                if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                    node = node.expression
                elif isinstance(node, (cst.BooleanOperation, cst.Comparison)) and id(node) in self.deciding:
                    node = self.deciding[id(node)]
                    chain.append(node)
                else:
                    break
            event.deciding = tuple(chain)
        self.sink(event, frame.file, frame)

    # ================================================================ expressions
    def expr(self, node: cst.BaseExpression, frame: Frame) -> Val:
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is None:
            return UNKNOWN
        return method(node, frame)

    def e_Name(self, node: cst.Name, frame: Frame) -> Val:
        name = node.value
        found = frame.lookup(name)
        if found is not None:
            return found
        return self.global_name(name, frame.file)

    def global_name(self, name: str, file: FileIndex) -> Val:
        if name in ("True", "False"):
            return Val(kinds=frozenset({CONST}), tags=TRUTHY if name == "True" else FALSY)
        if name == "None":
            return kind(NONE)
        if name in file.functions:
            return Val(ref=FuncRef(file.functions[name], file))
        if name in file.classes:
            return Val(ref=file.classes[name])
        if name in file.imports:
            return Val(ref=file.imports[name])
        if name in file.consts:
            return const()
        if name in _BUILTINS:
            return Val(ref=f"builtins.{name}")
        return UNKNOWN

    def e_Integer(self, node: cst.BaseExpression, frame: Frame) -> Val:
        return const()

    e_Float = e_Imaginary = e_SimpleString = e_ConcatenatedString = e_Ellipsis = e_Integer

    def e_FormattedString(self, node: cst.FormattedString, frame: Frame) -> Val:
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self.expr(part.expression, frame)
        return const()

    def e_Tuple(self, node: cst.Tuple | cst.List | cst.Set, frame: Frame) -> Val:
        items: list[Val] = []
        star = False
        for el in node.elements:
            v = self.expr(el.value, frame)
            if isinstance(el, cst.StarredElement):
                star = True
                if v.is_definite_tensor:
                    self.emit(ev.Iteration(el, v, "*-unpacking", el.value), frame)
                items.extend(v.items if v.items is not None else [element_of(v) if SEQ in v.kinds else _element(v)])
            else:
                items.append(v)
        tags = ("shape_seq",) if items and all(i.is_shape and SEQ not in i.kinds for i in items) else ()
        if star:
            return seq_of(join(items), *tags) if items else seq_of(UNKNOWN)
        return tuple_of(items, *tags)

    e_List = e_Set = e_Tuple

    def e_Dict(self, node: cst.Dict, frame: Frame) -> Val:
        vals = []
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                self.expr(el.key, frame)
            vals.append(self.expr(el.value, frame))
        return seq_of(join(vals)) if vals else seq_of(UNKNOWN)

    def e_BinaryOperation(self, node: cst.BinaryOperation, frame: Frame) -> Val:
        left = self.expr(node.left, frame)
        right = self.expr(node.right, frame)
        if isinstance(node.operator, (cst.Add, cst.Multiply)) and (SEQ in left.kinds or SEQ in right.kinds):
            if "shape_seq" in left.tags and "shape_seq" in right.tags:
                return seq_of(kind(SHAPE), "shape_seq", prov=merge_prov([left, right]))
            if isinstance(node.operator, cst.Multiply) and isinstance(node.left if SEQ in left.kinds else node.right, (cst.List, cst.Tuple)):
                seq = left if SEQ in left.kinds else right
                return seq_of(element_of(seq), *(seq.tags & {"shape_seq"}), prov=seq.prov)  # `[v] * n`: n copies of v
        tags = frozenset()
        if isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and (left.has("bool") or right.has("bool")):
            tags = frozenset({"bool"})
        result = combine([left, right], tags)
        if result.is_tensor and not isinstance(node.operator, cst.MatrixMultiply):
            result = broadcast_dims(result, [left, right])
        if result.is_shape and not result.is_data and _makes_float(node):
            root = {"root"} if isinstance(node.operator, cst.Power) else set()
            return result.with_(tags=result.tags | {"float"} | root)  # `h / s`, `h ** 0.5`: a float of sizes
        return result

    def e_UnaryOperation(self, node: cst.UnaryOperation, frame: Frame) -> Val:
        v = self.expr(node.expression, frame)
        if isinstance(node.operator, cst.Not):
            truth = v.truth
            tags = v.tags - {"truthy", "falsy"}
            if truth is not None:
                tags |= FALSY if truth else TRUTHY
            kinds = frozenset({CONST}) if v.kinds <= {NONE, SEQ} else v.kinds - {SEQ}
            return v.with_(items=None, elem=None, ref=None, tags=tags, kinds=kinds)
        return v

    def e_BooleanOperation(self, node: cst.BooleanOperation, frame: Frame) -> Val:
        left = self.expr(node.left, frame)
        is_and = isinstance(node.operator, cst.And)
        known = left.truth
        if known is (not is_and):
            return left  # `self.training and …` in eval mode: the right side never runs
        if known is None:
            with self._conditional():  # short-circuit: the right side may not run
                right = self.expr(node.right, frame)
        else:
            right = self.expr(node.right, frame)
        if known is not None:
            return right  # the left side is known and does not decide
        out = join([left, right])
        if right.truth is (not is_and):  # `… or not self.training` is True, `… and False` False
            out = out.with_(tags=out.tags | (TRUTHY if not is_and else FALSY))
        if is_and and out.is_data and (left.has("dtype_test") or right.has("dtype_test")):
            out = out.with_(tags=out.tags | {"dtype_gated"})  # `x.dtype == torch.float16 and …`
        self.deciding[id(node)] = node.left if _rank(left) >= _rank(right) else node.right
        return out

    def e_Comparison(self, node: cst.Comparison, frame: Frame) -> Val:
        operands = [self.expr(node.left, frame)]
        identity = True
        for target in node.comparisons:
            operands.append(self.expr(target.comparator, frame))
            if not isinstance(target.operator, (cst.Is, cst.IsNot)):
                identity = False
        if identity:
            # `x is None` never depends on data; it is known when x is known to be None
            if len(operands) == 2 and isinstance(node.comparisons[0].comparator, cst.Name) and node.comparisons[0].comparator.value == "None":
                is_none = True if operands[0].kinds == frozenset({NONE}) and operands[0].truth is False else None
                if _never_none(operands[0]):
                    is_none = False  # `if max_len is None:` when every caller passes a size: never taken
                if is_none is not None:
                    is_not = isinstance(node.comparisons[0].operator, cst.IsNot)
                    return Val(kinds=frozenset({CONST}), tags=TRUTHY if is_none != is_not else FALSY)
            return const()
        if isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString)) and all(
            isinstance(t.operator, (cst.In, cst.NotIn)) for t in node.comparisons
        ):
            return const()  # `"boxes" in target`: a key test
        if any(o.has("random") for o in operands):
            return const()  # `if torch.rand(1) < p:` is data augmentation
        if any(isinstance(n, cst.Attribute) and n.attr.value == "dtype" for n in [node.left] + [t.comparator for t in node.comparisons]):
            return Val(kinds=frozenset({CONST}), tags=frozenset({"dtype_test"}))
        if len(operands) == 2 and isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)) and any(
            o.has("declared_dim") for o in operands
        ) and any(o.kinds == frozenset({CONST}) for o in operands):
            return kind(SHAPE, "pins_dim", prov=merge_prov(operands))  # `H == 224` on a declared dynamic dim
        if _fixed_size_dispatch(node, operands):
            return const()  # `if reference_points.shape[-1] == 4:` dispatches on a fixed-by-design dim
        if _relates_dims(node, operands):
            # `if mask.shape[0] == x.shape[0]:` / `if a.shape != b.shape:`: torch.export keeps the example's
            # relation between the two sizes as a guard and both stay dynamic (measured, p27c)
            return kind(SHAPE, "relates_dims", prov=merge_prov(operands))
        if _tests_zero_one(node, operands):
            # `if seq_len == 1:` on a dim read from a tensor: torch.export takes dynamic dims to be >= 2
            # (0/1 specialisation), so it decides the test for every size with no guard (measured, p1)
            return kind(SHAPE, "size_ge2", prov=merge_prov(operands))
        # Comparisons of dtypes/devices/strings are config even when one side came from a tensor.
        live = [o for o in operands if o.kinds - {NONE}]
        result = combine(live)
        if live:
            nodes = [node.left] + [t.comparator for t in node.comparisons]
            self.deciding[id(node)] = max(zip(nodes, operands), key=lambda p: _rank(p[1]))[0]
        extra = {t for o in operands for t in o.tags if t.startswith("export_mode") or t == "mode_differs"}
        if result.is_tensor and result.has("const_tensor"):
            return const()  # comparing constants
        if result.is_tensor:
            extra.add("bool")
            result = result.with_(tags=result.tags - {"size_tensor", "scalar"})
        return result.with_(tags=result.tags | frozenset(extra)) if extra else result

    def e_IfExp(self, node: cst.IfExp, frame: Frame) -> Val:
        cond = self.expr(node.test, frame)
        same = known_false(node.body) and known_false(node.orelse)  # `False if compiling else is_deepspeed…()`
        # two expressions for one value, unless they are different literals (`1 if compiling() else 2`)
        literals = [literal(a) for a in (node.body, node.orelse)]
        differ = all(ok for ok, _ in literals) and literals[0][1] != literals[1][1]
        self.emit(ev.Branch(node.test, "ifexp", cond, node.test, inert=same, alternatives=not differ), frame)
        if cond.truth is not None:
            return self.expr(node.body if cond.truth else node.orelse, frame)
        with self._conditional():
            body, orelse = self.expr(node.body, frame), self.expr(node.orelse, frame)
        if self.library_mode and body.kinds <= {CONST, NONE} and orelse.kinds <= {CONST, NONE}:
            # a setting chosen by settings (`output_attentions if output_attentions is not None else
            # self.config.output_attentions`): the defaults' choice, so the setting it reads gates later code
            for gate, chosen, arm in ((gating_setting(node.test, self._setting(frame)), orelse, node.orelse),
                                      (gating_setting(node.test, self._setting(frame), negated=True), body, node.body)):
                if gate is None:
                    continue
                ok, value = literal(arm)
                if ok and not any(t.startswith("config:") for t in chosen.tags):
                    # `feature_ensemble if feature_ensemble is not None else False`: the setting's
                    # value by default, not a known truth (a caller may pass True)
                    return Val(kinds=chosen.kinds, tags=frozenset({config_tag(gate[0], value)}))
                return chosen
        return join([body, orelse])

    def e_NamedExpr(self, node: cst.NamedExpr, frame: Frame) -> Val:
        v = self.expr(node.value, frame)
        self.assign(node.target, v, frame, node, node.value, announce=False)
        return v

    def e_Await(self, node: cst.Await, frame: Frame) -> Val:
        return self.expr(node.expression, frame)

    def e_Lambda(self, node: cst.Lambda, frame: Frame) -> Val:
        ref = FuncRef(node, frame.file, cls=frame.cls, defining=frame.func.defining, closure=frame)
        frame.nested.append(ref)
        return Val(ref=ref)

    # -- comprehensions
    def _comprehension(self, node: cst.BaseComp, frame: Frame, elt: Callable[[Frame], Val]) -> Val:
        inner = Frame(
            frame.file, frame.func, {}, parent=frame, nested=frame.nested, called_nested=frame.called_nested,
            bypass=frame.bypass, gate=frame.gate,
        )
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            element = self.iterate(comp.iter, inner, comp, "comprehension")
            self.assign(comp.target, element, inner, comp, comp.iter, announce=False)
            for cond in comp.ifs:
                c = self.expr(cond.test, inner)
                self.emit(ev.Branch(cond.test, "comprehension-if", c, cond.test), inner)
            comp = comp.inner_for_in
        return elt(inner)

    def e_ListComp(self, node: cst.ListComp, frame: Frame) -> Val:
        return seq_of(self._comprehension(node, frame, lambda f: self.expr(node.elt, f)))

    e_SetComp = e_GeneratorExp = e_ListComp

    def e_DictComp(self, node: cst.DictComp, frame: Frame) -> Val:
        def elt(f: Frame) -> Val:
            self.expr(node.key, f)
            return self.expr(node.value, f)

        return seq_of(self._comprehension(node, frame, elt))

    # -- iteration
    def iterate(self, iter_node: cst.BaseExpression, frame: Frame, anchor: cst.CSTNode, how: str) -> Val:
        """The element value of ``for _ in iter_node`` (emitting the loop events)."""
        if isinstance(iter_node, cst.Call) and dotted(iter_node.func) == "range" and frame.lookup("range") is None:
            counts = [(a.value, self.expr(a.value, frame)) for a in iter_node.args]
            self.emit(ev.CountedLoop(anchor, counts), frame)
            return const()  # a loop counter never carries data
        value = self.expr(iter_node, frame)
        if value.is_definite_tensor:
            self.emit(ev.Iteration(anchor, value, how, iter_node), frame)
        return _element(value)

    # -- attributes
    def e_Attribute(self, node: cst.Attribute, frame: Frame) -> Val:
        name = dotted(node)
        if name is not None:
            local = frame.lookup(name)
            if local is not None:
                return local
        field_value = self._config_read(node, frame)
        if field_value is not None:
            return field_value
        base = self.expr(node.value, frame)
        return self.attribute(base, node.attr.value, frame)

    def _config_read(self, node: cst.Attribute, frame: Frame) -> Val | None:
        """`self.config.output_attentions` of `self.config = config` (an `__init__` parameter): a
        setting with the configuration class's default (library code only), else None."""
        obj = node.value
        if not (self.library_mode and frame.cls is not None and isinstance(obj, cst.Attribute)
                and isinstance(obj.value, cst.Name) and obj.value.value == "self"):
            return None
        key = (id(frame.cls), f"{obj.attr.value}.{node.attr.value}")
        if key not in self._attr_cache:
            setting = constructor_default(frame.cls, obj.attr.value, node.attr.value)
            self._attr_cache[key] = None if setting is None else Val(
                kinds=frozenset({CONST}), tags=frozenset({config_tag(*setting)})
            )
        return self._attr_cache[key]

    def attribute(self, base: Val, attr: str, frame: Frame) -> Val:
        if isinstance(base.ref, str):  # a module path: torch.float32, math.pi, np.newaxis
            return Val(ref=f"{base.ref}.{attr}")
        if isinstance(base.ref, SelfRef):
            return self.self_attribute(base.ref.cls, attr, frame)
        if isinstance(base.ref, ClassInfo):
            if attr in base.ref.method_names:
                return Val(ref=FuncRef(base.ref.methods[attr], base.ref.file, cls=base.ref, defining=base.ref))
            return const() if attr in base.ref.class_consts else Val(ref=(base.ref, attr))
        if base.is_tensor:
            if attr == "shape":
                return shape_seq_of(base)
            if attr == "ndim":
                return const()  # the rank: no exporter has a dynamic rank
            if attr in api.CONST_ATTRS:
                return const()
            if attr in api.TENSOR_ATTRS:
                return base.with_(tags=base.tags - {"size_tensor"} if attr == "grad" else base.tags)
            if base.has("maybe_tuple"):
                if attr in api.LAYER_CONFIG_ATTRS:
                    return const()  # `layer.padding[0]` of a layer nothing identified: its configuration
                return kind(TENSOR, "maybe_tuple", prov=base.prov)  # e.g. outputs.last_hidden_state
            return Val(ref=(base, attr))  # a bound tensor method
        if isinstance(base.ref, Instance):
            return self.self_attribute(base.ref.cls, attr, frame)  # self.model.backbone, self.head.predict(...)
        if base.has("module") or base.has("modlist"):
            return Val(tags=frozenset({"module"}))
        if base.has("tensor_seq") and attr in api.NAMED_TUPLE_FIELDS:
            return element_of(base)  # x.max(-1).values, x.topk(k).indices
        if base.has("opaque") and attr == "shape":
            return seq_of(kind(SHAPE), "shape_seq").with_(kinds=frozenset({SEQ, SHAPE}))
        return UNKNOWN

    def self_attribute(self, cls: ClassInfo, attr: str, frame: Frame) -> Val:
        if attr == "training" or attr in CHECKPOINTING_FLAGS:
            # models are exported in eval mode, and activation checkpointing is a training-time
            # memory trick (off at export; `checkpoint_seq(...)` arms are training-only)
            return Val(kinds=frozenset({CONST}), tags=FALSY)
        found = cls.find_method(attr)
        if found is not None:
            defining, fn = found
            static = attr in defining.staticmethods
            ref = FuncRef(fn, defining.file, cls=cls, defining=defining, bound_self=not static)
            if any(dotted(d.decorator) in ("property", "functools.cached_property", "cached_property") for d in fn.decorators):
                return self.call_function(ref, CallArgs([], {}, [], []))
            return Val(ref=ref)
        key = (id(cls), attr)
        if key not in self._attr_cache:
            value = _class_attribute(cls, attr, self)
            setting = constructor_default(cls, attr) if value.kinds <= {CONST} else None
            if setting is not None:  # `self.crop_scale = crop_scale` of `__init__(..., crop_scale=False)`
                value = value.with_(tags=value.tags | {config_tag(*setting)})
            self._attr_cache[key] = value
        return self._attr_cache[key]

    # -- subscripts
    def e_Subscript(self, node: cst.Subscript, frame: Frame) -> Val:
        return self.subscript(node, frame, store=False)

    def subscript(self, node: cst.Subscript, frame: Frame, store: bool) -> Val:
        base = self.expr(node.value, frame)
        bounds: list[tuple[cst.BaseExpression, Val]] = []
        indices: list[tuple[cst.BaseExpression, Val]] = []
        index_vals: list[Val] = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                for part in (s.lower, s.upper, s.step):
                    if part is not None:
                        bounds.append((part, self.expr(part, frame)))
            else:
                v = self.expr(s.value, frame)
                indices.append((s.value, v))
                index_vals.append(v)
        if base.is_tensor or base.has("shape_seq") or bounds or indices:
            self.emit(ev.Index(node, base, bounds, indices, store), frame)
        result = self._subscript_value(base, node, bounds, index_vals)
        if base.is_tensor and not store and any(v.has("bool") for _, v in indices):
            self.emit(ev.DataShapeOp(node, "boolean-mask indexing", base, self.checking > 0), frame)
            return with_data_shape(result)
        if base.is_tensor and any(v.has("dds_shape") for v in index_vals):
            return with_data_shape(result)
        return result

    def _subscript_value(self, base: Val, node: cst.Subscript, bounds: list, index_vals: list[Val]) -> Val:
        if SEQ in base.kinds or base.has("shape_seq"):
            if bounds:  # a slice of a sequence keeps its shape, not which axis each element was
                return base.with_(tags=frozenset(t for t in base.tags if not t.startswith(("fixed:", "dims:"))))
            if base.has("shape_seq") and base.items is None and len(node.slice) == 1:
                idx = node.slice[0].slice
                declared = declared_axis(base, literal_axis(idx.value)) if isinstance(idx, cst.Index) else None
                if declared is not None:
                    return declared
                if base.has("static_tail") and isinstance(idx, cst.Index) and literal_axis(idx.value) not in (None, 0):
                    return const()
                if isinstance(idx, cst.Index) and literal_axis(idx.value) == -1:
                    e = element_of(base)
                    return e.with_(tags=e.tags | {"last_axis"}) if e.is_shape else e
            if base.items is not None and len(index_vals) == 1 and len(node.slice) == 1:
                idx = node.slice[0].slice
                if isinstance(idx, cst.Index) and isinstance(idx.value, cst.Integer):
                    i = int(idx.value.evaluated_value)
                    if -len(base.items) <= i < len(base.items):
                        return base.items[i]
                elif isinstance(idx, cst.Index) and isinstance(idx.value, cst.UnaryOperation) and isinstance(idx.value.expression, cst.Integer):
                    i = -int(idx.value.expression.evaluated_value)
                    if -len(base.items) <= i < len(base.items):
                        return base.items[i]
            return element_of(base)
        if base.is_tensor:
            tags = base.tags - {"scalar", "bool"} | ({"bool"} if base.has("bool") else set())
            if any(isinstance(el.slice, cst.Slice) and (el.slice.lower is not None or el.slice.upper is not None or el.slice.step is not None)
                   for el in node.slice):
                tags |= {"derived_dims"}  # `kv[:, :usable]`, `x[:, 1:]`: a sliced dim may be 0 or 1
            return base.with_(tags=tags)
        if base.has("modlist"):
            return base.elem if base.elem is not None else Val(tags=frozenset({"module"}))
        return UNKNOWN

    # ================================================================ calls
    def e_Call(self, node: cst.Call, frame: Frame) -> Val:
        func = node.func
        if isinstance(func, cst.Name) and func.value in api.CONVERTERS and node.args:
            inner = node.args[0].value  # `int(t.item())`: the `.item()` is read to be converted
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "item":
                self.converted_items.add(id(inner))
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "round":
                self.converted_items.add(id(inner))  # `int(round(h / 2))`: the int() is what specialises
        name = (dotted(func) or "").rsplit(".", 1)[-1]
        if name in api.VALIDATING_CALLS:
            self.checking += 1  # torch._check(n.item() > 0): the values only validate
            try:
                args = CallArgs.evaluate(node, self, frame)
            finally:
                self.checking -= 1
        else:
            args = CallArgs.evaluate(node, self, frame)
        # Method call on a value: x.item(), self.helper(x), super().forward(x)
        if isinstance(func, cst.Attribute):
            qual_local = dotted(func)
            receiver = frame.lookup(qual_local) if qual_local is not None else None
            if receiver is None:
                receiver = self.expr(func.value, frame)
                return self.call_attribute(node, receiver, func, args, frame)
            callee = receiver
        else:
            callee = self.expr(func, frame)
        return self.call_value(node, callee, args, frame)

    def call_attribute(self, node: cst.Call, receiver: Val, func: cst.Attribute, args: "CallArgs", frame: Frame) -> Val:
        name = func.attr.value
        if isinstance(receiver.ref, str):
            return self.call_qualified(node, f"{receiver.ref}.{name}", args, frame)
        if isinstance(receiver.ref, SuperRef):
            found = receiver.ref.cls.find_method(name, after=receiver.ref.after)
            if found is None:
                return Val(kinds=frozenset({TENSOR}), tags=frozenset({"maybe_tuple"})) if args.has_tensor() else UNKNOWN
            defining, fn = found
            ref = FuncRef(fn, defining.file, cls=receiver.ref.cls, defining=defining, bound_self=True)
            return self.call_function(ref, args)
        if isinstance(receiver.ref, ClassInfo) and name == "apply":
            if receiver.ref.is_autograd_function():
                self.emit(ev.AutogradApply(node, receiver.ref), frame)
                # The exporters inline the Function's forward: it is export code.
                found = receiver.ref.find_method("forward")
                if found is not None:
                    defining, fn = found
                    inner = CallArgs([UNKNOWN] + args.positional, args.keywords, [node] + args.nodes, args.kw_nodes)
                    self.call_function(FuncRef(fn, defining.file), inner)
                return kind(TENSOR, "maybe_tuple", prov=args.prov())
        if isinstance(receiver.ref, (SelfRef, ClassInfo)):
            callee = self.attribute(receiver, name, frame)
            return self.call_value(node, callee, args, frame)
        if (
            receiver.is_tensor
            and receiver.has("maybe_tuple")
            and name not in TENSOR_EVIDENCE
            and name not in api.CONTAINER_METHODS
            and not isinstance(receiver.ref, str)
        ):
            # `past_key_values.get_seq_length()`: a method tensors do not have, on a value that may
            # be another object (a cache, a config, a model output): nothing is known of the result.
            return OPAQUE
        if receiver.is_tensor or (receiver.has("opaque") and name in api.TENSOR_ONLY_METHODS):
            return self.tensor_method(node, receiver.with_(kinds=receiver.kinds | {TENSOR}, tags=receiver.tags | {"maybe_tuple"}), func.value, name, args, frame)
        self._device_call(node, name, args, frame)
        if receiver.has("module") or receiver.has("modlist"):
            return kind(TENSOR, "maybe_tuple", prov=args.prov()) if args.has_tensor() else UNKNOWN
        if SEQ in receiver.kinds:
            if name in ("index", "count"):
                return const()
            if name == "pop":
                return element_of(receiver)
            if name in ("append", "extend", "insert"):
                self._grow_sequence(func.value, receiver, args, frame)
            return UNKNOWN
        if receiver.is_dds:
            return kind(DDS, prov=receiver.prov)
        if receiver.is_shape:
            return kind(SHAPE, prov=receiver.prov)
        return UNKNOWN

    def _grow_sequence(self, target: cst.BaseExpression, seq: Val, args: "CallArgs", frame: Frame) -> None:
        name = dotted(target)
        if name is None or not args.positional:
            return
        added = args.positional[-1]
        new_elem = join([element_of(seq), added]) if (seq.items or seq.elem is not None) else added
        if frame.lookup(name) is not None:
            frame.env[name] = seq_of(new_elem, prov=seq.prov)

    def call_value(self, node: cst.Call, callee: Val, args: "CallArgs", frame: Frame) -> Val:
        ref = callee.ref
        if isinstance(ref, FuncRef):
            if ref.closure is frame or (ref.closure is not None and ref in frame.nested):
                frame.called_nested.add(id(ref.node))
            if ref.closure is not None:
                ref.closure.called_nested.add(id(ref.node))
            return self.call_function(ref, args)
        if isinstance(ref, str):
            return self.call_qualified(node, ref, args, frame)
        if isinstance(ref, ClassInfo):
            return _module_val(ref) if ref.is_module() else UNKNOWN
        if callee.has("module"):
            return self.call_module(callee, args, node, frame)
        if isinstance(ref, tuple) and len(ref) == 2 and isinstance(ref[0], Val):
            return self.tensor_method(node, ref[0], node.func, ref[1], args, frame)
        if callee.is_tensor:
            return kind(TENSOR, "maybe_tuple", prov=args.prov())
        return OPAQUE if args.has_tensor() else UNKNOWN

    def call_module(self, module: Val, args: "CallArgs", node: cst.Call | None = None, frame: Frame | None = None) -> Val:
        """``self.block(x)``: the submodule's forward, analyzed with the arguments passed here."""
        prov = args.prov()
        if isinstance(module.ref, LibraryModule) and node is not None and frame is not None:
            self.emit(ev.ModuleCall(node, module.ref.qual, module.ref.ctor, module.ref.file), frame)
        if module.has("modlist") and module.elem is not None and isinstance(module.elem.ref, ModuleRef):
            return self.call_module(module.elem, args, node, frame)  # nn.Sequential(*[Block(...) ...])
        if isinstance(module.ref, Alternatives):
            # `self.attn = GPSA(...) if use_gpsa else MHSA(...)`: each, with the arguments passed here
            return join([self.call_module(Val(kinds=module.kinds, tags=module.tags, ref=o), args, node, frame) for o in module.ref.options])
        if module.has("tensor_module"):
            qual = module.ref.qual if isinstance(module.ref, LibraryModule) else ""
            fixed = layer_fixed_axis(qual)
            tags: set[str] = {f"fixed:{fixed}"} if fixed is not None else set()
            layer = qual.rsplit(".", 1)[-1]
            if layer.startswith(api.RESIZING_LAYERS):
                tags.add("derived_dims")  # self.pool(x), self.conv(x): strided spatial dims may be 1
            if (layer in ELEMENTWISE_LAYERS or layer in NORM_LAYERS or fixed == -1) and args.positional:
                # self.act(x), self.norm(x): x's shape; self.fc(x): all but the last dim
                tags |= {t for t in args.positional[0].tags if t.startswith(("fixed:", "dims:", "rank:"))}
            if args.positional and args.positional[0].has("dds_shape"):
                tags.add("dds_shape")  # a layer keeps its input's batch: the rows a mask selected
            return kind(TENSOR, *tags, prov=prov)
        if isinstance(module.ref, Instance):
            cls = module.ref.cls
            found = cls.find_method("forward") if not forward_replaced(cls) else None
            if found is not None:
                defining, fn = found
                self.reached.add(id(cls))
                result = self.call_function(FuncRef(fn, defining.file, cls=cls, defining=defining, bound_self=True), args)
                if result.is_definite_tensor:
                    kept = {t for t in result.tags if t in ("bool", "scalar", "dds_shape") or t.startswith(("fixed:-", "rank:"))}
                    return kind(TENSOR, *kept, prov=prov)
                if result.items is not None:
                    return tuple_of([i.with_(prov=prov) if i.is_tensor else i for i in result.items])
        if not args.has_tensor():
            return UNKNOWN
        return kind(TENSOR, "maybe_tuple", prov=prov)

    # -- qualified functions (torch.*, numpy.*, math.*, builtins, other linted files)
    def call_qualified(self, node: cst.Call, qual: str, args: "CallArgs", frame: Frame) -> Val:
        if qual.startswith("builtins."):
            return self.call_builtin(node, qual[len("builtins."):], args, frame)
        if qual.startswith("torch."):
            return self.call_torch(node, qual, args, frame)
        root = qual.split(".")[0]
        predicate = api.resolve_predicate(qual)
        if predicate is not None:
            return self.predicate(predicate)
        if qual.rsplit(".", 1)[-1] in api.CHECK_FUNCS:
            self.mark_checked(node, frame)
        if _library_data_shape(qual) and frame.file.resolve_function(qual) is None:
            return self.library_data_shape(node, qual, args, frame)  # not linted: what it is known to do
        if root in api.MATH_ROOTS:
            if ".random" in qual or root == "random":
                return Val(kinds=frozenset({CONST}), tags=frozenset({"random"}))
            self.emit(ev.FunctionCall(node, qual, args.positional, args.keywords, args.nodes), frame)
            result = combine(args.all())
            if result.is_tensor:
                return kind(DDS, prov=result.prov)
            if result.is_shape and not result.is_data and args.positional:
                shaped = [(v, n) for v, n in zip(args.positional, args.nodes) if v.is_shape]
                value, operand = shaped[0] if shaped else (result, node)
                form = f"{root}.{qual.rsplit('.', 1)[-1]}()" if root == "math" else f"{root}()"
                return self.shape_conversion(node, form, result.with_(tags=result.tags | (value.tags & {"float"})), operand, frame)
            return result if result.kinds else const()
        found = frame.file.resolve_function(qual)
        if found is not None:
            fi, fn = found
            return self.call_function(FuncRef(fn, fi), args)
        cls = frame.file.project.find_class(qual) if frame.file.project is not None else None
        if cls is not None:
            return self.call_value(node, Val(ref=cls), args, frame)
        last = qual.rsplit(".", 1)[-1]
        if args.has_tensor() and not last[:1].isupper():
            return OPAQUE  # e.g. einops.rearrange(x, ...) or F.get_image_size(img): could be anything
        if last[:1].isupper():
            return Val(tags=frozenset({"module"}))
        return UNKNOWN

    def shape_conversion(self, node: cst.Call, form: str, value: Val, operand: cst.BaseExpression, frame: Frame) -> Val:
        """A shape value leaves symbolic integer arithmetic (``int(h)``, ``math.sqrt(n)``): the
        exporters of this target either keep it symbolic or fix it to the example's value."""
        folded = _read_without_data(value)
        if folded is not None:
            return folded
        fixed = api.specialises(form, "float" in value.tags, self.target.value)
        self.emit(ev.ShapeConversion(node, form, value, operand, fixed), frame)
        if fixed:
            # a float of sizes (`float(w0)`, `math.sqrt(n)`) stays marked: reaching a `scale_factor` it
            # is worse than the conversion itself (the program is pinned, ONNX dynamo wrong: p03, p04)
            floats = {"specialised_float"} if form in api.FLOAT_FORMS else set()
            prov = value.prov if floats else ()
            return Val(kinds=frozenset({CONST}), tags=frozenset({"specialised"} | floats), prov=prov)
        return value.with_(items=None, elem=None, ref=None, tags=value.tags - {"shape_seq", "float"}, kinds=value.kinds - {SEQ})

    def library_data_shape(self, node: cst.Call, qual: str, args: "CallArgs", frame: Frame) -> Val:
        """``torchvision.ops.nms(...)`` & co.: a tensor whose size depends on data."""
        self.emit(ev.DataShapeOp(node, qual, args.positional[0] if args.positional else None, self.checking > 0), frame)
        return kind(TENSOR, "dds_shape", prov=args.prov())

    def predicate(self, qual: str) -> Val:
        """An is-exporting predicate: its value under this target's exporters, when they agree."""
        value = api.predicate_value(qual, self.target.value)
        tags = {"export_mode", f"export_mode:{qual}"}
        if value is not False:
            tags.add("mode_differs")  # eager sees False: the artifact can run the other arm
        if value is not None:
            tags.add("truthy" if value else "falsy")
        return Val(kinds=frozenset({CONST}), tags=frozenset(tags))

    def mark_checked(self, node: cst.Call, frame: Frame) -> None:
        """``torch._check(n <= x.shape[0])``: the data-dependent names in the condition are bounded."""
        if not node.args:
            return
        names: list[str] = []

        class V(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                names.append(n.value)

            def visit_Lambda(self, n: cst.Lambda) -> bool:
                return False

        node.args[0].value.visit(V())
        for name in names:
            v = frame.env.get(name)
            if v is not None and v.is_dds:
                frame.env[name] = v.with_(tags=v.tags | {"checked"})

    def call_torch(self, node: cst.Call, qual: str, args: "CallArgs", frame: Frame) -> Val:
        result = self._call_torch(node, qual, args, frame)
        spec = api.SIZE_FUNCS.get(qual)
        if spec is not None and qual in api.FACTORY_FUNCS:  # torch.zeros(2, n): the constant dims are fixed
            result = sized_dims(result, *spec, args.positional, args.nodes, args.keywords, dict(args.kw_nodes))
        if result.is_tensor and ((qual in api.FACTORY_FUNCS or spec is not None) and derived_sizes(args.all())
                                 or qual.rsplit(".", 1)[-1] in api.RESIZING_OPS):
            result = result.with_(tags=result.tags | {"derived_dims"})  # torch.arange(n // 2), F.max_pool2d(x, 2)
        return result

    def _call_torch(self, node: cst.Call, qual: str, args: "CallArgs", frame: Frame) -> Val:
        if qual.rsplit(".", 1)[-1] in api.CHECK_FUNCS:
            self.mark_checked(node, frame)
        self.emit(ev.FunctionCall(node, qual, args.positional, args.keywords, args.nodes), frame)
        self._device_call(node, None, args, frame)
        last = qual.rsplit(".", 1)[-1]
        predicate = api.resolve_predicate(qual)
        if predicate is not None:
            return self.predicate(predicate)
        if qual in ("torch.sym_int", "torch.sym_float") and args.positional and args.positional[0].is_shape and not args.positional[0].is_data:
            # symbolic under torch.export; jit.trace bakes it like int() (measured, p05b)
            return self.shape_conversion(node, qual[len("torch."):] + "()", args.positional[0], node.args[0].value, frame)
        if qual in api.NON_TENSOR_FUNCS or qual.startswith(api.NON_TENSOR_PREFIXES) or last.startswith(api.PREDICATE_PREFIXES):
            return const()
        if qual == "torch.numel":
            return kind(SHAPE, prov=args.prov())
        if qual == "torch.Size":
            return seq_of(kind(SHAPE), "shape_seq").with_(kinds=frozenset({SEQ, SHAPE}))
        if qual.startswith("torch.nn.") and not qual.startswith("torch.nn.functional.") and last[:1].isupper():
            return Val(tags=frozenset({"module"}))
        if qual in ("torch.jit.annotate", "torch.jit._unwrap_optional") and args.positional:
            return args.positional[-1]
        if _library_data_shape(qual):
            return self.library_data_shape(node, qual, args, frame)
        if qual.startswith("torch.ops."):
            return kind(TENSOR, "maybe_tuple", prov=args.prov())  # a custom op: a tensor or a tuple
        if qual in api.CALL_THROUGH_FUNCS and args.positional:
            # checkpoint(fn, *args): what fn(*args) returns
            inner = CallArgs(args.positional[1:], {k: v for k, v in args.keywords.items() if k != "use_reentrant"}, args.nodes[1:], [])
            return self.call_value(node, args.positional[0], inner, frame)
        self._size_and_slice_args(node, qual, None, args, frame)
        data_shape = last in api.DATA_SHAPE_OPS or (last == "where" and len(args.positional) == 1 and not args.keywords)
        if data_shape and args.positional and args.positional[0].has("const_tensor"):
            data_shape = False  # of a constant tensor: a constant
        if data_shape:
            self.emit(ev.DataShapeOp(node, f"torch.{last}", args.positional[0] if args.positional else None, self.checking > 0), frame)
        if last == "repeat_interleave":
            if "repeats" in args.keywords:
                repeats = args.keywords["repeats"]
            else:  # torch.repeat_interleave(repeats) or (input, repeats, dim)
                repeats = args.positional[0] if len(args.positional) == 1 else args.get(1, "repeats")
            if repeats is not None and repeats.is_tensor:
                data_shape = True
                self.emit(ev.DataShapeOp(node, "torch.repeat_interleave", repeats, self.checking > 0), frame)
        result = self._torch_result(qual, last, args)
        if data_shape or (any(v.has("dds_shape") for v in args.all()) and not result.has("scalar")) or _sized_by_data(
                api.SIZE_FUNCS.get(qual) or (("all", ("size",)) if qual in api.FACTORY_FUNCS else None), args):
            return with_data_shape(result)
        return result

    def _torch_result(self, qual: str, last: str, args: "CallArgs") -> Val:
        prov = args.prov()
        if last in api.RANDOM_FUNCS:
            return kind(TENSOR, "random", prov=prov)
        if qual in api.TENSOR_CTORS:
            data = args.positional[0] if args.positional else args.keywords.get("data")
            if data is not None and data.kinds and not data.contains(lambda v: (v.is_data or v.is_shape) and not v.has("const_tensor")):
                return kind(TENSOR, "const_tensor", "param")  # torch.tensor(0.5), torch.tensor([c, 2.0]): a constant
            sized = data is not None and data.carries_runtime_values
            return kind(TENSOR, *(("size_tensor",) if sized else ()), prov=prov)
        if qual in api.STACK_FUNCS:
            parts = args.positional[0] if args.positional else args.keywords.get("tensors", UNKNOWN)
            sized = parts.contains(lambda v: v.has("size_tensor") or (v.is_shape and not v.is_tensor))
            result = kind(TENSOR, *(("size_tensor",) if sized else ()), prov=prov)
            if last in ("cat", "concat", "concatenate") and parts.items is not None and not sized:
                dim_node = dict(args.kw_nodes).get("dim") or (args.nodes[1] if len(args.nodes) > 1 else None)
                ok, value = literal(dim_node) if dim_node is not None else (True, 0)
                if ok and isinstance(value, int):
                    result = cat_dims(result, list(parts.items), value)  # torch.cat((cls, x), dim=1)
            return result
        if _returns_tuple(last, args, method=False):
            return split_parts(last, args.get(1, "split_size_or_sections"), prov)
        if last == "where" and len(args.positional) == 1:
            return seq_of(kind(TENSOR, prov=prov), "tensor_seq")
        if last in api.FULL_REDUCTIONS and len(args.positional) <= 1 and "dim" not in args.keywords:
            return kind(TENSOR, "scalar", prov=prov)
        if last in api.BOOL_FUNCS:
            return kind(TENSOR, "bool", prov=prov)
        tensors = [v for v in args.all() if v.is_tensor]
        if not tensors and qual not in api.FACTORY_FUNCS and any(v.is_shape for v in args.all()) and not any(v.is_dds for v in args.all()):
            # `torch.div(seq_len, w, rounding_mode="trunc")`: a 0-d tensor computed from sizes only; the
            # exporters keep it symbolic (torch.export) or traced (jit.trace) where it is used as a size
            return kind(TENSOR, "scalar", "from_sizes", prov=prov)
        sized = bool(tensors) and all(v.has("size_tensor") for v in tensors)
        if all(v.has("const_tensor") for v in tensors) and all(v.kinds <= {CONST, NONE} or v.has("const_tensor") for v in args.all()):
            return kind(TENSOR, "const_tensor", "param")  # torch.log2(torch.tensor(2.0)), torch.arange(4)
        return kind(TENSOR, *(("size_tensor",) if sized else ()), prov=prov)

    def call_builtin(self, node: cst.Call, name: str, args: "CallArgs", frame: Frame) -> Val:
        first = args.positional[0] if args.positional else UNKNOWN
        first_node = node.args[0].value if node.args else node
        folded = _read_without_data(first) if name in api.CONVERTERS or name == "round" else None
        if folded is not None:
            return folded
        if name in api.CONVERTERS or (name == "round" and first.is_shape):
            self.emit(ev.FunctionCall(node, name, args.positional, args.keywords, args.nodes), frame)
            if first.is_shape and not first.is_data:
                if name == "round" and id(node) in self.converted_items and self.target is not Target.TRACE:
                    # torch.export keeps `round(h / 2)` symbolic (p-round); the `int()` around it then
                    # specialises like `int(h)` (audit round 9), and is reported as that
                    return first.with_(tags=first.tags - {"float"})
                return self.shape_conversion(node, f"{name}()", first, first_node, frame)
            if first.is_tensor:
                tags = ("size_tensor",) if first.has("size_tensor") else ()
                return kind(DDS, *tags, prov=first.prov + (_source_step(frame, node),))
            if first.kinds:
                return first.with_(items=None, elem=None, ref=None, tags=first.tags - {"shape_seq"}, kinds=first.kinds - {SEQ})
            return const()
        if name == "len":
            if first.is_tensor and first.has("maybe_tuple"):
                return UNKNOWN  # the length of a tuple, or of a tensor's first dim: can't tell
            if first.is_definite_tensor and size_kind(first) == SHAPE:
                # `__len__` must return a Python int: like int(x.shape[0]) (measured, p18a)
                return self.shape_conversion(node, "len()", kind(SHAPE, prov=first.prov), first_node, frame)
            if first.is_tensor:
                return kind(size_kind(first), prov=first.prov)
            if first.has("shape_seq"):
                return const()  # len(x.shape): the rank
            if first.is_shape:
                return kind(SHAPE, prov=first.prov)
            return const()
        if name == "super":
            cls = frame.func.defining or frame.cls
            if cls is not None and frame.cls is not None:
                return Val(ref=SuperRef(frame.cls, cls))
            return UNKNOWN
        if name in ("isinstance", "issubclass", "hasattr", "callable", "id", "type", "print", "repr", "str", "format", "setattr", "vars", "locals", "globals", "dir", "hash"):
            return const()
        if name == "getattr":
            if isinstance(first.ref, SelfRef) and len(node.args) >= 2 and isinstance(node.args[1].value, cst.SimpleString):
                attr = node.args[1].value.evaluated_value
                if isinstance(attr, str):
                    return self.self_attribute(first.ref.cls, attr, frame)
            if isinstance(first.ref, SelfRef):
                return Val(tags=frozenset({"module"}))
            return UNKNOWN
        if name in ("min", "max") and len(args.positional) == 1 and not args.keywords.get("key"):
            element = self._iterate_value(first, first_node, node, f"{name}()", frame)
            return element
        if name in ("min", "max", "abs", "round", "divmod", "pow"):
            return combine(args.all())
        if name == "sum":
            return combine([self._iterate_value(first, first_node, node, "sum()", frame)] + args.positional[1:])
        if name in ("any", "all"):
            element = self._iterate_value(first, first_node, node, f"{name}()", frame)
            return element.with_(items=None, elem=None) if element.kinds else const()
        if name in ("list", "tuple", "sorted", "reversed", "set", "frozenset", "iter"):
            if not args.positional:
                return seq_of(UNKNOWN)
            if first.has("shape_seq"):
                return first
            element = self._iterate_value(first, first_node, node, f"{name}()", frame)
            if first.items is not None and name in ("list", "tuple"):
                return tuple_of(first.items)
            return seq_of(element)
        if name == "enumerate":
            element = self._iterate_value(first, first_node, node, "enumerate()", frame)
            return seq_of(tuple_of([const(), element]))
        if name == "zip":
            # zip stops at its shortest input: a Python list next to a tensor fixes the trip count
            # (`zip(proposals, image_shapes)`), so the tensor is not iterated for its own size.
            bounded = any(SEQ in v.kinds and not v.is_tensor for v in args.positional)
            elements = [
                _element(v) if bounded else self._iterate_value(v, a.value, node, "zip()", frame)
                for v, a in zip(args.positional, node.args)
            ]
            return seq_of(tuple_of(elements))
        if name in ("map", "filter") and len(args.positional) >= 2:
            element = self._iterate_value(args.positional[1], node.args[1].value, node, f"{name}()", frame)
            fn = args.positional[0]
            if isinstance(fn.ref, FuncRef):
                res = self.call_function(fn.ref, CallArgs([element], {}, [], []))
                if fn.ref.closure is not None:
                    fn.ref.closure.called_nested.add(id(fn.ref.node))
                return seq_of(res if name == "map" else element)
            return seq_of(UNKNOWN)
        if name == "range":
            shaped = [(v, n.value) for v, n in zip(args.positional, node.args) if v.is_shape and not v.is_data]
            if shaped:  # list(range(seq_len)): a Python list as long as a dim (measured, p15)
                self.shape_conversion(node, "range()", shaped[0][0], shaped[0][1], frame)
            return seq_of(const())
        if name == "next" and args.positional:
            return element_of(first) if SEQ in first.kinds else first
        return UNKNOWN

    def _iterate_value(self, value: Val, value_node: cst.BaseExpression, anchor: cst.CSTNode, how: str, frame: Frame) -> Val:
        if value.is_definite_tensor:
            self.emit(ev.Iteration(anchor, value, how, value_node), frame)
        return _element(value)

    # -- tensor methods
    def tensor_method(self, node: cst.Call, receiver: Val, receiver_node: cst.BaseExpression, name: str, args: "CallArgs", frame: Frame) -> Val:
        if receiver.has("maybe_tuple") and name in api.CONTAINER_METHODS:
            return OPAQUE if name in ("get", "pop") else seq_of(OPAQUE)  # it was a dict or a list
        folded = _read_without_data(receiver) if name in ("item", "tolist", "numpy", "__array__") else None
        if folded is not None:
            return folded
        self.emit(
            ev.MethodCall(
                node, name, receiver, receiver_node, args.positional, args.keywords, id(node) in self.converted_items,
                checking=self.checking > 0 or (name == "item" and self._item_validates()),
            ),
            frame,
        )
        self._device_call(node, name, args, frame)
        prov = receiver.prov
        if name in ("item", "tolist", "numpy", "__array__"):
            prov = prov + (_source_step(frame, node),)
        if name in api.RANDOM_METHODS:
            return kind(TENSOR, "random", prov=prov)
        if name == "item":
            tags = ("size_tensor",) if receiver.has("size_tensor") else ()
            # `int(t.item())`: read to be converted at once (EXL001 reports both as one problem)
            return kind(DDS, *tags, *(("converted",) if id(node) in self.converted_items else ()), prov=prov)
        if name == "tolist":
            return seq_of(kind(DDS, *(("size_tensor",) if receiver.has("size_tensor") else ()), prov=prov), prov=prov)
        if name in ("numpy", "__array__"):
            return kind(DDS, prov=prov)
        if name == "size":
            if args.positional or "dim" in args.keywords:
                axis = literal_axis(node.args[0].value) if node.args else None
                declared = declared_axis(receiver, axis)
                if declared is not None:
                    return declared
                if receiver.has("static_tail") and axis not in (None, 0):
                    return const()  # a learned-query tensor broadcast over the batch: only dim 0 varies
                k = size_kind(receiver)
                return kind(k, *(("last_axis",) if axis == -1 else ()), *(raw_dim(receiver) if k == SHAPE else ()), prov=prov)
            return shape_seq_of(receiver)
        if name in ("dim", "ndimension"):
            return const()  # the rank: no exporter has a dynamic rank
        if name in api.SHAPE_METHODS:
            return kind(size_kind(receiver), prov=prov)
        if name in api.CONST_METHODS:
            return const()
        if name == "type" and not args.positional and not args.keywords:
            return const()
        self._size_and_slice_args(node, None, name, args, frame)
        data_shape = name in api.DATA_SHAPE_OPS and not receiver.has("const_tensor")
        if data_shape:
            self.emit(ev.DataShapeOp(node, f".{name}()", receiver, self.checking > 0), frame)
        if name == "repeat_interleave":
            repeats = args.get(0, "repeats")
            if repeats is not None and repeats.is_tensor:
                data_shape = True
                self.emit(ev.DataShapeOp(node, ".repeat_interleave()", repeats, self.checking > 0), frame)
        result = self._method_result(receiver, name, args)
        if name in api.SIZE_METHODS and not receiver.has("dds_shape") and not data_shape:
            positions, names = api.SIZE_METHODS[name]
            if name in ("new_zeros", "new_ones", "new_empty") and len(args.positional) > 1:
                positions = "all"  # x.new_zeros(b, c): sizes as separate arguments
            result = sized_dims(result, positions, names, args.positional, args.nodes, args.keywords, dict(args.kw_nodes))
            if derived_sizes(args.all()):
                result = result.with_(tags=result.tags | {"derived_dims"})  # x.view(B, H // p, p, -1)
        elif name in api.RESIZING_OPS or name in api.SLICE_METHODS:
            result = result.with_(tags=result.tags | {"derived_dims"})  # x.unfold(2, k, s), x.narrow(1, 0, n)
        if receiver.has("dds_shape") and name in ("t", "transpose", "permute", "movedim", "swapaxes") and not data_shape:
            # `idx.nonzero().transpose(0, 1)`: its first dim is now the fixed coordinate dim
            return result.with_(tags=(result.tags - {"dds_shape"}) | {"rank_lead"})
        if data_shape or (receiver.has("dds_shape") and not result.has("scalar")) or _sized_by_data(api.SIZE_METHODS.get(name), args):
            return with_data_shape(result)
        return result

    def _method_result(self, receiver: Val, name: str, args: "CallArgs") -> Val:
        prov = receiver.prov
        if _returns_tuple(name, args, method=True):
            return split_parts(name, args.get(0, "split_size"), prov)
        if name in api.FULL_REDUCTIONS and not args.positional and "dim" not in args.keywords:
            return kind(TENSOR, "scalar", *(("size_tensor",) if receiver.has("size_tensor") else ()), prov=prov)
        if name in api.BOOL_FUNCS:
            return kind(TENSOR, "bool", prov=prov)
        keep = receiver.tags & {"size_tensor", "bool", "scalar"} if name in _SHAPE_KEEPING else receiver.tags & {"size_tensor"}
        keep |= receiver.tags & {"random", "derived_dims"}
        if name in _MOVEMENT:
            keep |= receiver.tags & {"bool"}  # `early_stopped_pairs.repeat_interleave(2)`: still a mask
        if name in _AXES_KEEPING:
            keep |= {t for t in receiver.tags if t.startswith(("dims:", "fixed:", "rank:"))}  # x.float(): the same dims
        if name in ("expand", "repeat") and receiver.has("param") and len(args.positional) > 1 and all(
            v.kinds <= {CONST, NONE} for v in args.positional[1:]
        ):
            keep |= {"static_tail"}  # self.query_tokens.expand(B, -1, -1): only the batch dim varies
        if receiver.has("param") and all(v.kinds <= {CONST, NONE} or v.has("param") for v in args.all()):
            keep |= {"param"}  # self.pos_embed.reshape(1, M, M, -1): still parameter-shaped
            if receiver.has("const_tensor") and all(v.kinds <= {CONST, NONE} or v.has("const_tensor") for v in args.all()):
                keep |= {"const_tensor"}
        return Val(kinds=frozenset({TENSOR}), tags=keep, prov=merge_prov([receiver] + args.all()))

    def _size_and_slice_args(self, node: cst.Call, qual: str | None, method: str | None, args: "CallArgs", frame: Frame) -> None:
        spec = api.SIZE_FUNCS.get(qual) if qual else api.SIZE_METHODS.get(method or "")
        if spec is not None:
            positions, names = spec
            for param, value, arg_node in args.select(positions, names):
                elements = list(value.items) if value.items is not None else ([value.elem] if value.elem is not None and not value.has("shape_seq") else [])
                recomputed = param == "scale_factor" and any(
                    a.keyword is not None and a.keyword.value == "recompute_scale_factor"
                    and not (isinstance(a.value, cst.Name) and a.value.value in ("None", "False"))
                    for a in node.args
                )
                self.emit(ev.SizeArg(arg_node, qual or f".{method}()", param, value, elements, recomputed), frame)
        sspec = None
        if qual is not None and qual.startswith("torch."):
            sspec = api.SLICE_FUNCS.get(qual[len("torch."):])
        elif method is not None:
            sspec = api.SLICE_METHODS.get(method)
        if sspec is not None:
            positions, names = sspec
            for _, value, arg_node in args.select(positions, names):
                self.emit(ev.SliceArg(arg_node, qual or f".{method}()", value, arg_node), frame)

    def _device_call(self, node: cst.Call, method: str | None, args: "CallArgs", frame: Frame) -> None:
        if method in api.DEVICE_METHODS and not isinstance(node.func, cst.Name):
            self.emit(ev.DeviceString(node, f".{method}()"), frame)
            return
        for arg in node.args:
            is_device_kw = arg.keyword is not None and arg.keyword.value == "device"
            is_to_positional = method == "to" and arg.keyword is None and arg is node.args[0]
            is_device_ctor = isinstance(node.func, (cst.Name, cst.Attribute)) and (dotted(node.func) or "").endswith("device") and arg is node.args[0] and arg.keyword is None
            if (is_device_kw or is_to_positional or is_device_ctor) and _device_literal(arg.value):
                self.emit(ev.DeviceString(arg.value if is_device_kw else node, _device_literal(arg.value) or ""), frame)


# Methods whose result has the receiver's axes, one for one.
_AXES_KEEPING = {
    "to", "long", "int", "float", "double", "half", "bfloat16", "contiguous", "clone", "detach", "cpu", "cuda",
    "type_as", "abs", "neg", "sigmoid", "relu", "tanh", "exp", "log", "sqrt", "clamp", "clip",
}
# Methods that move or repeat a tensor's elements: the result has the receiver's dtype (a mask stays a mask).
_MOVEMENT = {
    "repeat", "repeat_interleave", "expand", "expand_as", "flip", "roll", "permute", "transpose", "t", "movedim",
    "swapaxes", "reshape", "view", "squeeze", "unsqueeze", "flatten", "contiguous", "clone", "detach", "narrow",
    "select", "index_select", "gather", "tile", "unflatten", "cpu", "cuda", "to",
}
_SHAPE_KEEPING = {
    "to", "long", "int", "float", "double", "half", "bfloat16", "contiguous", "clone", "detach",
    "squeeze", "unsqueeze", "flatten", "view", "reshape", "cpu", "cuda", "type_as", "abs", "neg",
}


def _fixed_size_dispatch(node: cst.Comparison, operands: list[Val]) -> bool:
    """``size == 4`` / ``size != 3``: a shape tested for equality with a specific size of 2 or more
    selects between layouts of a dim that is fixed by design (box coordinates, RGB channels, a
    codebook count), not between sizes of a dynamic dim (those compare with 0 / 1 or a bound)."""
    if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return False
    left, right = node.left, node.comparisons[0].comparator
    for literal, other, value in ((right, left, operands[0]), (left, right, operands[1])):
        if isinstance(literal, cst.Integer) and int(literal.value) >= 2:
            return value.is_shape and not value.is_data and isinstance(other, (cst.Name, cst.Attribute, cst.Subscript, cst.Call))
    return False


def _sized_by_data(spec: "tuple[object, tuple[str, ...]] | None", args: "CallArgs") -> bool:
    """`torch.zeros(n)`, `x.new_full((b, n + 1), 0)`, `x.view(n, -1)` with a size read from data (`n =
    int(mask.sum())`, the length of a boolean-mask selection): a tensor whose size depends on data."""
    if spec is None:
        return False
    for _, value, _ in args.select(*spec):
        parts = [value, *(value.items or ()), *((value.elem,) if value.elem is not None else ())]
        if any(v.is_dds and not v.is_tensor for v in parts):
            return True
    return False


def _never_none(v: Val) -> bool:
    """A value the code shows is not None: a size or a data-dependent scalar a caller computed and
    passed (`max_len=seq_length`); not a tensor (an optional input is typed as one), not a constant (a
    setting may default to None)."""
    return bool(v.kinds) and v.kinds <= {SHAPE, DDS}


def _relates_dims(node: cst.Comparison, operands: list[Val]) -> bool:
    """``a.shape[0] == b.shape[0]``, ``a.shape != b.shape``, ``m.shape[-1] < x.shape[-1]``: two sizes
    read from tensors (two whole shapes, for equality), compared with no arithmetic on them."""
    if len(operands) != 2:
        return False
    op = node.comparisons[0].operator
    equality = isinstance(op, (cst.Equal, cst.NotEqual))
    if not equality and not isinstance(op, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)):
        return False

    def dim(v: Val) -> bool:
        if v.is_data or not v.is_shape:
            return False
        if v.has("shape_seq"):
            return equality and (all(i.has("dim") or i.kinds <= {CONST} for i in v.items) if v.items is not None else (
                v.elem is not None and v.elem.has("dim")))
        return v.has("dim")

    return all(dim(v) for v in operands)


def _tests_zero_one(node: cst.Comparison, operands: list[Val]) -> bool:
    """``size == 1`` / ``size > 0`` / ``size != 0``: a size read from a tensor (no arithmetic on it)
    compared with 0 or 1."""
    if len(node.comparisons) != 1 or isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
        return False
    left, right = node.left, node.comparisons[0].comparator
    for lit, value in ((right, operands[0]), (left, operands[1])):
        if isinstance(lit, cst.Integer) and lit.evaluated_value in (0, 1):
            return value.is_shape and value.has("dim") and not value.is_data
    return False


def _read_without_data(v: Val) -> Val | None:
    """Reading a number out of ``v`` (`.item()`, `int()`, `math.sqrt()`) when no data is involved: a
    random draw gives augmentation parameters, a constant tensor a constant the exporters fold."""
    if v.has("random"):
        return Val(kinds=frozenset({CONST}), tags=frozenset({"random"}))
    if v.is_tensor and v.has("const_tensor"):
        return const()
    return None


def _library_data_shape(qual: str) -> bool:
    package, _, last = qual.rpartition(".")
    return last in api.DATA_SHAPE_LIBRARY.get(package, ())


def _makes_float(node: cst.BinaryOperation) -> bool:
    """`h / s`, `h ** 0.5`, `h + 0.1`, `h * 0.5`: arithmetic on sizes whose result is a float."""
    if isinstance(node.operator, cst.Divide):
        return True
    if isinstance(node.operator, cst.Power):
        return not isinstance(node.right, cst.Integer)
    return isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)) and (
        isinstance(node.left, cst.Float) or isinstance(node.right, cst.Float)
    )


class _DeadLoop(Exception):
    """A `while` whose condition is False under export: its body never runs."""


def _rank(v: Val) -> int:
    """How telling an operand is for a finding on a condition (data > shape > the rest)."""
    return 3 if v.is_data else 2 if v.is_shape else 1 if v.has("export_mode") else 0


_SEQ_TYPES = {"list", "tuple", "List", "Tuple", "Sequence", "collections.abc.Sequence", "abc.Sequence", "typing.Sequence", "dict", "Dict", "Mapping", "collections.abc.Mapping"}
_SCALAR_TYPES = {"int", "float", "bool", "str", "complex", "numbers.Number", "Number", "numbers.Integral", "numbers.Real"}
_TENSOR_TYPES = {"torch.Tensor", "Tensor", "torch.nn.Parameter", "nn.Parameter"}


def _narrowing(test: cst.BaseExpression, frame: Frame) -> tuple[dict[str, Val], dict[str, Val]]:
    """What ``isinstance`` tests in ``test`` tell about names: (when true, when false)."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not negated:
        left, _ = _narrowing(test.left, frame)
        right, _ = _narrowing(test.right, frame)
        return {**left, **right}, {}
    if not (isinstance(test, cst.Call) and dotted(test.func) == "isinstance" and len(test.args) == 2):
        return {}, {}
    subject = dotted(test.args[0].value)
    if subject is None:
        return {}, {}
    types_node = test.args[1].value
    elements = types_node.elements if isinstance(types_node, (cst.Tuple, cst.List)) else [types_node]
    types = {dotted(e.value if isinstance(e, cst.BaseElement) else e) or "?" for e in elements}
    current = frame.lookup(subject) or UNKNOWN
    yes: Val | None = None
    no: Val | None = None
    if types <= _TENSOR_TYPES:
        yes = kind(TENSOR, prov=current.prov) if not current.is_tensor else current.with_(tags=current.tags - {"maybe_tuple"})
        no = UNKNOWN
    elif types <= _SEQ_TYPES:
        yes = current if SEQ in current.kinds else seq_of(UNKNOWN)
    elif types <= _SCALAR_TYPES:
        yes = const()
    elif current.is_tensor and "?" not in types:
        # `isinstance(encoder_outputs, BaseModelOutput)`: the code expects another kind of object
        # here, whatever the annotation says; a tensor only where the code shows it.
        yes = UNKNOWN
        no = current.with_(tags=current.tags | {"maybe_tuple"})
    when_true = {subject: yes} if yes is not None else {}
    when_false = {subject: no} if no is not None else {}
    return (when_false, when_true) if negated else (when_true, when_false)


def _source_step(frame: Frame, node: cst.CSTNode) -> Step:
    return Step(frame.file, node, "", "data-dependent", DDS, "reads a tensor value into Python", source=True, top=top_statement(frame))


def top_statement(frame: Frame) -> object:
    """The top-level class or function of its file that the code of ``frame`` lives in."""
    while frame.func.closure is not None:
        frame = frame.func.closure
    return frame.file.top_of(frame.func.node)


def _device_literal(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if isinstance(value, str) and value.split(":")[0] in ("cuda", "mps", "xpu", "hpu", "npu"):
            return value
        return None
    if isinstance(node, cst.IfExp):
        return _device_literal(node.body) or _device_literal(node.orelse)
    return None


def _returns_tuple(name: str, args: "CallArgs", method: bool) -> bool:
    """Does ``torch.name(...)`` (``method=False``) / ``t.name(...)`` return a tuple of tensors?"""
    if name in api.TUPLE_FUNCS:
        return True
    if name in api.TUPLE_WITH_DIM:
        dim = args.get(0 if method else 1, "dim")
        return dim is not None and not dim.is_tensor
    flags = api.TUPLE_WITH_FLAG.get(name, ())
    return any(f in args.keywords for f in flags)


def _element(value: Val) -> Val:
    if SEQ in value.kinds or value.items is not None:
        return element_of(value)
    if value.is_tensor:
        return value.with_(tags=value.tags - {"scalar"}, items=None, elem=None)
    if value.has("modlist"):
        return value.elem if value.elem is not None else Val(tags=frozenset({"module"}))
    if value.is_dds or value.is_shape:
        return value.with_(items=None, elem=None)
    return UNKNOWN


def _describe(value: Val) -> tuple[str, str] | None:
    if value.has("size_tensor"):
        return "a tensor built from sizes", "size_tensor"
    if value.is_tensor and value.has("dds_shape"):
        return "a tensor whose size depends on data", DDS
    for k in (DDS, TENSOR, SHAPE):
        if k in value.kinds and not (k == TENSOR and value.has("maybe_tuple")):
            return KIND_WORDS[k], k
    return None


def _is_generator(fn: cst.FunctionDef) -> bool:
    from exportlint.analysis.index import iter_statements

    for stmt in iter_statements(fn.body):
        if isinstance(stmt, cst.Expr) and isinstance(stmt.value, (cst.Yield,)):
            return True
    return False


def _join_envs(envs: list[dict[str, Val]]) -> dict[str, Val]:
    if len(envs) == 1:
        return dict(envs[0])
    keys: set[str] = set()
    for e in envs:
        keys |= e.keys()
    out: dict[str, Val] = {}
    for k in keys:
        vals = [e[k] for e in envs if k in e]
        out[k] = join(vals)
    return out


def _same_env(a: dict[str, Val], b: dict[str, Val]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(a[k].signature() == b[k].signature() for k in a)


_BUILTINS = {
    "int", "float", "bool", "complex", "len", "range", "list", "tuple", "dict", "set", "frozenset",
    "enumerate", "zip", "map", "filter", "sorted", "reversed", "min", "max", "sum", "abs", "round",
    "any", "all", "isinstance", "issubclass", "hasattr", "getattr", "setattr", "callable", "super",
    "print", "repr", "str", "format", "type", "id", "iter", "next", "divmod", "pow", "vars", "dir",
    "hash", "locals", "globals",
}


# ====================================================================== arguments
@dataclass
class CallArgs:
    positional: list[Val]
    keywords: dict[str, Val]
    nodes: list[cst.BaseExpression]  # positional argument nodes
    kw_nodes: list[tuple[str, cst.BaseExpression]]

    @classmethod
    def evaluate(cls, node: cst.Call, interp: Interpreter, frame: Frame) -> "CallArgs":
        positional: list[Val] = []
        nodes: list[cst.BaseExpression] = []
        keywords: dict[str, Val] = {}
        kw_nodes: list[tuple[str, cst.BaseExpression]] = []
        for arg in node.args:
            v = interp.expr(arg.value, frame)
            if arg.star == "*":
                if v.is_definite_tensor:
                    interp.emit(ev.Iteration(arg, v, "*-unpacking", arg.value), frame)
                if v.items is not None:
                    positional.extend(v.items)
                    nodes.extend([arg.value] * len(v.items))
                else:
                    positional.append(v)
                    nodes.append(arg.value)
            elif arg.star == "**":
                continue
            elif arg.keyword is not None:
                keywords[arg.keyword.value] = v
                kw_nodes.append((arg.keyword.value, arg.value))
            else:
                positional.append(v)
                nodes.append(arg.value)
        return cls(positional, keywords, nodes, kw_nodes)

    def all(self) -> list[Val]:
        return self.positional + list(self.keywords.values())

    def has_tensor(self) -> bool:
        return any(v.is_tensor or (SEQ in v.kinds and v.contains(lambda x: x.is_tensor)) for v in self.all())

    def prov(self) -> tuple[Step, ...]:
        return merge_prov([v for v in self.all() if v.is_data or v.is_shape])

    def get(self, index: int, name: str) -> Val | None:
        if name in self.keywords:
            return self.keywords[name]
        if index < len(self.positional):
            return self.positional[index]
        return None

    def select(self, positions: object, names: tuple[str, ...]) -> Iterator[tuple[str, Val, cst.BaseExpression]]:
        """(parameter, value, node) for the arguments at ``positions`` ("all" or indexes) or
        passed by one of ``names``; with "all" (``x.view(b, c, -1)``) each one is a size."""
        if positions == "all":
            for i in range(len(self.positional)):
                yield names[0], self.positional[i], self.nodes[i]
        else:
            for j, i in enumerate(positions):  # type: ignore[arg-type]
                if i < len(self.positional):
                    yield names[j] if j < len(names) else names[-1], self.positional[i], self.nodes[i]
        for name, n in self.kw_nodes:
            if name in names:
                yield name, self.keywords[name], n


# ====================================================================== parameters
def _bind_params(ref: FuncRef, call: CallArgs | None, entry: bool, interp: Interpreter) -> dict[str, Val]:
    node = ref.node
    params = node.params
    env: dict[str, Val] = {}
    plist = list(params.posonly_params) + list(params.params)
    if ref.bound_self and plist:
        first = plist.pop(0)
        if ref.cls is not None:
            env[first.name.value] = Val(ref=SelfRef(ref.cls))
    positional = list(call.positional) if call is not None else []
    keywords = dict(call.keywords) if call is not None else {}
    for i, p in enumerate(plist):
        name = p.name.value
        if call is None:
            env[name] = _param_default_kind(p, entry, ref, name, interp)
            if interp.entry_dims is not None and ref.node is interp.entry_fn:
                env[name] = with_declared_dims(env[name], interp.entry_dims.get(name))
        elif i < len(positional):
            env[name] = _annotated(p, positional[i], ref)
        elif name in keywords:
            env[name] = _annotated(p, keywords.pop(name), ref)
        else:
            env[name] = _default_value(p)
    for p in params.kwonly_params:
        name = p.name.value
        if call is None:
            env[name] = _param_default_kind(p, entry, ref, name, interp)
        else:
            env[name] = keywords.pop(name, None) or _default_value(p)
    star = params.star_arg
    if isinstance(star, cst.Param):
        extra = positional[len(plist):] if call is not None else []
        if call is None:
            env[star.name.value] = seq_of(kind(TENSOR, "maybe_tuple")) if entry else seq_of(UNKNOWN)
        else:
            env[star.name.value] = tuple_of(extra) if extra else seq_of(UNKNOWN)
    if params.star_kwarg is not None:
        env[params.star_kwarg.name.value] = seq_of(UNKNOWN)
    return env


def _annotated(p: cst.Param, value: Val, ref: FuncRef) -> Val:
    """An argument the caller's analysis knows nothing of, annotated as a list or tuple
    (`image_shapes: list[tuple[int, int]]`): a Python sequence, not a tensor.  A caller's tensor
    stays a tensor (a library's annotation can be wrong either way: `grid_thw: list[list[int]]`
    receiving a LongTensor, `spatial_shapes_list: torch.Tensor` receiving shape tuples)."""
    if value.kinds or p.annotation is None:
        return value
    head = ref.file.code(p.annotation.annotation).replace(" ", "").split("[", 1)[0]
    return seq_of(UNKNOWN) if head in SEQ_ANNOTATIONS or head.endswith((".List", ".Sequence", ".Tuple")) else value


def _default_value(p: cst.Param) -> Val:
    if p.default is None:
        return UNKNOWN
    if isinstance(p.default, cst.Name) and p.default.value in ("None", "True", "False"):
        value = p.default.value
        return kind(NONE) if value == "None" else Val(kinds=frozenset({CONST}), tags=TRUTHY if value == "True" else FALSY)
    return const()


def _param_default_kind(p: cst.Param, entry: bool, ref: FuncRef, name: str, interp: Interpreter) -> Val:
    """Kind of a parameter when nobody passes it: the forward's inputs, or an uncalled nested function.
    In library code an option of the forward (`output_attentions: bool = False`) is a setting with
    its default, like a constructor's: the code only a non-default value runs is gated."""
    value = _entry_param_kind(p, entry, ref, name, interp)
    if interp.library_mode and p.default is not None and value.kinds <= {CONST, NONE} and value.kinds:
        ok, default = literal(p.default)
        if ok and (default is None or isinstance(default, (bool, int, float, str))):
            value = value.with_(tags=value.tags | {config_tag(name, default)})
    return value


def _entry_param_kind(p: cst.Param, entry: bool, ref: FuncRef, name: str, interp: Interpreter) -> Val:
    if not entry:
        return UNKNOWN
    default = p.default
    if default is not None and _is_target_param(name):
        if isinstance(default, cst.Name) and default.value in ("None", "False"):
            return kind(NONE)  # `labels=None`, `return_loss=False`: export passes no training targets
    ann = p.annotation.annotation if p.annotation is not None else None
    if ann is not None:
        text = ref.file.code(ann).replace(" ", "")
        head = text.split("[", 1)[0]
        inner = text[len(head) + 1 : -1] if "[" in text else ""
        if head in ("Optional", "typing.Optional") or "|None" in text or "None|" in text:
            text = inner if head in ("Optional", "typing.Optional") else text.replace("|None", "").replace("None|", "")
            head = text.split("[", 1)[0]
            inner = text[len(head) + 1 : -1] if "[" in text else ""
        if head in ("Union", "typing.Union"):
            return kind(TENSOR, "maybe_tuple") if "Tensor" in inner else UNKNOWN
        if head in ("Dict", "dict", "Mapping", "typing.Dict"):
            return seq_of(kind(TENSOR, "maybe_tuple")) if "Tensor" in inner else seq_of(UNKNOWN)
        if head in SEQ_ANNOTATIONS or head.endswith((".List", ".Sequence", ".Tuple")):
            if inner.split("[", 1)[0] in ("Dict", "dict", "Mapping", "typing.Dict"):
                return seq_of(seq_of(kind(TENSOR, "maybe_tuple")))
            if "Tensor" in inner:
                return seq_of(kind(TENSOR, "maybe_tuple"))
            return seq_of(const() if inner.split(",")[0].split("[")[0] in NON_TENSOR_ANNOTATIONS else UNKNOWN)
        if head in NON_TENSOR_ANNOTATIONS or head.split(".")[-1] in NON_TENSOR_ANNOTATIONS:
            return const()
        if "Tensor" in head:
            return kind(TENSOR, prov=(Step(ref.file, p, name, "a tensor", TENSOR, "an input of `forward`", top=ref.file.top_of(ref.node)),))
        return UNKNOWN
    if default is not None and not (isinstance(default, cst.Name) and default.value == "None"):
        return const()
    if default is not None and name.startswith(FLAG_PREFIXES):
        return const()  # `use_cache=None`, `return_dict=None`: flags, not tensors
    # Unannotated: a tensor when the function uses it as one (`x.shape`, `x.view(...)`); otherwise
    # possibly a tuple or list of tensors (`cos, sin = position_embeddings`).
    tags = () if name in _tensor_evidence(ref.node) else ("maybe_tuple",)
    return kind(TENSOR, *tags, prov=(Step(ref.file, p, name, "a tensor", TENSOR, "an input of `forward`", top=ref.file.top_of(ref.node)),))


# Attributes only tensors have (among the values model code passes around).
TENSOR_EVIDENCE = api.TENSOR_ONLY_METHODS | {
    "shape", "ndim", "device", "dtype", "to", "reshape", "transpose", "expand", "repeat", "new_zeros", "new_ones",
    "new_full", "new_empty", "new_tensor", "clone", "matmul", "bmm", "type_as", "chunk", "permute", "mean", "sum",
    "max", "min", "abs", "exp", "log", "sqrt", "pow", "masked_fill_", "fill_", "zero_", "mul", "add", "sub", "div",
    "expand_as", "view_as", "reshape_as", "requires_grad", "is_cuda", "cuda", "cpu", "int", "double", "argsort",
    "topk", "gather", "scatter", "index_select", "flip", "roll", "t", "T", "mT", "narrow", "unfold",
    "unique", "argwhere", "masked_select", "unique_consecutive", "repeat_interleave", "cumsum", "cumprod",
    "log_softmax", "tanh", "relu", "gelu", "masked_fill", "numel", "nelement", "byte", "short", "index_put",
    "index_put_", "scatter_", "scatter_add", "copy_", "clamp_", "mul_", "add_", "div_", "sub_", "baddbmm",
    "addmm", "mm", "triu", "tril", "diagonal", "diag", "logsumexp", "std", "var", "median", "kthvalue",
    "cummax", "cummin", "ravel", "movedim", "swapaxes", "amax", "amin", "eq", "ne", "gt", "lt", "ge", "le",
    "logical_and", "logical_or", "logical_not", "isnan", "isinf", "isfinite", "nan_to_num", "floor", "ceil",
    "sign", "sin", "cos", "rsqrt", "reciprocal", "where", "masked_scatter", "index_add", "index_fill",
    "index_copy", "take_along_dim", "stride", "is_contiguous", "log1p", "expm1", "clip", "new_full",
    "chunk", "half", "bfloat16", "argsort", "all", "any",
}
_EVIDENCE = NodeMemo()


def _tensor_evidence(fn: cst.CSTNode) -> frozenset[str]:
    """Names of ``fn``'s body used as tensors: ``name.<tensor-only attribute>``."""

    def compute() -> frozenset[str]:
        found: set[str] = set()

        class V(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> None:
                if isinstance(node.value, cst.Name) and node.attr.value in TENSOR_EVIDENCE:
                    found.add(node.value.value)

            def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                return node is fn

        fn.visit(V())
        return frozenset(found)

    return _EVIDENCE.get(fn, compute)


# ====================================================================== self attributes
_MODULE_CONTAINERS = {"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential"}
_TENSOR_WRAPPERS = {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer", "torch.nn.parameter.Buffer"}


def _class_attribute(cls: ClassInfo, attr: str, interp: Interpreter) -> Val:
    """What ``self.<attr>`` is: from the nearest class of the MRO that assigns it.  Classes of
    other files are read only if something already needed their code (a framework base class
    such as ``PreTrainedModel`` is thousands of lines of attributes that rarely matter)."""
    for c in cls.iter_mro():
        if c.file is not cls.file and not c.loaded:
            continue
        c.scan_attrs()
        vals = [kind(TENSOR, "param")] if attr in c.tensor_attrs else []
        vals += [_classify_attr_expr(expr, c, interp.target) for expr in c.attr_exprs.get(attr, [])]
        if vals:
            return join(vals)
        if attr in c.class_consts:
            return const()
    if attr in ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias"):
        return kind(TENSOR, "param")
    return UNKNOWN


# Constructor arguments conventionally holding a normalisation or activation layer class (timm,
# torchvision): modelled as a layer of that family, which keeps its input's shape.
_SHAPE_KEEPING_FACTORIES = {
    "norm_layer": "torch.nn.LayerNorm", "act_layer": "torch.nn.GELU", "activation_layer": "torch.nn.ReLU",
}


_TUPLE_RETURNING_NN = {
    "RNN", "LSTM", "GRU", "LSTMCell", "MultiheadAttention", "ModuleList", "ModuleDict", "ParameterList",
    "ParameterDict", "Module",
}


def _class_parameter(cls: ClassInfo, param: str) -> Val | None:
    """The submodule an `__init__` parameter holding a class builds (`downsample(...)` with
    `downsample=SwinPatchMerging` or None from the calls building ``cls``): the module classes of the
    file those calls pass, joined; None unless every class passed is a module class of the file."""
    args = class_arguments(cls, param)
    if not args:
        return None
    options: list[Val] = []
    for arg in args:
        for option in (arg.body, arg.orelse) if isinstance(arg, cst.IfExp) else (arg,):
            if isinstance(option, cst.Name) and option.value == "None":
                continue  # the part is left out (`if downsample is not None:`)
            target = cls.file.classes.get(option.value) if isinstance(option, cst.Name) else None
            if target is None or not target.is_module():
                return None
            options.append(_module_val(target))
    return join(options) if options else None


def _module_val(ref: "ClassInfo | str | None", ctor: "tuple[cst.Call, FileIndex] | None" = None) -> Val:
    """A submodule; ``ref`` is its class (linted set) or qualified name (torch.nn.X), ``ctor`` the
    constructor call of a torch.nn layer (what it was built with)."""
    tags = {"module"}
    if isinstance(ref, str) and ref.startswith("torch.nn.") and ref.rsplit(".", 1)[-1] not in _TUPLE_RETURNING_NN:
        tags.add("tensor_module")
    if isinstance(ref, ClassInfo):
        return Val(tags=frozenset(tags), ref=Instance(ref))
    library = LibraryModule(ref, *ctor) if isinstance(ref, str) and ctor is not None else None
    return Val(tags=frozenset(tags), ref=library)


def _submodule_classes(file: FileIndex) -> set[int]:
    """ids of the classes of ``file`` that some class of ``file`` builds as a submodule."""
    out: set[int] = set()

    def collect(v: Val | None) -> None:
        if v is None:
            return
        for ref in v.ref.options if isinstance(v.ref, Alternatives) else (v.ref,):
            if isinstance(ref, Instance):
                out.add(id(ref.cls))
        collect(v.elem)
        for item in v.items or ():
            collect(item)

    for cls in file.classes.values():
        cls.scan_attrs()
        for name, exprs in cls.attr_exprs.items():
            for expr in exprs:
                v = _classify_attr_expr(expr, cls)
                if not (isinstance(v.ref, Instance) and v.ref.cls is cls):
                    collect(v)
    return out


def _classify_attr_expr(expr: cst.BaseExpression, cls: ClassInfo, target: Target = Target.EXPORT) -> Val:
    fi = cls.file
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation)):
        return const()
    if isinstance(expr, cst.Name):
        if expr.value == "None":
            return kind(NONE)
        return const()
    if isinstance(expr, cst.IfExp):
        known = static_predicate(expr.test, fi, target)
        if known is not None:  # `torch.tensor(...) if torch.jit.is_tracing() else min(res)`
            return _classify_attr_expr(expr.body if known else expr.orelse, cls, target)
        arms = [_classify_attr_expr(expr.body, cls, target), _classify_attr_expr(expr.orelse, cls, target)]
        if any(a.has("module") for a in arms):
            # `downsample(dim) if downsample is not None else None`: the part, where it exists
            # (code calls it under `if self.downsample is not None:`)
            arms = [a for a in arms if a.kinds != {NONE}]
        return join(arms)
    if isinstance(expr, (cst.List, cst.Tuple)):
        parts = [_classify_attr_expr(e.value, cls) for e in expr.elements]
        if parts and all(p.has("module") for p in parts):
            return Val(tags=frozenset({"modlist"}), elem=join(parts))
        return const() if all(CONST in p.kinds for p in parts) else UNKNOWN
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        inner = _classify_attr_expr(expr.elt, cls)
        return Val(tags=frozenset({"modlist"}), elem=inner) if inner.has("module") else UNKNOWN
    if isinstance(expr, cst.Call):
        qual = fi.qualify(expr.func)
        name = dotted(expr.func) or ""
        if qual in _TENSOR_WRAPPERS:
            shape = param_shape_tag(expr, fi)
            return kind(TENSOR, "param", *((shape,) if shape else ()))
        if qual in _MODULE_CONTAINERS:
            elem = _classify_attr_expr(expr.args[0].value, cls).elem if expr.args else None
            if qual.endswith("Sequential"):
                if expr.args and expr.args[0].star == "*":
                    elem = _classify_attr_expr(expr.args[0].value, cls).elem
                else:
                    parts = [_classify_attr_expr(a.value, cls) for a in expr.args]
                    elem = join(parts) if parts else None
                return Val(tags=frozenset({"modlist", "module", "tensor_module"}), elem=elem)
            return Val(tags=frozenset({"modlist"}), elem=elem or Val(tags=frozenset({"module"})))
        if qual == "torch.nn.ParameterList":
            return seq_of(kind(TENSOR))
        if qual is not None and qual.startswith("torch."):
            last = qual.rsplit(".", 1)[-1]
            if last[:1].isupper():
                return _module_val(qual, (expr, fi))
            return kind(TENSOR) if not qual.startswith(api.NON_TENSOR_PREFIXES) and qual not in api.NON_TENSOR_FUNCS else const()
        if qual is not None and qual.split(".")[0] in api.MATH_ROOTS:
            return const()
        target = fi.classes.get(name)
        if target is None and qual is not None and fi.project is not None:
            target = fi.project.find_class(qual)
        if target is not None:
            return _module_val(target) if target.is_module() else UNKNOWN
        if isinstance(expr.func, cst.Name):
            built = _class_parameter(cls, expr.func.value)
            if built is not None:  # `self.downsample = downsample(...)` of the classes its callers pass
                return built
        last = name.rsplit(".", 1)[-1] if name else ""
        if last in _SHAPE_KEEPING_FACTORIES:
            # `self.norm1 = norm_layer(dim)`, `self.act = act_layer()`: a constructor argument that is a
            # normalisation / activation layer class; whichever it is, it keeps its input's shape
            return _module_val(_SHAPE_KEEPING_FACTORIES[last], (expr, fi))
        if last[:1].isupper() or last.endswith(("layer", "Layer", "norm", "act", "block", "Block")):
            return _module_val(None)
        if name in ("int", "float", "bool", "str", "tuple", "list", "len", "min", "max", "round"):
            return const()
        return UNKNOWN
    return UNKNOWN
