"""Parent side: turn the worker's results into verdicts on static findings, new findings and rows.

A failure or divergence is tied to a finding when one of its user locations falls on the
finding's lines or on the finding's provenance chain (the failing line is often where a value
is *consumed*: ``max(t.item(), eps)`` fails on the ``max`` line, the finding may be at
``.item()``), and also to every finding whose line is on the provenance of a finding tied that
way.  Exporters that failed elsewhere are judged with the eager run's line order: lines first
run before the failure were captured by the exporter, the others never reached it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from exportlint.catalogue import CATALOGUE
from exportlint.diagnostics import Diagnostic, FileReport, Severity, Target

SETUP_CODE = "EXL092" if "EXL092" in CATALOGUE else "EXL090"
RANK = {"confirmed": 5, "diverges": 4, "not-verifiable": 3, "passes": 2, "not-reached": 1}
FAILED = ("failed", "out-of-memory", "timeout", "crashed")
_LOWER = {Severity.ERROR: Severity.WARNING, Severity.WARNING: Severity.INFO, Severity.INFO: Severity.INFO}
# Findings that turn tensor data into Python values or data-dependent sizes: a failure on a
# finding's line is also theirs when they are on that finding's provenance chain.
VALUE_SOURCES = {"EXL001", "EXL002", "EXL003", "EXL032", "EXL050"}
# Branches on is-exporting / is-tracing predicates: what an unlocated divergence is blamed on.
EXPORT_MODE_CODES = {"EXL060"}
# Findings about shapes: with no dynamic dim declared, "passes" only holds for the example's sizes.
SHAPE_CODES = {"EXL010", "EXL011", "EXL022", "EXL040", "EXL041"}
_HINTS = {
    "EXL090": "The exporter could not capture this line: rewrite it with tensor operations "
              "(see the rule's documentation), or keep it out of the exported path.",
    "EXL091": "The exported artifact computes something else than eager here: keep the value a "
              "tensor (no Python numbers, branches or constants taken from the example).",
    "run": "The export succeeded but the exported program rejects the second input: it was "
           "specialised to the example (a guard); declare the dims that vary (--dynamic-dim) or "
           "keep the value that varies a tensor.",
    "setup": "Make the model runnable without arguments: a build() factory and example_inputs() "
             "in the model file, or --model FILE:Factory and --input SHAPE.",
}

Loc = tuple[str, int]
_ASSIGNED = re.compile(r"^\s*([A-Za-z_][\w\s,()\[\]*]*?)\s*(?::[^=]*)?=(?!=)")


def real(path: str) -> str:
    return os.path.realpath(path)


class Sources:
    """Source lines of the files involved, read once."""

    def __init__(self) -> None:
        self.files: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self.files:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self.files[path] = text.splitlines()
        return self.files[path]

    def line(self, path: str, line: int) -> str:
        lines = self.lines(path)
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def assigned(self, d: Diagnostic) -> set[str]:
        """Names a finding's line assigns (``t = x.item()`` -> {"t"})."""
        m = _ASSIGNED.match(self.line(real(d.path), d.line))
        return set(re.findall(r"[A-Za-z_]\w*", m.group(1))) if m else set()

    def uses(self, loc: Loc, names: set[str]) -> bool:
        text = self.line(*loc)
        return any(re.search(rf"\b{re.escape(n)}\b", text) for n in names)


@dataclass
class Verdict:
    status: str
    exporter: str | None
    message: str
    max_abs_diff: float | None = None
    weak: bool = False  # from a run that never got to the exporters: any real verdict wins

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "exporter": self.exporter, "message": self.message,
                "max_abs_diff": self.max_abs_diff}


