"""The fix engine (applying edits) and the rules' fix producers, on real source with the real analyzer."""

from __future__ import annotations

import ast
import textwrap

import pytest
from lsprotocol import types

from exportlint.config import Settings
from exportlint.diagnostics import Target
from exportlint.fixes.apply import apply_fixes, parses, splice
from exportlint.fixes.driver import add_noqa, fix_text
from exportlint.fixes.model import SAFE, UNSAFE, Edit, Fix, FixPolicy
from exportlint.lsp.features import fix_of, safe_fix_edits
from exportlint.reporters.lsp import to_lsp_diagnostic
from exportlint.runner import lint_text

HEADER = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def module(body: str) -> str:
    return HEADER + "class M(nn.Module):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def fixes(src: str, target: str = "export", code: str | None = None) -> list[dict]:
    report = lint_text(src, "m.py", Settings(target=Target(target), cache=False))
    return [d.fix for d in report.diagnostics if d.fix and (code is None or d.code == code)]


def fixed(src: str, target: str = "export", unsafe: bool = True) -> str:
    return fix_text(src, "m.py", Settings(target=Target(target), unsafe_fixes=unsafe, cache=False))[0]


# --- applying edits -----------------------------------------------------------------------------

def _fix(*edits, how=SAFE):
    return Fix("f", how, tuple(Edit(*e) for e in edits))


def test_overlapping_fixes_wait_for_the_next_round_and_insertions_at_one_point_conflict():
    text = "a = 1\nb = 2\n"
    first, overlapping, elsewhere = _fix((1, 5, 1, 6, "10")), _fix((1, 1, 1, 6, "z = 3")), _fix((2, 5, 2, 6, "20"))
    new, applied = apply_fixes(text, [overlapping, elsewhere, first])
    assert applied == [overlapping, elsewhere] and new == "z = 3\nb = 20\n"
    assert _fix((1, 1, 1, 1, "x")).overlaps(_fix((1, 1, 1, 1, "y")))
    assert not _fix((1, 1, 1, 1, "x")).overlaps(_fix((1, 1, 1, 3, "y")))  # insertion at a boundary
    assert _fix((1, 2, 1, 2, "x")).overlaps(_fix((1, 1, 1, 3, "y")))  # insertion inside a replacement


def test_a_fix_whose_result_does_not_parse_is_dropped():
    text = "a = f(1)\nb = 2\n"
    breaking, fine = _fix((1, 5, 1, 9, "f(")), _fix((2, 5, 2, 6, "3"))
    new, applied = apply_fixes(text, [breaking, fine])
    assert applied == [fine] and new == "a = f(1)\nb = 3\n"


def test_splice_keeps_crlf_line_endings_and_non_ascii_columns():
    text = "é = 1\r\nb = 2\r\n"
    assert splice(text, [Edit(1, 5, 1, 6, "x\ny")]) == "é = x\r\ny\r\nb = 2\r\n"


def test_fix_data_round_trips():
    fix = _fix((1, 2, 3, 4, "x"), how=UNSAFE)
    assert Fix.from_dict(fix.to_dict()) == fix and Fix.from_dict(None) is None


def test_policy():
    safe, unsafe = _fix((1, 1, 1, 2, "x")), _fix((1, 1, 1, 2, "x"), how=UNSAFE)
    display = Fix("f", "display-only", safe.edits)
    assert FixPolicy().applies("EXL042", safe) and not FixPolicy().applies("EXL042", unsafe)
    assert FixPolicy(unsafe=True).applies("EXL042", unsafe) and not FixPolicy(unsafe=True).applies("EXL042", display)
    assert not FixPolicy(unfixable=frozenset({"EXL042"})).applies("EXL042", safe)
    assert not FixPolicy(fixable=frozenset({"EXL040"})).applies("EXL042", safe)
    assert FixPolicy().hidden("EXL020", unsafe) and not FixPolicy(unsafe=True).hidden("EXL020", unsafe)


# --- EXL042 ---------------------------------------------------------------------------------------

SIZES = list(range(0, 41)) + [97, 224, 1023]


