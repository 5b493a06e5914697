"""Every model fixture builds and runs in eager mode on CPU, so the fixtures cannot rot.

A fixture is a top-level ``fixtures/*.py`` file or a package ``fixtures/<name>/`` with an
``__init__.py``; each one exposes ``build()`` (the model in eval mode) and ``example_inputs()``
(a tuple of tensors) -- the conventions the dynamic pass relies on.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MODEL_FIXTURES = sorted(
    [p.stem for p in FIXTURES.glob("*.py")]
    + [p.name for p in FIXTURES.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
)

torch = pytest.importorskip("torch", reason="the fixtures run on torch (pip install torch==2.13.0)")

pytestmark = pytest.mark.dynamic


def _import_fixture(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    path = FIXTURES / name
    if path.is_dir():
        monkeypatch.syspath_prepend(str(FIXTURES))
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, mod)
        return importlib.import_module(name)
    mod_name = f"_exportlint_fixture_{name}"
    spec = importlib.util.spec_from_file_location(mod_name, path.with_suffix(".py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, mod_name, module)
    spec.loader.exec_module(module)
    return module


def _tensors(out: object) -> list:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):  # detection models return a list of dicts, like torchvision's
        out = list(out.values())
    assert isinstance(out, (tuple, list)), f"unexpected output type {type(out).__name__}"
    return [t for item in out for t in _tensors(item)]


def test_fixture_list_is_complete():
    # The catalogue of fixtures the issue asks for; a rename or deletion must be deliberate.
    required = {
        "vit_interpolate_pos", "vit_interpolate_pos_fixed", "detection_postprocess", "keypoint_heatmap",
        "rnn_greedy_decoder", "video_frames", "clean_cnn", "train_script", "trace_divergence", "mypkg",
    }
    assert required <= set(MODEL_FIXTURES)


@pytest.mark.parametrize("name", MODEL_FIXTURES)
def test_fixture_builds_and_runs_in_eager(name: str, monkeypatch: pytest.MonkeyPatch):
    module = _import_fixture(name, monkeypatch)
    assert callable(getattr(module, "build", None)), f"{name}: no build() factory"
    assert callable(getattr(module, "example_inputs", None)), f"{name}: no example_inputs()"

    model = module.build()
    assert isinstance(model, torch.nn.Module)
    assert not model.training, f"{name}: build() must return the model in eval mode"
    inputs = module.example_inputs()
    assert isinstance(inputs, tuple) and inputs, f"{name}: example_inputs() must return a non-empty tuple"
    assert all(isinstance(t, torch.Tensor) for t in inputs)

    with torch.no_grad():
        first = _tensors(model(*inputs))
        again = _tensors(module.build()(*module.example_inputs()))

    assert first and all(t.numel() > 0 for t in first), f"{name}: empty output"
    assert all(torch.isfinite(t.float()).all() for t in first), f"{name}: non-finite output"
    # build() and example_inputs() are deterministic: the dynamic pass compares runs.
    assert len(first) == len(again)
    for a, b in zip(first, again):
        torch.testing.assert_close(a, b)
