"""What a piece of model code means for export, read from its syntax alone (no values): validation
guards and inert branches, functions that only validate, fast paths a library turns off under
export, helpers that return a caller-precomputed value, and the classes that are never export roots
(losses, data pipelines, modules whose forward needs a Python object or is replaced by a decorator).
The dataflow (``dataflow.py``) asks; nothing here knows about tensors or shapes.
"""

from __future__ import annotations

import ast
import functools
import operator
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Iterator

import libcst as cst

from exportlint.analysis import torchapi as api
from exportlint.analysis.index import ClassInfo, FileIndex, dotted, iter_statements
from exportlint.analysis.project import module_name_for
from exportlint.diagnostics import Target

if TYPE_CHECKING:
    from exportlint.analysis.frames import Frame


def file_fact(file: "FileIndex", name: str, compute: Callable[["FileIndex"], Any]) -> Any:
    """A fact of the whole ``file`` (``name``), computed once and kept with the file's index."""
    if name not in file.facts:
        file.facts[name] = compute(file)
    return file.facts[name]


class NodeMemo:
    """Results keyed by a syntax node's identity, bounded: an id can be reused once a tree is freed,
    and the language server lints for hours."""

    def __init__(self, limit: int = 4096) -> None:
        self.store: dict[int, tuple[cst.CSTNode, Any]] = {}
        self.limit = limit

    def get(self, node: cst.CSTNode, compute: Callable[[], Any]) -> Any:
        hit = self.store.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        value = compute()
        if len(self.store) > self.limit:
            self.store.clear()
        self.store[id(node)] = (node, value)
        return value


# Modules that are never export roots: losses, criteria, matchers and assigners (training code).
LOSS_BASES = {"torch.nn.modules.loss._Loss", "torch.nn.modules.loss._WeightedLoss", "torch.nn._Loss"}


LOSS_SUFFIXES = ("Loss", "Criterion", "Matcher", "Assigner", "Loss2d", "Loss3d", "Metric")


def body_statements(body: cst.BaseSuite) -> list[cst.BaseStatement | cst.BaseSmallStatement]:
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    return list(body.body)  # SimpleStatementSuite: small statements


def is_logging_stmt(stmt: cst.CSTNode) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(is_logging_stmt(s) for s in stmt.body)
    if isinstance(stmt, (cst.Pass, cst.Raise, cst.Assert)):
        return True
    if isinstance(stmt, cst.If):
        return only_checking(stmt)
    if isinstance(stmt, cst.Expr):
        v = stmt.value
        if isinstance(v, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
            return True
        if isinstance(v, cst.Call):
            name = (dotted(v.func) or "").rsplit(".", 1)[-1]
            # `logger.warning(...)`, `print(...)`, torchvision's `_log_api_usage_once(...)`, and checks
            # (`torch._check(cond)`, `torch._assert(...)`): nothing the outputs depend on
            return (
                name in api.LOGGING_CALLS
                or name in api.VALIDATING_CALLS
                or name.lstrip("_").startswith(("log_", "warn_"))
            )
    return False


def only_checks(body: cst.BaseSuite) -> bool:
    stmts = body_statements(body)
    return bool(stmts) and all(is_logging_stmt(s) for s in stmts)


def ends_in_failure(body: cst.BaseSuite) -> bool:
    """The arm ends by raising (`raise`, `assert False`, `torch._assert(False, msg)`): whatever it
    computes before only builds the error message."""
    stmts = body_statements(body)
    if not stmts:
        return False
    last = stmts[-1]
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else [last]
    if not smalls:
        return False
    small = smalls[-1]
    if isinstance(small, cst.Raise):
        return True
    if isinstance(small, cst.Assert):
        return isinstance(small.test, cst.Name) and small.test.value == "False"
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and small.value.args:
        name = (dotted(small.value.func) or "").rsplit(".", 1)[-1]
        first = small.value.args[0].value
        return name in ("_assert", "_assert_async") and isinstance(first, cst.Name) and first.value == "False"
    return False


def _is_check_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    return (dotted(node.func) or "").rsplit(".", 1)[-1] in api.VALIDATING_CALLS


# A helper named for checking what it is given (`self.check_variable_bounds_for_export(target_size=[h, w])`,
# `check_input_shape(x)`, `_check_sizes(n)`), not `checkpoint(...)`
_CHECK_HELPER = re.compile(r"(?:^|_)check(?:_|$)")


def _is_checking_use(node: cst.CSTNode) -> bool:
    """A call a name read from data is handed to for validation: torch's checks, or a helper named so."""
    if not isinstance(node, cst.Call):
        return False
    return _is_check_call(node) or bool(_CHECK_HELPER.search((dotted(node.func) or "").rsplit(".", 1)[-1]))


_NAME_USES = NodeMemo()
_BOUNDS, _REPORTS = 2, 1  # how `_name_uses` says a name is read: bounded by a check, named in a raise


def checked_before_use(assign: cst.Assign, fn: cst.CSTNode) -> str | None:
    """How `n = x.sum().item()` (or `h, w = size.tolist()`) is used after it: "validates" when every use
    is inside a check's arguments (`torch._check(n >= 0)`, transformers' `torch_compilable_check(n == m,
    f"... {n}")`), an `assert` or a `raise` (Qwen2-Audio's `n_audio_tokens`); "bounded" when code after
    it bounds every name with such a check, or hands it to a helper named for checking, and other code
    reads it too (Reformer's `max_position_id`, bounded and then a slice bound: exports, audit round 8;
    torchtune's export modules, which bound `.item()` / `.tolist()` sizes with `torch._check` a few
    lines later: exports, holdout4); else None.  A use before the check that needs the bound is
    reported where it is (`int(h * w)`)."""
    if len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if isinstance(target, cst.Name):
        names = [target.value]
    elif isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        names = [e.value.value for e in target.elements]  # type: ignore[attr-defined]
    else:
        return None
    ends, uses = _NAME_USES.get(fn, lambda: _name_uses(fn))
    end = ends.get(id(assign))
    if end is None:
        return None
    verdicts = set()
    for name in names:
        later = [how for pos, how in uses.get(name, ()) if pos >= end]
        if later and all(later):
            verdicts.add("validates")
        elif _BOUNDS in later:
            verdicts.add("bounded")
        else:
            return None  # read without a bound (a raise's message names it, bounding nothing)
    return "bounded" if "bounded" in verdicts else "validates"


def _name_uses(fn: cst.CSTNode) -> tuple[dict[int, int], dict[str, list[tuple[int, int]]]]:
    """One pass over a function: every name's occurrences in source order (position, and how it is
    read: ``_BOUNDS`` inside a check call or an assert's test, ``_REPORTS`` inside a raise only, 0
    otherwise), and the position right after each assignment statement."""

    class V(cst.CSTVisitor):
        def __init__(self) -> None:
            self.pos = 0
            self.checks = 0  # inside a check call or an assert
            self.raises = 0  # inside a raise (its message)
            self.ends: dict[int, int] = {}
            self.uses: dict[str, list[tuple[int, int]]] = {}

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not fn:
                return False
            if isinstance(node, cst.Assert) or _is_checking_use(node):
                self.checks += 1
            elif isinstance(node, cst.Raise):
                self.raises += 1
            if isinstance(node, cst.Name):
                how = _BOUNDS if self.checks else _REPORTS if self.raises else 0
                self.uses.setdefault(node.value, []).append((self.pos, how))
                self.pos += 1
            return True

        def on_leave(self, node: cst.CSTNode) -> None:
            if isinstance(node, cst.Assert) or _is_checking_use(node):
                self.checks -= 1
            elif isinstance(node, cst.Raise):
                self.raises -= 1
            if isinstance(node, cst.Assign):
                self.ends[id(node)] = self.pos

    v = V()
    fn.visit(v)
    return v.ends, v.uses


def is_guard(node: cst.If) -> bool:
    """`if <bad>: raise / warn / log` with no `else` doing work: a validation guard (torch.export
    turns it into a range constraint or a runtime assert; jit.trace drops it)."""
    return (only_checks(node.body) or ends_in_failure(node.body)) and not isinstance(node.orelse, cst.Else)


def is_inert(node: cst.If) -> bool:
    """Neither arm computes anything the outputs depend on: each only raises, warns, logs or passes,
    or an `if` without `else` only stores a cache on the module (`if not is_compiling:
    self._freqs_cache = (key, freqs)`: held-out judging took skipping it under export as the same
    computation)."""
    return (node.orelse is None and only_caches(node.body)) or only_checking(node)


def names_a_tensor(annotation: str) -> bool:
    """Does an annotation's head name a tensor type (`Tensor`, `torch.FloatTensor`)?  Not AllenNLP's
    `TextFieldTensors`, a dict of dicts of tensors."""
    return annotation.split("[", 1)[0].split(".")[-1].endswith("Tensor")


def legacy_input_adapter(node: cst.If, fn: cst.CSTNode) -> bool:
    """An `if` without `else` whose arm only adapts inputs of another type than the ones the signature
    annotates (`if isinstance(elem_idxs, tuple): ... return self(*elem_idxs)` with `elem_idxs: Tensor`)
    and validates (guards, warnings): torchani's `if not (is_scripting() or is_compiling()):` blocks
    keeping the deprecated tuple call; for the tensors an exported model receives, skipping it under
    export computes the same (held-out round 17)."""
    if node.orelse is not None or not isinstance(fn, cst.FunctionDef):
        return False
    tensors = {p.name.value for p in named_params(fn) if p.annotation is not None
               and names_a_tensor(dotted(p.annotation.annotation) or "")}
    stmts = body_statements(node.body)
    return bool(stmts) and any(_other_type_test(s, tensors) for s in stmts) and all(
        _other_type_test(s, tensors) or (isinstance(s, cst.If) and is_guard(s)) or is_logging_stmt(s) for s in stmts)


def _other_type_test(stmt: cst.CSTNode, tensors: set[str]) -> bool:
    """`if isinstance(x, tuple/list/dict):` without `else`, ``x`` a parameter annotated as a tensor."""
    if not (isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.test, cst.Call)
            and dotted(stmt.test.func) == "isinstance" and len(stmt.test.args) == 2):
        return False
    subject, types = stmt.test.args[0].value, stmt.test.args[1].value
    names = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    return (isinstance(subject, cst.Name) and subject.value in tensors
            and all(dotted(n) in ("tuple", "list", "dict", "Tuple", "List", "Dict") for n in names))


def only_checking(node: cst.If) -> bool:
    """Every arm only raises, warns, logs or passes."""
    if not only_checks(node.body):
        return False
    if node.orelse is None:
        return True
    if isinstance(node.orelse, cst.If):
        return only_checking(node.orelse)
    return only_checks(node.orelse.body)


def only_caches(body: cst.BaseSuite) -> bool:
    """Every statement stores a value on `self` (`self._cache = ...`, `self._cache[key] = ...`)."""
    stmts = body_statements(body)

    def on_self(t: cst.BaseExpression) -> bool:
        while isinstance(t, (cst.Attribute, cst.Subscript)):
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                return True
            t = t.value
        return False

    return bool(stmts) and all(
        isinstance(line, cst.SimpleStatementLine)
        and all(isinstance(s, cst.Assign) and all(on_self(t.target) for t in s.targets) for s in line.body)
        for line in stmts
    )