@pytest.mark.parametrize("expr, replacement", [
    ("int(h / 4)", "h // 4"),
    ("math.floor(h / 4)", "h // 4"),
    ("math.ceil(h / 4)", "(h + 3) // 4"),
    ("int((h + 1) / 3)", "(h + 1) // 3"),
    ("int(x.shape[-1] / 5)", "x.shape[-1] // 5"),
    ("math.floor((h - 9) / 4)", "(h - 9) // 4"),  # floor division equals floor for any sign
    ("int(h)", "h"),
])
def test_safe_integer_size_fixes_compute_the_same_on_every_size(expr, replacement):
    src = module(f"""
        def forward(self, x):
            h = x.shape[-1]
            n = {expr}
            return x.new_zeros(n + 20)
    """)
    found = fixes(src, "trace")
    assert [(f["applicability"], f["edits"][0]["content"]) for f in found] == [(SAFE, replacement)]
    new = fixed(src, "trace", unsafe=False)
    ns_before, ns_after = {}, {}
    exec(compile(src, "b.py", "exec"), ns_before)
    exec(compile(new, "a.py", "exec"), ns_after)
    import torch

    for size in SIZES:
        x = torch.zeros(1, size)
        assert ns_before["M"]()(x).shape == ns_after["M"]()(x).shape, size


@pytest.mark.parametrize("expr", [
    "int((h - 9) / 4)",  # int() truncates: differs from // on negative numerators
    "int(h / self.stride)",  # the divisor may be a float
])
def test_integer_size_fix_is_unsafe_when_it_may_change_the_value(expr):
    src = module(f"""
        stride = 2

        def forward(self, x):
            h = x.shape[-1]
            return x.new_zeros({expr})
    """)
    assert [f["applicability"] for f in fixes(src, "trace", "EXL042")] == [UNSAFE]


@pytest.mark.parametrize("expr", [
    "int(h * self.factor)",  # the attribute may be a float: int() is what makes it an integer
    "int(h * ratio)",  # so may a parameter
    "int(h // self.groups)",
    "int(ratio)",
])
def test_no_int_removal_unless_the_operand_is_proven_an_integer(expr):
    src = module(f"""
        factor = 0.5
        groups = 2.0

        def forward(self, x, ratio: float = 0.5):
            h = x.shape[-1]
            return x.new_zeros({expr})
    """)
    assert all(f["applicability"] != SAFE for f in fixes(src, "trace", "EXL042"))
    assert "int(" in fixed(src, "trace", unsafe=False)


def test_no_safe_integer_fix_for_a_size_that_holds_a_float():
    src = module("""
        def forward(self, x):
            h = x.shape[-1] + 0.1
            return x.new_zeros(int(h / 2))
    """)
    assert all(f["applicability"] != SAFE for f in fixes(src, "trace", "EXL042"))


def test_len_of_a_tensor_becomes_its_first_size():
    src = module("""
        def forward(self, x):
            return x.new_zeros(len(x + 1))
    """)
    assert [f["edits"][0]["content"] for f in fixes(src, "trace", "EXL042")] == ["(x + 1).shape[0]"]


# --- EXL040 ---------------------------------------------------------------------------------------

def test_size_tensor_fix_needs_the_sizes_unchanged_since_the_tensor_was_built():
    src = module("""
        def forward(self, x):
            h, w = x.shape[-2:]
            grid = torch.tensor([h // 2, w // 2])
            h = h + 1
            return F.interpolate(x, size=(grid[0], grid[1]))
    """)
    [fix] = fixes(src, "trace", "EXL040")
    assert [e["content"] for e in fix["edits"]] == ["w // 2"]  # `h` was rebound: grid[0] stays


def test_size_tensor_assignment_is_kept_while_something_else_reads_it():
    src = module("""
        def forward(self, x):
            grid = torch.tensor([x.shape[-2] // 2, x.shape[-1] // 2])
            y = F.interpolate(x, size=(grid[0], grid[1]))
            return y, grid
    """)
    new = fixed(src, "trace")
    assert "grid = torch.tensor" in new and "size=(x.shape[-2] // 2, x.shape[-1] // 2)" in new


# --- EXL020 ---------------------------------------------------------------------------------------

def test_if_else_assigning_the_same_names_becomes_torch_where():
    src = module("""
        def forward(self, x, y):
            if x.sum() > 0:  # positive
                a = x * 2
                b = y
            else:
                a = x
            return a + b
    """)
    assert fixed(src).endswith(
        "        a = torch.where(x.sum() > 0, x * 2, x)  # positive\n"
        "        b = torch.where(x.sum() > 0, y, b)\n"
        "        return a + b\n"
    ) is False  # `b` has no value before the `if`: no fix
    src = src.replace("def forward(self, x, y):", "def forward(self, x, y, b):")
    assert fixed(src).endswith(
        "        a = torch.where(x.sum() > 0, x * 2, x)  # positive\n"
        "        b = torch.where(x.sum() > 0, y, b)\n"
        "        return a + b\n"
    )


