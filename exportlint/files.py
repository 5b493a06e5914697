"""Finding the files to lint and reading them as text.

Discovery rules (documented in the README's configuration section):

* a directory argument is walked recursively for ``*.py`` files, in sorted order;
* directories in :data:`DEFAULT_SKIPS` and anything matching the ``exclude`` patterns are
  skipped while walking;
* a file named explicitly on the command line is always linted (whatever its extension),
  unless ``force_exclude`` is set and it matches an exclusion (like ruff's ``--force-exclude``);
* symbolic links are followed, each real directory is walked once (no symlink loops) and each
  real file is linted once;
* a ``.py`` entry that cannot be stat'ed (broken link, link loop) is still returned: reading it
  fails, and the failure is reported as an EXL900 diagnostic on that file.

Reading: bytes are decoded like Python does (UTF-8 BOM, PEP 263 coding cookie, UTF-8 default);
binary, undecodable, unreadable or too large files raise :class:`SourceError` with a one-line
message.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

# Directory names never walked into (an explicit argument naming one is still linted).
DEFAULT_SKIPS = (
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "build", "dist", ".tox", ".nox",
    ".eggs", "*.egg-info", "node_modules", "site-packages", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".exportlint_cache",
)

# Files larger than this are not analyzed (one EXL900 diagnostic instead).
MAX_FILE_BYTES = 10 * 1024 * 1024

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class SourceError(Exception):
    """A file that cannot be turned into source text; ``line`` is where the problem is."""

    def __init__(self, message: str, line: int = 1):
        super().__init__(message)
        self.message = message
        self.line = line


# ---------------------------------------------------------------------------------------------
# Pattern matching (gitignore-style)


def _glob_to_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            c = glob[i]
            i += 1
            if c == "*":
                out.append("[^/]*")
            elif c == "?":
                out.append("[^/]")
            elif c == "[":
                end = glob.find("]", i + 1)
                if end == -1:
                    out.append(re.escape(c))
                else:
                    body = glob[i:end]
                    if body.startswith("!"):
                        body = "^" + body[1:]
                    out.append("[" + body.replace("\\", "\\\\") + "]")
                    i = end + 1
            else:
                out.append(re.escape(c))
    return "".join(out)


def check_pattern(pattern: str) -> None:
    """ValueError with a one-line reason if ``pattern`` is not a valid exclusion pattern."""
    try:
        _Pattern.parse(pattern)
    except re.error as e:
        raise ValueError(f"invalid pattern {pattern!r}: {e.msg}") from None


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    anchored: bool  # matched against the whole relative path, else against one name
    dir_only: bool

    @classmethod
    def parse(cls, pattern: str) -> "_Pattern":
        p = pattern.strip().replace("\\", "/")
        dir_only = p.endswith("/")
        p = p.rstrip("/")
        anchored = "/" in p
        p = p.lstrip("/")
        if p.startswith("./"):
            p = p[2:]
        return cls(re.compile(_glob_to_regex(p) + r"\Z"), anchored, dir_only)

    def match(self, rel: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        subject = rel if self.anchored else rel.rsplit("/", 1)[-1]
        return self.regex.match(subject) is not None


class PathMatcher:
    """gitignore-style patterns: ``name`` (any component), ``dir/`` (directories only),
    ``sub/dir/x.py`` or ``**/x.py`` (relative to the project root), ``*`` / ``?`` / ``[..]``.

    A path matches when it or one of its parent directories matches.
    """

    def __init__(self, patterns: list[str] | tuple[str, ...], root: Path | str):
        self.patterns = [_Pattern.parse(p) for p in patterns if p.strip()]
        self.root = os.path.abspath(root)

    def relative(self, path: str) -> str:
        absolute = os.path.abspath(path)
        if absolute == self.root or absolute.startswith(self.root.rstrip(os.sep) + os.sep):
            rel = os.path.relpath(absolute, self.root)
        else:
            rel = os.path.normpath(path).lstrip(os.sep)
        return rel.replace(os.sep, "/")

    def matches_entry(self, rel: str, is_dir: bool) -> bool:
        """Does this one entry match (its parents are not checked)?"""
        return any(p.match(rel, is_dir) for p in self.patterns)

    def matches(self, path: str, is_dir: bool = False) -> bool:
        """Does ``path`` or any of its parent directories match?"""
        if not self.patterns:
            return False
        rel = self.relative(path)
        if rel == ".":
            return False
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if self.matches_entry("/".join(parts[:i]), True):
                return True
        return self.matches_entry(rel, is_dir)


# ---------------------------------------------------------------------------------------------
# Discovery


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # command-line paths that do not exist
    # directories that could not be listed -> why (their files are not linted)
    unreadable: dict[str, str] = field(default_factory=dict)


def _matcher(exclude: list[str] | tuple[str, ...], root: Path | str) -> PathMatcher:
    return PathMatcher(list(DEFAULT_SKIPS) + list(exclude), root)


def is_excluded(path: str, exclude: list[str] | tuple[str, ...], root: Path | str) -> bool:
    """Would ``path`` (or a parent directory) be skipped by the default skips or ``exclude``?"""
    return _matcher(exclude, root).matches(path, is_dir=os.path.isdir(path))


def discover(
    paths: list[str],
    exclude: list[str] | tuple[str, ...] = (),
    root: Path | str = ".",
    force_exclude: bool = False,
    include_modular_sources: bool = False,
) -> Discovery:
    """The files to lint under ``paths`` (default ``.``), in a deterministic order.

    In a directory walk, a transformers-style ``modular_<name>.py`` whose generated twin
    ``modeling_<name>.py`` sits next to it is skipped (the modular file is the template the
    modeling file is generated from and is never imported: each problem would be reported
    twice), unless ``include_modular_sources``.  Files named on the command line are linted."""
    matcher = _matcher(exclude, root)
    found = Discovery()
    seen_files: set[tuple[int, int] | str] = set()
    seen_dirs: set[tuple[int, int]] = set()

    def add_file(path: str) -> None:
        try:
            st = os.stat(path)
            key: tuple[int, int] | str = (st.st_dev, st.st_ino)
        except OSError:
            key = os.path.abspath(path)  # unreadable: reported when read
        if key not in seen_files:
            seen_files.add(key)
            found.files.append(os.path.normpath(path))

    def walk(directory: str) -> None:
        try:
            st = os.stat(directory)
        except OSError:
            return
        if (st.st_dev, st.st_ino) in seen_dirs:
            return
        seen_dirs.add((st.st_dev, st.st_ino))
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            found.unreadable[os.path.normpath(directory)] = e.strerror or str(e)
            return
        names = {e.name for e in entries}
        for entry in entries:
            if not include_modular_sources and _is_modular_twin(entry.name, names):
                continue
            _walk_entry(entry, matcher, add_file, walk)

    for path in paths or ["."]:
        if not os.path.lexists(path):
            found.missing.append(path)
        elif os.path.isdir(path):
            if not (force_exclude and matcher.matches(path, is_dir=True)):
                walk(path)
        elif not (force_exclude and matcher.matches(path)):
            add_file(path)
    return found


def _is_modular_twin(name: str, siblings: set[str]) -> bool:
    return name.startswith("modular_") and name.endswith(".py") and "modeling_" + name[len("modular_"):] in siblings


def _walk_entry(entry: os.DirEntry, matcher: PathMatcher, add_file, walk) -> None:
    try:
        is_dir = entry.is_dir()
        is_file = entry.is_file()
    except OSError:
        is_dir = is_file = False
    rel = matcher.relative(entry.path)
    if matcher.matches_entry(rel, is_dir):
        return
    if is_dir:
        walk(entry.path)
    elif entry.name.endswith(".py") and (is_file or entry.is_symlink()):
        add_file(entry.path)


# ---------------------------------------------------------------------------------------------
# Reading


def check_size(size: int) -> None:
    """SourceError for content over :data:`MAX_FILE_BYTES`."""
    if size > MAX_FILE_BYTES:
        raise SourceError(
            f"file too large to analyze ({'over ' if size == MAX_FILE_BYTES + 1 else ''}{size / 1e6:.1f} MB > "
            f"{MAX_FILE_BYTES / 1e6:.1f} MB limit)"
        )


def read_bytes(path: str) -> bytes:
    """The raw content of ``path``; SourceError for unreadable, non-regular or huge files."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise SourceError("is a directory, not a Python file")
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
            raise SourceError("not a regular file (a FIFO, socket or device); not read")
        check_size(st.st_size)
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        check_size(len(data))  # grew meanwhile
        return data
    except SourceError:
        raise
    except OSError as e:
        reason = e.strerror or str(e)
        if e.errno == errno.ENOENT and os.path.islink(path):
            reason = "broken symbolic link"
        raise SourceError(f"cannot read file: {reason}") from None


