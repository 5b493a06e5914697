"""What the dataflow knows about torch, numpy and Python builtins: one table per fact.

Rules never consult these tables; the interpreter does, and hands rules values and events.
"""

from __future__ import annotations

# Predicates whose value the exporters decide (family I, measured on torch 2.13): eager sees
# False; the value while capturing under target (export, trace).  None = the exporters of that
# target disagree (``is_in_onnx_export()`` is True in torch.onnx.export only).
EXPORT_PREDICATES: dict[str, tuple[bool | None, bool | None]] = {
    "torch.jit.is_scripting": (False, False),
    "torch.jit._script.is_scripting": (False, False),
    "torch.jit.is_tracing": (False, True),
    "torch.jit._trace.is_tracing": (False, True),
    "torch._C._get_tracing_state": (False, True),
    "torch.compiler.is_exporting": (True, False),
    "torch.compiler.is_compiling": (True, False),
    "torch.compiler.is_dynamo_compiling": (True, False),
    "torch._dynamo.is_compiling": (True, False),
    "torch._utils.is_compiling": (True, False),
    "torch.onnx.is_in_onnx_export": (None, None),
    "transformers.utils.is_tracing": (True, True),  # compiling, or jit-tracing: True under every exporter
}
# Checks that bound a data-dependent value for torch.export (the fix EXL030 recommends): the names
# in their condition are "checked" from there on.  transformers' wrapper calls torch._check.
CHECK_FUNCS = {"_check", "_check_is_size", "_check_with", "_check_tensor_all", "torch_compilable_check"}
# Calls that only validate (their arguments change no output): the checks and `torch._assert*`.
VALIDATING_CALLS = CHECK_FUNCS | {"_assert", "_assert_async"}

# Class decorators that replace a Module's forward by another implementation by default:
# transformers 5's `@use_experts_implementation` dispatches MoE experts to `grouped_mm` unless
# `experts_implementation="eager"` is asked for, so the class's own (eager loop) forward is not what
# a default export runs.
FORWARD_REPLACING_DECORATORS = {"use_experts_implementation"}
# Methods a project writes for its exporters to call instead of `forward` (RF-DETR's `export()` sets
# `m.forward = m.forward_export` on every module that has one; diffusers' ONNX conversion calls the
# safety checker's `forward_onnx`)
EXPORT_FORWARDS = ("forward_export", "export_forward", "forward_onnx", "onnx_forward", "forward_for_export")

# Model libraries' wrappers of those predicates, by the name they are imported under.
PREDICATE_HELPERS = {
    "is_torchdynamo_compiling": "torch.compiler.is_compiling",  # transformers
    "is_torchdynamo_exporting": "torch.compiler.is_exporting",  # transformers
    "is_tracing": "transformers.utils.is_tracing",  # transformers (torch.jit.is_tracing is torch.*)
    "is_exporting": "torch.compiler.is_exporting",  # timm's wrapper
    "is_compiling": "torch.compiler.is_compiling",
    "_is_tracing": "torch.jit.is_tracing",  # torchvision
}

def resolve_predicate(qual: str) -> str | None:
    """The predicate of EXPORT_PREDICATES that ``qual`` is (directly, or a library wrapper's name)."""
    if qual in EXPORT_PREDICATES:
        return qual
    return PREDICATE_HELPERS.get(qual.rsplit(".", 1)[-1])


def predicate_value(qual: str, target: str) -> bool | None:
    """Its value while the target's exporters capture the model (None: they disagree)."""
    return EXPORT_PREDICATES[qual][1 if target == "trace" else 0]


# Distributed-training predicates: False in a single-process eager run and while exporting, so a
# value chosen between them and a constant False is False either way (transformers' `synced_gpus =
# False if is_torchdynamo_compiling() else is_deepspeed_zero3_enabled() or is_fsdp_managed_module(self)`).
SINGLE_PROCESS_FALSE = {"is_deepspeed_zero3_enabled", "is_fsdp_managed_module", "is_fsdp_enabled"}


# Random draws: branching on them is data augmentation (data-pipeline code), never export code.
RANDOM_FUNCS = {
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
    "multinomial", "normal", "poisson",
}
RANDOM_METHODS = {"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_"}

# Calls that only log or warn: an `if` whose body does nothing else is a validation guard.
LOGGING_CALLS = {
    "warn", "warning", "warning_once", "warn_once", "warning_advice", "info", "info_once", "debug",
    "error", "exception", "critical", "log", "print",
}

