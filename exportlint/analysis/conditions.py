"""Facts about tests the interpreter evaluates: which comparisons of sizes torch.export decides
without a guard or keeps as a relation, and how ``isinstance`` / ``is None`` tests narrow names in
the arms they guard."""

from __future__ import annotations

import libcst as cst

from exportlint.analysis.dims import DDS_SIZE, literal_axis
from exportlint.analysis.index import dotted
from exportlint.analysis.values import (
    CONST, DDS, NONE, SEQ, SHAPE, TENSOR, UNKNOWN, Val, const, kind, seq_of,
)
from exportlint.analysis.frames import Frame


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


def _never_none(v: Val) -> bool:
    """A value the code shows is not None: a size or a data-dependent scalar a caller computed and
    passed (`max_len=seq_length`); not a tensor (an optional input is typed as one), not a constant (a
    setting may default to None); a parameter or buffer the constructor builds under the default
    settings (vit-pytorch's CCT: `self.positional_emb` is None only with `positional_embedding='none'`);
    an input annotated with a non-Optional number type and no default (`dim_size: int`)."""
    if NONE in v.kinds:
        return False
    return (bool(v.kinds) and v.kinds <= {SHAPE, DDS}) or (v.is_tensor and v.has("param")) or v.has("given")


def same_data_sizes(node: cst.Comparison, operands: list[Val]) -> bool:
    """`current_word_mask.shape != current_word_embeddings.shape[:2]`: sizes read from tensors whose sizes
    depend on data, compared for equality, both traced to one data-dependent step (one call returned both
    tensors): torch.export holds them as one unbacked symbol and decides the test without a guard
    (gliner's word-embedding check, holdout14's probe; openunmix's `out.shape != target_shape`)."""
    if len(operands) != 2 or len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return False
    if not all(v.has(DDS_SIZE) and not v.is_tensor for v in operands):
        return False
    origins = [{id(s.node) for s in v.prov if s.kind == DDS} for v in operands]
    return bool(origins[0] & origins[1])


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


def _bounds_by_table(node: cst.Comparison, operands: list[Val]) -> bool:
    """``max_pos > self.weights.size(0)``, ``pe.size(1) >= x.size(1) * 2 - 1``: a size ordered against the
    size of a parameter or buffer (a position table built for a maximum length).  torch.export keeps it
    as a bound at that size, not a pin to the example's size."""
    if len(operands) != 2 or len(node.comparisons) != 1:
        return False
    if not isinstance(node.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)):
        return False
    table = [v for v in operands if v.kinds == {CONST} and v.has("table_size")]
    size = [v for v in operands if v.is_shape and not v.is_data]
    return len(table) == 1 and len(size) == 1


_MIRRORED = {cst.LessThan: cst.GreaterThan, cst.GreaterThan: cst.LessThan, cst.LessThanEqual: cst.GreaterThanEqual,
             cst.GreaterThanEqual: cst.LessThanEqual}


def _size_against_constant(node: cst.Comparison, operands: list[Val]) -> "tuple[int, cst.BaseCompOp, bool] | None":
    """A size read from a tensor (or a sum of such sizes) compared with a small constant: (the constant,
    the operator with the size on its left — `2 > n` is `n < 2` —, whether the constant is a literal)."""
    if len(node.comparisons) != 1 or isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
        return None
    op = node.comparisons[0].operator
    left, right = node.left, node.comparisons[0].comparator
    for lit, lit_value, value, on_right in ((right, operands[1], operands[0], True), (left, operands[0], operands[1], False)):
        c = _small_constant(lit, lit_value)
        if c is None:
            continue
        if not (value.is_shape and (value.has("dim") or value.has("sum_of_dims")) and not value.is_data):
            return None
        if not on_right and type(op) in _MIRRORED:
            op = _MIRRORED[type(op)]()
        return c, op, isinstance(lit, cst.Integer)
    return None


def _tests_zero_one(node: cst.Comparison, operands: list[Val]) -> bool:
    """``size == 1`` / ``size > 0`` / ``size != 0`` / ``frames < tubelet_size`` (a setting of 2 by
    default): a size read from a tensor (or a sum of such sizes) compared with a constant so small
    that every size >= 2 gives the same answer."""
    found = _size_against_constant(node, operands)
    if found is None:
        return False
    c, op, _ = found
    # decided for every n >= 2: n == c / n != c / n <= c / n > c for c < 2; n < c / n >= c for c <= 2
    return c < 2 or (c == 2 and isinstance(op, (cst.LessThan, cst.GreaterThanEqual)))


