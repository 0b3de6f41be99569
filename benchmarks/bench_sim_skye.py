"""Isle of Skye play-outs and search on the kernel (``shared/games/skye/kernel.py``).

Two measures, each in rounds interleaved A B A B (so that a change in the machine's load hits
both sides alike), CPU time (``time.process_time``) per side and round, the median of the
rounds as the figure:

1. **Play-outs**: ``ismcts.random_playout(skye, state, rand)`` (the kernel's play-out through
   ``kernel_playout``: prices through ``random_command``'s view) against the package's own
   ``search.random_rollout`` (the same play-outs in distribution, prices from
   ``draw_prices``) from the same ``--states`` states (taken along random games from seeds,
   every phase), the k-th with ``random.Random(k)``. Every timing starts cold (``cold``): new
   territories, the search's memo caches emptied.
2. **Search**: ISMCTS iterations per CPU second on ``--views`` seat views of those games
   (``--iterations`` each, per phase: prices, buying, building), with
   ``ismcts.random_playout``, ``search.random_rollout`` and the default
   (``search.playout_rollout``).

``--mode search`` measures only what a before/after run needs, through names every tree has
(``ismcts.search``, the engine, the projections), so the same script times the tree before the
kernel too: ``--views`` fixed seeded 3-seat price views (the decisions the Skye search
searches: buying and building go to the heuristic), ``ismcts.search(view, random.Random(1),
iterations=--iterations)`` on each, iterations per CPU second and the command chosen, then
the CPU seconds of all the searches together. ``--mode playouts`` likewise: the package's own
random play-out (``search.random_rollout``; in the tree before the kernel the simulator's,
``shared.sim.skye.random_rollout``) from each of ``--states`` states, the k-th with
``random.Random(k)``, ``--rounds`` times after one warm-up pass; CPU seconds per pass.

Run: ``python benchmarks/bench_sim_skye.py --states 60 --views 24 --rounds 5
[--json out.json]``, ``python benchmarks/bench_sim_skye.py --mode search --views 8
--iterations 2000`` or ``python benchmarks/bench_sim_skye.py --mode playouts --states 60
--rounds 5``. ``--mode count`` counts bytecode instructions instead (CPython's own count,
independent of the machine's load; slow): per iteration of the ``--mode search`` views
(searches of 250 iterations less searches of 50, the memos emptied before each, so start-up
cancels) and per play-out of ``--mode playouts`` (40 states, after a warm-up pass).
(Before/after comparisons: issue 26's sections of BENCHMARKS.md.)
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
from shared.bots import ismcts  # noqa: E402
from shared.games import skye  # noqa: E402
from shared.games.rng import Rng  # noqa: E402
from shared.games.skye import engine as skye_engine  # noqa: E402
from shared.games.skye.state import replace  # noqa: E402
from shared.games.skye.territory import Territory  # noqa: E402

try:  # the tree before issue 27 (a before/after run) kept the projections in shared/
    from shared.match import projections  # noqa: E402
except ImportError:
    from shared import projections  # type: ignore[attr-defined,no-redef]  # noqa: E402
try:  # the tree before the kernel had no search hooks in the package (``--mode search`` only)
    from shared.games.skye import search  # noqa: E402
except ImportError:
    search = None  # type: ignore[assignment]

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
    """Copies of ``states`` with new territories, and the search's memo caches emptied,
    so that no side profits from what an earlier timing computed (a territory caches its
    spots, areas and roads; ``search`` memoises evaluations by territory). Within one timing
    the caches warm up as they do in a search."""
    if search is not None:
        search.clear_memos()
    else:  # the tree before the kernel: the simulator's memos
        from shared.sim import skye as simulator  # type: ignore[import-not-found]

        simulator.clear_memos()
    return [
        replace(
            s,
            players=tuple(
                replace(p, territory=Territory(p.territory.placements)) for p in s.players
            ),
        )
        for s in states
    ]


def generic_playout(state: skye.State, rand: random.Random) -> Sequence[float]:
    """ISMCTS's generic random play-out (``ismcts.random_playout``: on the kernel)."""
    return ismcts.random_playout(skye, state, rand)


