"""The exporter behaviour the rules rely on, checked against the real exporters (torch 2.13).

Each test is one claim of benchmarks/claims/measured.md (probe ids in the test names); the probe
modules are the ones in benchmarks/claims/probes.py. If an exporter changes its behaviour, the
test that fails names the claim, and the rule document / severity built on it must be revisited.
"""

from __future__ import annotations

import importlib.util
import io
import sys
import warnings
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.dynamic,
    pytest.mark.filterwarnings("ignore::UserWarning"),  # the probes' own warnings.warn, torch's UserWarnings
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # torch.jit.* / legacy ONNX deprecations
]

torch = pytest.importorskip("torch", reason="the exporter claims need torch (pip install exportlint[dynamic])")
pytest.importorskip("onnxruntime", reason="the exporter claims need onnxruntime (pip install exportlint[dynamic])")
pytest.importorskip("onnxscript", reason="the ONNX dynamo claims need onnxscript (pip install exportlint[dynamic])")
if not torch.__version__.startswith("2.13."):
    pytest.skip(f"the claims were measured on torch 2.13, this is torch {torch.__version__}", allow_module_level=True)

from torch.export import Dim  # noqa: E402
from torch.fx.experimental.symbolic_shapes import is_concrete_int  # noqa: E402

_PROBES = Path(__file__).resolve().parents[1] / "benchmarks" / "claims" / "probes.py"
_spec = importlib.util.spec_from_file_location("exportlint_claim_probes", _PROBES)
P = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = P
_spec.loader.exec_module(P)


# -- helpers -----------------------------------------------------------------------------------


def _probe(pid):
    return P.PROBES[pid]


def _b(probe, label="B"):
    return dict(probe.bs)[label]()


def _flat(o):
    if isinstance(o, torch.Tensor):
        return [o]
    return [t for x in o for t in _flat(x)]


def _same(a, b) -> bool:
    fa, fb = _flat(a), _flat(b)
    return len(fa) == len(fb) and all(
        x.shape == y.shape and torch.allclose(x.double(), y.double(), rtol=1e-4, atol=1e-4, equal_nan=True)
        for x, y in zip(fa, fb)
    )


def _outcome(run, probe, label="B"):
    """'match' / 'mismatch' / 'raise' of an artifact against eager on input `label`."""
    args = _b(probe, label)
    expected = probe.make()(*args)
    try:
        got = run(*args)
    except Exception:  # noqa: BLE001
        return "raise"
    return "match" if _same(expected, got) else "mismatch"


