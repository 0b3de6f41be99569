"""Acknowledged command-stream entries are trimmed; nothing still needed is: an entry not yet
read, or one read by a worker that died before acknowledging it."""

from __future__ import annotations

import redis

from shared.adapters.retention import GROUP, trim_acknowledged


def test_only_acknowledged_entries_are_trimmed(redis_client: redis.Redis) -> None:
    stream = "cmd:{fox}:0"
    assert trim_acknowledged(redis_client, stream) == 0  # no stream yet
    ids = [redis_client.xadd(stream, {"n": str(i)}) for i in range(10)]
    assert trim_acknowledged(redis_client, stream) == 0  # no group: nothing read yet
    redis_client.xgroup_create(stream, GROUP, id="0")
    read = redis_client.xreadgroup(GROUP, "w1", {stream: ">"}, count=6)
    delivered = [entry_id for entry_id, _ in read[0][1]]
    assert delivered == ids[:6]
    redis_client.xack(stream, GROUP, *delivered[:2], *delivered[3:6])  # the third stays pending
    assert trim_acknowledged(redis_client, stream, exact=True) == 2  # the two before it
    left = [entry_id for entry_id, _ in redis_client.xrange(stream)]
    assert left == ids[2:]  # the pending one and everything after it
    redis_client.xack(stream, GROUP, delivered[2])
    assert trim_acknowledged(redis_client, stream, exact=True) == 4
    assert [entry_id for entry_id, _ in redis_client.xrange(stream)] == ids[6:]  # never read
    # The group still reads on where it was: nothing it has not seen was lost.
    rest = redis_client.xreadgroup(GROUP, "w2", {stream: ">"})
    assert [entry_id for entry_id, _ in rest[0][1]] == ids[6:]
