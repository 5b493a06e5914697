"""The ``exportlint-fix`` pre-commit hook with the real ``pre-commit try-repo`` (see
test_integrations_precommit.py: it needs the network once per session)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_integrations_precommit import REPO, git, pre_commit_home, project  # noqa: F401

pytestmark = pytest.mark.slow

BAD = '''\
import torch
import torch.nn.functional as F
from torch import nn


class Half(nn.Module):
    def forward(self, x):
        h, w = x.shape[-2:]
        return F.interpolate(x, size=(int(h / 2), int(w / 2)))
'''


def try_fix_hook(root: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("EXPORTLINT_CACHE_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "exportlint-fix", "--all-files"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )


def test_fix_hook_fixes_the_file_fails_the_run_then_passes(tmp_path: Path, pre_commit_home: Path) -> None:
    root = project(tmp_path, {"model.py": BAD})
    first = try_fix_hook(root, pre_commit_home)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert (root / "model.py").read_text() == BAD.replace("int(h / 2)", "h // 2").replace("int(w / 2)", "w // 2")
    git(root, "add", "model.py")
    second = try_fix_hook(root, pre_commit_home)
    assert second.returncode == 0, second.stdout + second.stderr