# torch functions whose result is not a tensor (and carries no data).
NON_TENSOR_FUNCS = {
    "torch.is_tensor",
    "torch.is_floating_point",
    "torch.is_complex",
    "torch.is_storage",
    "torch.is_grad_enabled",
    "torch.is_inference_mode_enabled",
    "torch.is_autocast_enabled",
    "torch.get_default_dtype",
    "torch.get_autocast_gpu_dtype",
    "torch.device",
    "torch.dtype",
    "torch.finfo",
    "torch.iinfo",
    "torch.typename",
    "torch.no_grad",
    "torch.enable_grad",
    "torch.inference_mode",
    "torch.autocast",
    "torch.cuda.is_available",
    "torch.cuda.device_count",
    "torch.cuda.current_device",
    "torch.cuda.amp.autocast",
    "torch.amp.autocast",
    "torch.backends.mps.is_available",
    "torch.get_num_threads",
    "torch.promote_types",
    "torch.result_type",
    "torch.can_cast",
    # a PackedSequence (data, batch sizes), fed to a recurrent layer: not a tensor of its own
    "torch.nn.utils.rnn.pack_padded_sequence",
    "torch.nn.utils.rnn.pack_sequence",
}
# torch.is_autocast_cpu_enabled(), torch.get_default_device(), torch.set_grad_enabled(...)
PREDICATE_PREFIXES = ("is_", "get_", "set_", "has_", "can_", "are_", "use_", "_is_", "_get_")
NON_TENSOR_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.utils.data.", "torch.hub.",
    "torch.utils.hooks.", "torch.utils._pytree.", "torch.fx.", "torch._C.", "torch.overrides.",
)
# Methods of dicts and lists (a value we took for a tensor was a container after all).
CONTAINER_METHODS = {"items", "keys", "values", "get", "append", "extend", "update", "pop", "setdefault", "copy", "insert"}

# f(fn, *args) runs fn(*args).
CALL_THROUGH_FUNCS = {
    "torch.utils.checkpoint.checkpoint",
    "torch.func.functional_call",
}

# Functions (torch.X) and methods (t.X) returning a tuple of tensors.
TUPLE_FUNCS = {
    "unbind", "split", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes",
    "topk", "sort", "meshgrid", "broadcast_tensors", "kthvalue", "mode", "aminmax",
    "frexp", "std_mean", "var_mean", "histogram", "slogdet", "lu", "qr", "svd", "eig", "eigh",
    "lstsq", "geqrf", "cummax", "cummin", "atleast_1d" , "unique_consecutive_with_counts",
    "multi_head_attention_forward", "_pair", "_single", "_triple", "_quadruple", "to_2tuple",
    "to_3tuple", "to_4tuple", "to_ntuple",
    # torch.linalg's `*_ex` / factorisations: (LU, pivots, info), (inverse, info), ...
    "lu_factor", "lu_factor_ex", "inv_ex", "cholesky_ex", "solve_ex", "ldl_factor", "ldl_factor_ex", "lu_unpack",
}
# Helpers that repeat a setting into a tuple (`_pair(kernel_size)`, timm's `to_2tuple(img_size)`).
NTUPLE_HELPERS = {"_pair", "_single", "_triple", "_quadruple", "to_2tuple", "to_3tuple", "to_4tuple", "to_ntuple"}
# Fields of the named tuples those return (``x.max(-1).values``, ``topk(...).indices``).
NAMED_TUPLE_FIELDS = {"values", "indices", "Q", "R", "U", "S", "V", "Vh", "L", "eigenvalues", "eigenvectors", "solution", "mantissa", "exponent", "counts", "inverse", "output", "LU", "pivots", "info", "sign", "logabsdet", "LD"}
# ... only with a dim argument (``x.max()`` is a tensor, ``x.max(1)`` a (values, indices) pair).
TUPLE_WITH_DIM = {"max", "min", "median", "nanmedian"}
# ... only with a flag: ``unique(return_inverse=True)``, ``nonzero(as_tuple=True)``.
TUPLE_WITH_FLAG = {
    "unique": ("return_inverse", "return_counts"),
    "unique_consecutive": ("return_inverse", "return_counts"),
    "nonzero": ("as_tuple",),
}

# Reductions that give a 0-d tensor when called without a dim.
FULL_REDUCTIONS = {
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "all", "any",
    "norm", "std", "var", "median", "count_nonzero", "logsumexp", "nansum", "nanmean",
}

