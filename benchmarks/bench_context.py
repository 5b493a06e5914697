"""What finding the export context costs, next to the static pass it is part of.

    python benchmarks/bench_context.py [--packages timm transformers] [--rounds 3]

On the unpacked wheels (fetched like ``bench_static.py``), in one process, alternating rounds:
(1) site discovery and resolution over every file (``exportlint.runner.export_context``: what a
lint run adds), (2) the whole static pass (``exportlint --no-cache --format json``, the real CLI,
``--jobs 1`` so that both measure one core).  Prints a Markdown table with the median of each and
their ratio (target: discovery ≤ 5 % of the static pass), and the sites found.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_static import fetch  # noqa: E402


def discovery_seconds(files: list[Path]) -> tuple[float, int, int]:
    from exportlint.config import Settings
    from exportlint.runner import _make_project, export_context

    texts = {str(p): p.read_text(encoding="utf-8", errors="replace") for p in files}
    start = time.perf_counter()
    context = export_context(texts, Settings(), _make_project(list(texts)))
    elapsed = time.perf_counter() - start
    return elapsed, len(context.sites), sum(1 for s in context.sites if s.root is not None)


def lint_seconds(roots: list[Path]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "exportlint", "--no-cache", "--jobs", "1", "--format", "json", "--exit-zero",
         *map(str, roots)],
        check=True, stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", nargs="+", default=["timm", "transformers"])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    roots = [fetch(p) for p in args.packages]
    files = sorted(p for r in roots for p in r.rglob("*.py"))
    found: list[float] = []
    lint: list[float] = []
    sites = resolved = 0
    for _ in range(args.rounds):
        seconds, sites, resolved = discovery_seconds(files)
        found.append(seconds)
        lint.append(lint_seconds(roots))
    d, s = statistics.median(found), statistics.median(lint)
    print("| files | export calls found (resolved) | discovery (s) | static pass, 1 job (s) | ratio |")
    print("|---|---|---|---|---|")
    print(f"| {len(files)} | {sites} ({resolved}) | {d:.2f} | {s:.1f} | {d / s:.1%} |")


if __name__ == "__main__":
    main()
