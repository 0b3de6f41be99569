"""Redis memory per finished game: play N Fox games to the end through the handlers on a
fresh redis-server and divide the growth of ``used_memory`` by N.

Reported in two parts: the game's own keys (log, head, command ids, meta, projections,
command results) and its share of the command log (``cmd:fox:*``), which is kept as the audit
trail of every submitted command.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared import keys  # noqa: E402
from shared.app import creation  # noqa: E402
from shared.app.commands import decide_command, submit_command  # noqa: E402
from shared.app.messages import CommandMessage  # noqa: E402
from shared.bootstrap import bootstrap  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.redis_server import RedisServer  # noqa: E402


def run(games: int = 200, target: int = 21) -> dict[str, Any]:
    """Play ``games`` all-human Fox games to the end; returns bytes per game."""
    server = RedisServer()
    try:
        r = redis.Redis.from_url(server.url)
        app = bootstrap(Settings(), client=r)
        rng = random.Random(7)
        r.memory_purge() if hasattr(r, "memory_purge") else None
        base = r.info("memory")["used_memory"]
        events = commands = 0
        ids = []
        for g in range(games):
            gid = creation.create_game(
                app, "fox", [{"name": "a"}, {"name": "b"}], {"target": target}
            ).game_id
            ids.append(gid)
            n = 0
            while True:
                pub = json.loads(r.get(keys.public(gid)))
                if pub["outcome"] is not None:
                    break
                seat = pub["to_act"][0]
                view = json.loads(r.get(keys.view(gid, seat)))
                msg = CommandMessage(
                    command_id=f"c{g}-{n}",
                    game_id=gid,
                    seat=seat,
                    body=rng.choice(view["legal_commands"]),
                )
                submit_command(app, msg, "fox")
                decide_command(app, msg)
                n += 1
            commands += n
            events += app.ports.store.head(gid)[0]
        # Reply lists are transient (popped by a waiting gateway, else gone after 60 s).
        transient = sum(r.memory_usage(k) or 0 for k in r.scan_iter("game:*:reply:*"))
        for k in list(r.scan_iter("game:*:reply:*")):
            r.delete(k)
        total = r.info("memory")["used_memory"] - base
        log = sum(r.memory_usage(k) or 0 for k in r.scan_iter("cmd:*"))
        sample = ids[0]
        per_key = {
            "log": r.memory_usage(keys.log(sample)),
            "views+public": sum(r.memory_usage(keys.view(sample, s)) for s in (0, 1))
            + r.memory_usage(keys.public(sample)),
            "command ids": r.memory_usage(keys.commands(sample)),
            "command results (24 h TTL)": sum(
                r.memory_usage(k) or 0 for k in r.scan_iter(f"game:{{{sample}}}:result:*")
            ),
        }
        return {
            "games": games,
            "target": target,
            "commands_per_game": commands / games,
            "events_per_game": events / games,
            "bytes_per_game_total": total / games,
            "bytes_per_game_command_log": log / games,
            "bytes_per_game_own_keys": (total - log) / games,
            "bytes_per_game_transient_replies": transient / games,
            "sample_game_keys": per_key,
        }
    finally:
        server.stop()


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 200), indent=2))