def own_playout(state: skye.State, rand: random.Random) -> Sequence[float]:
    """The package's random play-out (``search.random_rollout``)."""
    return search.random_rollout(skye, state, rand)


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
    (the search's caches emptied first; views hold no territory objects), and the
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
    playouts: dict[str, Playout] = {"generic": generic_playout, "own": own_playout}
    for fn in playouts.values():  # warm the territories' and the search's caches
        time_playouts(fn, states[:5])
    per_round = []
    for r in range(rounds):
        row: dict[str, Any] = {"round": r + 1}
        for name, fn in playouts.items():
            row[f"{name}_per_s"] = len(states) / time_playouts(fn, states)
        row["ratio"] = row["own_per_s"] / row["generic_per_s"]
        per_round.append(row)
        print(
            f"play-outs round {r + 1}: generic {row['generic_per_s']:,.0f}/s, own "
            f"{row['own_per_s']:,.0f}/s (ratio {row['ratio']:.2f}x)",
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
        "generic_rollout": ismcts.random_playout,
        "own_random_rollout": search.random_rollout,
        "default_rollout": ismcts.default_rollout(skye),
    }
    searches: dict[str, Any] = {}
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
        summary["median_ratio_default_vs_generic"] = statistics.median(
            r["default_rollout_it_per_s"] / r["generic_rollout_it_per_s"]
            if r["generic_rollout_it_per_s"]
            else 0.0
            for r in rows
        )
        searches[phase] = {"rounds": rows, **summary}
        print(
            f"search {phase}: "
            + ", ".join(
                f"{name} {summary[f'median_{name}_it_per_s']:,.0f} it/s" for name in rollouts
            )
            + f" (default / generic {summary['median_ratio_default_vs_generic']:.2f}x)",
            flush=True,
        )
    out["search"] = searches
    return out


def price_views(seats: int, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` fixed price views: from the seeded random games ``game_states`` plays, the
    first price decision of each round for the first seat still to price."""
    out: list[dict[str, Any]] = []
    game = 0
    while len(out) < count:
        seen = set()
        for state in game_states(seats, seed + 2000 + game):
            acting = skye.to_act(state)
            if state.phase == "prices" and acting and state.round not in seen:
                seen.add(state.round)
                out.append({**projections.game_view(ENGINE, state, acting[0]), "game": "skye"})
                if len(out) == count:
                    break
        game += 1
    return out


def run_search(seats: int, views_n: int, iterations: int, seed: int) -> list[dict[str, Any]]:
    """Iterations per CPU second of ``ismcts.search(view, random.Random(1), iterations=...)``
    on each fixed price view (the default rollout of the tree it runs in), and its choice."""
    out = []
    for k, view in enumerate(price_views(seats, views_n, seed)):
        start = time.process_time()
        found = ismcts.search(view, random.Random(1), iterations=iterations)
        seconds = time.process_time() - start
        row = {
            "view": k,
            "round": view["round"],
            "iterations": found.iterations,
            "iterations_per_s": found.iterations / seconds if seconds > 0 else 0.0,
            "command": found.command,
        }
        out.append(row)
        print(
            f"search, view {k} (round {view['round']}): {row['iterations_per_s']:,.0f} "
            f"iterations/s ({found.iterations} iterations, chose {found.command})",
            flush=True,
        )
    total = sum(r["iterations"] for r in out)
    seconds = sum(r["iterations"] / r["iterations_per_s"] for r in out if r["iterations_per_s"])
    print(
        f"search: {total} iterations over {len(out)} views, {seconds:.3f} s of CPU "
        f"({total / seconds:,.0f} iterations/s)",
        flush=True,
    )
    return out


def package_rollout() -> Callable[[Any, skye.State, random.Random], Sequence[float]]:
    """The package's own random play-out, or the simulator's in the tree before the kernel."""
    if search is not None:
        return search.random_rollout
    from shared.sim import skye as simulator  # type: ignore[import-not-found]

    rollout: Callable[[Any, skye.State, random.Random], Sequence[float]]
    rollout = simulator.random_rollout
    return rollout


def run_playouts(seats: int, states_n: int, rounds: int, seed: int) -> list[float]:
    """CPU seconds of each of ``rounds`` passes of ``package_rollout`` over ``states_n`` states
    (the k-th with ``random.Random(k)``), after one warm-up pass."""
    rollout = package_rollout()
    states = sample_states(seats, states_n, seed)

    def one_pass() -> float:
        start = time.process_time()
        for k, state in enumerate(states):
            rollout(skye, state, random.Random(k))
        return time.process_time() - start

    one_pass()
    passes = [one_pass() for _ in range(rounds)]
    print(
        f"play-outs: {len(states)} states, CPU s per pass "
        + " ".join(f"{t:.3f}" for t in passes)
        + f" (median {statistics.median(passes):.3f}, "
        f"{len(states) / statistics.median(passes):,.0f} play-outs/s)",
        flush=True,
    )
    return passes


def instructions(run: Callable[[], Any]) -> int:
    """Bytecode instructions ``run()`` executes (``sys.settrace`` opcode events)."""
    ops = 0

    def trace(frame: Any, event: str, _arg: Any) -> Any:
        nonlocal ops
        if event == "opcode":
            ops += 1
        elif event == "call":
            frame.f_trace_opcodes = True
        return trace

    sys.settrace(trace)
    try:
        run()
    finally:
        sys.settrace(None)
    return ops


def run_count(seats: int, views_n: int, seed: int) -> dict[str, float]:
    """Instructions per search iteration and per random play-out (see the docstring)."""
    views = price_views(seats, views_n, seed)

    def searches(iterations: int) -> None:
        cold([])
        for view in views:
            ismcts.search(view, random.Random(1), iterations=iterations)

    searches(20)
    per_iteration = (instructions(lambda: searches(250)) - instructions(lambda: searches(50))) / (
        200 * len(views)
    )
    rollout = package_rollout()
    states = sample_states(seats, 40, seed)

    def playouts() -> None:
        for k, state in enumerate(states):
            rollout(skye, state, random.Random(k))

    playouts()
    per_playout = instructions(playouts) / len(states)
    print(
        f"instructions: {per_iteration:,.0f} per search iteration, "
        f"{per_playout:,.0f} per random play-out",
        flush=True,
    )
    return {"per_iteration": per_iteration, "per_playout": per_playout}


def main() -> None:
    """Parses the arguments, runs both measures, prints them and writes ``--json``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mode", choices=("all", "search", "playouts", "count"), default="all")
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--states", type=int, default=60, help="play-out start states")
    parser.add_argument("--views", type=int, default=24, help="search views per phase")
    parser.add_argument("--iterations", type=int, default=40, help="ISMCTS iterations per view")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    if args.mode == "search":
        result: dict[str, Any] = {
            "machine": machine(),
            "search": run_search(args.seats, args.views, args.iterations, args.seed),
        }
    elif args.mode == "count":
        result = {"machine": machine(), "count": run_count(args.seats, args.views, args.seed)}
    elif args.mode == "playouts":
        result = {
            "machine": machine(),
            "playouts": run_playouts(args.seats, args.states, args.rounds, args.seed),
        }
    else:
        result = run(args.seats, args.states, args.views, args.iterations, args.rounds, args.seed)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
