"""Loading a game with a cold cache: read every event from Redis and fold it, per game type.

This is what a worker pays for a game it has not seen (after a restart, or when another
worker took the game over): the figure that decides whether snapshots are worth keeping.
Each game is played to the end with random legal commands through the handlers.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared import games  # noqa: E402
from shared.app import commands, creation  # noqa: E402
from shared.app.bots import random_bot  # noqa: E402
from shared.app.context import App  # noqa: E402
from shared.app.messages import CommandMessage  # noqa: E402
from shared.bootstrap import bootstrap  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.match.projections import view  # noqa: E402
from shared.redis_server import RedisServer  # noqa: E402

GAMES = (("fox", 2), ("skull", 4), ("skye", 4))


def _play_to_the_end(app: App, game: str, seats: int, rng: random.Random) -> str:
    engine = games.get(game)
    gid = creation.create_game(app, game, [{"name": f"p{i}"} for i in range(seats)]).game_id
    n = 0
    while True:
        record = app.load(gid)
        if engine.outcome(record.state) is not None:
            return gid
        seat = engine.to_act(record.state)[0]
        body = random_bot(view(record, seat), rng)
        assert body is not None
        message = CommandMessage(command_id=f"c{n}", game_id=gid, seat=seat, body=body)
        commands.decide_command(app, message)
        n += 1


def run(loads: int = 50) -> list[dict[str, Any]]:
    """Per game type: events in a finished game and the mean time of a cold load."""
    server = RedisServer()
    out = []
    try:
        r = redis.Redis.from_url(server.url)
        app = bootstrap(Settings(), client=r)
        rng = random.Random(3)
        for game, seats in GAMES:
            gid = _play_to_the_end(app, game, seats, rng)
            version = app.load(gid).version
            start = time.perf_counter()
            for _ in range(loads):
                app.records.clear()  # a cold cache is the point
                app.load(gid)
            ms = (time.perf_counter() - start) / loads * 1e3
            out.append({"game": game, "seats": seats, "events": version, "cold_load_ms": ms})
    finally:
        server.stop()
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