def known_false(expr: cst.BaseExpression) -> bool:
    """`False`, or a distributed-training predicate (api.SINGLE_PROCESS_FALSE), or an `or` / `and`
    of such: False in eager inference and while exporting alike."""
    if isinstance(expr, cst.Name):
        return expr.value == "False"
    if isinstance(expr, cst.BooleanOperation):
        if isinstance(expr.operator, cst.Or):
            return known_false(expr.left) and known_false(expr.right)
        return known_false(expr.left) or known_false(expr.right)
    if isinstance(expr, cst.Call):
        return (dotted(expr.func) or "").rsplit(".", 1)[-1] in api.SINGLE_PROCESS_FALSE
    return False


def alternative_arms(node: cst.If) -> bool:
    """`if c: v = a(...) else: v = b(...)`: every arm binds a common name (and none leaves the
    function): two ways to compute the same values, which library authors write as an export-friendly
    variant of an eager fast path (Qwen3-Next's `solve_triangular` vs forward substitution: equal to
    4.8e-7, audit round 9).  An `elif` chain ending in `else` counts (kornia's Canny: `torch.while_loop`
    under export, a traced loop under trace, a Python loop in eager), and so does updating the name in
    place (`result.add_(left, alpha=k)` vs `result = result + left * k`: kornia's SIFT, judged the same
    computation on held-out code)."""
    common: set[str] | None = None
    arm: cst.If | cst.Else | None = node
    while isinstance(arm, cst.If):
        names = _bound_names(arm.body)
        if names is None:
            return False
        common = names if common is None else common & names
        arm = arm.orelse
    if not isinstance(arm, cst.Else):
        return False
    last = _bound_names(arm.body)
    return common is not None and last is not None and bool(common & last)


