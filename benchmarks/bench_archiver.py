"""The archiver's own speed (issue 36): a tournament's one-hand Fox games stored in a fresh
redis-server (in process, as a tournament batch stores them), then moved to a SQLite archive by
``services.worker.archiver.sweep_all``: games moved per second, in this process alone.

    .venv/bin/python benchmarks/bench_archiver.py --games 2000
    .venv/bin/python benchmarks/bench_archiver.py --games 2000 --profile   # where it goes
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.worker.archiver import sweep_all  # noqa: E402
from shared.app import tournaments  # noqa: E402
from shared.bootstrap import bootstrap  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.redis_server import RedisServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    server = RedisServer()
    try:
        client = redis.Redis.from_url(server.url)
        folder = tempfile.mkdtemp(prefix="bench-archiver-")
        app = bootstrap(
            Settings(bot_dispatch="none", archive_url=os.path.join(folder, "archive.sqlite3")),
            client=client,
        )
        body = {"game": "fox", "games": args.games, "players": 2, "options": {"target": 1},
                "entrants": [{"bot": "random"}, {"bot": "random"}]}  # fmt: skip
        tid, plan = tournaments.create_tournament(app, body, max_games=args.games)
        for batch in tournaments.chunks(plan.to_doc()):
            tournaments.play_games(app, tid, batch)
        assert app.ports.archive is not None
        profile = cProfile.Profile() if args.profile else None
        started = time.perf_counter()
        if profile:
            profile.enable()
        moved = sweep_all(app, app.ports.archive)
        if profile:
            profile.disable()
        seconds = time.perf_counter() - started
        print(json.dumps({"games": moved, "seconds": round(seconds, 2),
                          "games_s": round(moved / seconds, 1), "load": os.getloadavg()}))  # fmt: skip
        if profile:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
