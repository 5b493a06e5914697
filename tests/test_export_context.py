"""The export context (issue 8): export calls found statically, what they resolve to, and what that
changes in the findings.  Projects are written to a temporary directory and linted through the CLI
or the runner, as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exportlint.analysis.project import Project
from exportlint.config import Settings, load_settings
from exportlint.context.sites import file_sites
from exportlint.diagnostics import Target
from exportlint.runner import lint_paths

MODEL = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, c=3):
        super().__init__()
        self.conv = nn.Conv2d(c, 8, 3)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        B, C, H, W = x.shape
        if C == 3:
            x = x * 2
        s = float(H) / 7
        return self.drop(self.conv(x)) * s


class Other(nn.Module):
    def forward(self, x):
        return x.item()
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def sites_of(root: Path, name: str, **kw):
    paths = [str(p) for p in sorted(root.rglob("*.py"))]
    text = (root / name).read_text()
    return file_sites(str(root / name), text, Project(paths), **kw)


def findings(root: Path, *args: str) -> set[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "exportlint", "--no-cache", "--format", "json", "--exit-zero", *args, "."],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout
    return {(d["path"], d["line"], d["code"], d["target"]) for d in json.loads(out)}


# ------------------------------------------------------------------------------------ discovery


def test_a_site_resolves_through_a_variable_imports_and_eval(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from torch.export import Dim
        from models import Net

        def main():
            model = Net(3)
            model.load_state_dict(torch.load("w.pt"))
            model.eval()
            x = torch.randn(2, 3, 224, 224)
            torch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", max=64), 2: Dim.AUTO}})
        """})
    (site,) = sites_of(tmp_path, "export.py")
    assert (site.exporter, site.root.name, site.root.params, site.eval_mode) == ("torch.export", "Net", ("x",), True)
    assert site.inputs[0].shape == (2, 3, 224, 224)
    assert {d: s.text() for d, s in site.dims["x"].items()} == {0: 'Dim("batch", max=64)', 2: "Dim.AUTO"}


def test_onnx_path_follows_dynamo_and_the_torch_version(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net
        m = Net().eval()
        torch.onnx.export(m, torch.randn(2, 3, 8, 8), "a.onnx")
        torch.onnx.export(m, torch.randn(2, 3, 8, 8), "b.onnx", dynamo=False, opset_version=11)
        """})
    new, legacy = sites_of(tmp_path, "export.py", torch_version="2.13")
    assert (new.exporter, legacy.exporter, legacy.opset) == ("onnx-dynamo", "onnx-legacy", 11)
    old, _ = sites_of(tmp_path, "export.py", torch_version="2.4")
    assert old.exporter == "onnx-legacy"  # dynamo=True became the default in torch 2.9


def test_a_model_passed_to_an_export_function_is_followed_to_its_callers(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net

        def export(model, path):
            model.eval()
            torch.onnx.export(model, (torch.randn(2, 3, 8, 8),), path, dynamo=False)

        export(Net(), "net.onnx")
        """})
    (site,) = sites_of(tmp_path, "export.py")
    assert (site.root.name, site.eval_mode) == ("Net", True)


@pytest.mark.parametrize("model, why", [
    ("torch.load('m.pt')", "`torch.load` is not defined in the linted files"),
    ("wrapper.model", "is not a constructor, factory or variable"),
])
def test_what_cannot_be_followed_is_unresolved_with_a_reason(tmp_path, model, why):
    write(tmp_path, {"export.py": f"""
        import torch
        wrapper = object()
        torch.jit.trace({model}, torch.randn(2, 3))
        """})
    (site,) = sites_of(tmp_path, "export.py")
    assert site.root is None and why in site.why_unresolved


def test_a_wrapper_of_a_given_model_has_unknown_mode(tmp_path):
    write(tmp_path, {"w.py": MODEL + """

class Wrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


def export(model):
    torch.export.export(Wrapper(model), (torch.randn(2, 3, 8, 8),))
    torch.export.export(Net(3), (torch.randn(2, 3, 8, 8),))
"""})
    wrapped, fresh = sites_of(tmp_path, "w.py")
    assert (wrapped.root.name, wrapped.eval_mode) == ("Wrapper", None)
    assert (fresh.root.name, fresh.eval_mode) == ("Net", False)


# ------------------------------------------------------------------------------------ roots


