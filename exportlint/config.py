"""Settings: ``[tool.exportlint]`` in the nearest ``pyproject.toml``, overridden by CLI flags.

The configuration found is the nearest ``pyproject.toml`` with a ``[tool.exportlint]`` table,
searching from ``start`` upward (one configuration per run).  Its directory is the project root
(exclude patterns, per-file-ignores and the cache are relative to it); without one the root is
the current directory.  Every problem (unknown key, wrong type, unknown rule code or prefix, bad
severity) is a :class:`ConfigError` naming the file and the key.
"""

from __future__ import annotations

import difflib
import os
import stat
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from exportlint.catalogue import CATALOGUE, lookup
from exportlint.diagnostics import Severity, Target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

# Codes that `select` never turns off (only an explicit `ignore` does): a file that cannot be
# analyzed (EXL900, EXL902), an analyzer failure, and the dynamic pass's own findings.
ALWAYS_SELECTED = frozenset({"EXL900", "EXL901", "EXL902", "EXL090", "EXL091"})


class ConfigError(Exception):
    """A bad configuration value, with the file (or "command line") and the key in the message."""


@dataclass
class Settings:
    select: tuple[str, ...] = ()  # rule selectors (codes, prefixes, names, ALL); empty = all
    ignore: tuple[str, ...] = ()
    target: Target = Target.EXPORT
    exclude: tuple[str, ...] = ()  # gitignore-style patterns, on top of files.DEFAULT_SKIPS
    force_exclude: bool = False  # also exclude files named explicitly on the command line
    include_modular_sources: bool = False  # lint modular_*.py sources that have a modeling_*.py twin
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fail_on: Severity = Severity.ERROR
    severity: dict[str, Severity] = field(default_factory=dict)  # code -> severity override
    jobs: int | None = None  # None: os.cpu_count()
    cache: bool = True
    cache_dir: Path | None = None  # None: $EXPORTLINT_CACHE_DIR or <root>/.exportlint_cache
    show_suppressed: bool = False
    report_unused_suppressions: bool = False
    dynamic: dict[str, Any] = field(default_factory=dict)  # [tool.exportlint.dynamic], untouched
    export: Any = None  # [tool.exportlint.export] (context.declared.Declared), None: nothing declared
    target_explicit: bool = False  # `target` was given (config or --target): it overrides the sites' exporters
    # Fixes (``--fix``): which codes may be fixed (empty = all), which never, and unsafe ones too.
    fixable: tuple[str, ...] = ()
    unfixable: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    root: Path = field(default_factory=Path.cwd)
    config_file: Path | None = None

    @cached_property
    def enabled_codes(self) -> frozenset[str]:
        selected = codes_for(self.select) if self.select else frozenset(CATALOGUE)
        return (selected | ALWAYS_SELECTED) - codes_for(self.ignore)

    @cached_property
    def _per_file_matchers(self) -> list[tuple[Any, frozenset[str]]]:
        from exportlint.files import PathMatcher

        return [
            (PathMatcher([pattern], self.root), codes_for(selectors))
            for pattern, selectors in self.per_file_ignores.items()
        ]

    def ignored_in(self, path: str) -> frozenset[str]:
        """Codes that per-file-ignores turn off in ``path``."""
        out: set[str] = set()
        for matcher, codes in self._per_file_matchers:
            if matcher.matches(path):
                out |= codes
        return frozenset(out)

    def is_enabled(self, code: str, path: str) -> bool:
        return code in self.enabled_codes and code not in self.ignored_in(path)

    @property
    def fix_policy(self) -> Any:
        from exportlint.fixes.model import FixPolicy

        return FixPolicy(
            fixable=codes_for(self.fixable) if self.fixable else None,
            unfixable=codes_for(self.unfixable), unsafe=self.unsafe_fixes,
        )

    def resolved_cache_dir(self) -> Path:
        env = os.environ.get("EXPORTLINT_CACHE_DIR")
        if env:
            return Path(env)
        return self.cache_dir or self.root / ".exportlint_cache"


# ---------------------------------------------------------------------------------------------
# Rule selectors


def codes_for_selector(selector: str) -> frozenset[str]:
    """Codes a selector names: a code, a code prefix (``EXL0``, ``EXL02``), a rule name, ``ALL``."""
    key = selector.strip()
    if key.upper() == "ALL":
        return frozenset(CATALOGUE)
    rule = lookup(key)
    if rule is not None:
        return frozenset({rule.code})
    prefix = key.upper()
    codes = frozenset(c for c in CATALOGUE if c.startswith(prefix)) if prefix.startswith("EXL") else frozenset()
    if not codes:
        raise ValueError(f"unknown rule code, prefix or name {selector!r}")
    return codes


def codes_for(selectors: tuple[str, ...] | list[str]) -> frozenset[str]:
    out: set[str] = set()
    for s in selectors:
        out |= codes_for_selector(s)
    return frozenset(out)


# ---------------------------------------------------------------------------------------------
# Validation of raw values (from TOML or from the command line)


def _str_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"expected a list of strings, got {value!r}")


def _selectors(value: Any) -> tuple[str, ...]:
    items = _str_list(value)
    codes_for(items)  # validates
    return items


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _severity(value: Any) -> Severity:
    if isinstance(value, Severity):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a severity string, got {value!r}")
    return Severity.parse(value)