@pytest.mark.parametrize("body", [
    # an elif chain
    "if x.sum() > 0:\n    a = x\nelif x.sum() < -1:\n    a = -x\nelse:\n    a = x * 0\nreturn a\n",
    # a comment inside an arm would be lost
    "if x.sum() > 0:\n    # double\n    a = x * 2\nelse:\n    a = x\nreturn a\n",
    # the second assignment reads the first
    "a = x\nif x.sum() > 0:\n    a = x * 2\n    a = a + 1\nreturn a\n",
    # a Python number as the condition: torch.where needs a tensor
    "if x.sum().item() > 0:\n    x = x * 2\nreturn x\n",
])
def test_no_where_fix_when_it_could_not_be_right(body):
    src = module("def forward(self, x):\n" + textwrap.indent(body, "    "))
    found = lint_text(src, "m.py", Settings(cache=False)).diagnostics
    assert [d.code for d in found if d.code == "EXL020"] and not [d for d in found if d.code == "EXL020" and d.fix]


def test_assert_fix_is_display_only_under_trace():
    src = module("""
        def forward(self, x):
            assert (x > 0).all(), "positive"
            return x.log()
    """)
    [export] = fixes(src, "export", "EXL020")
    [trace] = fixes(src, "trace", "EXL020")
    assert export["applicability"] == UNSAFE and trace["applicability"] == "display-only"
    assert export["edits"][0]["content"] == 'torch._assert_async((x > 0).all(), "positive")'
    assert fixed(src, "trace") == src


# --- EXL051 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, expected", [
    ('pos = torch.arange(x.shape[1], device="cuda")', "pos = torch.arange(x.shape[1], device=x.device)"),
    ('pos = torch.zeros(3).to("cuda:0")', "pos = torch.zeros(3).to(x.device)"),
    ("pos = torch.zeros(3).cuda()", "pos = torch.zeros(3).to(x.device)"),
])
def test_device_fix_follows_the_first_tensor_input(line, expected):
    src = module(f"""
        def forward(self, x: torch.Tensor, scale: float = 1.0):
            {line}
            return x + pos
    """)
    assert expected in fixed(src)


def test_no_device_fix_without_a_tensor_input():
    src = module("""
        def forward(self, n: int):
            return torch.zeros(n, device="cuda")
    """)
    found = lint_text(src, "m.py", Settings(cache=False)).diagnostics
    assert [(d.code, d.fix) for d in found] == [("EXL051", None)]


# --- guarantees ---------------------------------------------------------------------------------

def test_fixes_keep_comments_and_formatting_and_are_idempotent():
    src = module("""
        def forward(self, x):  # entry
            h, w = x.shape[-2:]   # sizes
            # halve
            y = F.interpolate(x, size=(int(h / 2),   int(w / 2)))  # keep
            return y
    """)
    new = fixed(src)
    assert new == src.replace("int(h / 2)", "h // 2").replace("int(w / 2)", "w // 2")
    assert fixed(new) == new


def test_code_no_forward_reaches_is_never_touched():
    src = module("""
        def forward(self, x):
            return x

        def helper(self, x):
            return x.new_zeros(int(x.shape[-1] / 2))
    """)
    assert fixed(src) == src


def test_add_noqa_suppresses_every_finding_and_merges_into_existing_lists():
    src = module("""
        def forward(self, x):
            h = x.shape[-1]
            y = x.new_zeros(int(h / 2), len(x))  # noqa: E501
            if x.sum() > 0:
                y = y + 1
            return y
    """)
    settings = Settings(target=Target.TRACE, cache=False)
    report = lint_text(src, "m.py", settings)
    assert {d.code for d in report.diagnostics} >= {"EXL042", "EXL020"}
    new, added = add_noqa(src, report.diagnostics)
    ast.parse(new)
    assert added == len({(d.line, d.code) for d in report.diagnostics})
    assert "# noqa: E501, EXL042" in new
    assert lint_text(new, "m.py", settings).diagnostics == []
    assert add_noqa(new, lint_text(new, "m.py", settings).diagnostics) == (new, 0)


