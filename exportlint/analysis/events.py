"""Events the dataflow hands to the rules.

Each event names a syntactic situation in export-reachable code together with the abstract
values involved; a rule only decides whether that situation is a finding for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from exportlint.analysis.values import Val


@dataclass
class Event:
    node: cst.CSTNode  # where a finding is reported


@dataclass
class MethodCall(Event):
    """``receiver.name(args)`` where ``receiver`` is a value (not a module path)."""

    name: str
    receiver: Val
    receiver_node: cst.BaseExpression
    args: list[Val] = field(default_factory=list)
    kwargs: dict[str, Val] = field(default_factory=dict)
    converted: bool = False  # the result goes straight into int() / float() / bool()
    checking: bool = False  # inside an assert's test or a torch._check's arguments: it only validates


@dataclass
class FunctionCall(Event):
    """A call of a qualified function (``torch.tensor``, ``numpy.sqrt``, builtin ``int``)."""

    qual: str
    args: list[Val] = field(default_factory=list)
    kwargs: dict[str, Val] = field(default_factory=dict)
    arg_nodes: list[cst.BaseExpression] = field(default_factory=list)


@dataclass
class Branch(Event):
    """Python control flow decided by ``cond``: ``kind`` is if / elif / while / ifexp /
    assert / comprehension-if, or guard (an ``if`` whose body only raises, warns or logs, with
    no ``else``).  ``inert``: no arm computes anything.  ``deciding``: the operand of ``cond``
    that makes it what it is (for messages)."""

    kind: str
    cond: Val
    cond_node: cst.BaseExpression
    inert: bool = False
    deciding: tuple[cst.BaseExpression, ...] = ()
    # both arms compute the same names (`if not is_exporting(): v = solve(...) else: v = <loop>`;
    # a conditional expression): alternative ways to one result
    alternatives: bool = False


@dataclass
class CountedLoop(Event):
    """``for ... in range(args)``."""

    counts: list[tuple[cst.BaseExpression, Val]]


@dataclass
class Iteration(Event):
    """Python iterates ``value`` (a for loop, comprehension, list()/zip()…, ``*x``; not unpacking into fixed names)."""

    value: Val
    how: str
    value_node: cst.BaseExpression


@dataclass
class Index(Event):
    """A subscript ``value[...]``: ``bounds`` are slice bounds, ``indices`` plain indices."""

    value: Val
    bounds: list[tuple[cst.BaseExpression, Val]]
    indices: list[tuple[cst.BaseExpression, Val]]
    store: bool


@dataclass
class SliceArg(Event):
    """A size / offset argument of ``narrow`` / ``split`` (``op``)."""

    op: str
    value: Val
    arg_node: cst.BaseExpression


@dataclass
class DimArg(Event):
    """A tensor passed where an op takes dim indices (`x.permute(*perm)` with `perm` a tensor,
    `x.transpose(d, 1)`): ``value``, at argument ``arg_node`` of ``op``."""

    op: str
    value: Val
    arg_node: cst.BaseExpression


@dataclass
class SizeArg(Event):
    """A size or scale-factor argument (``param``) of ``op``."""

    op: str
    param: str
    value: Val  # the argument as a whole
    elements: list[Val]  # its elements when it is a tuple/list (or the starred sequence)
    # the call passes `recompute_scale_factor` (not a literal None / False): the output size is then
    # computed from the scale in Python, as a symbolic integer
    recomputed: bool = False
    # one of several sizes passed one by one (`x.view(n, h, w, 1)`): a 0-d tensor there is a valid size
    # in eager (it converts through `__index__`), unlike a tensor that is the whole size
    element: bool = False


@dataclass
class DataShapeOp(Event):
    """An op whose output shape depends on data (``nonzero``, ``x[mask]`` loads, …)."""

    op: str
    operand: Val | None = None
    checking: bool = False  # inside a check's arguments or an assert: its size changes no output


@dataclass
class ShapeConversion(Event):
    """A shape value leaves symbolic integer arithmetic: ``int(h)``, ``float(h)``, ``round(h / 2)``,
    ``math.sqrt(n)``, numpy on it.  ``specialises``: the target's exporters fix the dims it came
    from to the example's size (torch.export) or bake the value (jit.trace)."""

    form: str  # "int()", "math.sqrt()", "numpy()" …
    value: Val
    operand: cst.BaseExpression
    specialises: bool


@dataclass
class DeviceString(Event):
    """A hard-coded device: ``.cuda()``, ``.to("cuda")``, ``device="cpu"`` …"""

    text: str


@dataclass
class AutogradApply(Event):
    """``Fn.apply(...)`` for a custom ``torch.autograd.Function`` subclass."""

    cls: Any


@dataclass
class ModuleCall(Event):
    """``self.up(x)`` where ``self.up`` is a torch.nn layer built as ``ctor`` (``nn.Upsample(...)``)
    in ``ctor_file``."""

    qual: str
    ctor: cst.Call
    ctor_file: Any
    inputs: "tuple[Val, ...]" = ()  # the positional arguments passed
