"""The dynamic pass's worker process: ``python -m exportlint.dynamic.child JOBS EVENTS``.

Reads the jobs (one per model file) from the JSON file JOBS, runs them in order and appends
one JSON object per line to EVENTS (``ready``, ``start``, ``phase``, ``exporter``, ``done``),
flushed as it goes so the parent sees how far it got when this process hangs or dies.
The user's prints go to this process's stdout/stderr, which the parent captures.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any


class Events:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def emit(self, **event: Any) -> None:
        event["time"] = round(time.time(), 3)
        os.write(self.fd, (json.dumps(event, default=str) + "\n").encode())


def limit_memory(limit: int | None) -> None:
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_job(job: dict, settings: dict, events: Events) -> dict:
    import torch

    from exportlint.dynamic import exporters, harness
    from exportlint.dynamic.locate import UserFiles

    files = UserFiles(settings["paths"] + [p for p in [job.get("file")] if p])
    harness.set_user_files(files)
    result: dict[str, Any] = {"error": None, "model": None, "forward": None, "inputs": None,
                              "executed": {}, "exporters": []}
    recorder = harness.LineRecorder(files)
    os.chdir(Path(job["workdir"]) / "cwd")  # what the model writes lands in a scratch directory
    try:
        torch.manual_seed(settings["seed"])
        with recorder:
            module = harness.load_module(job["target"], Path(job["base"]))
            model, factory_inputs, how = harness.resolve_model(module, job["attr"], job["where"])
            model.eval()
            files.paths.add(os.path.realpath(module.__file__ or job["target"]))
            result["model"] = how
            result["forward"] = harness.forward_location(model, files)
            inputs = harness.make_inputs(model, module, factory_inputs, job["inputs"], job["inputs_source"])
            harness.check_signature(model, inputs)
            dims = harness.resolve_dims(job["dims"], model, inputs)
            inputs = harness.widen_example(inputs, dims)
            harness.run_eager(model, inputs, f"the example input ({inputs.source})")
        second, eager_second = _second(model, inputs, dims, settings["seed"] + 1)
        result["inputs"] = _describe(inputs, second)
        events.emit(event="model", job=job["id"], model=result["model"], forward=result["forward"],
                    inputs=result["inputs"], executed=recorder.to_json())
        ctx = exporters.Context(model, inputs, second, harness.leaves(eager_second),
                                harness.param_names(model, inputs), dims, files,
                                Path(job["workdir"]), settings["atol"], settings["rtol"],
                                harness.containers(eager_second))
        for exporter in job["exporters"]:
            events.emit(event="phase", job=job["id"], exporter=exporter)
            outcome = exporters.run(exporter, ctx)
            result["exporters"].append(outcome)
            events.emit(event="exporter", job=job["id"], result=outcome)
    except harness.SetupError as err:
        result["error"] = {"kind": err.kind, "message": err.message, "exception": err.exception,
                           "points": [list(p) for p in err.points]}
    result["executed"] = recorder.to_json()
    return result


def _second(model, inputs, dims, seed):  # noqa: ANN001, ANN202 - torch types stay in the child
    """The second input and eager's answer on it; fall back to same sizes, then to the example."""
    from exportlint.dynamic import harness

    tries = [(True, "new values, dynamic dims resized"), (False, "new values, same sizes")]
    errors = []
    for new_sizes, kind in tries if dims else tries[1:]:
        second = harness.second_input(inputs, dims, seed, new_sizes)
        try:
            out = harness.run_eager(model, second, "the second input")
        except harness.SetupError as err:
            errors.append(err.message)
            continue
        second.source = kind
        second.notes = errors
        return second, out
    fallback = harness.Inputs(inputs.args, inputs.kwargs, "the example itself (eager rejected "
                              "every second input it was given)", errors)
    return fallback, harness.run_eager(model, fallback, "the example input")


def _describe(example, second) -> dict:  # noqa: ANN001
    from exportlint.dynamic.harness import leaves

    def shapes(inp) -> list:  # noqa: ANN001
        return [list(t.shape) for t in leaves((inp.args, inp.kwargs))]
    return {"source": example.source, "shapes": shapes(example), "second": second.source,
            "resized": shapes(example) != shapes(second),
            "second_shapes": shapes(second), "notes": example.notes + second.notes}


def main(argv: list[str]) -> int:
    jobs_file, events_file = argv
    settings = json.loads(Path(jobs_file).read_text())
    events = Events(events_file)
    limit_memory(settings.get("memory"))
    try:
        import torch
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        events.emit(event="fatal", message=f"importing torch failed: {type(exc).__name__}: {exc}")
        return 3
    events.emit(event="ready", torch=torch.__version__)
    for job in settings["jobs"]:
        events.emit(event="start", job=job["id"])
        os.write(2, f"\n=== exportlint: {job['where']} ===\n".encode())
        try:
            result = run_job(job, settings, events)
        except BaseException as exc:  # noqa: BLE001 - user code raising SystemExit & co.
            result = {"error": {"kind": "internal", "exception": type(exc).__name__,
                                "message": f"the dynamic pass stopped: {type(exc).__name__}: {exc}",
                                "points": []}, "executed": {}, "exporters": []}
        events.emit(event="done", job=job["id"], result=result)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skip the interpreter's teardown of torch & co. (seconds, nothing to save)