def _export(probe, *, strict=False, hint=Dim.AUTO):
    n = len(probe.a())
    ds = tuple({d: hint for d in probe.dyn.get(i, [])} or None for i in range(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.export.export(probe.make(), probe.a(), dynamic_shapes=ds, strict=strict)


def _static_dims(ep, probe):
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    return [
        (i, d)
        for i, name in enumerate(names)
        for d in probe.dyn.get(i, [])
        if is_concrete_int(nodes[name].meta["val"].shape[d])
    ]


def _trace(probe):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        traced = torch.jit.trace(probe.make(), probe.a(), check_trace=False)
    tracer = [w for w in ws if issubclass(w.category, torch.jit.TracerWarning)]
    return traced, tracer


def _onnx_dynamo(probe, hint=None):
    """torch.onnx.export(dynamo=True) with named dynamic axes (or `hint`, e.g. `Dim.AUTO`, on every
    dynamic dim), as an onnxruntime runner."""
    n = len(probe.a())
    ds = tuple({d: hint or f"a{i}d{d}" for d in probe.dyn.get(i, [])} or None for i in range(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(probe.make(), probe.a(), dynamo=True, dynamic_shapes=ds, verbose=False,
                                 input_names=[f"in{i}" for i in range(n)])
    return P.ort_runner(prog.model_proto.SerializeToString())[0]


def _onnx_legacy(probe):
    n = len(probe.a())
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(probe.make(), probe.a(), buf, dynamo=False, input_names=[f"in{i}" for i in range(n)],
                          dynamic_axes={f"in{i}": {d: f"a{i}d{d}" for d in dims} for i, dims in probe.dyn.items()})
    return P.ort_runner(buf.getvalue())[0]


# -- (a) Dim.AUTO specialises int(h) / len(x); integer shape arithmetic stays symbolic --------------


@pytest.mark.parametrize("pid", ["p01", "p02", "p18a"])
def test_non_strict_auto_specialises_int_of_a_shape(pid):
    """p01 `int(x.shape[0])` (even unused), p02 in `view`, p18a `len(x)`: the dim becomes static."""
    probe = _probe(pid)
    ep = _export(probe)
    assert _static_dims(ep, probe) == [(0, 0)]
    assert _outcome(ep.module(), probe) == "raise"  # Guard failed: x.size()[0] == 3


@pytest.mark.parametrize("pid", ["p01", "p18a"])
def test_strict_export_keeps_int_of_a_shape_dynamic(pid):
    probe = _probe(pid)
    ep = _export(probe, strict=True)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe) == "match"


def test_dim_dynamic_rejects_int_of_a_shape():
    from torch._dynamo.exc import UserError

    with pytest.raises(UserError, match="Constraints violated"):
        _export(_probe("p01"), hint=Dim.DYNAMIC)


@pytest.mark.parametrize("pid", ["p12", "p05c", "p08b", "p16", "p18b", "p15b", "p03c"])
def test_integer_shape_arithmetic_stays_symbolic(pid):
    """p12 `reshape(h // 2, -1)` and the other integer controls: dynamic and correct on B."""
    probe = _probe(pid)
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe) == "match"


# -- (b) DINOv2 interpolate_pos_encoding and its size= fix -------------------------------------------


def test_dinov2_scale_factor_breaks_jit_trace():
    probe = _probe("p04")
    traced, tracer = _trace(probe)
    assert tracer, "TracerWarnings at `float(w0) / sqrt_N`"
    assert _outcome(traced, probe) in {"raise", "mismatch"}


def test_dinov1_scale_factor_without_float_fails_jit_trace():
    with pytest.raises(TypeError):
        _trace(_probe("p04c"))


def test_dinov2_scale_factor_is_pinned_by_torch_export_even_with_dim_dynamic():
    probe = _probe("p04")
    ep = _export(probe, hint=Dim.DYNAMIC)  # no error at export time ...
    assert _static_dims(ep, probe) == []
    with pytest.raises(Exception, match="Guard failed"):  # ... but the program only takes the example's size
        ep.module()(*_b(probe))


def test_a_float_scale_factor_from_sizes_follows_the_size_only_with_recompute_scale_factor():
    # EXL042 reports a float `scale_factor` from sizes unless the call recomputes the size from it
    assert _outcome(_export(_probe("p03d")).module(), _probe("p03d")) == "match"
    assert _outcome(_export(_probe("p03e")).module(), _probe("p03e")) == "raise"


def test_dinov2_size_fix_traces_and_exports_correctly():
    probe = _probe("p04f")
    traced, _ = _trace(probe)
    assert _outcome(traced, probe) == "match"
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_onnx_legacy(probe), probe) == "match"


# -- (c) export-mode predicates --------------------------------------------------------------------


def _branch_taken(fn, exporter):
    """True if the artifact took the `if pred():` arm (the module returns x + 1 there, x - 1 otherwise)."""
    x = torch.zeros(2, 3)
    m = P.predicate_module(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "eager":
            out = m(x)
        elif exporter == "export":
            out = torch.export.export(m, (x,)).module()(x)
        elif exporter == "export-strict":
            out = torch.export.export(m, (x,), strict=True).module()(x)
        elif exporter == "trace":
            out = torch.jit.trace(m, (x,), check_trace=False)(x)
        elif exporter == "legacy":
            buf = io.BytesIO()
            torch.onnx.export(m, (x,), buf, dynamo=False, input_names=["in0"])
            out = P.ort_runner(buf.getvalue())[0](x)[0]
    return bool((out == 1).all())


PREDICATES = {
    # predicate: (eager, export, export-strict, trace, legacy)
    "jit.is_scripting": (lambda: torch.jit.is_scripting(), (False, False, False, False, False)),
    "jit.is_tracing": (lambda: torch.jit.is_tracing(), (False, False, False, True, True)),
    "compiler.is_exporting": (lambda: torch.compiler.is_exporting(), (False, True, True, False, False)),
    "compiler.is_compiling": (lambda: torch.compiler.is_compiling(), (False, True, True, False, False)),
    "onnx.is_in_onnx_export": (lambda: torch.onnx.is_in_onnx_export(), (False, False, False, False, True)),
    "_get_tracing_state": (lambda: torch._C._get_tracing_state() is not None, (False, False, False, True, True)),
}


@pytest.mark.parametrize("name", list(PREDICATES))
def test_export_mode_predicate_values(name):
    fn, expected = PREDICATES[name]
    got = tuple(_branch_taken(fn, e) for e in ("eager", "export", "export-strict", "trace", "legacy"))
    assert got == expected


def test_onnx_dynamo_answers_is_exporting_and_is_in_onnx_export():
    x = torch.zeros(2, 3)

    def both():
        return torch.compiler.is_exporting() and torch.onnx.is_in_onnx_export() and not torch.jit.is_tracing()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(P.predicate_module(both), (x,), dynamo=True, verbose=False, input_names=["in0"])
    out = P.ort_runner(prog.model_proto.SerializeToString())[0](x)[0]
    assert bool((out == 1).all())


def test_transformers_helpers_follow_the_torch_predicates():
    tu = pytest.importorskip("transformers.utils", reason="transformers is not installed")
    assert _branch_taken(tu.is_torchdynamo_compiling, "export") and not _branch_taken(tu.is_torchdynamo_compiling, "trace")
    if hasattr(tu, "is_torchdynamo_exporting"):
        assert _branch_taken(tu.is_torchdynamo_exporting, "export")
        assert not _branch_taken(tu.is_torchdynamo_exporting, "trace")
    if hasattr(tu, "is_tracing"):
        assert _branch_taken(tu.is_tracing, "export") and _branch_taken(tu.is_tracing, "trace")


# -- (d) validation guards on shapes -----------------------------------------------------------------


@pytest.mark.parametrize("pid", ["p20a", "p20b", "p20c", "p20e"])
@pytest.mark.parametrize("hint", [Dim.AUTO, Dim.DYNAMIC], ids=["AUTO", "DYNAMIC"])
def test_validation_guards_do_not_break_torch_export(pid, hint):
    probe = _probe(pid)
    ep = _export(probe, hint=hint)
    assert _static_dims(ep, probe) == []
    valid = [lbl for lbl, mk in probe.bs if _eager_ok(probe, mk)]
    assert valid
    for lbl in valid:
        assert _outcome(ep.module(), probe, lbl) == "match"


def _raises(run, args) -> bool:
    try:
        run(*args)
    except Exception:  # noqa: BLE001
        return True
    return False


def _eager_ok(probe, mk):
    try:
        probe.make()(*mk())
        return True
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.parametrize("pid,invalid", [("p20a", "bad C"), ("p20b", "B odd"), ("p20e", "B non-multiple")])
def test_torch_export_keeps_raising_validation_guards(pid, invalid):
    probe = _probe(pid)
    ep = _export(probe)
    assert _raises(probe.make(), _b(probe, invalid))
    assert _raises(ep.module(), _b(probe, invalid))


def test_warn_only_shape_guard_narrows_the_torch_export_program():
    """p20d: `if H % 4 != 0: warnings.warn(...)` -- torch.export records the example's side as a guard."""
    probe = _probe("p20d")
    ep = _export(probe)
    assert _outcome(ep.module(), probe, "B multiple") == "match"
    assert _outcome(ep.module(), probe, "B non-multiple") == "raise"
    traced, _ = _trace(probe)
    assert _outcome(traced, probe, "B non-multiple") == "match"


def test_rank_checks_have_no_effect():
    for pid in ("p19a", "p19b"):
        probe = _probe(pid)
        ep = _export(probe)
        assert _static_dims(ep, probe) == []
        assert _outcome(ep.module(), probe) == "match"
        assert _outcome(_trace(probe)[0], probe) == "match"


# -- (e) custom autograd.Function ---------------------------------------------------------------------


@pytest.mark.parametrize("pid", ["p25a", "p25b"])
def test_autograd_function_without_symbolic_exports_with_torch_export(pid):
    probe = _probe(pid)
    ep = _export(probe)
    assert _outcome(ep.module(), probe) == "match"


def test_autograd_function_is_a_python_op_in_jit_trace_and_cannot_be_saved():
    probe = _probe("p25a")
    traced, _ = _trace(probe)
    assert [n.kind() for n in traced.graph.nodes()] == ["prim::PythonOp"]
    assert _outcome(traced, probe) == "match"
    with pytest.raises(RuntimeError, match="Could not export Python function call"):
        torch.jit.save(traced, io.BytesIO())
    assert _outcome(_onnx_legacy(probe), probe) == "match"  # legacy ONNX inlines the forward


def test_autograd_function_with_item_is_silent_in_legacy_onnx():
    probe = _probe("p25b")
    assert _outcome(_onnx_legacy(probe), probe) == "mismatch"


# -- (f) EXL042 forms -----------------------------------------------------------------------------------


def test_float_scale_factor_is_silent_in_onnx_dynamo():
    """p03 `scale_factor=float(x.shape[-1]) / 7`: ONNX dynamo with dynamic_shapes runs the baked size."""
    probe = _probe("p03")
    assert _outcome(_onnx_dynamo(probe), probe) == "mismatch"
    ep = _export(probe)
    assert _static_dims(ep, probe) == [(0, 3)]
    assert _outcome(_trace(probe)[0], probe) == "mismatch"


def test_sym_float_does_not_rescue_a_scale_factor():
    probe = _probe("p03b")
    ep = _export(probe, hint=Dim.DYNAMIC)
    with pytest.raises(Exception, match="Guard failed"):
        ep.module()(*_b(probe))


@pytest.mark.parametrize("pid", ["p05", "p11b"])
def test_int_of_true_division_is_pinned_by_export_and_silent_in_trace(pid):
    """p05 `int(h / 2)`, p11b `int(h * 0.5)`: export passes (also with Dim.DYNAMIC) but pins the size."""
    probe = _probe(pid)
    ep = _export(probe, hint=Dim.DYNAMIC)
    assert _static_dims(ep, probe) == []
    with pytest.raises(Exception, match="Guard failed"):
        ep.module()(*_b(probe))
    traced, tracer = _trace(probe)
    assert tracer
    assert _outcome(traced, probe) == "mismatch"
    assert _outcome(_onnx_legacy(probe), probe) == "mismatch"


def test_sym_int_is_an_export_fix_but_not_a_trace_fix():
    probe = _probe("p05b")
    ep = _export(probe, hint=Dim.DYNAMIC)
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "mismatch"


def test_round_of_a_shape_exports_but_does_not_trace():
    probe = _probe("p06")
    ep = _export(probe, hint=Dim.DYNAMIC)
    assert _outcome(ep.module(), probe) == "match"
    with pytest.raises(TypeError, match="__round__"):
        _trace(probe)


@pytest.mark.parametrize("pid", ["p07", "p07b"])
def test_math_ceil_floor_export_correctly_but_are_silent_in_trace(pid):
    probe = _probe(pid)
    for strict in (False, True):
        ep = _export(probe, strict=strict, hint=Dim.DYNAMIC)
        assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "mismatch"
    assert _outcome(_onnx_legacy(probe), probe) == "mismatch"


def test_negated_floor_division_ceil_is_wrong_in_onnx_but_the_plus_form_is_right():
    """p08 `-(-h // s)`: both ONNX exporters truncate instead of flooring; p08b `(h + s - 1) // s` is right."""
    bad, good = _probe("p08"), _probe("p08b")
    assert _outcome(_export(bad, hint=Dim.DYNAMIC).module(), bad) == "match"
    assert _outcome(_trace(bad)[0], bad) == "match"
    assert _outcome(_onnx_legacy(bad), bad) == "mismatch"
    assert _outcome(_onnx_legacy(good), good) == "match"
    assert _outcome(_trace(good)[0], good) == "match"


@pytest.mark.parametrize("pid", ["p09", "p09b"])
def test_sqrt_of_a_dynamic_size_specialises_non_strict_but_not_strict(pid):
    probe = _probe(pid)
    ep = _export(probe)
    assert _static_dims(ep, probe) == [(0, 1)]
    assert _outcome(ep.module(), probe) == "raise"
    ep = _export(probe, strict=True)
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "raise"


def test_numpy_on_a_shape_fails_non_strict_export():
    # TypeError: loop of ufunc does not support argument 0 of type SymInt (from AttributeError: 'SymInt'
    # object has no attribute 'sqrt')
    with pytest.raises((TypeError, AttributeError), match="SymInt"):
        _export(_probe("p09c"))


@pytest.mark.parametrize("fn", ["ceil", "floor", "maximum", "array", "zeros"])
def test_numpy_rounding_on_a_shape_exports_and_pins_the_result(fn):
    # EXL042's table: `int(np.ceil(n / 4))` passes torch.export and the program guards on the result
    import numpy as np

    f = {"ceil": lambda n: int(np.ceil(n / 4)), "floor": lambda n: int(np.floor(n / 4)),
         "maximum": lambda n: int(np.maximum(n, 3)), "array": lambda n: int(np.array([n, 1])[0]),
         "zeros": lambda n: np.zeros((n, 2)).shape[0]}[fn]

    class M(torch.nn.Module):
        def forward(self, x):
            return x[: f(x.shape[0])] * 2

    ep = torch.export.export(M(), (torch.randn(16, 3),), dynamic_shapes=({0: Dim.AUTO},))
    with pytest.raises(Exception, match="Guard failed"):
        ep.module()(torch.randn(24, 3))


def test_sqrt_of_a_static_feature_dim_is_harmless():
    """p10 `/ math.sqrt(q.size(-1))` with batch and sequence dynamic, the feature dim fixed."""
    probe = _probe("p10")
    ep = _export(probe, hint=Dim.DYNAMIC)
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "match"


def test_parameter_shapes_are_constants():
    probe = _probe("p13")
    ep = _export(probe, hint=Dim.DYNAMIC)
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "match"


def test_torch_tensor_of_one_shape_value_is_dynamic_everywhere_but_a_list_is_baked_by_trace():
    """EXL011: p17b `torch.tensor(seq_len)` is right in torch.export and jit.trace; p17c `[w, h, w, h]` is not in trace."""
    one, many = _probe("p17b"), _probe("p17c")
    assert _outcome(_export(one, hint=Dim.DYNAMIC).module(), one) == "match"
    assert _outcome(_trace(one)[0], one) == "match"
    assert _outcome(_export(many, hint=Dim.DYNAMIC).module(), many) == "match"
    assert _outcome(_trace(many)[0], many) == "mismatch"


def test_as_tensor_of_a_size_specialises_in_torch_export_but_torch_tensor_does_not():
    """EXL042: p17i `torch.as_tensor(n)` pins the batch under torch.export (Dim.AUTO: static; a named Dim
    fails) and the ONNX dynamo model keeps the example's value; jit.trace keeps it. p17j, the same with
    `torch.tensor(n)` (EXL042's fix), as a `reshape` size: every exporter follows the size (EXL040 quiet)."""
    pinned, fixed = _probe("p17i"), _probe("p17j")
    assert _outcome(_export(pinned).module(), pinned) == "raise"  # `Guard failed: x.size()[0] == 8`
    with pytest.raises(Exception, match="Constraints violated"):
        _export(pinned, hint=Dim.DYNAMIC)
    assert _outcome(_onnx_dynamo(pinned, hint=Dim.AUTO), pinned) != "match"
    assert _outcome(_trace(pinned)[0], pinned) == "match"
    assert _outcome(_export(fixed, hint=Dim.DYNAMIC).module(), fixed) == "match"
    assert _outcome(_onnx_dynamo(fixed), fixed) == "match"
    assert _outcome(_onnx_legacy(fixed), fixed) == "match"
    assert _outcome(_trace(fixed)[0], fixed) == "match"


def test_sizes_one_mask_selected_are_one_symbol_and_two_masks_are_two():
    """EXL020 info: p28a compares the lengths of two tensors one boolean mask selected (a guard):
    torch.export holds them as one unbacked size, exports and matches eager on another size; p28b, the
    lengths of two tensors two masks selected, fails export (GuardOnDataDependentSymNode: error)."""
    same, two = _probe("p28a"), _probe("p28b")
    assert _outcome(_export(same).module(), same) == "match"
    with pytest.raises(Exception, match="data-dependent|GuardOnDataDependentSymNode"):
        _export(two)


def test_torch_tensor_of_a_range_over_a_size_specialises():
    probe = _probe("p15")
    ep = _export(probe)
    assert _static_dims(ep, probe) == [(0, 1)]


# -- EXL020 / EXL002 / EXL010 ---------------------------------------------------------------------------


@pytest.mark.parametrize("pid", ["p21", "p22b", "p22c", "p23a", "p23b", "p26a"])
def test_data_dependent_guards_branches_and_iteration_fail_torch_export(pid):
    with pytest.raises(Exception, match="data-dependent"):
        _export(_probe(pid))


def test_assert_async_keeps_a_data_dependent_check_in_torch_export():
    probe = _probe("p21b")
    ep = _export(probe)
    assert _outcome(ep.module(), probe) == "match"
    assert _raises(ep.module(), _b(probe, "NaN"))
    assert not _raises(_trace(probe)[0], _b(probe, "NaN"))  # jit.trace drops the check


def test_tolist_into_split_exports_correctly():
    probe = _probe("p22")
    ep = _export(probe)
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "raise"


def test_sym_int_of_a_symbolic_square_root_stays_dynamic_but_int_does_not():
    """p09d `torch.sym_int(torch.sym_float(n) ** 0.5)` is the export fix; p09e `int(...)` of it specialises."""
    good, bad = _probe("p09d"), _probe("p09e")
    assert _outcome(_export(good, hint=Dim.DYNAMIC).module(), good) == "match"
    ep = _export(bad)
    assert _static_dims(ep, bad) == [(0, 1)]


@pytest.mark.parametrize("pid", ["p10c", "p10d"])
def test_shape_float_only_scaling_a_tensor_is_fine_everywhere(pid):
    """p10c `x * (h / 7)`, p10d `x * h ** 0.5`: no conversion, correct in torch.export and jit.trace."""
    probe = _probe(pid)
    assert _outcome(_export(probe, hint=Dim.DYNAMIC).module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "match"


def test_float_of_a_shape_scaling_a_tensor_specialises():
    probe = _probe("p10e")
    assert _static_dims(_export(probe), probe) == [(0, 1)]
    assert _outcome(_trace(probe)[0], probe) == "mismatch"


def test_range_over_a_dynamic_dim_is_silent_in_trace_without_a_tracer_warning():
    probe = _probe("p14")
    traced, tracer = _trace(probe)
    assert not tracer
    assert _outcome(traced, probe) == "mismatch"


def test_a_dynamic_dim_compared_with_one_is_decided_without_a_guard():
    """p27a (EXL022 at info): Dim.AUTO takes the dim to be >= 2, so `x.shape[1] == 1` adds no guard;
    the program serves every size >= 2 and runs a size-1 input through the `!= 1` arm, silently."""
    probe = _probe("p27a")
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe, "B") == "match"
    assert _outcome(ep.module(), probe, "one") == "mismatch"


def test_a_dynamic_dim_as_a_truth_value_is_decided_without_a_guard():
    """p29 (no EXL022): `... if n else ...` and `if not x.numel():` test emptiness; torch.export takes
    dynamic dims to be >= 2, keeps them dynamic and the program matches eager on other sizes."""
    probe = _probe("p29")
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe) == "match"


def test_a_recurrent_layer_fixes_the_sequence_length_under_torch_export_only():
    """p30 (EXL043, export target only): torch.export keeps the batch of an `nn.LSTM`'s input dynamic and
    fixes its sequence to the example's length (the program raises on another length; `Dim.DYNAMIC` and
    named dims fail, the dynamo ONNX exporter too); with `Dim.AUTO` the dynamo ONNX model runs other lengths
    in onnxruntime; jit.trace and the legacy ONNX exporter match eager on the other length."""
    probe = _probe("p30")
    ep = _export(probe)
    assert _static_dims(ep, probe) == [(0, 1)]
    assert _outcome(ep.module(), probe) == "raise"
    with pytest.raises(Exception, match="Constraints violated"):
        _export(probe, hint=Dim.DYNAMIC)
    with pytest.raises(Exception, match="conflicts between user-specified ranges and inferred ranges"):
        _onnx_dynamo(probe)
    assert _outcome(_onnx_dynamo(probe, hint=Dim.AUTO), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "match"
    assert _outcome(_onnx_legacy(probe), probe) == "match"


def test_a_tensor_of_dims_fails_torch_export_even_with_static_shapes():
    """p31 (EXL003 at error under export): `x.permute(*perm)` with `perm` a tensor reads each element as a
    data-dependent int; torch.export fails with static and dynamic shapes alike, the dynamo ONNX exporter
    too; jit.trace reads the values it saw (a constant permutation: the traced model matches eager)."""
    probe = _probe("p31")
    with pytest.raises(Exception, match="data-dependent"):
        _export(probe)
    with pytest.raises(Exception, match="data-dependent"):
        torch.export.export(probe.make(), probe.a())
    with pytest.raises(Exception, match="data-dependent"):
        _onnx_dynamo(probe)
    assert _outcome(_trace(probe)[0], probe) == "match"


def test_a_sliced_dim_compared_with_zero_is_a_guard():
    """p27b (EXL022 stays a warning): a slice's size can be 0, so `> 0` is a guard on the example."""
    probe = _probe("p27b")
    assert _outcome(_export(probe).module(), probe) == "raise"


@pytest.mark.parametrize("pid", ["p27c", "p27d"])
def test_two_dynamic_dims_compared_keep_their_relation_as_a_guard(pid):
    """p27c `m.shape[0] == x.shape[0]` and p27d `m.shape[-1] < x.shape[-1]` (EXL022 at info) keep both
    dims dynamic; the program serves every pair related as in the example and rejects the others (the
    other arm)."""
    probe = _probe(pid)
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe, "B") == "match"
    assert _outcome(ep.module(), probe, "other") == "raise"


def test_a_raising_guard_on_sizes_pins_them_and_later_int_pins_nothing_more():
    """p27e (no finding): `if h != 16 or w != 16: raise` makes torch.export take H and W static
    (`Dim.AUTO`, no error); the batch stays dynamic, and `int()` of the pinned sizes fixes nothing else."""
    probe = _probe("p27e")
    ep = _export(probe)
    assert _static_dims(ep, probe) == [(0, 2), (0, 3)]
    assert _outcome(ep.module(), probe, "B") == "match"
    with pytest.raises(Exception):  # eager raises the model's own error; the program rejects the size
        ep.module()(*_b(probe, "other"))


def test_a_shape_check_on_strided_sizes_ties_the_size_to_its_parity():
    """p27f (EXL022 warning): comparing a pooled-and-upsampled shape with the input's keeps H dynamic
    but guards `2 + 2 * ((H - 1) // 2) == H`: sizes of the example's parity match, the others are rejected."""
    probe = _probe("p27f")
    ep = _export(probe)
    assert _outcome(ep.module(), probe, "B") == "match"
    assert _outcome(ep.module(), probe, "other") == "raise"


@pytest.mark.parametrize("pid, traced", [("p09g", "raise"), ("p09j", "match")])
def test_products_of_sizes_stay_symbolic_under_export(pid, traced):
    """p09g `np.prod(x.shape[1:])` (EXL042 under trace only) and p09j `math.prod(x.shape[1:])` (no
    EXL042) multiply the SymInts themselves; jit.trace bakes the NumPy product and follows math.prod."""
    probe = _probe(pid)
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == traced

def test_a_slice_with_constant_bounds_has_a_static_width():
    """p27g (no finding): `x[..., :4]` is 4 wide; testing that width adds no guard, the input's dim
    stays dynamic and another size matches eager under torch.export and jit.trace."""
    probe = _probe("p27g")
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "match"


def test_a_size_tested_for_being_empty_takes_the_same_arm_for_every_non_empty_input():
    """p27h (no finding): `if x.shape[0] > 0:` keeps the dim dynamic; sizes 5 and 1 match eager under
    torch.export and jit.trace (the arm is the same for every non-empty input)."""
    probe = _probe("p27h")
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    for case in ("B", "one"):
        assert _outcome(ep.module(), probe, case) == "match"
        assert _outcome(_trace(probe)[0], probe, case) == "match"


def test_a_size_ordered_against_a_tables_size_bounds_the_dim_at_that_size():
    """p27i (EXL022 info): `if seq > self.weights.size(0): grow the table`: torch.export keeps the dim
    dynamic up to the table's size (12 matches eager) and rejects longer inputs (20), where eager grows it."""
    probe = _probe("p27i")
    ep = _export(probe)
    assert _static_dims(ep, probe) == []
    assert _outcome(ep.module(), probe, "B") == "match"
    assert _outcome(ep.module(), probe, "long") == "raise"


def test_a_logarithm_of_a_size_pins_export_and_fails_onnx_dynamo():
    """p09h (EXL042 warning under export): `int(math.log2(w / 8))` (DepthPro's pyramid levels): torch.export
    pins the width, the ONNX dynamo exporter fails, jit.trace bakes the value."""
    probe = _probe("p09h")
    assert _outcome(_export(probe).module(), probe) == "raise"
    with pytest.raises(Exception):
        _onnx_dynamo(probe)
    assert _outcome(_trace(probe)[0], probe) == "mismatch"


@pytest.mark.parametrize("pid", ["p09", "p09k"])
def test_a_math_function_of_a_size_pins_export_and_onnx_dynamo_fails_or_computes_with_the_example(pid):
    """p09, p09k (EXL042 warning under export, audit rounds 11-17: "pinning is a warning"): torch.export
    passes and the program rejects the next size.  ONNX dynamo fails with a named dynamic axis; with
    `Dim.AUTO` it exports a model whose axis looks dynamic but that computes with the example's value
    (p09: onnxruntime raises in the reshape; p09k: a `topk` count, silently wrong)."""
    probe = _probe(pid)
    assert _outcome(_export(probe).module(), probe) == "raise"
    with pytest.raises(Exception):
        _onnx_dynamo(probe)
    assert _outcome(_onnx_dynamo(probe, Dim.AUTO), probe) == {"p09": "raise", "p09k": "mismatch"}[pid]


def test_numpy_arange_over_a_size_pins_export_but_onnx_dynamo_follows_it():
    """p09i (EXL042 warning under export): `np.arange(0, n, 4)` pins `n / 4` in torch.export, ONNX
    dynamo keeps the length symbolic and matches eager, jit.trace bakes it."""
    probe = _probe("p09i")
    assert _outcome(_export(probe).module(), probe) == "raise"
    assert _outcome(_onnx_dynamo(probe), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "mismatch"

# -- EXL011 with data ------------------------------------------------------------------------------------


@pytest.mark.parametrize("pid", ["p17f", "p17h"])
def test_torch_tensor_of_tensor_elements_fails_non_strict_export(pid):
    with pytest.raises(RuntimeError, match="data is not allocated yet"):
        _export(_probe(pid))


def test_torch_tensor_of_item_scalars_exports_but_is_baked_by_trace():
    probe = _probe("p17d")
    assert _outcome(_export(probe).module(), probe) == "match"
    assert _outcome(_trace(probe)[0], probe) == "mismatch"


def test_torch_tensor_of_one_0d_tensor_is_correct_in_trace():
    probe = _probe("p17e")
    assert _outcome(_trace(probe)[0], probe) == "match"


def test_torch_check_on_an_item_is_kept_by_non_strict_and_dropped_by_strict_export():
    probe = _probe("p21d")
    assert _raises(_export(probe).module(), _b(probe, "NaN"))
    assert not _raises(_export(probe, strict=True).module(), _b(probe, "NaN"))


# -- EXL001 / EXL020: an assert on a value read with .item() (audit round 4, XLM / FlauBERT) ----


# Compiled outside pytest's assertion rewriting (it turns `assert` into `if not ...: raise`).
_ASSERTS = {}
exec(compile("""
import torch

class AssertItem(torch.nn.Module):
    def forward(self, x, lengths):
        assert lengths.max().item() <= x.shape[1]
        return x * 2

class IfRaiseItem(torch.nn.Module):
    def forward(self, x, lengths):
        if lengths.max().item() > x.shape[1]:
            raise ValueError("too long")
        return x * 2

class AssertTensor(torch.nn.Module):
    def forward(self, x, lengths):
        assert (lengths <= x.shape[1]).all()
        return x * 2
""", "assert_probes.py", "exec"), _ASSERTS)


@pytest.mark.parametrize("strict", [False, True])
def test_an_assert_on_an_item_value_exports_but_if_raise_and_a_tensor_assert_fail_non_strict(strict):
    args = (torch.randn(2, 5), torch.tensor([3, 4]))
    ep = torch.export.export(_ASSERTS["AssertItem"](), args, strict=strict)
    assert torch.equal(ep.module()(*args), args[0] * 2)
    if not strict:
        for bad in (_ASSERTS["IfRaiseItem"](), _ASSERTS["AssertTensor"]()):
            with pytest.raises(Exception, match="data-dependent"):
                torch.export.export(bad, args, strict=False)
