"""The dataflow's kinds (constant, shape, tensor, data-dependent scalar), provenance and positions."""

from __future__ import annotations

import subprocess
import sys

import pytest

from exportlint.diagnostics import Severity
from snippets import codes, just_codes, lint


def module(body: str, params: str = "x") -> str:
    lines = "\n".join("        " + line for line in body.strip("\n").splitlines())
    return f"""
class M(nn.Module):
    def __init__(self, dim=4, num_layers=2):
        super().__init__()
        self.num_layers = num_layers
        self.eps = 1e-5
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(num_layers)])
        self.proj = nn.Linear(dim, dim)
        self.scale = nn.Parameter(torch.ones(dim))
        self.register_buffer("anchors", torch.zeros(4, 2))

    def forward(self, {params}):
{lines}
        return x
"""


# ---------------------------------------------------------------- shape values
@pytest.mark.parametrize(
    "cond",
    [
        "x.shape[0] > 1",
        "x.size(1) >= 4",
        "x.size()[-1] != 1",
        "x.numel() > 1000",
        "x.flatten(1).shape[0] > 2",
        "x.shape[0] * 0.5 > 1",
        "min(x.shape[-2:]) > 8",
        "x.shape == (2, 4)",
    ],
)
def test_shape_conditions_are_shape_dependent_branches(cond):
    src = "import math\n" + module(f"if {cond}:\n    x = x + 1")
    assert just_codes(src) == {"EXL022"}


def test_shape_values_survive_unpacking_and_arithmetic():
    src = module("b, c, h, w = x.shape\nn = (h // 2) * w\nif n > 16:\n    x = x * 2\nx = x.view(b, c, -1)")
    assert just_codes(src) == {"EXL022"}
    assert just_codes(src, "trace") == {"EXL022"}


# ---------------------------------------------------------------- data-dependent scalars
def test_data_dependent_scalar_propagates_with_provenance():
    src = module("n = x.sum().item()\nm = n * 2 + 1\nif m > 3:\n    x = x * 2")
    diags = lint(src)
    branch = [d for d in diags if d.code == "EXL020"]
    assert len(branch) == 1
    notes = [n.message for n in branch[0].provenance]
    assert any("`n` is data-dependent: `n = x.sum().item()`" in m for m in notes)
    assert any("`m` is data-dependent: `m = n * 2 + 1`" in m for m in notes)
    assert {d.code for d in diags} == {"EXL001", "EXL020"}


@pytest.mark.parametrize(
    "expr, code",
    [("int(x.max())", "EXL003"), ("float(x.mean())", "EXL003"), ("bool(x.any())", "EXL003"), ("x.tolist()[0]", "EXL002")],
)
def test_tensor_to_python_conversions_make_data_dependent_scalars(expr, code):
    src = module(f"k = {expr}\nwhile k > 0:\n    k = k - 1")
    assert just_codes(src) == {code, "EXL020"}


def test_int_of_item_is_a_conversion_export_cannot_guard():
    # measured: `int(t.item())` fails non-strict torch.export (it must guard on the unbacked value):
    # one finding, EXL001 at error; `int(n)` of an `.item()` read earlier is EXL003
    (d,) = lint(module("k = int(x.sum().item())\nx = x * k"))
    assert (d.code, d.severity) == ("EXL001", Severity.ERROR)
    assert just_codes(module("n = x.sum().item()\nk = int(n)\nx = x * k")) == {"EXL001", "EXL003"}
    assert just_codes(module("k = int(x.sum().item())\nx = x * k"), "trace") == {"EXL001"}


def test_conversion_of_shapes_leaves_symbolic_arithmetic():
    # int()/float() on sizes specialise the dim (torch.export) or bake it (jit.trace): EXL042, once
    assert codes(module("k = int(x.shape[2])\nf = float(x.size(0))\nx = x * k * f")) == {(13, "EXL042"), (14, "EXL042")}


# ---------------------------------------------------------------- parameters
@pytest.mark.parametrize(
    "params",
    ["x, flag=False", "x, flag: bool = True", "x, flag: bool", "x, n: int = 3", "x, mode: str = 'a'", "x, flag: Optional[bool] = None"],
)
def test_non_tensor_parameters_are_config(params):
    assert just_codes("from typing import Optional\n" + module("if flag:\n    x = x + 1", params.replace("n:", "flag:").replace("mode:", "flag:"))) == set()


def test_tensor_parameters_and_lists_of_tensors():
    assert just_codes(module("if mask.any():\n    x = x + 1", "x, mask=None")) == {"EXL020"}
    assert just_codes("from typing import List\n" + module("for f in feats:\n    x = x + f", "x, feats: List[torch.Tensor]")) == set()
    assert just_codes(module("for f in x:\n    pass", "x: torch.Tensor")) == {"EXL010"}


