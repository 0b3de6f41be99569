"""Before and after: the same workloads on another revision and on this tree, in turn.

``python benchmarks/compare.py --base REV`` checks REV out in a temporary git worktree, then
runs each workload on REV and on this tree alternately (A B A B ...) so that both see the same
noise, and prints each pair's ratio (this tree / REV) with the median. Workloads: ``playouts``
(``simulate`` of each game, as ``make bench`` runs it) and ``gateway`` (the whole command path,
``benchmarks/bench_gateway.py``, commands per second and p99 as a ratio to the raw Redis PING of
the same run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PLAYOUTS = """
import json, sys
sys.path.insert(0, {root!r})
from shared.simulate import simulate
out = {{}}
for game, seats, n in (("fox", 2, 1000), ("skull", 4, 600), ("skye", 4, 8)):
    out[game] = max(simulate(game, games_count=n, seed=f"bench-{{r}}", seats=seats)
                    .actions_per_second for r in range(2))
print(json.dumps(out))
"""


def _playouts(tree: Path) -> dict[str, float]:
    code = PLAYOUTS.format(root=str(tree))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, check=True, capture_output=True, text=True
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _gateway(tree: Path, seconds: float) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_gateway.py", "--seconds", str(seconds)],
        cwd=tree,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree), "TABLETOP_BOT_DISPATCH": "none"},
    )
    doc: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{") :])
    return {
        "commands/s per PING/s": doc["commands_per_s"] / doc["redis_ping_ops_per_s"],
        "p99 in PINGs": doc["p99_ms"] / doc["redis_ping_p50_ms"],
    }


def compare(base: str, pairs: int, what: list[str], seconds: float) -> dict[str, list[float]]:
    """Ratios (this tree / base) per figure, one per pair."""
    ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(old), base],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            for i in range(pairs):
                for name in what:
                    run = _playouts if name == "playouts" else (lambda t: _gateway(t, seconds))
                    a, b = run(old), run(ROOT)
                    for key in a:
                        ratios.setdefault(f"{name}: {key}", []).append(b[key] / a[key])
                        print(
                            f"pair {i + 1} {name} {key}: base {a[key]:,.3f}  "
                            f"this {b[key]:,.3f}  ratio {b[key] / a[key]:.2f}",
                            flush=True,
                        )
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(old)],
                cwd=ROOT,
                check=False,
                capture_output=True,
            )
    return ratios


def main() -> None:
    """Print the ratios and their medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", required=True, help="the revision to compare against")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--what", default="playouts,gateway")
    parser.add_argument("--seconds", type=float, default=8)
    a = parser.parse_args()
    ratios = compare(a.base, a.pairs, a.what.split(","), a.seconds)
    print("\nmedian ratio (this tree / base; higher is better except p99):")
    for key, values in ratios.items():
        print(
            f"  {key}: {statistics.median(values):.2f}  ({', '.join(f'{v:.2f}' for v in values)})"
        )


if __name__ == "__main__":
    main()