def optional_kernel_gate(test: cst.BaseExpression) -> bool:
    """A condition that also needs an optional compiled extension (`WITH_SEGMM and not is_compiling()`,
    `_HAS_FUSED_KERNEL`, `is_flash_attn_available()`) or one device (`x.device.type == "cpu" and not
    is_compiling()`): the arm is a kernel fast path whose fallback computes the same result (held-out
    judging: torch_geometric's `segment_matmul` / `softmax_csr` / fused heterogeneous linear paths and
    kornia's CPU-only pyramid and CUDA median choices, all judged equal)."""
    class V(cst.CSTVisitor):
        found = False

        def _flag(self, name: str) -> None:
            if _OPTIONAL_FLAG.match(name):
                self.found = True

        def visit_Name(self, n: cst.Name) -> None:
            self._flag(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> None:
            self._flag(n.attr.value)
            # `x.device.type == "cpu"`, `x.is_cuda`: a kernel for one device, the rest computes the same
            if n.attr.value in ("is_cuda", "is_cpu", "is_mps") or (
                    n.attr.value == "type" and isinstance(n.value, cst.Attribute) and n.value.attr.value == "device"):
                self.found = True

        def visit_Call(self, n: cst.Call) -> None:
            name = n.func.attr.value if isinstance(n.func, cst.Attribute) else n.func.value if isinstance(n.func, cst.Name) else ""
            if _AVAILABLE_CALL.match(name):
                self.found = True

    v = V()
    test.visit(v)
    return v.found


# `WITH_GMM`, `_HAS_FLASH_ATTN`, `HAS_TRITON`, `APEX_AVAILABLE`, `_FLASH_AVAILABLE`: optional-extension flags
_OPTIONAL_FLAG = re.compile(r"^_?(?:(?:WITH|HAS|USE)_[A-Z0-9_]+|[A-Z0-9_]+_AVAILABLE)$")
_AVAILABLE_CALL = re.compile(r"^_?is_\w+_available$")


def tested_devices(test: cst.BaseExpression) -> frozenset[str]:
    """The device types an `if` test checks an input to be on, for its body: `x.device.type == "mps"`,
    `x.is_cuda`, through `and`.  Code there that moves a tensor to that device (`.to("mps")`, `.cuda()`)
    follows the input's device (pytorch_forecasting's MPS interpolation fallback, judged on held-out code)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return tested_devices(test.left) | tested_devices(test.right)
    if isinstance(test, cst.Attribute) and test.attr.value in ("is_cuda", "is_mps", "is_xpu"):
        return frozenset({test.attr.value[3:]})
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal):
        sides = (test.left, test.comparisons[0].comparator)
        for side, other in (sides, sides[::-1]):
            if (isinstance(side, cst.Attribute) and side.attr.value == "type" and isinstance(side.value, cst.Attribute)
                    and side.value.attr.value == "device" and isinstance(other, cst.SimpleString)):
                value = other.evaluated_value
                if isinstance(value, str):
                    return frozenset({value})
    return frozenset()


def predicate_function(fn: cst.CSTNode) -> bool:
    """A function that only answers a yes / no question (`def is_in_onnx_export(): if is_compiling():
    return False; return torch.onnx.is_in_onnx_export()`): every `return` gives a bool literal, a
    comparison, a `not` / `and` / `or`, or another `is_*` / `has_*` predicate.  A branch in it decides
    the answer, not what the model computes; the branch that uses the answer is the one judged
    (torch_geometric's wrapper, judged not a divergence on held-out code)."""
    if not isinstance(fn, cst.FunctionDef) or not _PREDICATE_NAME.match(fn.name.value):
        return False

    class V(cst.CSTVisitor):
        returns = 0
        boolean = True

        def visit_Return(self, n: cst.Return) -> None:
            self.returns += 1
            if not _boolean_expr(n.value):
                self.boolean = False

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

    v = V()
    fn.body.visit(v)
    return v.returns > 0 and v.boolean


_PREDICATE_NAME = re.compile(r"^_*(?:is|has|should|can|use|needs?)_")


def _boolean_expr(value: cst.BaseExpression | None) -> bool:
    if value is None:
        return False
    if isinstance(value, cst.Name):
        return value.value in ("True", "False")
    if isinstance(value, (cst.Comparison, cst.BooleanOperation)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return isinstance(value.operator, cst.Not)
    if isinstance(value, cst.Call):
        func = value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        return name == "bool" or bool(_PREDICATE_NAME.match(name))
    return False


def alternative_returns(node: cst.If, fn: cst.CSTNode) -> bool:
    """`if is_compiling(): return F.avg_pool2d(...)` with the function computing its result another way
    after it (or in the `else`): two computations of the returned value, like
    :func:`alternative_arms` (held-out judging took kornia's and diffusers' export-friendly variants,
    cache look-ups included, as the same computation).  Not when the arm hands back an input
    unchanged or a literal (`if is_in_onnx_export(): return logits` skips the softmax the other path
    applies): that path provably computes something else."""
    if isinstance(node.orelse, cst.If) or not isinstance(fn, cst.FunctionDef):
        return False
    if _computed_return(body_statements(node.body)) is not True:
        return False
    top = body_statements(fn.body)
    if isinstance(node.orelse, cst.Else):
        other = _computed_return(body_statements(node.orelse.body))
    elif node in top:
        other = _computed_return(top[top.index(node) + 1:])  # what the function does after the `if`
    else:
        return True  # a nested `if`: what follows it is not one block
    return other is True


def _computed_return(block: list) -> bool | None:
    """Does ``block`` end by returning a value it computes (True), or one it hands back unchanged
    (`return logits`) or a literal (False)?  None: it does not end in a `return`."""
    last = block[-1] if block else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        return None
    value = last.body[-1].value
    if value is None or literal(value)[0]:
        return False
    if isinstance(value, cst.Name):
        bound = _bound_names(cst.IndentedBlock(body=block[:-1])) if len(block) > 1 else None
        return bool(bound) and value.value in bound  # computed in this very block
    return True


def _bound_names(body: cst.BaseSuite) -> set[str] | None:
    """Names a block binds by assignment; None when it returns or raises."""

    class V(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: set[str] = set()
            self.leaves = False

        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            self.names |= _target_names(n.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            self.names |= _target_names(n.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            self.names |= _target_names(n.target)

        def visit_Call(self, n: cst.Call) -> None:
            # `result.add_(left, alpha=k)`: an in-place update binds `result` anew
            f = n.func
            if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.attr.value.endswith("_")
                    and not f.attr.value.startswith("_")):
                self.names.add(f.value.value)

        def visit_Return(self, n: cst.Return) -> None:
            self.leaves = True

        def visit_Raise(self, n: cst.Raise) -> None:
            self.leaves = True

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return False

    v = V()
    body.visit(v)
    return None if v.leaves else v.names


def _target_names(t: cst.BaseExpression) -> set[str]:
    if isinstance(t, cst.Name):
        return {t.value}
    if isinstance(t, (cst.Tuple, cst.List)):
        return {n for e in t.elements for n in _target_names(e.value)}
    return set()


_OVERWRITTEN = NodeMemo()


def overwritten_arm(node: cst.If, fn: cst.CSTNode) -> bool:
    """An `if` without `else` whose arm only logs and rebinds names that the code after it rebinds
    before reading them: CSM's `if position_ids is not None and not is_torchdynamo_compiling():
    logger.warning(...); position_ids = None`, then `position_ids = torch.arange(...)` — taken or not,
    the outputs are the same."""
    if node.orelse is not None:
        return False
    return _OVERWRITTEN.get(node, lambda: _overwritten_arm(node, fn))


def _stored_names(stmt: cst.CSTNode) -> list[str] | None:
    """`a = b = <expr>` as a simple statement: the names it binds (None: anything else)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    targets = [t.target for t in stmt.body[0].targets]
    return [t.value for t in targets] if all(isinstance(t, cst.Name) for t in targets) else None


def _loads(tree: cst.CSTNode, name: str, skip_targets: bool) -> bool:
    class V(cst.CSTVisitor):
        found = False

        def visit_AssignTarget(self, n: cst.AssignTarget) -> bool:
            return not skip_targets

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                self.found = True

    v = V()
    tree.visit(v)
    return v.found


def _overwritten_arm(node: cst.If, fn: cst.CSTNode) -> bool:
    names: list[str] = []
    for stmt in body_statements(node.body):
        stored = _stored_names(stmt)
        if stored is not None:
            names += stored
        elif not is_logging_stmt(stmt):
            return False
    if not names:
        return False
    suite = _suite_of(node, fn)
    if suite is None:
        return False
    after = suite[suite.index(node) + 1:]
    for name in names:
        for stmt in after:
            stored = _stored_names(stmt)
            if stored is not None and name in stored and not _loads(stmt, name, skip_targets=True):
                break  # rebound before any read
            if _loads(stmt, name, skip_targets=False):
                return False
        else:
            return False  # still bound to the arm's value when the function returns
    return True


def _suite_of(node: cst.CSTNode, fn: cst.CSTNode) -> "list[cst.CSTNode] | None":
    class V(cst.CSTVisitor):
        suite: "list[cst.CSTNode] | None" = None

        def visit_IndentedBlock(self, n: cst.IndentedBlock) -> bool:
            if any(s is node for s in n.body):
                self.suite = list(n.body)
            return self.suite is None

    v = V()
    fn.visit(v)
    return v.suite


_EXITS = NodeMemo()


def may_exit_early(stmt: cst.CSTNode) -> bool:
    """Does a compound statement hold a `return` (or a `break` / `continue` of an enclosing loop),
    so that the statements after it may not run?  A `raise` does not count: an export that raises
    has failed anyway (validation guards).  Walks statements only (what can leave is a statement): a
    libcst visit of every expression in them cost a seventh of a model file's analysis."""
    return _EXITS.get(stmt, lambda: _leaves(stmt, isinstance(stmt, (cst.For, cst.While))))


def _leaves(stmt: cst.CSTNode, in_loop: bool) -> bool:
    if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(isinstance(s, cst.Return) or (not in_loop and isinstance(s, (cst.Break, cst.Continue))) for s in stmt.body)
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(stmt, (cst.For, cst.While)):
        in_loop = True  # its own break / continue stay inside it (its `else` too, as Python's visitor counted)
    return any(_leaves(child, in_loop) for child in _nested_statements(stmt))


def _nested_statements(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements directly inside a compound statement (its bodies, `elif` / `else` / `except` /
    `finally` / `case` arms)."""
    out: list[cst.CSTNode] = []

    def add(suite: cst.CSTNode | None) -> None:
        if suite is None:
            return
        if isinstance(suite, cst.SimpleStatementSuite):
            out.append(suite)
        elif isinstance(suite, cst.IndentedBlock):
            out.extend(suite.body)
        elif isinstance(suite, (cst.If, cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)):
            if isinstance(suite, cst.If):
                out.append(suite)  # an `elif`: a statement of its own
            else:
                add(suite.body)

    if isinstance(stmt, (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar)):
        add(stmt.body)
    if isinstance(stmt, (cst.If, cst.For, cst.While, cst.Try, cst.TryStar)):
        add(stmt.orelse)
    if isinstance(stmt, (cst.Try, cst.TryStar)):
        for handler in stmt.handlers:
            add(handler)
        add(stmt.finalbody)
    if isinstance(stmt, cst.Match):
        for case in stmt.cases:
            add(case)
    return out


_HELPER_PREFIXES = ("get_", "compute_", "build_", "prepare_", "make_", "create_", "_get_", "_compute_", "_build_", "_prepare_")


def config_gate(
    test: cst.BaseExpression, setting: "Callable[[cst.BaseExpression], tuple[str, object] | None]", negated: bool = False
) -> str | None:
    """`if self.crop_scale:` where `__init__(..., crop_scale=False)` does `self.crop_scale = crop_scale`
    (or `if crop_scale:` of a parameter that received it): the arm runs only with a non-default
    configuration.  ``setting`` says which constructor setting (parameter, default) an operand is,
    if any.  A description of the gate (for the finding's hint), or None.  Through `and` (every
    conjunct must hold), `not`, `==` / `!=` / `in` / `is None` / orderings against literals;
    ``negated``: for the `else` arm."""
    found = gating_setting(test, setting, negated)
    return None if found is None else describe_setting(*found)


def flag_definition(test: cst.BaseExpression, fn: cst.CSTNode) -> cst.BaseExpression | None:
    """The test a local flag stands for, when ``fn`` assigns it once from a test
    (`fold = self._max_length is not None and ids.size(1) > self._max_length` then `if fold:`:
    AllenNLP's long-sequence folding, decided by a setting); else None.  Not a parameter reassigned:
    it keeps the setting its own default makes it."""
    if not isinstance(test, cst.Name) or not isinstance(fn, cst.FunctionDef) or any(
            p.name.value == test.value for p in named_params(fn)):
        return None
    found: list[cst.BaseExpression] = []
    for stmt in iter_statements(fn.body):
        if any(isinstance(t, cst.Name) and t.value == test.value for t in _assigned(stmt)):
            if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1):
                return None  # `fold &= ...`, `fold: bool = ...`, `a = fold = ...`
            found.append(stmt.value)
    if len(found) == 1 and isinstance(found[0], (cst.BooleanOperation, cst.Comparison, cst.UnaryOperation)):
        return found[0]
    return None


def describe_setting(param: str, default: object) -> str:
    """How a hint names a setting: "`config.merger_times` (default 1)"."""
    return f"`{param}` (default {default!r})"


def gating_setting(
    test: cst.BaseExpression, setting: "Callable[[cst.BaseExpression], tuple[str, object] | None]", negated: bool = False
) -> tuple[str, object] | None:
    """The setting (parameter, default) whose default makes ``test`` fail (see :func:`config_gate`)."""
    if isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.And) and not negated:
            return gating_setting(test.left, setting) or gating_setting(test.right, setting)
        return None
    negate = negated
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negate = test.expression, not negate
    compare = None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        compare = test.comparisons[0]
        test = test.left
    not_none = False
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value in _NONE_TESTS and len(test.args) == 1:
        # `exists(self.sparse_topk)`: the `def exists(val): return val is not None` of lucidrains-style code
        not_none, test = True, test.args[0].value
    normalise = None
    if (isinstance(test, cst.Call) and not test.args and isinstance(test.func, cst.Attribute)
            and test.func.attr.value in _STR_NORMALISERS):
        # `approx.lower() == "scalespace"`: the setting's default, normalised the same way
        normalise, test = test.func.attr.value, test.func.value
    found = setting(test)
    if found is None:
        return None
    param, default = found
    if normalise is not None:
        if not isinstance(default, str):
            return None
        default = getattr(default, normalise)()
    if not_none:
        holds = default is not None
    elif compare is not None:
        ok, value = literal(compare.comparator)
        if not ok:
            return None
        op = compare.operator
        if isinstance(op, cst.Equal):
            holds = default == value
        elif isinstance(op, cst.NotEqual):
            holds = default != value
        elif isinstance(op, cst.In) and isinstance(value, (tuple, list, set)):
            holds = default in value
        elif isinstance(op, cst.NotIn) and isinstance(value, (tuple, list, set)):
            holds = default not in value
        elif isinstance(op, cst.Is) and value is None:
            holds = default is None
        elif isinstance(op, cst.IsNot) and value is None:
            holds = default is not None
        elif type(op) in _ORDERINGS and _is_number(default) and _is_number(value):
            holds = _ORDERINGS[type(op)](default, value)  # `if chunk_size > 0:` with the default 0
        else:
            return None
    else:
        holds = bool(default)
    if negate:
        holds = not holds
    return None if holds else (param, default)


_STR_NORMALISERS = ("lower", "upper", "strip", "casefold")
_NONE_TESTS = ("exists", "is_not_none")


def named_params(fn: cst.FunctionDef) -> list[cst.Param]:
    """A function's parameters that callers can pass by name (positional-only ones excluded)."""
    return list(fn.params.params) + list(fn.params.kwonly_params)


_ORDERINGS: dict[type, Callable[[Any, Any], bool]] = {
    cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge, cst.LessThan: operator.lt, cst.LessThanEqual: operator.le,
}


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_NAMED_LITERALS = {"True": True, "False": False, "None": None}


def literal(node: cst.BaseExpression) -> tuple[bool, object]:
    """(True, value) of a literal expression (`False`, `'centered'`, `(1, 2)`), else (False, None)."""
    # the common forms directly (generating the code of a node to read it back costs more)
    if isinstance(node, cst.Name):
        return (True, _NAMED_LITERALS[node.value]) if node.value in _NAMED_LITERALS else (False, None)
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) and not node.lpar:
        return True, node.evaluated_value
    if isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        items = [literal(e.value) for e in node.elements]
        if all(ok for ok, _ in items):
            values = [v for _, v in items]
            return True, tuple(values) if isinstance(node, cst.Tuple) else values
        return False, None
    if (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, (cst.Integer, cst.Float)) and not node.expression.lpar):
        return True, -node.expression.evaluated_value
    if isinstance(node, (cst.Attribute, cst.Subscript, cst.Lambda, cst.Comparison, cst.BooleanOperation)) or (
            isinstance(node, cst.Call) and not (isinstance(node.func, cst.Name) and node.func.value == "set")):
        return False, None  # never literals (what literal_eval rejects; it reads `set()`)
    try:
        return True, ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def constructor_default(cls: "ClassInfo", attr: str, field_name: str | None = None) -> tuple[str, object] | None:
    """(parameter, literal default) when `self.<attr>` is only ever set to an `__init__` parameter.
    With ``field_name``: `self.<attr>` is the configuration object (`self.config = config`) and the
    setting is its field (`self.config.output_attentions`), with the configuration class's default;
    a model whose `__init__(self, config)` hands it to a base class out of reach (transformers'
    `PreTrainedModel` sets `self.config`) reads it too."""
    for c in cls.iter_mro():
        if c.file is not cls.file and not c.loaded:
            if field_name is not None and _takes_required(cls, attr):
                return config_default(cls, field_name)
            return None
        c.scan_attrs()
        exprs = c.attr_exprs.get(attr)
        if not exprs:
            continue
        if len(exprs) != 1:
            return None if field_name is not None else _toggled_default(c, attr, exprs)
        init = c.methods.get("__init__")
        if init is None:
            return None
        params = named_params(init)
        expr = exprs[0]
        # the configuration is the model's (next to ``cls``), also when a base class in another folder
        # (transformers' `PreTrainedModel`) stores it
        if field_name is not None:
            if isinstance(expr, cst.Name) and any(p.name.value == expr.value and p.default is None for p in params):
                return config_default(cls, field_name)
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and any(p.name.value == expr.value.value for p in params):
            return config_default(cls, expr.attr.value)  # `self.quant_mode = config.quant_mode`
        field = _override_or_config(expr, params)
        if field is not None:
            # `self.use_fov_model = use_fov_model if use_fov_model is not None else self.config.use_fov_model`
            return config_default(cls, field)
        if not isinstance(expr, cst.Name) or expr.value in _NAMED_LITERALS:
            # `self.use_tiling = False`, turned on by a mixin's `enable_tiling()` in another file
            return _toggled_default(c, attr, exprs) if literal(expr)[0] else None
        for p in params:
            if p.name.value == expr.value and p.default is not None:
                ok, value = literal(p.default)
                # an optional part (`keypoint_roi_pool=None`) can be set on the built object later
                # (torchvision's KeypointRCNN does `roi_heads.keypoint_roi_pool = ...`): not a setting; a number
                # or flag that is None unless given (`num_kv_heads_test: int | None = None`: TabPFN) is one, unless
                # `__init__` works out another value for None
                if not ok or (value is None and not (
                        (_optional_scalar(c.file, p) or (p.annotation is None and _plain_value_attr(c, attr)))
                        and not _assigns_name(init, p.name.value))) or _passed_otherwise(c.file, p.name.value, value):
                    return None
                if _built_otherwise(c, p.name.value, value):
                    return None
                return p.name.value, value
        return None
    return None


def _plain_value_attr(cls: "ClassInfo", attr: str) -> bool:
    """Is `self.<attr>` only ever tested or handed on, never called or read into (`self.remap` of taming's
    `VectorQuantizer2(..., remap=None)`, a file to load: `if self.remap is not None:`)?  A part a caller
    fills in later is used as one (`self.keypoint_roi_pool(features, ...)`, `self.head.num_classes`)."""
    used = False

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal used
            used = used or _self_attr(node.func, attr)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            nonlocal used
            used = used or _self_attr(node.value, attr)

    for fn in cls.methods.values():
        fn.body.visit(V())
    return not used


def _self_attr(node: cst.BaseExpression, attr: str) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" and node.attr.value == attr


def _optional_scalar(file: "FileIndex", p: cst.Param) -> bool:
    """`n: int | None = None`, `scale: Optional[float] = None`: a number, flag or name that may be left
    unset, never a part a caller fills in later."""
    if p.annotation is None:
        return False
    text = file.code(p.annotation.annotation).replace(" ", "")
    if text in _SCALAR_TYPES:
        return True  # `max_length: int = None` (AllenNLP): the annotation leaves out the None its default is
    for wrapper in ("typing.Optional[", "Optional["):
        if text.startswith(wrapper) and text.endswith("]"):
            return text[len(wrapper):-1] in _SCALAR_TYPES
    parts = [t for t in text.split("|") if t != "None"]
    return len(parts) == 1 and parts[0] in _SCALAR_TYPES and "None" in text.split("|")


_SCALAR_TYPES = ("int", "float", "bool", "str")


def _toggled_default(cls: "ClassInfo", attr: str, exprs: list[cst.BaseExpression]) -> tuple[str, object] | None:
    """(`self.<attr>`, its `__init__` literal) for a switch that `__init__` sets to a literal and other
    methods only flip to literals (diffusers' `self.use_tiling = False`, turned on by
    `enable_tiling()`; forward never sets it): code under `if self.use_tiling:` is a non-default path."""
    init = cls.methods.get("__init__")
    forward = cls.methods.get("forward")
    if init is None:
        return None
    if forward is not None and _assigns_self_attr(forward, attr):
        return None
    # one unconditional assignment in `__init__` (not `if pos_embed == ...: self.pos_embed_type = 'learned'`
    # choosing among literals by a constructor argument)
    inits = [stmt for stmt in iter_statements(init.body) if _assigns_self_attr_stmt(stmt, attr)]
    top = [small for line in body_statements(init.body) if isinstance(line, cst.SimpleStatementLine) for small in line.body]
    if len(inits) != 1 or inits[0] not in top or not isinstance(inits[0], cst.Assign) or len(inits[0].targets) != 1:
        return None
    empty = _empty_container(inits[0].value)
    if empty is not None:
        # a collection `__init__` starts empty and only other methods fill (T5's `self.pruned_heads = set()`,
        # grown by `prune_heads()`): code under `if self.pruned_heads:` runs only after such a call
        return f"self.{attr}", empty
    if not all(literal(e)[0] for e in exprs):
        return None
    ok, value = literal(inits[0].value)
    return (f"self.{attr}", value) if ok and (value is None or isinstance(value, (bool, int, float, str))) else None


def _empty_container(node: cst.BaseExpression) -> object | None:
    """The empty collection ``node`` builds (`set()`, `[]`, `{}`, `dict()`, `list()`), or None."""
    if isinstance(node, cst.List) and not node.elements:
        return []
    if isinstance(node, cst.Dict) and not node.elements:
        return {}
    if isinstance(node, cst.Call) and not node.args and dotted(node.func) in ("set", "list", "dict", "tuple"):
        return {"set": set(), "list": [], "dict": {}, "tuple": ()}[dotted(node.func)]
    return None


def _assigns_name(fn: cst.FunctionDef, name: str) -> bool:
    """Does ``fn`` assign the local ``name`` (`if lo is None: lo = "lm" if ... else "dlt"`: None stands for a
    value worked out here, kornia's RANSAC)?"""
    return any(isinstance(t, cst.Name) and t.value == name for stmt in iter_statements(fn.body) for t in _assigned(stmt))


def _assigned(stmt: cst.CSTNode) -> list[cst.BaseExpression]:
    """The targets ``stmt`` assigns (none unless it is an assignment)."""
    if isinstance(stmt, cst.Assign):
        return [x.target for x in stmt.targets]
    return [stmt.target] if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)) else []


def _assigns_self_attr(fn: cst.FunctionDef, attr: str) -> bool:
    return any(_assigns_self_attr_stmt(stmt, attr) for stmt in iter_statements(fn.body))


def _assigns_self_attr_stmt(stmt: cst.CSTNode, attr: str) -> bool:
    """Does ``stmt`` assign `self.<attr>`?"""
    return any(isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" and t.attr.value == attr
               for t in _assigned(stmt))


def _takes_required(cls: "ClassInfo", name: str) -> bool:
    """Does the first `__init__` of ``cls``'s line take a parameter ``name`` without a default?"""
    for c in cls.iter_mro():
        init = c.methods.get("__init__")
        if init is not None:
            return any(p.name.value == name and p.default is None for p in named_params(init))
        if c.file is not cls.file and not c.loaded:
            return False
    return False


_CALLS = NodeMemo(64)


def class_arguments(cls: "ClassInfo", param: str) -> list[cst.BaseExpression] | None:
    """What the calls building ``cls`` in its own file pass for its `__init__` parameter ``param``
    (HF Swin: `SwinStage(..., downsample=SwinPatchMerging if i < n - 1 else None)`), with the
    parameter's default when a call does not pass it; None when ``param`` is not a parameter of
    its `__init__`, the file's syntax is not at hand or no call builds it."""
    init = cls.methods.get("__init__")
    if init is None:
        return None
    params = (list(init.params.posonly_params) + list(init.params.params))[1:]  # after `self`
    index = next((i for i, p in enumerate(params) if p.name.value == param), None)
    default = next((p.default for p in params + list(init.params.kwonly_params) if p.name.value == param), None)
    if index is None and default is None and not any(p.name.value == param for p in init.params.kwonly_params):
        return None
    # the file's syntax: the top-level statements of the module that call something named like the class
    # (found with Python's own parser: a libcst visit of a whole model file costs a third of a second), or
    # the classes already parsed (a file indexed lazily)
    module = cls.file.module
    if module is not None:
        sites = _CALL_SITES.get(module, lambda: _top_level_calls(cls.file, module))
        trees = [module] if sites is None else list(sites.get(cls.name, ()))
    else:
        trees = [c.node for c in cls.file.classes.values() if c.loaded]

    def collect(tree: cst.CSTNode) -> dict[str, list[cst.Call]]:
        found: dict[str, list[cst.Call]] = {}

        class V(cst.CSTVisitor):
            def visit_Call(self, n: cst.Call) -> None:
                name = dotted(n.func)
                if name is not None:
                    found.setdefault(name.rsplit(".", 1)[-1], []).append(n)

        tree.visit(V())
        return found

    out: list[cst.BaseExpression] = []
    calls = [c for tree in trees for c in _CALLS.get(tree, lambda: collect(tree)).get(cls.name, [])]
    for call in calls:
        if any(a.star for a in call.args):
            return None
        passed = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param), None)
        if passed is None and index is not None:
            positional = [a.value for a in call.args if a.keyword is None]
            passed = positional[index] if index < len(positional) else None
        passed = passed if passed is not None else default
        if passed is None:
            return None
        out.append(passed)
    return out or None


_CALL_SITES = NodeMemo(64)


def _top_level_calls(file: FileIndex, module: cst.Module) -> dict[str, dict[cst.CSTNode, None]] | None:
    """For each name a call in ``module`` is made through (`Foo(...)`, `layers.Foo(...)`: "Foo"), the
    statements holding such a call: top-level ones, or the members of a top-level class (its `__init__`
    that builds the part); None when Python's tree of the file is not at hand or does not line up."""
    tree = file.python_tree()
    if tree is None:
        return None
    tops = _line_up(module.body, tree.body)
    if tops is None:
        return None
    found: dict[str, dict[cst.CSTNode, None]] = {}  # in the file's order
    for py, node in tops:
        units = [(py, node)]
        if isinstance(py, ast.ClassDef) and isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
            units = _line_up(node.body.body, py.body) or units
        for py_unit, unit in units:
            for n in ast.walk(py_unit):
                if isinstance(n, ast.Call):
                    f = n.func
                    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
                    if name is not None:
                        found.setdefault(name, {})[unit] = None
    return found


def _line_up(body: "list[cst.CSTNode] | tuple[cst.CSTNode, ...]", py_body: list[ast.stmt]) -> list[tuple[ast.stmt, cst.CSTNode]] | None:
    """Python's statements next to libcst's (`a = 1; b = 2` is one libcst line of two statements); None
    when they do not line up."""
    owner: list[cst.CSTNode] = []
    for stmt in body:
        owner.extend([stmt] * (len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1))
    return list(zip(py_body, owner)) if len(owner) == len(py_body) else None


_KEYWORDS: dict[int, tuple[ast.Module, dict[str, list[ast.expr]], dict[str, list["ast.expr | None"]], frozenset[str]]] = {}


def handed_otherwise(cls: "ClassInfo", param: str, default: object) -> bool:
    """Does some call of ``cls``'s file pass ``param`` another value than ``default``, by keyword or when
    building ``cls``?"""
    return _passed_otherwise(cls.file, param, default) or _built_otherwise(cls, param, default)


def _passed_otherwise(file: FileIndex, param: str, default: object) -> bool:
    """Does a call in ``file`` pass ``param=`` something other than ``default`` (Canine builds its
    char encoder with `CanineLayer(..., local=True)`)?  True when the file's text is not at hand.
    Read with Python's own parser (a libcst visit of a large model file costs a tenth of a second)."""
    hit = _file_keywords(file)
    if hit is None:
        return True
    for value in hit[1].get(param, ()):
        if _forwarded(value, param, default):
            # `normalize_coords=normalize_coords` / `=self.normalize_coords`: the same setting handed on;
            # another value only when some function of the file declares it with another default, or
            # computes it (SwitchTransformers' `is_sparse = (i % sparse_step == 1 ...)` then `is_sparse=is_sparse`)
            if any(d is None or not _literal_is(d, default) for d in hit[2].get(param, ())):
                return True
            if isinstance(value, ast.Name) and value.id in hit[3]:
                return True
            continue
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and _field_default_is(file, value.attr, default):
            continue  # `num_kv_heads_test=config.icl_num_kv_heads_test` of a field with the same default (TabPFN)
        if isinstance(value, ast.Name) and _field_default_is(file, value.id, default):
            continue  # `average_upsampling=text_embedding_average_upsampling`, the builder's parameter of that default (F5-TTS)
        if not _literal_is(value, default):
            return True
    return False


def _field_default_is(file: FileIndex, name: str, default: object) -> bool:
    """Is ``name`` declared in ``file`` (a configuration field, a parameter) only ever with ``default``?"""
    hit = _file_keywords(file)
    declared = hit[2].get(name) if hit is not None else None
    return bool(declared) and all(d is not None and _literal_is(d, default) for d in declared)  # type: ignore[union-attr]


def _file_keywords(file: FileIndex) -> "tuple[ast.AST, dict[str, list[ast.expr]], dict[str, list[ast.expr | None]], frozenset[str]] | None":
    """The keyword arguments of every call in ``file``, the defaults every function and class field
    declares, by name, and the plain names some statement computes by a test or arithmetic (`is_sparse =
    (i % sparse_step == 1) if sparse_step > 0 else False`; not `dropout = config.dropout`); None when the
    file's text is not at hand."""
    tree = file.python_tree()
    if tree is None:
        return None
    hit = _KEYWORDS.get(id(file))
    if hit is None or hit[0] is not tree:
        found: dict[str, list[ast.expr]] = {}
        defaults: dict[str, list[ast.expr | None]] = {}
        computed: set[str] = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Compare, ast.BoolOp, ast.IfExp, ast.BinOp, ast.UnaryOp)):
                computed.update(t.id for t in n.targets if isinstance(t, ast.Name))
            elif isinstance(n, ast.Call):
                for k in n.keywords:
                    if k.arg is not None:
                        found.setdefault(k.arg, []).append(k.value)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = n.args
                positional = a.posonlyargs + a.args
                padded: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
                for arg, d in list(zip(positional, padded)) + list(zip(a.kwonlyargs, a.kw_defaults)):
                    defaults.setdefault(arg.arg, []).append(d)
            elif isinstance(n, ast.ClassDef):
                for field in n.body:  # a configuration dataclass's fields (`dynamic_img_pad: bool = False`)
                    if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and field.value is not None:
                        defaults.setdefault(field.target.id, []).append(field.value)
        if len(_KEYWORDS) > 64:
            _KEYWORDS.clear()
        hit = _KEYWORDS[id(file)] = (tree, found, defaults, frozenset(computed))
    return hit


