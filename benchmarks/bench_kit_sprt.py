"""A connected kit bot in an SPRT match (issue 35): how many of its turns time out, and its
latency, with the kit answering one turn at a time against several at once.

``tabletop run`` on its own data directory; the kit's ``examples/random_bot.py --connected``
registered as a connected Fox bot (budget 500 ms); an ``sprt`` match of one-hand Fox games,
that bot against the ``heuristic`` bot (a registered entrant's games are played live, many in
flight). For each ``--concurrency`` in turn: a fresh stack, the match until ``--games`` games
are done (or it answers), then the bot's ``bot_stats`` from the tournament's standings
(decisions, timeouts, latency p50/p95/max).

    .venv/bin/python benchmarks/bench_kit_sprt.py --games 300 --concurrency 1 16
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.stack import start_stack  # noqa: E402

ORGANIZER = {"Authorization": "Bearer org-e2e"}  # tests/e2e/stack.py's keys
EXAMPLE = ROOT / "sdk" / "python" / "examples" / "random_bot.py"


def one(concurrency: int, games: int, timeout: float) -> dict[str, Any]:
    stack = start_stack(Path(tempfile.mkdtemp(prefix="bench-kit-sprt-")))
    bot_proc = None
    try:
        reg = requests.post(f"{stack.url}/v1/bots", timeout=30, json={
            "name": f"kit-c{concurrency}", "games": ["fox"], "transport": "connected",
        }).json()  # fmt: skip
        bot_proc = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "--key", reg["key"], "--connected", "--api",
             stack.url, "--concurrency", str(concurrency), "--every", "0"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        body = {"game": "fox", "format": "sprt", "games": games, "options": {"target": 1},
                "entrants": [{"bot_id": reg["id"]}, {"bot": "heuristic"}],
                "sprt": {"elo0": -1000, "elo1": 1000, "alpha": 0.001, "beta": 0.001}}  # fmt: skip
        made = requests.post(f"{stack.url}/v1/tournaments", json=body, headers=ORGANIZER,
                             timeout=30)  # fmt: skip
        assert made.status_code == 201, made.text
        tid = made.json()["id"]
        started = time.monotonic()
        doc: dict[str, Any] = {}
        while time.monotonic() - started < timeout:
            doc = requests.get(f"{stack.url}/v1/tournaments/{tid}", headers=ORGANIZER,
                               timeout=30).json()  # fmt: skip
            if doc["status"] in ("finished", "cancelled") or doc["progress"]["done"] >= games:
                break
            time.sleep(2)
        row = next(r for r in doc["standings"] if r.get("bot_stats"))
        stats = row["bot_stats"]
        return {
            "concurrency": concurrency,
            "games": doc["progress"]["done"],
            "seconds": round(time.monotonic() - started, 1),
            "decisions": stats["decisions"],
            "timeouts": stats["timeouts"],
            "timeout_share": round(stats["timeouts"] / max(1, stats["decisions"]), 4),
            "latency_ms": stats["latency_ms"],
        }
    finally:
        if bot_proc is not None:
            bot_proc.terminate()
            bot_proc.wait(30)
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args(argv)
    rows = [one(c, args.games, args.timeout) for c in args.concurrency]
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
