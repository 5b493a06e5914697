"""The dynamic pass's summary table and its progress display (rich, imported lazily)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

STYLE = {"ok": "green", "diverges": "bold red", "failed": "red", "error": "yellow",
         "timeout": "red", "crashed": "red", "out-of-memory": "red", "unavailable": "dim"}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _diff(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def render_summary(rows: list[dict[str, Any]], console: Any) -> None:
    """Print one table: a row per (model, exporter), with status, time and max abs diff."""
    from rich.table import Table

    if not rows:
        console.print("dynamic pass: no model file to run (see the README's 'Dynamic pass')")
        return
    table = Table(title="dynamic pass", title_justify="left", show_lines=False)
    for name, kw in (("model", {}), ("exporter", {}), ("status", {}), ("time", {"justify": "right"}),
                     ("max abs diff", {"justify": "right"}), ("first message line", {"overflow": "fold"})):
        table.add_column(name, **kw)
    for r in rows:
        status = r["status"]
        message = r.get("message") or ""
        if r.get("exception"):
            message = f"{r['exception']}: {message}"
        table.add_row(r["model"], r["exporter"], f"[{STYLE.get(status, '')}]{status}[/]",
                      _seconds(r.get("seconds")), _diff(r.get("max_abs_diff")),
                      _escape(message[:200]))
    console.print(table)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


@contextmanager
def spinner() -> Iterator[Callable[[str], None]]:
    """A rich status line on stderr, updated with each progress text."""
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("dynamic pass: starting the worker (import torch)") as status:
        yield lambda text: status.update(f"dynamic pass: {text}")