def _target(value: Any) -> Target:
    if isinstance(value, Target):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a target string, got {value!r}")
    return Target.parse(value)


def _jobs(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return value


def _path(value: Any) -> Path | None:
    if value is None or isinstance(value, Path):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a path string, got {value!r}")
    return Path(value)


def _table(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a table, got {value!r}")
    return value


def _patterns(value: Any) -> tuple[str, ...]:
    from exportlint.files import check_pattern

    items = _str_list(value)
    for pattern in items:
        check_pattern(pattern)  # ValueError naming the pattern
    return items


def _per_file_ignores(value: Any) -> dict[str, tuple[str, ...]]:
    return {_patterns([str(pattern)])[0]: _selectors(sel) for pattern, sel in _table(value).items()}


def _severity_overrides(value: Any) -> dict[str, Severity]:
    out: dict[str, Severity] = {}
    for selector, sev in _table(value).items():
        severity = _severity(sev)
        for code in sorted(codes_for_selector(selector)):
            out[code] = severity
    return out


def _export(value: Any) -> Any:
    from exportlint.context.declared import validate

    return validate(value)


# TOML key -> (Settings field, validator)
_KEYS: dict[str, tuple[str, Any]] = {
    "select": ("select", _selectors),
    "ignore": ("ignore", _selectors),
    "target": ("target", _target),
    "exclude": ("exclude", _patterns),
    "force-exclude": ("force_exclude", _bool),
    "include-modular-sources": ("include_modular_sources", _bool),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "fail-on": ("fail_on", _severity),
    "severity": ("severity", _severity_overrides),
    "jobs": ("jobs", _jobs),
    "cache": ("cache", _bool),
    "cache-dir": ("cache_dir", _path),
    "show-suppressed": ("show_suppressed", _bool),
    "report-unused-suppressions": ("report_unused_suppressions", _bool),
    "dynamic": ("dynamic", _table),
    "export": ("export", _export),
    "fixable": ("fixable", _selectors),
    "unfixable": ("unfixable", _selectors),
    "unsafe-fixes": ("unsafe_fixes", _bool),
}
_VALIDATORS = {name: check for name, check in _KEYS.values()}


def _validate_table(table: dict[str, Any], source: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key not in _KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), _KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{source}: unknown key {key!r} in [tool.exportlint]{hint}")
        name, check = _KEYS[key]
        try:
            values[name] = check(raw)
        except ValueError as e:
            raise ConfigError(f"{source}: [tool.exportlint] {key}: {e}") from None
    return values


def _validate_overrides(overrides: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, raw in overrides.items():
        if raw is None:
            continue
        if name not in _VALIDATORS:
            raise ConfigError(f"unknown setting {name!r}")
        try:
            values[name] = _VALIDATORS[name](raw)
        except ValueError as e:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(f"command line: {flag}: {e}") from None
    return values


# ---------------------------------------------------------------------------------------------
# Loading


MAX_CONFIG_BYTES = 1024 * 1024


def _read_toml(path: Path) -> dict[str, Any]:
    """The parsed file; ConfigError for anything but a readable regular TOML file of at most
    :data:`MAX_CONFIG_BYTES` (a FIFO or a device would block or never end)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path}: not a regular file")
        if st.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: too large for a configuration file ({st.st_size:,} bytes)")
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
        return tomllib.loads(data.decode("utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: values nested too deeply") from None


def _resolved(path: Path) -> Path:
    """``path`` made absolute, symbolic links resolved where possible (a link loop or an
    over-long name is left as written)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def _exportlint_table(path: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    """The exportlint table of a config file: ``[tool.exportlint]`` of a pyproject.toml, the
    whole document of any other ``.toml`` file."""
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool", {})
    table = tool.get("exportlint") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.exportlint] must be a table")
    return table


def find_config(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.exportlint]`` table, from ``start`` upward."""
    here = _resolved(start)
    if not os.path.isdir(here):
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if os.path.isfile(candidate) and _exportlint_table(candidate, _read_toml(candidate)) is not None:
            return candidate
    return None


def load_settings(
    start: Path | str = ".",
    overrides: dict[str, Any] | None = None,
    config_file: Path | str | None = None,
) -> Settings:
    """Settings for linting from ``start`` (a file or directory).

    ``overrides`` maps Settings field names to values (raw strings/lists as on the command line,
    or already typed); ``None`` values are ignored.  ``select`` replaces the configured
    selection; ``ignore`` adds to the configured ignores.  ``config_file`` names the config
    explicitly (a ``pyproject.toml``, or any ``.toml`` whose top level is the exportlint table).
    """
    path = Path(config_file) if config_file is not None else find_config(Path(start))
    values: dict[str, Any] = {}
    if path is not None:
        table = _exportlint_table(path, _read_toml(path))
        if table is None:
            raise ConfigError(f"{path}: no [tool.exportlint] table")
        values = _validate_table(table, str(path))
        root = _resolved(path).parent
        if values.get("cache_dir") is not None and not values["cache_dir"].is_absolute():
            values["cache_dir"] = root / values["cache_dir"]
    else:
        root = Path.cwd()
    cli = _validate_overrides(overrides or {})
    if "ignore" in cli:
        cli["ignore"] = tuple(values.get("ignore", ())) + cli["ignore"]
    values.update(cli)
    values["target_explicit"] = "target" in values
    return Settings(root=root, config_file=path, **values)