# Tensor methods / attributes that are not tensors.
SHAPE_METHODS = {"size", "dim", "ndimension", "numel", "nelement", "__len__"}
CONST_METHODS = {
    "is_floating_point", "is_complex", "is_contiguous", "element_size", "get_device", "data_ptr",
    "stride", "storage_offset", "is_signed", "has_names", "is_pinned", "is_shared", "is_set_to",
    "__repr__",
}
CONST_ATTRS = {
    "dtype", "device", "is_cuda", "is_cpu", "is_sparse", "is_quantized", "is_meta", "is_leaf",
    "requires_grad", "layout", "names", "is_mps", "itemsize", "nbytes", "is_nested",
}
TENSOR_ATTRS = {"T", "mT", "H", "mH", "data", "grad", "real", "imag"}
# The configuration of torch.nn layers (`conv.padding`, `linear.in_features`): Python values, never
# tensors, read from a value the analysis could not tell apart from a model output.
LAYER_CONFIG_ATTRS = {
    "padding", "stride", "kernel_size", "dilation", "groups", "in_channels", "out_channels", "in_features",
    "out_features", "num_embeddings", "embedding_dim", "padding_idx", "padding_mode", "output_padding",
    "normalized_shape", "eps", "momentum", "num_features", "num_heads", "embed_dim", "head_dim", "scale_factor",
}

# Tensor constructors whose *data* argument is traced as a constant (EXL011).
TENSOR_CTORS = {
    "torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.asarray",
    "torch.LongTensor", "torch.FloatTensor", "torch.IntTensor", "torch.BoolTensor",
    "torch.DoubleTensor", "torch.HalfTensor", "torch.ByteTensor", "torch.ShortTensor",
    "torch.CharTensor", "torch.BFloat16Tensor",
    "torch.cuda.LongTensor", "torch.cuda.FloatTensor", "torch.cuda.IntTensor",
}
# Legacy constructors also accept sizes: ``torch.LongTensor(2, 3)`` (not data).
LEGACY_CTORS = TENSOR_CTORS - {"torch.tensor", "torch.as_tensor", "torch.asarray"}

# Stacking ops: a stack of sizes is a size tensor.
STACK_FUNCS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"}

# Ops whose output shape depends on data (EXL032).
DATA_SHAPE_OPS = {"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"}
# Library functions whose output size depends on data (by qualified name's last part, under
# these packages): torchvision's NMS family keeps a data-dependent number of boxes.
DATA_SHAPE_LIBRARY = {
    "torchvision.ops": {"nms", "batched_nms", "remove_small_boxes"},
    "torchvision.ops.boxes": {"nms", "batched_nms", "remove_small_boxes", "_batched_nms_vanilla", "_batched_nms_coordinate_trick"},
    "torch.ops.torchvision": {"nms"},
}

# Which arguments are sizes: name -> (positional indexes or "all", keyword names).
SIZE_FUNCS: dict[str, tuple[object, tuple[str, ...]]] = {
    "torch.nn.functional.interpolate": ((1, 2), ("size", "scale_factor")),
    "torch.nn.functional.upsample": ((1, 2), ("size", "scale_factor")),
    "torch.nn.functional.upsample_nearest": ((1, 2), ("size", "scale_factor")),
    "torch.nn.functional.upsample_bilinear": ((1, 2), ("size", "scale_factor")),
    "torch.nn.functional.adaptive_avg_pool2d": ((1,), ("output_size",)),
    "torch.nn.functional.adaptive_max_pool2d": ((1,), ("output_size",)),
    "torch.reshape": ((1,), ("shape",)),
    "torch.zeros": ("all", ("size",)),
    "torch.ones": ("all", ("size",)),
    "torch.empty": ("all", ("size",)),
    "torch.rand": ("all", ("size",)),
    "torch.randn": ("all", ("size",)),
    "torch.full": ((0,), ("size",)),
    "torch.broadcast_to": ((1,), ("size",)),
}
# Functions that build a new tensor of a given size from sizes only: `torch.arange(batch_size)` is a
# 1-D tensor, not a 0-d value computed from sizes (like `torch.div(seq_len, w)`).
FACTORY_FUNCS = {
    "torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn", "torch.full", "torch.arange",
    "torch.range", "torch.linspace", "torch.logspace", "torch.eye", "torch.randint", "torch.randperm",
    "torch.empty_strided", "torch.tril_indices", "torch.triu_indices",
}
SIZE_METHODS: dict[str, tuple[object, tuple[str, ...]]] = {
    "view": ("all", ("size",)),
    "reshape": ("all", ("shape",)),
    "expand": ("all", ("size",)),
    "new_zeros": ((0,), ("size",)),
    "new_ones": ((0,), ("size",)),
    "new_empty": ((0,), ("size",)),
    "new_full": ((0,), ("size",)),
    "broadcast_to": ((0,), ("size",)),
}
# Arguments that are dim indices: Python ints, never read from a tensor (a tensor's elements become
# data-dependent ints: `GuardOnDataDependentSymNode`, measured p31).
DIM_METHODS: dict[str, tuple[object, tuple[str, ...]]] = {
    "permute": ("all", ("dims",)), "transpose": ("all", ("dim0", "dim1")), "swapaxes": ("all", ("axis0", "axis1")),
    "swapdims": ("all", ("dim0", "dim1")), "movedim": ("all", ("source", "destination")),
    "moveaxis": ("all", ("source", "destination")), "flip": ("all", ("dims",)), "unsqueeze": ((0,), ("dim",)),
}
DIM_FUNCS: dict[str, tuple[object, tuple[str, ...]]] = {
    "torch.permute": ((1,), ("dims",)), "torch.transpose": ((1, 2), ("dim0", "dim1")), "torch.flip": ((1,), ("dims",)),
    "torch.movedim": ((1, 2), ("source", "destination")), "torch.unsqueeze": ((1,), ("dim",)),
}
# Ops whose result's dims are computed from their input's (pooling, strides, padding, resizing): a
# size read from the result may be 0 or 1 (used by the dataflow's `derived_dims`).
RESIZING_OPS = {
    "interpolate", "upsample", "pad", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "max_pool1d", "max_pool2d",
    "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "narrow", "split", "chunk", "tensor_split",
    "repeat", "repeat_interleave", "tile", "diff", "stft",
}
RESIZING_LAYERS = ("Conv", "MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool", "Upsample", "PixelShuffle",
                   "PixelUnshuffle", "Unfold", "Fold", "ConstantPad", "ZeroPad", "ReflectionPad", "ReplicationPad")
