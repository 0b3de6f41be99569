"""Fox search speed: the kernel's play-outs and ISMCTS iterations per second.

Two measurements, each through names only (``ismcts.default_rollout``, ``ismcts.search``), so
the same script times any tree (issue 26 ran it on the tree before Fox's kernel, where the
rollout was the ``shared.sim`` simulator, and after):

* ``playouts``: the search's rollout for Fox (``ismcts.default_rollout(fox)``: today the
  kernel's ``SEARCH.playout_rollout``) from ``--games`` start states of one hand
  (``{"target": 1}``) and a quarter as many matches to 21, the k-th with ``random.Random(k)``;
  and, interleaved A B A B with it, ``ismcts.random_playout`` (the generic play-out, on the
  kernel where there is one). CPU time per side and round; the ratio is the rollout's games/s
  over the generic one's, the median of the rounds the figure.
* ``search``: ``ismcts.search(view, random.Random(1), iterations=--iterations)`` on fixed
  views (a lead, a follow, a Fox and a Woodcutter decision of a seeded match to ``--target``,
  21 by default; of its first round when ``--target 1``); iterations per CPU second.

Run: ``python benchmarks/bench_sim_fox.py --games 2000 --rounds 5 [--mode playouts|search|both]
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
from shared.match import projections  # noqa: E402

fox: Any = games.get("fox")

# (name, options, share of --games): a match is several hands, so it gets fewer start states.
CASES: tuple[tuple[str, dict[str, Any], float], ...] = (
    ("one hand", {"target": 1}, 1.0),
    ("match to 21", {}, 0.25),
)


def start_states(options: dict[str, Any], games_: int, seed: int) -> list[Any]:
    """``games_`` states right after setup (first dealer and deal drawn per seed)."""
    return [
        reduce(fox.evolve, fox.setup(2, options, Rng(f"bench-sim-fox-{seed}-{k}")), None)
        for k in range(games_)
    ]


def rollout(state: Any, rand: random.Random) -> Any:
    """The search's play-out for Fox."""
    return ismcts.default_rollout(fox)(fox, state, rand)


def plain(state: Any, rand: random.Random) -> Any:
    """The generic play-out: uniformly random legal commands (on the kernel where there is one)."""
    return ismcts.random_playout(fox, state, rand)


def time_side(playout: Callable[[Any, random.Random], Any], states: list[Any]) -> float:
    """CPU seconds to play out every state once, the k-th with ``random.Random(k)``."""
    start = time.process_time()
    for k, state in enumerate(states):
        playout(state, random.Random(k))
    return time.process_time() - start


def run_playouts(games_: int, rounds: int, seed: int) -> list[Any]:
    """Per case, per round: games/s of both sides and their ratio; the median ratio
    (``ratio_summary``'s ``engine`` is the generic play-out, its ``sim`` the rollout)."""
    results = []
    for name, options, share in CASES:
        n = max(1, int(games_ * share))
        states = start_states(options, n, seed)
        time_side(plain, states[:20])  # warm up both sides
        time_side(rollout, states[:20])
        per_round = []
        for r in range(rounds):
            plain_s = time_side(plain, states)
            rollout_s = time_side(rollout, states)
            row = {
                "round": r + 1,
                "engine_games_per_s": n / plain_s,
                "sim_games_per_s": n / rollout_s,
                "ratio": plain_s / rollout_s,
            }
            per_round.append(row)
            print(
                f"{name}, round {r + 1}: random_playout {row['engine_games_per_s']:,.0f} "
                f"games/s, rollout {row['sim_games_per_s']:,.0f} games/s, "
                f"ratio {row['ratio']:.2f}x",
                flush=True,
            )
        summary = {"case": name, "options": options, "games": n, "rounds": per_round}
        summary.update(ratio_summary(per_round))
        results.append(summary)
        print(
            f"{name}: rollout {summary['median_sim_games_per_s']:,.0f} games/s "
            f"(median; {summary['median_ratio']:.2f}x random_playout)",
            flush=True,
        )
    return results


def search_views(target: int = 21) -> list[dict[str, Any]]:
    """Fixed views of a seeded random match to ``target``: the first lead, follow, Fox and
    Woodcutter decisions with a choice, from the second round on (a one-round game: from the
    first)."""
    first_round = 1 if target == 1 else 2
    rnd = random.Random(7)
    state = reduce(fox.evolve, fox.setup(2, {"target": target}, Rng("bench-search")), None)
    views: dict[str, dict[str, Any]] = {}
    for n in range(5_000):
        if fox.outcome(state) is not None or len(views) == 4:
            break
        seat = fox.to_act(state)[0]
        legal = fox.legal_commands(state, seat)
        doc = {**projections.game_view(fox, state, seat), "game": "fox"}
        kind = doc["phase"]
        if kind == "play":
            kind = "follow" if doc["trick"] else "lead"
        if len(legal) > 1 and kind not in views and doc["round"] >= first_round:
            views[kind] = doc
        command = rnd.choice(legal)
        for event in fox.decide(state, seat, command, Rng("bench-search", f"v{n}")):
            state = fox.evolve(state, event)
    return [views[k] for k in ("lead", "follow", "fox_exchange", "woodcutter_return") if k in views]


def run_search(iterations: int, target: int = 21) -> list[dict[str, Any]]:
    """Iterations per CPU second of one search per fixed view."""
    out = []
    for view in search_views(target):
        kind = view["phase"] if view["phase"] != "play" else ("follow" if view["trick"] else "lead")
        start = time.process_time()
        found = ismcts.search(view, random.Random(1), iterations=iterations)
        seconds = time.process_time() - start
        row = {
            "decision": kind,
            "iterations": found.iterations,
            "iterations_per_s": found.iterations / seconds,
            "command": found.command,
        }
        out.append(row)
        print(
            f"search, {kind}: {row['iterations_per_s']:,.0f} iterations/s "
            f"({found.iterations} iterations, chose {found.command})",
            flush=True,
        )
    return out


def main() -> None:
    """Parses the arguments, runs the measurements, prints them and writes ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("playouts", "search", "both"), default="both")
    parser.add_argument(
        "--games", type=int, default=2000, help="one-hand start states (matches: a quarter)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=2000, help="per search")
    parser.add_argument("--target", type=int, default=21, help="the searched match's target")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    print(machine(), flush=True)
    out: dict[str, Any] = {"machine": machine(), "games": args.games, "rounds": args.rounds}
    if args.mode in ("playouts", "both"):
        out["results"] = run_playouts(args.games, args.rounds, args.seed)
    if args.mode in ("search", "both"):
        out["search"] = run_search(args.iterations, args.target)
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
