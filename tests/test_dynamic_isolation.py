"""Dynamic pass on bad input: every problem is one clear diagnostic, never a traceback of ours."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from exportlint.diagnostics import Diagnostic, FileReport, Note, Severity, Target  # noqa: E402
from exportlint.dynamic import DynamicOptions, run_dynamic  # noqa: E402
from exportlint.dynamic.verdicts import SETUP_CODE  # noqa: E402

pytestmark = pytest.mark.dynamic

HEAD = "import torch\nfrom torch import nn\n\n\n"
LINEAR = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)
"""
BAD = {
    "import_error.py": HEAD + "import no_such_module_here\n\n\n" + LINEAR,
    "needs_args.py": HEAD + """\
class Net(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        return self.lin(x)
""",
    "two_models.py": HEAD + LINEAR + """

class Other(nn.Module):
    def forward(self, x):
        return x + 1
""",
    "wrong_arity.py": HEAD + LINEAR + """

def example_inputs():
    return (torch.randn(2, 4), torch.randn(2, 4))
""",
    "oom.py": HEAD + """\
class Net(nn.Module):
    def forward(self, x):
        big = torch.ones(1024 ** 3, dtype=torch.float32)
        return x + big[0]


def example_inputs():
    return (torch.randn(2, 4),)
""",
    "aborts.py": HEAD + """\
import os


class Net(nn.Module):
    def forward(self, x):
        os.abort()
        return x


def example_inputs():
    return (torch.randn(2, 4),)
""",
    "hangs.py": HEAD + """\
import os
import subprocess
import sys
import time


class Net(nn.Module):
    def forward(self, x):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 start_new_session=True)
        with open(os.path.join(os.path.dirname(__file__), "hang_child.pid"), "w") as fh:
            fh.write(str(child.pid))
        time.sleep(600)
        return x


def example_inputs():
    return (torch.randn(2, 4),)
""",
}


def line_of(name: str, text: str) -> int:
    return next(i for i, ln in enumerate(BAD[name].splitlines(), 1) if text in ln)


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, FileReport], dict[str, dict]]:
    root = tmp_path_factory.mktemp("bad")
    reports = []
    for name, text in BAD.items():
        (root / name).write_text(text)
        reports.append(FileReport(str(root / name), []))
    # A static finding in the hanging forward, to see it marked.
    hang_line = line_of("hangs.py", "        time.sleep(600)")
    reports[-1].diagnostics.append(Diagnostic(
        str(root / "hangs.py"), hang_line, 9, hang_line, 24, "EXL001", "tensor-item",
        Severity.WARNING, Target.EXPORT, "msg", "hint", [Note(hang_line - 1, 5, "from")]))
    options = DynamicOptions(timeout=10, memory="3G", config={"exporters": ["torch.export"]})
    rows = run_dynamic(reports, options, progress=False)
    by_row = {}
    for r in rows:
        by_row.setdefault(Path(r["path"]).name, r)
    return {Path(r.path).name: r for r in reports}, by_row


def only(report: FileReport) -> Diagnostic:
    assert len(report.diagnostics) == 1, [(d.code, d.message) for d in report.diagnostics]
    return report.diagnostics[0]


def test_import_error(bad_run) -> None:
    reports, rows = bad_run
    d = only(reports["import_error.py"])
    assert d.code == SETUP_CODE and d.line == line_of("import_error.py", "import no_such")
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in d.message
    assert d.dynamic["status"] == "not-verifiable"
    assert rows["import_error.py"]["phase"] == "import"


def test_constructor_needing_arguments_says_what_to_add(bad_run) -> None:
    d = only(bad_run[0]["needs_args.py"])
    assert "needs arguments" in d.message and "def build(): return Net(...)" in d.message
    assert "(width, depth)" in d.message


def test_ambiguous_model_says_what_to_add(bad_run) -> None:
    d = only(bad_run[0]["two_models.py"])
    assert "several nn.Module classes (Net, Other)" in d.message and "--model" in d.message


def test_inputs_not_matching_forward(bad_run) -> None:
    d = only(bad_run[0]["wrong_arity.py"])
    assert "do not match forward(x)" in d.message and "example_inputs()" in d.message


def test_memory_cap_turns_a_big_allocation_into_a_diagnostic(bad_run) -> None:
    d = only(bad_run[0]["oom.py"])
    assert "ran out of memory" in d.message
    assert d.line == line_of("oom.py", "torch.ones(1024")