class Judge:
    """Collects verdicts over all model runs, then writes them into the diagnostics."""

    def __init__(self, reports: list[FileReport], target: Target) -> None:
        self.reports = reports
        self.target = target
        self.by_path = {real(r.path): r for r in reports}
        self.verdicts: dict[int, Verdict] = {}
        self.new: dict[tuple[str, int, str], Diagnostic] = {}
        self.rows: list[dict[str, Any]] = []
        self.sources = Sources()
        self.run_by: dict[str, set[str]] = {}  # file -> model files whose runs executed it
        self.unresolved: dict[tuple[str, int, str], str] = {}  # setup finding -> its model file

    # -- public --------------------------------------------------------------------------------

    def add_run(self, where: str, file: Path, result: dict) -> None:
        """Judge every static finding against one model file's run."""
        file_ = real(str(file))
        executed = {real(p) for p in result.get("executed") or {}}
        scope = [d for r in self.reports for d in r.diagnostics
                 if real(d.path) in executed or real(d.path) == file_]
        run = _Run(result, file_, scope, self.sources)
        self.rows += _rows(where, result)
        for path in executed:
            self.run_by.setdefault(path, set()).add(file_)
        if result.get("error"):
            self._setup_failed(run, result["error"], scope)
            return
        for d in scope:
            self._offer(d, run.judge(d))
        for outcome in run.outcomes:
            self._new_findings(run, outcome, scope)

    def finish(self) -> list[dict[str, Any]]:
        """Write ``.dynamic`` on every diagnostic, add the new ones; return the summary rows."""
        for report in self.reports:
            for d in report.diagnostics:
                v = self.verdicts.get(id(d)) or Verdict(
                    "not-reached", None, "no model run by the dynamic pass executed this line")
                if v.status == "passes" and d.severity is not Severity.INFO:
                    lower = _LOWER[d.severity]
                    v.message += f"; severity lowered from {d.severity.value} to {lower.value}"
                    d.severity = lower
                d.dynamic = v.as_dict()
        for key, d in self.new.items():
            model_file = self.unresolved.get(key)
            if model_file and self.run_by.get(model_file, set()) - {model_file}:
                continue  # no model of its own, but another model runs its code: a library file
            report = self._report_for(d.path)
            report.diagnostics.append(d)
            report.diagnostics.sort(key=Diagnostic.sort_key)
        return self.rows

    # -- verdict bookkeeping -------------------------------------------------------------------

    def _offer(self, d: Diagnostic, v: Verdict | None) -> None:
        old = self.verdicts.get(id(d))
        if v is None:
            return
        if old is None or (old.weak and not v.weak) or (
                old.weak == v.weak and RANK[v.status] > RANK[old.status]):
            self.verdicts[id(d)] = v

    def _setup_failed(self, run: "_Run", error: dict, scope: list[Diagnostic]) -> None:
        points = [(real(p), int(ln)) for p, ln, *_ in error.get("points", [])]
        hit = _tied(scope, points, self.sources)
        kind = error["kind"]
        for d in scope:
            if id(d) in hit and kind == "cuda":
                msg = f"cannot be checked on this machine: {error['message']}"
            elif id(d) in hit:
                msg = error["message"]
            else:
                msg = f"the dynamic pass could not check this: {error['message']}"
            self._offer(d, Verdict("not-verifiable", None, msg, weak=True))
        if hit and kind in ("cuda", "eager"):
            return
        where = points[0] if points else run.forward
        self._add_new(SETUP_CODE, where, error["message"], None,
                      Verdict("not-verifiable", None, error["message"]))
        if kind == "resolve":
            self.unresolved[(where[0], where[1], SETUP_CODE)] = run.file

    def _new_findings(self, run: "_Run", o: dict, scope: list[Diagnostic]) -> None:
        if o["status"] in FAILED:
            code, locs, status = "EXL090", run.points(o), "confirmed"
            verb = ":" if o.get("phase") == "run" else " failed:"
            what = _failure_text(o)
        elif o["status"] == "diverges":
            code, locs, status, verb = "EXL091", run.implicated(o), "diverges", ":"
            what = (o["message"] or "the artifact disagrees with eager") + _reason(o)
        else:
            return
        if locs and _tied(scope, locs, self.sources):
            return
        where = locs[0] if locs else run.forward
        if not locs:
            what += (" (no user line could be recovered; reported at forward)" if run.forward_known
                     else " (no user line could be recovered; reported at the top of the model file)")
        self._add_new(code, where, f"{o['exporter']}{verb} {what}", o["exporter"],
                      Verdict(status, o["exporter"], what, o.get("max_abs_diff")),
                      "run" if o.get("phase") == "run" else None)

    def _add_new(self, code: str, where: Loc, message: str, exporter: str | None,
                 verdict: Verdict, hint: str | None = None) -> None:
        path, line = where
        key = (path, line, code)
        if key in self.new:
            old = self.new[key]
            if message not in old.message:
                old.message += f"; {message}"
            return
        rule = CATALOGUE[code]
        text = self.sources.line(path, line)
        indent = len(text) - len(text.lstrip())
        d = Diagnostic(
            path=self._report_for(path).path, line=line, column=indent + 1, end_line=line,
            end_column=max(len(text.rstrip()), indent) + 1, code=code, name=rule.name,
            severity=rule.severity(self.target), target=self.target, message=message,
            hint=_HINTS[hint or ("setup" if code == SETUP_CODE and verdict.status == "not-verifiable"
                                 else code)], url=rule.url)
        d.dynamic = verdict.as_dict()
        self.new[key] = d

    def _report_for(self, path: str) -> FileReport:
        key = real(path)
        if key not in self.by_path:
            rel = os.path.relpath(key)
            report = FileReport(path=key if rel.startswith("..") else rel)
            self.reports.append(report)
            self.by_path[key] = report
        report = self.by_path[key]
        if report.lines is None:
            report.lines = self.sources.lines(key)
        return report


