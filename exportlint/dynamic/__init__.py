"""The dynamic pass: run the real exporters on the model and judge every static finding.

Parent-side API (never imports torch; the exporters run in a worker process):

* :class:`DynamicOptions` — model, inputs, dynamic dims, timeout, memory cap, strict, target,
  summary JSON path and the raw ``[tool.exportlint.dynamic]`` table;
* :func:`run_dynamic` — sets ``Diagnostic.dynamic`` on every finding, appends EXL090/EXL091
  findings, returns the per-exporter summary rows;
* :func:`render_summary` — the rich table of those rows.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from exportlint.diagnostics import FileReport
from exportlint.dynamic.options import DynamicOptions, DynamicOptionsError, plan_jobs
from exportlint.dynamic.process import run_jobs, signals_clean_up
from exportlint.dynamic.summary import render_summary, spinner
from exportlint.dynamic.verdicts import Judge

__all__ = ["DynamicOptions", "DynamicOptionsError", "run_dynamic", "render_summary"]


def run_dynamic(reports: list[FileReport], options: DynamicOptions,
                progress: Callable[[str], None] | bool | None = None, context: Any = None) -> list[dict[str, Any]]:
    """Run the exporters of ``options.target`` on each model file and judge the findings.

    Mutates ``reports``: every diagnostic gets ``.dynamic`` (``{status, exporter, message,
    max_abs_diff}``), "passes" lowers its severity one step, and new EXL090/EXL091 findings are
    added (to a new FileReport when the model file was not linted).  ``progress``: a callable
    receiving one-line status texts, ``False`` for none, ``None`` for a spinner on stderr when
    stderr is a terminal.  Raises :class:`DynamicOptionsError` for usage errors only (malformed
    options, torch missing, summary JSON not writable); what goes wrong with the user's model
    becomes diagnostics and rows.  ``context``: the lint run's export context; its export calls
    say which models to build and with which inputs when no model is given.
    """
    opts = options.resolved()
    _check_environment(options.summary_json)
    jobs = plan_jobs(reports, opts, context)
    judge = Judge(reports, options.target)
    with signals_clean_up(), tempfile.TemporaryDirectory(prefix="exportlint-dynamic-") as tmp, \
            _progress(progress) as say:
        workdir = Path(tmp)
        for job in jobs:
            (workdir / job.id / "cwd").mkdir(parents=True)
        settings = {
            "paths": sorted({str(Path(r.path).resolve()) for r in reports}),
            "memory": opts.memory, "seed": opts.seed, "atol": opts.atol, "rtol": opts.rtol,
        }
        payloads = [job.payload(opts, workdir) for job in jobs]
        results = run_jobs(payloads, settings, opts.timeout, workdir, say) if jobs else {}
        for job in jobs:  # what the model wrote in its working directory, a scratch one
            results[job.id]["wrote"] = sorted(
                str(p.relative_to(workdir / job.id / "cwd")) for p in (workdir / job.id / "cwd").rglob("*"))
    for job in jobs:
        judge.add_run(job.where, job.file, results[job.id])
    rows = judge.finish()
    if options.summary_json:
        try:
            Path(options.summary_json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise DynamicOptionsError(f"cannot write {options.summary_json}: {exc.strerror or exc}") from None
    return rows


def _check_environment(summary_json: str | None) -> None:
    """Usage errors that are cheaper to report before the worker starts."""
    if summary_json and not Path(summary_json).resolve().parent.is_dir():
        raise DynamicOptionsError(f"cannot write {summary_json}: its folder does not exist")
    if importlib.util.find_spec("torch") is None:
        raise DynamicOptionsError("the dynamic pass needs torch (and onnx, onnxscript, onnxruntime): "
                                  "pip install 'exportlint[dynamic]'")


def _progress(progress: Callable[[str], None] | bool | None):  # noqa: ANN202 - a context manager
    if callable(progress):
        return _Passthrough(progress)
    if progress is None and sys.stderr.isatty():
        return spinner()
    return _Passthrough(None)


class _Passthrough:
    def __init__(self, fn: Callable[[str], None] | None) -> None:
        self.fn = fn

    def __enter__(self) -> Callable[[str], None] | None:
        return self.fn

    def __exit__(self, *exc: object) -> None:
        return None
