"""Isle of Skye play-outs and search: the fast simulator (``shared.sim.skye``) against today's path.

Two measures, each in rounds interleaved A B A B (so that a change in the machine's load hits
both sides alike), CPU time (``time.process_time``) per side and round, the median of the
rounds as the figure:

1. **Play-outs**: ``ismcts.random_playout(skye, state, rand)`` (``legal_commands`` -> a
   uniform command, prices through ``random_command``'s view -> ``decide`` -> ``evolve``)
   against ``shared.sim.skye.random_playout`` (the same play-outs in distribution) from the
   same ``--states`` states (taken along random games from seeds, every phase), the k-th with
   ``random.Random(k)``; also the rate of ``evaluated_rollout`` (ISMCTS's former Skye
   rollout: the round's market, then a static evaluation; the default is now
   ``modelled_rollout``, the market as the heuristic plays it), which is no full play-out. Every
   timing starts cold (``cold``): new territories, the simulator's memo caches emptied.
2. **Search**: ISMCTS iterations per CPU second on ``--views`` seat views of those games
   (``--iterations`` each, per phase: prices, buying, building), with the engine path's
   rollout (``ismcts.random_playout``, what ISMCTS used before), the simulator's random
   play-out and the default (``shared.sim.skye.playout_rollout``).

Run: ``python benchmarks/bench_sim_skye.py --states 60 --views 24 --rounds 5
[--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import reduce
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine  # noqa: E402
from shared import projections  # noqa: E402
from shared.bots import ismcts  # noqa: E402
from shared.games import skye  # noqa: E402
from shared.games.rng import Rng  # noqa: E402
from shared.games.skye import engine as skye_engine  # noqa: E402
from shared.games.skye.state import replace  # noqa: E402
from shared.games.skye.territory import Territory  # noqa: E402
from shared.sim import skye as sim  # noqa: E402

PHASES = ("prices", "buying", "building")
ENGINE: Any = skye  # as ``shared.games.base.Engine``
Playout = Callable[[skye.State, random.Random], Sequence[float]]


def game_states(seats: int, seed: int) -> list[skye.State]:
    """Every state of one random game (prices as ``random_command`` draws them)."""
    rand = random.Random(seed)
    state: Any = reduce(skye.evolve, skye.setup(seats, {}, Rng(f"bench-skye-{seed}")), None)
    out = [state]
    draws: Any = ismcts.FastRng(rand)  # the engines' ``Rng`` interface
    while skye.outcome(state) is None:
        seat = rand.choice(skye.to_act(state))
        if state.phase == "prices":
            p = state.players[seat]
            doc = skye_engine.random_prices(list(p.drawn), p.gold, rand)
            command = skye.parse_command(doc)
        else:
            command = rand.choice(skye.legal_commands(state, seat))
        state = reduce(skye.evolve, skye.decide(state, seat, command, draws), state)
        out.append(state)
    return out


def sample_states(seats: int, count: int, seed: int) -> list[skye.State]:
    """``count`` non-final states spread over random games (all rounds and phases)."""
    out: list[skye.State] = []
    game = 0
    while len(out) < count:
        states = [s for s in game_states(seats, seed + game) if skye.to_act(s)]
        out += states[:: max(1, len(states) // 12)]
        game += 1
    return out[:count]


def sample_views(seats: int, count: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """About ``count`` seat views per phase (the first seat to act), as a bot gets them."""
    out: dict[str, list[dict[str, Any]]] = {p: [] for p in PHASES}
    game = 0
    while any(len(v) < count for v in out.values()):
        for state in game_states(seats, seed + 1000 + game):
            acting = skye.to_act(state)
            if acting and len(out[state.phase]) < count:
                view = {**projections.game_view(ENGINE, state, acting[0]), "game": "skye"}
                out[state.phase].append(view)
        game += 1
    return out


def cold(states: list[skye.State]) -> list[skye.State]:
    """Copies of ``states`` with new territories, and the simulator's memo caches emptied,
    so that no side profits from what an earlier timing computed (a territory caches its
    spots, areas and roads; ``shared.sim.skye`` memoises evaluations by territory). Within
    one timing the caches warm up as they do in a search."""
    sim.clear_memos()
    return [
        replace(
            s,
            players=tuple(
                replace(p, territory=Territory(p.territory.placements)) for p in s.players
            ),
        )
        for s in states
    ]


def engine_path(state: skye.State, rand: random.Random) -> Sequence[float]:
    """Today's full random play-out: the pure engine through ``ismcts.random_playout``."""
    return ismcts.random_playout(skye, state, rand)


