"""The fix a diagnostic carries, and the policy that says which fixes a run applies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SAFE, UNSAFE, DISPLAY_ONLY = "safe", "unsafe", "display-only"
APPLICABILITIES = (SAFE, UNSAFE, DISPLAY_ONLY)


@dataclass(frozen=True)
class Edit:
    """Replace the text from (line, column) to (end_line, end_column) — 1-based, end exclusive,
    columns in code points — by ``content``.  An insertion has start == end."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    @property
    def start(self) -> tuple[int, int]:
        return (self.line, self.column)

    @property
    def end(self) -> tuple[int, int]:
        return (self.end_line, self.end_column)

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "content": self.content}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Edit":
        return cls(int(d["line"]), int(d["column"]), int(d["end_line"]), int(d["end_column"]), str(d["content"]))


@dataclass(frozen=True)
class Fix:
    """What a finding's fix does (``message``), whether ``--fix`` may apply it, and its edits.

    ``safe``: eager behaviour is unchanged for every input (``--fix``); ``unsafe``: it may
    change (``--unsafe-fixes``: both arms of a ``torch.where`` run, another exception type, a
    device); ``display-only``: shown, never applied (it would not help under this target)."""

    message: str
    applicability: str
    edits: tuple[Edit, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message, "applicability": self.applicability,
                "edits": [e.to_dict() for e in self.edits]}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "Fix | None":
        if not d or not d.get("edits"):
            return None
        return cls(str(d.get("message", "")), str(d.get("applicability", UNSAFE)),
                   tuple(Edit.from_dict(e) for e in d["edits"]))

    def overlaps(self, other: "Fix") -> bool:
        """Do the two fixes touch the same text?  Two insertions at one point overlap too (their
        order would be arbitrary); an insertion at the boundary of a replacement does not."""
        return any(_touch(a, b) for a in self.edits for b in other.edits)


def _touch(a: Edit, b: Edit) -> bool:
    a_insert, b_insert = a.start == a.end, b.start == b.end
    if a_insert and b_insert:
        return a.start == b.start
    if a_insert:
        return b.start < a.start < b.end
    if b_insert:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


@dataclass(frozen=True)
class FixPolicy:
    """Which fixes a run applies: ``fixable`` / ``unfixable`` codes and ``unsafe-fixes``."""

    fixable: frozenset[str] | None = None  # None: every code
    unfixable: frozenset[str] = frozenset()
    unsafe: bool = False

    def allows_code(self, code: str) -> bool:
        return (self.fixable is None or code in self.fixable) and code not in self.unfixable

    def applies(self, code: str, fix: Fix | None) -> bool:
        if fix is None or not self.allows_code(code):
            return False
        return fix.applicability == SAFE or (self.unsafe and fix.applicability == UNSAFE)

    def hidden(self, code: str, fix: Fix | None) -> bool:
        """A fix that ``--unsafe-fixes`` would apply and this run does not."""
        return fix is not None and not self.unsafe and fix.applicability == UNSAFE and self.allows_code(code)
