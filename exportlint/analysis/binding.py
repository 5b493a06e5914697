"""What a function's parameters hold when it is entered: the caller's arguments bound to them, or,
for an exported root's ``forward``, what its annotation, default and use say (a tensor input, a
setting, a training target that export never passes); and what a class's attributes hold
(submodules, parameters, tensors, settings)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from exportlint.analysis import torchapi as api
from exportlint.analysis.code_facts import (
    NodeMemo,
    class_arguments,
    config_default,
    constructor_default,
    describe_setting,
    gating_setting,
    handed_otherwise,
    literal,
    named_params,
    names_a_tensor,
    static_predicate,
)
from exportlint.analysis.dims import (
    ELEMENTWISE_LAYERS,
    NORM_LAYERS,
    TENSOR_WRAPPERS,
    param_shape_tag,
    with_declared_dims,
)
from exportlint.analysis.index import ClassInfo, FileIndex, dotted
from exportlint.diagnostics import Target
from exportlint.analysis.values import (
    Alternatives, CONST, NONE, TENSOR, UNKNOWN, Step, Val, const, join, kind, seq_of, tuple_of,
)
from exportlint.analysis.frames import CallArgs, FuncRef, Instance, LibraryModule, SelfRef, config_tag, decided

if TYPE_CHECKING:
    from exportlint.analysis.dataflow import Interpreter


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
TARGET_PARAMS = {"labels", "label", "targets", "target", "target_values", "return_loss", "gt", "gts", "y_true", "ground_truth"}


TARGET_PARAM_SUFFIXES = ("_labels", "_label", "_targets", "_positions_label", "gt_boxes", "gt_masks", "gt_instances")


# Prompts that models take as inputs although their names end like targets (SAM's point labels).
_INPUT_PREFIXES = ("input_", "prompt_", "point_")


def _is_target_param(name: str) -> bool:
    """Training targets an export passes no value for: `labels`, `class_labels`, RoCBert's
    `labels_input_ids`; not prompts (`input_labels`, SAM's point labels)."""
    if name.startswith(_INPUT_PREFIXES):
        return False
    return name in TARGET_PARAMS or name.endswith(TARGET_PARAM_SUFFIXES) or name.startswith("labels_")


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
            env[name] = _default_value(p, interp)
    for p in params.kwonly_params:
        name = p.name.value
        if call is None:
            env[name] = _param_default_kind(p, entry, ref, name, interp)
        else:
            env[name] = keywords.pop(name, None) or _default_value(p, interp)
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


_MAPPINGS = {"Dict", "dict", "Mapping", "MutableMapping"}


def mapping_annotation(text: str) -> Val | None:
    """What an annotation of a mapping (`Dict[str, torch.Tensor]`, `typing.Mapping[str, Any]`) holds: a
    container of tensors when its text names them; None for any other annotation."""
    if text.split("[", 1)[0].split(".")[-1] not in _MAPPINGS:
        return None
    return seq_of(kind(TENSOR, "maybe_tuple")) if "Tensor" in text else seq_of(UNKNOWN)


def _sequence_head(head: str) -> bool:
    """`list`, `Tuple`, `typing.Sequence`: an annotation's head naming a Python sequence."""
    return head in SEQ_ANNOTATIONS or head.endswith((".List", ".Sequence", ".Tuple"))


def container_annotation(text: str) -> Val | None:
    """What an annotation (its text, spaces removed) of a Python container holds: a mapping (see
    `mapping_annotation`), a list or tuple of tensors, of dicts of tensors, or of other values
    (`list[tuple[int, ...]]`); None for any other annotation."""
    mapping = mapping_annotation(text)
    if mapping is not None:
        return mapping
    head = text.split("[", 1)[0]
    if not _sequence_head(head):
        return None
    inner = text[len(head) + 1 : -1] if "[" in text else ""
    if inner.split("[", 1)[0] in ("Dict", "dict", "Mapping", "typing.Dict"):
        return seq_of(seq_of(kind(TENSOR, "maybe_tuple")))
    if "Tensor" in inner:
        return seq_of(kind(TENSOR, "maybe_tuple"))
    return seq_of(const() if inner.split(",")[0].split("[")[0] in NON_TENSOR_ANNOTATIONS else UNKNOWN)


def _annotated(p: cst.Param, value: Val, ref: FuncRef) -> Val:
    """An argument the caller's analysis knows nothing of, annotated as a list or tuple
    (`image_shapes: list[tuple[int, int]]`): a Python sequence, not a tensor.  A caller's tensor
    stays a tensor (a library's annotation can be wrong either way: `grid_thw: list[list[int]]`
    receiving a LongTensor, `spatial_shapes_list: torch.Tensor` receiving shape tuples)."""
    if value.kinds or p.annotation is None:
        return value
    head = ref.file.code(p.annotation.annotation).replace(" ", "").split("[", 1)[0]
    return seq_of(UNKNOWN) if _sequence_head(head) else value


def _default_value(p: cst.Param, interp: Interpreter | None = None) -> Val:
    """A parameter the call does not pass: its default.  A literal one is, in library code, a setting
    with that default (NormalBAE's decoder `forward(self, features, gt_norm_mask=None, mode='test')`,
    called as `self.decoder(self.encoder(img), **kwargs)`: code under `if mode == 'train':` runs only
    with a non-default `mode`)."""
    if p.default is None:
        return UNKNOWN
    if isinstance(p.default, cst.Name) and p.default.value in ("None", "True", "False"):
        value = p.default.value
        return kind(NONE) if value == "None" else decided(value == "True")
    if interp is not None and interp.library_mode:
        ok, default = literal(p.default)
        if ok and isinstance(default, (int, float, str)) and not isinstance(default, bool):
            return Val(kinds=frozenset({CONST}), tags=frozenset({config_tag(p.name.value, default)}))
    return const()


def _param_default_kind(p: cst.Param, entry: bool, ref: FuncRef, name: str, interp: Interpreter) -> Val:
    """Kind of a parameter when nobody passes it: the forward's inputs, or an uncalled nested function.
    In library code an option of the forward (`output_attentions: bool = False`) is a setting with
    its default, like a constructor's: the code only a non-default value runs is gated."""
    value = _entry_param_kind(p, entry, ref, name, interp)
    if interp.library_mode and entry and value.is_tensor and (
            (isinstance(p.default, cst.Name) and p.default.value == "None") or _optional_annotation(p, ref)):
        # an optional input (see frames.needed_input): `x=None`, or `chunk_size: Optional[torch.Tensor]` that
        # callers may pass as None (FunASR's RWKV subsampling: its encoder always does)
        return value.with_(tags=value.tags | {f"optional:{name}"})
    if interp.library_mode and p.default is not None and value.kinds <= {CONST, NONE} and value.kinds:
        ok, default = literal(p.default)
        if ok and (default is None or isinstance(default, (bool, int, float, str))):
            value = value.with_(tags=value.tags | {config_tag(name, default)})
    return value


def _optional_annotation(p: cst.Param, ref: FuncRef) -> bool:
    """`Optional[...]`, `... | None`: the parameter's annotation admits None."""
    return p.annotation is not None and _admits_none(ref.file.code(p.annotation.annotation).replace(" ", ""))


def _admits_none(text: str) -> bool:
    """An annotation's text (spaces removed) that admits None: `Optional[...]`, `...|None`, `None|...`."""
    return text.split("[", 1)[0] in ("Optional", "typing.Optional") or "|None" in text or "None|" in text


NON_TENSOR_SCALARS = {"float", "int", "bool", "complex", "Number", "numbers.Number"}


def _host_annotation(text: str) -> bool:
    """An annotation of host data: a number, a NumPy array, or a list / tuple of numbers."""
    head = text.split("[", 1)[0]
    if head in NON_TENSOR_SCALARS or head in NON_TENSOR_ANNOTATIONS or head.endswith("ndarray"):
        return True
    inner = text[len(head) + 1 : -1] if "[" in text else ""
    return head in SEQ_ANNOTATIONS and bool(inner) and all(_host_annotation(m) for m in _top_level(inner, ",") if m != "...")


def _top_level(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets (`list[int]|torch.Tensor` -> two members)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "["
        depth -= ch == "]"
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part for part in parts if part]


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
        optional = _admits_none(text)
        if optional:
            text = inner if head in ("Optional", "typing.Optional") else text.replace("|None", "").replace("None|", "")
            head = text.split("[", 1)[0]
            inner = text[len(head) + 1 : -1] if "[" in text else ""
        union = _top_level(inner, ",") if head in ("Union", "typing.Union") else _top_level(text, "|")
        if len(union) > 1:
            members = {m.split("[", 1)[0] for m in union}
            step = (Step(ref.file, p, name, "a tensor", TENSOR, "an input of `forward`", top=ref.file.top_of(ref.node)),)
            if any("Tensor" in m for m in members) and all("Tensor" in m or m in NON_TENSOR_SCALARS for m in members):
                # `timestep: Union[torch.Tensor, float, int]`: an exporter is handed the tensor (a number
                # would be a constant of the program)
                return kind(TENSOR, "entry_input", prov=step)
            if any("Tensor" in m for m in members):
                # `num_local_patches: list[int] | torch.Tensor`: a tensor, or a list the code turns it into;
                # what the arm where it is no tensor holds: host data when every other member is (FunASR's
                # `ilens: Union[torch.LongTensor, numpy.ndarray, List[int]]`), or a list of tensors
                others = [m for m in union if "Tensor" not in m.split("[", 1)[0]]
                tags = ("else_host",) if all(_host_annotation(m) for m in others) else ()
                if any(m.split("[", 1)[0] in SEQ_ANNOTATIONS and "Tensor" in m for m in others):
                    tags = ("else_seq",)  # `Union[torch.Tensor, List[torch.Tensor]]`: else a list of tensors
                return kind(TENSOR, "maybe_tuple", "entry_input", *tags, prov=step)
            return UNKNOWN
        container = container_annotation(text)
        if container is not None:
            return container
        if head in NON_TENSOR_ANNOTATIONS or head.split(".")[-1] in NON_TENSOR_ANNOTATIONS:
            # `dim_size: int` with no default: the caller passes a number, never None (PyG's TGN
            # LastAggregator hands it to `scatter_argmax(..., dim_size=dim_size)`, whose `if dim_size is
            # None:` arm is then dead)
            return kind(CONST, "given") if default is None and not optional else const()
        if names_a_tensor(head):
            return kind(TENSOR, "entry_input", prov=(Step(ref.file, p, name, "a tensor", TENSOR, "an input of `forward`", top=ref.file.top_of(ref.node)),))
        return UNKNOWN
    if default is not None and not (isinstance(default, cst.Name) and default.value == "None"):
        return const()
    if default is not None and name.startswith(FLAG_PREFIXES):
        return const()  # `use_cache=None`, `return_dict=None`: flags, not tensors
    # Unannotated: a tensor when the function uses it as one (`x.shape`, `x.view(...)`); otherwise
    # possibly a tuple or list of tensors (`cos, sin = position_embeddings`).
    tags = ("entry_input",) if name in _tensor_evidence(ref.node) else ("entry_input", "maybe_tuple")
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




def _class_attribute(cls: ClassInfo, attr: str, interp: Interpreter) -> Val:
    """What ``self.<attr>`` is: from the nearest class of the MRO that assigns it.  Classes of
    other files are read only if something already needed their code (a framework base class
    such as ``PreTrainedModel`` is thousands of lines of attributes that rarely matter)."""
    for c in cls.iter_mro():
        if c.file is not cls.file and not c.loaded:
            continue
        c.scan_attrs()
        vals = []
        if attr in c.tensor_attrs:  # self.register_buffer("position_ids", torch.arange(n).expand((1, -1)))
            built = c.tensor_attrs[attr]
            shape = param_shape_tag(built, c.file) if built is not None else None
            vals.append(kind(TENSOR, "param", *((shape,) if shape else ())))
        vals += [_built_under(_classify_attr_expr(expr, c, interp.target), c.attr_gates.get(id(expr)))
                 for expr in c.attr_exprs.get(attr, [])]
        if c.appended.get(attr) and vals and all(v.has("modlist") for v in vals):
            # `self.layers = nn.ModuleList()` then `self.layers.append(Layer(...))` in a loop
            parts = [_classify_attr_expr(expr, c, interp.target) for expr in c.appended[attr]]
            if all(p.has("module") or p.has("modlist") for p in parts):  # a ModuleList of layers or of ModuleLists
                return Val(tags=frozenset({"modlist"}), elem=join(parts))
        if vals:
            return join(vals)
        if attr in c.class_consts:
            return const()
    if attr in ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias"):
        return kind(TENSOR, "param")
    return UNKNOWN


def _built_under(value: Val, needs: str | None) -> Val:
    """A submodule an `__init__` arm builds only under a non-default setting: calls to it run under that
    setting (see ClassInfo.attr_gates)."""
    if needs is None or not isinstance(value.ref, Instance):
        return value
    return value.with_(ref=Instance(value.ref.cls, needs))


# Constructor arguments conventionally holding a normalisation or activation layer class (timm,
# torchvision): modelled as a layer of that family, which keeps its input's shape.
_SHAPE_KEEPING_FACTORIES = {
    "norm_layer": "torch.nn.LayerNorm", "act_layer": "torch.nn.GELU", "activation_layer": "torch.nn.ReLU",
}


_TUPLE_RETURNING_NN = {
    "RNN", "LSTM", "GRU", "LSTMCell", "MultiheadAttention", "ModuleList", "ModuleDict", "ParameterList",
    "ParameterDict", "Module",
}


def _shape_keeping_default(cls: ClassInfo, func: cst.BaseExpression) -> str | None:
    """torch.nn's activation or normalisation layer an `__init__` parameter called as a constructor
    defaults to (`act: Type[nn.Module] = nn.GELU`): its qualified name, else None."""
    init = cls.methods.get("__init__")
    if not isinstance(func, cst.Name) or init is None:
        return None
    for p in named_params(init):
        if p.name.value == func.value and p.default is not None:
            qual = cls.file.qualify(p.default) or ""
            layer = qual.rsplit(".", 1)[-1]
            if qual.startswith("torch.nn.") and (layer in ELEMENTWISE_LAYERS or layer in NORM_LAYERS):
                return qual
    return None


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


def _object_val(cls: "ClassInfo") -> Val:
    """An instance of a plain (not nn.Module) class of the linted set, such as torchvision's
    ``BoxCoder``: its methods are followed where they are called (``self.box_coder.decode_single(...)``)."""
    return Val(tags=frozenset({"object"}), ref=Instance(cls))


def _submodule_classes(file: FileIndex, classes: "dict[int, ClassInfo] | None" = None) -> dict[int, list[tuple[ClassInfo, str]]]:
    """The classes (of ``file`` or imported) that some class of ``file`` builds as a submodule: class
    id -> the (building class, attribute) pairs that hold it (`self.confidence_head =
    ConfidenceHead(...)`); ``classes`` receives each built class by id."""
    out: dict[int, list[tuple[ClassInfo, str]]] = {}

    def collect(v: Val | None, builder: ClassInfo, name: str) -> None:
        if v is None:
            return
        for ref in v.ref.options if isinstance(v.ref, Alternatives) else (v.ref,):
            if isinstance(ref, Instance):
                out.setdefault(id(ref.cls), []).append((builder, name))
                if classes is not None:
                    classes[id(ref.cls)] = ref.cls
        collect(v.elem, builder, name)
        for item in v.items or ():
            collect(item, builder, name)

    for cls in file.classes.values():
        cls.scan_attrs()
        # `self.blocks = nn.ModuleList()` then `self.blocks.append(Block(...))` in a loop builds them too
        # (segment-anything's ImageEncoderViT: its blocks see the grid its pos_embed fixes)
        for name, exprs in [*cls.attr_exprs.items(), *cls.appended.items()]:
            for expr in exprs:
                v = _classify_attr_expr(expr, cls)
                if not (isinstance(v.ref, Instance) and v.ref.cls is cls):
                    collect(v, cls, name)
    return out


def _arm_gates(test: cst.BaseExpression, cls: ClassInfo) -> tuple[str | None, str | None]:
    """The non-default setting each arm of an `__init__` test needs (its description), or None."""
    def setting(e: cst.BaseExpression) -> "tuple[str, object] | None":
        found = _setting_default(e, cls)
        if found is not None and isinstance(e, cst.Name) and handed_otherwise(cls, *found):
            return None  # `is_sparse` a builder computes (`i % sparse_step == 1`): no default path to name
        return found

    found = gating_setting(test, setting), gating_setting(test, setting, negated=True)
    return tuple(describe_setting(*f) if f is not None else None for f in found)  # type: ignore[return-value]


def _setting_default(test: cst.BaseExpression, cls: ClassInfo) -> "tuple[str, object] | None":
    """(setting, literal default) of an `__init__` test on its configuration (`config.use_mask_token`), or
    on a parameter with a literal default (`use_pos_embed=False`)."""
    init = cls.methods.get("__init__")
    if init is None:
        return None
    params = {p.name.value: p for p in named_params(init)}
    self_name = init.params.params[0].name.value if init.params.params else None
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == self_name:
        return constructor_default(cls, test.attr.value)  # `if self.enable_patch_interpolator:`
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value in params:
        return config_default(cls, test.attr.value)
    if isinstance(test, cst.Name) and test.value in params and params[test.value].default is not None:
        ok, value = literal(params[test.value].default)
        return (test.value, value) if ok else None
    return None


# torch factories whose result, from constant arguments, is a constant of the exported program
_CONSTANT_FACTORIES = {"tensor", "as_tensor", "zeros", "ones", "full", "arange", "linspace", "eye", "LongTensor", "FloatTensor"}


_CONFIG_NAMES = {"config", "cfg", "conf", "args", "opt", "opts", "hparams", "hps", "params", "settings"}


def _config_object(cls: ClassInfo, expr: cst.Attribute) -> bool:
    """Is ``expr`` a field of a configuration object `__init__` takes (`config.num_codebooks`,
    `args.hidden_dim`, `model_config.n_layers`)?  Configurations hold Python settings, never tensors."""
    base = expr.value
    while isinstance(base, cst.Attribute):
        base = base.value
    if not isinstance(base, cst.Name) or not (base.value in _CONFIG_NAMES or base.value.endswith(("_config", "_cfg"))):
        return False
    init = cls.methods.get("__init__")
    return init is not None and any(p.name.value == base.value for p in named_params(init))


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
        built = arms[1].kinds == {NONE} and (arms[0].kinds - {NONE} or arms[0].has("module"))
        flag = _setting_default(expr.test, cls) if built else None
        if flag is not None and not flag[1]:
            # `nn.Parameter(...) if config.use_absolute_position_embeddings else None` with the default False:
            # None unless that setting is changed (code under `if self.position_embeddings is not None:`
            # needs it: see Interpreter._setting); the part itself, where it exists
            part = arms[0]
            return part.with_(kinds=part.kinds | {NONE}, tags=part.tags | {f"built_if:{flag[0]}={flag[1]!r}"})
        if any(a.has("module") for a in arms):
            # `downsample(dim) if downsample is not None else None`: the part, where it exists
            # (code calls it under `if self.downsample is not None:`)
            arms = [a for a in arms if a.kinds != {NONE}]
        if (len(arms) == 2 and all(isinstance(a.ref, (Instance, LibraryModule)) for a in arms)
                and any(isinstance(a.ref, Instance) for a in arms) and arms[0].ref is not arms[1].ref):
            # `LSTMwRecDropout(...) if rec_dropout > 0 else nn.LSTM(...)`: the part only a non-default setting builds
            # runs under that setting (stanza's recurrent dropout, x-transformers' ALiBi bias)
            gates = _arm_gates(expr.test, cls)
            if any(gates):
                joined = join(arms)
                return joined.with_(ref=Alternatives((arms[0].ref, arms[1].ref), gates))
        return join(arms)
    if isinstance(expr, (cst.List, cst.Tuple)):
        parts = [_classify_attr_expr(e.value, cls) for e in expr.elements]
        if parts and all(p.has("module") for p in parts):
            return Val(tags=frozenset({"modlist"}), elem=join(parts))
        # a tuple or list, whatever its elements are, is never None: kornia's CenterCrop2D passes `self.size =
        # (size[0], size[1])` as `crop_by_indices(..., size)`, whose `if size is None:` arm is dead
        if all(CONST in p.kinds for p in parts):
            return kind(CONST, "given")
        if isinstance(expr, cst.Tuple):
            return tuple_of(parts, "given")  # `(key, torch.tensor(...))`: each element what it is
        return seq_of(join(parts) if parts else UNKNOWN, "given")
    if isinstance(expr, cst.Attribute) and _config_object(cls, expr):
        return const()  # `self.num_codebooks = config.num_codebooks`: a number of the configuration
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        inner = _classify_attr_expr(expr.elt, cls)
        return Val(tags=frozenset({"modlist"}), elem=inner) if inner.has("module") else UNKNOWN
    if isinstance(expr, cst.Call):
        qual = fi.qualify(expr.func)
        name = dotted(expr.func) or ""
        if (qual or name).rsplit(".", 1)[-1] in api.NTUPLE_HELPERS:
            # `self.kernel_size = _pair(kernel_size)`: the setting repeated into a tuple, not a tensor
            args = [_classify_attr_expr(a.value, cls, target) for a in expr.args]
            return const() if all(CONST in a.kinds for a in args) else UNKNOWN
        if qual in TENSOR_WRAPPERS:
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
            if last in _CONSTANT_FACTORIES and (id(expr) in cls.init_exprs or all(
                    CONST in _classify_attr_expr(a.value, cls, target).kinds for a in expr.args if a.keyword is None)):
                # `self._skiplist_ids = torch.tensor(resolved)`, `torch.arange(4)`: a tensor the exporter holds as
                # a constant, its size fixed (sentence_transformers' skiplist, judged on held-out code); so is any
                # tensor `__init__` builds (torchani's `torch.tensor([ATOMIC_NUMBER[e] for e in symbols])`)
                return kind(TENSOR, "param", "const_tensor")
            if last[:1].isupper():
                return _module_val(qual, (expr, fi))
            return kind(TENSOR) if not qual.startswith(api.NON_TENSOR_PREFIXES) and qual not in api.NON_TENSOR_FUNCS else const()
        if qual is not None and qual.split(".")[0] in api.MATH_ROOTS:
            return const()
        target = fi.classes.get(name)
        if target is None and qual is not None and fi.project is not None:
            target = fi.project.find_class(qual)
        if target is not None:
            return _module_val(target) if target.is_module() else _object_val(target)
        if isinstance(expr.func, cst.Name):
            built = _class_parameter(cls, expr.func.value)
            if built is not None:  # `self.downsample = downsample(...)` of the classes its callers pass
                return built
        if isinstance(expr.func, cst.Subscript) and isinstance(expr.func.value, cst.Name):
            # `ATTENTION_CLASSES[config._attn_implementation](config)`: one of the table's classes
            names = fi.class_tables.get(expr.func.value.value, [])
            options = [fi.classes[n] for n in names if n in fi.classes]
            if options and len(options) == len(names) and all(c.is_module() for c in options):
                return join([_module_val(c) for c in options])
        last = name.rsplit(".", 1)[-1] if name else ""
        default = _shape_keeping_default(cls, expr.func)
        if default is not None:
            # `self.act = act()` with `act: Type[nn.Module] = nn.GELU` (segment-anything's MLPBlock): an
            # activation / normalisation layer class by default, which keeps its input's shape
            return _module_val(default, (expr, fi))
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
