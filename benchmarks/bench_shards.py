"""How the workers' throughput grows with their number: 1, 2 and 4 Fox worker processes on 4
shards (leases: each shard decided by one worker at a time, in order).

Each run starts its own redis-server, creates all-human Fox games, queues every command of
every game at once (each game's moves from a random play-out of the same seed, so each is
legal when its turn comes, if and only if the game's commands are decided in order), then
starts the workers and times them until every game has reached its last version. Every command
must be accepted: a refused one would mean a game's commands were decided out of order.

Run: ``python benchmarks/bench_shards.py --games 96 --workers 1,2,4`` (``--json PATH`` writes the
figures for ``make bench``).
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

from benchmarks.common import machine  # noqa: E402
from shared import keys  # noqa: E402
from shared.app import commands, creation  # noqa: E402
from shared.app.messages import CommandMessage  # noqa: E402
from shared.app.playout import play  # noqa: E402
from shared.bootstrap import bootstrap  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.redis_server import RedisServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARDS = 4


def one_run(games: int, workers: int, deadline_s: float) -> dict[str, Any]:
    """Commands per second decided by ``workers`` Fox workers from a queued backlog."""
    server = RedisServer()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        client = redis.Redis.from_url(server.url)
        settings = Settings(redis_url=server.url, shards=SHARDS)
        app = bootstrap(settings, client=client)
        final: dict[str, int] = {}
        queued: list[list[CommandMessage]] = []
        for g in range(games):
            seed = f"shards-{g}"
            gid = creation.create_game(
                app, "fox", [{"name": "a"}, {"name": "b"}], {"target": 11}, seed
            ).game_id
            played = play("fox", [{"bot": "random"}] * 2, {"target": 11}, seed)
            queued.append(
                [
                    CommandMessage(command_id=f"c-{i}", game_id=gid, seat=seat, body=body)
                    for i, (_cid, seat, body) in enumerate(played.commands)
                ]
            )
            final[gid] = played.record.version
        # Round robin over the games: each stream holds many games, each game's in order.
        total = 0
        for step in range(max(len(q) for q in queued)):
            for q in queued:
                if step < len(q):
                    commands.submit_command(app, q[step], "fox")
                    total += 1
        env = {**os.environ, "REDIS_URL": server.url, "TABLETOP_SHARDS": str(SHARDS)}
        env.pop("TABLETOP_METRICS_PORT", None)
        started = time.perf_counter()
        for _ in range(workers):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "services.cli", "worker", "--game", "fox"],
                    env=env,
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
            )
        left = dict(final)
        while left:
            if time.perf_counter() - started > deadline_s:
                raise RuntimeError(f"{len(left)} games unfinished after {deadline_s:g} s")
            for gid in list(left):
                raw = client.get(keys.public(gid))
                if raw is not None and json.loads(raw)["version"] >= left[gid]:
                    del left[gid]
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        refused = sum(
            1
            for q in queued
            for m in q
            if (raw := client.get(keys.result(m.game_id, m.command_id))) is not None
            and json.loads(raw).get("status") != "accepted"
        )
        return {
            "workers": workers,
            "games": games,
            "commands": total,
            "seconds": seconds,
            "commands_per_s": total / seconds,
            "refused": refused,
        }
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=96)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--deadline", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    runs = [one_run(args.games, int(n), args.deadline) for n in args.workers.split(",")]
    base = runs[0]["commands_per_s"]
    for r in runs:
        r["speedup"] = r["commands_per_s"] / base
        print(
            f"{r['workers']} worker(s): {r['commands']} commands in {r['seconds']:.1f} s = "
            f"{r['commands_per_s']:.0f}/s ({r['speedup']:.2f}x), refused {r['refused']}"
        )
    doc = {
        "command": f"python benchmarks/bench_shards.py --games {args.games} "
        f"--workers {args.workers}",
        "machine": machine(),
        "shards": SHARDS,
        "runs": runs,
    }
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n")


def section(path: Path) -> list[str]:
    """The BENCHMARKS.md section of the last run (``--json``)."""
    if not path.exists():
        return []
    d = json.loads(path.read_text())
    lines = [
        "",
        "## Workers and shards",
        "",
        f"`{d['command']}` on {d['machine']}: Fox workers on {d['shards']} shards with leases "
        "(each shard decided by one worker at a time, in order), deciding a queued backlog of "
        "every command of all-human Fox games to 11 points; timed from the workers' start "
        "(their start-up included) to every game's last version. A refused command would mean "
        "a game's commands were decided out of order.",
        "",
        "| workers | commands | seconds | commands/s | vs. 1 worker | refused |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in d["runs"]:
        lines.append(
            f"| {r['workers']} | {r['commands']:,} | {r['seconds']:.1f} | "
            f"{r['commands_per_s']:,.0f} | {r['speedup']:.2f}x | {r['refused']} |"
        )
    return [
        *lines,
        "",
        "On these 2 cores the workers share the CPU with Redis, the poller and each other: 2 "
        "workers gain a little, 4 nothing more. A core decides about 500 commands a second "
        "here, so a deployment adds shards and workers on more cores (deploy/SCALING.md).",
    ]


if __name__ == "__main__":
    main()
