"""A unit's writes on one server (``OneServerWrites``) are the commands a redis-py pipeline
queues for the same calls, and they land as that pipeline's would, errors included."""

from __future__ import annotations

import pytest
import redis

from shared.adapters.redis import OneServerWrites


def _calls(target: object) -> None:
    # Every write the adapters make inside a unit (shared/adapters/redis.py), in their spelling.
    target.set("k:view:0", "{}")  # type: ignore[attr-defined]
    target.set("k:result", "ok", ex=86400)  # type: ignore[attr-defined]
    target.hset("k:meta", "tokens", "[null]")  # type: ignore[attr-defined]
    target.zadd("games:finished", {"g1": 12.5}, nx=True)  # type: ignore[attr-defined]
    target.zadd("deadlines", {"g1:bot": 3.0, "g2:bot": 4.0})  # type: ignore[attr-defined]
    target.zrem("deadlines", "g2:bot")  # type: ignore[attr-defined]
    target.lpush("k:reply", "reply")  # type: ignore[attr-defined]
    target.expire("k:reply", 60)  # type: ignore[attr-defined]
    target.publish("game:g1", "7")  # type: ignore[attr-defined]
    target.xack(b"cmd:{fox}:0", "workers", b"1-0")  # type: ignore[attr-defined]


def test_it_queues_what_a_pipeline_queues() -> None:
    pipe = redis.Redis().pipeline(transaction=False)  # nothing is sent: no server needed
    _calls(pipe)
    writes = OneServerWrites()
    _calls(writes)
    conn = redis.Connection()  # packs; never connects
    packed = b"".join(conn.pack_commands(writes.commands))
    assert packed == b"".join(conn.pack_commands([args for args, _ in pipe.command_stack]))
    assert bool(OneServerWrites())  # an open block with nothing queued yet is still open


def test_its_writes_land_and_an_error_is_told_as_a_pipelines(
    redis_client: redis.Redis,
) -> None:
    writes = OneServerWrites()
    _calls(writes)
    writes.execute(redis_client)
    assert redis_client.get("k:view:0") == b"{}"
    assert 0 < redis_client.ttl("k:result") <= 86400
    assert redis_client.zrange("deadlines", 0, -1) == [b"g1:bot"]
    assert redis_client.lrange("k:reply", 0, -1) == [b"reply"]
    redis_client.set("not-a-hash", "x")
    failing = OneServerWrites()
    failing.hset("not-a-hash", "f", "v")
    failing.set("after", "1")
    pipe = redis_client.pipeline(transaction=False)
    pipe.hset("not-a-hash", "f", "v")
    with pytest.raises(redis.ResponseError) as expected:
        pipe.execute()
    with pytest.raises(redis.ResponseError) as got:
        failing.execute(redis_client)
    assert str(got.value) == str(expected.value)
    assert redis_client.get("after") == b"1"  # the rest of the block still ran, as a pipeline's