def _built_otherwise(cls: "ClassInfo", param: str, default: object) -> bool:
    """Does a call building ``cls`` in its file pass ``param`` positionally as something other than its
    default: another literal, or a name the calling function computes (NLLB-MoE's
    `NllbMoeEncoderLayer(config, is_sparse, layer_idx=i)` after `is_sparse = (i + 1) % sparse_step == 0`)?"""
    passed = class_arguments(cls, param)
    if not passed:
        return False
    for value in passed:
        ok, literal_value = literal(value)
        if ok:
            if literal_value != default:
                return True
        elif isinstance(value, cst.Attribute) and value.attr.value == param:
            continue  # `Embeds(dynamic_img_pad=cfg.dynamic_img_pad)`: handed on (its defaults: _passed_otherwise)
        elif isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and _field_default_is(cls.file, value.attr.value, default):
            continue  # `Attention(num_kv_heads_test=config.icl_num_kv_heads_test)`: a field with the same default
        elif _getattr_of(value, param, default):
            continue  # `getattr(cfg, 'enable_patch_interpolator', False)`: the same, with the same default
        elif not (isinstance(value, cst.Name) and (value.value == param or _field_default_is(cls.file, value.value, default))
                  and not _assigned_in_caller(cls, value.value)):
            # `average_upsampling=text_embedding_average_upsampling`: the builder's parameter of the same default
            return True
    return False


