"""Generated Python (hypothesmith, from the grammar) as a file of its own and wrapped in an
``nn.Module.forward``: never EXL901, never an exception, EXL900 exactly when CPython rejects the
file, and the JSON output is valid.  CI runs a bounded number of examples;
``EXPORTLINT_HYPOTHESIS_EXAMPLES`` (set by benchmarks/bench_pathological.py --examples) runs more.
"""

from __future__ import annotations

import json
import os
import textwrap

import hypothesmith
from hypothesis import HealthCheck, given, settings

from exportlint.config import load_settings
from exportlint.reporters import RenderContext, get_renderer
from exportlint.runner import lint_text

from pathological import parses

EXAMPLES = int(os.environ.get("EXPORTLINT_HYPOTHESIS_EXAMPLES", "40"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, derandomize="EXPORTLINT_HYPOTHESIS_EXAMPLES" not in os.environ,
    suppress_health_check=list(HealthCheck),
)
WRAPPER = """\
import torch
import torch.nn as nn


class Generated(nn.Module):
    def forward(self, x):
{body}
        return x
"""
_LINT = load_settings(".", {"cache": False})
_JSON = get_renderer("json")


def _check(source: str) -> None:
    report = lint_text(source, "generated.py", _LINT)
    codes = {d.code for d in report.diagnostics}
    assert "EXL901" not in codes, [d.message for d in report.diagnostics]
    assert ("EXL900" in codes) == (not parses(source)), [d.message for d in report.diagnostics]
    rows = json.loads(_JSON([report], RenderContext()))
    assert [r["code"] for r in rows] == [d.code for d in report.diagnostics]


def wrap(source: str) -> str:
    return WRAPPER.format(body=textwrap.indent(source, " " * 8, lambda line: True) or "        pass\n")


@SETTINGS
@given(hypothesmith.from_grammar())
def test_generated_module(source):
    _check(source)


@SETTINGS
@given(hypothesmith.from_grammar())
def test_generated_code_in_a_forward(source):
    _check(wrap(source))


def test_the_wrapper_reaches_the_analysis():
    # The property above is only worth something if wrapped code is analysed: it is.
    report = lint_text(wrap("if x.sum() > 0:\n    x = x + 1\n"), "generated.py", _LINT)
    assert [d.code for d in report.diagnostics] == ["EXL020"]
