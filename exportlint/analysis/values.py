"""Abstract values of the dataflow: what an expression is, and where that came from.

A :class:`Val` carries a set of *kinds* (a value may be several after a branch join):

* ``const``  – literals, config attributes, module constants;
* ``shape``  – derived from a tensor's shape (``x.shape[0]``, ``x.size(1) // 2``, ``len(x)``);
* ``tensor`` – a tensor value;
* ``dds``    – a data-dependent Python scalar (``.item()``, ``int(t)``, ``.tolist()`` elements);
* ``none``   – ``None``;
* ``seq``    – a Python list/tuple (``items`` when its structure is known, ``elem`` otherwise).

and *tags* that rules read: ``maybe_tuple`` (a submodule's or unknown callee's result: a
tensor or a tuple of them — never treated as iterable-tensor), ``bool`` (a boolean tensor),
``scalar`` (a 0-d tensor), ``size_tensor`` (a tensor holding sizes), ``shape_seq``
(``x.shape``), ``export_mode`` (an is-exporting predicate), ``module`` / ``modlist``,
``param`` (a parameter or buffer, or a tensor derived from parameters only: its shape is a
constant under every exporter), ``const_tensor`` (built from Python constants only, like
``torch.tensor(0.5)``: its values are constants the exporters fold; implies ``param``), ``random`` (a random draw: data-pipeline code), and the
truth tags ``truthy`` / ``falsy``: the value's truth is known while the target's exporters
capture the model (``self.training`` is False in eval mode, ``torch.jit.is_scripting()`` is
always False, ``torch.compiler.is_exporting()`` is True under torch.export, ``labels=None``…).
Empty kinds = unknown: nothing is ever reported about unknown values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import libcst as cst

CONST, SHAPE, TENSOR, DDS, NONE, SEQ = "const", "shape", "tensor", "dds", "none", "seq"

_EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Step:
    """One provenance step: ``name`` became ``word`` at ``node`` (a statement, or a parameter)
    in file ``file`` (a FileIndex).  The message is rendered only for reported findings."""

    file: Any
    node: cst.CSTNode
    name: str
    word: str
    kind: str = ""  # the kind this step explains: dds / tensor / shape / size_tensor
    origin: str = ""  # fixed text instead of the statement's code (e.g. "an input of `forward`")
    source: bool = False  # the expression where the value left the graph (not an assignment)
    top: Any = None  # the top-level statement holding ``node`` (cheap positions), if known

    @property
    def message(self) -> str:
        if self.source:
            return f"`{' '.join(self.file.code(self.node).split())[:80]}` {self.origin}"
        if self.origin:
            return f"`{self.name}` is {self.word}: {self.origin}"
        text = self.file.code(self.node).strip()
        code = " ".join((text.splitlines()[0] if text else self.name).split())
        code = code if len(code) <= 80 else code[:79] + "…"
        return f"`{self.name}` is {self.word}: `{code}`"


class ModuleRef:
    """What a value refers to when it is a submodule built from a linted class (dataflow.Instance)."""


@dataclass(frozen=True)
class Alternatives(ModuleRef):
    """One of several submodules, by configuration (`self.attn = GPSA(...) if use_gpsa else MHSA(...)`);
    ``gates``, when known, the non-default setting each option needs (None: the default builds it)."""

    options: tuple
    gates: tuple = ()

    @property
    def memo_key(self) -> tuple:
        return ("one of",) + tuple(_ref_key(o) for o in self.options)


@dataclass(frozen=True, eq=False)
class Val:
    kinds: frozenset[str] = _EMPTY
    tags: frozenset[str] = _EMPTY
    prov: tuple[Step, ...] = ()
    items: tuple["Val", ...] | None = None
    elem: "Val | None" = None
    ref: Any = None  # a callable / class / module path / self marker

    # -- predicates -----------------------------------------------------------------------
    @property
    def is_tensor(self) -> bool:
        return TENSOR in self.kinds

    @property
    def is_definite_tensor(self) -> bool:
        """A tensor and nothing else we know of: safe to call iterating it a tensor iteration."""
        return TENSOR in self.kinds and "maybe_tuple" not in self.tags and SEQ not in self.kinds

    @property
    def is_dds(self) -> bool:
        return DDS in self.kinds

    @property
    def is_data(self) -> bool:
        """A tensor value or a data-dependent scalar."""
        return TENSOR in self.kinds or DDS in self.kinds

    @property
    def proven_data(self) -> bool:
        """Shown to be data: a data-dependent scalar, or a value the code shows to be a tensor (not
        an unannotated input that may be a number or a tuple).  What a finding about data needs."""
        return DDS in self.kinds or (TENSOR in self.kinds and "maybe_tuple" not in self.tags)

    @property
    def is_shape(self) -> bool:
        return SHAPE in self.kinds

    def has(self, tag: str) -> bool:
        return tag in self.tags

    @property
    def truth(self) -> bool | None:
        """The value's truth while the target's exporters capture the model, when known."""
        if "truthy" in self.tags:
            return True
        if "falsy" in self.tags:
            return False
        if self.kinds == frozenset({NONE}) and self.items is None:
            return False
        return None

    def contains(self, pred: "Callable[[Val], bool]", depth: int = 0) -> bool:
        """Does this value, or any element of it (nested containers), satisfy ``pred``?"""
        if pred(self):
            return True
        if depth > 4:
            return False
        if self.items is not None and any(i.contains(pred, depth + 1) for i in self.items):
            return True
        return self.elem is not None and self.elem.contains(pred, depth + 1)

    @property
    def carries_runtime_values(self) -> bool:
        """Computed at run time from tensors or shapes (anywhere inside): what
        ``torch.tensor(...)`` freezes into a constant under tracing."""
        return self.contains(lambda v: v.is_data or v.is_shape)

    @property
    def unchecked_data(self) -> bool:
        """Shown to be data and not bounded by ``torch._check(...)`` since it was read."""
        return self.proven_data and "checked" not in self.tags

    @property
    def is_index_like(self) -> bool:
        """A Python int read from data (not bounded by ``torch._check``), or a 0-d tensor used as an
        int (not a gather index)."""
        return (self.is_dds and self.unchecked_data) or (self.is_tensor and self.has("scalar"))

    # -- construction ------------------------------------------------------------------------
    def with_(self, **changes: Any) -> "Val":
        d = dict(kinds=self.kinds, tags=self.tags, prov=self.prov, items=self.items, elem=self.elem, ref=self.ref)
        d.update(changes)
        return Val(**d)

    def add_step(self, step: Step) -> "Val":
        return self.with_(prov=_cap(self.prov + (step,)))

    def signature(self) -> tuple:
        """What a callee's analysis depends on (used as a memo key)."""
        return (
            self.kinds,
            self.tags,
            tuple(i.signature() for i in self.items) if self.items is not None else None,
            self.elem.signature() if self.elem is not None else None,
            _ref_key(self.ref),
        )

    def same(self, other: "Val") -> bool:
        return self.signature() == other.signature() and self.prov == other.prov