def test_crash_in_the_worker(bad_run) -> None:
    reports, rows = bad_run
    d = only(reports["aborts.py"])
    assert "the worker process died (signal SIGABRT)" in d.message
    assert rows["aborts.py"]["status"] == "error" and rows["aborts.py"]["phase"] == "crashed"


def test_hang_times_out_and_keeps_the_static_finding(bad_run) -> None:
    reports, rows = bad_run
    (static,) = [d for d in reports["hangs.py"].diagnostics if d.code == "EXL001"]
    assert static.dynamic["status"] == "not-verifiable"
    assert "did not finish within 10 s" in static.dynamic["message"]
    assert [d.code for d in reports["hangs.py"].diagnostics if d is not static] == [SETUP_CODE]
    assert rows["hangs.py"]["phase"] == "timeout"
    pid_file = Path(reports["hangs.py"].path).with_name("hang_child.pid")
    assert wait_dead([int(pid_file.read_text())]) == []  # started in a new session, killed too


def test_bad_cli_input_spec_is_a_clear_model_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "net.py"
    path.write_text(HEAD + LINEAR)
    report = FileReport(str(path), [])
    options = DynamicOptions(model=f"{path}:Net", inputs=["2x3"], timeout=60,
                             config={"exporters": ["torch.export"]})
    rows = run_dynamic([report], options, progress=False)
    d = only(report)
    assert "fails in eager mode on the example input (--input)" in d.message
    assert "mat1 and mat2 shapes cannot be multiplied" in d.message
    assert d.line == line_of_text(HEAD + LINEAR, "return self.lin(x)")
    assert rows[0]["exporter"] == "setup"


def line_of_text(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


# -- processes and files -----------------------------------------------------------------------

SPAWNER = HEAD + """\
import os
import subprocess
import sys
import time

PIDS = {pids!r}


class Net(nn.Module):
    def forward(self, x):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 start_new_session=True)  # escapes the worker's process group
        with open(PIDS, "a") as fh:
            fh.write(f"{{os.getpid()}} {{child.pid}}\\n")
        with open("made_by_model.txt", "w") as fh:  # relative: the working directory
            fh.write("hello")
        time.sleep({sleep})
        return x + 1


def example_inputs():
    return (torch.randn(2, 4),)
"""


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def spawned(pids_file: Path) -> list[int]:
    return [int(p) for line in pids_file.read_text().splitlines() for p in line.split()]


def wait_dead(pids: list[int], seconds: float = 10.0) -> list[int]:
    import time

    end = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_what_the_model_starts_or_writes_does_not_outlive_the_run(tmp_path: Path, monkeypatch) -> None:
    pids_file = tmp_path / "pids.txt"
    model = tmp_path / "spawner.py"
    model.write_text(SPAWNER.format(pids=str(pids_file), sleep=0))
    user_cwd = tmp_path / "project"
    user_cwd.mkdir()
    monkeypatch.chdir(user_cwd)
    rows = run_dynamic([FileReport(str(model), [])], DynamicOptions(
        timeout=120, config={"exporters": ["torch.export"]}), progress=False)
    assert [r["status"] for r in rows] == ["ok"]
    pids = spawned(pids_file)
    assert len(pids) >= 4  # the worker and one child per forward call (eager twice, export, run)
    assert wait_dead(pids) == []
    assert list(user_cwd.iterdir()) == []  # the model ran in a scratch directory
    assert rows[0]["wrote"] == ["made_by_model.txt"]


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("signum, code", [(15, -15), (2, 130)])
def test_a_signal_to_the_cli_kills_the_worker_and_removes_its_files(tmp_path: Path, signum: int,
                                                                   code: int) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    pids_file = tmp_path / "pids.txt"
    (tmp_path / "hang.py").write_text(SPAWNER.format(pids=str(pids_file), sleep=300))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "exportlint", "--dynamic", "hang.py"], cwd=tmp_path,
                            env={**os.environ, "TMPDIR": str(scratch)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 120
        while not (pids_file.exists() and pids_file.read_text().endswith("\n")):
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            time.sleep(0.2)
        assert [p.name for p in scratch.iterdir()][0].startswith("exportlint-dynamic-")
        proc.send_signal(signal.Signals(signum))
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert wait_dead(spawned(pids_file)) == []
    assert list(scratch.iterdir()) == []
