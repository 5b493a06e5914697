"""Modules of one linted project that other linted modules build.

In library mode (no export call names the roots) every module is analysed, and one that another
module of its own file builds and calls is analysed through that call, on the values the caller
passes (dataflow.Interpreter.run).  Across files each file's run only sees its own modules, so a
part built in another file (timm's layers, a detector's heads, anomalib's anomaly generator) is
also analysed on its own, on inputs nothing shows: channel dims taken for dynamic ones, a list
taken for a tensor, code its builder only calls while training.  Each run therefore says which
modules of other files its modules called (``~reached``) or built and never called (``~unused``), and
each finding says which modules' lone analyses found it (``Diagnostic.alone``); the driver, which sees
every file's results, keeps what a caller's values showed:

- a finding only lone analyses of called modules found is dropped (the callers' analyses report that
  code on their values, like a part of the same file);
- one only found alone in modules their builders never call from forward is lowered to info, naming
  the builder (as a part of the same file is).
"""

from __future__ import annotations

from exportlint.diagnostics import Diagnostic, Severity, Target

REACHED = "~reached"
UNUSED = "~unused"
_MARKERS = (REACHED, UNUSED)

# How a finding of a module its builder never calls says so (engine, and here across files)
UNUSED_HINT = "{unused}: only code outside it (generation, post-processing) or an export of this module alone runs this line"


def part_markers(path: str, target: Target, reached: set[str], unused: dict[str, str]) -> list[Diagnostic]:
    """The records of one file's run: the modules of other files it called, and the ones it built and
    never called (with how to say so)."""
    def marker(code: str, key: str, text: str = "") -> Diagnostic:
        return Diagnostic(path=path, line=1, column=1, end_line=1, end_column=1, code=code, name="",
                          severity=Severity.INFO, target=target, message=key, hint=text)

    return [marker(REACHED, k) for k in sorted(reached)] + [marker(UNUSED, k, t) for k, t in sorted(unused.items())]


def is_marker(d: Diagnostic) -> bool:
    return d.code in _MARKERS


def resolve_parts(raw: dict[str, list[Diagnostic]]) -> None:
    """Take the records out of every file's results and apply them (see the module docstring)."""
    reached: set[str] = set()
    unused: dict[str, str] = {}
    for diagnostics in raw.values():
        for d in diagnostics:
            if d.code == REACHED:
                reached.add(d.message)
            elif d.code == UNUSED:
                unused.setdefault(d.message, d.hint)
    for path, diagnostics in raw.items():
        kept = []
        for d in diagnostics:
            if is_marker(d):
                continue
            roots = d.alone.split("\n") if d.alone else []
            if roots and all(r in reached for r in roots):
                continue
            lone = [r for r in roots if r not in reached]
            if lone and all(r in unused for r in lone) and d.severity is not Severity.INFO:
                d.severity = Severity.INFO
                d.hint += "; " + UNUSED_HINT.format(unused=unused[lone[0]])
            kept.append(d)
        raw[path] = kept
