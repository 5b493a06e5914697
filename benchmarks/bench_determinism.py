"""Byte-identical output on real code: ``--jobs 1`` vs ``--jobs 2``, cold vs warm cache, and from
another working directory.

    python benchmarks/bench_determinism.py [--packages torchvision timm transformers] [--format json] [--code DIR]

Downloads the wheels (``pip download --no-deps``, like ``bench_static.py``, cached under
``$EXPORTLINT_BENCH_CACHE``), then lints each package's sources with the real CLI:

1. ``--no-cache --jobs 1``;  2. ``--no-cache --jobs 2``;
3. a fresh cache directory, ``--jobs 2`` (cold);  4. the same again (warm: every file cached);
5. ``--no-cache --jobs 2`` run from the package's parent directory (paths gain that prefix,
   which is removed before comparing).

Prints one row per package with the files, findings, seconds of each run and whether each output
is byte-identical to run 1; exits 1 if any differs (and writes the differing outputs to /tmp).
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_static import fetch  # noqa: E402


CODE = ROOT  # the exportlint sources to run (--code: e.g. an older checkout, for a before/after)


def lint(paths: list[str], cwd: Path, fmt: str, extra: list[str], cache: Path | None) -> tuple[bytes, float]:
    env = dict(os.environ, PYTHONPATH=str(CODE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if cache is not None:
        env["EXPORTLINT_CACHE_DIR"] = str(cache)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "exportlint", "--format", fmt, "--exit-zero", *extra, *paths],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    if proc.returncode != 0:
        raise SystemExit(f"exportlint failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return proc.stdout, time.monotonic() - start


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--packages", nargs="+", default=["torchvision", "timm", "transformers"])
    p.add_argument("--format", default="json")
    p.add_argument("--code", type=Path, default=ROOT, help="the exportlint checkout to run (default: this one)")
    args = p.parse_args()
    global CODE
    CODE = args.code.resolve()
    failures = 0
    print("| package | files | findings | jobs 1 s | jobs 2 s | cold s | warm s | other cwd s | identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    for package in args.packages:
        base = fetch(package)
        top = sorted(d.name for d in base.iterdir() if d.is_dir() and not d.name.endswith((".dist-info", ".data")))
        files = sum(1 for d in top for _ in (base / d).rglob("*.py"))
        runs: dict[str, tuple[bytes, float]] = {}
        runs["jobs1"] = lint(top, base, args.format, ["--no-cache", "--jobs", "1"], None)
        runs["jobs2"] = lint(top, base, args.format, ["--no-cache", "--jobs", "2"], None)
        with tempfile.TemporaryDirectory() as cache:
            runs["cold"] = lint(top, base, args.format, ["--jobs", "2"], Path(cache))
            runs["warm"] = lint(top, base, args.format, ["--jobs", "2"], Path(cache))
        prefixed = [f"{base.name}/{d}" for d in top]
        out, seconds = lint(prefixed, base.parent, args.format, ["--no-cache", "--jobs", "2"], None)
        # JSON strings only: the paths, and another file's path named in a hint ("stops earlier ... at <path>:N")
        runs["cwd"] = (out.replace(f'"{base.name}/'.encode(), b'"').replace(f' {base.name}/'.encode(), b' '), seconds)
        reference = runs["jobs1"][0]
        same = {name: out == reference for name, (out, _) in runs.items()}
        for name, ok in same.items():
            if not ok:
                failures += 1
                dump = Path(tempfile.gettempdir()) / f"determinism-{package}-{name}.{args.format}"
                dump.write_bytes(runs[name][0])
                (dump.with_name(f"determinism-{package}-jobs1.{args.format}")).write_bytes(reference)
        findings = len(json.loads(reference)) if args.format == "json" else "-"
        print(f"| {package} | {files} | {findings} | " + " | ".join(f"{runs[n][1]:.0f}" for n in runs)
              + f" | {'yes' if all(same.values()) else 'NO: ' + ', '.join(n for n, ok in same.items() if not ok)} |",
              flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
