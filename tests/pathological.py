"""Generated pathological but valid Python sources (shared by the robustness tests and
``benchmarks/bench_pathological.py``): huge expressions, deep chains, long statement lists,
odd whitespace.  Each case is ``(name, source, parses)``: ``parses`` says whether CPython's own
parser accepts the file (deep chains overflow it: exportlint must then say EXL900 quickly).

Every source is produced twice by :func:`corpus`: as a module-level statement and inside an
``nn.Module.forward`` (where the analysis follows it).
"""

from __future__ import annotations

import ast
import textwrap

MODULE = """\
import torch
import torch.nn as nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        a = self.lin(x)
        n = 0
{body}
        if x.sum() > 0:
            a = a + 1
        return a
"""


def _indent(body: str, spaces: int) -> str:
    """``body`` indented; a ``<FF>`` marker becomes a form feed before the indentation."""
    return textwrap.indent(body, " " * spaces).replace(" " * spaces + "<FF>", "\f" + " " * spaces)


def _stmts(n: int) -> dict[str, str]:
    """Statement-level bodies of about ``n`` parts each (x, a, n are tensors / ints in scope)."""
    return {
        "sum": "a = " + " + ".join(["a"] * n) + "\n",
        "attr_chain": "a = x" + ".T" * n + "\n",
        "method_chain": "a = x" + ".relu()" * n + "\n",
        "call_nest": "a = " + "torch.relu(" * min(n, 80) + "x" + ")" * min(n, 80) + "\n",
        "fstring": "s = f'" + "{n}-" * n + "'\n",
        "walrus_ifs": "".join(f"if (n := n + {i}) > {i}:\n    a = a + n\n" for i in range(n)),
        "elif_chain": "if n == 0:\n    a = a + 1\n"
        + "".join(f"elif n == {i}:\n    a = a * {i}\n" for i in range(1, n)) + "else:\n    a = a - 1\n",
        "implicit_concat": "s = (\n" + "".join(f"    'p{i}'\n" for i in range(n)) + ")\n",
        "dict_literal": "t = {\n" + "".join(f"    'k{i}': {i},\n" for i in range(n)) + "}\n",
        "list_literal": "w = [\n" + "".join(f"    {i * 0.5},\n" for i in range(n)) + "]\n",
        "bool_chain": "c = " + " and ".join(["n"] * n) + "\n",
        "compare_chain": "c = " + " < ".join(["n"] * n) + "\n",
        "subscript_chain": "a = x" + "[0]" * n + "\n",
        "tuple_unpack": ", ".join(f"v{i}" for i in range(n)) + " = " + ", ".join("n" for _ in range(n)) + "\n",
        "many_assigns": "".join(f"v{i} = a + {i}\n" for i in range(n)),
        "formfeed": "a = a + 1\n<FF>a = a * 2\n" * max(1, n // 100),
        "nested_lists": "w = " + "[" * min(n, 90) + "1" + "]" * min(n, 90) + "\n",
    }


def parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return False
    return True


def cases(n: int) -> list[tuple[str, str]]:
    """(name, source) pairs: each body at module level and inside ``forward``."""
    out = []
    for name, body in _stmts(n).items():
        out.append((f"{name}_{n}_module", "import torch\nx = torch.ones(2, 2)\na = x\nn = 0\n" + _indent(body, 0)))
        out.append((f"{name}_{n}_forward", MODULE.format(body=_indent(body, 8))))
    return out


def corpus(sizes: tuple[int, ...] = (250, 500, 10_000)) -> list[tuple[str, str, bool]]:
    """(name, source, CPython parses it) for every case at every size."""
    return [(name, src, parses(src)) for n in sizes for name, src in cases(n)]


def big_sum(n: int) -> str:
    return "import torch\nx = torch.ones(1)\ny = " + " + ".join(["x"] * n) + "\n"


def repeated(text: str, target_bytes: int) -> str:
    """``text`` repeated until the result is about ``target_bytes`` long (a valid module: the
    same definitions again and again, like a concatenated generated file)."""
    copies = max(1, target_bytes // max(1, len(text.encode())))
    return (text.rstrip("\n") + "\n\n") * copies
