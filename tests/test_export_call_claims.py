"""What the rules on the export call (EXL100-EXL103) claim, checked with the real exporters of the
installed torch: every bad example of their documents fails or diverges as documented, every fixed
example exports and matches eager."""

from __future__ import annotations

import warnings

import pytest

from ruledoc import examples

torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")


def _example(code: str, kind: str, index: int = 0):
    (found,) = [e for e in examples() if e.code == code and e.kind == kind and e.index == index]
    return found.source


def _run(source: str) -> tuple[dict, list[str]]:
    namespace: dict = {"__name__": "example"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(source, "example.py", "exec"), namespace)
    return namespace, [str(w.message) for w in caught]


def test_exl100_a_batch_of_one_for_a_named_dynamic_dim_fails_and_two_exports_a_dynamic_batch():
    with pytest.raises(Exception, match="Constraints violated"):
        _run(_example("EXL100", "bad"))
    ns, _ = _run(_example("EXL100", "good"))
    assert tuple(ns["ep"].module()(torch.randn(5, 4)).shape) == (5, 2)


def test_exl100_dim_auto_with_a_batch_of_one_silently_exports_a_fixed_batch():
    source = _example("EXL100", "bad").replace('Dim("batch")', "Dim.AUTO")
    ns, _ = _run(source)
    with pytest.raises(Exception, match="Guard failed"):
        ns["ep"].module()(torch.randn(4, 4))


def test_exl101_dynamic_axes_on_the_dynamo_path_warns_and_dynamic_shapes_does_not():
    _, messages = _run(_example("EXL101", "bad"))
    assert any("'dynamic_axes' is not recommended when dynamo=True" in m for m in messages)
    _, messages = _run(_example("EXL101", "good"))
    assert not any("dynamic_axes" in m for m in messages)


def test_exl101_mappable_dynamic_axes_are_converted_to_a_dynamic_model():
    # the info case: every key names an input, so the model is dynamic and onnxruntime runs other sizes
    ort = pytest.importorskip("onnxruntime")
    source = _example("EXL101", "bad").replace("torch.onnx.export(", "program = torch.onnx.export(")
    ns, _ = _run(source)
    session = ort.InferenceSession(ns["program"].model_proto.SerializeToString())
    x = torch.randn(5, 3)
    (out,) = session.run(None, {"x": x.numpy()})
    assert out.shape == (5, 3) and abs(out - x.relu().numpy()).max() < 1e-6


def test_exl101_an_unmappable_dynamic_axes_key_fails_on_the_dynamo_path():
    source = _example("EXL101", "bad").replace('dynamic_axes={"x"', 'dynamic_axes={"images"')
    with pytest.raises(Exception, match="Failed to convert 'dynamic_axes' to 'dynamic_shapes'"):
        _run(source)


def test_exl102_an_unknown_dynamic_shapes_key_fails():
    with pytest.raises(Exception, match="top-level keys must be the arg names"):
        _run(_example("EXL102", "bad"))
    ns, _ = _run(_example("EXL102", "good"))
    assert tuple(ns["ep"].module()(torch.randn(5, 3)).shape) == (5, 3)


def test_exl102_an_unknown_dynamic_axes_key_makes_the_legacy_model_static(tmp_path):
    import onnxruntime

    source = _example("EXL102", "good").split("ep = ")[0] + (
        "import io\nbuf = io.BytesIO()\n"
        "torch.onnx.export(model, (torch.randn(2, 3),), buf, dynamo=False, input_names=['x'],"
        " dynamic_axes={'images': {0: 'b'}})\n"
    )
    ns, messages = _run(source)
    assert any("not a valid input/output name" in m for m in messages)
    session = onnxruntime.InferenceSession(ns["buf"].getvalue())
    with pytest.raises(Exception):
        session.run(None, {"x": torch.randn(5, 3).numpy()})  # the batch axis was exported static


