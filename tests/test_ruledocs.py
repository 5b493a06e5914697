"""The examples in rules/*.md are run: docs and behaviour cannot drift."""

from __future__ import annotations

import pytest

from exportlint.catalogue import CATALOGUE, doc_path
from exportlint.diagnostics import Target
from exportlint.config import Settings
from exportlint.runner import lint_text

from ruledoc import doc_files, examples

EXAMPLES = examples()


def _found(example) -> set[tuple[int, str]]:
    # lint_text: the analysis and the rules on the example's own export calls (EXL1xx)
    report = lint_text(example.source, f"{example.id}.py", Settings(target=Target(example.target)))
    return {(d.line, d.code) for d in report.diagnostics}


def test_every_rule_has_a_document():
    missing = [c for c, info in CATALOGUE.items() if not doc_path(info).exists()]
    assert not missing, f"rules without a document in rules/: {missing}"
    names = {p.name for p in doc_files()}
    assert names == {info.doc_filename for info in CATALOGUE.values()}


@pytest.mark.parametrize("code", [c for c in CATALOGUE if c < "EXL090" or "EXL100" <= c < "EXL900"])
def test_every_static_rule_has_bad_and_good_examples(code):
    kinds = {e.kind for e in EXAMPLES if e.code == code}
    assert kinds == {"bad", "good"}, f"{code}: needs an `## Example` and a `## Use instead` python block"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.kind == "bad"], ids=lambda e: e.id)
def test_bad_example_is_reported_on_the_marked_lines(example):
    expected = example.expected()
    assert any(code == example.code for _, code in expected), "a bad example marks at least one line"
    found = _found(example)
    assert {f for f in found if f[1] == example.code} == {e for e in expected if e[1] == example.code}
    # Every other finding on the example is documented by a marker too.
    assert found <= expected, f"unmarked findings: {sorted(found - expected)}"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.kind == "good"], ids=lambda e: e.id)
def test_fixed_example_is_clean_of_its_rule(example):
    found = _found(example)
    assert not [f for f in found if f[1] == example.code]