def _getattr_of(value: cst.BaseExpression, param: str, default: object) -> bool:
    """`getattr(cfg, "<param>")` or `getattr(cfg, "<param>", <default>)`."""
    if not (isinstance(value, cst.Call) and dotted(value.func) == "getattr" and len(value.args) in (2, 3)
            and all(a.keyword is None and not a.star for a in value.args)):
        return False
    name = value.args[1].value
    if not (isinstance(name, cst.SimpleString) and name.evaluated_value == param):
        return False
    if len(value.args) == 2:
        return True
    ok, given = literal(value.args[2].value)
    return ok and given == default


def _assigned_in_caller(cls: "ClassInfo", name: str) -> bool:
    """Is ``name`` assigned (not only received as a parameter) in a function of ``cls``'s file that
    builds ``cls``?"""
    tree = cls.file.python_tree()
    if tree is None:
        return True
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        builds = any(
            isinstance(n, ast.Call) and (getattr(n.func, "id", None) == cls.name or getattr(n.func, "attr", None) == cls.name)
            for n in ast.walk(fn)
        )
        if builds and any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(fn)
        ):
            return True
    return False


def _forwarded(value: ast.expr, param: str, default: object) -> bool:
    """`x=x`, `x=self.x`, `x=cfg.x`, `x=getattr(cfg, 'x', <the default>)`: the same setting handed on."""
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr"
            and len(value.args) in (2, 3) and not value.keywords and isinstance(value.args[1], ast.Constant)
            and value.args[1].value == param):
        return len(value.args) == 2 or _literal_is(value.args[2], default)
    return (isinstance(value, ast.Name) and value.id == param) or (
        isinstance(value, ast.Attribute) and value.attr == param and isinstance(value.value, ast.Name))


def _literal_is(value: ast.expr, default: object) -> bool:
    try:
        return bool(ast.literal_eval(value) == default)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _override_or_config(expr: cst.BaseExpression, params: "list[cst.Param]") -> str | None:
    """`p if p is not None else config.f` / `... else self.config.f` with `p=None` an `__init__` parameter
    (a per-instance override of a configuration field): the field's name, or None."""
    if not (isinstance(expr, cst.IfExp) and isinstance(expr.body, cst.Name) and isinstance(expr.test, cst.Comparison)
            and len(expr.test.comparisons) == 1 and isinstance(expr.test.comparisons[0].operator, cst.IsNot)
            and isinstance(expr.test.left, cst.Name) and expr.test.left.value == expr.body.value
            and isinstance(expr.orelse, cst.Attribute)):
        return None
    if not any(p.name.value == expr.body.value and isinstance(p.default, cst.Name) and p.default.value == "None" for p in params):
        return None
    base = dotted(expr.orelse.value)
    return expr.orelse.attr.value if base in ("config", "self.config") else None


def config_default(cls: "ClassInfo", field_name: str) -> tuple[str, object] | None:
    """The literal default of ``field_name`` in the configuration class next to ``cls``
    (transformers' `configuration_<model>.py`: `def __init__(self, ..., quant_mode=False, ...)`),
    when the linted project holds exactly one such class that takes it."""
    project = cls.file.project
    if project is None:
        return None
    folder = os.path.dirname(os.path.abspath(cls.file.path))
    found: list[object] = []
    for path in _configuration_files(project).get(folder, ()):
        index = project.index(path)
        for config in (index.classes.values() if index is not None else ()):
            if not config.name.endswith("Config"):
                continue
            # the field may be declared by a base (transformers' `PreTrainedConfig.chunk_size_feed_forward = 0`)
            default = next((d for c in config.iter_mro() if (d := _config_field(c, field_name)) is not _MISSING), _MISSING)
            if default is not _MISSING:
                found.append(default)
    if len(found) != 1 or found[0] is _NOT_LITERAL:
        return None
    return f"config.{field_name}", found[0]


_CONFIG_FILES: dict[int, tuple[Any, dict[str, list[str]]]] = {}


def _configuration_files(project: Any) -> dict[str, list[str]]:
    """The linted `configuration_*.py` files by folder (computed once per project)."""
    hit = _CONFIG_FILES.get(id(project))
    if hit is None or hit[0] is not project:
        by_folder: dict[str, list[str]] = {}
        for path in project.paths:
            if os.path.basename(path).startswith("configuration_"):
                by_folder.setdefault(os.path.dirname(path), []).append(path)
        if len(_CONFIG_FILES) > 8:
            _CONFIG_FILES.clear()
        hit = _CONFIG_FILES[id(project)] = (project, by_folder)
    return hit[1]


_NOT_LITERAL = object()
_MISSING = object()


def _config_field(config: "ClassInfo", field_name: str) -> object:
    """A configuration class's default for ``field_name``: an `__init__` parameter's literal default
    (`None` included: `max_patch_length: int | None = None`), or a class-level `field: type = literal`
    (transformers 5's dataclass-style configs); ``_MISSING`` when the class does not take it,
    ``_NOT_LITERAL`` when the default is not a literal."""
    init = config.methods.get("__init__")
    for p in named_params(init) if init is not None else ():
        if p.name.value == field_name and p.default is not None:
            ok, value = literal(p.default)
            return value if ok else _NOT_LITERAL
    for method in (init, config.methods.get("__post_init__")):
        popped = _popped_default(method, field_name) if method is not None else _MISSING
        if popped is not _MISSING:
            return popped
    if field_name not in config.class_consts:
        return _MISSING
    body = config.node.body.body if isinstance(config.node.body, cst.IndentedBlock) else []
    for stmt in body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            target = small.target if isinstance(small, cst.AnnAssign) else small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
            if isinstance(target, cst.Name) and target.value == field_name and small.value is not None:
                ok, value = literal(small.value)
                return value if ok else _NOT_LITERAL
    return _MISSING


def _popped_default(init: cst.FunctionDef, field_name: str) -> object:
    """`self._output_attentions = kwargs.pop("output_attentions", False)` in a configuration's
    `__init__` / `__post_init__` (transformers' `PreTrainedConfig`): the field's default, read from the
    keyword arguments (a property may expose it)."""
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else []
    for stmt in body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
            if (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "pop"
                    and isinstance(value.func.value, cst.Name) and value.func.value.value == "kwargs" and len(value.args) == 2):
                ok, key = literal(value.args[0].value)
                if ok and key == field_name:
                    ok, default = literal(value.args[1].value)
                    return default if ok else _NOT_LITERAL
    return _MISSING


_FILLS = NodeMemo()


def fills_optional_input(node: cst.If, fn: cst.CSTNode) -> str | None:
    """Cached :func:`_fills_optional_input` (asked at every `if` the dataflow runs)."""
    return _FILLS.get(node, lambda: _fills_optional_input(node, fn))


