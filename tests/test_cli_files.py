"""File discovery, exclusion patterns and reading source bytes (exportlint.files)."""

from __future__ import annotations

import os

import pytest

from exportlint import files
from exportlint.files import PathMatcher, SourceError, decode_source, discover, read_source, split_lines


def touch(path, text="x = 1\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def rel(found, root):
    return [os.path.relpath(f, root) for f in found.files]


def test_directories_are_walked_for_py_files_in_sorted_order(tmp_path):
    touch(tmp_path / "b.py")
    touch(tmp_path / "a.py")
    touch(tmp_path / "pkg" / "c.py")
    touch(tmp_path / "notes.txt")
    touch(tmp_path / "stub.pyi")
    assert rel(discover([str(tmp_path)], root=tmp_path), tmp_path) == ["a.py", "b.py", "pkg/c.py"]


def test_default_path_is_the_current_directory(tmp_path, monkeypatch):
    touch(tmp_path / "m.py")
    monkeypatch.chdir(tmp_path)
    assert discover([]).files == ["m.py"]


@pytest.mark.parametrize("skipped", [
    ".git", ".hg", ".venv", "venv", "__pycache__", "build", "dist", ".tox", ".nox", ".eggs",
    "foo.egg-info", "node_modules", "site-packages", ".mypy_cache", ".pytest_cache",
])
def test_default_skips(tmp_path, skipped):
    touch(tmp_path / skipped / "inside.py")
    touch(tmp_path / "kept.py")
    assert rel(discover([str(tmp_path)], root=tmp_path), tmp_path) == ["kept.py"]


def test_a_file_named_like_a_skipped_directory_is_kept(tmp_path):
    touch(tmp_path / "build.py")
    assert rel(discover([str(tmp_path)], root=tmp_path), tmp_path) == ["build.py"]


@pytest.mark.parametrize("pattern, excluded", [
    ("gen_*.py", {"gen_a.py", "sub/gen_b.py"}),
    ("sub/", {"sub/gen_b.py", "sub/keep.py"}),
    ("**/keep.py", {"sub/keep.py", "keep.py"}),
    ("sub/keep.py", {"sub/keep.py"}),
    ("/keep.py", {"keep.py"}),
    ("legacy", {"legacy/old.py"}),
    ("legacy/", {"legacy/old.py"}),
])
def test_exclude_patterns_are_gitignore_style(tmp_path, pattern, excluded):
    everything = {"gen_a.py", "sub/gen_b.py", "sub/keep.py", "keep.py", "legacy/old.py", "main.py"}
    for name in everything:
        touch(tmp_path / name)
    found = discover([str(tmp_path)], exclude=[pattern], root=tmp_path)
    assert set(rel(found, tmp_path)) == everything - excluded


def test_directory_only_pattern_does_not_match_a_file(tmp_path):
    touch(tmp_path / "models.py")
    touch(tmp_path / "models2" / "x.py")
    found = discover([str(tmp_path)], exclude=["models.py/"], root=tmp_path)
    assert "models.py" in rel(found, tmp_path)


def test_explicit_files_are_linted_even_if_excluded_unless_force_exclude(tmp_path):
    f = touch(tmp_path / "build" / "gen.py")
    g = touch(tmp_path / "gen_x.py")
    found = discover([str(f), str(g)], exclude=["gen_*"], root=tmp_path)
    assert found.files == [str(f), str(g)]
    forced = discover([str(f), str(g)], exclude=["gen_*"], root=tmp_path, force_exclude=True)
    assert forced.files == []


def test_explicit_file_of_any_extension_is_linted(tmp_path):
    script = touch(tmp_path / "train")
    assert discover([str(script)], root=tmp_path).files == [str(script)]


def test_missing_paths_are_reported_separately(tmp_path):
    touch(tmp_path / "a.py")
    found = discover([str(tmp_path / "a.py"), str(tmp_path / "nope.py")], root=tmp_path)
    assert found.files == [str(tmp_path / "a.py")]
    assert found.missing == [str(tmp_path / "nope.py")]


def test_same_file_given_twice_is_linted_once(tmp_path):
    f = touch(tmp_path / "a.py")
    assert discover([str(f), str(tmp_path), str(f)], root=tmp_path).files == [str(f)]


def test_directory_symlink_loop_terminates(tmp_path):
    touch(tmp_path / "pkg" / "m.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    os.symlink(tmp_path, tmp_path / "pkg" / "up")
    assert rel(discover([str(tmp_path)], root=tmp_path), tmp_path) == ["pkg/m.py"]


def test_file_symlink_loop_and_broken_link_are_reported_when_read(tmp_path):
    os.symlink(tmp_path / "b.py", tmp_path / "a.py")
    os.symlink(tmp_path / "a.py", tmp_path / "b.py")
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    found = discover([str(tmp_path)], root=tmp_path)
    assert rel(found, tmp_path) == ["a.py", "b.py", "dangling.py"]
    with pytest.raises(SourceError, match="symbolic links"):
        read_source(str(tmp_path / "a.py"))
    with pytest.raises(SourceError, match="broken symbolic link"):
        read_source(str(tmp_path / "dangling.py"))


def test_directory_named_like_a_python_file_is_walked(tmp_path):
    touch(tmp_path / "weird.py" / "inner.py")
    assert rel(discover([str(tmp_path)], root=tmp_path), tmp_path) == ["weird.py/inner.py"]
    with pytest.raises(SourceError, match="is a directory"):
        read_source(str(tmp_path / "weird.py"))


def test_path_matcher_checks_parents():
    m = PathMatcher(["vendor/"], "/proj")
    assert m.matches("/proj/vendor/lib/x.py")
    assert not m.matches("/proj/src/vendored.py")
    assert PathMatcher(["tests/**/conf_*.py"], "/proj").matches("/proj/tests/a/b/conf_x.py")


# --- reading ---------------------------------------------------------------------------------

def test_utf8_with_bom():
    assert decode_source(b"\xef\xbb\xbfx = 'd\xc3\xa9j\xc3\xa0'\n") == "x = 'd\u00e9j\u00e0'\n"


def test_coding_cookie_latin1():
    data = "# -*- coding: latin-1 -*-\nname = 'caf\u00e9'\n".encode("latin-1")
    assert decode_source(data).endswith("name = 'caf\u00e9'\n")


def test_cookie_on_second_line_after_shebang():
    data = "#!/usr/bin/env python\n# coding: cp1252\ns = '\u20ac'\n".encode("cp1252")
    assert "\u20ac" in decode_source(data)


def test_invalid_utf8_names_the_byte_and_line():
    with pytest.raises(SourceError) as e:
        decode_source(b"x = 1\ny = '\xff'\n")
    assert e.value.line == 2
    assert "0xff" in e.value.message and "utf-8" in e.value.message


def test_binary_file():
    with pytest.raises(SourceError, match="binary"):
        decode_source(b"\x7fELF\x00\x01\x02")


def test_unknown_coding_cookie():
    with pytest.raises(SourceError, match="unknown encoding 'klingon'"):
        decode_source(b"# coding: klingon\nx = 1\n")


def test_empty_file_reads_as_empty_text(tmp_path):
    f = touch(tmp_path / "empty.py", "")
    assert read_source(str(f)) == (b"", "")


def test_huge_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    f = touch(tmp_path / "big.py", "x = 1\n" * 50)
    with pytest.raises(SourceError, match="too large"):
        read_source(str(f))


def test_split_lines_counts_like_python():
    assert split_lines("a\r\nb\rc\nd\x0ce\u2028f") == ["a", "b", "c", "d\x0ce\u2028f"]
    assert split_lines("a\n") == ["a"]
    assert split_lines("") == []


def test_modular_sources_with_a_generated_twin_are_skipped(tmp_path):
    """transformers' modular_*.py is the template of its generated modeling_*.py: one is linted."""
    from exportlint.files import discover

    pkg = tmp_path / "models" / "llama"
    pkg.mkdir(parents=True)
    for name in ("modeling_llama.py", "modular_llama.py", "modular_orphan.py", "configuration_llama.py"):
        (pkg / name).write_text("x = 1\n")
    names = sorted(os.path.basename(f) for f in discover([str(tmp_path)]).files)
    assert names == ["configuration_llama.py", "modeling_llama.py", "modular_orphan.py"]
    both = sorted(os.path.basename(f) for f in discover([str(tmp_path)], include_modular_sources=True).files)
    assert "modular_llama.py" in both
    # named on the command line: linted
    named = discover([str(pkg / "modular_llama.py")]).files
    assert [os.path.basename(f) for f in named] == ["modular_llama.py"]
