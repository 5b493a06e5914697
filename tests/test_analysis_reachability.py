"""Which code is export-reachable: Modules however imported, inheritance, helpers, other files."""

from __future__ import annotations

import pytest

import os

from snippets import codes, lint_tree, write_tree

ITEM_FORWARD = """
    def forward(self, x):
        return x * x.sum().item()
"""


@pytest.mark.parametrize(
    "imports, base",
    [
        ("import torch.nn as nn", "nn.Module"),
        ("from torch import nn", "nn.Module"),
        ("from torch.nn import Module", "Module"),
        ("from torch.nn import Module as Base", "Base"),
        ("import torch", "torch.nn.Module"),
        ("import torch as T", "T.nn.Module"),
        ("import torch.nn", "torch.nn.Module"),
        ("from torch import nn as tnn", "tnn.Module"),
    ],
)
def test_module_found_however_imported(imports, base):
    src = f"{imports}\n\n\nclass M({base}):\n{ITEM_FORWARD}"
    assert codes(src, header=False) == {(7, "EXL001")}


def test_not_a_module_even_with_forward():
    src = """
    class Helper:
        def forward(self, x):
            return x.item()
    """
    assert codes(src) == set()


def test_subclass_of_torch_layer_and_of_local_module():
    src = """
    class BinaryConv2d(nn.Conv2d):
        def forward(self, x):
            return F.conv2d(x, self.weight.sign() * self.weight.abs().mean().item())

    class Base(nn.Module):
        pass

    class Child(Base):
        def forward(self, x):
            return x[: x.sum().item()]
    """
    got = codes(src)
    assert (4, "EXL001") in got and (11, "EXL001") in got


def test_unreachable_code_is_never_flagged():
    src = """
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.n = torch.zeros(3).sum().item()

        def unused(self, x):
            if x.sum() > 0:
                return x.item()

        def forward(self, x):
            return x + 1

    def train(model, loader):
        for x, y in loader:
            loss = model(x).sum()
            print(loss.item())
            if loss > 3:
                break

    total = torch.zeros(2).sum().item()
    """
    assert codes(src) == set()


def test_helpers_methods_nested_functions_and_lambdas_are_followed():
    src = """
    def module_helper(t):
        return t.max().item()

    class Mixin:
        def mixin_helper(self, t):
            return int(t)

    class M(Mixin, nn.Module):
        def helper(self, t):
            return t.tolist()

        def forward(self, x: torch.Tensor):
            a = module_helper(x)
            b = self.mixin_helper(x)
            c = self.helper(x)
            def inner(t):
                return t.numpy()
            d = inner(x)
            f = lambda t: t.min().item()
            return f(x)
    """
    assert codes(src) == {(3, "EXL001"), (7, "EXL003"), (11, "EXL002"), (18, "EXL002"), (20, "EXL001")}


def test_helper_takes_the_kind_of_its_argument():
    src = """
    def scale(v):
        if v > 1:
            return 2
        return 1

    class M(nn.Module):
        def forward(self, x):
            a = scale(3)
            b = scale(x.shape[0])
            return x * a * b
    """
    # Called with a constant: nothing; with a shape value: a shape-dependent branch.
    assert codes(src) == {(3, "EXL022")}


def test_super_forward_and_overrides_called_from_a_base_forward():
    src = """
    class Base(nn.Module):
        def forward(self, x):
            return self.post(x)

        def post(self, x):
            return x

    class Child(Base):
        def post(self, x):
            return x.sum().item()

    class Wrapper(nn.Linear):
        def forward(self, x):
            y = super().forward(x)
            if y.mean() > 0:
                return y
            return -y
    """
    assert codes(src) == {(11, "EXL001"), (16, "EXL020")}


def test_autograd_function_forward_is_export_code_and_symbolic_matters_under_trace():
    src = """
    class Sign(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sign() if x.sum().item() > 0 else x

    class WithSymbolic(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def symbolic(g, x):
            return x

    class M(nn.Module):
        def forward(self, x):
            return Sign.apply(x) + WithSymbolic.apply(x) + self.apply(lambda m: None)
    """
    # torch.export and ONNX dynamo inline the Function's forward: its `.item()` branch is export code
    assert codes(src) == {(5, "EXL001"), (5, "EXL020")}
    # only the TorchScript-based exporters use `symbolic`
    assert {(18, "EXL070"), (5, "EXL001")} <= codes(src, "trace")