def _fills_optional_input(node: cst.If, fn: cst.CSTNode) -> str | None:
    """`if position_ids is None: ... position_ids = self.get_rope_index(...)`: the arm computes the
    default of an optional input (a parameter of ``fn`` defaulting to None) with a helper
    (`get_*`, `compute_*`, `build_*`, `prepare_*`, ...) that callers, and the exporters of libraries
    that know the model, replace by passing the value precomputed.  Its name, or None."""
    if not isinstance(fn, cst.FunctionDef):
        return None
    # `if position_ids is None:`, or one conjunct of an `and` (`attention_mask is not None and position_ids is None`)
    conjuncts, test = [], node.test
    while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        conjuncts.append(test.right)
        test = test.left
    conjuncts.append(test)
    params = list(fn.params.params) + list(fn.params.kwonly_params)
    optional = {p.name.value for p in params if isinstance(p.default, cst.Name) and p.default.value == "None"}
    tested = [t.left.value for t in reversed(conjuncts)
              if isinstance(t, cst.Comparison) and len(t.comparisons) == 1 and isinstance(t.comparisons[0].operator, cst.Is)
              and isinstance(t.comparisons[0].comparator, cst.Name) and t.comparisons[0].comparator.value == "None"
              and isinstance(t.left, cst.Name) and t.left.value in optional]
    if len(tested) != 1:
        return None
    name = tested[0]

    class Assigns(cst.CSTVisitor):
        found = False

        def visit_Assign(self, n: cst.Assign) -> None:
            helper = (dotted(n.value.func) or "").rsplit(".", 1)[-1] if isinstance(n.value, cst.Call) else ""
            if not helper.startswith(_HELPER_PREFIXES):
                return  # `encoder_outputs = self.encoder(...)`: the model itself, not a precomputable helper
            for t in n.targets:
                targets = [e.value for e in t.target.elements] if isinstance(t.target, (cst.Tuple, cst.List)) else [t.target]
                self.found |= any(isinstance(x, cst.Name) and x.value == name for x in targets)

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return False

    v = Assigns()
    node.body.visit(v)
    return name if v.found else None


# Code written for the flash-attention kernels (`_flash_attention_forward`, `FalconFlashAttention2`,
# `flash_attn_varlen_func` wrappers): they need CUDA and a non-default attention implementation, so a
# CPU export with the default (`eager` / `sdpa`) never runs them.
_FLASH_KERNEL = re.compile(r"flash_?attn|flash_?attention", re.IGNORECASE)


def kernel_gate(fn: cst.CSTNode, cls: ClassInfo | None) -> str | None:
    """The non-default setting a function written for the flash-attention kernels needs, or None."""
    name = fn.name.value if isinstance(fn, cst.FunctionDef) else ""
    if _FLASH_KERNEL.search(name) or (cls is not None and _FLASH_KERNEL.search(cls.name)):
        return "attention implementation (flash attention, which needs CUDA; the default is `sdpa` / `eager`)"
    return None


_BYPASS = NodeMemo()


def precomputed_bypass(fn: cst.CSTNode) -> str | None:
    """Cached :func:`_precomputed_bypass` (asked for every event the dataflow emits)."""
    return _BYPASS.get(fn, lambda: _precomputed_bypass(fn))


def _precomputed_bypass(fn: cst.CSTNode) -> str | None:
    """The key of a value the caller can hand in precomputed, when the function starts by returning
    it (transformers' vision helpers: `if kwargs is not None and (ids := kwargs.pop("position_ids",
    None)) is not None: return ids`): the rest of the function is the eager fallback, which an
    exporter that precomputes the value outside the graph never runs."""
    if not isinstance(fn, cst.FunctionDef):
        return None
    popped: dict[str, str] = {}  # variable -> key

    def key_of(call: cst.BaseExpression) -> str | None:
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("pop", "get")
                and call.args and isinstance(call.args[0].value, cst.SimpleString)):
            key = call.args[0].value.evaluated_value
            return key if isinstance(key, str) else None
        return None

    class Walrus(cst.CSTVisitor):
        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            key = key_of(n.value)
            if key is not None and isinstance(n.target, cst.Name):
                popped[n.target.value] = key

    def returned_keys(ret: cst.BaseExpression | None) -> list[str]:
        names = [e.value for e in ret.elements] if isinstance(ret, cst.Tuple) else [ret]
        keys = [popped.get(n.value) for n in names if isinstance(n, cst.Name)]
        return [k for k in keys if k] if len(keys) == len(names) and all(keys) else []

    def scan(stmts: list, depth: int) -> str | None:
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                        key = key_of(small.value)
                        if key is not None:
                            popped[small.targets[0].target.value] = key
                continue
            if not isinstance(stmt, cst.If):
                continue
            stmt.test.visit(Walrus())
            body = body_statements(stmt.body)
            if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
                ret = body[0].body[0]
                keys = returned_keys(ret.value) if isinstance(ret, cst.Return) else []
                if keys:
                    return " / ".join(keys)
            if depth < 1:  # `if kwargs is not None: a = kwargs.pop("a"); ... if a is not None: return a`
                found = scan(body, depth + 1)
                if found:
                    return found
        return None

    return scan(body_statements(fn.body)[:4], 0)


_CHECK_FUNCTIONS = NodeMemo()


_MUTATING_METHODS = {"append", "extend", "insert", "update", "pop", "popitem", "setdefault", "clear", "remove", "add",
                     "discard", "register_buffer", "setattr"}


def is_check_function(fn: cst.CSTNode) -> bool:
    """A function that only validates: it returns nothing (bare `return`s), yields nothing and
    changes nothing outside itself (no attribute / subscript stores, no in-place tensor methods).
    Whatever path a branch in it takes, the model's outputs are the same (transformers'
    `torch_compilable_check`, `warn_if_padding_and_no_attention_mask`)."""
    if not isinstance(fn, cst.FunctionDef):
        return False
    return _CHECK_FUNCTIONS.get(fn, lambda: _only_validates(fn))


def _only_validates(fn: cst.FunctionDef) -> bool:
    class V(cst.CSTVisitor):
        pure = True

        def visit_Return(self, n: cst.Return) -> None:
            if n.value is not None and not (isinstance(n.value, cst.Name) and n.value.value == "None"):
                self.pure = False

        def visit_Yield(self, n: cst.Yield) -> None:
            self.pure = False

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return False  # a local helper (`def msg_callable(): return msg`): judged where it is called

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            if not isinstance(n.target, (cst.Name, cst.Tuple, cst.List)):
                self.pure = False

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            if not isinstance(n.target, cst.Name):
                self.pure = False

        def visit_Global(self, n: cst.Global) -> None:
            self.pure = False

        def visit_Nonlocal(self, n: cst.Nonlocal) -> None:
            self.pure = False

        def visit_Call(self, n: cst.Call) -> None:
            name = (dotted(n.func) or "").rsplit(".", 1)[-1]
            if (name.endswith("_") and not name.startswith("_")) or name in _MUTATING_METHODS:
                self.pure = False  # x.add_(...), index_put_, out.append(...): changes something

    v = V()
    fn.body.visit(v)
    return v.pure


def takes_a_python_object(cls: ClassInfo) -> bool:
    """A forward that requires an instance of a plain Python class of the project
    (`forward(self, inference_session: Sam3VideoInferenceSession, ...)`), a function to call
    (`fn: Callable`, or a parameter the body calls) or text (`sentences: List[List[str]]`): no exporter
    can be handed that input as one the model's tensors follow, so the module is not an export root (what it calls is still analysed from there
    when another root reaches it)."""
    found = cls.find_method("forward")
    if found is None:
        return False
    defining, fn = found
    params = list(fn.params.posonly_params) + list(fn.params.params)
    words = _plain_calls(defining.file)
    may_call = words is None or any(p.name.value in words for p in params[1:] if p.default is None)
    called = _called_names(fn) if may_call else set()
    for p in params[1:]:
        if p.default is None and p.name.value in called:
            return True  # a function to call (a diffusion sampler's `forward(self, noise, fn, sigmas, num_steps)`)
        if p.default is not None or p.annotation is None:
            continue
        if _text_only(p.annotation.annotation):
            # text to tokenise in the forward (stanza's lemma classifier, `sentences: List[List[str]]`): every
            # tensor is built from host data there, so no dim of it can be dynamic in an export
            return True
        name = defining.file.code(p.annotation.annotation).replace(" ", "").strip("'\"")
        if name.split("[", 1)[0].rsplit(".", 1)[-1] == "Callable":
            return True
        if "[" in name or "|" in name:
            continue
        target = defining.file.classes.get(name.rsplit(".", 1)[-1])
        if target is None and defining.file.project is not None:
            qual = defining.file.qualify(p.annotation.annotation)
            target = defining.file.project.find_class(qual) if qual else None
        if (target is not None and not target.is_module() and "__init__" in target.method_names
                and not target.name.endswith(("Tensor", "Output", "Config"))):
            return True  # a hand-written stateful object (a dataclass of tensors can be a pytree input)
    return False


_COLLECTIVES = {"all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "broadcast", "broadcast_object_list",
                "reduce", "reduce_scatter", "reduce_scatter_tensor", "barrier", "all_to_all", "all_to_all_single", "gather", "scatter"}


_COLLECTIVE_CALL = re.compile(
    r"\.(all_gather|all_gather_into_tensor|all_gather_object|all_reduce|broadcast|broadcast_object_list|reduce_scatter"
    r"|reduce_scatter_tensor|barrier|all_to_all|all_to_all_single)\(")


def calls_collectives(fn: cst.CSTNode, file: "FileIndex") -> bool:
    """Does ``fn`` call a `torch.distributed` collective on every path, in a statement of its own body
    (`dist.all_gather(...)`, `torch.distributed.broadcast(idx_shuffle, src=0)`)?  Such a function is
    distributed-training code (MoCo's DDP batch shuffle, a contrastive loss gathering embeddings from
    every GPU): no export runs it.  A collective under a test (`if self.training and dist.is_initialized():`)
    says nothing of the rest.  Read once per file with Python's parser (the `def` lines of such functions)."""
    if not isinstance(fn, cst.FunctionDef):
        return False  # a lambda's body is one expression
    defs = file_fact(file, "collective_defs", _collective_defs)
    return bool(defs) and file.start(fn.name)[0] in defs


def _collective_defs(file: "FileIndex") -> frozenset[int]:
    text = file._text
    if text is not None and ("distributed" not in text or not _COLLECTIVE_CALL.search(text)):
        return frozenset()  # no collective called anywhere in the file
    tree = file.python_tree()
    if tree is None:
        return frozenset()
    lines = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in node.body:
            if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)) and any(
                    isinstance(c, ast.Call) and _is_collective(file, c.func) for c in ast.walk(stmt)):
                lines.add(node.lineno)
                break
    return frozenset(lines)


def _is_collective(file: "FileIndex", func: ast.expr) -> bool:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or not parts:
        return False
    qual = file.qualify_name(".".join([func.id, *reversed(parts)]))
    return qual is not None and qual.startswith("torch.distributed.") and parts[0] in _COLLECTIVES


