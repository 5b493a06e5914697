"""What ``--fix`` does to real code, measured.

    python benchmarks/bench_fix.py fixtures [--out DIR]
    python benchmarks/bench_fix.py corpus [--wheels DIR] [--out DIR] [--unsafe] [--check-only]

``fixtures``: copies ``fixtures/`` twice to ``DIR``, applies ``exportlint --fix --unsafe-fixes`` to
one copy, runs the dynamic pass (real exporters, both targets) on both copies — and, for a changed
fixture listed in ``DYNAMIC_DIMS``, again with those input dims dynamic (the dynamic pass's second
input then has other sizes) — and prints per fixture and exporter the status before -> after.

``corpus``: unzips the timm 1.0.31, transformers 5.23.0 and torchvision 0.29.1 wheels
(``pip download --no-deps timm==1.0.31 transformers==5.23.0 torchvision==0.29.1 -d DIR``) into
two copies, then, side by side in one run, times ``exportlint`` (lint) on one copy and
``exportlint --fix-only`` on the other, both with a fresh cache directory and the same jobs;
counts the fixes per code; and checks that every changed file still parses and imports (a
fresh interpreter imports the module from the fixed copy, for every changed module that also
imports from the original copy).  Nothing under the repository is modified.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WHEELS = ("timm-1.0.31", "transformers-5.23.0", "torchvision-0.29.1")
PACKAGES = ("timm", "transformers", "torchvision")


def exportlint(*args: str, cwd: Path, cache: Path | None = None) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, PYTHONPATH=str(REPO), EXPORTLINT_CACHE_DIR=str(cache or Path(tempfile.mkdtemp())))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "exportlint", *args], cwd=cwd, env=env, capture_output=True, text=True)
    return proc, time.perf_counter() - start


def fixed_counts(output: str) -> Counter:
    """Codes fixed, from ``--show-fixes``' enumeration (``    3 × EXL042 (shape-specialisation)``)."""
    counts: Counter = Counter()
    for m in re.finditer(r"^\s+(\d+) × (EXL\d+)", output, re.M):
        counts[m.group(2)] += int(m.group(1))
    return counts


# ---------------------------------------------------------------------------------------------
# fixtures


# Fixtures whose inputs have dims a fix is about: also run with those dims dynamic (input:dim).
DYNAMIC_DIMS = {
    "vit_interpolate_pos.py": ["0:2", "0:3"],
    "dinov2_scale_factor.py": ["0:2", "0:3"],
    "yolo_detect_head.py": ["0:2", "0:3"],
}


def dynamic_rows(root: Path, target: str, only: str = ".", dims: list[str] = ()) -> dict[tuple[str, str], str]:
    summary = root / f"summary-{target}.json"
    summary.unlink(missing_ok=True)
    flags = [f"--dynamic-dim={d}" for d in dims]
    exportlint("--dynamic", "--no-cache", "-q", "--exit-zero", "--target", target, *flags,
               "--summary-json", str(summary), only, cwd=root)
    rows = json.loads(summary.read_text()) if summary.exists() else []
    return {(r["path"] + (" (dynamic " + ",".join(dims) + ")" if dims else ""), r["exporter"]): r["status"] for r in rows}


def fixtures(out: Path) -> None:
    root, original = out / "fixtures", out / "fixtures-original"
    for d in (root, original):
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(REPO / "fixtures", d, ignore=shutil.ignore_patterns("expected", "*.md", "__pycache__"))
    proc, _ = exportlint("--fix-only", "--unsafe-fixes", "--show-fixes", ".", cwd=root)
    print(proc.stdout.strip() or proc.stderr.strip())
    changed = [p.name for p in root.glob("*.py") if p.read_text() != (original / p.name).read_text()]
    before, after = {}, {}
    for target in ("export", "trace"):
        before[target] = dynamic_rows(original, target)
        after[target] = dynamic_rows(root, target)
        for name in changed:
            if name in DYNAMIC_DIMS:
                before[target].update(dynamic_rows(original, target, name, DYNAMIC_DIMS[name]))
                after[target].update(dynamic_rows(root, target, name, DYNAMIC_DIMS[name]))
    print(f"\n{'target':7} {'fixture':44} {'exporter':14} before -> after")
    for target in ("export", "trace"):
        for key in sorted(set(before[target]) | set(after[target])):
            b, a = before[target].get(key, "-"), after[target].get(key, "-")
            mark = "  FIXED" if b != "ok" and a == "ok" else ("  WORSE" if b == "ok" and a != "ok" else "")
            print(f"{target:7} {key[0]:44} {key[1]:14} {b} -> {a}{mark}")


