"""Language-server re-lint latency: one 1,000-line model file edited over JSON-RPC.

Starts ``python -m exportlint lsp`` like an editor, opens a generated 1,000-line file of
``nn.Module`` classes (with findings in every forward), then sends ``--changes`` full-text
``didChange`` notifications one at a time and times each until the ``publishDiagnostics`` for
that version arrives.  The debounce is set to 0 through ``initializationOptions`` so the figure
is the server's own cost (the default debounce adds 200 ms on purpose).  For comparison,
``lint_text`` on the same text in this process (no JSON-RPC).

Target (issue 4): median < 100 ms.

    python benchmarks/bench_lsp.py [--changes 30] [--lines 1000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from integrations_lsp_client import LspClient  # noqa: E402

BLOCK = '''

class Block{i}(nn.Module):
    """A residual block with a data-dependent gate."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.scale = 0.5

    def forward(self, x, mask=None):
        h = self.norm(x)
        h = self.proj(h)
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        n = int(h.shape[1] * self.scale)
        gate = h.mean().item()
        if gate > 0:
            h = h[:, :n]
        else:
            h = torch.relu(h)
        for row in h:
            h = h + row.sum()
        return x[:, : h.shape[1]] + h
'''


def model_source(lines: int) -> str:
    """Whole blocks up to ``lines`` lines, then comment lines to exactly ``lines``."""
    text = "import torch\nfrom torch import nn\n"
    i = 0
    while text.count("\n") + BLOCK.count("\n") <= lines:
        text += BLOCK.format(i=i)
        i += 1
    return text + "# padding\n" * (lines - text.count("\n"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args()
    text = model_source(args.lines)

    with tempfile.TemporaryDirectory(prefix="exportlint-bench-lsp-") as tmp_name:
        root = Path(tmp_name)
        client = LspClient(root)
        try:
            client.initialize(root, options={"debounceMs": 0})
            uri = (root / "model.py").as_uri()
            client.open(uri, text)
            found = len(client.diagnostics(uri, timeout=120))
            latencies = []
            for version in range(2, args.changes + 2):
                edited = text + f"# edit {version}\n"
                start = time.perf_counter()
                client.change(uri, edited, version)
                client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"].get("version") == version, timeout=120, what=f"version {version}")
                latencies.append((time.perf_counter() - start) * 1000)
            client.exit()
        finally:
            client.kill()

    from exportlint.config import Settings
    from exportlint.runner import lint_text

    in_process = []
    for _ in range(10):
        start = time.perf_counter()
        lint_text(text, str(Path(tmp_name) / "model.py"), Settings())
        in_process.append((time.perf_counter() - start) * 1000)

    figures = {
        "lines": text.count("\n"), "diagnostics": found, "changes": len(latencies),
        "median_ms": round(statistics.median(latencies), 1),
        "p90_ms": round(percentile(latencies, 0.9), 1),
        "min_ms": round(min(latencies), 1),
        "lint_text_median_ms": round(statistics.median(in_process), 1),
    }
    figures["target_100ms_met"] = figures["median_ms"] < 100
    print(f"file: {figures['lines']} lines, {found} diagnostics published")
    print(f"didChange -> publishDiagnostics over JSON-RPC, {len(latencies)} edits: "
          f"median {figures['median_ms']} ms, p90 {figures['p90_ms']} ms, min {figures['min_ms']} ms")
    print(f"lint_text in process (no JSON-RPC): median {figures['lint_text_median_ms']} ms")
    print(f"target median < 100 ms: {'met' if figures['target_100ms_met'] else 'NOT met'}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
