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
    """Print one table: a row per (model file, exporter), with status, time and max abs diff
    between the artifact and eager on the second input."""
    from rich import box
    from rich.table import Table

    if not rows:
        console.print("dynamic pass: no model file to run (see the README's 'Dynamic pass')")
        return
    wide = console.width >= 110  # the message column only where it has room
    table = Table(title="dynamic pass", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name, kw in (("model", {"overflow": "fold"}), ("exporter", {"overflow": "fold"}),
                     ("status", {"no_wrap": True}), ("time", {"justify": "right", "no_wrap": True}),
                     ("max abs diff", {"justify": "right", "no_wrap": True}),
                     ("message", {"overflow": "fold", "ratio": 1})):
        if wide or name != "message":
            table.add_column(name, **kw)
    for r in rows:
        status = r["status"]
        message = r.get("message") or ""
        if r.get("exception"):
            message = f"{r['exception']}: {message}"
        exporter = r["exporter"] + (f"\n[dim]{_escape(r['settings'])}[/]" if r.get("settings") else "")
        cells = [r["path"], exporter, f"[{STYLE.get(status, '')}]{status}[/]",
                 _seconds(r.get("seconds")), _diff(r.get("max_abs_diff")), _escape(message[:200])]
        table.add_row(*cells[:len(table.columns)])
    console.print(table)
    wrote: dict[str, list[str]] = {}
    for r in rows:
        wrote.setdefault(r["model"], r.get("wrote") or [])
    for model, names in wrote.items():
        if names:
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            console.print(f"note: {_escape(model)} wrote {len(names)} file(s) in its working directory, "
                          f"a scratch directory of the dynamic pass, deleted since: {_escape(shown)}")


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
