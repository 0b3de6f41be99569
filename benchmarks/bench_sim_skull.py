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
* ``modelled``: the search's play-out (``SEARCH.modelled_rollout``: the heuristic plays every
  seat) from ``--games`` round-1 states per seat count, the k-th with ``random.Random(k)``;
  play-outs per CPU second, per round, and a digest of the rewards (equal in two trees that
  play the same games).
* ``budget``: play-outs per decision of the search (policy 3, ``SEARCH.root_search``) on the
  fixed bidding view with a ``--budget-ms`` deadline (wall clock), ``--decisions`` seeds; the
  median and range.
* ``ops``: bytecode instructions (CPython's own count, independent of the load) per move of
  ``--games`` random and modelled 4-player play-outs from the deal, and per play-out of the
  search on the bidding view (a search of 200 play-outs less one of 50).

Run: ``python benchmarks/bench_sim_skull.py --games 500 --rounds 5
[--mode playouts|search|modelled|budget|ops|both] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
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


def run_modelled(seat_counts: list[int], games_: int, rounds: int, seed: int) -> list[Any]:
    """Per seat count: modelled play-outs per CPU second in each round, and the rewards'
    digest."""
    modelled = skull.SEARCH.modelled_rollout
    out = []
    for seats in seat_counts:
        states = start_states(seats, games_, seed)
        for k, state in enumerate(states[:10]):  # warm the message caches
            modelled(skull, state, random.Random(k))
        rates = []
        digest = ""
        for r in range(rounds):
            start = time.process_time()
            rewards = [modelled(skull, s, random.Random(k)) for k, s in enumerate(states)]
            rates.append(games_ / (time.process_time() - start))
            digest = hashlib.sha256(repr(rewards).encode()).hexdigest()[:12]
            print(
                f"{seats} players, round {r + 1}: modelled {rates[-1]:,.0f} play-outs/s "
                f"(rewards {digest})",
                flush=True,
            )
        out.append({"seats": seats, "playouts_per_s": rates, "rewards": digest})
    return out


def run_budget(budget_ms: float, decisions: int) -> dict[str, Any]:
    """Play-outs each of ``decisions`` searches of the bidding view makes in ``budget_ms``."""
    view = next(v for v in search_views() if v["phase"] == "bidding")
    view = {**view, "seat": view["you"]}
    done = []
    for k in range(decisions):
        deadline = time.perf_counter() + budget_ms / 1000
        found = skull.SEARCH.root_search(skull, view, random.Random(k), None, deadline)
        done.append(found[1])
    row = {"budget_ms": budget_ms, "playouts": done, "median": statistics.median(done)}
    print(
        f"budget {budget_ms:g} ms, bidding: {row['median']:g} play-outs a decision (median; "
        f"{min(done)}-{max(done)})",
        flush=True,
    )
    return row


def count_ops(run: Callable[[], Any]) -> tuple[int, int]:
    """(bytecode instructions ``run`` executes, play-out moves among them: calls of the
    kernel's ``apply`` or ``apply_listed`` from a play-out's loop)."""
    ops = moves = 0
    loops = {"play", "modelled_rollout"}

    def trace(frame: Any, event: str, _arg: Any) -> Any:
        nonlocal ops, moves
        if event == "call":
            frame.f_trace_opcodes = True
            code = frame.f_code
            back = frame.f_back
            if code.co_name in ("apply", "apply_listed") and back is not None:
                moves += back.f_code.co_name in loops
        elif event == "opcode":
            ops += 1
        return trace

    sys.settrace(trace)
    try:
        run()
    finally:
        sys.settrace(None)
    return ops, moves


def run_ops(games_: int, seed: int) -> dict[str, Any]:
    """Instructions a move of random and modelled play-outs, and a search's play-out."""
    states = start_states(4, games_, seed)
    search = skull.SEARCH
    out: dict[str, Any] = {}
    for name, play in (("random", search.random_rollout), ("modelled", search.modelled_rollout)):
        play(skull, states[0], random.Random(0))  # warm the caches

        def run(play: Any = play) -> None:
            for k, state in enumerate(states):
                play(skull, state, random.Random(k))

        ops, moves = count_ops(run)
        out[name] = {"ops_per_move": ops / moves, "moves": moves}
        print(f"{name} play-outs: {ops / moves:,.0f} instructions a move ({moves} moves)")
    view = next(v for v in search_views() if v["phase"] == "bidding")
    view = {**view, "seat": view["you"]}
    search.root_search(skull, view, random.Random(0), 10, None)
    big = count_ops(lambda: search.root_search(skull, view, random.Random(1), 200, None))[0]
    small = count_ops(lambda: search.root_search(skull, view, random.Random(1), 50, None))[0]
    out["search_ops_per_playout"] = (big - small) / 150
    print(f"search, bidding: {(big - small) / 150:,.0f} instructions a play-out")
    return out


def main() -> None:
    """Parses the arguments, runs the measurements, prints them and writes ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mode",
        choices=("playouts", "search", "modelled", "budget", "ops", "both"),
        default="both",
    )
    parser.add_argument("--games", type=int, default=500, help="start states per seat count")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seats", type=int, nargs="+", default=[4, 6])
    parser.add_argument("--iterations", type=int, default=2000, help="per search")
    parser.add_argument("--budget-ms", type=float, default=100.0, help="budget mode")
    parser.add_argument("--decisions", type=int, default=30, help="budget mode")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    out: dict[str, Any] = {"machine": machine(), "games": args.games, "rounds": args.rounds}
    if args.mode in ("playouts", "both"):
        out["results"] = run_playouts(args.seats, args.games, args.rounds, args.seed)
    if args.mode in ("search", "both"):
        out["search"] = run_search(args.iterations)
    if args.mode == "modelled":
        out["modelled"] = run_modelled(args.seats, args.games, args.rounds, args.seed)
    if args.mode == "budget":
        out["budget"] = run_budget(args.budget_ms, args.decisions)
    if args.mode == "ops":
        out["ops"] = run_ops(args.games, args.seed)
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