UNKNOWN = Val()


def _ref_key(ref: Any) -> Any:
    """A memo key's view of what a value refers to: a module path as is, an object by identity (or by
    its own ``memo_key``: ``self`` by its class)."""
    if ref is None or isinstance(ref, str):
        return ref
    key = getattr(ref, "memo_key", None)
    return key if key is not None else id(ref)


def const(prov: tuple[Step, ...] = ()) -> Val:
    return Val(kinds=frozenset({CONST}), prov=prov)


def kind(k: str, *tags: str, prov: tuple[Step, ...] = ()) -> Val:
    return Val(kinds=frozenset({k}), tags=frozenset(tags), prov=prov)


def seq_of(elem: Val, *tags: str, prov: tuple[Step, ...] = ()) -> Val:
    return Val(kinds=frozenset({SEQ}), tags=frozenset(tags), elem=elem, prov=prov)


def tuple_of(items: list[Val] | tuple[Val, ...], *tags: str) -> Val:
    return Val(kinds=frozenset({SEQ}), tags=frozenset(tags), items=tuple(items))


MAX_STEPS = 4


def dedupe_steps(prov: tuple[Step, ...]) -> list[Step]:
    seen: set[tuple[int, str]] = set()
    out: list[Step] = []
    for s in prov:
        key = (id(s.node), s.name)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _cap(prov: tuple[Step, ...]) -> tuple[Step, ...]:
    # Deduplicate, keep the origin and the most recent steps.
    out = dedupe_steps(prov)
    if len(out) > MAX_STEPS:
        out = out[:1] + out[-(MAX_STEPS - 1) :]
    return tuple(out)


def is_size_data(data: "list[Val]") -> bool:
    """Tensors combining into a size tensor: some hold sizes, the rest constants (StyleGAN's
    `torch.min(torch.as_tensor(self.group_size), torch.as_tensor(N))`: its batch group, not data)."""
    return any(v.has("size_tensor") for v in data) and all(v.has("size_tensor") or v.has("const_tensor") for v in data)


