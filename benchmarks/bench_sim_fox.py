"""Fox random play-outs: the fast simulator (``shared.sim.fox``) against today's path.

Today's path is what ISMCTS runs by default: ``ismcts.random_playout(fox, state, rand)``
(``legal_commands`` -> a uniform command -> ``decide`` -> ``evolve`` per event). For one-hand
games (``{"target": 1}``) and full matches (default options, to 21), the same ``--games`` start
states (set up from seeds) are played out by both sides, the k-th with a fresh
``random.Random(k)``, in rounds interleaved A B A B so that a change in the machine's load hits
both alike. CPU time (``time.process_time``) per side and round; the generators are seeded
before the clock starts (a search seeds one generator, not one per play-out). The ratio is the
simulator's games/s over today's; the median of the rounds is the figure.

Run: ``python benchmarks/bench_sim_fox.py --games 2000 --rounds 5 [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine, ratio_summary  # noqa: E402
from shared.bots import ismcts  # noqa: E402
from shared.games import fox  # noqa: E402
from shared.games.rng import Rng  # noqa: E402
from shared.sim import fox as sim  # noqa: E402

# (name, options, share of --games): a match is several hands, so it gets fewer start states.
CASES: tuple[tuple[str, dict[str, Any], float], ...] = (
    ("one hand", {"target": 1}, 1.0),
    ("match to 21", {}, 0.25),
)

Playout = Callable[[fox.State, random.Random], list[float]]


def start_states(options: dict[str, Any], games: int, seed: int) -> list[fox.State]:
    """``games`` states right after setup (first dealer and deal drawn per seed)."""
    out = []
    for k in range(games):
        state: Any = None
        for event in fox.setup(2, options, Rng(f"bench-sim-fox-{seed}-{k}")):
            state = fox.evolve(state, event)
        out.append(state)
    return out


def engine_path(state: fox.State, rand: random.Random) -> list[float]:
    """Today's play-out: the pure engine through ISMCTS's default ``Rollout``."""
    return ismcts.random_playout(fox, state, rand)


def time_side(playout: Playout, states: list[fox.State]) -> tuple[float, float]:
    """(CPU seconds to play out every state once, seat 0's mean reward)."""
    rands = [random.Random(k) for k in range(len(states))]
    won = 0.0
    start = time.process_time()
    for state, rand in zip(states, rands, strict=True):
        won += playout(state, rand)[0]
    return time.process_time() - start, won / len(states)


def run(games: int, rounds: int, seed: int) -> dict[str, Any]:
    """Per case, per round: games/s of both sides and their ratio; the median ratio."""
    out: dict[str, Any] = {
        "machine": machine(),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "games": games,
        "rounds": rounds,
        "seed": seed,
        "results": [],
    }
    for name, options, share in CASES:
        n = max(1, int(games * share))
        states = start_states(options, n, seed)
        time_side(engine_path, states[:20])  # warm up both sides
        time_side(sim.random_playout, states[:20])
        per_round = []
        for r in range(rounds):
            engine_s, engine_won = time_side(engine_path, states)
            sim_s, sim_won = time_side(sim.random_playout, states)
            row = {
                "round": r + 1,
                "engine_games_per_s": n / engine_s,
                "sim_games_per_s": n / sim_s,
                "ratio": engine_s / sim_s,
                # A sanity figure, not a test: the two should agree within noise.
                "engine_seat0_reward": engine_won,
                "sim_seat0_reward": sim_won,
            }
            per_round.append(row)
            print(
                f"{name}, round {r + 1}: engine {row['engine_games_per_s']:,.0f} games/s, "
                f"sim {row['sim_games_per_s']:,.0f} games/s, ratio {row['ratio']:.2f}x",
                flush=True,
            )
        summary = {
            "case": name,
            "options": options,
            "games": n,
            "rounds": per_round,
            **ratio_summary(per_round),
        }
        out["results"].append(summary)
        print(
            f"{name}: median ratio {summary['median_ratio']:.2f}x "
            f"(min {summary['min_ratio']:.2f}x; engine "
            f"{summary['median_engine_games_per_s']:,.0f} games/s, sim "
            f"{summary['median_sim_games_per_s']:,.0f} games/s; seat 0 reward engine "
            f"{per_round[-1]['engine_seat0_reward']:.3f}, sim {per_round[-1]['sim_seat0_reward']:.3f})",
            flush=True,
        )
    return out


def main() -> None:
    """Parses the arguments, runs the rounds, prints the ratios and writes ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--games", type=int, default=2000, help="one-hand start states (matches: a quarter)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    result = run(args.games, args.rounds, args.seed)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
