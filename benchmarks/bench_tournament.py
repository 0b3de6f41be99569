"""A Fox tournament of random bots through Celery and Redis, against ``tabletop simulate`` of
the same games in the same run; and the Redis memory per stored tournament game.

Starts its own redis-server and a Celery worker on the tournament queue with one process per
core; in each of ``--rounds`` rounds, plays a tournament's games (same seats, same seeds,
same bots) in process with the play-out driver's fast path, as ``tabletop simulate`` does,
then creates the tournament through the application (as ``POST /v1/tournaments`` does) and
waits for it to finish, then plays the in-process games again: the round's ratio sets the
tournament's rate against the two in-process runs taken together. The median round's
figures are reported, with every round's ratio.

Run: ``python benchmarks/bench_tournament.py --games 1000 --rounds 3`` (JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402

from benchmarks.common import cpu_seconds, machine, redis_cpu_seconds  # noqa: E402
from services.celery_client import TOURNAMENT_QUEUE, CeleryDispatcher  # noqa: E402
from shared.app import tournament_views, tournaments  # noqa: E402
from shared.app.playout import play  # noqa: E402
from shared.bootstrap import bootstrap  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.match.clock import ms_of  # noqa: E402
from shared.redis_server import RedisServer  # noqa: E402
from shared.tournaments.plan import Plan  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def body(games: int, seed: str) -> dict[str, Any]:
    """The tournament: two random bots, Fox matches to the default target, seats rotated."""
    return {
        "game": "fox",
        "entrants": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "random"}],
        "games": games,
        "format": "round_robin",
        "seed": seed,
    }


def through_celery(
    url: str, games: int, seed: str, concurrency: int, rounds: int
) -> list[dict[str, Any]]:
    """Per round: seconds from creating a tournament to its last game folded, CPU and memory
    per game; then the same games played in process (``in_process``), so that each round's
    ratio compares the two in the same minute of this noisy machine."""
    client = redis.Redis.from_url(url)
    env = {**os.environ, "REDIS_URL": url}
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "services.bots.worker",
            "worker",
            "-Q",
            TOURNAMENT_QUEUE,
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "WARNING",
            "-n",
            f"bench-{os.getpid()}@%h",
        ],  # fmt: skip
        env=env,
        cwd=ROOT,
    )
    try:
        settings = Settings(redis_url=url)
        app = bootstrap(settings, dispatcher=CeleryDispatcher(settings))
        # Wait until the worker consumes (a first tiny tournament), so its start-up is not
        # counted in the figure.
        warm, _ = tournaments.create_tournament(app, body(2, "warm-up"), max_games=games)
        _wait(app, warm, 120)
        out = []
        for r in range(rounds):
            round_seed = seed if r == 0 else f"{seed}-{r}"
            pre_sim = in_process(games, round_seed)
            before = int(client.info("memory")["used_memory"])
            cpu_before = cpu_seconds(worker.pid), redis_cpu_seconds(client)
            # Timed on the service's clock, to the time its last fold recorded: the end does
            # not wait for this process's next poll.
            started = app.ports.clock.epoch()
            tid, _ = tournaments.create_tournament(app, body(games, round_seed), max_games=games)
            last = _wait(app, tid, 3600, progress=True)
            finished_at = tournament_views.tournament_doc(app, tid, limit=1)["finished_at"]
            seconds = ms_of(finished_at) / 1000 - started
            cpu_after = cpu_seconds(worker.pid), redis_cpu_seconds(client)
            after = int(client.info("memory")["used_memory"])
            celery = {
                # CPU per game of the Celery worker (main process and pool) and of
                # redis-server: steadier than the rates on a shared machine, and what the
                # rate is made of.
                "celery_cpu_ms_per_game": (cpu_after[0] - cpu_before[0]) * 1000 / games,
                "redis_cpu_ms_per_game": (cpu_after[1] - cpu_before[1]) * 1000 / games,
                "tournament": tid,
                "games": games,
                "seconds": seconds,
                "games_per_s": games / seconds,
                "bytes_per_game": (after - before) / games,
                "progress": last,
            }
            # simulate just before and just after the tournament, the two runs taken as one:
            # this machine's speed drifts within seconds, and the bracket spans the drift.
            before_sim, after_sim = pre_sim, in_process(games, round_seed)
            local = {
                "games": games,
                "seconds": before_sim["seconds"] + after_sim["seconds"],
                "games_per_s": 2 * games / (before_sim["seconds"] + after_sim["seconds"]),
                "cpu_ms_per_game": (before_sim["cpu_ms_per_game"] + after_sim["cpu_ms_per_game"])
                / 2,
                "before_games_per_s": before_sim["games_per_s"],
                "after_games_per_s": after_sim["games_per_s"],
            }
            ratio = celery["games_per_s"] / local["games_per_s"]
            print(f"  round {r + 1}: ratio {ratio:.3f}", file=sys.stderr, flush=True)
            out.append({"celery": celery, "simulate": local, "ratio": ratio})
        return out
    finally:
        worker.terminate()
        worker.wait(30)


def _wait(app: Any, tid: str, timeout: float, *, progress: bool = False) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    shown = -1
    while time.monotonic() < deadline:
        doc = tournament_views.tournament_doc(app, tid, limit=1)
        done = doc["progress"]["done"]
        if progress and done // 100 != shown:
            shown = done // 100
            print(f"  {done}/{doc['progress']['total']} games", file=sys.stderr, flush=True)
        if doc["status"] == "finished":
            return dict(doc["progress"])
        time.sleep(0.25)
    raise TimeoutError(f"tournament {tid} did not finish")


def in_process(games: int, seed: str) -> dict[str, Any]:
    """The same games played in process (``tabletop simulate``'s path: no envelopes)."""
    from shared.tournaments.plan import parse

    plan: Plan = parse(body(games, seed), max_games=games)
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(games):
        play(plan.game, plan.seat_specs(i), plan.options, plan.game_seed(i), keep_envelopes=False)
    seconds = time.perf_counter() - started
    return {
        "games": games,
        "seconds": seconds,
        "games_per_s": games / seconds,
        "cpu_ms_per_game": (time.process_time() - cpu) * 1000 / games,
    }


def _median_round(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return sorted(rounds, key=lambda r: r["ratio"])[(len(rounds) - 1) // 2]


def main() -> None:
    """Runs both, round after round, and prints the median round's ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", default="bench-tournament")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    server = RedisServer()
    try:
        rounds = through_celery(server.url, args.games, args.seed, args.concurrency, args.rounds)
    finally:
        server.stop()
    middle = _median_round(rounds)
    result = {
        "machine": machine(),
        "command": f"python benchmarks/bench_tournament.py --games {args.games} "
        f"--rounds {args.rounds}",
        "concurrency": args.concurrency,
        # The median round's figures; every round's ratio beside them.
        "celery": middle["celery"],
        "simulate": middle["simulate"],
        "ratio": middle["ratio"],
        "ratios": [r["ratio"] for r in rounds],
        "rounds": rounds,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