def _tests_empty(node: cst.Comparison, operands: list[Val]) -> bool:
    """``size > 0`` / ``size != 0`` / ``size == 0`` / ``size >= 1`` / ``size < 1`` of a size read from a
    tensor (or a sum of them): every non-empty input gives the same answer, so no export or trace of a
    non-empty input takes another arm than eager (audit rounds 15-17: BoxCoder's `box_sum > 0`)."""
    found = _size_against_constant(node, operands)
    if found is None or not found[2]:
        return False
    c, op, _ = found
    if c == 0:
        return isinstance(op, (cst.GreaterThan, cst.NotEqual, cst.Equal, cst.LessThanEqual))
    return c == 1 and isinstance(op, (cst.GreaterThanEqual, cst.LessThan))


def size_as_test(node: cst.BaseExpression, value: Val) -> Val:
    """`if batch_size:`, `x if n else 0`, `not x.numel()`: a size read from a tensor (or a sum of such
    sizes) used as a truth value is `n != 0`, the same answer for every non-empty input (torch.export
    takes dynamic dims to be >= 2 and decides it without a guard: gliner's `... if batch_size else 0`,
    judged on held-out code).  Only a test that is that size alone: inside `a and n` the size may be
    the value."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and value.is_shape and not value.is_data \
            and not value.has("shape_seq") and (value.has("dim") or value.has("sum_of_dims")):
        return const()
    return value


def _small_constant(node: cst.BaseExpression, value: Val) -> int | None:
    """An integer literal, or a setting whose default is an integer (``self.config.tubelet_size``)."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if not value.kinds or not value.kinds <= {CONST}:
        return None
    for tag in sorted(value.tags):
        if tag.startswith("config:"):
            default = tag.partition("=")[2]
            return int(default) if default.lstrip("-").isdigit() else None
    return None


def _read_without_data(v: Val) -> Val | None:
    """Reading a number out of ``v`` (`.item()`, `int()`, `math.sqrt()`) when no data is involved: a
    random draw gives augmentation parameters, a constant tensor a constant the exporters fold."""
    if v.has("random"):
        return Val(kinds=frozenset({CONST}), tags=frozenset({"random"}))
    if v.is_tensor and v.has("const_tensor"):
        return const()
    return None


def _rank(v: Val) -> int:
    """How telling an operand is for a finding on a condition (data > shape > the rest)."""
    return 3 if v.is_data else 2 if v.is_shape else 1 if v.has("export_mode") else 0


_SEQ_TYPES = {"list", "tuple", "List", "Tuple", "Sequence", "collections.abc.Sequence", "abc.Sequence", "typing.Sequence", "dict", "Dict", "Mapping", "collections.abc.Mapping"}


_SCALAR_TYPES = {"int", "float", "bool", "str", "complex", "numbers.Number", "Number", "numbers.Integral", "numbers.Real"}


_TENSOR_TYPES = {"torch.Tensor", "Tensor", "torch.nn.Parameter", "nn.Parameter"}
# Array types a tensor test may list besides tensors (`isinstance(x, (torch.Tensor, np.ndarray))`).
_ARRAY_TYPES = {"np.ndarray", "numpy.ndarray", "ndarray"}


# Types an export's input never is: the exporters take tensors (or lists / tuples of them).
_NON_INPUT_TYPES = (
    {"dict", "Dict", "Mapping", "collections.abc.Mapping", "abc.Mapping", "collections.OrderedDict", "OrderedDict"}
    | _SCALAR_TYPES | _ARRAY_TYPES | {"str", "bytes", "Path", "pathlib.Path", "Image.Image", "PIL.Image.Image"}
)


def type_names(types_node: cst.BaseExpression) -> set[str]:
    """The dotted names of `isinstance`'s second argument (`(list, tuple)` -> {"list", "tuple"})."""
    elements = types_node.elements if isinstance(types_node, (cst.Tuple, cst.List)) else [types_node]
    return {dotted(e.value if isinstance(e, cst.BaseElement) else e) or "?" for e in elements}


def tensor_test(value: Val, types: set[str]) -> bool | None:
    """``isinstance(x, types)`` on a tensor, when that decides it: an input of the exported ``forward``
    (the exporters take tensors) or a value the code shows to be a tensor is a ``torch.Tensor`` and
    never a dict, a number, an array, a path or an image (`if isinstance(ims, torch.Tensor): return
    self.model(ims)` leaves the PIL / numpy pre-processing of an inference wrapper off the export's
    path; `if isinstance(x, dict): return self.loss(x)` its training path; monai's
    `convert_to_dst_type(src, dst=x)` its numpy branch).  An input that may be a list or tuple of
    tensors decides only the types no input is; another value that may be a tuple decides nothing.
    None: not decided."""
    if value.kinds and types <= _TENSOR_TYPES and (
        value.kinds <= {CONST, SHAPE, NONE} or (value.kinds <= {SEQ, SHAPE} and value.has("shape_seq"))
    ):
        # a number, a size, None or a torch.Size is never a tensor: diffusers' `time_factor = 1.0 + 1.0 *
        # (x.size(2) > 1)` then `if isinstance(time_factor, torch.Tensor): time_factor.item()`; PRX's
        # `seq2img(x, x.shape)` testing `isinstance(shape, torch.Tensor)`
        return False
    if value.kinds != {TENSOR} or not (value.has("entry_input") or not value.has("maybe_tuple")):
        return None
    if types & _TENSOR_TYPES:
        return None if value.has("maybe_tuple") else True
    if types <= _NON_INPUT_TYPES:
        return False
    return None


