"""A bot's input is only its own seat's view."""

from __future__ import annotations

import json

import fakeredis

from shared import keys
from shared.bot_turns import play_bot_move
from shared.service import GameService
from shared.store.memory import MemoryEventStore


class SpyRedis(fakeredis.FakeRedis):
    """Records every key read with GET."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.read: list[str] = []

    def get(self, name):  # type: ignore[override]
        self.read.append(name if isinstance(name, str) else name.decode())
        return super().get(name)


def test_bot_reads_only_its_own_view_and_submits_through_the_stream() -> None:
    r = SpyRedis()
    svc = GameService(MemoryEventStore(), r)
    for seed in range(20):  # a seed whose first trick the bot (seat 1) leads
        gid = svc.create("fox", [{"name": "a"}, {"bot": "random"}], seed=f"s{seed}").game_id
        public = json.loads(r.get(keys.public(gid)))
        if public["to_act"] == [1]:
            break
    assert public["to_act"] == [1]
    r.read.clear()
    version = public["version"]
    cid = play_bot_move(svc, gid, 1, version)
    assert r.read == [keys.view(gid, 1)]
    entries = r.xrange(keys.command_stream("fox", 0))
    assert len(entries) == 1 and entries[0][1][b"id"].decode() == cid
    # The same task again submits the same command id (the store applies it once).
    assert play_bot_move(svc, gid, 1, version) == cid


def test_bot_task_for_an_old_version_does_nothing() -> None:
    r = fakeredis.FakeRedis()
    svc = GameService(MemoryEventStore(), r)
    gid = svc.create("fox", [{"bot": "random"}, {"bot": "random"}]).game_id
    assert play_bot_move(svc, gid, 0, 0) == "stale"
    assert r.xlen(keys.command_stream("fox", 0)) == 0
