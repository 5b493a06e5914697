"""Extract the examples of the rule documents in rules/ (shared by the tests)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from exportlint.catalogue import CATALOGUE, docs_dir

_FENCE = re.compile(r"^```python(?P<info>[^\n]*)\n(?P<body>.*?)^```", re.S | re.M)
_SECTION = re.compile(r"^## (?P<title>.+)$", re.M)
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>EXL\d{3}(?:\s*,\s*EXL\d{3})*)")


@dataclass
class Example:
    code: str  # the rule the document is about
    kind: str  # "bad" or "good"
    source: str
    target: str
    index: int

    @property
    def id(self) -> str:
        return f"{self.code}-{self.kind}{self.index}-{self.target}"

    def expected(self) -> set[tuple[int, str]]:
        out = set()
        for lineno, line in enumerate(self.source.splitlines(), start=1):
            m = _EXPECT.search(line)
            if m:
                for c in m.group("codes").split(","):
                    out.add((lineno, c.strip()))
        return out


def examples() -> list[Example]:
    out: list[Example] = []
    for code, info in CATALOGUE.items():
        path = docs_dir() / info.doc_filename
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        sections = list(_SECTION.finditer(text))
        for i, sec in enumerate(sections):
            title = sec.group("title").strip().lower()
            kind = {"example": "bad", "use instead": "good"}.get(title)
            if kind is None:
                continue
            end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
            for j, m in enumerate(_FENCE.finditer(text, sec.end(), end)):
                info_str = m.group("info")
                t = re.search(r"target=(\w+)", info_str)
                out.append(Example(code, kind, m.group("body"), t.group(1) if t else "export", j))
    return out


def doc_files() -> list[Path]:
    return sorted(docs_dir().glob("EXL*.md"))
