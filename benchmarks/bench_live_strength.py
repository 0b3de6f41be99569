"""The search bot's strength where clients meet it (issue 38): live games created through
``POST /v1/games`` on a ``tabletop run`` stack, one ``ismcts`` seat on a time budget against
``heuristic`` seats, the search's seat rotated from game to game, ``--inflight`` games at once.

Goals (issue 38): Isle of Skye at 100 ms >= 60% of three-player games against two heuristics,
Skull >= 40% of four-player games against three, Fox >= 90% of matches against the heuristic.
A game's winners are its outcome's ``winners`` (a shared win counts as a win).

    .venv/bin/python benchmarks/bench_live_strength.py --game skye --players 3 --games 30
    .venv/bin/python benchmarks/bench_live_strength.py --game skull --players 4 --games 30
    .venv/bin/python benchmarks/bench_live_strength.py --game fox --players 2 --games 20
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.stack import start_stack  # noqa: E402

ORGANIZER = {"Authorization": "Bearer org-e2e"}  # tests/e2e/stack.py's keys
AUDITOR = {"Authorization": "Bearer aud-e2e"}


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a win rate."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def run(game: str, players: int, games: int, budget_ms: int, inflight: int) -> dict[str, Any]:
    stack = start_stack(Path(tempfile.mkdtemp(prefix="bench-live-strength-")))
    http = requests.Session()
    try:
        pending: dict[str, int] = {}  # game id -> the search's seat
        results: list[tuple[int, list[int], list[int]]] = []
        made = 0
        started = time.monotonic()
        while len(results) < games:
            while made < games and len(pending) < inflight:
                seat = made % players
                seats: list[dict[str, Any]] = [{"bot": "heuristic"}] * players
                seats[seat] = {"bot": "ismcts", "budget_ms": budget_ms}
                resp = http.post(f"{stack.url}/v1/games", headers=ORGANIZER, timeout=30,
                                 json={"game": game, "seats": seats})  # fmt: skip
                assert resp.status_code == 201, resp.text
                pending[resp.json()["id"]] = seat
                made += 1
            for gid, seat in list(pending.items()):
                outcome = http.get(f"{stack.url}/v1/games/{gid}", timeout=30).json()["outcome"]
                if outcome:
                    iterations = _iterations(http, stack.url, gid, seat)
                    results.append((int(seat in outcome["winners"]), iterations, [seat]))
                    del pending[gid]
            time.sleep(1)
        wins = sum(r[0] for r in results)
        counts = sorted(n for r in results for n in r[1])
        low, high = wilson(wins, len(results))
        return {
            "game": game, "players": players, "budget_ms": budget_ms, "inflight": inflight,
            "games": len(results), "search_wins": wins,
            "win_rate": round(wins / len(results), 3), "ci95": [round(low, 3), round(high, 3)],
            "fair_share": round(1 / players, 3),
            "searched_decisions": len(counts),
            "iterations_p10_p50_p90": [counts[int(q * (len(counts) - 1))] for q in (0.1, 0.5, 0.9)]
            if counts else None,
            "seconds": round(time.monotonic() - started, 1),
        }  # fmt: skip
    finally:
        stack.stop()


def _iterations(http: requests.Session, url: str, gid: str, seat: int) -> list[int]:
    """The iterations the search's seat recorded on each of its searched moves (past 0)."""
    lines = http.get(f"{url}/v1/games/{gid}/export", headers=AUDITOR, timeout=30).text
    out = []
    for line in lines.splitlines():
        doc = json.loads(line)
        n = (doc.get("command") or {}).get("bot_iterations")
        if doc.get("seat") == seat and isinstance(n, int) and n > 0:
            out.append(n)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, choices=["fox", "skull", "skye"])
    parser.add_argument("--players", type=int, required=True)
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--budget-ms", type=int, default=100)
    parser.add_argument("--inflight", type=int, default=2)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.game, args.players, args.games, args.budget_ms, args.inflight)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