def test_with_a_resolved_export_script_only_code_reachable_from_its_root_is_reported(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net
        torch.export.export(Net().eval(), (torch.randn(2, 3, 8, 8),))
        """})
    found = findings(tmp_path)
    assert ("models.py", 15, "EXL042", "export") in found
    assert not any(line == 21 for _, line, _, _ in found), "Other is not exported: its .item() is not export code"
    # Without the script every Module is export code.
    (tmp_path / "export.py").unlink()
    assert ("models.py", 21, "EXL001", "export") in findings(tmp_path)


def test_an_unresolved_call_in_the_scope_means_any_module_may_be_exported(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net
        def export_any(model):
            torch.export.export(model, (torch.randn(2, 3, 8, 8),))
        torch.export.export(Net().eval(), (torch.randn(2, 3, 8, 8),))
        """})
    assert ("models.py", 21, "EXL001", "export") in findings(tmp_path)


def test_a_site_restricts_only_its_own_directory_tree(tmp_path):
    write(tmp_path, {"proj/models.py": MODEL, "proj/export.py": """
        import torch
        from models import Net
        torch.export.export(Net().eval(), (torch.randn(2, 3, 8, 8),))
        """, "other/models.py": MODEL})
    found = findings(tmp_path)
    assert ("other/models.py", 21, "EXL001", "export") in found
    assert ("proj/models.py", 21, "EXL001", "export") not in found