# ---------------------------------------------------------------------------------------------
# corpus


def unzip(wheels: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for stem in WHEELS:
        [wheel] = list(wheels.glob(f"{stem}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(dest, [n for n in z.namelist() if n.split("/")[0] in PACKAGES])


def imports(root: Path, modules: list[str]) -> set[str]:
    """The modules of ``modules`` a fresh interpreter imports from ``root`` (timm and transformers
    from ``root``, everything else installed: the torchvision wheel's compiled ops are built for
    another torch, so torchvision modules are only parsed, not imported)."""
    view = Path(tempfile.mkdtemp())
    for package in ("timm", "transformers"):
        (view / package).symlink_to((root / package).resolve())
    code = (
        "import importlib, json, sys, warnings\nwarnings.simplefilter('ignore')\nok = []\n"
        "for m in json.loads(sys.argv[1]):\n"
        "    try:\n        importlib.import_module(m)\n        ok.append(m)\n"
        "    except BaseException:\n        pass\n"
        "print(json.dumps(ok))\n"
    )
    wanted = [m for m in modules if m.split(".")[0] != "torchvision"]
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(wanted)], cwd=view, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(view)), timeout=1800)
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def corpus(wheels: Path, out: Path, unsafe: bool, check_only: bool) -> None:
    original, copy = out / "original", out / "fixed"
    if not check_only:
        for d in (original, copy):
            shutil.rmtree(d, ignore_errors=True)
            unzip(wheels, d)
        texts = {p: p.read_text(encoding="utf-8") for p in copy.rglob("*.py")}
        lines = sum(t.count("\n") for t in texts.values())
        print(f"corpus: {len(texts)} files, {lines} lines ({', '.join(PACKAGES)})")
        lint, lint_s = exportlint("--exit-zero", "-q", *PACKAGES, cwd=original)
        flags = ["--fix-only", "--show-fixes"] + (["--unsafe-fixes"] if unsafe else [])
        fix, fix_s = exportlint(*flags, *PACKAGES, cwd=copy)
        print(f"lint: {lint_s:.1f} s   fix ({' '.join(flags)}): {fix_s:.1f} s   ratio {fix_s / lint_s:.2f}")
        counts = fixed_counts(fix.stdout + fix.stderr)
        print("fixes applied per code:", dict(sorted(counts.items())), "total", sum(counts.values()))
    changed = [p for p in copy.rglob("*.py") if p.read_bytes() != (original / p.relative_to(copy)).read_bytes()]
    broken = []
    for p in changed:
        try:
            ast.parse(p.read_text(encoding="utf-8"))
        except SyntaxError as e:
            broken.append(f"{p}: {e}")
    print(f"changed files: {len(changed)}; not parsing: {len(broken)}", *broken, sep="\n  ")
    modules = [".".join(p.relative_to(copy).with_suffix("").parts).removesuffix(".__init__") for p in changed]
    importable = imports(original, modules)
    still = imports(copy, sorted(importable))
    print(f"changed modules: {len(modules)} ({sum(m.startswith('torchvision') for m in modules)} torchvision, parsed only); "
          f"importable from the original: {len(importable)}; still importable after fixing: {len(still)}")
    for m in sorted(importable - still):
        print("  no longer imports:", m)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=["fixtures", "corpus"])
    p.add_argument("--wheels", type=Path, default=Path("/tmp/fixwheels"))
    p.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "exportlint-bench-fix")
    p.add_argument("--unsafe", action="store_true", help="corpus: also apply unsafe fixes")
    p.add_argument("--check-only", action="store_true", help="corpus: only check the files an earlier run changed")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.what == "fixtures":
        fixtures(args.out)
    else:
        corpus(args.wheels, args.out, args.unsafe, args.check_only)


if __name__ == "__main__":
    main()