# Arguments that are slice sizes / offsets (EXL030).
SLICE_FUNCS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "narrow": ((2, 3), ("start", "length")),
    "split": ((1,), ("split_size_or_sections",)),
    "split_with_sizes": ((1,), ("split_sizes",)),
    "tensor_split": ((1,), ("indices_or_sections", "sections", "indices")),
}
SLICE_METHODS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "narrow": ((1, 2), ("start", "length")),
    "split": ((0,), ("split_size", "split_size_or_sections")),
    "split_with_sizes": ((0,), ("split_sizes",)),
    "tensor_split": ((0,), ("indices_or_sections", "sections", "indices")),
}

# Calls producing boolean tensors (for boolean-mask indexing).
BOOL_FUNCS = {
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "logical_and", "logical_or", "logical_not",
    "logical_xor", "eq", "ne", "gt", "ge", "lt", "le", "greater", "less", "greater_equal", "less_equal",
    "isin", "bool", "signbit", "isclose", "not_equal",
}

HOST_NUMPY = {"numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray"}
MATH_ROOTS = ("math", "random", "numpy")

CONVERTERS = {"int", "float", "bool", "complex"}

# NumPy functions that torch.export computes on a symbolic size by pinning it (export passes, the program
# rejects the next size: `np.ceil(n / 4)` -> `Guard failed: math.ceil(x.size()[0] / 4) == 4`), where the
# others (`np.sqrt`, `np.log`, `np.exp`, `np.round`) fail (`ufunc ... no callable sqrt method`); measured
# on torch 2.13 (rule doc EXL042).
NUMPY_PINNING = {
    "numpy.ceil", "numpy.floor", "numpy.trunc", "numpy.fix", "numpy.abs", "numpy.absolute", "numpy.clip",
    "numpy.minimum", "numpy.maximum", "numpy.power", "numpy.array", "numpy.asarray", "numpy.zeros", "numpy.ones",
    "numpy.empty", "numpy.full",
}
# Shape values leaving symbolic integer arithmetic (EXL042), measured on torch 2.13
# (benchmarks/claims/measured.md).  jit.trace holds sizes as traced 0-d tensors: every conversion
# to a Python number bakes the example's value.  torch.export (non-strict, the default; ONNX dynamo
# falls back to it) specialises the dim for these forms; the others stay symbolic.
# `torch.as_tensor(n)` / `torch.asarray(n)` of a size: torch.export specialises it (Dim.AUTO: a static program;
# a named Dim: "Constraints violated"), the ONNX dynamo model keeps the example's value; jit.trace keeps it
# traced, and `torch.tensor(n)` stays symbolic under every exporter (measured, EXL042's rule doc)
SIZE_PINNING_CTORS = {"torch.as_tensor", "torch.asarray"}
# torch / torch.nn.functional ops whose output has their input's shape (`F.gelu(x)`, `F.dropout(x)`) ...
SHAPE_KEEPING_FUNCS = {
    "relu", "relu6", "gelu", "silu", "mish", "sigmoid", "tanh", "hardswish", "hardsigmoid", "leaky_relu", "elu",
    "selu", "celu", "softplus", "softmax", "log_softmax", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm", "normalize", "clamp", "clip", "abs",
    "exp", "log", "sqrt", "rsqrt", "neg", "square", "erf", "log10", "log2", "log1p", "exp2", "expm1", "sin", "cos",
    "sign", "floor", "ceil", "round", "reciprocal", "pow",
}
# Elementwise ops of two tensors: the result broadcasts them (`torch.max(S, self.amin)`)
ELEMENTWISE_PAIR_FUNCS = {"maximum", "minimum", "max", "min", "add", "sub", "mul", "div", "true_divide", "pow", "atan2",
                          "hypot", "fmax", "fmin"}
