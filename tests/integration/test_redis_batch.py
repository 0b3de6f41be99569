"""The Redis adapters write through redis-py's public pipeline, no hand-rolled twin (issue 27):
a block's writes on one server are one ``Pipeline`` (any command it has, in one round trip,
errors told as it tells them), and a batch of whole logs is one pipeline of scripts."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from redis.client import Pipeline

from shared.adapters.redis import RedisBatch
from shared.events import GENESIS_HASH, ChainWriter, json_bytes
from shared.store.redis_log import RedisEventStore


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per write to a connection's socket: how many commands it carried."""
    sent: list[int] = []
    plain = redis.Connection.send_packed_command

    def counted(self: redis.Connection, command: Any, check_health: bool = True) -> None:
        sent.append(1)
        plain(self, command, check_health)

    monkeypatch.setattr(redis.Connection, "send_packed_command", counted)
    return sent


def test_a_blocks_writes_are_one_redis_py_pipeline(
    redis_client: redis.Redis, round_trips: list[int]
) -> None:
    batch = RedisBatch(redis_client)
    with batch(extra=lambda pipe: pipe.expire("k:list", 60)):
        writer = batch.writer()
        assert isinstance(writer, Pipeline)
        writer.set("k:view", "{}")
        writer.incr("k:n")  # any of redis-py's commands, not a chosen few
        writer.hset("k:meta", mapping={"a": "1", "b": "2"})
        writer.lpush("k:list", "x")
        batch.publish("game:g1", "7")
        assert redis_client.get("k:view") is None  # nothing sent before the block ends
        round_trips.clear()
    assert len(round_trips) == 1
    assert redis_client.get("k:view") == b"{}" and redis_client.get("k:n") == b"1"
    assert redis_client.hgetall("k:meta") == {b"a": b"1", b"b": b"2"}
    assert 0 < redis_client.ttl("k:list") <= 60
    assert batch.writer() is redis_client  # no block open


def test_an_error_in_a_block_is_the_pipelines_and_the_rest_still_lands(
    redis_client: redis.Redis,
) -> None:
    redis_client.set("not-a-hash", "x")
    batch = RedisBatch(redis_client)
    with pytest.raises(redis.ResponseError) as got, batch():
        batch.writer().hset("not-a-hash", "f", "v")
        batch.writer().set("after", "1")
    pipe = redis_client.pipeline(transaction=False)
    pipe.hset("not-a-hash", "f", "v")
    with pytest.raises(redis.ResponseError) as expected:
        pipe.execute()
    assert str(got.value) == str(expected.value)
    assert redis_client.get("after") == b"1"


def _whole(n: int) -> Any:
    writer = ChainWriter("batch", version=0, prev_hash=GENESIS_HASH)
    writer.begin(command_id="create", seat=None, at="2026-11-30T00:00:00Z")
    for i in range(n):
        writer.add("thing_happened", json_bytes({"i": i, "pad": "x" * 7000}))  # large arguments
    return writer.log


def test_a_batch_of_whole_logs_is_one_pipeline(
    redis_client: redis.Redis, round_trips: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RedisEventStore(redis_client)
    executed: list[int] = []
    plain = Pipeline.execute

    def counted(self: Pipeline, raise_on_error: bool = True) -> list[Any]:
        executed.append(len(self.command_stack))
        return plain(self, raise_on_error)

    monkeypatch.setattr(Pipeline, "execute", counted)
    store.append_logs([("w1", _whole(3))], command_id="warm")  # loads the script
    executed.clear()
    round_trips.clear()
    results = store.append_logs([(f"w{i}", _whole(2)) for i in range(2, 6)], command_id="c")
    assert [(r.first, r.last) for r in results] == [(1, 2)] * 4  # type: ignore[union-attr]
    assert executed == [4] and len(round_trips) == 1
    assert [e.data["i"] for e in store.read("w5")] == [0, 1]
