"""Language-server re-lint latency: one 1,000-line model file edited over JSON-RPC.

Starts ``python -m exportlint lsp`` like an editor, opens a generated 1,000-line file of
``nn.Module`` classes (with findings in every forward), then sends ``--changes`` full-text
``didChange`` notifications one at a time and times each until the ``publishDiagnostics`` for
that version arrives.  The debounce is set to 0 through ``initializationOptions`` so the figure
is the server's own cost (the default debounce adds 200 ms on purpose).  For comparison,
``lint_text`` on the same text in this process (no JSON-RPC).

Then the backlog (issue 10): ``--bursts`` times, ``--burst`` edits sent ``--interval`` ms apart
(fast typing with the debounce off; 0 sends them back to back), timed from the last edit sent
until the diagnostics of that last version arrive, also counted in median lints.  A server that lints every edit of a burst in
turn falls ``--burst`` lints behind; one that supersedes stale lints stays within two (the rest
of the lint in progress, then the last version's).

``--baseline DIR`` (a checkout of another version, e.g. ``git archive main exportlint | tar -x
-C DIR``) starts a second server from ``DIR`` and measures both side by side, edit by edit and
burst by burst, so machine load hits both alike.

Target (issue 4): median < 100 ms.  Target (issue 10): backlog <= 2 lints.

    python benchmarks/bench_lsp.py [--changes 30] [--lines 1000] [--burst 20] [--bursts 5] [--interval 30]
                                   [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
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


def relint(client: LspClient, uri: str, text: str, version: int) -> float:
    """Milliseconds from one edit until its diagnostics arrive."""
    start = time.perf_counter()
    client.change(uri, text + f"# edit {version}\n", version)
    client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                and m["params"].get("version") == version, timeout=120, what=f"version {version}")
    return (time.perf_counter() - start) * 1000


def burst_backlog(client: LspClient, uri: str, text: str, first: int, count: int, interval: float) -> float:
    """Milliseconds from the last of ``count`` edits ``interval`` s apart until its diagnostics arrive."""
    last = first + count - 1
    for version in range(first, last + 1):
        if version > first and interval:
            time.sleep(interval)
        client.change(uri, text + f"# burst edit {version}\n", version)
    sent = time.perf_counter()
    client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                and m["params"].get("version") == last, timeout=600, what=f"version {last}")
    backlog = (time.perf_counter() - sent) * 1000
    client.backlog.clear()  # the publishes of superseded versions, if any
    return backlog


class Session:
    """One server (from ``pythonpath``'s exportlint when given) with the model file open."""

    def __init__(self, name: str, root: Path, text: str, pythonpath: str | None):
        env = dict(os.environ)
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
        self.name, self.text, self.version = name, text, 1
        self.client = LspClient(root, env=env)
        self.client.initialize(root, options={"debounceMs": 0})
        self.uri = (root / f"model_{name}.py").as_uri()
        self.client.open(self.uri, text)
        self.found = len(self.client.diagnostics(self.uri, timeout=120))
        self.latencies: list[float] = []
        self.backlogs: list[float] = []

    def relint(self) -> None:
        self.version += 1
        self.latencies.append(relint(self.client, self.uri, self.text, self.version))

    def burst(self, count: int, interval: float) -> None:
        self.backlogs.append(burst_backlog(self.client, self.uri, self.text, self.version + 1, count, interval))
        self.version += count

    def figures(self, burst: int, interval: float) -> dict:
        median = statistics.median(self.latencies)
        backlog = statistics.median(self.backlogs)
        return {
            "server": self.name, "diagnostics": self.found, "changes": len(self.latencies),
            "median_ms": round(median, 1), "p90_ms": round(percentile(self.latencies, 0.9), 1),
            "min_ms": round(min(self.latencies), 1), "target_100ms_met": median < 100,
            "burst_edits": burst, "burst_interval_ms": interval, "bursts": len(self.backlogs),
            "backlog_median_ms": round(backlog, 1), "backlog_max_ms": round(max(self.backlogs), 1),
            "backlog_median_lints": round(backlog / median, 1), "target_backlog_2_lints_met": backlog / median <= 2,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--burst", type=int, default=20, help="edits per burst")
    parser.add_argument("--bursts", type=int, default=5, help="bursts measured")
    parser.add_argument("--interval", type=float, default=30, help="ms between the edits of a burst")
    parser.add_argument("--baseline", help="a checkout holding another exportlint/, measured side by side")
    args = parser.parse_args()
    text = model_source(args.lines)

    with tempfile.TemporaryDirectory(prefix="exportlint-bench-lsp-") as tmp_name:
        root = Path(tmp_name)
        sessions = [Session("current", root, text, None)]
        try:
            if args.baseline:
                sessions.append(Session("baseline", root, text, str(Path(args.baseline).resolve())))
            for _ in range(args.changes):
                for session in sessions:
                    session.relint()
            for _ in range(args.bursts):
                for session in sessions:
                    session.burst(args.burst, args.interval / 1000)
            for session in sessions:
                session.client.exit()
        finally:
            for session in sessions:
                session.client.kill()

    from exportlint.config import Settings
    from exportlint.runner import lint_text

    in_process = []
    for _ in range(10):
        start = time.perf_counter()
        lint_text(text, str(Path(tmp_name) / "model.py"), Settings())
        in_process.append((time.perf_counter() - start) * 1000)

    print(f"file: {text.count(chr(10))} lines; lint_text in process (no JSON-RPC): "
          f"median {statistics.median(in_process):.1f} ms")
    for session in sessions:
        f = session.figures(args.burst, args.interval)
        print(f"[{f['server']}] {f['diagnostics']} diagnostics published; didChange -> publishDiagnostics over "
              f"JSON-RPC, {f['changes']} edits: median {f['median_ms']} ms, p90 {f['p90_ms']} ms, min {f['min_ms']} ms"
              f" (target < 100 ms: {'met' if f['target_100ms_met'] else 'NOT met'})")
        print(f"[{f['server']}] backlog after a burst of {args.burst} edits {args.interval:g} ms apart "
              f"({f['bursts']} bursts): median "
              f"{f['backlog_median_ms']} ms (= {f['backlog_median_lints']} lints), max {f['backlog_max_ms']} ms"
              f" (target <= 2 lints: {'met' if f['target_backlog_2_lints_met'] else 'NOT met'})")
        print(json.dumps(f))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
