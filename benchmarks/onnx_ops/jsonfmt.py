"""JSON for the shipped data tables: indented, but short objects and lists on one line (readable diffs)."""

from __future__ import annotations

import json
from pathlib import Path

WIDTH = 110


def dumps(value, indent: str = "") -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if len(flat) + len(indent) <= WIDTH or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + " "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if all(not isinstance(v, (dict, list)) for v in value):  # scalars: fill lines
        lines, line = [], []
        for v in map(json.dumps, value):
            if line and len(inner) + len(", ".join(line + [v])) > WIDTH:
                lines.append(", ".join(line))
                line = []
            line.append(v)
        lines.append(", ".join(line))
        return "[\n" + ",\n".join(inner + ln for ln in lines) + "\n" + indent + "]"
    return "[\n" + ",\n".join(inner + dumps(v, inner) for v in value) + "\n" + indent + "]"


def write_json(path: Path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(doc) + "\n")