def _narrowing(test: cst.BaseExpression, frame: Frame) -> tuple[dict[str, Val], dict[str, Val]]:
    """What ``isinstance`` / ``torch.is_tensor`` tests in ``test`` tell about names: (when true, when false)."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    if isinstance(test, cst.BooleanOperation):
        # `a and b` true: both hold; `a or b` false: neither does (`if not isinstance(c, tuple) or len(c) != 3:
        # raise`: after it, c is a tuple)
        (left_true, left_false), (right_true, right_false) = _narrowing(test.left, frame), _narrowing(test.right, frame)
        both = ({**left_true, **right_true}, {}) if isinstance(test.operator, cst.And) else ({}, {**left_false, **right_false})
        return (both[1], both[0]) if negated else both
    if isinstance(test, cst.Call) and dotted(test.func) == "isinstance" and len(test.args) == 2:
        types = type_names(test.args[1].value)
    elif isinstance(test, cst.Call) and dotted(test.func) == "torch.is_tensor" and len(test.args) == 1:
        types = {"torch.Tensor"}  # `if not torch.is_tensor(ilens): ilens = torch.from_numpy(np.asarray(ilens))`
    else:
        return {}, {}
    subject = dotted(test.args[0].value)
    if subject is None:
        return {}, {}
    current = frame.lookup(subject) or UNKNOWN
    yes: Val | None = None
    no: Val | None = None
    if types <= _TENSOR_TYPES | _ARRAY_TYPES and types & _TENSOR_TYPES:
        yes = kind(TENSOR, prov=current.prov) if not current.is_tensor else current.with_(tags=current.tags - {"maybe_tuple"})
        # where it is no tensor: what the annotation's other members say (host data, a list of tensors),
        # else unknown
        if current.has("else_host"):
            no = const()
        elif current.has("else_seq"):
            no = seq_of(kind(TENSOR, "maybe_tuple", prov=current.prov))
        else:
            no = UNKNOWN
    elif types <= _SEQ_TYPES:
        yes = current if SEQ in current.kinds else seq_of(UNKNOWN)
    elif types <= _SCALAR_TYPES:
        yes = const()
    elif current.is_tensor and "?" not in types and not types & _TENSOR_TYPES:
        # `isinstance(encoder_outputs, BaseModelOutput)`: the code expects another kind of object
        # here, whatever the annotation says; a tensor only where the code shows it.
        yes = UNKNOWN
        no = current.with_(tags=current.tags | {"maybe_tuple"})
    when_true = {subject: yes} if yes is not None else {}
    when_false = {subject: no} if no is not None else {}
    return (when_false, when_true) if negated else (when_true, when_false)


def size_read(node: cst.BaseExpression | None) -> tuple[str, int | None] | None:
    """`x.shape` / `x.size()` (the whole shape: axis None), `x.shape[2]` / `x.size(2)`: (x, axis)."""
    axis: int | None = None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        axis = literal_axis(node.slice[0].slice.value)
        if axis is None:
            return None
        node = node.value
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size":
        if len(node.args) > 1 or (node.args and (node.args[0].keyword is not None or node.args[0].star)):
            return None
        axis = literal_axis(node.args[0].value) if node.args else None
        if node.args and axis is None:
            return None
        return (node.func.value.value, axis) if isinstance(node.func.value, cst.Name) else None
    if isinstance(node, cst.Attribute) and node.attr.value == "shape" and isinstance(node.value, cst.Name):
        return node.value.value, axis
    return None


def held_equal(test: cst.BaseExpression, holds: bool) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """The `a == b` facts that hold where ``test`` evaluates to ``holds``: after `if h != H or w != W:
    raise ...` (holds False) or `assert h == H and w == W` (holds True), h == H and w == W."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    if isinstance(test, cst.BooleanOperation):
        # `a or b` false: both false; `a and b` true: both true
        if isinstance(test.operator, cst.Or) != holds:
            return held_equal(test.left, holds) + held_equal(test.right, holds)
        return []
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        if isinstance(op, cst.Equal if holds else cst.NotEqual):
            return [(test.left, test.comparisons[0].comparator)]
    return []