# -- one model run -----------------------------------------------------------------------------


class _Run:
    def __init__(self, result: dict, file: str, scope: list[Diagnostic], sources: Sources) -> None:
        self.file = file
        # {path: {line: (order of its first execution, of its last)}}
        self.executed: dict[str, dict[int, tuple[int, int]]] = {
            real(p): {int(ln): (int(i), int(rest[0]) if rest else int(i)) for ln, i, *rest in pairs
                      if ln > 0}
            for p, pairs in (result.get("executed") or {}).items()}
        fwd = result.get("forward")
        self.forward: Loc = (real(fwd[0]), int(fwd[1])) if fwd else (file, 1)
        self.forward_known = bool(fwd)
        self.outcomes: list[dict] = result.get("exporters") or []
        for o in self.outcomes:  # an export-mode branch makes the artifact differ by design
            if o["status"] == "diverges" and not o.get("implicated"):
                o["implicated"] = [[real(d.path), d.line, "the artifact takes the other side of this "
                                    "export-mode branch"] for d in scope
                                   if d.code in EXPORT_MODE_CODES and self.order(d) is not None]
        self.resized = (result.get("inputs") or {}).get("resized", False)
        self.tied = [_tied(scope, self.locations(o), sources) for o in self.outcomes]
        self.warned = [_tied(scope, [(real(w["path"]), int(w["line"])) for w in o.get("warnings", [])],
                             sources) for o in self.outcomes]

    def locations(self, o: dict) -> list[Loc]:
        return self.points(o) if o["status"] in FAILED else self.implicated(o)

    @staticmethod
    def points(o: dict) -> list[Loc]:
        return [(real(p), int(ln)) for p, ln, *_ in o.get("points", [])]

    @staticmethod
    def implicated(o: dict) -> list[Loc]:
        return [(real(p), int(ln)) for p, ln, *_ in o.get("implicated", [])]

    def order(self, d: Diagnostic) -> int | None:
        """When the finding's lines first ran in the eager example run (None: never)."""
        hits = self._runs(d)
        return min(first for first, _ in hits) if hits else None

    def last_run(self, d: Diagnostic) -> int | None:
        """When the finding's lines last ran (a loop body or a helper called twice runs again)."""
        hits = self._runs(d)
        return max(last for _, last in hits) if hits else None

    def _runs(self, d: Diagnostic) -> list[tuple[int, int]]:
        lines = self.executed.get(real(d.path), {})
        return [lines[ln] for ln in range(d.line, d.end_line + 1) if ln in lines]

    def judge(self, d: Diagnostic) -> Verdict | None:
        reached = self.order(d) is not None
        per = [(o, self._classify(d, o, tied, warned))
               for o, tied, warned in zip(self.outcomes, self.tied, self.warned)
               if o["status"] != "unavailable"]
        for status in ("confirmed", "diverges"):
            hits = [(o, why) for o, (kind, why) in per if kind == status]
            if hits:
                o = hits[0][0]
                also = [h[0]["exporter"] for h in hits[1:]]
                text = hits[0][1] + (f" (also {', '.join(also)})" if also else "")
                return Verdict(status, o["exporter"], text, o.get("max_abs_diff"))
        if not reached:
            return Verdict("not-reached", None, "the example input did not execute this line; give "
                           "an input that reaches it (--input or example_inputs())")
        unknown = [(o, why) for o, (kind, why) in per if kind == "unknown"]
        if unknown:
            return Verdict("not-verifiable", unknown[0][0]["exporter"], unknown[0][1])
        passed = [o["exporter"] for o, (kind, _) in per if kind == "pass"]
        stopped = [why for _, (kind, why) in per if kind == "stopped"]
        if stopped:  # an exporter stops at its first failure: what runs after it was never checked
            text = _join_stopped(stopped)
            text += f" (it ran under {', '.join(passed)} without problems)" if passed else ""
            return Verdict("not-verifiable", None, text)
        if passed:
            text = f"ran under {', '.join(passed)} without problems"
            if d.code in SHAPE_CODES and not self.resized:
                text += (" with the example's sizes only (no dynamic dim declared: add "
                         "--dynamic-dim to check other sizes)")
            return Verdict("passes", passed[0], text)
        return Verdict("not-verifiable", None, "no exporter could be run on this machine")

    def _classify(self, d: Diagnostic, o: dict, tied: set[int], warned: set[int]) -> tuple[str, Any]:
        """(kind, why) of one exporter for one finding; kind: pass, confirmed, diverges,
        unknown (a problem with no user line, or a TracerWarning: could be this one),
        stopped (runs after the first failure; why = (exporter, failing line))."""
        if o["status"] == "ok" and id(d) in warned:
            return "unknown", (f"{o['exporter']} baked a value here ({_warning_text(d, o)}) but its "
                               "artifact matched eager on the second input, which may not take "
                               "another path: the finding stands")
        if o["status"] == "ok":
            return "pass", ""
        failed = o["status"] in FAILED
        if id(d) in tied:
            if failed:
                return "confirmed", _failure_text(o)
            return "diverges", (o["message"] or "the artifact disagrees with eager") + _reason(o, d)
        locs = self.locations(o)
        if not locs:
            verb = "diverges from eager" if not failed else (
                "exported, but its program raised on the second input" if o.get("phase") == "run"
                else "failed")
            what = _exc_text(o) if failed else o["message"]
            return "unknown", f"{o['exporter']} {verb} without naming a line ({what}); this may be the cause"
        if not failed:
            return "pass", ""  # the divergence was located at other lines
        first = sorted((self.executed[p][ln][0], ln) for p, ln in locs if ln in self.executed.get(p, {}))
        line = first[0][1] if first else locs[0][1]
        if not first or (self.last_run(d) or 0) > first[0][0]:  # (also) runs after the failing line
            return "stopped", (o["exporter"], line)
        if tied:  # this line ran, and was captured, before a failure another finding explains
            return "pass", ""
        return "unknown", (f"{o['exporter']} failed later, at line {line}, where no finding is "
                           f"({_exc_text(o)}); if that line uses a value computed here, this is the cause")