def merge_prov(vals: list[Val]) -> tuple[Step, ...]:
    acc: tuple[Step, ...] = ()
    for v in vals:
        acc += v.prov
    return _cap(acc)


def element_of(v: Val) -> Val:
    """The value of one element when iterating / indexing a sequence."""
    if v.items:
        return join(list(v.items))
    if v.elem is not None:
        return v.elem
    return UNKNOWN


# Only the first dim's size depends on data: `y[t]`, `x[i, idx]` with `idx` an index tensor of
# data-dependent length (openunmix's Wiener-filter frames, laion_clap's longer clips); the other
# dims keep the base's sizes (dims.with_data_rows, dims.rows_size).
DATA_ROWS = "dds_lead"


_ALL_OF = ("truthy", "falsy", "param", "random", "const_tensor", "dim", "sum_of_dims", "size_ge2", "relates_dims", "same_data_sizes")
_TENSOR_FACTS = ("param", "const_tensor")
_ALL_OF_PREFIXES = ("fixed:", "pshape:", "rank:")


def _counted_from_the_end(v: Val) -> Val:
    """A tensor of known rank with its static dims named from the end (`fixed:1` of a rank-4 tensor
    is `fixed:-3`), so that the same dim fixed by a `view(-1, ws, ws, c)` and by a pinned `x.shape`
    is the same tag at a merge."""
    ranks = {int(t[5:]) for t in v.tags if t.startswith("rank:")}
    rank = ranks.pop() if len(ranks) == 1 else None
    if rank is None or not any(t.startswith("fixed:") and not t.startswith("fixed:-") for t in v.tags):
        return v
    return v.with_(tags=frozenset(
        f"fixed:{int(t[6:]) - rank}" if t.startswith("fixed:") and not t.startswith("fixed:-") else t for t in v.tags))


def join(vals: list[Val]) -> Val:
    """Least upper bound at control-flow merges (union of kinds and tags)."""
    vals = [_counted_from_the_end(v) if TENSOR in v.kinds else v for v in vals if v is not None]
    if not vals:
        return UNKNOWN
    if len(vals) == 1:
        return vals[0]
    first = vals[0]
    if all(v.same(first) for v in vals[1:]):
        return first
    kinds = frozenset().union(*(v.kinds for v in vals))
    tags = frozenset().union(*(v.tags for v in vals))
    # Facts that hold of every joined value only: a known truth, derived-from-parameters (of every
    # tensor joined: `nn.Parameter(...) if flag else None` is still a parameter when it is a tensor).
    tensors = [v for v in vals if TENSOR in v.kinds]
    for t in _ALL_OF:
        if t in tags:
            pool = tensors if t in _TENSOR_FACTS and tensors else vals
            if t in ("size_ge2", "relates_dims"):  # `mask is None or seq_len == 1`: of every size test joined
                pool = [v for v in vals if SHAPE in v.kinds]
            elif t == "same_data_sizes":  # `out is None or out.shape != target_shape`: of every data-dependent test
                pool = [v for v in vals if DDS in v.kinds]
            if not all(t in v.tags for v in pool):
                tags -= {t}
    # Static dims (`fixed:-1` after a linear layer, a parameter's `pshape:`) hold after a merge
    # only when every tensor joined has them.
    for t in [t for t in tags if t.startswith(_ALL_OF_PREFIXES)]:
        if not all(t in v.tags for v in tensors):
            tags -= {t}
    # An optional input, or what was computed from it, where it is not None (`mask.view(...) if mask is
    # not None else None`): not once another value may stand in for it (`x if x is not None else zeros`).
    # Joined from several optional inputs' values, it is not None only when one of them is given.
    optional = {t for t in tags if t.startswith("optional:")}
    if optional and not all(v.tags & optional for v in vals if v.kinds - {NONE}):
        tags -= optional
    items = None
    if all(v.items is not None for v in vals) and len({len(v.items) for v in vals}) == 1:  # type: ignore[arg-type]
        items = tuple(join([v.items[i] for v in vals]) for i in range(len(vals[0].items)))  # type: ignore[index]
    elems = [v.elem for v in vals if v.elem is not None]
    elem = join(elems) if elems else None
    refs = {id(v.ref) for v in vals}
    ref = first.ref if len(refs) == 1 else None
    if ref is None and all(isinstance(v.ref, ModuleRef) for v in vals):
        options: list = []
        for v in vals:
            for o in (v.ref.options if isinstance(v.ref, Alternatives) else (v.ref,)):
                if all(o is not p for p in options):
                    options.append(o)
        ref = Alternatives(tuple(options))
    return Val(kinds=kinds, tags=tags, prov=merge_prov(vals), items=items, elem=elem, ref=ref)