# ... or at least its rank (`F.pad(x, ...)`, `F.interpolate(x, ...)`, `F.conv2d(x, w)`)
RANK_KEEPING_FUNCS = {"pad", "interpolate", "upsample", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                      "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d",
                      "max_pool2d", "max_pool3d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "grid_sample"}
# Elementwise torch functions that keep a 0-d tensor of one size one size (`torch.min(torch.tensor(4), n)`)
ELEMENTWISE_SIZE_FUNCS = {"min", "max", "minimum", "maximum", "clamp", "clip", "div", "floor_divide", "remainder",
                          "add", "sub", "mul", "abs", "where"}
EXPORT_SPECIALISING = {
    "int()", "float()", "round()", "bool()", "complex()", "len()", "range()", "numpy()", "numpy.arange()", "math.sqrt()",
    "math.log()", "math.log2()", "math.exp()", "math.pow()",
} | {f"{q}()" for q in NUMPY_PINNING} | {f"{q}()" for q in SIZE_PINNING_CTORS}
# ... forms that stay symbolic under torch.export (`math.ceil(h / s)` is a SymInt expression).
EXPORT_SYMBOLIC_ON_FLOATS = {"math.ceil()", "math.floor()", "math.trunc()"}


# NumPy functions that only add or multiply their operands: on sizes they compute with the SymInts
# themselves (object arrays), so torch.export and ONNX dynamo keep them symbolic (measured, p09g).
NUMPY_ARITHMETIC = {"numpy.prod", "numpy.product", "numpy.sum"}
# `math.prod` multiplies the sizes themselves: every exporter keeps the product symbolic (traced), p09j.
MATH_SIZE_ARITHMETIC = {"math.prod"}
# NumPy functions with a form of their own (a measured severity): `np.arange(0, n, c)` pins `n / c`
# under torch.export (the program rejects the next size) but ONNX dynamo follows it (p09i).
NUMPY_OWN_FORM = NUMPY_ARITHMETIC | {"numpy.arange"}
NUMPY_OWN_FORM |= NUMPY_PINNING

# Conversions whose result is a Python float.
FLOAT_FORMS = {
    "float()", "math.sqrt()", "math.log()", "math.log2()", "math.exp()", "math.pow()", "numpy()", "numpy.ceil()",
    "numpy.floor()", "numpy.trunc()", "numpy.fix()",
}


def specialises(form: str, on_float: bool, target: str) -> bool:
    """Does the target's exporter fix a dynamic dim (or bake the value) at this conversion?"""
    if target == "trace":
        return form[:-2] not in SIZE_PINNING_CTORS
    if form in EXPORT_SYMBOLIC_ON_FLOATS:
        return False
    return form in EXPORT_SPECIALISING or form.startswith("math.")

# `.cpu()` / "cpu" are deliberate host round-trips (metadata for Python, numpy): they export and
# run (measured); the tensor-to-host problem, if any, is EXL002's.  An accelerator is hard-coded.
DEVICE_METHODS = {"cuda"}

# Methods that (among the values model code handles) only tensors have: calling one on an
# unknown value tells us it is a tensor.
TENSOR_ONLY_METHODS = {
    "item", "tolist", "numpy", "any", "all", "nonzero", "argmax", "argmin", "softmax", "sigmoid",
    "masked_fill", "masked_select", "unsqueeze", "squeeze", "permute", "view", "float", "long", "bool",
    "half", "detach", "contiguous", "numel", "dim", "unbind", "size", "clamp", "flatten", "norm",
}
