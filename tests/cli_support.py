"""Shared helpers of the test_cli_* tests: a stand-in engine for the driver's plumbing.

The stand-in flags ``<expr>.item()`` as EXL001 and ``<expr>.tolist()`` as EXL002 wherever they
appear (with one provenance note), so that filtering, suppressions, reporters and the cache can be
tested independently of the real analysis.  Tests about what the analysis finds use the real engine.
"""

from __future__ import annotations

import re

import pytest

from exportlint import engine
from exportlint.catalogue import CATALOGUE
from exportlint.diagnostics import Diagnostic, Note, Target
from exportlint.files import split_lines

_PATTERNS = {
    "EXL001": re.compile(r"\w[\w.()]*\.item\(\)"),
    "EXL002": re.compile(r"\w[\w.()]*\.tolist\(\)"),
}

MODEL = """\
import torch


class M(torch.nn.Module):
    def forward(self, x):
        n = x.sum().item()
        return x[:n]
"""


def fake_findings(text: str, path: str, target: Target = Target.EXPORT) -> list[Diagnostic]:
    out = []
    for number, line in enumerate(split_lines(text), start=1):
        for code, pattern in _PATTERNS.items():
            for m in pattern.finditer(line):
                rule = CATALOGUE[code]
                out.append(Diagnostic(
                    path=path, line=number, column=m.start() + 1, end_line=number,
                    end_column=m.end() + 1, code=code, name=rule.name,
                    severity=rule.severity(target), target=target,
                    message=f"`{m.group(0)}` on a tensor value", hint="keep it a tensor",
                    provenance=[Note(number, m.start() + 1, f"`{m.group(0)}` is a tensor value")],
                    url=rule.url,
                ))
    return out


class FakeEngine:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, text, path, target=Target.EXPORT, project=None, incremental=False, context=None):
        self.calls.append(path)
        return fake_findings(text, path, target)


@pytest.fixture
def fake_engine(monkeypatch) -> FakeEngine:
    fake = FakeEngine()
    monkeypatch.setattr(engine, "analyze_source", fake)
    return fake


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Every test gets its own cache directory (never the repository's)."""
    monkeypatch.setenv("EXPORTLINT_CACHE_DIR", str(tmp_path / "_cache"))