_PLAIN_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\((?!`)")  # not a docstring's "hidden_states (`torch...`)"


def _plain_calls(file: "FileIndex") -> "frozenset[str] | None":
    """Every name the file's text calls as a plain name (`fn(`), read once per file; None without the text."""
    return file_fact(file, "plain_calls", lambda f: None if f._text is None else frozenset(_PLAIN_CALL.findall(f._text)))


def _called_names(fn: cst.FunctionDef) -> set[str]:
    """The plain names ``fn``'s body calls (`fn(x, sigma=s)`); visited only when the file's text calls one of
    the names asked about (`_plain_calls`)."""
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name):
                names.add(node.func.value)

    fn.body.visit(V())
    return names


# Parameters that only ever hold ground truth (a required `labels` can be a model's input: class
# labels of a conditional generator, the values `labels.unique()` counts)
_GROUND_TRUTH = re.compile(r"^(targets?|gts?|ground_truth|y_true)$|^(batch_)?gt_|_gt_|_targets$")


def requires_targets(cls: ClassInfo) -> bool:
    """A forward that cannot run without ground truth (`forward(self, points, gt_instances, mask)` of
    a target assigner, `forward(self, preds, targets)`): a training module, not an export root (a
    target with a default, `targets=None`, is an option export leaves off instead)."""
    found = cls.find_method("forward")
    if found is None:
        return False
    _, fn = found
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if any(p.default is None and _GROUND_TRUTH.search(p.name.value) for p in params[1:]):
        return True
    # A forward beside the class's own inference method that requires inputs the inference method
    # does without (Coqui TTS / ESPnet / torchaudio: Tacotron2's decoder `forward(inputs, memories,
    # mask)` teacher-forced on target mels next to `inference(inputs)`; an acoustic model's
    # `forward(tokens, src_lens, mels, mel_lens, pitches, ...)`): those inputs are ground truth and
    # the forward a training step; the inference method is what gets exported.
    for name in _INFERENCE_METHODS:
        other = cls.find_method(name)
        if other is None:
            continue
        _, infer = other
        accepted = {p.name.value for p in list(infer.params.posonly_params) + list(infer.params.params) + list(infer.params.kwonly_params)}
        if isinstance(infer.params.star_kwarg, cst.Param) or _calls_forward(infer):
            return False  # ESMFold's `infer(sequences)` tokenises strings and calls `self.forward(aa, ...)`
        if any(p.default is None and p.name.value not in accepted for p in params[1:]):
            return True
        # `forward(self, inputs)` unpacking `text, text_lengths, mels, max_len, output_lengths = inputs` beside
        # `inference(self, inputs)` (NVIDIA's Tacotron2 in speechbrain and fairseq's GSLM): a forward that
        # neither calls the inference method nor is called by it is the teacher-forced twin
        return _unpacks_targets(fn)
    return False


def _unpacks_targets(fn: cst.FunctionDef) -> bool:
    """Does ``fn`` unpack a parameter into names of which one is ground truth (`mels`, `targets`,
    `gate_padded`, `output_lengths`)?"""
    params = {p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)}
    for stmt in body_statements(fn.body)[:4]:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name)
                    and small.value.value in params and isinstance(small.targets[0].target, (cst.Tuple, cst.List))):
                names = [e.value.value for e in small.targets[0].target.elements if isinstance(e.value, cst.Name)]
                if any(_GROUND_TRUTH.search(n) or _TARGET_NAMES.search(n) for n in names):
                    return True
    return False


def _calls_forward(fn: cst.FunctionDef) -> bool:
    """`self(...)` or `self.forward(...)` somewhere in ``fn``."""
    found = False

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            found = found or dotted(node.func) in ("self", "self.forward")

    fn.body.visit(V())
    return found


_INFERENCE_METHODS = ("inference", "infer")
# names a training step unpacks its ground truth into (Tacotron2's `mels`, `gate_padded`, `output_lengths`)
_TARGET_NAMES = re.compile(r"^(mels?|mel_targets?|gate(_padded|_target)?|output_lengths|durations?)$")


_LOSS_NAME = re.compile(r"(^|_)loss(es)?($|_)")


def returns_text(cls: ClassInfo) -> bool:
    """A forward annotated to return text (`-> list[str]`, `-> str`, `-> Optional[List[str]]`: torchani's
    `AtomicNumbersToChemicalSymbols`, a tokenizer or label decoder): no exporter has string outputs, so it
    runs around the exported model, never as one (the parts it calls are analysed from their own models)."""
    found = cls.find_method("forward")
    returns = found[1].returns if found is not None else None
    return returns is not None and _text_only(returns.annotation)


_TEXT_WRAPPERS = {"list", "List", "tuple", "Tuple", "Optional", "Sequence", "typing.List", "typing.Tuple",
                  "typing.Optional", "typing.Sequence"}


def _text_only(node: cst.BaseExpression) -> bool:
    """Is every leaf of an annotation `str` (`list[str]`, `Tuple[str, ...]`, `Optional[str]`)?"""
    if isinstance(node, cst.Name):
        return node.value == "str"
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):  # `str | None`
        parts = [p for p in (node.left, node.right) if not (isinstance(p, cst.Name) and p.value == "None")]
        return bool(parts) and all(_text_only(p) for p in parts)
    if isinstance(node, cst.Subscript) and dotted(node.value) in _TEXT_WRAPPERS:
        leaves = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        leaves = [v for v in leaves if not (isinstance(v, cst.Ellipsis) or (isinstance(v, cst.Name) and v.value == "None"))]
        return bool(leaves) and all(_text_only(v) for v in leaves)
    return False


def returns_a_loss(cls: ClassInfo) -> bool:
    """A forward that ends by returning a loss first (`return loss, stats, weight`, `return {"loss":
    loss, ...}`: ESPnet's task models, GAN codec and TTS training steps), also through the methods
    its last statement returns (`if forward_generator: return self._forward_generator(...) else:
    return self._forward_discriminator(...)`): a training step, not an export root (the parts it
    calls are analysed from the model that uses them)."""
    found = cls.find_method("forward")
    return found is not None and _ends_returning_a_loss(cls, found[1], 2)


def _ends_returning_a_loss(cls: ClassInfo, fn: cst.FunctionDef, depth: int) -> bool:
    body = body_statements(fn.body)
    last = body[-1] if body else None
    if isinstance(last, cst.If) and isinstance(last.orelse, cst.Else):
        arms = [body_statements(last.body), body_statements(last.orelse.body)]
        ends = [a[-1] for a in arms if a]
    else:
        ends = [last] if last is not None else []
    for end in ends:
        if not (isinstance(end, cst.SimpleStatementLine) and isinstance(end.body[-1], cst.Return)):
            continue
        value = end.body[-1].value
        if (depth > 0 and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and isinstance(value.func.value, cst.Name) and value.func.value.value == "self"):
            method = cls.find_method(value.func.attr.value)
            if method is not None and _ends_returning_a_loss(cls, method[1], depth - 1):
                return True
            continue
        # the loss first, not results with their losses (torchvision's `return result, losses`,
        # empty in eval mode)
        first = _first_returned_name(value)
        if first is not None and _LOSS_NAME.search(first):
            return True
    return False


def _first_returned_name(value: cst.BaseExpression | None) -> str | None:
    """The name a return value leads with: `loss` of `return loss, stats`, `{"loss": ...}`, `dict(loss=...)`."""
    if isinstance(value, cst.Tuple) and value.elements:
        value = value.elements[0].value
    elif isinstance(value, cst.Dict) and value.elements and isinstance(value.elements[0], cst.DictElement):
        key = value.elements[0].key
        return key.evaluated_value if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str) else None
    elif isinstance(value, cst.Call) and dotted(value.func) == "dict" and value.args and value.args[0].keyword is not None:
        return value.args[0].keyword.value
    elif isinstance(value, cst.Call) and value.args and value.args[0].keyword is not None and _sum_of_losses(value.args[0].value):
        # `return BlipOutput(loss=loss_itc + loss_itm, ...)`: a loss computed on every call (not
        # transformers' `CausalLMOutput(loss=loss, ...)`, None without labels)
        return value.args[0].keyword.value
    if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
        return value.attr.value  # `return self.loss, acc, ppl`: the loss kept on the module (ESPnet's RNN decoder)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        # `return losses.mean()` (Imagen's training forward), `return F.mse_loss(pred, target)`
        receiver, method = value.func.value, value.func.attr.value
        if method in ("mean", "sum") and isinstance(receiver, cst.Name):
            return receiver.value
        return method
    return value.value if isinstance(value, cst.Name) else None


def _sum_of_losses(node: cst.BaseExpression) -> bool:
    """`loss_itc + loss_itm + loss_lm`: two or more losses added."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)):
        return False
    parts: list[cst.BaseExpression] = []
    while isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        parts.append(node.right)
        node = node.left
    parts.append(node)
    return all(isinstance(p, cst.Name) and _LOSS_NAME.search(p.value) for p in parts)


def exported_forward(cls: ClassInfo) -> tuple[ClassInfo, cst.FunctionDef] | None:
    """The method an export of this Module runs: the project's export forward when it writes one
    (``api.EXPORT_FORWARDS``), else `forward` (None: neither)."""
    for name in api.EXPORT_FORWARDS:
        found = cls.find_method(name)
        if found is not None:
            return found
    return cls.find_method("forward")


def has_export_forward(cls: ClassInfo) -> bool:
    return any(cls.find_method(name) is not None for name in api.EXPORT_FORWARDS)


def forward_replaced(cls: ClassInfo) -> bool:
    """A class decorator replaces this Module's forward by default (transformers' MoE experts)."""
    return any((dotted(d.decorator if not isinstance(d.decorator, cst.Call) else d.decorator.func) or "").rsplit(".", 1)[-1]
               in api.FORWARD_REPLACING_DECORATORS for d in cls.node.decorators)


def none_tested(test: cst.BaseExpression) -> set[str]:
    """Names tested `is None` in a condition (through `and`)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return none_tested(test.left) | none_tested(test.right)
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        name = dotted(test.left)
        return {name} if name else set()
    return set()


def fills_default(node: cst.If) -> bool:
    """`if mask is None and not is_compiling(): mask = torch.ones(...)`: the arm only fills in a
    default for a value that is None; the code after it handles both (EXL060 stays quiet)."""
    tested = none_tested(node.test)
    if not tested or node.orelse is not None:
        return False
    fills = False
    for stmt in body_statements(node.body):
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        for small in smalls:
            if isinstance(small, cst.Assign):
                fills |= any(dotted(t.target) in tested for t in small.targets)
            elif isinstance(small, cst.AnnAssign):
                fills |= dotted(small.target) in tested
            elif not is_logging_stmt(small):
                return False
    return fills  # (other names it assigns are the default's ingredients)


