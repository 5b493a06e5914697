"""[tool.exportlint] loading, validation and command-line overrides (exportlint.config)."""

from __future__ import annotations

import textwrap

import pytest

from exportlint.config import ConfigError, codes_for_selector, find_config, load_settings
from exportlint.diagnostics import Severity, Target


def write_config(directory, body, name="pyproject.toml"):
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


def test_defaults_without_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = load_settings(tmp_path)
    assert s.config_file is None and s.root == tmp_path
    assert s.target is Target.EXPORT and s.fail_on is Severity.ERROR
    assert "EXL001" in s.enabled_codes and s.cache


def test_nearest_pyproject_with_the_table_wins(tmp_path):
    write_config(tmp_path, '[tool.exportlint]\ntarget = "trace"\n')
    sub = tmp_path / "pkg" / "sub"
    sub.mkdir(parents=True)
    write_config(tmp_path / "pkg", '[project]\nname = "x"\n')  # no [tool.exportlint]: skipped
    s = load_settings(sub / "model.py")
    assert s.config_file == tmp_path / "pyproject.toml"
    assert s.root == tmp_path and s.target is Target.TRACE
    assert find_config(sub) == tmp_path / "pyproject.toml"


def test_all_keys(tmp_path):
    write_config(tmp_path, """
        [tool.exportlint]
        select = ["EXL0", "tensor-to-host"]
        ignore = ["EXL051"]
        target = "trace"
        exclude = ["legacy/"]
        force-exclude = true
        fail-on = "warning"
        jobs = 3
        cache = false
        cache-dir = "tmp/cache"
        show-suppressed = true
        report-unused-suppressions = true

        [tool.exportlint.per-file-ignores]
        "tests/**" = ["EXL001"]

        [tool.exportlint.severity]
        EXL022 = "error"
        tensor-item = "info"

        [tool.exportlint.dynamic]
        model = "pkg.models:build"
        anything = {nested = 1}
    """)
    s = load_settings(tmp_path)
    assert s.select == ("EXL0", "tensor-to-host") and s.ignore == ("EXL051",)
    assert s.target is Target.TRACE and s.fail_on is Severity.WARNING
    assert s.exclude == ("legacy/",) and s.force_exclude and s.jobs == 3 and not s.cache
    assert s.cache_dir == tmp_path / "tmp" / "cache"
    assert s.show_suppressed and s.report_unused_suppressions
    assert s.per_file_ignores == {"tests/**": ("EXL001",)}
    assert s.severity == {"EXL022": Severity.ERROR, "EXL001": Severity.INFO}
    assert s.dynamic == {"model": "pkg.models:build", "anything": {"nested": 1}}
    assert "EXL051" not in s.enabled_codes and "EXL001" in s.enabled_codes


@pytest.mark.parametrize("body, words", [
    ('fail_on = "error"', ["unknown key 'fail_on'", "did you mean 'fail-on'"]),
    ('colour = true', ["unknown key 'colour'"]),
    ('select = "EXL999"', ["select", "EXL999"]),
    ('ignore = ["EXL9X"]', ["ignore", "EXL9X"]),
    ('select = [1, 2]', ["select", "list of strings"]),
    ('target = "onnx"', ["target", "unknown target 'onnx'"]),
    ('fail-on = "fatal"', ["fail-on", "unknown severity 'fatal'"]),
    ('jobs = 0', ["jobs", "positive integer"]),
    ('jobs = "4"', ["jobs", "positive integer"]),
    ('cache = "no"', ["cache", "true or false"]),
    ('severity = {EXL001 = "loud"}', ["severity", "unknown severity 'loud'"]),
    ('severity = {EXL777 = "error"}', ["severity", "EXL777"]),
    ('per-file-ignores = {"a.py" = ["nope-rule"]}', ["per-file-ignores", "nope-rule"]),
    ('per-file-ignores = ["a.py"]', ["per-file-ignores", "table"]),
])
def test_bad_config_is_a_clear_error_naming_file_and_key(tmp_path, body, words):
    config = write_config(tmp_path, f"[tool.exportlint]\n{body}\n")
    with pytest.raises(ConfigError) as e:
        load_settings(tmp_path)
    message = str(e.value)
    assert str(config) in message
    for word in words:
        assert word in message


