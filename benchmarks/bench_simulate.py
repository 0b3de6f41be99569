"""``tabletop simulate`` on this tree against a base, whole processes in turn (A B A B).

``python benchmarks/bench_simulate.py --base REV`` checks REV out in a temporary git worktree
(or takes ``--base DIR``, a tree already unpacked, e.g. by ``git archive``), then runs each
game's command in the base and in this tree alternately, ``--pairs`` times, each process with
its working directory in its own tree so that each imports its own code. Three figures a run,
all CPU (user + system): the whole command (``python -m services.cli simulate ...``, start-up
included), the ``simulate`` call alone in a process of its own (the same games, start-up
left out), and the whole command for one game (``--games 1``: start-up, mostly); first,
once, the bytecode instructions a move of each tree's fast play-out (the interpreter's
count: no noise). Printed per pair, then the median and the range of the ratios (base / this tree:
above 1 is faster here) and the load average. ``--share`` (this tree only): how much of the
``simulate`` call is its random bots' draws (``bot_choice_index``: one HMAC block a move).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The commands (issue 26: fox 5x, skull 4x, skye 2x today's tree).
COMMANDS = {
    "fox": ["--game", "fox", "--games", "1500", "--seed", "bench26"],
    "skull": ["--game", "skull", "--games", "1000", "--players", "4", "--seed", "bench"],
    "skye": ["--game", "skye", "--games", "150", "--players", "4", "--seed", "bench"],
}

# The same games in process: the CPU of the ``simulate`` call alone.
LOOP = """
import sys, time
from shared.simulate import simulate
game, n, seed, seats = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
start = time.process_time()
result = simulate(game, games_count=n, seed=seed, seats=int(seats) if seats else None)
print(time.process_time() - start, result.actions)
"""


# Bytecode instructions a move of the fast play-out (CPython's own count: no noise), random
# bots, a few games of each command's seats.
OPS = """
import sys
from shared.app.playout import play
game, n, seats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
play(game, [{"bot": "random"}] * seats, {}, "warm", keep_envelopes=False)
ops = 0
def trace(frame, event, arg):
    global ops
    if event == "opcode":
        ops += 1
    elif event == "call":
        frame.f_trace_opcodes = True
    return trace
actions = 0
sys.settrace(trace)
for i in range(n):
    actions += play(game, [{"bot": "random"}] * seats, {}, f"ops:{i}",
                    keep_envelopes=False).actions
sys.settrace(None)
print(ops / actions)
"""
OPS_GAMES = {"fox": ("20", "2"), "skull": ("20", "4"), "skye": ("3", "4")}


def ops_per_move(tree: Path, game: str) -> float:
    """Bytecode instructions a move of ``game``'s random fast play-outs, in ``tree``."""
    done = subprocess.run([sys.executable, "-c", OPS, game, *OPS_GAMES[game]], cwd=tree,
                          check=True, capture_output=True, text=True)  # fmt: skip
    return float(done.stdout.split()[0])


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def whole(tree: Path, argv: list[str]) -> float:
    """CPU seconds of ``python -m services.cli simulate`` run in ``tree``."""
    before = _children_cpu()
    subprocess.run([sys.executable, "-m", "services.cli", "simulate", *argv], cwd=tree,
                   check=True, capture_output=True)  # fmt: skip
    return _children_cpu() - before


def start(tree: Path, argv: list[str]) -> float:
    """CPU seconds of the same command for one game: start-up, mostly."""
    at = argv.index("--games")
    return whole(tree, [*argv[: at + 1], "1", *argv[at + 2 :]])


def loop(tree: Path, argv: list[str]) -> float:
    """CPU seconds of the ``simulate`` call alone, in a process run in ``tree``."""
    opts = dict(zip(argv[::2], argv[1::2], strict=True))
    args = [opts["--game"], opts["--games"], opts["--seed"], opts.get("--players", "")]
    done = subprocess.run([sys.executable, "-c", LOOP, *args], cwd=tree, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return float(done.stdout.split()[0])


def compare(base: Path, games: list[str], pairs: int) -> dict[str, list[float]]:
    """Ratios (base / this tree) per game and figure, one per pair, printed as they come
    (first the instructions a move in each tree)."""
    ratios: dict[str, list[float]] = {}
    for game in games:
        a, b = ops_per_move(base, game), ops_per_move(ROOT, game)
        print(f"{game:5} instructions a move: base {a:.0f}  this {b:.0f}  ratio {a / b:.2f}")
    figures: dict[str, Callable[[Path, list[str]], float]] = {
        "whole": whole,
        "loop": loop,
        "start": start,
    }
    for i in range(pairs):
        for game in games:
            for name, run in figures.items():
                a, b = run(base, COMMANDS[game]), run(ROOT, COMMANDS[game])
                ratios.setdefault(f"{game} {name}", []).append(a / b)
                print(f"pair {i + 1} {game:5} {name:5}: base {a:6.2f} s  this {b:6.2f} s  "
                      f"ratio {a / b:.2f}  load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    return ratios


def draw_share(game: str) -> tuple[float, float]:
    """(CPU seconds of ``game``'s command's ``simulate`` call in this process, CPU seconds of
    its random bots' draws alone: every ``bot_choice_index`` call it made, made again). The
    draw is the fairness contract's (one HMAC-SHA256 block a move): what no driver saves."""
    from shared.app import playout
    from shared.simulate import simulate

    opts = dict(zip(COMMANDS[game][::2], COMMANDS[game][1::2], strict=True))
    players = opts.get("--players")

    def run() -> None:
        simulate(game, games_count=int(opts["--games"]), seed=opts["--seed"],
                 seats=int(players) if players else None)  # fmt: skip

    draw = playout.bot_choice_index
    calls: list[tuple[str, int, int, int]] = []

    def spy(seed: str, seat: int, version: int, n: int) -> int:
        calls.append((seed, seat, version, n))
        return draw(seed, seat, version, n)

    playout.bot_choice_index = spy
    try:
        run()
    finally:
        playout.bot_choice_index = draw
    start = time.process_time()
    run()
    total = time.process_time() - start
    start = time.process_time()
    for args in calls:
        draw(*args)
    return total, time.process_time() - start


def main() -> None:
    """Print each pair and the medians (or, with ``--share``, the draws' share)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", help="a revision, or a directory holding one")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--games", default="fox,skull,skye")
    parser.add_argument("--share", action="store_true",
                        help="this tree only: the random bots' draws' share of the CPU")  # fmt: skip
    a = parser.parse_args()
    games = a.games.split(",")
    if a.share:
        for game in games:
            total, draws = draw_share(game)
            # (A game that cannot list its commands draws through ``bot_random``: not counted.)
            print(f"{game}: simulate {total:.2f} s, the bots' draws by bot_choice_index "
                  f"{draws:.2f} s ({draws / total:.0%})")  # fmt: skip
        return
    if a.base is None:
        parser.error("--base is required (or --share)")
    if Path(a.base).is_dir():
        ratios = compare(Path(a.base), games, a.pairs)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            old = Path(tmp) / "base"
            subprocess.run(["git", "worktree", "add", "--detach", str(old), a.base], cwd=ROOT,
                           check=True, capture_output=True)  # fmt: skip
            try:
                ratios = compare(old, games, a.pairs)
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT,
                               check=False, capture_output=True)  # fmt: skip
    print("\nbase / this tree, CPU (median, min-max):")
    for key, values in ratios.items():
        print(f"  {key}: {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})")


if __name__ == "__main__":
    main()