def _tied(diags: list[Diagnostic], locs: Iterable[Loc], sources: Sources) -> set[int]:
    """ids of ``diags`` tied to any of ``locs``.

    Tied: a finding on one of the lines; else (the failure is often where a value is consumed)
    a finding that assigns a name used on one of the lines, earlier in the same file.  Then
    also the findings that produce data-dependent values on the provenance chain of those
    (``.item()`` behind an ``if``).
    """
    locs = set(locs)
    direct = [d for d in diags if _span(d) & locs]
    if not direct:
        direct = [d for d in diags if any(p == real(d.path) and ln > d.line
                                          and sources.uses((p, ln), sources.assigned(d))
                                          for p, ln in locs)]
    chained = set().union(*(_provenance(d) for d in direct)) if direct else set()
    return {id(d) for d in direct} | {id(d) for d in diags
                                      if d.code in VALUE_SOURCES and _span(d) & chained}


def _span(d: Diagnostic) -> set[Loc]:
    p = real(d.path)
    return {(p, ln) for ln in range(d.line, max(d.end_line, d.line) + 1)}


def _provenance(d: Diagnostic) -> set[Loc]:
    return {(real(n.path) if n.path else real(d.path), n.line) for n in d.provenance}


def _join_stopped(stopped: list[tuple[str, int]]) -> str:
    """"after the first failure: torch.export and onnx-dynamo failed at line 20 ..." from
    (exporter, line) pairs."""
    by_line: dict[int, list[str]] = {}
    for exporter, line in stopped:
        by_line.setdefault(line, []).append(exporter)
    failed = "; ".join(f"{' and '.join(names)} failed at line {line}" for line, names in by_line.items())
    return (f"after the first failure: {failed} and stopped there, and this line (also) runs after "
            "that point; fix that failure and run again to check this line")


