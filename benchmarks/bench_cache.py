"""Clean-file cache: a cold run versus a warm (cached) re-run of the same unchanged tree.

Corpus: the repository's ``fixtures/`` and, with ``--timm`` (default on), the ``.py`` files of the
timm wheel (``pip download --no-deps timm``, unzipped, not installed).  Every run is the real
command line (``python -m exportlint --format json --output-file …``, interpreter start
included) with its own ``EXPORTLINT_CACHE_DIR``:

* cold: an empty cache directory (median of ``--cold-runs`` fresh directories);
* warm: the same command again on the unchanged tree (median of ``--warm-runs``);
* one file edited: a comment appended to one fixture file that no other file imports, then the
  same command (what a pre-commit hook or CI pays after a small edit).

The package under test is a snapshot of this checkout's ``exportlint/`` (first on
``PYTHONPATH``), so that edits to the working tree during the run cannot invalidate the cache,
whose key includes a fingerprint of exportlint's own source.

Target (issue 4): warm ≥ 10× faster than cold.  Prints a table and one JSON line with the figures.

    python benchmarks/bench_cache.py [--no-timm] [--cold-runs 3] [--warm-runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def download_timm(into: Path) -> Path:
    """The ``timm`` package directory of the downloaded wheel (sources only, never imported)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q", "timm", "-d", str(into)],
        check=True, timeout=600,
    )
    wheel = next(into.glob("timm-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extractall(into / "unpacked")
    return into / "unpacked" / "timm"


def count(paths: list[Path]) -> tuple[int, int]:
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*.py"))]
    lines = sum(len(f.read_bytes().splitlines()) for f in files)
    return len(files), lines


def snapshot(into: Path) -> Path:
    """A frozen copy of the package (and its rule docs) to run instead of the working tree."""
    shutil.copytree(REPO / "exportlint", into / "exportlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", into / "rules")
    return into


def lint(paths: list[Path], cache_dir: Path, out: Path, source: Path) -> float:
    env = {**os.environ, "EXPORTLINT_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(source)}
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "exportlint", "--format", "json", "--output-file", str(out), *map(str, paths)],
        env=env, capture_output=True, text=True, timeout=3600,
    )
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1):
        raise SystemExit(f"exportlint failed ({result.returncode}):\n{result.stderr}")
    return elapsed


def findings(out: Path) -> list[tuple]:
    """What a run found: (path, line, column, code) of every diagnostic, in output order."""
    return [(d["path"], d["line"], d["column"], d["code"]) for d in json.loads(out.read_text())]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-timm", dest="timm", action="store_false", help="fixtures only")
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="exportlint-bench-cache-") as tmp_name:
        tmp = Path(tmp_name)
        corpus = tmp / "corpus"
        shutil.copytree(REPO / "fixtures", corpus / "fixtures")
        if args.timm:
            shutil.copytree(download_timm(tmp / "timm"), corpus / "timm")
        source = snapshot(tmp / "src")
        paths = [corpus]
        files, lines = count(paths)
        out = tmp / "out.json"

        cold = [lint(paths, tmp / f"cache{i}", out, source) for i in range(args.cold_runs)]
        first = findings(out)
        warm = [lint(paths, tmp / f"cache{args.cold_runs - 1}", out, source) for _ in range(args.warm_runs)]
        same = findings(out) == first

        edited = sorted((corpus / "fixtures").glob("*.py"))[0]  # a leaf: no other file imports it
        edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        one_edit = lint(paths, tmp / f"cache{args.cold_runs - 1}", out, source)

    figures = {
        "files": files, "lines": lines,
        "cold_s": round(statistics.median(cold), 3),
        "warm_s": round(statistics.median(warm), 3),
        "one_file_edited_s": round(one_edit, 3),
    }
    figures["speedup"] = round(figures["cold_s"] / figures["warm_s"], 1)
    figures["target_10x_met"] = figures["speedup"] >= 10
    figures["warm_findings_identical"] = same
    print(f"corpus: {files} files, {lines} lines ({'fixtures + timm' if args.timm else 'fixtures'})")
    print(f"cold run (empty cache), median of {len(cold)}: {figures['cold_s']:.3f} s  {sorted(round(c, 3) for c in cold)}")
    print(f"warm run (unchanged),   median of {len(warm)}: {figures['warm_s']:.3f} s  {sorted(round(w, 3) for w in warm)}")
    print(f"after editing one file:                {figures['one_file_edited_s']:.3f} s")
    print(f"warm run reports the same findings as the cold run: {'yes' if same else 'NO'}")
    print(f"speedup warm vs cold: {figures['speedup']}x (target >= 10x: {'met' if figures['target_10x_met'] else 'NOT met'})")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