def test_the_target_follows_the_exporter_and_a_root_exported_both_ways_is_judged_under_both(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net
        m = Net().eval()
        torch.export.export(m, (torch.randn(2, 3, 8, 8),))
        torch.jit.trace(m, torch.randn(2, 3, 8, 8))
        """})
    found = findings(tmp_path)
    assert {("models.py", 15, "EXL042", "export"), ("models.py", 15, "EXL042", "trace")} <= found
    text = subprocess.run([sys.executable, "-m", "exportlint", "--no-cache", "."], cwd=tmp_path,
                          capture_output=True, text=True).stdout
    assert "models.py:15:13: EXL042 [error, trace]" in text and "models.py:15:13: EXL042 [warning]" in text
    # --target still overrides the exporters' targets.
    assert {t for *_, t in findings(tmp_path, "--target", "trace")} == {"trace"}


# ------------------------------------------------------------------------------------ dims


def test_declared_dims_make_the_other_dims_static_and_pinning_a_dynamic_dim_is_an_error(tmp_path):
    write(tmp_path, {"models.py": """
        import torch
        from torch import nn

        class Net(nn.Module):
            def forward(self, x):
                B, C, H, W = x.shape
                if C == 3:
                    x = x * 2
                assert H == 224
                n = int(W)
                return x[:, :, :n]
        """, "export.py": """
        import torch
        from torch.export import Dim
        from models import Net
        h, w = Dim("h"), Dim("w")
        torch.export.export(Net().eval(), (torch.randn(2, 3, 224, 224),), dynamic_shapes={"x": {2: h, 3: w}})
        """})
    found = {(p, line, code) for p, line, code, _ in findings(tmp_path)}
    assert ("models.py", 7, "EXL022") not in found  # C: not declared dynamic, so static
    assert ("models.py", 9, "EXL022") in found  # pins the dynamic H
    assert ("models.py", 10, "EXL042") in found  # int(W): W is dynamic


def test_a_recurrent_layer_over_a_declared_dynamic_sequence_is_a_warning(tmp_path):
    # EXL043 is info where nothing declares the sequence dynamic (many models serve one length), a warning
    # where the export call does: torch.export then fixes it anyway (p30), and a named Dim fails.
    write(tmp_path, {"models.py": """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.GRU(8, 8, batch_first=True)

            def forward(self, x):
                return self.rnn(x)[0]
        """, "export.py": """
        import torch
        from torch.export import Dim
        from models import Net
        torch.export.export(Net().eval(), (torch.randn(2, 5, 8),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("t")}})
        """})
    out = subprocess.run([sys.executable, "-m", "exportlint", "--no-cache", "--format", "json", "--exit-zero", "."],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert [(d["path"], d["line"], d["code"], d["severity"]) for d in json.loads(out) if d["code"] == "EXL043"] == [
        ("models.py", 10, "EXL043", "warning")]
    (tmp_path / "export.py").unlink()
    out = subprocess.run([sys.executable, "-m", "exportlint", "--no-cache", "--format", "json", "--exit-zero", "."],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert [(d["line"], d["severity"]) for d in json.loads(out) if d["code"] == "EXL043"] == [(10, "info")]


def test_without_declared_dims_every_dim_may_be_dynamic(tmp_path):
    write(tmp_path, {"models.py": """
        import torch
        from torch import nn

        class Net(nn.Module):
            def forward(self, x):
                B, C, H, W = x.shape
                if H > 8:
                    x = x * 2
                return x
        """, "export.py": """
        import torch
        from models import Net
        torch.jit.trace(Net().eval(), torch.randn(2, 3, 8, 8))
        """})
    assert ("models.py", 7, "EXL022", "trace") in findings(tmp_path)


# ------------------------------------------------------------------------------------ declarations


def test_declared_roots_in_pyproject(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": MODEL, "pyproject.toml": """
        [tool.exportlint.export]
        roots = ["pkg.models:Net"]
        exporter = "jit.trace"
        """})
    found = findings(tmp_path)
    assert ("pkg/models.py", 15, "EXL042", "trace") in found
    assert not any(line == 21 for _, line, _, _ in found)


@pytest.mark.parametrize("table, message", [
    ('roots = ["pkg.models:Missing"]', "Missing is not an nn.Module class"),
    ('roots = ["nowhere:Net"]', "nowhere is not among the linted files"),
    ('roots = ["pkg.models:Net"]\nexporter = "tensorrt"', "unknown exporter 'tensorrt'"),
    ('roots = ["pkg.models:Net"]\ndynamic-dims = ["y:0"]', "'y' is not a parameter of Net.forward"),
    ('opset = 11', "also give `roots`"),
    ('roots = ["pkg.models:Net"]\nopset = 3', "expected an ONNX opset"),
])
def test_bad_declarations_are_one_line_usage_errors(tmp_path, table, message):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": MODEL,
                     "pyproject.toml": "[tool.exportlint.export]\n" + table + "\n"})
    proc = subprocess.run([sys.executable, "-m", "exportlint", "--no-cache", "."], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_cli_root_mirrors_the_declaration(tmp_path):
    write(tmp_path, {"models.py": MODEL})
    found = findings(tmp_path, "--root", "models.py:Net", "--dynamic-dim", "x:0")
    assert not any(line == 21 for _, line, _, _ in found)  # only Net is exported
    assert not any(code == "EXL042" for _, _, code, _ in found)  # H is static: only x:0 is dynamic


# ------------------------------------------------------------------------------------ commands


def test_sites_lists_what_exportlint_believes(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net
        m = Net()
        torch.onnx.export(m, torch.randn(1, 3, 8, 8), "m.onnx", opset_version=13, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}})
        """})
    out = subprocess.run([sys.executable, "-m", "exportlint", "sites"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout
    assert "export.py:4:1: onnx-dynamo via `torch.onnx.export` of `m` -> Net (models.py)" in out
    assert "inputs: 1x3x8x8" in out and "x: 0='batch'" in out and "opset=13" in out
    rows = json.loads(subprocess.run([sys.executable, "-m", "exportlint", "sites", "--format", "json"], cwd=tmp_path,
                                     capture_output=True, text=True, check=True).stdout)
    assert rows[0]["root"] == {"path": "models.py", "class": "Net"} and rows[0]["eval"] is False


def test_spec_writes_a_dynamic_shapes_that_exports(tmp_path):
    torch = pytest.importorskip("torch")
    write(tmp_path, {"vit.py": """
        import torch
        from torch import nn

        class PatchNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Conv2d(3, 16, 8, 8)
                self.head = nn.Linear(16, 4)

            def forward(self, x):
                B, C, H, W = x.shape
                torch._check(H % 8 == 0)
                return self.head(self.embed(x).flatten(2).mean(-1))
        """})
    spec = subprocess.run([sys.executable, "-m", "exportlint", "spec", "vit.py:PatchNet"], cwd=tmp_path,
                          capture_output=True, text=True, check=True).stdout
    assert 'dynamic_shapes={"x": {0: batch, 2: height, 3: width}}' in spec
    assert "8 * Dim(" in spec  # a multiple of the patch size the code divides by
    code = spec.replace("PatchNet(...)", "PatchNet()").split("# The legacy ONNX exporter")[0]
    namespace: dict = {}
    sys.path.insert(0, str(tmp_path))
    try:
        exec(compile("from vit import PatchNet\n" + code, "spec", "exec"), namespace)
    finally:
        sys.path.remove(str(tmp_path))
    out = namespace["ep"].module()(torch.randn(3, 3, 40, 24))  # another batch, height and width
    assert tuple(out.shape) == (3, 4)


def test_settings_know_whether_the_target_was_given(tmp_path):
    assert load_settings(tmp_path).target_explicit is False
    assert load_settings(tmp_path, {"target": "trace"}).target_explicit is True
    assert Settings().target is Target.EXPORT


def test_changing_the_export_script_invalidates_the_models_cached_results(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net
        torch.export.export(Net().eval(), (torch.randn(2, 3, 8, 8),))
        """})
    settings = Settings(root=tmp_path, cache_dir=tmp_path / "cache")
    first = {d.line for r in lint_paths([str(tmp_path)], settings) for d in r.diagnostics}
    (tmp_path / "export.py").write_text("import torch\n")
    second = {d.line for r in lint_paths([str(tmp_path)], Settings(root=tmp_path, cache_dir=tmp_path / "cache"))
              for d in r.diagnostics}
    assert 21 not in first and 21 in second


def test_with_declared_dims_the_dims_layers_fix_are_static(tmp_path):
    write(tmp_path, {"m.py": """
        import torch
        from torch import nn
        from torch.export import Dim

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                B, C, H, W = self.conv(x).shape
                heads = int(C / 2)
                t = self.fc(x.flatten(2).transpose(1, 2))
                scale = float(t.size(-1)) ** -0.5
                return t * scale * heads * int(H)

        torch.export.export(Net().eval(), (torch.randn(2, 3, 16, 16),), dynamic_shapes={"x": {2: Dim("h")}})
        """})
    found = {(line, code) for _, line, code, _ in findings(tmp_path)}
    assert (13, "EXL042") not in found  # channels of a conv's output
    assert (15, "EXL042") not in found  # features of a linear layer's output
    assert (16, "EXL042") in found  # H derives from the declared dynamic height


def test_spec_of_an_export_call_uses_its_root_and_example_and_says_why_it_cannot(tmp_path):
    write(tmp_path, {"models.py": MODEL, "export.py": """
        import torch
        from models import Net
        torch.jit.trace(Net().eval(), torch.randn(4, 3, 32, 48))
        """})
    run = lambda target: subprocess.run([sys.executable, "-m", "exportlint", "spec", target], cwd=tmp_path,
                                        capture_output=True, text=True)
    out = run("export.py:3")
    assert out.returncode == 0 and "torch.randn(4, 3, 32, 48)" in out.stdout and "Net(...)" in out.stdout
    bad = run("export.py:1")
    assert bad.returncode == 2 and "no export call starts on that line" in bad.stderr and "Traceback" not in bad.stderr


def test_an_editor_buffer_with_declared_roots_elsewhere_is_linted_without_error(tmp_path):
    from exportlint.runner import lint_text

    write(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": MODEL, "pyproject.toml": """
        [tool.exportlint.export]
        roots = ["pkg.models:Net"]
        """})
    settings = load_settings(tmp_path)
    other = lint_text("import torch\nfrom torch import nn\n\nclass A(nn.Module):\n    def forward(self, x):\n"
                      "        return x.item()\n", str(tmp_path / "pkg" / "other.py"), settings)
    assert [d.code for d in other.diagnostics] == ["EXL001"]  # the buffer alone: linted as exported
    inside = lint_text((tmp_path / "pkg" / "models.py").read_text(), str(tmp_path / "pkg" / "models.py"), settings)
    assert {d.line for d in inside.diagnostics} == {15}  # Net only: the declared root


def test_exporting_in_training_mode_is_info_for_a_model_without_mode_dependent_layers(tmp_path):
    # super-gradients' NMS export wrappers (index / topk ops only) exported without `.eval()`: held-out
    # judging took the warning as false (the same graph either way)
    write(tmp_path, {
        "nms.py": """
            import torch
            from torch import nn

            class PickTopK(nn.Module):
                def forward(self, scores):
                    return scores.topk(3, dim=-1).indices
        """,
        "export_nms.py": """
            import torch
            from nms import PickTopK
            from model import Net

            ep = torch.export.export(PickTopK(), (torch.randn(2, 8),))
            ep2 = torch.export.export(Net(), (torch.randn(2, 3, 16, 16),))
        """,
        "model.py": MODEL,
    })
    out = subprocess.run(
        [sys.executable, "-m", "exportlint", "--no-cache", "--format", "json", "--exit-zero", "--select", "EXL103", "."],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout
    got = {(d["line"], d["severity"]) for d in json.loads(out) if d["code"] == "EXL103"}
    assert got == {(5, "info"), (6, "error")}


@pytest.mark.parametrize("axes, severity", [
    ('{"x": {0: "batch", 2: "height"}, "out": {0: "batch"}} if dynamic else None', "info"),
    ('{"images": {0: "batch"}} if dynamic else None', "warning"),
])
def test_dynamic_axes_given_only_when_asked_for_are_read(tmp_path, axes, severity):
    # easyocr's export script: `dynamic_axes={...} if dynamic else None`; every key an input or output
    # name is converted by the dynamo exporter (EXL101 info); a key naming neither fails (warning, EXL102)
    write(tmp_path, {"models.py": MODEL, "export.py": f"""
        import torch
        from models import Net

        def export(dynamic=True):
            m = Net().eval()
            torch.onnx.export(m, torch.randn(1, 3, 8, 8), "m.onnx", input_names=["x"], output_names=["out"],
                              dynamic_axes={axes})
        """})
    out = subprocess.run([sys.executable, "-m", "exportlint", "--no-cache", "--format", "json", "--exit-zero", "."],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    (found,) = [d for d in json.loads(out) if d["code"] == "EXL101"]
    assert found["severity"] == severity
    assert any(d["code"] == "EXL102" for d in json.loads(out)) == (severity == "warning")
