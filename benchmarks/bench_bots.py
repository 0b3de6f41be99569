"""Bots: decisions per second of each bot in each game, ISMCTS decision times at a budget, and
win rates with 95% confidence intervals (seats rotated), all in process through the one
play-out driver and ``tabletop simulate``'s loop.

``python benchmarks/bench_bots.py [--quick]`` prints JSON and keeps it in
``benchmarks/bots_last_run.json``; ``make bench`` does not run it (it takes minutes) but puts its
last run in BENCHMARKS.md (``python benchmarks/run_all.py --render`` rewrites the report from
the last runs without measuring).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.app import bots  # noqa: E402
from shared.app.playout import play  # noqa: E402
from shared.games.rng import bot_random  # noqa: E402
from shared.match.projections import view  # noqa: E402
from shared.simulate import simulate  # noqa: E402
from shared.tournaments.standings import wilson  # noqa: E402

SEATS = {"fox": 2, "skull": 4, "skye": 3}
OPTIONS: dict[str, dict[str, Any]] = {"fox": {"target": 1}, "skull": {}, "skye": {}}


def decision_times(game: str, spec: dict[str, Any], decisions: int) -> list[float]:
    """Seconds per decision of ``spec`` at the states of random games, from each seat's view."""
    times: list[float] = []
    g = 0
    while len(times) < decisions:
        g += 1

        def chooser(record: Any, seat: int, seed: str = f"t{g}") -> Any:
            if len(times) >= decisions:
                return None
            doc = view(record, seat)
            start = time.perf_counter()
            bots.play(spec, doc, bot_random(seed, seat, record.version))
            times.append(time.perf_counter() - start)
            return None  # the random bot moves on

        play(
            game,
            [{"bot": "random"}] * SEATS[game],
            OPTIONS[game],
            f"t{g}",
            chooser=chooser,
            keep_envelopes=False,
        )
    return times


def win_rate(
    game: str, entrants: list[dict[str, Any]], games: int, options: dict[str, Any]
) -> dict[str, Any]:
    """Entrant 0's win rate with its 95% interval, seats rotated."""
    result = simulate(
        game,
        games_count=games,
        seed=f"bots-{game}",
        seats=len(entrants),
        options=options,
        bots=entrants,
        rotate=True,
    )
    low, high = wilson(result.wins[0], result.games)
    return {
        "game": game,
        "entrants": entrants,
        "options": options,
        "games": result.games,
        "win_rate": result.wins[0] / result.games,
        "ci95": [low, high],
        "seconds": result.seconds,
    }


def main() -> None:
    """Run and print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--budget-only",
        type=int,
        metavar="N",
        help="only the ISMCTS decision times at budget_ms=100, N decisions per game "
        "(p50, p95, p99 and the worst, against the budget)",
    )
    a = parser.parse_args()
    if a.budget_only:
        budget_figures(a.budget_only)
        return
    scale = 0.1 if a.quick else 1.0
    specs = [{"bot": "random"}, {"bot": "heuristic"}, {"bot": "ismcts", "iterations": 200}]
    out: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "bots": [_name(s) for s in specs],
        "decisions_per_s": {},
        "ismcts_100ms": {},
        "matches": [],
    }
    for game in SEATS:
        for spec in specs:
            n = 20 if spec["bot"] == "ismcts" else 300
            t = decision_times(game, spec, max(5, int(n * scale)))
            out["decisions_per_s"][f"{game} {_name(spec)}"] = len(t) / sum(t)
        t = decision_times(game, {"bot": "ismcts", "budget_ms": 100}, max(5, int(40 * scale)))
        out["ismcts_100ms"][game] = {
            "median_ms": statistics.median(t) * 1e3,
            "p95_ms": sorted(t)[int(0.95 * (len(t) - 1))] * 1e3,
        }
        print(json.dumps(out["ismcts_100ms"][game]), flush=True)
    for game, entrants, n, options in [
        ("fox", [{"bot": "heuristic"}, {"bot": "random"}], 400, {"target": 16}),
        ("fox", [{"bot": "heuristic"}, {"bot": "random"}], 400, {"target": 1}),
        ("fox", [{"bot": "ismcts", "budget_ms": 100}, {"bot": "random"}], 200, {"target": 1}),
        ("fox", [{"bot": "ismcts", "budget_ms": 100}, {"bot": "random"}], 40, {}),
        ("fox", [{"bot": "ismcts", "budget_ms": 100}, {"bot": "heuristic"}], 100, {"target": 1}),
        ("skull", [{"bot": "heuristic"}] + [{"bot": "random"}] * 3, 400, {}),
        ("skull", [{"bot": "ismcts", "budget_ms": 100}] + [{"bot": "random"}] * 3, 100, {}),
        ("skye", [{"bot": "heuristic"}] + [{"bot": "random"}] * 2, 60, {}),
        ("skye", [{"bot": "ismcts", "budget_ms": 100}] + [{"bot": "heuristic"}] * 2, 150, {}),
    ]:
        row = win_rate(game, entrants, max(4, int(n * scale)), options)
        out["matches"].append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps(out, indent=2))
    if not a.quick:
        (ROOT / "benchmarks" / "bots_last_run.json").write_text(json.dumps(out, indent=2) + "\n")


def budget_times(t: list[float], budget_ms: float) -> dict[str, float]:
    """Percentiles of decision times ``t`` (seconds) in ms, and the p99's ratio to the budget."""
    ordered = sorted(t)

    def at(q: float) -> float:
        return ordered[int(q * (len(ordered) - 1))] * 1e3

    return {
        "decisions": len(t),
        "median_ms": at(0.5),
        "p95_ms": at(0.95),
        "p99_ms": at(0.99),
        "max_ms": ordered[-1] * 1e3,
        "p99_over_budget": at(0.99) / budget_ms,
    }


def budget_figures(decisions: int) -> None:
    """``--budget-only``: each game's ISMCTS decision times at ``budget_ms=100``."""
    for game in SEATS:
        t = decision_times(game, {"bot": "ismcts", "budget_ms": 100}, decisions)
        print(json.dumps({"game": game, **budget_times(t, 100.0)}), flush=True)


def _name(spec: dict[str, Any]) -> str:
    return ":".join([spec["bot"], *(f"{k}={v}" for k, v in spec.items() if k != "bot")])


if __name__ == "__main__":
    main()