def test_exl103_exporting_in_training_mode_diverges_from_eval_and_eval_does_not():
    ns, _ = _run(_example("EXL103", "bad"))
    x = torch.randn(2, 4)
    exported = ns["ep"].module()(x)
    assert (exported - ns["model"].eval()(x)).abs().max() > 1e-3  # dropout stayed active
    ns, _ = _run(_example("EXL103", "good"))
    assert torch.allclose(ns["ep"].module()(x), ns["model"](x))


def test_exl103_the_dynamo_onnx_exporter_also_exports_training_behaviour_and_legacy_exports_eval():
    import onnxruntime

    source = _example("EXL103", "bad").replace(
        "ep = torch.export.export(model, (torch.randn(2, 4),))",
        "program = torch.onnx.export(model, (torch.randn(2, 4),), verbose=False)\n"
        "import io\nbuf = io.BytesIO()\ntorch.onnx.export(model, (torch.randn(2, 4),), buf, dynamo=False)",
    )
    ns, _ = _run(source)
    x = torch.randn(2, 4)
    (out,) = ns["program"](x)
    eager = ns["model"].eval()(x)
    assert (out - eager).abs().max() > 1e-3  # dropout exported active
    session = onnxruntime.InferenceSession(ns["buf"].getvalue())
    (legacy,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    assert torch.allclose(torch.from_numpy(legacy), eager, atol=1e-5)  # training=EVAL by default


def test_exl104_a_removed_argument_is_a_type_error_and_the_fixed_call_exports():
    with pytest.raises(TypeError, match="unexpected keyword argument 'example_outputs'"):
        _run(_example("EXL104", "bad").replace('"net.onnx"', "__import__('io').BytesIO()"))
    _run(_example("EXL104", "good").replace('"net.onnx"', "__import__('io').BytesIO()"))


def test_exl105_bicubic_at_opset_10_fails_in_the_legacy_exporter_and_converts_at_11():
    with pytest.raises(Exception, match="upsample_bicubic2d.*opset version 10 is not supported"):
        _run(_example("EXL105", "bad").replace('"up.onnx"', "__import__('io').BytesIO()"))
    _run(_example("EXL105", "good").replace('"up.onnx"', "__import__('io').BytesIO()"))


BILINEAR = """
import torch
import torch.nn.functional as F
from torch import nn


class Up(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="bilinear")
"""


def test_exl105_bilinear_at_opset_9_converts_but_is_silently_wrong_and_is_reported(tmp_path):
    import io

    import onnxruntime

    from exportlint.config import Settings
    from exportlint.runner import lint_text

    ns, _ = _run(BILINEAR)
    model, x = ns["Up"]().eval(), torch.randn(1, 3, 8, 8)
    buf = io.BytesIO()
    torch.onnx.export(model, (x,), buf, dynamo=False, opset_version=9)
    session = onnxruntime.InferenceSession(buf.getvalue())
    (out,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    assert not torch.allclose(torch.from_numpy(out), model(x), atol=1e-3)
    source = BILINEAR + "\ntorch.onnx.export(Up().eval(), (torch.randn(1, 3, 8, 8),), 'u.onnx', dynamo=False, opset_version=9)\n"
    (finding,) = lint_text(source, "up.py", Settings()).diagnostics
    assert finding.code == "EXL105" and "silently wrong" in finding.message


PIN = """
import torch
from torch import nn
from torch.export import Dim


class Net(nn.Module):
    def forward(self, x):
        B, C, H, W = x.shape
        assert H == 8
        return x * 2
"""


def test_exl022_a_check_pinning_a_declared_dynamic_dim_fails_a_named_dim_and_fixes_dim_auto():
    ns, _ = _run(PIN)
    model, x = ns["Net"](), torch.randn(2, 3, 8, 8)
    with pytest.raises(Exception, match="Constraints violated|specialized"):
        torch.export.export(model, (x,), dynamic_shapes={"x": {2: Dim("h")}})
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {2: torch.export.Dim.AUTO}})
    with pytest.raises(Exception):
        ep.module()(torch.randn(2, 3, 16, 8))


Dim = torch.export.Dim