def _exc_text(o: dict) -> str:
    exc, msg = o.get("exception"), o.get("message") or ""
    return f"{exc}: {msg}" if exc and msg else (exc or msg)


_GUARD_WORDS = ("Guard failed", "Runtime assertion failed", "Expected input at", "invalid dimensions",
                "Got invalid", "to be equal to")


def _failure_text(o: dict) -> str:
    """What went wrong: the exception, or for the ``run`` phase that the export succeeded and
    the exported program raised on the second input (a guard, when the message shows one)."""
    text = _exc_text(o)
    if o.get("phase") != "run":
        return text
    guard = any(w in text for w in _GUARD_WORDS)
    return ("exported, then the exported program raised on the second input" + (
        " (a guard: the program only accepts inputs like the example)" if guard else "") + f": {text}")


def _reason(o: dict, d: Diagnostic | None = None) -> str:
    """Why a line is implicated in a divergence (the TracerWarning or TracingCheckError),
    preferring the one on the finding's own lines over one on its provenance chain."""
    found = [(real(p), int(ln), why) for p, ln, why in o.get("implicated", [])]
    if d is not None:
        span, prov = _span(d), _provenance(d)
        found = ([f for f in found if f[:2] in span] or [f for f in found if f[:2] in prov])
    return f" — {found[0][2]}" if found else ""


def _warning_text(d: Diagnostic, o: dict) -> str:
    """The TracerWarning tied to ``d`` (on its lines or its provenance chain)."""
    near = _span(d) | _provenance(d)
    texts = [w["message"] for w in o.get("warnings", []) if (real(w["path"]), int(w["line"])) in near]
    text = (texts or [w["message"] for w in o.get("warnings", [])] or ["TracerWarning"])[0]
    return "TracerWarning: " + text.split(". ")[0]


def _rows(where: str, result: dict) -> list[dict[str, Any]]:
    model = result.get("model") or where
    rows = [{"model": model, "path": where, "exporter": o["exporter"], "status": o["status"],
             "phase": o.get("phase"), "exception": o.get("exception"),
             "message": (o.get("message") or None), "seconds": o.get("seconds"),
             "max_abs_diff": o.get("max_abs_diff"), "settings": o.get("settings"),
             "wrote": result.get("wrote", [])}
            for o in result.get("exporters") or []]
    err = result.get("error")
    if err:
        rows.append({"model": model, "path": where, "exporter": "setup", "status": "error",
                     "phase": err["kind"], "exception": err.get("exception"),
                     "message": err["message"], "seconds": None, "max_abs_diff": None,
                     "settings": None, "wrote": result.get("wrote", [])})
    return rows
