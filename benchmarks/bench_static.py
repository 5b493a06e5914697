"""Static-pass throughput next to bare ``libcst.parse_module``, measured side by side.

    python benchmarks/bench_static.py [--jobs N] [--rounds R] [--packages timm==1.0.31 transformers==5.23.0] [--small-only]

Downloads the wheels of the packages with ``pip download --no-deps`` (not installed), lints all
their ``.py`` files with the real CLI (``exportlint --no-cache --format json``) and parses the same
files with ``libcst.parse_module`` in a pool of the same number of processes; rounds alternate
between the two so that machine noise hits both.  Also times linting one small file (interpreter
start included) next to ``python -c "import libcst"``.  Prints a Markdown table; the run fails if
any file gave EXL901 or the linter crashed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("EXPORTLINT_BENCH_CACHE", Path(tempfile.gettempdir()) / "exportlint-bench"))
SMALL_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "clean_cnn.py"


def fetch(spec: str) -> Path:
    """Unpacked wheel of ``spec`` (`name==version`, or a bare name for the newest; downloaded once into
    the cache)."""
    package = spec.split("==")[0]
    dest = CACHE / spec.replace("==", "-")
    if dest.is_dir() and any(dest.rglob("*.py")):
        return dest
    wheels = CACHE / "wheels" / spec.replace("==", "-")  # one folder per version: other benchmarks cache others
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), spec],
        check=True,
    )
    (wheel,) = [w for w in wheels.glob("*.whl") if w.name.split("-")[0].lower() == package.replace("-", "_").lower()]
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(dest)
    return dest


def _parse_chunk(paths: list[str], tuned_gc: bool = False) -> int:
    import libcst

    if tuned_gc:
        from exportlint.runner import tune_gc

        tune_gc()

    n = 0
    for p in paths:
        with open(p, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        try:
            libcst.parse_module(text)
        except Exception:
            pass
        n += 1
    return n


def parse_only(files: list[str], jobs: int, tuned_gc: bool = False) -> float:
    """Wall seconds to read and parse every file in ``jobs`` fresh processes (chunked)."""
    chunks = [files[i::jobs * 8] for i in range(jobs * 8)]
    start = time.perf_counter()
    with mp.get_context("spawn").Pool(jobs) as pool:
        pool.starmap(_parse_chunk, [(c, tuned_gc) for c in chunks], chunksize=1)
    return time.perf_counter() - start


def lint(roots: list[Path], jobs: int) -> tuple[float, list[dict]]:
    cmd = [sys.executable, "-m", "exportlint", "--no-cache", "--format", "json", "--exit-zero", "--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.run(cmd + [str(r) for r in roots], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"exportlint crashed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, json.loads(proc.stdout)


def wall(cmd: list[str], runs: int = 7) -> float:
    """Median wall time of ``cmd``, as an installed package runs: with bytecode caches (pip writes
    them at install time; a PYTHONDONTWRITEBYTECODE environment would recompile every module on
    every run), after one warm-up run that writes them."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(cmd, check=False, capture_output=True, env=env)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=False, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def small_file() -> tuple[float, float]:
    """(exportlint on one small file, `import libcst`): wall seconds incl. interpreter start."""
    return wall([sys.executable, "-m", "exportlint", "--no-cache", str(SMALL_FILE)]), wall([sys.executable, "-c", "import libcst"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=2)
    # pinned to the main audit corpus's versions, so that rounds of work compare the same files
    ap.add_argument("--packages", nargs="+", default=["timm==1.0.31", "transformers==5.23.0"])
    ap.add_argument("--small-only", action="store_true", help="only time one small file (seconds, not minutes)")
    args = ap.parse_args()
    if args.small_only:
        small_lint, small_import = small_file()
        print(f"| one small file ({SMALL_FILE.name}), median of 7 | `import libcst` {small_import:.3f} s | `exportlint` {small_lint:.3f} s |")
        return

    roots = [fetch(p) for p in args.packages]
    files = sorted(str(p) for r in roots for p in r.rglob("*.py"))
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    print(f"corpus: {', '.join(args.packages)}: {len(files)} files, {lines} lines; {args.jobs} processes", flush=True)

    parse_t, tuned_t, lint_t = [], [], []
    diags: list[dict] = []
    for r in range(args.rounds):
        parse_t.append(parse_only(files, args.jobs))
        t, diags = lint(roots, args.jobs)
        lint_t.append(t)
        tuned_t.append(parse_only(files, args.jobs, tuned_gc=True))
        print(
            f"round {r + 1}: parse-only {parse_t[-1]:.1f} s, exportlint {lint_t[-1]:.1f} s, "
            f"parse-only with exportlint's GC setting {tuned_t[-1]:.1f} s",
            flush=True,
        )
    p, l, pt = statistics.median(parse_t), statistics.median(lint_t), statistics.median(tuned_t)
    internal = [d for d in diags if d["code"] == "EXL901"]

    small_lint, small_import = small_file()

    print()
    print("| measure | libcst.parse_module only | exportlint | ratio |")
    print("|---|---|---|---|")
    print(f"| files/s | {len(files) / p:.0f} | {len(files) / l:.0f} | {p / l:.2f} |")
    print(f"| lines/s | {lines / p:.0f} | {lines / l:.0f} | {p / l:.2f} |")
    print(f"| wall, whole corpus | {p:.1f} s | {l:.1f} s | |")
    print()
    print(
        f"exportlint raises the cyclic GC's threshold while analyzing; parse-only with the same setting: "
        f"{pt:.1f} s, {lines / pt:.0f} lines/s (ratio exportlint / that: {pt / l:.2f})"
    )
    print()
    print(f"| one small file ({SMALL_FILE.name}), wall incl. interpreter start | `python -c 'import libcst'` | `exportlint` |")
    print("|---|---|---|")
    print(f"| median of 7 | {small_import:.3f} s | {small_lint:.3f} s |")
    print()
    counts: dict[str, int] = {}
    for d in diags:
        counts[d["code"]] = counts.get(d["code"], 0) + 1
    print(f"findings: {dict(sorted(counts.items()))}")
    print(f"EXL901 internal errors: {len(internal)}")
    for d in internal[:10]:
        print(f"  {d['path']}: {d['message']}")
    if internal:
        sys.exit(1)


if __name__ == "__main__":
    main()
