"""The dynamic pass builds what the linted files' export calls export (issue 8): no --model and no
factory needed in a project with an export script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "wrapper_and_loss"


def test_the_export_calls_root_is_built_with_the_calls_example_and_its_finding_confirmed(tmp_path):
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    summary = tmp_path / "summary.json"
    out = subprocess.run(
        [sys.executable, "-m", "exportlint", "--dynamic", "--no-cache", "--format", "json",
         "--summary-json", str(summary), "."],
        cwd=project, capture_output=True, text=True, timeout=600,
    )
    findings = json.loads(out.stdout)
    (branch,) = [d for d in findings if d["code"] == "EXL020"]
    assert branch["path"] == "model.py" and branch["dynamic"]["status"] == "confirmed"
    rows = json.loads(summary.read_text())
    assert {r["model"] for r in rows} == {"Classifier() in model.py"}  # not TrainWrapper, not the loss
    assert all("declared dims" in r["settings"] for r in rows)  # the call's Dim("batch")