def test_invalid_toml(tmp_path):
    write_config(tmp_path, "[tool.exportlint\nselect = [")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(tmp_path)


def test_table_must_be_a_table(tmp_path):
    write_config(tmp_path, '[tool]\nexportlint = "yes"\n')
    with pytest.raises(ConfigError, match="must be a table"):
        load_settings(tmp_path)


def test_cli_overrides_config(tmp_path):
    write_config(tmp_path, """
        [tool.exportlint]
        select = ["EXL001", "EXL002"]
        ignore = ["EXL002"]
        target = "trace"
        fail-on = "warning"
        jobs = 3
    """)
    s = load_settings(tmp_path, {"target": "export", "fail_on": "info", "select": "EXL0",
                                 "ignore": ["EXL003"], "jobs": None})
    assert s.target is Target.EXPORT and s.fail_on is Severity.INFO
    assert s.jobs == 3  # None: not given on the command line
    assert s.select == ("EXL0",)
    assert s.ignore == ("EXL002", "EXL003")  # --ignore adds to the configured ignores
    assert {"EXL001", "EXL010"} <= s.enabled_codes and not {"EXL002", "EXL003"} & s.enabled_codes


def test_bad_override_names_the_flag(tmp_path):
    with pytest.raises(ConfigError, match="--select: unknown rule code, prefix or name 'EXLX'"):
        load_settings(tmp_path, {"select": ["EXLX"]})


def test_explicit_config_file_any_name(tmp_path):
    other = write_config(tmp_path, 'target = "trace"\nselect = ["EXL02"]\n', name="exportlint.toml")
    s = load_settings(tmp_path / "elsewhere", config_file=other)
    assert s.target is Target.TRACE and s.config_file == other
    assert s.enabled_codes >= {"EXL020", "EXL021", "EXL022"} and "EXL001" not in s.enabled_codes


def test_explicit_pyproject_without_table_is_an_error(tmp_path):
    config = write_config(tmp_path, '[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match="no \\[tool.exportlint\\] table"):
        load_settings(tmp_path, config_file=config)


@pytest.mark.parametrize("selector, expected", [
    ("EXL001", {"EXL001"}),
    ("exl001", {"EXL001"}),
    ("tensor-item", {"EXL001"}),
    ("EXL02", {"EXL020", "EXL021", "EXL022"}),
    ("EXL04", {"EXL040", "EXL041", "EXL042", "EXL043"}),
])
def test_selectors(selector, expected):
    assert codes_for_selector(selector) == expected


def test_select_never_turns_off_parse_and_internal_errors_but_ignore_does(tmp_path):
    s = load_settings(tmp_path, {"select": ["EXL001"]})
    assert {"EXL900", "EXL901", "EXL001"} <= s.enabled_codes and "EXL002" not in s.enabled_codes
    s = load_settings(tmp_path, {"ignore": ["EXL900"]})
    assert "EXL900" not in s.enabled_codes


def test_per_file_ignores_match_relative_to_root(tmp_path):
    write_config(tmp_path, """
        [tool.exportlint.per-file-ignores]
        "tests/**" = ["EXL001"]
        "legacy.py" = ["EXL0"]
    """)
    s = load_settings(tmp_path)
    assert s.ignored_in(str(tmp_path / "tests" / "a" / "t.py")) == {"EXL001"}
    assert "EXL010" in s.ignored_in(str(tmp_path / "src" / "legacy.py"))
    assert s.ignored_in(str(tmp_path / "src" / "model.py")) == frozenset()
    assert not s.is_enabled("EXL001", str(tmp_path / "tests" / "t.py"))
    assert s.is_enabled("EXL001", str(tmp_path / "model.py"))


def test_cache_dir_env_wins(tmp_path, monkeypatch):
    write_config(tmp_path, '[tool.exportlint]\ncache-dir = "c"\n')
    monkeypatch.delenv("EXPORTLINT_CACHE_DIR", raising=False)
    assert load_settings(tmp_path).resolved_cache_dir() == tmp_path / "c"
    monkeypatch.setenv("EXPORTLINT_CACHE_DIR", str(tmp_path / "env"))
    assert load_settings(tmp_path).resolved_cache_dir() == tmp_path / "env"
