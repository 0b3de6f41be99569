"""What one ISMCTS iteration of a one-hand Fox game costs, by part (issue 38).

An iteration is a deal (the determinizer's ``deal``: the hidden cards drawn), the tree (the
kernel thawed, the walk from the root through UCB1, the expansion, the back-propagation) and
the play-out (the search's rollout for Fox, to the end of the hand). Four figures, each run
in any tree (names only: ``ismcts.search``, ``fox.determinizer``, ``ismcts.FastRng``,
``ismcts.default_rollout``), so that an older checkout can be measured with this same file
(before issue 26's kernels: ``shared.match.projections`` was ``shared.projections``, and
``fox.evolve_all`` a ``reduce`` of ``fox.evolve``):

* ``--mode count``: CPython bytecode instructions an iteration (the interpreter's own count,
  no noise, CPython 3.11's bytecode), split by the function running: the deal (the closure
  ``fox.determinizer`` returns, and what it calls), the play-out (the rollout
  ``ismcts.default_rollout`` gives, or the hooks' ``kernel_rollout``, and what they call) and
  the rest (the tree). ``ismcts.search(view, random.Random(1),
  iterations=N)`` on the four fixed one-hand views of ``bench_sim_fox.py --target 1`` (a
  lead, a follow, a Fox's and a Woodcutter's decision).
* ``--mode callgrind``: machine instructions (``valgrind --tool=callgrind``, the whole
  process) an iteration, by difference: each part is run at ``--iterations`` and at a tenth
  of them, in processes whose set-up is the same, and the difference divided by the
  iterations between them: the search (the whole iteration), the deals alone, the play-outs
  alone (from the leaves a real search reached: recorded by a set-up search, the same in both
  processes); the tree is what the search costs beyond the two.
* ``--mode budget``: iterations a searched move of one-hand games at ``--budget-ms`` (both
  seats ``ismcts`` on a time budget, in process, one game after another), with the load
  average beside them.
* ``--mode points``: is the faster search worth points? The search at ``--budget-ms``
  against the same search at ``--against`` iterations a move (the tree before the change
  ran about that many at 200 ms), ``--pairs`` one-hand deals each played twice with the
  seats swapped: the timed search's share of the points with a 95% Wilson interval.
* ``--mode run``: what ``callgrind`` runs (one part, ``--part``, at ``--iterations``).

Run: ``python benchmarks/bench_fox_iteration.py --mode count`` (or ``callgrind``, ``budget
--games 6``, ``points --pairs 100 --against 1700``). Figures: BENCHMARKS.md, "Fox one-hand
search iteration cost (issue 38)".
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from functools import reduce
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared import games  # noqa: E402
from shared.bots import ismcts  # noqa: E402
from shared.games.rng import Rng  # noqa: E402
from shared.match import projections  # noqa: E402

fox: Any = games.get("fox")


# Functions whose instructions, and their callees', are a part's (by code object): the deal is
# the determinizer's closure, the play-out the rollout ISMCTS plays for Fox (whatever the tree
# measured names them; the play-out on the tree's kernel where the hooks have one).
def part_codes() -> tuple[set[Any], set[Any]]:
    view = one_hand_views()[0]
    deal = {fox.determinizer(view, view["seat"]).__code__}
    playout = {ismcts.default_rollout(fox).__code__}
    hooks = getattr(fox, "SEARCH", None)
    for name in ("kernel_rollout", "random_playout"):
        function = getattr(hooks, name, None)
        if function is not None:
            playout.add(function.__code__)
    return deal, playout


def one_hand_views() -> list[dict[str, Any]]:
    """The four fixed views of ``bench_sim_fox.py --target 1`` (its ``search_views(1)``)."""
    from benchmarks.bench_sim_fox import search_views

    return search_views(1)


def kind_of(view: dict[str, Any]) -> str:
    if view["phase"] != "play":
        return str(view["phase"])
    return "follow" if view["trick"] else "lead"


# --- bytecode instructions ------------------------------------------------------------------


def count_view(view: dict[str, Any], iterations: int) -> tuple[Counter[str], Any]:
    """Bytecode instructions of one search of ``view`` by part, and its result."""
    ops: Counter[str] = Counter()
    part = ["tree"]
    owner: list[Any] = []
    deal_codes, playout_codes = part_codes()

    def trace(frame: Any, event: str, _arg: Any) -> Any:
        if event == "opcode":
            ops[part[0]] += 1
        elif event == "call":
            frame.f_trace_opcodes = True
            if part[0] == "tree":
                code = frame.f_code
                if code in deal_codes:
                    part[0] = "deal"
                    owner.append(frame)
                elif code in playout_codes:
                    part[0] = "playout"
                    owner.append(frame)
        elif event == "return" and owner and frame is owner[-1]:
            owner.pop()
            part[0] = "tree"
        return trace

    sys.settrace(trace)
    try:
        found = ismcts.search(view, random.Random(1), iterations=iterations)
    finally:
        sys.settrace(None)
    return ops, found


def count(iterations: int) -> dict[str, Any]:
    """Bytecode instructions an iteration, per part and view (see the module's docstring)."""
    views = one_hand_views()
    rows = []
    for view in views:
        ismcts.search(view, random.Random(1), iterations=5)  # warm: tables, memos
        ops, found = count_view(view, iterations)
        row: dict[str, Any] = {k: ops[k] / iterations for k in ("deal", "tree", "playout")}
        row["total"] = sum(row.values())
        row["decision"] = kind_of(view)
        row["command"] = found.command
        rows.append(row)
        print(
            f"{row['decision']:>18}: {row['total']:7,.0f} an iteration (deal {row['deal']:,.0f}, "
            f"tree {row['tree']:,.0f}, play-out {row['playout']:,.0f}); chose {row['command']}",
            flush=True,
        )
    mean = {k: statistics.fmean(r[k] for r in rows) for k in ("deal", "tree", "playout", "total")}
    print(
        f"{'mean':>18}: {mean['total']:7,.0f} an iteration (deal {mean['deal']:,.0f}, "
        f"tree {mean['tree']:,.0f}, play-out {mean['playout']:,.0f})",
        flush=True,
    )
    return {"rows": rows, "mean": mean}


# --- one part, for callgrind ----------------------------------------------------------------

# The set-up search whose leaves the play-out part plays out again (the same in every process).
LEAVES_PER_VIEW = 400


def run_part(part: str, iterations: int) -> None:
    """One part at ``iterations`` per view; the set-up is the same at any ``iterations``."""
    views = one_hand_views()
    for view in views:  # warm, and the same in every process
        ismcts.search(view, random.Random(2), iterations=20)
    if part == "search":
        for view in views:
            ismcts.search(view, random.Random(1), iterations=iterations)
        return
    if part == "deal":
        for view in views:
            deal = fox.determinizer(view, view["seat"])
            rng = ismcts.FastRng(random.Random(1))
            for _ in range(iterations):
                deal(rng)
        return
    assert part == "playout"
    rollout = ismcts.default_rollout(fox)
    leaves: list[Any] = []

    def keep(engine: Any, state: Any, rand: random.Random) -> Any:
        leaves.append(state)
        return rollout(engine, state, rand)

    for view in views:
        ismcts.search(view, random.Random(1), iterations=LEAVES_PER_VIEW, rollout=keep)
    rand = random.Random(1)
    for i in range(iterations * len(views)):
        rollout(fox, leaves[i % len(leaves)], rand)


def callgrind_ir(part: str, iterations: int) -> int:
    """Machine instructions (callgrind's total ``Ir``) of a process running ``part``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             __file__, "--mode", "run", "--part", part, "--iterations", str(iterations)],
            check=True, capture_output=True, cwd=ROOT,
        )  # fmt: skip
        text = out.read_text()
    found = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    assert found is not None, "no total in callgrind's output"
    return int(found.group(1))


def callgrind(iterations: int) -> dict[str, float]:
    """Machine instructions an iteration, per part, by difference (see the docstring)."""
    low = max(1, iterations // 10)
    views = len(one_hand_views())
    out: dict[str, float] = {}
    for part in ("search", "deal", "playout"):
        high_ir, low_ir = callgrind_ir(part, iterations), callgrind_ir(part, low)
        out[part] = (high_ir - low_ir) / ((iterations - low) * views)
        print(f"{part}: {out[part]:,.0f} machine instructions an iteration", flush=True)
    out["tree"] = out["search"] - out["deal"] - out["playout"]
    print(
        f"an iteration: {out['search']:,.0f} (deal {out['deal']:,.0f}, tree {out['tree']:,.0f}, "
        f"play-out {out['playout']:,.0f})",
        flush=True,
    )
    return out


# --- iterations at a time budget -------------------------------------------------------------


def budget(games_: int, budget_ms: float, seed: str) -> dict[str, Any]:
    """Iterations of each searched move of ``games_`` one-hand games, both seats searching
    for ``budget_ms`` (forced moves are not searched)."""
    counts: list[int] = []
    load_before = os.getloadavg()
    for g in range(games_):
        state = reduce(fox.evolve, fox.setup(2, {"target": 1}, Rng(f"{seed}-{g}")), None)
        n = 0
        while fox.outcome(state) is None:
            seat = fox.to_act(state)[0]
            view = {**projections.game_view(fox, state, seat), "game": "fox"}
            found = ismcts.search(view, random.Random(f"{seed}-{g}-{n}"), budget_ms=budget_ms)
            if found.iterations:
                counts.append(found.iterations)
            command = fox.parse_command(found.command)
            state = fox.evolve_all(state, fox.decide(state, seat, command, Rng(seed, f"{g}-{n}")))
            n += 1
        print(
            f"game {g + 1}: median {statistics.median(counts):,.0f} iterations a move so far "
            f"(load {os.getloadavg()[0]:.2f})",
            flush=True,
        )
    load_after = os.getloadavg()
    out = {
        "moves": len(counts),
        "median": statistics.median(counts),
        "mean": statistics.fmean(counts),
        "p10": statistics.quantiles(counts, n=10)[0],
        "p90": statistics.quantiles(counts, n=10)[-1],
        "load": (load_before[0], load_after[0]),
    }
    print(
        f"{budget_ms:g} ms a move: median {out['median']:,.0f} iterations (mean "
        f"{out['mean']:,.0f}, p10 {out['p10']:,.0f}, p90 {out['p90']:,.0f}) over "
        f"{out['moves']} searched moves; load average {load_before[0]:.2f} -> "
        f"{load_after[0]:.2f}",
        flush=True,
    )
    return out


def play_one_hand(
    seed: str, searches: tuple[dict[str, Any], dict[str, Any]], counts: list[int]
) -> list[float]:
    """One one-hand game, seat ``s`` searching with ``searches[s]`` (``iterations`` or
    ``budget_ms``); the iterations of the timed searches go to ``counts``. Rewards per seat."""
    state = reduce(fox.evolve, fox.setup(2, {"target": 1}, Rng(seed)), None)
    n = 0
    while fox.outcome(state) is None:
        seat = fox.to_act(state)[0]
        view = {**projections.game_view(fox, state, seat), "game": "fox"}
        found = ismcts.search(view, random.Random(f"{seed}-{n}"), **searches[seat])
        if "budget_ms" in searches[seat] and found.iterations:
            counts.append(found.iterations)
        command = fox.parse_command(found.command)
        state = fox.evolve_all(state, fox.decide(state, seat, command, Rng(seed, f"{n}")))
        n += 1
    return ismcts.rewards(fox.outcome(state))


def points(pairs: int, budget_ms: float, iterations: int, seed: str) -> dict[str, Any]:
    """The search at ``budget_ms`` against the same search at ``iterations`` a move, one-hand
    games in duplicate pairs (each deal played twice, the seats swapped): the timed search's
    share of the points (a draw is half) with a 95% Wilson interval, and its iterations."""
    timed = {"budget_ms": budget_ms}
    counted = {"iterations": iterations}
    won = 0.0
    counts: list[int] = []
    load_before = os.getloadavg()
    for p in range(pairs):
        deal = f"{seed}-{p}"
        won += play_one_hand(deal, (timed, counted), counts)[0]
        won += play_one_hand(deal, (counted, timed), counts)[1]
        if (p + 1) % 10 == 0:
            print(
                f"{p + 1} pairs: {won:g} of {2 * (p + 1)} ({won / (2 * (p + 1)):.1%}), timed "
                f"median {statistics.median(counts):,.0f} iterations a move, load "
                f"{os.getloadavg()[0]:.2f}",
                flush=True,
            )
    games_ = 2 * pairs
    low, high = wilson(won, games_)
    load_after = os.getloadavg()[0]
    out: dict[str, Any] = {
        "games": games_,
        "won": won,
        "share": won / games_,
        "interval": (low, high),
        "timed_median_iterations": statistics.median(counts),
        "load": (load_before[0], load_after),
    }
    print(
        f"{budget_ms:g} ms against {iterations} iterations: {won:g} of {games_} "
        f"({won / games_:.1%}, 95% {low:.1%}-{high:.1%}); the timed search's median "
        f"{out['timed_median_iterations']:,.0f} iterations a move; load average "
        f"{load_before[0]:.2f} -> {load_after:.2f}",
        flush=True,
    )
    return out


def wilson(won: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a share ``won / n``."""
    p = won / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mode", choices=("count", "callgrind", "budget", "points", "run"), default="count"
    )
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--part", choices=("search", "deal", "playout"), default="search")
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--budget-ms", type=float, default=200.0)
    parser.add_argument("--seed", default="iter38")
    parser.add_argument("--pairs", type=int, default=100, help="points: duplicate pairs")
    parser.add_argument(
        "--against", type=int, default=1_700, help="points: the other seat's iterations a move"
    )
    args = parser.parse_args()
    if args.mode == "count":
        count(args.iterations or 400)
    elif args.mode == "callgrind":
        callgrind(args.iterations or 1000)
    elif args.mode == "budget":
        budget(args.games, args.budget_ms, args.seed)
    elif args.mode == "points":
        points(args.pairs, args.budget_ms, args.against, args.seed)
    else:
        run_part(args.part, args.iterations or 100)


if __name__ == "__main__":
    main()
