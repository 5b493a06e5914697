"""The interpreter's calls: methods and submodules of the model, functions of linted files, torch
functions and tensor methods, builtins; what each returns (a tensor with which dims fixed or
data-dependent, a size, a data-dependent scalar, a sequence) and the events rules read from them."""

from __future__ import annotations

import contextlib

import libcst as cst

from exportlint.analysis import events as ev
from exportlint.analysis import torchapi as api
from exportlint.analysis.code_facts import (
    exported_forward,
    forward_replaced,
)
from exportlint.analysis.dims import (
    broadcast_dims,
    cat_dims,
    count_of,
    embedded_shape,
    size_of,
    ELEMENTWISE_LAYERS,
    NORM_LAYERS,
    declared_axis,
    layer_fixed_axis,
    moved_dims,
    unsqueezed_dims,
    spatial_dims,
    raw_dim,
    derived_sizes,
    literal_axis,
    sized_dims,
    shape_seq_of,
    size_kind,
    split_parts,
    with_data_shape,
    DATA_ROWS,
    matmul_dims,
    sized_by_data,
    with_data_rows,
)
from exportlint.analysis.index import ClassInfo, dotted
from exportlint.diagnostics import Target
from exportlint.analysis.values import (
    Alternatives, CONST, DDS, ModuleRef, NONE, SEQ, SHAPE, TENSOR, UNKNOWN, Val, combine, const, element_of,
    is_size_data, join, kind, merge_prov, seq_of, tuple_of,
)
from exportlint.analysis.binding import TENSOR_EVIDENCE, _is_target_param, _module_val, _object_val
from exportlint.analysis.conditions import _read_without_data, tensor_test, type_names
from exportlint.analysis.frames import KIND_WORDS, OPAQUE, CallArgs, Frame, FuncRef, Instance, LibraryModule, SelfRef, SuperRef, _source_step, decided


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


# A 0-d tensor holding one size (`torch.tensor(n)`, `torch.min(torch.tensor(4), torch.tensor(n))`): every
# exporter keeps it tied to the size, also as one of the sizes of a `reshape` (measured: EXL040's rule doc)
ONE_SIZE = ("one_size", "scalar")


def _one_size(data: Val) -> bool:
    """One size value, not a sequence of them (`torch.tensor(n)`, not `torch.tensor([h, w])`)."""
    return data.is_shape and not data.is_tensor and not data.is_data and SEQ not in data.kinds


def _input_shape_kept(qual: str, args: "CallArgs", result: Val) -> Val:
    """`F.gelu(x)` has x's static dims and rank, `F.pad(x, ...)` x's rank."""
    last = qual.rsplit(".", 1)[-1]
    if not result.is_definite_tensor or not args.positional or not args.positional[0].is_definite_tensor or not (
            qual.startswith(("torch.nn.functional.", "torch.")) and last in api.SHAPE_KEEPING_FUNCS | api.RANK_KEEPING_FUNCS):
        return result
    prefixes = ("fixed:", "dims:", "rank:") if last in api.SHAPE_KEEPING_FUNCS else ("rank:",)
    kept = {t for t in args.positional[0].tags if t.startswith(prefixes)}
    return result.with_(tags=result.tags | kept) if kept else result


def _sized_by_data(spec: "tuple[object, tuple[str, ...]] | None", args: "CallArgs") -> bool:
    """`torch.zeros(n)`, `x.new_full((b, n + 1), 0)`, `x.view(n, -1)` with a size read from data (`n =
    int(mask.sum())`, the length of a boolean-mask selection): a tensor whose size depends on data."""
    if spec is None:
        return False
    for _, value, _ in args.select(*spec):
        parts = [value, *(value.items or ()), *((value.elem,) if value.elem is not None else ())]
        if any(v.is_dds and not v.is_tensor for v in parts):
            return True
        if value.is_definite_tensor and not value.has("size_tensor") and not value.has("param"):
            return True  # `torch.arange(grid_thw[i][0])`: a size read from tensor data (an unbacked `.item()`)
    return False


