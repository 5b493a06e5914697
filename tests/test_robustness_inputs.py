"""One bad input must not abort the run (issue 10): each is a per-file diagnostic (the other
files are linted) or a one-line usage error, never an internal error or a hang.  The real CLI in
a subprocess, on real files, FIFOs, devices and closed descriptors."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from exportlint.files import MAX_FILE_BYTES

MODEL = """\
import torch


class M(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x
"""
# Generous: only there so that a regression fails instead of hanging the suite.
NO_HANG = 120


def cli(*args: str, cwd: Path, stdin=subprocess.DEVNULL, shell: str | None = None, **kw) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "exportlint", "--no-cache", *args]
    if shell is not None:  # redirections the test needs (closed or full descriptors)
        command = ["sh", "-c", " ".join(f"'{c}'" for c in command) + " " + shell]
    return subprocess.run(command, cwd=cwd, stdin=stdin, capture_output=True, timeout=NO_HANG, **kw)


def by_path(proc: subprocess.CompletedProcess) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for d in json.loads(proc.stdout):
        out.setdefault(d["path"], []).append((d["code"], d["message"]))
    return out


def one_line_error(proc: subprocess.CompletedProcess, words: str) -> None:
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert err.startswith("exportlint: error: ") and err.count("\n") == 1, err
    assert words in err and "internal error" not in err and "Traceback" not in err


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "ok.py").write_text(MODEL)
    return tmp_path


@pytest.mark.parametrize("codec, words", [
    ("rot13", "encoding 'rot13' in the coding declaration cannot decode Python source"),
    ("undefined", "encoding 'undefined' in the coding declaration cannot decode Python source"),
])
def test_a_coding_cookie_naming_an_unusable_codec_is_exl900_on_that_file(tree, codec, words):
    (tree / "odd.py").write_text(f"# coding: {codec}\nx = 1\n")
    proc = cli("--format", "json", "odd.py", "ok.py", cwd=tree)
    assert proc.returncode == 1, proc.stderr
    assert by_path(proc) == {"odd.py": [("EXL900", words)], "ok.py": [("EXL020", by_path(proc)["ok.py"][0][1])]}


def test_a_symlink_loop_named_on_the_command_line_is_exl900(tree):
    os.symlink("b.py", tree / "a.py")
    os.symlink("a.py", tree / "b.py")
    proc = cli("--format", "json", "a.py", "ok.py", cwd=tree)
    found = by_path(proc)
    assert found["a.py"] == [("EXL900", "cannot read file: Too many levels of symbolic links")]
    assert [c for c, _ in found["ok.py"]] == ["EXL020"]


def test_a_fifo_named_as_a_path_is_exl900_not_a_hang(tree):
    os.mkfifo(tree / "pipe.py")
    proc = cli("--format", "json", "pipe.py", "ok.py", cwd=tree)
    found = by_path(proc)
    assert found["pipe.py"] == [("EXL900", "not a regular file (a FIFO, socket or device); not read")]
    assert [c for c, _ in found["ok.py"]] == ["EXL020"]


def test_an_invalid_exclude_glob_is_a_configuration_error(tree):
    (tree / "pyproject.toml").write_text('[tool.exportlint]\nexclude = ["[z-a]"]\n')
    one_line_error(cli(".", cwd=tree), "exclude: invalid pattern '[z-a]': bad character range z-a")


def test_an_invalid_per_file_ignores_glob_is_a_configuration_error(tree):
    (tree / "pyproject.toml").write_text('[tool.exportlint.per-file-ignores]\n"[z-a].py" = ["EXL020"]\n')
    one_line_error(cli(".", cwd=tree), "invalid pattern '[z-a].py'")


def test_a_deeply_nested_toml_value_is_a_configuration_error(tree):
    (tree / "pyproject.toml").write_text("[tool.exportlint]\nselect = " + "[" * 5000 + "]" * 5000 + "\n")
    one_line_error(cli(".", cwd=tree), "invalid TOML: values nested too deeply")


@pytest.mark.parametrize("config", ["fifo", "/dev/zero"])
def test_a_config_that_is_not_a_regular_file_is_refused_not_read(tree, config):
    if config == "fifo":
        os.mkfifo(tree / "fifo.toml")
        config = "fifo.toml"
    one_line_error(cli("--config", config, "ok.py", cwd=tree), f"{config}: not a regular file")


def _discover_as_nobody(directory: str, queue) -> None:
    from exportlint.files import discover

    if os.geteuid() == 0:  # root reads everything: drop to nobody for this child only
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    found = discover([directory])
    queue.put((found.files, found.unreadable))


def test_an_unreadable_subdirectory_is_reported_not_skipped_silently():
    # Not under pytest's tmp_path: its parents are private to the user running the suite.
    top = Path(tempfile.mkdtemp(prefix="exportlint-unreadable-"))
    (top / "sub").mkdir()
    (top / "ok.py").write_text(MODEL)
    (top / "sub" / "hidden.py").write_text(MODEL)
    os.chmod(top, 0o755)
    os.chmod(top / "ok.py", 0o644)
    os.chmod(top / "sub", 0)
    try:
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=_discover_as_nobody, args=(str(top), queue))
        child.start()
        files, unreadable = queue.get(timeout=NO_HANG)
        child.join()
    finally:
        os.chmod(top / "sub", 0o755)
        shutil.rmtree(top)
    assert files == [str(top / "ok.py")]
    assert unreadable == {str(top / "sub"): "Permission denied"}


def test_an_unreadable_directory_becomes_an_exl900_in_every_report(tree, monkeypatch):
    from exportlint import files
    from exportlint.config import load_settings
    from exportlint.runner import run

    locked = tree / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path):  # what an unprivileged user gets (the suite may run as root)
        if os.path.abspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", scandir)
    result = run([str(tree)], load_settings(tree, {"cache": False}))
    reports = {r.path: [(d.code, d.message) for d in r.diagnostics] for r in result.reports}
    assert reports[str(locked)] == [
        ("EXL900", "cannot list this directory: Permission denied; the files in it were not linted")
    ]
    assert [c for c, _ in reports[str(tree / "ok.py")]] == ["EXL020"]


def test_closed_stdout_is_a_usage_error(tree):
    one_line_error(cli("ok.py", cwd=tree, shell=">&-"), "standard output is closed; use --output-file")


def test_full_stdout_is_a_usage_error(tree):
    one_line_error(cli("ok.py", cwd=tree, shell=">/dev/full"), "cannot write to standard output: No space left on device")


def test_closed_stdin_is_a_usage_error(tree):
    one_line_error(cli("-", cwd=tree, shell="<&-"), "standard input is closed")


def test_oversized_stdin_is_exl900_without_reading_it_all(tree):
    data = MODEL.encode() + b"y = 1\n" * ((MAX_FILE_BYTES // 6) + 10)
    proc = cli("--format", "json", "-", cwd=tree, stdin=None, input=data)
    ((code, message),) = by_path(proc)["-"]
    assert code == "EXL900" and message.startswith("file too large to analyze (over 10.5 MB > 10.5 MB limit)")


def test_a_too_long_path_is_reported_and_the_rest_linted(tree):
    proc = cli("--format", "json", "a" * 5000, "ok.py", cwd=tree)
    assert proc.returncode == 2
    assert proc.stderr.decode() == f"exportlint: error: path does not exist: {'a' * 5000}\n"
    assert [c for c, _ in by_path(proc)["ok.py"]] == ["EXL020"]


def test_a_deleted_working_directory_is_a_usage_error(tree):
    gone = tree / "gone"
    gone.mkdir()
    proc = subprocess.run(
        ["sh", "-c", f"cd '{gone}' && rmdir '{gone}' && exec '{sys.executable}' -m exportlint '{tree / 'ok.py'}'"],
        capture_output=True, timeout=NO_HANG, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    one_line_error(proc, "the current working directory no longer exists")


def test_lsp_log_file_in_a_missing_directory_is_a_usage_error(tree):
    proc = subprocess.run(
        [sys.executable, "-m", "exportlint", "lsp", "--log-file", str(tree / "missing" / "log.txt")],
        cwd=tree, stdin=subprocess.DEVNULL, capture_output=True, timeout=NO_HANG,
    )
    one_line_error(proc, "lsp: No such file or directory")


@pytest.mark.parametrize("fmt", ["text", "json", "json-lines", "sarif", "github", "lsp"])
def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(tree, fmt):
    name = os.fsdecode(b"bad\xff.py")
    (tree / "pkg").mkdir()
    (tree / "pkg" / name).write_text(MODEL)
    proc = cli("--format", fmt, "pkg", cwd=tree)
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout.decode("utf-8")  # valid UTF-8 whatever the file names
    if fmt == "json":
        assert json.loads(text)[0]["path"] == os.path.join("pkg", name)  # \udcff: Python's own spelling
    elif fmt == "sarif":
        assert "pkg/bad%FF.py" in text
    elif fmt == "lsp":
        assert "bad%FF.py" in text
    else:
        assert "pkg/bad\\udcff.py" in text
