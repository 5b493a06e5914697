"""The driver (exportlint.runner): reading, filtering, regrouping, parallel runs, crashes, the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from cli_support import MODEL, _private_cache, fake_engine, fake_findings  # noqa: F401

from exportlint import engine, files
from exportlint.config import load_settings
from exportlint.diagnostics import Severity, Target
from exportlint.cache import direct_dependencies, file_keys
from exportlint.runner import lint_bytes, lint_paths, lint_text, run


def settings(tmp_path, **overrides):
    return load_settings(tmp_path, overrides)


def codes(reports):
    return {r.path: [d.code for d in r.diagnostics] for r in reports}


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_reports_per_file_with_lines_only_when_there_is_something(tmp_path, fake_engine):
    bad = write(tmp_path, "bad.py", MODEL)
    ok = write(tmp_path, "ok.py", "x = 1\n")
    reports = lint_paths([str(tmp_path)], settings(tmp_path, cache=False))
    assert codes(reports) == {bad: ["EXL001"], ok: []}
    assert reports[0].lines == MODEL.splitlines() and reports[1].lines is None


def test_select_ignore_and_severity_override(tmp_path, fake_engine):
    path = write(tmp_path, "m.py", "a = t.item()\nb = t.tolist()\n")
    assert codes(lint_paths([path], settings(tmp_path, select=["EXL002"]))) == {path: ["EXL002"]}
    assert codes(lint_paths([path], settings(tmp_path, ignore="tensor-item"))) == {path: ["EXL002"]}
    assert codes(lint_paths([path], settings(tmp_path, select="EXL00", ignore="EXL0"))) == {path: []}
    (report,) = lint_paths([path], settings(tmp_path, severity={"EXL001": "info"}))
    assert [d.severity for d in report.diagnostics] == [Severity.INFO, Severity.ERROR]


def test_target_switch_changes_default_severity(tmp_path, fake_engine):
    path = write(tmp_path, "m.py", "a = t.item()\n")
    (export,) = lint_paths([path], settings(tmp_path, target="export"))
    (trace,) = lint_paths([path], settings(tmp_path, target="trace"))
    assert export.diagnostics[0].severity is Severity.WARNING
    assert trace.diagnostics[0].severity is Severity.ERROR


def test_per_file_ignores(tmp_path, fake_engine):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.exportlint.per-file-ignores]\n"tests/**" = ["EXL001"]\n')
    model = write(tmp_path, "model.py", "a = t.item()\n")
    test = write(tmp_path, "tests/test_m.py", "a = t.item()\nb = t.tolist()\n")
    reports = lint_paths([str(tmp_path)], load_settings(tmp_path))
    assert codes(reports) == {model: ["EXL001"], test: ["EXL002"]}


def test_diagnostics_in_other_files_are_regrouped_and_deduplicated(tmp_path, monkeypatch):
    helper = write(tmp_path, "helper.py", "def f(t):\n    return t.item()\n")
    a = write(tmp_path, "a.py", "from helper import f\n")
    b = write(tmp_path, "b.py", "from helper import f\n")

    def analyze(text, path, target, project=None, context=None):
        if path == helper:
            return []
        # Both users reach the helper; the engine names it by its absolute path.
        return fake_findings(open(helper).read(), os.path.abspath(helper), target)

    monkeypatch.setattr(engine, "analyze_source", analyze)
    reports = lint_paths([str(tmp_path)], settings(tmp_path, cache=False))
    assert codes(reports) == {a: [], b: [], helper: ["EXL001"]}
    assert reports[2].lines == ["def f(t):", "    return t.item()"]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_one_finding_from_several_analyses_keeps_the_strongest_with_fewest_conditions(tmp_path, monkeypatch, order):
    # A helper reached from two files' models: from one it runs only when an optional input is given
    # (a note in the hint), from the other unconditionally. The note must not depend on which file
    # was analysed first (it did between --jobs 1 and --jobs 2 on the transformers corpus).
    helper = write(tmp_path, "helper.py", "def f(t):\n    return t.item()\n")
    users = [write(tmp_path, f"{name}.py", "from helper import f\n") for name in ("a", "b")]
    noted = {users[order[0]]: "; this code runs only when the optional input `mask` is given", users[order[1]]: ""}

    def analyze(text, path, target, project=None, context=None):
        if path == helper:
            return []
        found = fake_findings(open(helper).read(), os.path.abspath(helper), target)
        for d in found:
            d.hint += noted[path]
        return found

    monkeypatch.setattr(engine, "analyze_source", analyze)
    reports = {r.path: r for r in lint_paths([str(tmp_path)], settings(tmp_path, cache=False, jobs=1))}
    (d,) = reports[helper].diagnostics
    assert "optional input" not in d.hint

def test_unreadable_inputs_become_exl900_and_the_run_goes_on(tmp_path, fake_engine, monkeypatch):
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 10_000)
    good = write(tmp_path, "good.py", MODEL)
    (tmp_path / "latin.py").write_bytes(b"s = '\xe9'\n")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02")
    write(tmp_path, "huge.py", "x = 1\n" * 5000)
    write(tmp_path, "empty.py", "")
    os.symlink(tmp_path / "gone.py", tmp_path / "dangling.py")
    os.symlink(tmp_path / "loop2.py", tmp_path / "loop1.py")
    os.symlink(tmp_path / "loop1.py", tmp_path / "loop2.py")
    reports = {os.path.basename(r.path): r for r in lint_paths([str(tmp_path)], settings(tmp_path))}
    expected = {
        "latin.py": "cannot decode as utf-8: byte 0xe9 at line 1",
        "blob.py": "binary file",
        "huge.py": "file too large",
        "dangling.py": "broken symbolic link",
        "loop1.py": "symbolic links",
        "loop2.py": "symbolic links",
    }
    for name, words in expected.items():
        (d,) = reports[name].diagnostics
        assert d.code == "EXL900" and words in d.message and d.severity is Severity.ERROR
    assert reports["empty.py"].diagnostics == []
    assert [d.code for d in reports["good.py"].diagnostics] == ["EXL001"]
    assert sorted(fake_engine.calls) == sorted([good, str(tmp_path / "empty.py")])


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_permission_denied_is_exl900(tmp_path, fake_engine):
    path = write(tmp_path, "secret.py", MODEL)
    os.chmod(path, 0)
    try:
        (report,) = lint_paths([path], settings(tmp_path))
    finally:
        os.chmod(path, 0o644)
    assert "Permission denied" in report.diagnostics[0].message


def test_engine_exception_becomes_exl901(tmp_path, monkeypatch):
    ok = write(tmp_path, "ok.py", "a = t.item()\n")
    boom = write(tmp_path, "boom.py", "x = 1\n")

    def analyze(text, path, target, project=None, context=None):
        if path == boom:
            raise RecursionError("maximum recursion depth exceeded")
        return fake_findings(text, path, target)

    monkeypatch.setattr(engine, "analyze_source", analyze)
    reports = lint_paths([str(tmp_path)], settings(tmp_path))
    assert codes(reports) == {boom: ["EXL901"], ok: ["EXL001"]}
    assert "RecursionError: maximum recursion depth exceeded" in reports[0].diagnostics[0].message


def test_parallel_run_matches_sequential_and_a_crashing_worker_costs_one_file(tmp_path, monkeypatch):
    paths = [write(tmp_path, f"m{i:02}.py", f"a{i} = t.item()\n") for i in range(12)]
    crash = write(tmp_path, "m05_crash.py", "x = 1\n")

    def analyze(text, path, target, project=None, context=None):
        if path == crash:
            os._exit(3)  # a segfault in the parser looks like this to the pool
        return fake_findings(text, path, target)

    monkeypatch.setattr(engine, "analyze_source", analyze)
    reports = lint_paths([str(tmp_path)], settings(tmp_path, jobs=2, cache=False))
    got = codes(reports)
    assert got.pop(crash) == ["EXL901"]
    assert got == {p: ["EXL001"] for p in paths}
    (crashed,) = [r for r in reports if r.path == crash]
    assert "crashed" in crashed.diagnostics[0].message


def test_cache_serves_unchanged_files_and_invalidates_on_change(tmp_path, fake_engine):
    a = write(tmp_path, "a.py", MODEL)
    b = write(tmp_path, "b.py", "x = 1\n")
    s = settings(tmp_path, jobs=1)
    first = run([str(tmp_path)], s)
    assert sorted(fake_engine.calls) == [a, b] and first.analyzed == 2
    fake_engine.calls.clear()
    second = run([str(tmp_path)], settings(tmp_path, jobs=1))
    assert fake_engine.calls == [] and second.cached == 2
    assert codes(second.reports) == codes(first.reports) == {a: ["EXL001"], b: []}
    assert second.reports[0].diagnostics[0].to_dict() == first.reports[0].diagnostics[0].to_dict()
    # Filtering is re-applied to cached results; a subset of the files is served too.
    assert codes(lint_paths([str(tmp_path)], settings(tmp_path, ignore="EXL001"))) == {a: [], b: []}
    assert codes(lint_paths([a], settings(tmp_path))) == {a: ["EXL001"]}
    assert fake_engine.calls == []
    # A changed file is analyzed again, alone.
    with open(b, "a") as f:
        f.write("y = t.tolist()\n")
    third = run([str(tmp_path)], settings(tmp_path))
    assert fake_engine.calls == [b] and third.cached == 1
    assert codes(third.reports) == {a: ["EXL001"], b: ["EXL002"]}
    # Another target is another cache.
    fake_engine.calls.clear()
    run([str(tmp_path)], settings(tmp_path, target="trace"))
    assert sorted(fake_engine.calls) == [a, b]


def test_cache_follows_imports_between_linted_files(tmp_path, fake_engine):
    pkg = tmp_path / "pkg"
    init = write(pkg, "__init__.py", "from .blocks import Block\n")
    blocks = write(pkg, "blocks.py", "from pkg import \\\n    layers\n")
    layers = write(pkg, "layers.py", "def helper(t):\n    return t\n")
    model = write(tmp_path, "model.py", "from pkg import (\n    Block,\n)\n")
    other = write(tmp_path, "other.py", "import os\n")
    run([str(tmp_path)], settings(tmp_path, jobs=1))
    fake_engine.calls.clear()
    with open(layers, "a") as f:
        f.write("# changed\n")
    run([str(tmp_path)], settings(tmp_path, jobs=1))
    # layers <- blocks (backslash continuation) <- pkg/__init__ (relative) <- model (parenthesized)
    assert sorted(fake_engine.calls) == sorted([init, blocks, layers, model])
    assert other not in fake_engine.calls


def test_direct_dependencies_over_approximate():
    texts = {
        "p/__init__.py": "",
        "p/sub/__init__.py": "",
        "p/sub/mod.py": "from . import x\n",
        "p/utils.py": "",
        "q/utils.py": "",
        "main.py": "import p.utils as u; import json\n",
        "doc.py": '"""Call it:\n    from q import utils\n"""\n',
        "q/__init__.py": "",
        "semi.py": "x = 1; import q\nimportlib.import_module(\"p\")\n",
    }
    deps = direct_dependencies(texts)
    assert deps["semi.py"] == {"q/__init__.py"}
    assert deps["p/sub/mod.py"] == {"p/sub/__init__.py", "p/__init__.py"}
    assert deps["main.py"] == {"p/__init__.py", "p/utils.py", "q/utils.py"}
    assert deps["doc.py"] == {"q/__init__.py", "p/utils.py", "q/utils.py"}  # a docstring counts: harmless
    assert deps["p/utils.py"] == set()


def test_file_keys_cover_the_transitive_closure_through_cycles():
    texts = {"a.py": "import b\n", "b.py": "import a\n", "c.py": "import a\n",
             "d.py": "import c\n", "e.py": "x = 1\n"}
    hashes = {p: "h0" for p in texts}
    before = file_keys(texts, hashes, Target.EXPORT)
    assert len(set(before.values())) == 5
    after = file_keys(texts, {**hashes, "b.py": "h1"}, Target.EXPORT)
    assert {p for p in texts if before[p] != after[p]} == {"a.py", "b.py", "c.py", "d.py"}
    after = file_keys(texts, {**hashes, "d.py": "h1"}, Target.EXPORT)
    assert {p for p in texts if before[p] != after[p]} == {"d.py"}
    assert file_keys(texts, hashes, Target.TRACE)["e.py"] != before["e.py"]


def test_no_cache_and_corrupt_cache(tmp_path, fake_engine):
    a = write(tmp_path, "a.py", MODEL)
    run([a], settings(tmp_path, cache=False))
    run([a], settings(tmp_path, cache=False))
    assert fake_engine.calls == [a, a]
    cache_dir = tmp_path / "_cache"
    assert not cache_dir.exists()
    run([a], settings(tmp_path))
    (entry,) = cache_dir.glob("*.json")
    assert (cache_dir / ".gitignore").read_text().endswith("*\n")
    entry.write_text("{not json")
    result = run([a], settings(tmp_path))
    assert result.analyzed == 1 and codes(result.reports) == {a: ["EXL001"]}
    (entries,) = json.loads(entry.read_text())["entries"].values()
    assert entries[0]["code"] == "EXL001" and entries[0]["path"] == a


def test_internal_errors_are_not_cached(tmp_path, monkeypatch):
    a = write(tmp_path, "a.py", "x = 1\n")
    calls = []

    def analyze(text, path, target, project=None, context=None):
        calls.append(path)
        raise ValueError("flaky")

    monkeypatch.setattr(engine, "analyze_source", analyze)
    run([a], settings(tmp_path))
    run([a], settings(tmp_path))
    assert calls == [a, a]


def test_lint_text_and_lint_bytes(tmp_path, fake_engine):
    s = settings(tmp_path)
    report = lint_text(MODEL, "buffer.py", s)
    assert report.path == "buffer.py" and [d.code for d in report.diagnostics] == ["EXL001"]
    assert report.lines == MODEL.splitlines()
    bad = lint_bytes(b"x = '\xff'\n", "in.py", s)
    assert [d.code for d in bad.diagnostics] == ["EXL900"] and "0xff" in bad.diagnostics[0].message
    crlf = lint_bytes(MODEL.replace("\n", "\r\n").encode(), "crlf.py", s)
    assert crlf.diagnostics[0].line == 6 and crlf.lines[5] == "        n = x.sum().item()"


def test_linting_does_not_import_torch(tmp_path):
    model = tmp_path / "m.py"
    model.write_text(MODEL + "\nimport numpy as np\n")
    code = textwrap.dedent(f"""
        import sys
        from exportlint.config import load_settings
        from exportlint.runner import lint_paths
        reports = lint_paths([{str(model)!r}], load_settings({str(tmp_path)!r}, {{"cache": False}}))
        assert reports and reports[0].path.endswith("m.py")
        import exportlint.cli, exportlint.reporters.text, exportlint.reporters.json
        bad = [m for m in ("torch", "numpy", "onnx") if m in sys.modules]
        assert not bad, bad
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