# ---------------------------------------------------------------- never flagged
@pytest.mark.parametrize(
    "body",
    [
        "if mask is None:\n    x = x + 1",
        "if mask is not None:\n    x = x * mask",
        "if isinstance(x, torch.Tensor):\n    x = x + 1",
        "if self.training:\n    x = x + 1",
        "if self.num_layers > 1:\n    x = x + self.eps",
        "if torch.cuda.is_available():\n    x = x + 1",
        "if x.dtype == torch.float16:\n    x = x.float()",
        "if x.device.type == 'cuda':\n    x = x + 1",
        "if x.is_cuda:\n    x = x + 1",
        "for i in range(self.num_layers):\n    x = self.layers[i](x)",
        "for layer in self.layers:\n    x = layer(x)",
        "for i, layer in enumerate(self.layers):\n    x = layer(x) * i",
        "outs = []\nfor layer in self.layers:\n    outs.append(layer(x))\nif len(outs) > 1:\n    x = outs[0]",
        "x = torch.where(x > 0, x, torch.zeros_like(x))",
        "x = x.view(x.size(0), -1)",
        "x = F.interpolate(x, size=(x.shape[-2] * 2, x.shape[-1] * 2))",
        "x = x.to(x.device)",
        "x = x.to(dtype=torch.float32)",
        "x[x < 0] = 0",
        "x = x[torch.argsort(x)]",
        "x = x * self.scale + self.anchors.sum()",
        "a, b = x.unbind(0)\nx = a + b",
        "for c in x.split(2, dim=1):\n    x = x + c.sum()",
        "for c in torch.chunk(x, 2):\n    x = x + c.sum()",
        "v, i = x.topk(2)\nx = v",
        "v, i = x.max(dim=1)\nx = v",
        "v, i = torch.max(x, 1)\nx = v",
        "v, i = torch.sort(x)\nx = v",
        "gy, gx = torch.meshgrid(x, x, indexing='ij')\nx = gy",
        "for s in x.shape:\n    x = x + s",
        "h, w = x.shape[-2:]\nx = x[:, :h // 2]",
        "out = self.proj(x)\nx = out",
    ],
)
def test_never_flagged(body):
    assert codes(module(body, "x, mask=None")) == set()


# ---------------------------------------------------------------- loops and branches
def test_loop_state_reaches_a_fixed_point():
    src = module("s = 0\nfor layer in self.layers:\n    if s > 1:\n        x = x + 1\n    s = x.sum().item()")
    assert codes(src) >= {(15, "EXL020")}


def test_branch_join_keeps_every_kind():
    src = module("if self.training:\n    n = 3\nelse:\n    n = x.sum().item()\nfor i in range(n):\n    x = x + i")
    assert just_codes(src) == {"EXL001", "EXL021"}


def test_return_value_of_helper_flows_back():
    src = """
def count(t):
    return t.nonzero().shape[0]

class M(nn.Module):
    def forward(self, x):
        n = count(x)
        return x[:n]
"""
    # The size of a data-dependent-shape op's result is itself data-dependent (a load through it is
    # reported under trace, where it is baked).
    assert codes(src, "trace") == {(3, "EXL032"), (8, "EXL030")}


def test_sizes_of_data_dependent_shapes_are_data_dependent():
    src = module(
        "boxes = x[x > 0]\nkeep = boxes.argsort()\nif keep.numel() == 0:\n    return x\n"
        "while len(keep) > 1:\n    keep = keep[1:]\nn = boxes.shape[0]\nif x.shape[0] > 1:\n    x = x[:n]"
    )
    got = codes(src)
    assert got == {(13, "EXL032"), (15, "EXL020"), (17, "EXL020"), (20, "EXL022")}
    assert (21, "EXL030") in codes(src, "trace")  # the load `x[:n]`: baked by jit.trace only
    (branch,) = [d for d in lint(src) if d.code == "EXL020" and d.line == 18]
    assert any("`boxes` is a tensor whose size depends on data" in n.message for n in branch.provenance)


def test_comprehension_and_star_iteration_but_not_fixed_unpacking():
    # `a, b = t` fixes that dim to 2 (eager raises otherwise): exports correctly (measured, p04e)
    src = module("x = x.float()\nrows = [r * 2 for r in x]\na, b = x\nys = list(x)\nzs = [*x]")
    assert sorted(c for _, c in codes(src)) == ["EXL010"] * 3


# ---------------------------------------------------------------- positions
def test_positions_point_at_the_keyword_or_the_condition():
    src = """
class M(nn.Module):
    def forward(self, x):
        n = x.sum().item()
        if n > 1:
            pass
        elif n < 0:
            pass
        y = x if n else -x
        assert (x >= 0).all()
        for i in range(n):
            pass
        return y
"""
    found = {(d.line - 3, d.column, d.code) for d in lint(src)}
    assert found == {
        (4, 13, "EXL001"),
        (5, 9, "EXL020"),
        (7, 9, "EXL020"),
        (9, 18, "EXL020"),
        (10, 16, "EXL020"),
        (11, 9, "EXL021"),
    }