def _declared_encoding(data: bytes) -> tuple[str, int]:
    """(codec name, line of the cookie) following PEP 263; BOM means utf-8-sig."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig", 1
    for number, line in enumerate(data.split(b"\n", 2)[:2], start=1):
        m = _COOKIE.match(line)
        if m:
            return m.group(1).decode("ascii", "replace"), number
        if line.strip() and not line.lstrip().startswith(b"#"):
            break
    return "utf-8", 1


def decode_source(data: bytes) -> str:
    """Source text from bytes as the Python interpreter would read it; SourceError otherwise."""
    nul = data.find(b"\x00")
    if nul != -1:
        raise SourceError("binary file (contains NUL bytes); not Python source",
                          data.count(b"\n", 0, nul) + 1)
    encoding, cookie_line = _declared_encoding(data)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r} in the coding declaration",
                          cookie_line) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SourceError(
            f"cannot decode as {encoding}: byte 0x{data[e.start]:02x} at line {line}; "
            "save the file as UTF-8 or declare its encoding (PEP 263)",
            line,
        ) from None
    except (LookupError, UnicodeError, TypeError):  # rot13 (not a text encoding), undefined
        raise SourceError(f"encoding {encoding!r} in the coding declaration cannot decode "
                          "Python source", cookie_line) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_source(path: str) -> tuple[bytes, str]:
    """(raw bytes, decoded text) of ``path``; SourceError with a one-line reason otherwise."""
    data = read_bytes(path)
    return data, decode_source(data)


def split_lines(text: str) -> list[str]:
    """Physical lines as Python counts them (``\\n``, ``\\r\\n`` and ``\\r`` only)."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines
