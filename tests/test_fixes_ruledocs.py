"""Every fix on the rule documents' bad examples, applied for real and measured.

* the fixed code parses, lints clean of the fixed code, and fixing again changes nothing;
* a *safe* fix computes the same eager outputs on several inputs (other sizes included);
* the claimed effect holds with the real exporters: what failed (or was silently wrong) before
  the fix exports and matches eager after it.
"""

from __future__ import annotations

import ast
import warnings

import pytest

from exportlint.config import Settings
from exportlint.diagnostics import Target
from exportlint.engine import analyze_source
from exportlint.fixes.driver import fix_text
from exportlint.fixes.model import SAFE

from ruledoc import examples

torch = pytest.importorskip("torch", reason="the fix measurements run the model (pip install exportlint[dynamic])")
from torch.export import Dim  # noqa: E402

BAD = [e for e in examples() if e.kind == "bad"]


def _fixes(example):
    return [d for d in analyze_source(example.source, f"{example.id}.py", Target(example.target)) if d.fix]


FIXABLE = [e for e in BAD if any(d.code == e.code for d in _fixes(e))]


def _fixed(example, unsafe=True) -> str:
    settings = Settings(target=Target(example.target), unsafe_fixes=unsafe, cache=False)
    return fix_text(example.source, f"{example.id}.py", settings)[0]


def _model(source: str):
    namespace: dict = {"__name__": "doc_example"}
    exec(compile(source, "doc_example.py", "exec"), namespace)
    classes = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, torch.nn.Module) and v.__module__ == "doc_example"]
    torch.manual_seed(0)
    return classes[-1]().eval()


def test_the_documents_have_fixes_for_the_issue_rules():
    assert {e.code for e in FIXABLE} >= {"EXL020", "EXL040", "EXL042", "EXL051"}


@pytest.mark.parametrize("example", FIXABLE, ids=lambda e: e.id)
def test_fixed_example_parses_lints_clean_and_is_stable(example):
    before = [d for d in analyze_source(example.source, "a.py", Target(example.target)) if d.code == example.code]
    fixed = _fixed(example)
    ast.parse(fixed)
    assert fixed != example.source
    after = [d for d in analyze_source(fixed, "a.py", Target(example.target)) if d.code == example.code]
    if all(d.fix for d in before):
        assert after == [], f"still reported after the fix:\n{fixed}"
    else:
        assert len(after) < len(before)
    assert _fixed(example.__class__(example.code, example.kind, fixed, example.target, example.index)) == fixed


# Inputs for the examples that have safe fixes: several values and sizes each.
def _images(*sizes):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(*s, generator=g),) for s in sizes]


SAFE_INPUTS = {
    "EXL040-bad0-export": _images((1, 8, 14, 14), (2, 8, 20, 12), (1, 8, 7, 9)),
    "EXL040-bad1-export": _images((2, 3, 4, 4), (5, 2, 3), (1, 7)),
    "EXL042-bad1-export": _images((1, 3, 8, 8), (2, 3, 13, 7), (1, 1, 5, 31)),
    "EXL042-bad3-trace": _images((2, 4, 16), (2, 4, 13), (1, 3, 1), (1, 1, 65)),
    "EXL042-bad4-export": _images((8, 2, 4, 4), (4, 3, 5, 2), (12, 1, 6, 6), (2, 2, 3, 3)),
}


def test_every_safe_fix_of_the_documents_is_measured_in_eager():
    safe = {e.id for e in FIXABLE if any(d.fix["applicability"] == SAFE for d in _fixes(e))}
    assert safe == set(SAFE_INPUTS)


@pytest.mark.parametrize("example_id", sorted(SAFE_INPUTS))
def test_safe_fix_keeps_eager_outputs(example_id):
    example = next(e for e in BAD if e.id == example_id)
    fixed = _fixed(example, unsafe=False)
    before, after = _model(example.source), _model(fixed)
    for args in SAFE_INPUTS[example_id]:
        assert torch.equal(before(*args), after(*args)), args[0].shape


# ---------------------------------------------------------------------------------------------
# The claimed effect, with the real exporters


def _runs_like_eager(model, example_args, other_args, export) -> bool:
    """Does the exported artifact (from ``example_args``) match eager on ``other_args``?"""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            artifact = export(model, example_args)
            out = artifact(*other_args)
    except Exception:
        return False
    ref = model(*other_args)
    return out.shape == ref.shape and torch.allclose(out, ref, atol=1e-5)


