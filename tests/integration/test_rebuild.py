"""Projections are disposable: a rebuild from the events writes the same bytes."""

from __future__ import annotations

import json
import random

import pytest
import redis

from shared import keys
from shared.policies import random_policy
from shared.service import CommandMessage, GameService, NullDispatcher
from shared.store.redis_streams import RedisEventStore

SEATS = {"fox": 2, "skull": 4, "skye": 3}


@pytest.mark.parametrize("game", ["fox", "skull", "skye"])
def test_rebuild_from_events_gives_the_same_bytes(redis_client: redis.Redis, game: str) -> None:
    live = GameService(RedisEventStore(redis_client), redis_client, dispatcher=NullDispatcher())
    gid = live.create(game, [{"name": f"p{i}"} for i in range(SEATS[game])]).game_id
    rng = random.Random(3)
    for n in range(60):
        public = json.loads(redis_client.get(keys.public(gid)))
        if public["outcome"] is not None:
            break
        seat = public["to_act"][0]
        view = json.loads(redis_client.get(keys.view(gid, seat)))
        command = random_policy(view, rng)
        assert command is not None
        outcome = live.handle(CommandMessage(command_id=f"c{n}", game_id=gid, seat=seat,
                                             body=command))
        assert outcome["status"] == "accepted", outcome
    names = [keys.view(gid, s) for s in range(SEATS[game])] + [keys.public(gid)]
    before = [redis_client.get(k) for k in names]
    for k in names:
        redis_client.delete(k)
    fresh = GameService(RedisEventStore(redis_client), redis_client, dispatcher=NullDispatcher())
    fresh.rebuild(gid)
    assert [redis_client.get(k) for k in names] == before
