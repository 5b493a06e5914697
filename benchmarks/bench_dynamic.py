"""Wall time of the dynamic pass against calling the same exporters directly, same models, same run.

    python benchmarks/bench_dynamic.py [--target export|trace] [--repeat 2] [FILE ...]

"direct" is a plain script in a fresh process: import torch, then per model build(),
example_inputs(), eager on the example and on a second input, the target's exporters, the
artifact on the second input, and a comparison with eager (for ONNX: save, onnx.checker,
onnxruntime).  "dynamic" is ``run_dynamic`` on the same files (worker process included).
The two are interleaved ``--repeat`` times; the medians and the median per-round ratio are
printed (per-round ratios are steadier on a shared machine).
Target: ratio <= 1.3.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from exportlint.diagnostics import FileReport, Target  # noqa: E402
from exportlint.dynamic import DynamicOptions, run_dynamic  # noqa: E402

DEFAULT_MODELS = ["clean_cnn.py", "detection_postprocess.py", "faster_rcnn_like.py",
                  "rnn_greedy_decoder.py", "trace_divergence.py", "video_frames.py",
                  "vit_interpolate_pos.py"]

DIRECT = r'''
import importlib.util, os, sys, tempfile, warnings
import torch

def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    spec.loader.exec_module(mod)
    return mod

def flat(x):
    return [t for t in torch.utils._pytree.tree_leaves(x) if isinstance(t, torch.Tensor)]

def diff(got, want):
    return max(((torch.as_tensor(g).double() - w.double()).abs().max().item()
                for g, w in zip(got, want) if w.numel()), default=0.0)

def onnx_run(path, args):
    import onnx, onnxruntime as ort
    onnx.checker.check_model(path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)}
    return [torch.from_numpy(o) for o in sess.run(None, feed)]

def attempt(fn):
    try:
        return fn()
    except Exception as exc:
        return exc

target, tmp, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
for path in paths:
    mod = load(path)
    torch.manual_seed(0)
    model = mod.build().eval()
    args = tuple(mod.example_inputs())
    second = tuple(-a * (0.5 + torch.rand(a.shape)) if a.is_floating_point() else a for a in args)
    with torch.no_grad():
        out = model(*args)
        want = flat(model(*second))
    # jit.trace's strict=False for dict / list outputs, as users (and the dynamic pass) pass it
    strict = not (isinstance(out, (dict, list)) or
                  isinstance(out, tuple) and any(isinstance(o, (dict, list)) for o in out))
    if target == "export":
        def ep_run():
            ep = torch.export.export(model, args)
            return diff(flat(ep.module()(*second)), want)
        def dynamo_run():
            f = os.path.join(tmp, "m.onnx")
            torch.onnx.export(model, args, f, dynamo=True, verbose=False, external_data=False)
            return diff(onnx_run(f, second), want)
        results = [attempt(ep_run), attempt(dynamo_run)]
    else:
        def trace_run():
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                traced = torch.jit.trace(model, args, check_inputs=[second], strict=strict)
            return diff(flat(traced(*second)), want)
        def legacy_run():
            f = os.path.join(tmp, "l.onnx")
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                torch.onnx.export(model, args, f, dynamo=False)
            return diff(onnx_run(f, second), want)
        results = [attempt(trace_run), attempt(legacy_run)]
    print(os.path.basename(path), [type(r).__name__ if isinstance(r, Exception) else round(r, 6)
                                   for r in results])
sys.stdout.flush()
os._exit(0)  # no interpreter teardown, like the dynamic pass's worker: compare the work only
'''


def direct(paths: list[str], target: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "direct.py"
        script.write_text(DIRECT)
        start = time.perf_counter()
        subprocess.run([sys.executable, str(script), target, tmp, *paths], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - start


def dynamic(paths: list[str], target: str) -> tuple[float, list[dict]]:
    reports = [FileReport(p) for p in paths]
    start = time.perf_counter()
    rows = run_dynamic(reports, DynamicOptions(target=Target(target)), progress=False)
    return time.perf_counter() - start, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="export", choices=["export", "trace"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    paths = args.files or [str(ROOT / "fixtures" / n) for n in DEFAULT_MODELS]
    paths = [str(Path(p).resolve()) for p in paths if Path(p).is_file()]
    times_direct, times_dynamic = [], []
    for i in range(args.repeat):
        times_direct.append(direct(paths, args.target))
        seconds, rows = dynamic(paths, args.target)
        times_dynamic.append(seconds)
        print(f"round {i + 1}: direct {times_direct[-1]:.2f} s, dynamic pass {seconds:.2f} s, "
              f"ratio {seconds / times_direct[-1]:.2f}")
    print("rows:", ", ".join(f"{Path(r['path']).name}/{r['exporter']}={r['status']}" for r in rows))
    d, y = statistics.median(times_direct), statistics.median(times_dynamic)
    ratio = statistics.median(b / a for a, b in zip(times_direct, times_dynamic))
    print(f"{len(paths)} models, target {args.target}: median direct {d:.2f} s, dynamic pass "
          f"{y:.2f} s; median per-round overhead {ratio:.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