def _export_dynamic(model, args):
    shapes = tuple({i: Dim.AUTO for i in range(a.dim())} for a in args)
    return torch.export.export(model, args, dynamic_shapes=shapes).module()


def _export_static(model, args):
    return torch.export.export(model, args).module()


def _trace(model, args):
    return torch.jit.trace(model, args, check_trace=False)


def _example(example_id):
    return next(e for e in BAD if e.id == example_id)


@pytest.mark.dynamic
@pytest.mark.parametrize(
    "example_id, export, example_args, other_args",
    [
        # int(h / 2): torch.export pins the size (Guard failed on another size); h // 2 stays symbolic
        ("EXL042-bad1-export", _export_dynamic, (torch.randn(1, 3, 8, 8),), (torch.randn(1, 3, 12, 10),)),
        # math.ceil(n / 8) is baked by jit.trace; (n + 7) // 8 is recorded
        ("EXL042-bad3-trace", _trace, (torch.randn(2, 4, 16),), (torch.randn(2, 4, 21),)),
        # torch.as_tensor(n) pins the batch under torch.export; torch.tensor(n) follows it
        ("EXL042-bad4-export", _export_dynamic, (torch.randn(8, 2, 4, 4),), (torch.randn(12, 2, 6, 6),)),
        # size=(hw[0], hw[1]) of a size tensor is baked by jit.trace; the shape ints are recorded
        ("EXL040-bad0-export", _trace, (torch.randn(1, 8, 14, 14),), (torch.randn(1, 8, 20, 12),)),
    ],
)
def test_safe_fix_makes_the_export_follow_the_input(example_id, export, example_args, other_args):
    example = _example(example_id)
    assert not _runs_like_eager(_model(example.source), example_args, other_args, export)
    assert _runs_like_eager(_model(_fixed(example, unsafe=False)), example_args, other_args, export)


@pytest.mark.dynamic
@pytest.mark.parametrize("example_id", ["EXL020-bad0-export", "EXL020-bad2-export"])
def test_where_fix_makes_a_data_branch_export(example_id):
    example = _example(example_id)
    pos, neg = (torch.rand(2, 3) + 2,), (-torch.rand(2, 3) - 2,)
    assert not _runs_like_eager(_model(example.source), pos, neg, _export_static)
    fixed = _model(_fixed(example))
    assert _runs_like_eager(fixed, pos, neg, _export_static) and _runs_like_eager(fixed, pos, pos, _export_static)
    original = _model(example.source)
    for args in (pos, neg, (torch.randn(3, 4),)):  # unsafe only because both sides run: same values here
        assert torch.allclose(fixed(*args), original(*args))


@pytest.mark.dynamic
@pytest.mark.parametrize("example_id", ["EXL020-bad4-export", "EXL020-bad5-export"])
def test_assert_async_fix_keeps_the_check_in_the_exported_program(example_id):
    example = _example(example_id)
    good = (torch.rand(2, 3) + 0.5,)
    bad = (torch.full((2, 3), float("nan")),) if "bad5" in example_id else (-torch.rand(2, 3),)
    with pytest.raises(Exception):
        _export_static(_model(example.source), good)  # non-strict export fails on the data check
    fixed = _model(_fixed(example))
    program = _export_static(fixed, good)
    assert torch.allclose(program(*good), fixed(*good))
    with pytest.raises(RuntimeError):
        program(*bad)  # the check is still there
    with pytest.raises(RuntimeError):
        fixed(*bad)  # eager raises too (RuntimeError instead of AssertionError / ValueError: unsafe)


@pytest.mark.dynamic
@pytest.mark.parametrize("example_id", ["EXL051-bad0-export", "EXL051-bad1-export"])
def test_device_fix_runs_and_exports_on_the_input_device(example_id):
    example = _example(example_id)
    args = (torch.randn(2, 8),) if "bad1" in example_id else (torch.randn(2, 5),)
    if not torch.cuda.is_available():
        with pytest.raises((AssertionError, RuntimeError)):
            _model(example.source)(*args)  # "Torch not compiled with CUDA enabled"
    fixed = _model(_fixed(example))
    assert _runs_like_eager(fixed, args, args, _export_static)
