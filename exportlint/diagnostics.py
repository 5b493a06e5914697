"""The one diagnostic model every reporter renders.

Positions are 1-based lines and 1-based columns counted in Unicode code points;
``end_column`` points one past the last character of the span (exclusive), like
ruff's JSON output.  Reporters that need other coordinates (LSP: 0-based UTF-16)
convert from these using the source lines kept in :class:`FileReport`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]

    @classmethod
    def parse(cls, value: str) -> "Severity":
        try:
            return cls(value.lower())
        except ValueError:
            raise ValueError(
                f"unknown severity {value!r} (expected one of: error, warning, info)"
            ) from None


class Target(str, Enum):
    EXPORT = "export"  # torch.export and torch.onnx.export(dynamo=True)
    TRACE = "trace"  # torch.jit.trace and torch.onnx.export(dynamo=False)

    @classmethod
    def parse(cls, value: str) -> "Target":
        try:
            return cls(value.lower())
        except ValueError:
            raise ValueError(
                f"unknown target {value!r} (expected one of: export, trace)"
            ) from None


@dataclass(frozen=True)
class Note:
    """One step of a diagnostic's provenance chain (where its value came from)."""

    line: int
    column: int
    message: str
    path: str | None = None  # None: same file as the diagnostic

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"line": self.line, "column": self.column, "message": self.message}
        if self.path is not None:
            d["path"] = self.path
        return d


@dataclass
class Diagnostic:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: Severity
    target: Target
    message: str
    hint: str
    provenance: list[Note] = field(default_factory=list)
    url: str = ""
    fix: dict[str, Any] | None = None
    # Filled by the dynamic pass: {status, exporter, message, max_abs_diff}.
    dynamic: dict[str, Any] | None = None
    # Set when a suppression comment matched (only shown with --show-suppressed).
    suppressed: bool = False
    # The modules, analysed on their own with inputs nothing shows (`<path>::<class>`, one per line), whose
    # analysis found it; the driver drops it when another linted module calls them all (runner.resolve_parts)
    alone: str | None = None

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)

    def identity(self) -> tuple:
        """Two diagnostics with the same identity are the same finding (a root exported both by
        torch.export and jit.trace is judged under both targets: two findings)."""
        return (self.path, self.line, self.column, self.code, self.target.value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "target": self.target.value,
            "message": self.message,
            "hint": self.hint,
            "provenance": [n.to_dict() for n in self.provenance],
            "url": self.url,
            "fix": self.fix,
            "dynamic": self.dynamic,
            **({"suppressed": True} if self.suppressed else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Diagnostic":
        return cls(
            path=d["path"],
            line=d["line"],
            column=d["column"],
            end_line=d["end_line"],
            end_column=d["end_column"],
            code=d["code"],
            name=d["name"],
            severity=Severity(d["severity"]),
            target=Target(d["target"]),
            message=d["message"],
            hint=d["hint"],
            provenance=[Note(**n) for n in d.get("provenance", [])],
            url=d.get("url", ""),
            fix=d.get("fix"),
            dynamic=d.get("dynamic"),
            suppressed=d.get("suppressed", False),
            alone=d.get("alone"),
        )


@dataclass
class FileReport:
    """Everything one linted file produced."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Source lines (without line endings), kept only when there is something to show.
    lines: list[str] | None = None
    # True when the file was skipped by the cheap pre-filter (cannot hold a Module).
    skipped: bool = False