# --- the editor's edits are the same data ---------------------------------------------------------

def _apply_lsp(text: str, edits: list[dict]) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    spans = sorted(
        ((offsets[e["range"]["start"]["line"]] + e["range"]["start"]["character"],
          offsets[e["range"]["end"]["line"]] + e["range"]["end"]["character"], e["newText"]) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def test_lsp_edits_apply_like_fix():
    src = module("""
        def forward(self, x):
            h, w = x.shape[-2:]
            grid = torch.tensor([h // 2, w // 2])
            y = F.interpolate(x, size=(grid[0], grid[1]))
            return y.new_zeros(int(h / 2)) + y.sum()
    """)
    # What the language server offers: the LSP diagnostics' fix data, as `exportlint lsp` publishes it.
    report = lint_text(src, "m.py", Settings(target=Target("trace"), cache=False))
    lines = src.split("\n")
    published = [to_lsp_diagnostic(d, "file:///m.py", lines) for d in report.diagnostics if d.fix]
    diagnostics = [types.Diagnostic(range=types.Range(start=types.Position(line=0, character=0),
                                                      end=types.Position(line=0, character=0)),
                                    message=p["message"], data=p["data"]) for p in published]
    edits, _ = safe_fix_edits(diagnostics)
    assert _apply_lsp(src, edits) == fixed(src, "trace", unsafe=False)  # source.fixAll.exportlint
    single = _apply_lsp(src, fix_of(diagnostics[0])["edits"])  # one "Fix: ..." code action
    assert single != src and ast.parse(single)


@pytest.mark.parametrize("line", [
    "m = None if not x.any() else x",  # `not`: a Python bool
    "m = x * 2 if x.any() and x.sum() > 0 else x",  # `and`: a Python bool
    "m = 1 if x.sum() > 0 else 0",  # a Python number the code goes on using
    "m = x if x.sum() > 0 else None",  # None is not a tensor
    "m = (x *\n             2) if x.sum() > 0 else x",  # a multi-line arm would lose its layout
])
def test_no_where_fix_for_python_values_or_multi_line_code(line):
    src = module("def forward(self, x):\n    " + line + "\n    return m\n")
    found = lint_text(src, "m.py", Settings(cache=False)).diagnostics
    assert [d.fix for d in found if d.code == "EXL020"] == [None]


def test_no_where_fix_when_the_kept_value_may_be_none():
    src = module("""
        def forward(self, x, valid=None):
            if valid is None:
                s = (x == -1).all(dim=-1)
                if s.any():
                    valid = ~s
            return x, valid
    """)
    found = lint_text(src, "m.py", Settings(cache=False)).diagnostics
    assert [(d.code, d.fix) for d in found if d.code == "EXL020"] == [("EXL020", None)]


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def _text_and_fixes(draw):
    # comment lines: the text parses, and so do most edits of it (an edit that removes a `#` does not)
    lines = ["#" + line for line in draw(st.lists(st.text(alphabet="ab é#", max_size=8), min_size=1, max_size=5))]
    text = "\n".join(lines) + "\n"
    positions = [(i + 1, c + 1) for i, line in enumerate(lines) for c in range(len(line) + 1)]
    fixes = []
    for _ in range(draw(st.integers(0, 4))):
        a, b = sorted(draw(st.lists(st.sampled_from(positions), min_size=2, max_size=2)))
        fixes.append(Fix("f", SAFE, (Edit(a[0], a[1], b[0], b[1], draw(st.text(alphabet="xy", max_size=3))),)))
    return text, fixes


@settings(max_examples=200, deadline=None)
@given(_text_and_fixes())
def test_applied_fixes_never_overlap_and_apply_like_one_at_a_time(case):
    """Property: the fixes taken together equal applying them one by one from the end of the text
    (an insertion where a replacement starts goes before the replaced text), and a run that applies
    nothing keeps the text."""
    text, candidates = case
    new, applied = apply_fixes(text, candidates)
    assert all(not a.overlaps(b) for i, a in enumerate(applied) for b in applied[i + 1:])
    one_by_one = text
    for fix in sorted(applied, key=lambda f: (f.edits[0].start, f.edits[0].end), reverse=True):
        one_by_one = splice(one_by_one, list(fix.edits))
    assert new == one_by_one
    if not applied:
        assert new == text
    assert parses(new)