def _of_parameters(v: Val) -> bool:
    """An argument that keeps an op on parameters parameter-shaped: a constant (a list of them:
    `dim=list(range(1, x.ndim))`), None, or a parameter-shaped tensor."""
    if not v.kinds:
        return False  # nothing known of it: it may be an input's tensor
    return v.kinds <= {CONST, NONE} or v.has("param") or (
        SEQ in v.kinds and v.kinds <= {SEQ, CONST, NONE} and not v.contains(lambda x: x.is_shape or x.is_dds or x.is_tensor))


def _keyword_entry(node: cst.Call, func: cst.Attribute, frame: Frame) -> str | None:
    """The key of `kwargs.get("k")` / `kwargs.pop("k", None)` on the function's own `**kwargs`, or None."""
    fn = frame.func.node
    star = fn.params.star_kwarg if isinstance(fn, cst.FunctionDef) else None
    if star is None or not (isinstance(func.value, cst.Name) and func.value.value == star.name.value):
        return None
    if not node.args or node.args[0].keyword is not None or not isinstance(node.args[0].value, cst.SimpleString):
        return None
    if len(node.args) > 2 or (len(node.args) == 2 and not (
            isinstance(node.args[1].value, cst.Name) and node.args[1].value.value == "None")):
        return None
    key = node.args[0].value.evaluated_value
    return key if isinstance(key, str) and key.isidentifier() else None


def _rows_sized(spec: "tuple[object, tuple[str, ...]] | None", args: "CallArgs") -> bool:
    """`torch.zeros(rows.shape + (n,))`, `torch.zeros((len(rows), c))`: sizes whose first alone depends on
    data (see values.DATA_ROWS)."""
    if spec is None:
        return False
    selected = [value for _, value, _ in args.select(*spec)]
    if len(selected) == 1 and selected[0].has(DATA_ROWS):
        return True
    if len(selected) == 1 and selected[0].items:
        selected = list(selected[0].items)  # one size sequence
    return len(selected) > 1 and selected[0].is_dds and not selected[0].is_tensor and not any(
        v.is_dds or v.is_tensor for v in selected[1:])


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
    if value.is_tensor and sized_by_data(value):
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


_BUILTINS = {
    "int", "float", "bool", "complex", "len", "range", "list", "tuple", "dict", "set", "frozenset",
    "enumerate", "zip", "map", "filter", "sorted", "reversed", "min", "max", "sum", "abs", "round",
    "any", "all", "isinstance", "issubclass", "hasattr", "getattr", "setattr", "callable", "super",
    "print", "repr", "str", "format", "type", "id", "iter", "next", "divmod", "pow", "vars", "dir",
    "hash", "locals", "globals",
}


