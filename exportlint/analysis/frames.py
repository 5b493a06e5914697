"""What the interpreter carries from call to call: references to functions, modules and classes
(``FuncRef``, ``Instance``, ...), the ``Frame`` of a function being analysed (its environment and the
conditions its code runs under), the evaluated arguments of a call (``CallArgs``), and environment
merges."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

import libcst as cst

from exportlint.analysis import events as ev
from exportlint.analysis.index import ClassInfo, FileIndex
from exportlint.analysis.values import (
    CONST, DDS, ModuleRef, SEQ, SHAPE, TENSOR, Step, Val, join, merge_prov,
)

if TYPE_CHECKING:
    from exportlint.analysis.dataflow import Interpreter


# The result of a callee we cannot see, given tensors: a tensor, a tuple, a number… Nothing is
# reported about it until a tensor-only method is called on it.
OPAQUE = Val(tags=frozenset({"opaque"}))
KIND_WORDS = {
    DDS: "data-dependent",
    TENSOR: "a tensor",
    SHAPE: "a shape value",
}

Sink = Callable[[ev.Event, FileIndex, "Frame"], None]


FALSY = frozenset({"falsy"})


TRUTHY = frozenset({"truthy"})


def decided(truth: bool) -> Val:
    """A Python value whose truth is known while the target's exporters capture the model."""
    return Val(kinds=frozenset({CONST}), tags=TRUTHY if truth else FALSY)


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

    @property
    def memo_key(self) -> tuple:
        """What a callee's memo key records of ``self``: its class.  Each call binds a new SelfRef, so
        its id() would make every method call a new context, and an id reused by a later SelfRef
        (after the first was freed) a memo hit that depends on the allocator (hash-seed dependent)."""
        return ("self", id(self.cls))


@dataclass
class Instance(ModuleRef):
    """An instance of a class of the linted set (a submodule built from it); ``needs``: the constructor
    setting it is built only under (`elif radial_type == "chebyshev": self.radial = ChebychevBasis()`), as
    a hint describes it."""

    cls: ClassInfo
    needs: str | None = None

    @property
    def memo_key(self) -> tuple:
        return ("instance", id(self.cls))


@dataclass
class LibraryModule:
    """A torch.nn layer built in ``__init__``: its class and the constructor call."""

    qual: str
    ctor: cst.Call
    file: FileIndex

    @property
    def memo_key(self) -> tuple:
        return ("layer", self.qual, id(self.ctor))


@dataclass
class SuperRef:
    cls: ClassInfo
    after: ClassInfo

    @property
    def memo_key(self) -> tuple:
        return ("super", id(self.cls), id(self.after))


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
    # ... the one its caller's context gave it, while no arm of this function needs one itself
    entry_gate: str | None = None
    # ... set only while an event is reported whose value exists under that setting alone (the code itself
    # runs on the default path too: a failure there stops nothing that follows)
    gate_carried: bool = False
    # The optional input (a root's `x=None` tensor parameter) this code runs only when given
    needs: str | None = None
    # Sizes read from a tensor into a name (`b, c, h, w = x.shape`, `h = x.size(2)`): name -> (the
    # tensor's name, axis, rank unpacked or None, the tensor's value then), for guards that pin them
    sizes: dict[str, tuple[str, int, int | None, Val]] = field(default_factory=dict)
    # Values joined after a test on an optional input whose arms gave them different data-dependence:
    # name -> (the joined value, {(input, given): that arm's value}); a later arm that runs only when the
    # input is given (or not) reads its own arm's value back while the name still holds the join
    correlated: dict[str, tuple[Val, dict[tuple[str, bool], Val]]] = field(default_factory=dict)

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


def needed_input(cond: Val, negated: bool = False) -> str | None:
    """The optional input the arm of a test runs only when given (the `if` arm; the `else` arm or the
    code after an early exit with ``negated``): `patch_coord` of `if patch_coord is not None:`, of
    `if not default_grid:` after `default_grid = patch_coord is None`."""
    prefix = "needs_else:" if negated else "needs:"
    # an input the arm needs given names it better than one it needs absent (`!name`)
    names = sorted((t[len(prefix):] for t in cond.tags if t.startswith(prefix)), key=lambda n: (n.startswith("!"), n))
    return names[0] if names else None


def input_key(needs: str | None) -> tuple[str, bool] | None:
    """(input, given) of a needed_input answer for one input: `patch_coord` -> ("patch_coord", True),
    `!patch_coord` -> ("patch_coord", False); None for several inputs (`a` or `b`)."""
    if needs is None or "`" in needs:
        return None
    return (needs[1:], False) if needs.startswith("!") else (needs, True)


def is_absent(needs: str | None) -> bool:
    """Is ``needs`` (see needed_input) an input the code needs *not* given (`!input_ids`)?"""
    return needs is not None and needs.startswith("!")


def swap_needs(tag: str) -> str:
    """`not c`: what the true arm of c needs, its false arm needs."""
    if tag.startswith("needs:"):
        return "needs_else:" + tag[len("needs:"):]
    if tag.startswith("needs_else:"):
        return "needs:" + tag[len("needs_else:"):]
    return tag


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


def _source_step(frame: Frame, node: cst.CSTNode) -> Step:
    return Step(frame.file, node, "", "data-dependent", DDS, "reads a tensor value into Python", source=True, top=top_statement(frame))


def top_statement(frame: Frame) -> object:
    """The top-level class or function of its file that the code of ``frame`` lives in."""
    while frame.func.closure is not None:
        frame = frame.func.closure
    return frame.file.top_of(frame.func.node)


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
