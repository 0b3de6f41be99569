"""Random play-outs of The Fox in the Forest in-process: actions/s and games/s.

Each action is the loop a search bot runs: ``to_act`` -> ``legal_commands`` -> a uniformly random
command -> ``decide`` (with a fresh ``Rng`` per action, as the service gives one per version) ->
``evolve`` for every event. Run: ``python benchmarks/bench_fox_engine.py --games 2000``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.games import fox  # noqa: E402
from shared.games.rng import Rng  # noqa: E402


def play_games(games: int, seed: int) -> int:
    """Plays ``games`` random games; returns the number of actions (commands decided)."""
    chooser = random.Random(seed)
    to_act, legal_commands, decide, evolve = fox.to_act, fox.legal_commands, fox.decide, fox.evolve
    actions = 0
    for g in range(games):
        secret = f"bench-{seed}-{g}"
        state = None
        for event in fox.setup(2, {}, Rng(secret)):
            state = evolve(state, event)
        n = 0
        while True:
            seats = to_act(state)
            if not seats:
                break
            seat = seats[0]
            cmds = legal_commands(state, seat)
            cmd = chooser.choice(cmds)
            for e in decide(state, seat, cmd, Rng(secret, f"v{n}")):
                state = evolve(state, e)
            n += 1
        actions += n
    return actions


def main() -> None:
    """Parses the arguments, runs the play-outs and prints the rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    parser.add_argument("--profile", action="store_true", help="cProfile one run instead")
    args = parser.parse_args()
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(play_games, args.games, args.seed)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        return
    best = None
    for _ in range(args.repeat):
        # CPU time of this process: steadier than wall time on a shared machine.
        start = time.process_time()
        actions = play_games(args.games, args.seed)
        elapsed = time.process_time() - start
        if best is None or elapsed < best[0]:
            best = (elapsed, actions)
    elapsed, actions = best
    print(
        f"{args.games} games, {actions} actions in {elapsed:.3f} s (CPU): "
        f"{actions / elapsed:,.0f} actions/s, {args.games / elapsed:,.1f} games/s "
        f"({actions / args.games:.0f} actions/game)"
    )


if __name__ == "__main__":
    main()
