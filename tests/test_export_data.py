"""The shipped export tables (exportlint/data): the torch-free loader, and table facts re-measured with the real
exporters (torch 2.13), so a table that no longer describes the installed exporters fails here."""

from __future__ import annotations

import importlib.util
import inspect
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from exportlint import data
from exportlint.data import UNKNOWN, find_ops

ROOT = Path(__file__).resolve().parents[1]
F = "torch.nn.functional."


def _ids(ops):
    return [op["id"] for op in ops]


# -- the loader, no torch -------------------------------------------------------------------------------------


def test_loader_reads_both_tables_without_importing_torch():
    code = (
        "import sys, exportlint.data as d;"
        "d.find_ops('method', 'tril'); d.exporter_signature('torch.onnx.export', '2.13');"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_op_table_records_versions_command_and_every_op_measured():
    doc = data.onnx_op_support()
    assert doc["versions"]["torch"].startswith("2.13.")
    assert {"onnx", "onnxruntime", "onnxscript"} <= set(doc["versions"])
    assert doc["command"].startswith("python benchmarks/onnx_ops/measure.py")
    assert len(doc["ops"]) >= 40
    for op in doc["ops"]:
        assert "probe_error" not in op, op["id"]
        assert set(op["legacy"]["status"]) == {str(k) for k in range(9, 21)}, op["id"]
        assert op["dynamo"]["status"] in doc["statuses"], op["id"]


@pytest.mark.parametrize(
    ("op_id", "fails_at", "converts_at"),
    [("interpolate_bicubic", 10, 11), ("triu", 13, 14), ("tril", 13, 14), ("sdpa", 13, 14),
     ("grid_sample_bilinear", 15, 16), ("multihead_attention", 12, 13), ("transformer_encoder_layer", 13, 14)],
)
def test_legacy_opset_thresholds(op_id, fails_at, converts_at):
    assert data.legacy_converts(op_id, fails_at) is False
    assert data.legacy_converts(op_id, converts_at) is True
    assert data.onnx_op(op_id)["legacy"]["min_opset"] == converts_at
    assert "UnsupportedOperatorError" in data.onnx_op(op_id)["legacy"]["error"]["error"]


def test_unmeasured_op_or_opset_is_unknown_not_false():
    assert data.legacy_converts("no_such_op", 14) is None
    assert data.legacy_converts("triu", 7) is None
    assert data.dynamo_converts("no_such_op") is None


def test_dynamo_facts():
    assert data.dynamo_converts("masked_select") is False
    assert "masked_select" in data.onnx_op("masked_select")["dynamo"]["error"]["cause"]
    assert data.dynamo_converts("interpolate_bicubic") is True
    assert data.onnx_op("interpolate_nearest")["legacy"]["min_opset"] == 9


@pytest.mark.parametrize(
    ("kind", "name", "args", "kwargs", "expected"),
    [
        ("function", F + "interpolate", (UNKNOWN, None, 2, "bicubic"), {}, ["interpolate_bicubic"]),
        ("function", F + "interpolate", (UNKNOWN,), {"mode": "bicubic", "align_corners": True}, ["interpolate_bicubic_ac"]),
        ("function", F + "interpolate", (UNKNOWN,), {"mode": "bilinear", "antialias": True}, ["interpolate_bilinear_antialias"]),
        ("function", F + "interpolate", (UNKNOWN,), {"scale_factor": 2}, ["interpolate_nearest"]),  # mode's default
        ("function", F + "interpolate", (UNKNOWN,), {"mode": UNKNOWN}, []),  # not a literal: the rule cannot know
        ("function", F + "upsample", (UNKNOWN,), {"mode": "bicubic"}, ["interpolate_bicubic"]),
        ("module", "torch.nn.Upsample", (None, 2, "bicubic"), {}, ["interpolate_bicubic"]),
        ("module", "torch.nn.Upsample", (), {"scale_factor": 2, "mode": "bilinear", "align_corners": True}, ["interpolate_bilinear_ac"]),
        ("method", "tril", (), {}, ["tril"]),
        ("function", "torch.triu", (UNKNOWN, 1), {}, ["triu"]),
        ("function", F + "scaled_dot_product_attention", (UNKNOWN,) * 3, {}, ["sdpa"]),
        ("function", F + "scaled_dot_product_attention", (UNKNOWN,) * 3, {"is_causal": True}, ["sdpa_causal"]),
        ("function", F + "grid_sample", (UNKNOWN, UNKNOWN), {}, ["grid_sample_bilinear"]),
        ("function", F + "gelu", (UNKNOWN,), {"approximate": "tanh"}, ["gelu_tanh"]),
        ("module", "torch.nn.GELU", ("tanh",), {}, ["gelu_tanh"]),
        ("function", "torch.linalg.inv", (UNKNOWN,), {}, ["linalg_inv"]),
        ("function", "torch.inverse", (UNKNOWN,), {}, ["linalg_inv"]),
        ("module", "torch.nn.MultiheadAttention", (8, 2), {"batch_first": True}, ["multihead_attention"]),
        ("module", "torch.nn.MaxPool2d", (3, 2), {"ceil_mode": True}, ["max_pool2d_ceil"]),
        ("module", "torch.nn.MaxPool2d", (3, 2), {}, []),
        ("function", F + "pad", (UNKNOWN, (1, 1)), {"mode": "reflect"}, ["pad_reflect"]),
        ("function", F + "pad", (UNKNOWN, (1, 1)), {}, []),  # constant padding is not in the table
        ("function", "torch.nn.functional.relu", (UNKNOWN,), {}, []),
    ],
)
def test_find_ops_matches_source_spellings(kind, name, args, kwargs, expected):
    assert _ids(find_ops(kind, name, args, kwargs)) == expected


def test_every_match_entry_is_well_formed():
    for op in data.onnx_op_support()["ops"]:
        for form in op["match"]:
            kinds = [k for k in ("function", "method", "module") if k in form]
            assert len(kinds) == 1 and form[kinds[0]], op["id"]
            for spec in form.get("where", {}).values():
                assert set(spec) <= {"pos", "equals", "default"} and spec["equals"], op["id"]


def test_signature_lookup_and_versions():
    sig = data.exporter_signature("torch.onnx.export", "2.13.0+cpu")
    assert (sig.version, sig.source, sig.extrapolated) == ("2.13", "measured", False)
    assert sig.accepts("dynamic_shapes") and sig.accepts("dynamic_axes")
    assert sig.accepts("example_outputs") is False and sig.accepts("fallback") is False
    assert data.exporter_signature("torch.onnx.export", "2.0").accepts("dynamo") is False
    assert data.exporter_signature("torch.onnx.export", "2.5").accepts("example_outputs") is True  # `**_` swallowed it
    assert data.exporter_signature("torch.onnx.export", "2.11").accepts("fallback") is None  # not established
    assert data.exporter_signature("torch.export.export", "2.2").accepts("constraints") is True
    assert data.exporter_signature("torch.export.export", "2.3").accepts("constraints") is False
    assert data.exporter_signature("torch.export.export_for_training", "2.13").exists is False
    assert data.exporter_signature("torch.export.export_for_training", "2.6").exists is True
    newer = data.exporter_signature("torch.jit.trace", "2.15.1")
    assert newer.extrapolated and newer.version == "2.13"
    assert data.exporter_signature("torch.onnx.export", "1.13") is None
    assert data.exporter_signature("torch.onnx.export", "not a version") is None
    assert data.exporter_signature("torch.nope", "2.13") is None


def test_keywords_respect_positional_only_and_star():
    sig = data.Signature("f", "2.13", "measured", True, ("a", "/", "b", "*", "c=1", "**kw"), True, (), "", False)
    assert sig.names == ("a", "b", "c", "kw") and sig.keywords == ("b", "c")


def test_removed_parameters_and_dynamo_default():
    row = data.removed_parameter("torch.onnx.export", "example_outputs")
    assert row["removed_in"] == "1.11"
    assert data.removed_parameter("torch.onnx.export", "use_external_data_format")["replacement"] == "external_data"
    assert data.removed_parameter("torch.onnx.export", "opset_version") is None
    for row in data.exporter_signatures()["removed_parameters"]:  # what a finding's message quotes
        assert row["removed_in"] and row["evidence"], row["parameter"]
        assert data.exporter_signature(row["function"], "2.13").accepts(row["parameter"]) is False
    assert [data.dynamo_default(v) for v in ("2.5", "2.8.0", "2.9", "2.13.0+cpu", "3.1")] == [False, False, True, True, True]
    assert data.dynamo_default("1.13") is None
    assert (data.default_opset(dynamo=False), data.default_opset(dynamo=True)) == (20, 20)


def test_json_files_are_package_data():
    """hatch puts every file under exportlint/ that git does not ignore into the wheel."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'packages = ["exportlint"]' in pyproject
    for name in ("onnx_ops.json", "exporter_signatures.json"):
        path = ROOT / "exportlint" / "data" / name
        json.loads(path.read_text())
        ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT, capture_output=True)
        assert ignored.returncode == 1, f"{name} is ignored by git, so hatch would leave it out of the wheel"


# -- re-measured with the real exporters ------------------------------------------------------------------------

torch_needed = pytest.mark.dynamic


def _torch():
    torch = pytest.importorskip("torch", reason="re-measuring needs torch (pip install exportlint[dynamic])")
    pytest.importorskip("onnxruntime", reason="re-measuring needs onnxruntime")
    if not torch.__version__.startswith("2.13."):
        pytest.skip(f"the tables were measured on torch 2.13, this is torch {torch.__version__}")
    return torch


def _legacy_export_runs(torch, fn, example, opset, tmp_path) -> bool:
    """Export with the legacy exporter at opset; True when the model runs in onnxruntime and matches eager."""
    import numpy as np
    import onnxruntime as ort

    class M(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    path = tmp_path / f"m{opset}.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(M(), (example,), str(path), dynamo=False, opset_version=opset, input_names=["x"])
        except torch.onnx.errors.UnsupportedOperatorError:
            return False
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": example.numpy()})[0]
    assert np.allclose(got, fn(example).numpy(), rtol=1e-3, atol=1e-4)
    return True


@torch_needed
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(("op_id", "fails_at", "converts_at"), [("interpolate_bicubic", 10, 11), ("triu", 13, 14)])
def test_legacy_thresholds_remeasured(op_id, fails_at, converts_at, tmp_path):
    torch = _torch()
    import torch.nn.functional as Fn

    fn, example = {
        "interpolate_bicubic": (lambda x: Fn.interpolate(x, scale_factor=2, mode="bicubic"), torch.randn(1, 2, 5, 5)),
        "triu": (lambda x: torch.triu(x, 1), torch.randn(6, 6)),
    }[op_id]
    assert _legacy_export_runs(torch, fn, example, fails_at, tmp_path) is False
    assert _legacy_export_runs(torch, fn, example, converts_at, tmp_path) is True
    assert (data.legacy_converts(op_id, fails_at), data.legacy_converts(op_id, converts_at)) == (False, True)


@torch_needed
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("dynamo", [False, True])
@pytest.mark.parametrize("param", ["example_outputs", "enable_onnx_checker", "use_external_data_format"])
def test_removed_parameter_raises_typeerror(param, dynamo, tmp_path):
    torch = _torch()
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{param}'"):
        torch.onnx.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),), str(tmp_path / "m.onnx"), dynamo=dynamo, **{param: None})
    assert data.exporter_signature("torch.onnx.export", torch.__version__).accepts(param) is False


def _script(name: str):
    """A module of benchmarks/onnx_ops, loaded under a private name (they import their siblings by path)."""
    spec = importlib.util.spec_from_file_location(f"exportlint_onnx_ops_{name}", ROOT / "benchmarks" / "onnx_ops" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@torch_needed
def test_measured_signatures_match_the_installed_torch():
    torch = _torch()
    script = _script("signatures")
    for name in script.FUNCTIONS:
        func = script.resolve(name)
        sig = data.exporter_signature(name, torch.__version__)
        assert sig.source == "measured" and sig.exists == (func is not None), name
        if func is not None:
            assert list(sig.parameters) == script.measured(func), name
            assert set(sig.names) == set(inspect.signature(func).parameters), name
    assert script.default_opsets(torch) == data.exporter_signatures()["default_opset"]


@torch_needed
def test_op_table_rows_match_the_catalogue():
    _torch()
    OPS = _script("ops").OPS
    rows = data.onnx_op_support()["ops"]
    assert [r["id"] for r in rows] == [op.id for op in OPS]
    assert [json.loads(json.dumps(op.match)) for op in OPS] == [r["match"] for r in rows]
