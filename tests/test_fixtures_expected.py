"""The bundled fixtures give exactly their expected diagnostics (fixtures/expected/*.txt).

Expected files list one finding per line, ``LINE:COL CODE`` (or ``relative/path.py:LINE:COL CODE``
for a package fixture), written by hand from the rule definitions, not generated.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from exportlint.analysis.project import Project
from exportlint.config import Settings
from exportlint.diagnostics import Target
from exportlint.engine import analyze_source
from exportlint.runner import export_context, site_diagnostics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_LINE = re.compile(r"^(?:(?P<path>\S+\.py):)?(?P<line>\d+):(?P<col>\d+)\s+(?P<code>EXL\d{3})\s*$")


def _all_findings() -> dict[str, set[tuple[int, int, str]]]:
    """As `exportlint fixtures/` sees them: one project, one export context (the export scripts of
    fixtures/projects/), the analysis of every file plus the rules on the export calls."""
    files = sorted(p for p in FIXTURES.rglob("*.py"))
    project = Project([str(p) for p in files])
    texts = {str(p): p.read_text(encoding="utf-8") for p in files}
    context = export_context(texts, Settings(), project)
    found: dict[str, set[tuple[int, int, str]]] = {}
    diagnostics = [d for path, text in texts.items() for d in analyze_source(text, path, Target.EXPORT, project, context=context)]
    for d in diagnostics + [d for ds in site_diagnostics(context, Settings()).values() for d in ds]:
        found.setdefault(os.path.abspath(d.path), set()).add((d.line, d.column, d.code))
    return found


@pytest.fixture(scope="module")
def findings() -> dict[str, set[tuple[int, int, str]]]:
    return _all_findings()


def _expected(snapshot: Path) -> dict[str, set[tuple[int, int, str]]]:
    out: dict[str, set[tuple[int, int, str]]] = {}
    default = FIXTURES / (snapshot.stem + ".py")
    for raw in snapshot.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _LINE.match(line)
        assert m, f"{snapshot.name}: cannot read {raw!r}"
        path = FIXTURES / m.group("path") if m.group("path") else default
        out.setdefault(os.path.abspath(path), set()).add((int(m.group("line")), int(m.group("col")), m.group("code")))
    return out


SNAPSHOTS = sorted((FIXTURES / "expected").glob("*.txt"))


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.stem)
def test_fixture_matches_expected(snapshot: Path, findings):
    expected = _expected(snapshot)
    covered = {p for p in findings if p.startswith(str(FIXTURES / snapshot.stem))} | set(expected)
    for path in sorted(covered):
        got = findings.get(path, set())
        want = expected.get(path, set())
        assert sorted(got) == sorted(want), f"{os.path.relpath(path, FIXTURES)}: missing {sorted(want - got)}, unexpected {sorted(got - want)}"


def test_every_fixture_has_a_snapshot():
    models = {p.stem for p in FIXTURES.glob("*.py")} | {p.name for p in FIXTURES.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert models <= {p.stem for p in SNAPSHOTS}
