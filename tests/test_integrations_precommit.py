"""The pre-commit hook with the real ``pre-commit`` tool (``pre-commit try-repo`` this repository).

try-repo installs exportlint from this repository's HEAD (plus uncommitted changes to tracked
files) into pre-commit's own virtualenv, from PyPI for libcst/rich: it needs the network, once per
test session (the environment is shared through one PRE_COMMIT_HOME).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

BAD = '''\
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x):
        if x.sum().item() > 0:
            return x * 2
        return x
'''
FIXED = '''\
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x):
        return torch.where(x.sum() > 0, x * 2, x)
'''


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs this repository as a git checkout and git")
    return tmp_path_factory.mktemp("pre-commit-home")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    git(root, "add", ".")
    return root


def try_repo(root: Path, home: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    env.pop("EXPORTLINT_CACHE_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "exportlint", "--all-files"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )


def test_hook_blocks_a_data_dependent_item_and_passes_after_the_fix(tmp_path: Path, pre_commit_home: Path) -> None:
    root = project(tmp_path, {"model.py": BAD, "README.md": "demo\n"})
    failed = try_repo(root, pre_commit_home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "exportlint" in failed.stdout and "Failed" in failed.stdout
    assert "model.py:7:9: EXL020" in failed.stdout
    assert "model.py:7:12: EXL001" in failed.stdout

    (root / "model.py").write_text(FIXED, encoding="utf-8")
    git(root, "add", "model.py")
    passed = try_repo(root, pre_commit_home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout and "EXL0" not in passed.stdout


def test_hook_passes_when_no_python_file_matches(tmp_path: Path, pre_commit_home: Path) -> None:
    # No tracked Python file: the hook must not run at all (exportlint with no path would lint
    # ".", and find the untracked bad model next to the README).
    root = project(tmp_path, {"README.md": "demo\n", "notes.txt": BAD})
    (root / "scratch.py").write_text(BAD, encoding="utf-8")
    result = try_repo(root, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(no files to check)" in result.stdout and "Skipped" in result.stdout
