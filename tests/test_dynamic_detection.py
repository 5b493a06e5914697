"""The dynamic pass on a Faster R-CNN-like detector: its verdicts match what torch.export does
after each export blocker is fixed in turn.

``fixtures/faster_rcnn_like.py`` has three blockers, each hiding the next from torch.export.
Version k of the model has the first k fixed.  The dynamic pass judges every version (one
worker), and torch.export is run on every version directly, in a separate process, as the
ground truth: where it fails, that finding is "confirmed"; the findings at the blockers it only
meets once earlier ones are fixed are never "passes" in an earlier version.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from exportlint.config import load_settings  # noqa: E402
from exportlint.diagnostics import Diagnostic, Severity  # noqa: E402
from exportlint.dynamic import DynamicOptions, run_dynamic  # noqa: E402
from exportlint.runner import lint_paths  # noqa: E402

pytestmark = pytest.mark.dynamic

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "faster_rcnn_like.py"
# (the blocker's line, the fix: (text, replacement)), in the order torch.export meets them
BLOCKERS = [
    ("for x0, y0, x1, y1 in (proposals / self.rpn.stride).tolist():",
     ("pooled = self.roi_pool(feats, proposals)",
      "pooled = roi_align(feats, proposals / self.rpn.stride, self.pool)")),
    ("if boxes.numel() == 0:",
     ("    if boxes.numel() == 0:\n"
      "        return torch.empty((0,), dtype=torch.int64, device=boxes.device)\n"
      "    offsets = idxs.to(boxes) * (boxes.max() + 1)\n",
      "    max_coordinate = torch.cat([boxes.flatten(), boxes.new_zeros(1)]).max()  # also when empty\n"
      "    offsets = idxs.to(boxes) * (max_coordinate + 1)\n")),
    ("if keep.numel() > self.detections_per_img:",
     ("        if keep.numel() > self.detections_per_img:\n"
      "            keep = keep[: self.detections_per_img]\n",
      "        keep = keep[: self.detections_per_img]\n")),
]
# torch.export run directly: for each file, the innermost line of that file in the failure's
# traceback (non-strict export runs the user's code), or "ok" and whether the program runs.
GROUND_TRUTH = """
import importlib.util, json, sys, traceback
import torch
out = {}
for i, path in enumerate(sys.argv[1:]):
    spec = importlib.util.spec_from_file_location(f"version_{i}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        ep = torch.export.export(module.build(), module.example_inputs(), strict=False)
        ep.module()(*module.example_inputs())
        out[path] = "ok"
    except Exception as exc:
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        out[path] = lines[-1] if lines else None
print(json.dumps(out))
"""


def line_of(path: Path, needle: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if needle in text)


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """One entry per version: its path, the dynamic pass's report and rows, torch.export's answer."""
    root = tmp_path_factory.mktemp("ladder")
    source = FIXTURE.read_text()
    paths = []
    for k in range(len(BLOCKERS) + 1):
        text = source
        for _, (old, new) in BLOCKERS[:k]:
            assert old in text, old
            text = text.replace(old, new)
        paths.append(root / f"faster_rcnn_v{k}.py")
        paths[-1].write_text(text)
    reports = lint_paths([str(p) for p in paths], load_settings(root, {}))
    rows = run_dynamic(reports, DynamicOptions(config={"exporters": ["torch.export"]}), progress=False)
    truth = json.loads(subprocess.run([sys.executable, "-c", GROUND_TRUTH, *map(str, paths)],
                                      capture_output=True, text=True, check=True).stdout)
    by_name = {Path(r.path).name: r for r in reports}
    return [{"path": p, "report": by_name[p.name], "truth": truth[str(p)],
             "rows": [r for r in rows if Path(r["path"]).name == p.name]} for p in paths]


def findings_at(version: dict, needle: str) -> list[Diagnostic]:
    line = line_of(version["path"], needle)
    found = [d for d in version["report"].diagnostics if d.line == line]
    assert found, f"no finding at {version['path'].name}:{line} ({needle})"
    return found


def test_torch_export_meets_the_blockers_in_turn(ladder: list[dict]) -> None:
    """The fixture is what it claims: each version fails at the next blocker, the last exports."""
    for k, version in enumerate(ladder[:-1]):
        assert version["truth"] == line_of(version["path"], BLOCKERS[k][0]), version["path"].name
    assert ladder[-1]["truth"] == "ok"


def test_the_first_blocker_of_each_version_is_confirmed(ladder: list[dict]) -> None:
    for k, version in enumerate(ladder[:-1]):
        assert [r["status"] for r in version["rows"]] == ["failed"]
        for d in findings_at(version, BLOCKERS[k][0]):
            assert d.dynamic["status"] == "confirmed", (version["path"].name, d.line, d.dynamic)
            assert "GuardOnDataDependentSymNode" in d.dynamic["message"]


def test_blockers_behind_the_first_failure_are_not_verifiable(ladder: list[dict]) -> None:
    """The bug: the `if` in batched_nms also runs before the first failure (for the proposals,
    whose size is static), so it used to be "passes" and lowered to a warning."""
    for k, version in enumerate(ladder[:-1]):
        first = line_of(version["path"], BLOCKERS[k][0])
        for needle, _ in BLOCKERS[k + 1:]:
            for d in findings_at(version, needle):
                assert d.dynamic["status"] == "not-verifiable", (version["path"].name, d.line, d.dynamic)
                assert d.dynamic["message"].startswith(
                    f"after the first failure: torch.export failed at line {first}")
                assert d.severity is Severity.ERROR


def test_no_verdict_contradicts_torch_export_on_a_later_version(ladder: list[dict]) -> None:
    """Whatever "passes" in one version must not be where torch.export fails in a later one."""
    later_failures = {BLOCKERS[k][0] for k in range(len(BLOCKERS))}
    for k, version in enumerate(ladder):
        lines = version["path"].read_text().splitlines()
        for d in version["report"].diagnostics:
            if d.dynamic["status"] == "passes":
                assert not any(n in lines[d.line - 1] for n in later_failures), (k, d.line, d.dynamic)


def test_the_fixed_model_exports_and_matches_eager(ladder: list[dict]) -> None:
    fixed = ladder[-1]
    assert [(r["exporter"], r["status"]) for r in fixed["rows"]] == [("torch.export", "ok")]
    assert fixed["rows"][0]["max_abs_diff"] is not None
    statuses = {d.dynamic["status"] for d in fixed["report"].diagnostics}
    assert statuses <= {"passes"}, statuses
    assert not any(d.code in ("EXL090", "EXL091", "EXL092") for d in fixed["report"].diagnostics)

