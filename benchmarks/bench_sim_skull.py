"""Skull search speed: the kernel's play-outs and ISMCTS iterations per second.

Two measurements, each through names only (``ismcts.default_rollout``, ``ismcts.search``), so
the same script times any tree (issue 26 ran it on the tree before Skull's kernel, where the
rollout was the ``shared.sim`` simulator, and after):

* ``playouts``: Skull's random play-out (``SEARCH.random_rollout`` where the tree has one: the
  search's own until its version 2 played out as the heuristic plays; else
  ``ismcts.default_rollout(skull)``, the ``shared.sim`` simulator's or the kernel's) from ``--games`` round-1 states per seat count, the k-th
  with ``random.Random(k)``; and, interleaved A B A B with it, ``ismcts.random_playout`` (the
  generic play-out on the kernel). CPU time per side and round; the ratio is the rollout's
  games/s over the generic one's, the median of the rounds the figure.
* ``search``: ``ismcts.search(view, random.Random(1), iterations=--iterations)`` on fixed
  views (a 4-player game's placing, bidding and flipping decisions); iterations per CPU second.

Run: ``python benchmarks/bench_sim_skull.py --games 500 --rounds 5 [--mode playouts|search|both]
[--json out.json]``.
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
from shared import games  # noqa: E402
from shared.bots import ismcts  # noqa: E402
from shared.games.rng import Rng  # noqa: E402

try:  # the tree before issue 27 (a before/after run) kept the projections in shared/
    from shared.match import projections  # noqa: E402
except ImportError:
    from shared import projections  # type: ignore[attr-defined,no-redef]  # noqa: E402

skull: Any = games.get("skull")


def start_states(seats: int, games_: int, seed: int) -> list[Any]:
    """``games_`` round-1 states for ``seats`` players (the first player drawn per seed)."""
    return [
        reduce(skull.evolve, skull.setup(seats, {}, Rng(f"bench-sim-{seed}-{seats}-{k}")), None)
        for k in range(games_)
    ]


def rollout(state: Any, rand: random.Random) -> Any:
    """Skull's random play-out (see ``playouts`` above)."""
    random_rollout = getattr(getattr(skull, "SEARCH", None), "random_rollout", None)
    play = random_rollout or ismcts.default_rollout(skull)
    return play(skull, state, rand)


def plain(state: Any, rand: random.Random) -> Any:
    """The generic play-out: uniformly random legal commands (on the kernel where there is one)."""
    return ismcts.random_playout(skull, state, rand)


def time_side(playout: Callable[[Any, random.Random], Any], states: list[Any]) -> float:
    """CPU seconds to play out every state once, the k-th with ``random.Random(k)``."""
    start = time.process_time()
    for k, state in enumerate(states):
        playout(state, random.Random(k))
    return time.process_time() - start


def run_playouts(seat_counts: list[int], games_: int, rounds: int, seed: int) -> list[Any]:
    """Per seat count, per round: games/s of both sides and their ratio; the median ratio
    (``ratio_summary``'s ``engine`` is the generic play-out, its ``sim`` the rollout)."""
    results = []
    for seats in seat_counts:
        states = start_states(seats, games_, seed)
        time_side(plain, states[:10])  # warm the message caches
        time_side(rollout, states[:10])
        per_round = []
        for r in range(rounds):
            plain_s = time_side(plain, states)
            rollout_s = time_side(rollout, states)
            row = {
                "round": r + 1,
                "engine_games_per_s": games_ / plain_s,
                "sim_games_per_s": games_ / rollout_s,
                "ratio": plain_s / rollout_s,
            }
            per_round.append(row)
            print(
                f"{seats} players, round {r + 1}: random_playout "
                f"{row['engine_games_per_s']:,.0f} games/s, rollout "
                f"{row['sim_games_per_s']:,.0f} games/s, ratio {row['ratio']:.2f}x",
                flush=True,
            )
        summary = {"seats": seats, "rounds": per_round, **ratio_summary(per_round)}
        results.append(summary)
        print(
            f"{seats} players: rollout {summary['median_sim_games_per_s']:,.0f} games/s "
            f"(median; {summary['median_ratio']:.2f}x random_playout)",
            flush=True,
        )
    return results


def search_views() -> list[dict[str, Any]]:
    """Fixed 4-player views: the first placing, bidding and flipping decisions with a choice
    of a seeded random game."""
    rnd = random.Random(7)
    state = reduce(skull.evolve, skull.setup(4, {}, Rng("bench-search")), None)
    views: dict[str, dict[str, Any]] = {}
    for n in range(5_000):
        if skull.outcome(state) is not None or len(views) == 3:
            break
        seat = skull.to_act(state)[0]
        legal = skull.legal_commands(state, seat)
        if len(legal) > 1 and state.phase not in views and state.round >= 2:
            views[state.phase] = {**projections.game_view(skull, state, seat), "game": "skull"}
        command = rnd.choice(legal)
        for event in skull.decide(state, seat, command, Rng("bench-search", f"v{n}")):
            state = skull.evolve(state, event)
    return [views[p] for p in ("placing", "bidding", "flipping") if p in views]


def run_search(iterations: int) -> list[dict[str, Any]]:
    """Iterations per CPU second of one search per fixed view."""
    out = []
    for view in search_views():
        start = time.process_time()
        found = ismcts.search(view, random.Random(1), iterations=iterations)
        seconds = time.process_time() - start
        row = {
            "phase": view["phase"],
            "iterations": found.iterations,
            "iterations_per_s": found.iterations / seconds,
            "command": found.command,
        }
        out.append(row)
        print(
            f"search, {view['phase']}: {row['iterations_per_s']:,.0f} iterations/s "
            f"({found.iterations} iterations, chose {found.command})",
            flush=True,
        )
    return out


def main() -> None:
    """Parses the arguments, runs the measurements, prints them and writes ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("playouts", "search", "both"), default="both")
    parser.add_argument("--games", type=int, default=500, help="start states per seat count")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seats", type=int, nargs="+", default=[4, 6])
    parser.add_argument("--iterations", type=int, default=2000, help="per search")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    out: dict[str, Any] = {"machine": machine(), "games": args.games, "rounds": args.rounds}
    if args.mode in ("playouts", "both"):
        out["results"] = run_playouts(args.seats, args.games, args.rounds, args.seed)
    if args.mode in ("search", "both"):
        out["search"] = run_search(args.iterations)
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
