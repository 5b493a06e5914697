"""Per-file time and memory on generated pathological sources, and more hypothesmith examples
than CI runs.

    python benchmarks/bench_pathological.py [--sizes 250 500 10000] [--big-mb 9.5]
        [--timeout 120] [--examples 2000] [--only NAME-SUBSTRING] [--code DIR]

Each generated file (``tests/pathological.py``: huge sums, deep attribute / method chains,
long elif chains, f-strings, walrus statements, literal tables, form feeds, ...) is linted alone
with the real CLI (``python -m exportlint --no-cache --format json FILE``) in a subprocess; the
table gives wall time, peak RSS of that process, exit code and the codes reported.  A file
fails the benchmark when it takes longer than the per-file budget (README: "Per-file budget")
plus interpreter start-up slack, exceeds the memory bound, gives EXL901, gives EXL900 although
CPython parses it, or gives neither findings nor a "too complex" diagnostic on a forward the
analysis should read.  Also a valid ~9.5 MB file (a real model file repeated) and a
50,000-term sum.  ``--examples`` runs the hypothesmith property of
``tests/test_robustness_hypothesis.py`` with that many examples.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from pathological import big_sum, cases as pathological_cases, corpus, parses, repeated  # noqa: E402

# Bounds asserted per file: the documented analysis budget plus start-up and parse slack.
MAX_SECONDS = 60.0
MAX_RSS_MB = 1500.0
CODE = ROOT  # the exportlint sources to run (--code: e.g. an older checkout, for a before/after)


# Runs the CLI and reports its own peak RSS (VmHWM: this process only, after exec) on stderr.
_CHILD = (
    "import atexit, runpy, sys\n"
    "def hwm():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            sys.stderr.write('\\nVmHWM ' + line.split()[1] + '\\n')\n"
    "atexit.register(hwm)\n"
    "sys.argv[0] = 'exportlint'\n"
    "runpy.run_module('exportlint', run_name='__main__')\n"
)


def lint_one(path: Path, timeout: float) -> dict:
    """Run the CLI on one file; wall time, peak RSS (MB), exit code, codes."""
    env = dict(os.environ, PYTHONPATH=str(CODE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, "--no-cache", "--format", "json", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        cwd=path.parent,  # not this checkout: `python -c` imports from the working directory first
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"seconds": timeout, "rss_mb": float("nan"), "rc": "hang", "codes": [], "messages": []}
    seconds = time.monotonic() - start
    stderr = err.decode(errors="replace")
    rss = float("nan")
    if "VmHWM " in stderr:
        stderr, _, kb = stderr.rpartition("VmHWM ")
        rss = int(kb.split()[0]) / 1024
    try:
        diagnostics = json.loads(out)
    except ValueError:
        diagnostics = []
    return {
        "seconds": seconds, "rss_mb": rss, "rc": proc.returncode,
        "codes": sorted({d["code"] for d in diagnostics}),
        "messages": [d["message"] for d in diagnostics if d["code"] in ("EXL900", "EXL901")],
        "stderr": stderr.strip()[-300:],
    }


def verdict(name: str, parses: bool, row: dict) -> str:
    codes = set(row["codes"])
    if row["rc"] == "hang":
        return "HANG"
    if isinstance(row["rc"], int) and row["rc"] not in (0, 1):
        return f"CRASH rc={row['rc']}"
    if "EXL901" in codes:
        return "EXL901"
    if parses and "EXL900" in codes:
        return "FALSE EXL900"
    if not parses and "EXL900" not in codes:
        return "MISSED EXL900"
    if row["seconds"] > MAX_SECONDS:
        return "SLOW"
    if row["rss_mb"] == row["rss_mb"] and row["rss_mb"] > MAX_RSS_MB:
        return "MEMORY"
    return "ok"


def real_model_text() -> str:
    for candidate in ("torchvision/models/resnet.py", "timm/models/resnet.py"):
        for base in (Path(tempfile.gettempdir()) / "exportlint-bench",):
            for path in base.glob(f"*/{candidate}"):
                return path.read_text()
    return (ROOT / "fixtures" / "clean_cnn.py").read_text()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 10_000])
    p.add_argument("--big-mb", type=float, default=9.5)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--examples", type=int, default=0)
    p.add_argument("--only", default="")
    p.add_argument("--code", type=Path, default=ROOT, help="the exportlint checkout to run (default: this one)")
    args = p.parse_args()
    global CODE
    CODE = args.code.resolve()
    cases = [(n, s, ok) for n, s, ok in corpus(tuple(args.sizes))]
    cases.append(("sum_50000_module", big_sum(50_000), False))
    cases += [(n, s, True) for n, s in pathological_cases(50_000) if n.startswith("dict_literal")]
    big = repeated(real_model_text(), int(args.big_mb * 1e6))
    cases.append((f"real_model_repeated_{args.big_mb}MB", big, parses(big)))
    failures = 0
    rows: list[dict] = []
    print("| file | CPython parses | seconds | peak RSS MB | exit | codes | verdict |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, source, ok in cases:
            if args.only and args.only not in name:
                continue
            path = Path(tmp) / f"{name}.py"
            path.write_text(source)
            row = lint_one(path, args.timeout)
            rows.append(row)
            v = verdict(name, ok, row)
            failures += v != "ok"
            print(f"| {name} | {ok} | {row['seconds']:.1f} | {row['rss_mb']:.0f} | {row['rc']} | "
                  f"{' '.join(row['codes'])} | {v} |", flush=True)
            if v != "ok":
                print(f"|   | {'; '.join(row['messages'])[:160]} {row.get('stderr', '')[-160:]!r} |||||", flush=True)
    if args.examples:
        env = dict(os.environ, EXPORTLINT_HYPOTHESIS_EXAMPLES=str(args.examples))
        start = time.monotonic()
        rc = subprocess.call(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             str(ROOT / "tests" / "test_robustness_hypothesis.py")], env=env, cwd=ROOT,
        )
        print(f"\nhypothesmith: {args.examples} examples per property, exit {rc}, "
              f"{time.monotonic() - start:.0f} s")
        failures += rc != 0
    print(f"\n{len(rows)} files; slowest {max(r['seconds'] for r in rows):.1f} s, "
          f"largest peak RSS {max(r['rss_mb'] for r in rows if r['rss_mb'] == r['rss_mb']):.0f} MB; "
          f"{failures} file(s) outside the bounds")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