def test_span_of_a_branch_covers_the_condition():
    d = [d for d in lint(module("if x.sum() > 0:\n    x = x + 1")) if d.code == "EXL020"][0]
    assert (d.line, d.column, d.end_line, d.end_column) == (16, 9, 16, 23)


# ---------------------------------------------------------------- targets
def test_severity_depends_on_the_target():
    src = module("x = x * x.sum().item()")
    (export,) = lint(src, "export")
    (trace,) = lint(src, "trace")
    # under export a number only tensor ops use stays symbolic (info); jit.trace bakes it (error)
    assert export.severity is Severity.INFO and trace.severity is Severity.ERROR
    assert "torch._check" in export.hint and "constant" in trace.hint
    read = [d for d in lint(module("n = x.sum().item()\nif n > 0:\n    x = x * n"), "export") if d.code == "EXL001"]
    assert read[0].severity is Severity.WARNING  # Python decides on it: the `if` is the error, the read a warning


def test_fix_hints_are_target_aware_for_branches():
    src = module("if x.sum() > 0:\n    x = x + 1")
    (export,) = lint(src, "export")
    (trace,) = lint(src, "trace")
    assert "torch.cond" in export.hint and "torch.where" in trace.hint
    assert "break jit.trace" in trace.hint


# ---------------------------------------------------------------- bad input
def test_syntax_errors_are_reported_not_raised():
    (d,) = lint("class M(nn.Module):\n    def forward(self, x)\n        return x\n")
    assert d.code == "EXL900" and d.line == 5 and "syntax error" in d.message


def test_syntax_error_in_a_file_without_models_is_still_reported():
    (d,) = lint("def f(:\n    pass\n", header=False)
    assert (d.code, d.line) == ("EXL900", 1)


def test_internal_error_is_one_diagnostic(monkeypatch):
    from exportlint.analysis import dataflow

    def boom(self, entries=None):
        raise ValueError("synthetic failure")

    monkeypatch.setattr(dataflow.Interpreter, "run", boom)
    (d,) = lint(module("x = x + 1"))
    assert d.code == "EXL901" and "synthetic failure" in d.message


def test_static_pass_never_imports_torch():
    code = (
        "import sys\n"
        "from exportlint.engine import analyze_source\n"
        "src = 'import torch\\nclass M(torch.nn.Module):\\n    def forward(self, x):\\n        return x.item()\\n'\n"
        "assert [d.code for d in analyze_source(src, 'm.py')] == ['EXL001']\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_match_statements_and_dict_inputs():
    src = """
from typing import Dict, List

class M(nn.Module):
    def reset(self, x):
        match x.dim():
            case 4:
                return x.item()
            case _:
                return x

    def forward(self, x, annotations: List[Dict[str, torch.Tensor]]):
        for t in annotations:
            for k, v in t.items():
                x = x + v
            if "boxes" in t:
                x = x * 2
        return self.reset(x)
"""
    assert codes(src) == {(8, "EXL001")}


def test_training_only_code_is_not_analyzed():
    src = module(
        "if self.training and torch.rand(1) < 0.1:\n    return x\n"
        "if self.training:\n    x = x * x.sum().item()\nelse:\n    x = x + 1\n"
        "if not self.training:\n    x = x * 2\nelse:\n    n = x.sum().item()\n"
        "skip = self.training and torch.rand([]) < 0.5\nif skip:\n    x = x * 3"
    )
    assert codes(src) == set()


def test_submodules_are_analyzed_with_their_callers_arguments():
    src = """
class Block(nn.Module):
    def forward(self, x, H, W):
        B, N, C = x.shape
        if H % 2 == 1:
            x = F.pad(x, (0, 1))
        return x.view(B, H, W, C)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])

    def forward(self, x):
        H, W = x.shape[-2:]
        x = x.flatten(2).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x, H, W)
        return x
"""
    # H and W are shapes where Block is used: a shape branch, no tensor size argument.
    assert codes(src) == {(5, "EXL022")}


def test_unannotated_flag_parameters_with_none_defaults():
    src = module("if use_cache and return_dict:\n    x = x + 1\nif mask:\n    x = x * 2", "x, use_cache=None, return_dict=None, mask: torch.Tensor | None = None")
    assert codes(src) == {(15, "EXL020")}
    # an unannotated `mask=None` nothing shows to be a tensor may be a flag: no finding
    src = module("if mask:\n    x = x * 2", "x, mask=None")
    assert codes(src) == set()
