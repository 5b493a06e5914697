"""Count the corpus findings that fall in a family the definitions exclude (target: zero each).

    python benchmarks/audit/families.py [--target export|trace]

Lints the timm 1.0.31 / transformers 5.23.0 / torchvision 0.29.1 sources (the audit's cache) with
the real CLI and classifies every finding by the code around it, with Python's own parser:

* rank check   — an EXL022 / EXL042 on a condition or value whose only size reads are ranks
                 (`x.ndim`, `x.dim()`, `len(x.shape)`, `len(x.size())`);
* guard        — an EXL022 on an `if` whose body only raises / warns / logs (no `else`), or on an
                 `assert`;
* is_scripting — a finding on a branch on `torch.jit.is_scripting()`, or inside its arm;
* training     — a finding inside the arm of `if self.training` (or `self.training and …`) or after
                 `if not self.training: return …` in the same block.

Lists every hit (file:line, code, source line) so a non-zero count can be read.
"""

from __future__ import annotations

import argparse
import ast
import collections
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit import _lint, _roots  # noqa: E402

_RANK = re.compile(r"\.ndim\b|\.dim\(\)|\.ndimension\(\)|len\(\s*[\w.\[\]]+\.(shape|size\(\))\s*\)")
_SIZE = re.compile(r"\.shape\b|\.size\(|\.numel\(\)|\blen\(")
_LOG = {"warn", "warning", "warning_once", "warn_once", "info", "debug", "error", "exception", "critical", "log", "print"}


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _only_checks(body: list[ast.stmt]) -> bool:
    def check(s: ast.stmt) -> bool:
        if isinstance(s, (ast.Raise, ast.Pass, ast.Assert)):
            return True
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            return name in _LOG
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return True
        return False

    return bool(body) and all(check(s) for s in body)


def _is_training(test: ast.expr) -> bool:
    src = ast.unparse(test)
    return src == "self.training" or src.startswith("self.training and ")


def classify(source: str, line: int, code: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    parents = _parents(tree)
    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not stmts:
        return []
    here = max(stmts, key=lambda n: n.lineno)  # innermost statement holding the line
    out = []
    text = source.splitlines()[line - 1]
    if code in ("EXL022", "EXL042"):
        cond = ast.unparse(here.test) if isinstance(here, (ast.If, ast.While, ast.Assert)) else text
        if _RANK.search(cond) and not _SIZE.search(_RANK.sub("", cond)):
            out.append("rank check")
    if code == "EXL022" and (isinstance(here, ast.Assert) or (isinstance(here, ast.If) and here.lineno == line and _only_checks(here.body) and (not here.orelse or isinstance(here.orelse[0], ast.If)))):
        out.append("guard")
    node: ast.AST | None = here
    while node is not None:
        parent = parents.get(node)
        if isinstance(parent, ast.If):
            test = ast.unparse(parent.test)
            in_body = node in parent.body
            only_scripting = "is_scripting()" in test and not re.search(r"is_tracing|is_exporting|is_compiling|_is_tracing|is_in_onnx_export", test)
            if only_scripting and "not " not in test.split("is_scripting")[0][-5:] and in_body:
                out.append("is_scripting")
            if _is_training(parent.test) and in_body:
                out.append("training")
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) or parent is None:
            break
        # `if not self.training: return …` earlier in the same block
        block = next((getattr(parent, f) for f in ("body", "orelse") if node in getattr(parent, f, [])), [])
        for prev in block[: block.index(node)] if node in block else []:
            if isinstance(prev, ast.If) and ast.unparse(prev.test) == "not self.training" and isinstance(prev.body[-1], ast.Return) and not prev.orelse:
                out.append("training")
        node = parent
    test_src = ast.unparse(here.test) if isinstance(here, ast.If) else ""
    if isinstance(here, ast.If) and here.lineno == line and "is_scripting()" in test_src and code == "EXL060" and not re.search(
        r"is_tracing|is_exporting|is_compiling|is_in_onnx_export", test_src
    ):
        out.append("is_scripting")
    return sorted(set(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="export", choices=["export", "trace"])
    args = ap.parse_args()
    roots = _roots()
    findings = _lint(roots, args.target)
    counts: collections.Counter = collections.Counter()
    hits: dict[str, list[str]] = collections.defaultdict(list)
    sources: dict[str, str] = {}
    for f in findings:
        path = f["path"]
        if path not in sources:
            sources[path] = Path(path).read_text(encoding="utf-8", errors="replace")
        for family in classify(sources[path], f["line"], f["code"]):
            counts[family] += 1
            hits[family].append(f"{path}:{f['line']} {f['code']} {sources[path].splitlines()[f['line'] - 1].strip()[:100]}")
    print(f"{len(findings)} findings (target {args.target})\n")
    print("| family the definitions exclude | findings |\n|---|---|")
    for family in ("rank check", "guard", "is_scripting", "training"):
        print(f"| {family} | {counts[family]} |")
    for family, rows in hits.items():
        print(f"\n{family}:")
        for r in rows:
            print("  " + r)


if __name__ == "__main__":
    main()