def time_playouts(playout: Playout, states: list[skye.State]) -> float:
    """CPU seconds to play out every state once, the k-th with ``random.Random(k)``."""
    states = cold(states)
    start = time.process_time()
    for k, state in enumerate(states):
        playout(state, random.Random(k))
    return time.process_time() - start


def time_search(
    rollout: ismcts.Rollout, views: list[dict[str, Any]], iterations: int
) -> tuple[float, int]:
    """CPU seconds for ``iterations`` ISMCTS iterations from each view, with ``rollout``
    (the simulator's caches emptied first; views hold no territory objects), and the
    iterations done: a decision the Skye search leaves to the heuristic (buying, building)
    does none."""
    cold([])
    done = 0
    start = time.process_time()
    for k, view in enumerate(views):
        result = ismcts.search(view, random.Random(k), iterations=iterations, rollout=rollout)
        done += result.iterations
    return time.process_time() - start, done


def run(seats: int, states_n: int, views_n: int, iterations: int, rounds: int, seed: int) -> dict:
    """Both measures; per round the rates of every side, then medians and ratios."""
    states = sample_states(seats, states_n, seed)
    views = sample_views(seats, views_n, seed)
    out: dict[str, Any] = {
        "machine": machine(),
        "seats": seats,
        "states": len(states),
        "views_per_phase": views_n,
        "iterations": iterations,
        "rounds": rounds,
        "seed": seed,
    }
    playouts: dict[str, Playout] = {
        "engine": engine_path,
        "sim": sim.random_playout,
        "evaluated": sim.evaluated_rollout,
    }
    for fn in playouts.values():  # warm the engine's and the simulator's caches
        time_playouts(fn, states[:5])
    per_round = []
    for r in range(rounds):
        row: dict[str, Any] = {"round": r + 1}
        for name, fn in playouts.items():
            row[f"{name}_per_s"] = len(states) / time_playouts(fn, states)
        row["ratio"] = row["sim_per_s"] / row["engine_per_s"]
        per_round.append(row)
        print(
            f"play-outs round {r + 1}: engine {row['engine_per_s']:,.0f}/s, sim "
            f"{row['sim_per_s']:,.0f}/s (ratio {row['ratio']:.2f}x), evaluated rollout "
            f"{row['evaluated_per_s']:,.0f}/s",
            flush=True,
        )
    out["playouts"] = {
        "rounds": per_round,
        "median_ratio": statistics.median(r["ratio"] for r in per_round),
        **{
            f"median_{name}_per_s": statistics.median(r[f"{name}_per_s"] for r in per_round)
            for name in playouts
        },
    }
    print(f"play-outs: median ratio {out['playouts']['median_ratio']:.2f}x", flush=True)

    rollouts: dict[str, ismcts.Rollout] = {
        "engine_rollout": ismcts.random_playout,
        "sim_random_rollout": sim.random_rollout,
        "default_rollout": ismcts.default_rollout(skye),
    }
    search: dict[str, Any] = {}
    for phase in PHASES:
        chosen = views[phase]
        for rollout in rollouts.values():
            time_search(rollout, chosen[:2], 5)  # warm up
        rows = []
        for r in range(rounds):
            row = {"round": r + 1}
            for name, rollout in rollouts.items():
                seconds, done = time_search(rollout, chosen, iterations)
                row[f"{name}_it_per_s"] = done / seconds if seconds > 0 else 0.0
            rows.append(row)
        summary = {
            f"median_{name}_it_per_s": statistics.median(r[f"{name}_it_per_s"] for r in rows)
            for name in rollouts
        }
        summary["median_ratio_default_vs_engine"] = statistics.median(
            r["default_rollout_it_per_s"] / r["engine_rollout_it_per_s"]
            if r["engine_rollout_it_per_s"]
            else 0.0
            for r in rows
        )
        search[phase] = {"rounds": rows, **summary}
        print(
            f"search {phase}: "
            + ", ".join(
                f"{name} {summary[f'median_{name}_it_per_s']:,.0f} it/s" for name in rollouts
            )
            + f" (default / engine {summary['median_ratio_default_vs_engine']:.2f}x)",
            flush=True,
        )
    out["search"] = search
    return out


def main() -> None:
    """Parses the arguments, runs both measures, prints them and writes ``--json``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--states", type=int, default=60, help="play-out start states")
    parser.add_argument("--views", type=int, default=24, help="search views per phase")
    parser.add_argument("--iterations", type=int, default=40, help="ISMCTS iterations per view")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    result = run(args.seats, args.states, args.views, args.iterations, args.rounds, args.seed)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