def equalities(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return equalities(test.left) or equalities(test.right)
    return isinstance(test, cst.Comparison) and all(isinstance(c.operator, cst.Equal) for c in test.comparisons)


def conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return conjuncts(test.left) + conjuncts(test.right)
    return [test]


def shortcut_return(node: cst.If, frame: Frame) -> bool:
    """`if not is_exporting() and n == m: return posemb`: when the sizes already match, a fast path
    returns an argument as it is, where the other path computes the same value the long way."""
    if not isinstance(node.test, cst.BooleanOperation) or node.orelse is not None:
        return False
    # `if not is_tracing(mask) and (mask == 1).all(): return None`: the library itself turns the fast
    # path off under export; the general path computes the same (audit round 5: all such were same-output)
    skipped_when_exporting = any(
        isinstance(c, cst.UnaryOperation) and isinstance(c.operator, cst.Not) and static_predicate(c.expression, frame.file, Target.EXPORT) is not None
        for c in conjuncts(node.test)
    )
    if not (equalities(node.test) or skipped_when_exporting):
        return False
    fn = frame.func.node
    params = fn.params if isinstance(fn, (cst.FunctionDef, cst.Lambda)) else None
    names = {p.name.value for p in (list(params.params) + list(params.posonly_params) + list(params.kwonly_params))} if params else set()

    def only_returns_an_argument(suite: cst.BaseSuite) -> bool:
        for stmt in body_statements(suite):
            if isinstance(stmt, cst.If):  # `if old_size is None and h == w: return posemb`
                if stmt.orelse is not None or not only_returns_an_argument(stmt.body):
                    return False
            elif isinstance(stmt, cst.SimpleStatementLine):
                small = stmt.body
                if len(small) != 1 or not isinstance(small[0], cst.Return):
                    return False
                value = small[0].value
                if value is None or (isinstance(value, cst.Name) and value.value == "None"):
                    continue  # `return None`: "nothing to do" (the caller treats the general result the same)
                if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
                    continue  # `return self.position_embeddings`: the stored value as it is
                if not isinstance(value, cst.Name) or value.value not in names:
                    return False
            else:
                return False
        return True

    return only_returns_an_argument(node.body)


def bookkeeping_exit(node: cst.If, fn: cst.CSTNode) -> bool:
    """`if torch.compiler.is_compiling(): return` at the top of a function that returns nothing and,
    past it, only keeps Python-side records (TabPFN's `record_attention_backend` appends to a context
    variable's list): skipping it under export leaves every tensor the same.  Not when the rest
    touches `self` (hooks, buffers), writes into a subscript, updates in place (`x.add_(1)`, `+=`)."""
    if node.orelse is not None or not isinstance(fn, cst.FunctionDef):
        return False
    if not all(isinstance(s, cst.SimpleStatementLine) and all(_returns_nothing(x) for x in s.body) for s in body_statements(node.body)):
        return False
    for n in _walk(fn.body):
        if isinstance(n, cst.Return) and not _returns_nothing(n):
            return False
        if isinstance(n, cst.Name) and n.value == "self":
            return False
        if isinstance(n, cst.AugAssign) or (isinstance(n, cst.AssignTarget) and isinstance(n.target, (cst.Subscript, cst.Attribute))):
            return False
        if (isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value.endswith("_")
                and not n.func.attr.value.startswith("_")):
            return False
    return True


def _returns_nothing(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.Return) and (stmt.value is None or (isinstance(stmt.value, cst.Name) and stmt.value.value == "None"))


def _walk(tree: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``tree``, not entering nested functions, lambdas or classes."""
    stack = [tree]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in n.children if not isinstance(c, (cst.FunctionDef, cst.Lambda, cst.ClassDef)))


_METRIC_FILE = re.compile(r"(^|_)metrics?(_|\.py$)")  # `metrics.py`, `seg_metric.py`, not `geometric.py`


# GAN discriminators (vocos' `MultiPeriodDiscriminator` / `DiscriminatorP`, StyleGAN's `DiscriminatorBlock`) and
# weight-EMA keepers (latent diffusion's `LitEma`, timm's `ModelEma`): training code beside the model
# ... and multi-GPU wrappers (`DataParallelNet`, PyG's `DataParallel`): they scatter a batch over devices
_TRAINING_NAME = re.compile(r"Discriminator|^(Lit|Model)?E[Mm][Aa](V\d+)?$|EMAModel$|ExponentialMovingAverage|DataParallel")


_TRAINING_DIRS = {"train", "training", "trainer", "trainers"}
_MODEL_DIRS = {"models", "model", "modeling", "modules", "nets", "networks", "network", "architectures", "archs", "arch",
               "backbones", "layers"}


@functools.lru_cache(maxsize=None)
def _in_training_package(path: str) -> bool:
    """A file of a `training` / `train` / `trainer(s)` package, not inside a models folder of it: boxmot's
    `reid/training/trainer_components/global_ap.py` (a Smooth-AP loss over a memory bank), stable-audio's
    `training/` wrappers; not super-gradients' `training/models/...`, where all its models live.  Only
    the package's own folders count (`~/train/project/model.py` is no training code)."""
    for part in reversed(module_name_for(path).split(".")[:-1]):
        if part in _MODEL_DIRS:
            return False
        if part in _TRAINING_DIRS:
            return True
    return False


def is_training_only(cls: ClassInfo) -> bool:
    """Losses, criteria, matchers, assigners, evaluation metrics, GAN discriminators, weight EMAs and
    multi-GPU wrappers
    (also any Module of a `loss` / `losses` / `metrics` package or a `*loss*.py` / `*metric*.py` /
    `discriminator(s).py` file): training and evaluation code, never exported."""
    parts = os.path.normpath(cls.file.path).split(os.sep)
    if (any(p in ("loss", "losses", "metrics", "discriminators") for p in parts[-3:-1]) or "loss" in parts[-1].lower()
            or _METRIC_FILE.search(parts[-1].lower()) or parts[-1] in ("discriminator.py", "discriminators.py")
            or _in_training_package(cls.file.path)):
        return True
    for c in cls.iter_mro():
        if c.name.endswith(LOSS_SUFFIXES) or _TRAINING_NAME.search(c.name):
            return True
        for base in c.base_names:
            qual = c.file.qualify_name(base) or base
            if qual in LOSS_BASES or qual.rsplit(".", 1)[-1] in ("_Loss", "_WeightedLoss"):
                return True
    return False


# Packages of data-pipeline code (torchvision.transforms, timm.data, datasets): their Modules
# (`Resize`, `RandomIoUCrop`, `CutMix`) run in data loading, not in an exported model.  They
# are still analyzed when a model calls them.
DATA_PIPELINE_DIRS = {"transforms", "transform", "data", "datasets", "augmentation", "augmentations", "dataloaders", "preprocessing"}
# mmdet's `data_preprocessors` (normalisation, padding and the batch augments of training), `preprocessors`
_DATA_PIPELINE_DIR = re.compile(r"^(data_)?pre_?process(ors?|ing)$|^augment|^spec_?aug")


# `SpecAug`, `SpecAugLFR`, `ProfileAug` (SpecAugment and its kin in ESPnet / FunASR): `Aug` ending a word
# `MakeCutouts` (the random crops of CLIP guidance), timm's `Cutout`
_AUGMENTATION_NAME = re.compile(r"^Random|Augment|AugMix|^Mixup|^CutMix|^MixUp|Aug(?=[A-Z0-9_]|$)|Cutouts?$")
# a module of transforms beside the model (lavis' `clip_models/transform.py` with `ResizeMaxSize`)
_DATA_PIPELINE_FILES = {"transform.py", "transforms.py"}


def is_data_pipeline(cls: ClassInfo) -> bool:
    """A data-augmentation / data-loading Module: not an export root."""
    if _AUGMENTATION_NAME.search(cls.name):
        return True
    parts = os.path.normpath(cls.file.path).split(os.sep)
    return parts[-1] in _DATA_PIPELINE_FILES or any(p in DATA_PIPELINE_DIRS or _DATA_PIPELINE_DIR.search(p) for p in parts[-4:-1])


# Decoding searches over a model (torchaudio's `RNNTBeamSearch`, espnet's `BeamSearch`, fairseq's
# `SequenceGenerator`, speechbrain's `S2SBeamSearcher`) and post-processing of its outputs (DETR-style
# `PostProcess(outputs, target_sizes)`, super-gradients' `*PostPredictionCallback` NMS): run around
# the exported model, never exported on their own (a model that calls one in its forward still
# has it analysed there).
_SEARCH_NAME = re.compile(r"(Search|Searcher|SequenceGenerator)$|(Beam|Greedy)Search|Post_?[Pp]rocess|PostPredict")

# Inference runtimes a class that runs already-exported models loads (yolov5's `DetectMultiBackend`):
# its forward hands numpy arrays to them; the model it wraps is what gets exported.
_RUNTIME_MODULES = (
    "onnxruntime", "tensorrt", "openvino", "coremltools", "tflite_runtime", "tensorflow", "paddle", "ncnn",
    "tritonclient", "MNN", "rknn", "rknnlite",
)
_RUNTIME_LOADERS = ("torch.jit.load", "torch.export.load", "cv2.dnn.readNet", "cv2.dnn.readNetFromONNX")


def is_runtime_wrapper(cls: ClassInfo) -> bool:
    """A Module that runs around a model rather than being one: a decoding search, post-processing of
    its outputs, a simulation engine's calculator (MACE's / NequIP's `calculators/`: they hand a
    simulator's state to the model an MD engine loads), or a wrapper that loads exported models into
    inference runtimes (it imports onnxruntime / TensorRT / OpenVINO … or calls `torch.jit.load`).
    Not an export root."""
    if any(_SEARCH_NAME.search(c.name) for c in cls.iter_mro()):
        return True  # also a subclass (fairseq's `SequenceGeneratorWithAlignment(SequenceGenerator)`)
    parts = os.path.normpath(cls.file.path).split(os.sep)
    if "calculators" in parts[-3:-1] or parts[-1] == "calculator.py":
        return True
    text = cls.file.source
    if text is not None and not _names_runtimes(text):
        return False  # most files: no runtime imported or loader called anywhere, no tree to walk
    return _RUNTIME_WRAPPERS.get(cls.node, lambda: _loads_runtimes(cls))


# an import of a runtime (at any indentation) or a loader's name: the text's word for what the tree then confirms
_RUNTIME_TEXT = re.compile(
    r"^[ \t]*(?:import|from)[ \t]+(?:" + "|".join(_RUNTIME_MODULES) + r")\b|jit\.load|export\.load|readNet", re.M)
_RUNTIME_FILES: dict[int, tuple[str, bool]] = {}


def _names_runtimes(text: str) -> bool:
    hit = _RUNTIME_FILES.get(id(text))
    if hit is None or hit[0] is not text:
        if len(_RUNTIME_FILES) > 64:
            _RUNTIME_FILES.clear()
        hit = _RUNTIME_FILES[id(text)] = (text, _RUNTIME_TEXT.search(text) is not None)
    return hit[1]

_RUNTIME_WRAPPERS = NodeMemo()


def _loads_runtimes(cls: ClassInfo) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            nonlocal found
            found = found or any((dotted(a.name) or "").split(".")[0] in _RUNTIME_MODULES for a in node.names)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            nonlocal found
            found = found or (node.module is not None and (dotted(node.module) or "").split(".")[0] in _RUNTIME_MODULES)

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            qual = cls.file.qualify(node.func) or dotted(node.func) or ""
            found = found or qual.startswith(_RUNTIME_LOADERS)

    cls.node.visit(V())
    return found


def static_predicate(test: cst.BaseExpression, fi: FileIndex, target: Target) -> bool | None:
    """The value of an is-exporting predicate test (`torch.jit.is_tracing()`, `not …`) under target."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = static_predicate(test.expression, fi, target)
        return None if inner is None else not inner
    if not isinstance(test, cst.Call):
        return None
    predicate = api.resolve_predicate(fi.qualify(test.func) or dotted(test.func) or "")
    return None if predicate is None else api.predicate_value(predicate, target.value)
