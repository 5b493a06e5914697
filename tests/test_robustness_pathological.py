"""Pathological but valid sources (issue 10): every generated file gives findings or a clear
"too complex" EXL902, never EXL901, a crash, a hang or a false EXL900.  Per-file time and memory
bounds are measured in benchmarks/bench_pathological.py (no timed assertions here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from exportlint import budget
from exportlint.diagnostics import Target
from exportlint.engine import analyze_source

from pathological import MODULE, _indent, big_sum, corpus, parses

CORPUS = corpus((300, 10_000))


def _codes(diagnostics) -> set[str]:
    return {d.code for d in diagnostics}


@pytest.mark.parametrize("name, source, valid", CORPUS, ids=[c[0] for c in CORPUS])
def test_every_pathological_file_is_analyzed_or_said_too_complex(name, source, valid):
    diagnostics = analyze_source(source, f"{name}.py", Target.EXPORT)
    codes = _codes(diagnostics)
    assert "EXL901" not in codes, [d.message for d in diagnostics]
    if not valid:  # CPython itself rejects it (too deep for its parser): a quick EXL900
        assert codes == {"EXL900"}
        assert "nested too deeply for Python's parser" in diagnostics[0].message
        return
    assert "EXL900" not in codes, [d.message for d in diagnostics]
    if name.endswith("_forward"):
        # The forward ends with a data-dependent `if`: analysed means it is found.
        assert codes in ({"EXL020"}, {"EXL902"}), [d.message for d in diagnostics]
    else:
        assert codes <= {"EXL902"}


@pytest.mark.parametrize("body, links", [
    ("a = " + " + ".join(["a"] * 485) + "\n", 485),
    ("a = x" + ".relu()" * 242 + "\n", 242),
    ("if n == 0:\n    a = a + 1\n" + "".join(f"elif n == {i}:\n    a = a * {i}\n" for i in range(1, 480)), 480),
], ids=["sum-485", "method-chain-242", "elif-480"])
def test_the_sizes_that_gave_exl901_are_analyzed(body, links):
    source = MODULE.format(body=_indent(body, 8))
    diagnostics = analyze_source(source, "m.py", Target.EXPORT)
    assert _codes(diagnostics) == {"EXL020"}
    (finding,) = diagnostics
    assert source.splitlines()[finding.line - 1].strip() == "if x.sum() > 0:"


def test_an_expression_beyond_the_budget_is_said_too_complex_where_it_is():
    depth = budget.MAX_EXPRESSION_DEPTH + 50
    source = MODULE.format(body=_indent("a = x" + "[0]" * depth + "\n", 8))
    (d,) = analyze_source(source, "m.py", Target.EXPORT)
    assert d.code == "EXL902" and d.severity.value == "warning"
    assert d.line == source.splitlines().index("        a = x" + "[0]" * depth) + 1
    assert f"nests {depth:,} levels deep (budget: {budget.MAX_EXPRESSION_DEPTH:,}" in d.message


def test_a_definition_beyond_the_budget_names_it():
    body = "".join(f"v{i} = a + {i}\n" for i in range(budget.MAX_DEFINITION_NODES // 5))
    source = MODULE.format(body=_indent(body, 8))
    (d,) = analyze_source(source, "m.py", Target.EXPORT)
    assert d.code == "EXL902" and d.line == 5  # class M
    assert "M has" in d.message and f"budget: {budget.MAX_DEFINITION_NODES:,} per class or function" in d.message


def test_a_sum_cpython_rejects_is_exl900_at_once():
    (d,) = analyze_source(big_sum(50_000), "s.py", Target.EXPORT)
    assert d.code == "EXL900" and "Python cannot compile this file either" in d.message


def test_form_feeds_in_indentation_parse_and_keep_their_columns():
    # Python reads a form feed in the indentation as resetting the count; libcst did not
    # ("no matching outer block" -> a false EXL900).
    source = (
        "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "\f        y = x * 2\n"
        "\f        if y.sum() > 0:\n"
        "            return y\n"
        "        return x\n"
    )
    assert parses(source)
    (d,) = analyze_source(source, "m.py", Target.EXPORT)
    assert (d.code, d.line) == ("EXL020", 7)
    line = source.split("\n")[6]  # not splitlines(): it splits at form feeds too
    assert line[d.column - 1 : d.end_column - 1] == "if y.sum() > 0"


@pytest.mark.parametrize("incremental", [False, True], ids=["cli", "editor"])
def test_what_libcst_cannot_read_is_said_precisely_not_a_syntax_error(incremental):
    source = MODULE.format(body=_indent("s = (\n" + "".join(f"    'p{i}'\n" for i in range(10_000)) + ")\n", 8))
    (d,) = analyze_source(source, "m.py", Target.EXPORT, incremental=incremental)
    assert d.code == "EXL902"
    assert "exportlint's parser (libcst) cannot read this valid file" in d.message


def test_a_chain_too_deep_for_python_is_exl900_from_the_cli_not_a_crash(tmp_path):
    # It used to kill the process with a segmentation fault (exit 139).
    deep = tmp_path / "deep.py"
    deep.write_text(MODULE.format(body=_indent("a = x" + ".T" * 10_000 + "\n", 8)))
    ok = tmp_path / "ok.py"
    ok.write_text(MODULE.format(body=""))
    proc = subprocess.run(
        [sys.executable, "-m", "exportlint", "--no-cache", "--format", "json", str(deep), str(ok)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 1, proc.stderr
    found = {(d["path"], d["code"]) for d in json.loads(proc.stdout)}
    assert found == {(str(deep), "EXL900"), (str(ok), "EXL020")}


@pytest.mark.parametrize("name, source, valid", corpus())
def test_the_quick_budget_check_never_passes_a_file_the_full_count_rejects(name, source, valid):
    # budget.clearly_within skips the full node count when spans show the file is within budget: it must
    # never say so of a file measure() puts over it (non-ASCII text included: columns count bytes)
    if not valid:
        return
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return
    if budget.over_budget(budget.measure(tree)) is not None:
        assert not budget.clearly_within(tree, source)


def test_the_quick_budget_check_passes_ordinary_code_and_stops_deep_expressions():
    import ast

    ordinary = "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):  # é\n        return x * 2\n"
    deep = "y = " + "~" * 700 + "x\n"
    assert budget.clearly_within(ast.parse(ordinary), ordinary)
    assert not budget.clearly_within(ast.parse(deep), deep)