def optional_of(vals: "list[Val]") -> set[str]:
    """The optional inputs tensors among ``vals`` were computed from (``optional:<name>`` tags): a value
    computed from one exists only where that input is given."""
    return {t for v in vals if TENSOR in v.kinds for t in v.tags if t.startswith("optional:")}


def combine(vals: list[Val], extra_tags: frozenset[str] = _EMPTY) -> Val:
    """Result of arithmetic / a computation over operands: the most data-like kind wins
    (a tensor op on a data-dependent scalar is a tensor; shape math stays shape)."""
    kinds: set[str] = set()
    for v in vals:
        kinds |= v.kinds
    if SEQ in kinds and all(SEQ in v.kinds or CONST in v.kinds for v in vals):
        return join(vals)  # list concatenation / repetition
    if TENSOR in kinds:
        k = TENSOR
    elif DDS in kinds:
        k = DDS
    elif SHAPE in kinds:
        k = SHAPE
    elif kinds and kinds <= {CONST, NONE}:
        k = CONST
    else:
        return Val(prov=merge_prov(vals))
    tags = set(extra_tags)
    if k == TENSOR and all(v.has("param") for v in vals if v.is_tensor) and not any(
        v.is_shape or v.is_dds for v in vals
    ):
        tags.add("param")  # arithmetic on parameters only: still a parameter-shaped tensor
        if all(v.has("const_tensor") for v in vals if v.is_tensor):
            tags.add("const_tensor")  # torch.tensor(2.0).log2(): a constant the exporters fold
    if k == CONST and any(v.has("specialised_float") for v in vals):
        tags.add("specialised_float")  # float(w0) / sqrt_N: still a float pinned from a size
    if k == TENSOR and all(v.has("from_sizes") for v in vals if v.is_tensor) and not any(v.is_dds for v in vals):
        tags.add("from_sizes")  # torch.div(seq_len, w) + 1: still computed from sizes only
    if any(v.has("random") for v in vals):
        tags.add("random")  # computed from a random draw: augmentation parameters
    if k == TENSOR:
        tags |= optional_of(vals)  # `coord[:, :, 0].amax(1) + 1`: computed from an optional input where it is given
    if k == SHAPE and any(v.has("pins_dim") for v in vals):
        tags.add("pins_dim")  # `H != 224 or W != 224`: still pins a declared dynamic dim
    if k == SHAPE and any(v.has("float") for v in vals if v.is_shape):
        tags.add("float")  # arithmetic on a float of sizes stays a float
    for benign in ("size_ge2", "relates_dims"):
        if k == SHAPE and all(v.has(benign) for v in vals if v.is_shape):
            tags.add(benign)  # `a.shape[0] == 1 and b.shape[0] != 1`: still decided by dims >= 2 alone
    if k == SHAPE and all(v.has("last_axis") for v in vals if v.is_shape):
        tags.add("last_axis")  # `q.size(-1) ** -0.5`: still about the last (feature) axis
    if k == TENSOR and any(v.has("derived_dims") for v in vals if v.is_tensor):
        tags.add("derived_dims")  # a resized tensor's dims stay resized through elementwise ops
    if k == TENSOR and any(v.has("dds_shape") for v in vals):
        tags.add("dds_shape")
    elif k == TENSOR and any(v.has(DATA_ROWS) for v in vals):
        tags.add(DATA_ROWS)  # `rows * w`: broadcasting keeps the rows selected first
    data = [v for v in vals if v.is_tensor or v.is_dds]
    if is_size_data(data):
        tags.add("size_tensor")  # sizes // 2 is still a size tensor; boxes * sizes is not
        if all(v.has("one_size") or v.has("const_tensor") for v in data):
            tags.add("one_size")  # torch.tensor(n) // 2: still one size
    if k == TENSOR and any(v.is_tensor and v.has("maybe_tuple") for v in vals) and not any(
        v.is_definite_tensor for v in vals
    ):
        tags.add("maybe_tuple")
    return Val(kinds=frozenset({k}), tags=frozenset(tags), prov=merge_prov(vals))
