"""A game's log in Redis, written and read as the service does: ``RedisEventStore`` alone.

Plays ``--games`` all-human Fox games to the end in memory (random legal commands), then, on
a fresh redis-server, appends each game's envelopes command by command (one ``append`` per
command, as the worker does), in passes over the same games under new ids:

- ``append``: the appends alone (after a first pass, not counted, that warms up);
- ``append+feed``: each append followed by the live feed's read of the new entries
  (``read(after=<version before>, limit=<new entries>)``);
- ``cold load``: one ``read`` of each whole log (a worker's first load, an audit, an export);

then stores the same logs whole (``whole logs``: ``append_logs`` of ten games at a time, as a
tournament stores its games).

Each pass reports wall time and the redis-server's CPU (``INFO cpu``, user + system) per game;
then the Redis memory of a game's keys, written live and written whole. The script uses the
tree it sits in: to compare two trees, copy it into the other and run both in turn, A B A B.

Run: ``python benchmarks/bench_log_store.py --games 200`` (JSON on stdout).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from benchmarks.common import machine, redis_cpu_seconds  # noqa: E402
from shared.app import creation  # noqa: E402
from shared.app.commands import decide_command  # noqa: E402
from shared.app.messages import CommandMessage  # noqa: E402
from shared.bootstrap import bootstrap  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.events import GENESIS_HASH, EncodedLog, Envelope, stored_json  # noqa: E402
from shared.redis_server import RedisServer  # noqa: E402
from shared.store.redis_log import RedisEventStore  # noqa: E402

WHOLE_BATCH = 10  # whole logs per ``append_logs``, as a tournament's Celery task stores its games
Batches = list[tuple[str | None, list[Envelope]]]  # (command id, its envelopes), in order


def fox_games(games: int, seed: int) -> list[Batches]:
    """Each game's envelopes, cut where the command id changes (one append each)."""
    app = bootstrap(Settings(), backend="memory")
    rng = random.Random(seed)
    out = []
    for g in range(games):
        gid = creation.create_game(
            app, "fox", [{"name": "a"}, {"name": "b"}], seed=f"{seed}-{g}"
        ).game_id
        n = 0
        while True:
            public = json.loads(app.ports.read_models.read(gid, None) or b"null")
            if public["outcome"] is not None:
                break
            seat = public["to_act"][0]
            view = json.loads(app.ports.read_models.read(gid, seat) or b"null")
            msg = CommandMessage(command_id=f"c{g}-{n}", game_id=gid, seat=seat,
                                 body=rng.choice(view["legal_commands"]))  # fmt: skip
            decide_command(app, msg)
            n += 1
        batches: Batches = []
        for env in app.ports.store.read(gid):
            if batches and batches[-1][0] == env.command_id:
                batches[-1][1].append(env)
            else:
                batches.append((env.command_id, [env]))
        out.append(batches)
    return out


def run(games: int, seed: int) -> dict[str, Any]:
    logs = fox_games(games, seed)
    server = RedisServer()
    try:
        client = redis.Redis.from_url(server.url)
        store = RedisEventStore(client)
        figures: dict[str, Any] = {}
        for mode in ("warm-up", "append", "append+feed"):
            cpu0, t0 = redis_cpu_seconds(client), time.perf_counter()
            for g, batches in enumerate(logs):
                gid = f"{mode}-{g}"
                version = 0
                for cid, envs in batches:
                    store.append(gid, envs, expected_version=version, command_id=cid)
                    if mode == "append+feed":
                        got = store.read(gid, after=version, limit=len(envs))
                        assert len(got) == len(envs)
                    version += len(envs)
            figures[mode] = _per_game(client, cpu0, t0, games)
        del figures["warm-up"]  # the first pass pays for the server's and the client's start
        cpu0, t0 = redis_cpu_seconds(client), time.perf_counter()
        for g, batches in enumerate(logs):
            assert len(store.read(f"append-{g}")) == sum(len(e) for _c, e in batches)
        figures["cold load"] = _per_game(client, cpu0, t0, games)
        wholes = [_whole(batches) for batches in logs]
        cpu0, t0 = redis_cpu_seconds(client), time.perf_counter()
        for at in range(0, games, WHOLE_BATCH):
            batch = [(f"whole-{g}", wholes[g]) for g in range(at, min(at + WHOLE_BATCH, games))]
            assert all(r.last > 0 for r in store.append_logs(batch, command_id="create"))  # type: ignore[union-attr]
        figures["whole logs"] = _per_game(client, cpu0, t0, games)
        memory = {kind: sum(_bytes(client, f"{kind}-{g}") for g in range(games)) / games
                  for kind in ("append", "whole")}  # fmt: skip
        envelopes = sum(len(e) for batches in logs for _c, e in batches)
        return {
            "machine": machine(),
            "games": games,
            "commands_per_game": sum(len(b) for b in logs) / games,
            "envelopes_per_game": envelopes / games,
            "redis_bytes_per_live_game": memory["append"],
            "redis_bytes_per_whole_game": memory["whole"],
            "passes": figures,
        }
    finally:
        server.stop()


def _whole(batches: Batches) -> EncodedLog:
    """A game's envelopes as a tournament writes its log: encoded, whole, from version 1."""
    raws = [stored_json(env) for _cid, envs in batches for env in envs]
    return EncodedLog(prev_hash=GENESIS_HASH, first=1, raws=raws, hash=batches[-1][1][-1].hash)


def _bytes(client: redis.Redis, game_id: str) -> int:
    """Redis memory of one game's keys (``MEMORY USAGE``, each key with its value)."""
    return sum(client.memory_usage(k) or 0 for k in client.scan_iter(f"game:{{{game_id}}}:*"))


def _per_game(client: redis.Redis, cpu0: float, t0: float, games: int) -> dict[str, float]:
    wall = time.perf_counter() - t0
    cpu = redis_cpu_seconds(client) - cpu0
    return {"wall_ms_per_game": wall / games * 1e3, "redis_cpu_ms_per_game": cpu / games * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(json.dumps(run(args.games, args.seed), indent=2))


if __name__ == "__main__":
    main()