def test_cross_file_base_class_and_helper(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/layers.py": """
            import torch
            from torch import nn


            def count(t):
                return t.sum().item()


            class Block(nn.Module):
                def forward(self, x):
                    return x
            """,
        "pkg/model.py": """
            from .layers import Block, count


            class Net(Block):
                def forward(self, x):
                    n = count(x)
                    if n > 0:
                        x = x * 2
                    return x
            """,
    }
    got = lint_tree(tmp_path, files)
    assert got == {"pkg/layers.py": {(7, "EXL001")}, "pkg/model.py": {(8, "EXL020")}}


def test_absolute_import_of_a_linted_module(tmp_path):
    files = {
        "proj/__init__.py": "",
        "proj/base.py": """
            import torch.nn as nn

            class Base(nn.Module):
                pass
            """,
        "proj/net.py": """
            from proj.base import Base

            class Net(Base):
                def forward(self, x):
                    for row in x.flatten(1):
                        pass
                    return x
            """,
    }
    assert lint_tree(tmp_path, files) == {"proj/net.py": {(6, "EXL010")}}


PARTS = {
    "pkg/__init__.py": "",
    "pkg/part.py": """
        import torch
        from torch import nn

        class Part(nn.Module):
            def forward(self, x, table):
                for i in range(table.shape[0]):
                    x = x + table[i].sum()
                return x
        """,
    "pkg/noise.py": """
        import torch
        from torch import nn

        class Noise(nn.Module):
            def forward(self, x):
                if (x > 0.5).any():
                    x = x * 2
                return x
        """,
    "pkg/model.py": """
        import torch
        from torch import nn
        from .part import Part
        from .noise import Noise

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.part = Part()
                self.noise = Noise()
                self.table = nn.Parameter(torch.zeros(4, 5))

            def forward(self, x):
                if self.training:
                    x = self.noise(x)
                return self.part(x, self.table)
        """,
}


def test_a_module_another_linted_file_calls_is_judged_on_that_callers_values(tmp_path):
    # Across files as within one (anomalib's SuperSimpleNet builds its AnomalyGenerator in another file and
    # calls it only while training; CS-Flow hands its anomaly-map module a list; holdout13): iterating a
    # parameter's rows pins nothing, and code only a training arm calls is not on the export path
    got = lint_tree(tmp_path, PARTS)
    assert "pkg/part.py" not in got
    assert got == {"pkg/noise.py": {(7, "EXL020")}}
    from exportlint.config import Settings
    from exportlint.runner import run

    result = run([str(tmp_path / "pkg")], Settings(cache=False))
    (report,) = [r for r in result.reports if r.diagnostics]
    (d,) = report.diagnostics
    assert d.severity.value == "info" and "`Model` builds it as `self.noise` but its forward never calls it" in d.hint


def test_a_module_linted_without_its_callers_is_judged_on_its_own(tmp_path):
    paths, _ = write_tree(tmp_path, PARTS)
    from exportlint.config import Settings
    from exportlint.runner import run

    result = run([str(tmp_path / "pkg" / "part.py"), str(tmp_path / "pkg" / "noise.py")], Settings(cache=False))
    got = {(os.path.basename(r.path), d.line, d.code, d.severity.value) for r in result.reports for d in r.diagnostics}
    assert got == {("part.py", 7, "EXL022", "warning"), ("noise.py", 7, "EXL020", "error")}


def test_incremental_analysis_matches_the_full_one():
    """The editor path (each definition parsed alone, reused across edits) gives the same
    diagnostics, positions and provenance as parsing the whole file."""
    from pathlib import Path

    from exportlint.engine import analyze_source

    def key(ds):
        return sorted((d.line, d.column, d.end_line, d.end_column, d.code, d.message, tuple(map(str, d.provenance))) for d in ds)

    for path in sorted((Path(__file__).parent.parent / "fixtures").glob("*.py")):
        src = path.read_text(encoding="utf-8")
        full = key(analyze_source(src, str(path)))
        assert key(analyze_source(src, str(path), incremental=True)) == full
        edited = src.replace("\n\n\n", "\n\n\n# edited\n", 1)  # shifts every later definition
        assert [k[0] for k in key(analyze_source(edited, str(path), incremental=True))] == [
            k[0] for k in key(analyze_source(edited, str(path)))
        ]
