"""``exportlint --fix`` on a copy of fixtures/: the safe fixes keep every fixture's eager outputs,
and the ViT fixture's fix makes jit.trace follow a new resolution (it failed before)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import warnings
from pathlib import Path

import pytest

from exportlint.cli import main

torch = pytest.importorskip("torch", reason="the fixtures run on torch (pip install torch==2.13.0)")

pytestmark = pytest.mark.dynamic

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(scope="module")
def fixed_copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fixtures")
    shutil.copytree(FIXTURES, root / "fixtures", ignore=shutil.ignore_patterns("expected", "__pycache__"))
    assert main(["--fix-only", "--no-cache", str(root / "fixtures")]) == 0
    return root / "fixtures"


def _load(path: Path, tag: str):
    name = f"_fixfix_{tag}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_safe_fixes_change_the_vit_fixture_and_keep_every_fixture_eager_equal(fixed_copy):
    changed = [p.name for p in sorted(fixed_copy.glob("*.py")) if p.read_text() != (FIXTURES / p.name).read_text()]
    assert changed == ["vit_interpolate_pos.py"]
    for name in changed:
        before, after = _load(FIXTURES / name, "before"), _load(fixed_copy / name, "after")
        model_b, model_a = before.build(), after.build()
        args = before.example_inputs()
        g = torch.Generator().manual_seed(3)
        for inputs in (args, (torch.randn(1, 3, 98, 56, generator=g),), (torch.randn(3, 3, 42, 112, generator=g),)):
            with torch.no_grad():
                assert torch.equal(model_b(*inputs), model_a(*inputs))


def test_the_fixed_vit_traces_for_every_resolution(fixed_copy):
    example = (torch.randn(2, 3, 70, 84),)
    other = (torch.randn(2, 3, 98, 56),)
    for path, follows in ((FIXTURES / "vit_interpolate_pos.py", False), (fixed_copy / "vit_interpolate_pos.py", True)):
        module = _load(path, "trace" + str(follows))
        model = module.build()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(model, example, check_trace=False)
        try:
            with torch.no_grad():
                ok = torch.allclose(traced(*other), model(*other), atol=1e-5)
        except Exception:
            ok = False
        assert ok is follows, path
