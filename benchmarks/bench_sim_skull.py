"""Skull random play-outs: the fast simulator (``shared.sim.skull``) against today's path.

Today's path is what ISMCTS runs by default: ``ismcts.random_playout(skull, state, rand)``
(``legal_commands`` -> a uniform command -> ``decide`` -> ``evolve`` per event). The same
``--games`` start states (set up from seeds) are played out by both, with
``random.Random(k)`` for the k-th state, in rounds interleaved A B A B so that a change in
the machine's load hits both alike; CPU time (``time.process_time``) per side and round. The
ratio is the simulator's games/s over today's; the median of the rounds is the figure.

Run: ``python benchmarks/bench_sim_skull.py --games 500 --rounds 5 [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from functools import reduce
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine, ratio_summary  # noqa: E402
from shared.bots import ismcts  # noqa: E402
from shared.games import skull  # noqa: E402
from shared.games.rng import Rng  # noqa: E402
from shared.sim import skull as sim  # noqa: E402


def start_states(seats: int, games: int, seed: int) -> list[skull.State]:
    """``games`` round-1 states for ``seats`` players (the first player drawn per seed)."""
    return [
        reduce(skull.evolve, skull.setup(seats, {}, Rng(f"bench-sim-{seed}-{seats}-{k}")), None)
        for k in range(games)
    ]


def engine_path(state: skull.State, rand: random.Random) -> list[float]:
    """Today's play-out: the pure engine through ISMCTS's default ``Rollout``."""
    return ismcts.random_playout(skull, state, rand)


def time_side(
    playout: Callable[[skull.State, random.Random], list[float]], states: list[skull.State]
) -> float:
    """CPU seconds to play out every state once, the k-th with ``random.Random(k)``."""
    start = time.process_time()
    for k, state in enumerate(states):
        playout(state, random.Random(k))
    return time.process_time() - start


def run(seat_counts: list[int], games: int, rounds: int, seed: int) -> dict[str, Any]:
    """Per seat count, per round: games/s of both sides and their ratio; the median ratio."""
    out: dict[str, Any] = {
        "machine": machine(),
        "games": games,
        "rounds": rounds,
        "seed": seed,
        "results": [],
    }
    for seats in seat_counts:
        states = start_states(seats, games, seed)
        time_side(engine_path, states[:10])  # warm the engine's command caches
        time_side(sim.random_playout, states[:10])
        per_round = []
        for r in range(rounds):
            engine_s = time_side(engine_path, states)
            sim_s = time_side(sim.random_playout, states)
            row = {
                "round": r + 1,
                "engine_games_per_s": games / engine_s,
                "sim_games_per_s": games / sim_s,
                "ratio": engine_s / sim_s,
            }
            per_round.append(row)
            print(
                f"{seats} players, round {r + 1}: engine {row['engine_games_per_s']:,.0f} "
                f"games/s, sim {row['sim_games_per_s']:,.0f} games/s, ratio {row['ratio']:.2f}x",
                flush=True,
            )
        summary = {
            "seats": seats,
            "rounds": per_round,
            **ratio_summary(per_round),
        }
        out["results"].append(summary)
        print(
            f"{seats} players: median ratio {summary['median_ratio']:.2f}x "
            f"(min {summary['min_ratio']:.2f}x; engine "
            f"{summary['median_engine_games_per_s']:,.0f} games/s, sim "
            f"{summary['median_sim_games_per_s']:,.0f} games/s)",
            flush=True,
        )
    return out


def main() -> None:
    """Parses the arguments, runs the rounds, prints the ratios and writes ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500, help="start states per seat count")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seats", type=int, nargs="+", default=[4, 6])
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    result = run(args.seats, args.games, args.rounds, args.seed)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
