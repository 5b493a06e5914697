"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning (``github/codeql-action/upload-sarif``).

One run; ``tool.driver.rules`` lists the whole catalogue (so ``ruleIndex`` is stable) with the
help text of each rule taken from its document in ``rules/``.  Regions are 1-based with
columns in Unicode code points (``run.columnKind``), end column exclusive, exactly the
diagnostic model's coordinates.  Artifact URIs are relative to the working directory
(``uriBaseId`` ``%SRCROOT%``), which is the repository root in a CI checkout.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from exportlint import __version__
from exportlint.catalogue import CATALOGUE, RuleInfo, doc_path
from exportlint.diagnostics import Diagnostic, FileReport, Note, Severity, Target
from exportlint.reporters import RenderContext
from exportlint.reporters.github import workspace_path

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/exportlint/exportlint"
SRCROOT = "%SRCROOT%"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
RULE_INDEX = {code: index for index, code in enumerate(CATALOGUE)}


@lru_cache(maxsize=None)
def rule_doc(rule: RuleInfo) -> str:
    """The rule's markdown document, or its one-line summary when the document is missing."""
    try:
        return doc_path(rule).read_text(encoding="utf-8")
    except OSError:
        return rule.summary


def what_it_does(markdown: str) -> str | None:
    """The first paragraph of the doc's ``## What it does`` section, on one line."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.strip().lower() == "## what it does":
            paragraph = []
            for text in lines[i + 1:]:
                if paragraph and not text.strip() or text.startswith("#"):
                    break
                paragraph.append(text.strip())
            return " ".join(t for t in paragraph if t) or None
    return None


def sarif_rule(rule: RuleInfo, target: Target) -> dict[str, Any]:
    doc = rule_doc(rule)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what_it_does(doc) or rule.summary},
        "help": {"text": doc, "markdown": doc},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": LEVEL[rule.severity(target)]},
        "properties": {"tags": ["pytorch", "export"]},
    }


def artifact_location(path: str, cwd: str) -> dict[str, str]:
    """``artifactLocation`` relative to ``cwd`` (``%SRCROOT%``), or an absolute URI outside it."""
    where = workspace_path(path, cwd)
    if os.path.isabs(where):
        return {"uri": Path(where).as_uri()}
    return {"uri": quote(os.fsencode(where)), "uriBaseId": SRCROOT}


def _region(line: int, column: int, end_line: int | None = None, end_column: int | None = None) -> dict[str, int]:
    region = {"startLine": max(line, 1), "startColumn": max(column, 1)}
    if end_line is not None and end_column is not None:
        region.update(endLine=max(end_line, 1), endColumn=max(end_column, 1))
    return region


def _related(index: int, note: Note, path: str, cwd: str) -> dict[str, Any]:
    return {
        "id": index,
        "message": {"text": note.message},
        "physicalLocation": {
            "artifactLocation": artifact_location(note.path or path, cwd),
            "region": _region(note.line, note.column),
        },
    }


def _fix(diag: Diagnostic, cwd: str) -> dict[str, Any]:
    return {
        "description": {"text": diag.fix.get("message") or diag.hint},
        "artifactChanges": [{
            "artifactLocation": artifact_location(diag.path, cwd),
            "replacements": [
                {
                    "deletedRegion": _region(e["line"], e["column"], e["end_line"], e["end_column"]),
                    "insertedContent": {"text": e["content"]},
                }
                for e in diag.fix["edits"]
            ],
        }],
    }


def fingerprint(code: str, uri: str, line_text: str, occurrence: int) -> str:
    """Stable across unrelated edits: code, file, the flagged line's text and its occurrence."""
    key = "\0".join([code, uri, line_text, str(occurrence)])
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def sarif_result(diag: Diagnostic, line_text: str, occurrence: int, cwd: str) -> dict[str, Any]:
    location = artifact_location(diag.path, cwd)
    text = f"{diag.message}\nHint: {diag.hint}" if diag.hint else diag.message
    result: dict[str, Any] = {
        "ruleId": diag.code,
        "level": LEVEL[diag.severity],
        "message": {"text": text},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": location,
                "region": _region(diag.line, diag.column, diag.end_line, diag.end_column),
            }
        }],
        "partialFingerprints": {"exportlint/v1": fingerprint(diag.code, location["uri"], line_text, occurrence)},
        "properties": {"name": diag.name, "target": diag.target.value},
    }
    if diag.code in RULE_INDEX:
        result["ruleIndex"] = RULE_INDEX[diag.code]
    if diag.provenance:
        result["relatedLocations"] = [_related(i, n, diag.path, cwd) for i, n in enumerate(diag.provenance)]
    if diag.fix and diag.fix.get("edits"):
        result["fixes"] = [_fix(diag, cwd)]
    if diag.suppressed:
        result["suppressions"] = [{"kind": "inSource"}]
    if diag.dynamic:
        result["properties"]["dynamic"] = diag.dynamic
    return result


def file_results(report: FileReport, cwd: str) -> list[dict[str, Any]]:
    """The file's results; a suppressed one (only there with ``--show-suppressed``) says so."""
    seen: dict[tuple[str, str], int] = {}
    results = []
    for diag in report.diagnostics:
        lines = report.lines
        text = lines[diag.line - 1].strip() if lines and 0 < diag.line <= len(lines) else str(diag.line)
        occurrence = seen[(diag.code, text)] = seen.get((diag.code, text), -1) + 1
        results.append(sarif_result(diag, text, occurrence, cwd))
    return results


def sarif_log(reports: list[FileReport], ctx: RenderContext) -> dict[str, Any]:
    cwd = os.path.abspath(ctx.extra.get("cwd", os.getcwd()))
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "exportlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [sarif_rule(rule, ctx.target) for rule in CATALOGUE.values()],
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": Path(cwd).as_uri().rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": [r for report in reports for r in file_results(report, cwd)],
        }],
    }


def render(reports: list[FileReport], ctx: RenderContext) -> str:
    return json.dumps(sarif_log(reports, ctx), indent=2, ensure_ascii=False) + "\n"