class Calls:
    """The calls half of :class:`exportlint.analysis.dataflow.Interpreter` (a mixin: it works on the
    interpreter's state and evaluates arguments with its ``expr``)."""

    def e_Call(self, node: cst.Call, frame: Frame) -> Val:
        func = node.func
        if isinstance(func, cst.Name) and func.value in api.CONVERTERS and node.args:
            inner = node.args[0].value  # `int(t.item())`: the `.item()` is read to be converted
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "item":
                self.converted_items.add(id(inner))
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "round":
                self.converted_items.add(id(inner))  # `int(round(h / 2))`: the int() is what specialises
        name = (dotted(func) or "").rsplit(".", 1)[-1]
        if name in api.VALIDATING_CALLS or (name == "cond" and frame.file.qualify(func) == "torch.cond"):
            # torch._check(n.item() > 0): the values only validate; torch.cond(x.isnan().all().item(), f, g,
            # ops): torch.export takes the data-dependent predicate as it is (torchtune's export attention)
            self.checking += 1
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
        key = _keyword_entry(node, func, frame) if self.library_mode and name in ("get", "pop") else None
        if key is not None:
            # `packing_config = kwargs.pop("packing_config", None)`: a keyword the caller may leave out, None
            # unless given; the arm under `is not None` runs only when it is given (gliner's packed encoder).
            # Training targets (`kwargs.pop("labels")`, peft's CPT) an export never passes: None
            return kind(NONE) if _is_target_param(key) else Val(tags=frozenset({f"optional:{key}"}))
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
        if isinstance(receiver.ref, (SelfRef, ClassInfo)) or (isinstance(receiver.ref, Instance) and receiver.has("object")):
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
                self._grow_sequence(func.value, receiver, args, frame, extend=name == "extend")
            return UNKNOWN
        if receiver.is_dds:
            return kind(DDS, prov=receiver.prov)
        if receiver.is_shape:
            return kind(SHAPE, prov=receiver.prov)
        return UNKNOWN

    def _grow_sequence(self, target: cst.BaseExpression, seq: Val, args: "CallArgs", frame: Frame, extend: bool = False) -> None:
        name = dotted(target)
        if name is None or not args.positional:
            return
        added = _element(args.positional[-1]) if extend else args.positional[-1]  # `extend` adds the elements
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
            return _module_val(ref) if ref.is_module() else _object_val(ref)
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
            self.emit(ev.ModuleCall(node, module.ref.qual, module.ref.ctor, module.ref.file, tuple(args.positional)), frame)
        if module.has("modlist") and module.elem is not None and isinstance(module.elem.ref, ModuleRef):
            return self.call_module(module.elem, args, node, frame)  # nn.Sequential(*[Block(...) ...])
        if isinstance(module.ref, Alternatives):
            # `self.attn = GPSA(...) if use_gpsa else MHSA(...)`: each, with the arguments passed here; one only
            # a non-default setting builds, under that setting
            results = []
            for i, o in enumerate(module.ref.options):
                gate = module.ref.gates[i] if i < len(module.ref.gates) else None
                with self._context(frame, None, gate) if gate and frame is not None else contextlib.nullcontext():
                    results.append(self.call_module(Val(kinds=module.kinds, tags=module.tags, ref=o), args, node, frame))
            return join(results)
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
            elif args.positional:
                tags |= spatial_dims(kind(TENSOR), args.positional[0], layer).tags  # self.proj(x) of a fixed-size image
            if args.positional and sized_by_data(args.positional[0]):
                # a layer keeps its input's batch: the rows a mask selected (its other dims are the layer's)
                tags.add(DATA_ROWS if not args.positional[0].has("dds_shape") else "dds_shape")
            if args.positional and args.positional[0].is_definite_tensor and args.positional[0].has("param") and all(
                    v.has("param") for v in args.all() if v.is_tensor):
                tags.add("param")  # `self.position_embedding(self.position_ids)` of a buffer: a constant shape
                if layer == "Embedding":
                    tags |= embedded_shape(args.positional[0])  # (1, n) ids: (1, n, dim) embeddings
            return kind(TENSOR, *tags, prov=prov)
        if isinstance(module.ref, Instance):
            cls = module.ref.cls
            found = exported_forward(cls) if not forward_replaced(cls) else None
            if found is not None:
                defining, fn = found
                self.reached.add(id(cls))
                needs = module.ref.needs if self.library_mode and frame is not None else None
                with self._context(frame, None, needs) if needs else contextlib.nullcontext():  # type: ignore[arg-type]
                    # a submodule only a non-default setting builds (MACE's Chebyshev basis): its findings say so
                    result = self.call_function(FuncRef(fn, defining.file, cls=cls, defining=defining, bound_self=True), args)
                if result.is_definite_tensor:
                    kept = {t for t in result.tags if t in ("bool", "scalar", "dds_shape", DATA_ROWS) or t.startswith(("fixed:-", "rank:"))}
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
            if qual in api.MATH_SIZE_ARITHMETIC:
                return element_of(result) if SEQ in result.kinds else result  # `math.prod(x.shape[1:])`: a size
            if result.is_shape and not result.is_data and args.positional:
                shaped = [(v, n) for v, n in zip(args.positional, args.nodes) if v.is_shape]
                value, operand = shaped[0] if shaped else (result, node)
                form = f"{root}.{qual.rsplit('.', 1)[-1]}()" if root == "math" or qual in api.NUMPY_OWN_FORM else f"{root}()"
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
        last = qual.rsplit(".", 1)[-1]
        if last in ("matmul", "mm", "bmm") and result.is_tensor:
            result = matmul_dims(result, args.get(0, "input"), args.get(1, "other"))
        elif (last in api.ELEMENTWISE_PAIR_FUNCS and result.is_definite_tensor and len(args.positional) == 2
              and all(v.is_tensor for v in args.positional)):
            result = broadcast_dims(result, args.positional)  # torch.max(S, self.amin): S's static dims
        spec = api.SIZE_FUNCS.get(qual)
        if spec is not None and qual in api.FACTORY_FUNCS:  # torch.zeros(2, n): the constant dims are fixed
            result = sized_dims(result, *spec, args.positional, args.nodes, args.keywords, dict(args.kw_nodes))
        if result.is_tensor and ((qual in api.FACTORY_FUNCS or spec is not None) and derived_sizes(args.all())
                                 or qual.rsplit(".", 1)[-1] in api.RESIZING_OPS):
            result = result.with_(tags=result.tags | {"derived_dims"})  # torch.arange(n // 2), F.max_pool2d(x, 2)
        return _input_shape_kept(qual, args, result)


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
        if qual == "torch.is_tensor" and args.positional:
            # `if not torch.is_tensor(timesteps): timesteps = torch.tensor([timesteps])`: like isinstance
            known = tensor_test(args.positional[0], {"torch.Tensor"})
            if known is not None:
                return decided(known)
        if qual in api.NON_TENSOR_FUNCS or qual.startswith(api.NON_TENSOR_PREFIXES) or last.startswith(api.PREDICATE_PREFIXES):
            return const()
        if qual == "torch.numel" and args.positional:
            return count_of(args.positional[0], args.prov())
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
            if repeats is not None and repeats.is_tensor and not repeats.has("const_tensor"):  # as for the method
                data_shape = True
                self.emit(ev.DataShapeOp(node, "torch.repeat_interleave", repeats, self.checking > 0), frame)
        pinned = self._size_to_tensor(node, qual, args, frame)
        if pinned is not None:
            return pinned
        result = self._torch_result(qual, last, args)
        if last == "pad_sequence" and result.is_tensor:
            # one row per element of a Python list (its length is static), padded to the longest: data-dependent
            # when the rows a mask selected are padded (LightGlue's keypoint pruning)
            rows = args.get(0, "sequences")
            first = args.get(1, "batch_first")
            result = result.with_(tags=result.tags | {"fixed:0" if first is not None and first.truth else "fixed:1"})
            return with_data_shape(result) if rows is not None and rows.contains(lambda v: v.is_tensor and sized_by_data(v)) else result
        sized = args.all()
        if last in _INDEX_SIZED:
            # `torch.index_select(rows, 0, position_ids[i])`, `torch.gather(x, 1, idx)`: the output has the
            # index's size (Reformer's axial positions, cut to a length read from data, then selected by id)
            position, keyword, dim = _INDEX_SIZED[last]
            index = args.get(position, keyword)
            if dim is None or _literal_arg(args, 1, "dim") == dim:
                sized = [index] if index is not None else []
        size_spec = api.SIZE_FUNCS.get(qual) or (("all", ("size",)) if qual in api.FACTORY_FUNCS else None)
        if not data_shape and _rows_sized(size_spec, args):
            return with_data_rows(result)  # torch.zeros(rows.shape + (n,))
        if not data_shape and not result.has("scalar") and any(v.is_tensor and v.has(DATA_ROWS) for v in sized) and not any(
                v.has("dds_shape") for v in sized):
            return with_data_rows(result) if _keeps_rows(last, args, method=False) else with_data_shape(result)
        if data_shape or (any(v.has("dds_shape") for v in sized) and not result.has("scalar")) or _sized_by_data(size_spec, args):
            return with_data_shape(result)
        return result

    def _size_to_tensor(self, node: cst.Call, qual: str, args: "CallArgs", frame: Frame) -> Val | None:
        """`torch.as_tensor(n)` / `torch.asarray(n)` of one size: torch.export specialises the size (unlike
        `torch.tensor(n)`), jit.trace keeps it traced (measured: EXL042's rule doc).  None: any other call."""
        if qual not in api.SIZE_PINNING_CTORS or not args.positional or not node.args:
            return None
        size = args.positional[0]
        if not size.is_shape or size.is_data or size.is_tensor or SEQ in size.kinds:
            return None
        fixed = self.shape_conversion(node, f"{qual}()", size, node.args[0].value, frame)
        if CONST in fixed.kinds and not fixed.is_shape:
            return kind(TENSOR, "const_tensor", "param")  # the example's size, a constant of the program
        return kind(TENSOR, "size_tensor", *ONE_SIZE, prov=args.prov())

    def _torch_result(self, qual: str, last: str, args: "CallArgs") -> Val:
        prov = args.prov()
        if last in api.RANDOM_FUNCS:
            return kind(TENSOR, "random", prov=prov)
        if qual in api.TENSOR_CTORS:
            data = args.positional[0] if args.positional else args.keywords.get("data")
            if data is not None and data.kinds and not data.contains(lambda v: (v.is_data or v.is_shape) and not v.has("const_tensor")):
                return kind(TENSOR, "const_tensor", "param")  # torch.tensor(0.5), torch.tensor([c, 2.0]): a constant
            sized = data is not None and data.carries_runtime_values
            # `torch.tensor(wav.shape)`, `torch.tensor([h, w])`: as many entries as the sequence, a static dim;
            # also a list built by appending (RF-DETR's `spatial_shapes`, one (h, w) per feature level): a
            # Python list's length is a plain int to every exporter
            counted = data is not None and (data.has("shape_seq") or (SEQ in data.kinds and not data.is_tensor))
            if sized and _one_size(data):
                return kind(TENSOR, "size_tensor", *ONE_SIZE, prov=prov)  # torch.tensor(n): n itself, traced
            return kind(TENSOR, *(("size_tensor",) if sized else ()), *(("fixed:0", "rank:1") if counted else ()), prov=prov)
        if qual in api.STACK_FUNCS:
            parts = args.positional[0] if args.positional else args.keywords.get("tensors", UNKNOWN)
            sized = parts.contains(lambda v: v.has("size_tensor") or (v.is_shape and not v.is_tensor))
            # rows a mask selected, concatenated or stacked (RetinaNet's per-level boxes): still data-sized
            value = _literal_arg(args, 1, "dim", default=0)
            selected: tuple[str, ...] = ()
            if parts.contains(lambda v: v.is_tensor and v.has("dds_shape")):
                selected = ("dds_shape",)
            elif parts.contains(lambda v: v.is_tensor and v.has(DATA_ROWS)):
                # rows selected by data, joined along another dim (`torch.cat([y, rest], dim=-1)`): still the rows
                selected = (DATA_ROWS,) if last in ("cat", "concat", "concatenate") and value not in (None, 0) else ("dds_shape",)
            result = kind(TENSOR, *(("size_tensor",) if sized else ()), *selected, prov=prov)
            if last in ("cat", "concat", "concatenate") and parts.items is not None and not sized:
                if value is not None:
                    result = cat_dims(result, list(parts.items), value)  # torch.cat((cls, x), dim=1)
            if last == "stack" and not sized:
                if value is not None:
                    # the new dim counts the Python list's tensors: a plain int to every exporter
                    result = result.with_(tags=result.tags | {f"fixed:{value}"})
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
        sized = is_size_data(tensors)
        if sized and all(v.has("one_size") or v.has("const_tensor") for v in tensors) and last in api.ELEMENTWISE_SIZE_FUNCS:
            return kind(TENSOR, "size_tensor", *ONE_SIZE, prov=prov)  # torch.min(torch.tensor(4), torch.tensor(n))
        if all(v.has("const_tensor") for v in tensors) and all(v.kinds <= {CONST, NONE} or v.has("const_tensor") for v in args.all()):
            if qual not in api.FACTORY_FUNCS and not all(v.kinds for v in args.all()):
                # an unknown argument of a factory is a size or a fill value; of any other op it may be a
                # tensor (`torch.sigmoid(logits_per_level)` of an item of a dict of lists: RetinaNet): its
                # data is not known to be constant, and nothing shows its sizes come from an input
                return kind(TENSOR, "param", prov=prov)
            return kind(TENSOR, "const_tensor", "param")  # torch.log2(torch.tensor(2.0)), torch.arange(4)
        if tensors and all(v.has("param") for v in tensors) and all(_of_parameters(v) for v in args.all()):
            # `torch.linalg.vector_norm(self.weight, dim=dim, keepdim=True)`: computed from parameters and
            # constants only, its sizes are constants too (stable-audio's weight-normalised conv)
            return kind(TENSOR, "param", prov=prov)
        return kind(TENSOR, *(("size_tensor",) if sized else ()), prov=prov)

    def call_builtin(self, node: cst.Call, name: str, args: "CallArgs", frame: Frame) -> Val:
        first = args.positional[0] if args.positional else UNKNOWN
        first_node = node.args[0].value if node.args else node
        if (name in api.CONVERTERS or name == "round") and first.has("random"):
            self.drew_random()
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
            lead = declared_axis(first, 0) if first.is_tensor and size_kind(first) == SHAPE else None
            if lead is not None and lead.kinds <= {CONST}:
                return const()  # `len(torch.tensor(wav.shape))`: the rank; a first dim fixed by a layer or the export
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
        if name == "isinstance" and len(node.args) == 2:
            known = tensor_test(first, type_names(node.args[1].value))
            if known is not None:
                return decided(known)
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
            if SEQ in first.kinds and element.is_shape and not element.is_data:
                # `if not all(x.shape):` tests sizes for zero: every non-empty input gives the same answer
                # (like `n > 0`, p27h; LongT5's `_pad_to_multiple`, discovery judging of 2026-11-24)
                return const()
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
            # (`zip(proposals, image_shapes)`), so the tensor is not iterated for its own size; so does a
            # `nn.ModuleList` (`for feat, proj in zip(x, self.projs)`: the feature maps, one per level)
            bounded = any((SEQ in v.kinds and not v.is_tensor) or v.has("modlist") for v in args.positional)
            starred = {id(a.value) for a in node.args if a.star == "*"}
            if any(id(n) in starred for n in args.nodes):
                # `zip(*shapes)` transposes a list of unknown length: each tuple holds elements of its elements
                inner = [_element(_element(v)) if id(n) in starred else _element(v) for v, n in zip(args.positional, args.nodes)]
                return seq_of(seq_of(join(inner)))
            elements = [
                _element(v) if bounded else self._iterate_value(v, n, node, "zip()", frame)
                for v, n in zip(args.positional, args.nodes)
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
            default = args.get(1, "default") if name in ("get", "pop") else None
            if default is not None and any(t.startswith("optional:") for t in default.tags):
                # `x.get("patch_coord", patch_coord)`: still None unless given, in the dict or as the input
                return join([OPAQUE, default])
            return OPAQUE if name in ("get", "pop") else seq_of(OPAQUE)  # it was a dict or a list
        if name in ("item", "tolist") and receiver.has("random"):
            self.drew_random()
        folded = _read_without_data(receiver) if name in ("item", "tolist", "numpy", "__array__") else None
        if folded is not None:
            return folded
        self.emit(
            ev.MethodCall(
                node, name, receiver, receiver_node, args.positional, args.keywords, id(node) in self.converted_items,
                checking=self.checking > 0 or (name in ("item", "tolist") and self._item_validates()),
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
                if receiver.has("param"):
                    return size_of(receiver, prov)  # a parameter's or buffer's size: a constant
                declared = declared_axis(receiver, axis)
                if declared is not None:
                    return declared
                if receiver.has("static_tail") and axis not in (None, 0):
                    return const()  # a learned-query tensor broadcast over the batch: only dim 0 varies
                k = size_kind(receiver, axis)
                return kind(k, *(("last_axis",) if axis == -1 else ()), *(raw_dim(receiver) if k == SHAPE else ()), prov=prov)
            return shape_seq_of(receiver)
        if name in ("dim", "ndimension"):
            return const()  # the rank: no exporter has a dynamic rank
        if name in ("numel", "nelement"):
            return count_of(receiver, prov)
        if name in api.SHAPE_METHODS:
            return size_of(receiver, prov)
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
            # repeats built from Python constants (`torch.tensor(self.output_size)`): the exporter sees their
            # values, the output size is static (N-HiTS, judged on held-out code)
            if repeats is not None and repeats.is_tensor and not repeats.has("const_tensor"):
                data_shape = True
                self.emit(ev.DataShapeOp(node, ".repeat_interleave()", repeats, self.checking > 0), frame)
        result = self._method_result(receiver, name, args)
        if name in ("permute", "transpose", "swapaxes", "flatten"):
            result = moved_dims(result, receiver, name, node)
        elif name == "unsqueeze" and result.is_tensor:
            result = unsqueezed_dims(result, receiver, node)
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
        if receiver.has(DATA_ROWS) and not data_shape and not result.has("scalar"):
            # rows selected by data: an op that keeps the first dim keeps the other sizes the base's
            return with_data_rows(result) if _keeps_rows(name, args, method=True) else with_data_shape(result)
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
        keep |= {t for t in receiver.tags if t.startswith("optional:")}  # mask.view(...): None exactly when mask is
        if name in _MOVEMENT:
            keep |= receiver.tags & {"bool"}  # `early_stopped_pairs.repeat_interleave(2)`: still a mask
        if name in _AXES_KEEPING:
            keep |= {t for t in receiver.tags if t.startswith(("dims:", "fixed:", "rank:"))}  # x.float(): the same dims
        if name in ("expand", "repeat") and receiver.has("param") and len(args.positional) > 1 and all(
            v.kinds <= {CONST, NONE} for v in args.positional[1:]
        ):
            keep |= {"static_tail"}  # self.query_tokens.expand(B, -1, -1): only the batch dim varies
        if name in ("to", "type_as") and receiver.has("param"):
            # `weights.to(X)`, `w.type_as(x)`: the other tensor gives a dtype and a device, not a shape
            keep |= receiver.tags & {"param", "const_tensor"}
        elif receiver.has("param") and all(v.kinds <= {CONST, NONE} or v.has("param") for v in args.all()):
            keep |= {"param"}  # self.pos_embed.reshape(1, M, M, -1): still parameter-shaped
            if receiver.has("const_tensor") and all(v.kinds <= {CONST, NONE} or v.has("const_tensor") for v in args.all()):
                keep |= {"const_tensor"}
        return Val(kinds=frozenset({TENSOR}), tags=keep, prov=merge_prov([receiver] + args.all()))

    def _size_and_slice_args(self, node: cst.Call, qual: str | None, method: str | None, args: "CallArgs", frame: Frame) -> None:
        dspec = api.DIM_FUNCS.get(qual) if qual else api.DIM_METHODS.get(method or "")
        if dspec is not None:
            op = qual or f".{method}()"
            for _, value, arg_node in args.select(*dspec):
                if value.is_definite_tensor:
                    # the Arg itself when `*`-unpacked: where EXL010 reports unrolling it (this says more)
                    anchor = next((a for a in node.args if a.value is arg_node and a.star == "*"), arg_node)
                    self.emit(ev.DimArg(anchor, op, value, arg_node), frame)
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
                element = positions == "all" and len(args.positional) > 1 and param == names[0]
                self.emit(ev.SizeArg(arg_node, qual or f".{method}()", param, value, elements, recomputed, element), frame)
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
        # `if x.device.type == "mps": ...; y = y.to("mps")`: back to the device the input is on, not a fixed one
        checked = frozenset().union(*self.on_device)
        if method in api.DEVICE_METHODS and not isinstance(node.func, cst.Name):
            if method not in checked:
                self.emit(ev.DeviceString(node, f".{method}()"), frame)
            return
        for arg in node.args:
            is_device_kw = arg.keyword is not None and arg.keyword.value == "device"
            is_to_positional = method == "to" and arg.keyword is None and arg is node.args[0]
            is_device_ctor = isinstance(node.func, (cst.Name, cst.Attribute)) and (dotted(node.func) or "").endswith("device") and arg is node.args[0] and arg.keyword is None
            device = _device_literal(arg.value) if is_device_kw or is_to_positional or is_device_ctor else None
            if device and device.split(":")[0] not in checked:
                self.emit(ev.DeviceString(arg.value if is_device_kw else node, device), frame)



# torch functions whose output has their index argument's size: (position, keyword, the `dim` they need to
# select along for that to cover the rows a mask selected, None for any)
_INDEX_SIZED = {"gather": (2, "index", None), "take_along_dim": (1, "indices", None), "take": (1, "index", None),
                "index_select": (2, "index", 0)}


# Ops that keep their input's first dim whatever it holds: elementwise, casts, activations, norms
_ROWS_KEEPING = (_AXES_KEEPING | api.SHAPE_KEEPING_FUNCS | api.RANK_KEEPING_FUNCS | {
    "masked_fill", "where", "type", "fill_", "zero_", "add_", "mul_", "sub_", "div_", "clamp_min", "clamp_max",
    "conj", "real", "imag", "angle", "new_tensor", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "isnan", "isfinite", "isinf", "logical_not",
} | api.ELEMENTWISE_PAIR_FUNCS - {"max", "min"})
# ... and ones that keep it unless their dim argument names it
_ROWS_REDUCING = {"sum", "mean", "max", "min", "amax", "amin", "norm", "prod", "std", "var", "argmax", "argmin", "cumsum",
                  "cumprod", "logsumexp", "softmax", "log_softmax", "all", "any", "unsqueeze", "squeeze", "select",
                  "index_select", "narrow", "unbind"}


def _keeps_rows(name: str, args: "CallArgs", method: bool) -> bool:
    """Does `op(rows, ...)` / `rows.op(...)` keep the rows a data-dependent index selected as its first
    dim, with the input's other sizes after them (see values.DATA_ROWS)?  Unknown ops: no (every dim may
    then depend on data, as before this was tracked per dim)."""
    first = 0 if method else 1  # where the op's own arguments start
    if name in _ROWS_KEEPING:
        return True
    if name in _ROWS_REDUCING:
        axis = _literal_arg(args, first, "dim")
        return axis is not None and axis != 0 and not (name in ("squeeze", "unbind", "select") and axis < 0)
    if name == "permute":
        axis = _literal_arg(args, first, "dims")
        if axis is None and len(args.nodes) > first and isinstance(args.nodes[first], (cst.Tuple, cst.List)):
            elements = args.nodes[first].elements  # type: ignore[attr-defined]
            axis = literal_axis(elements[0].value) if elements else None
        return axis == 0
    if name in ("transpose", "swapaxes", "movedim"):
        axes = (_literal_arg(args, first, "dim0"), _literal_arg(args, first + 1, "dim1"))
        return all(a is not None and a > 0 for a in axes)
    if name == "flatten":
        start = _literal_arg(args, first, "start_dim", default=0)
        return start is not None and start > 0
    if name in ("view", "reshape"):
        sizes = args.positional[first:]
        return bool(sizes) and sizes[0].is_dds and not sizes[0].is_tensor and not any(v.is_dds for v in sizes[1:])
    return False


def _literal_arg(args: "CallArgs", position: int, keyword: str, default: int | None = None) -> int | None:
    """A literal integer argument (`dim=1`), ``default`` when it is not passed, None when it is not a literal."""
    node = dict(args.kw_nodes).get(keyword) or (args.nodes[position] if len(args.nodes) > position else None)
    return literal_axis(node) if node is not None else default
