"""Shard leases on a real Redis: workers share a game type's shards evenly, each shard read by
one of them; when one dies its shards are taken over once its leases run out, and the messages
it read and never acknowledged are claimed and decided, once."""

from __future__ import annotations

import json
import time

import pytest
import redis

import services.worker.consumer as consumer_module
import shared.adapters.shard_leases as leases_module
from services.worker.consumer import GROUP, StreamConsumer
from shared import keys
from shared.app import commands, creation
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage, shard_of
from shared.bootstrap import bootstrap
from shared.config import Settings

SHARDS = 4


def app_on(client: redis.Redis) -> App:
    return bootstrap(Settings(shards=SHARDS), client=client, dispatcher=InlineDispatcher())


def consumer(client: redis.Redis, name: str) -> StreamConsumer:
    c = StreamConsumer(client, app_on(client), "fox", shards=SHARDS, name=name, leases=True)
    c.ensure_groups()
    return c


def until(what: str, check, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def first_command(client: redis.Redis, gid: str) -> tuple[int, dict]:
    public = json.loads(client.get(keys.public(gid)))
    seat = public["to_act"][0]
    view = json.loads(client.get(keys.view(gid, seat)))
    return seat, view["legal_commands"][0]


@pytest.fixture(autouse=True)
def quick_leases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leases_module, "TTL_MS", 600)
    monkeypatch.setattr(consumer_module, "RENEW_S", 0.1)


def test_workers_share_the_shards_and_take_over_a_dead_ones(redis_client: redis.Redis) -> None:
    a, b = consumer(redis_client, "a"), consumer(redis_client, "b")
    a.leases.ttl_ms = b.leases.ttl_ms = 600  # type: ignore[union-attr]

    def balanced() -> bool:
        for c in (a, b):
            c.poll_once(block_ms=10)
        owned_a, owned_b = a.leases.owned, b.leases.owned  # type: ignore[union-attr]
        return len(owned_a) == len(owned_b) == 2 and not owned_a & owned_b

    until("the shards shared two and two", balanced)
    # A game on one of a's shards; a reads its command and dies before acknowledging it.
    app = app_on(redis_client)
    while True:
        gid = creation.create_game(app, "fox", [{"name": "x"}, {"name": "y"}]).game_id
        if shard_of(gid, SHARDS) in a.leases.owned:  # type: ignore[union-attr]
            break
    seat, body = first_command(redis_client, gid)
    commands.submit_command(
        app, CommandMessage(command_id="c1", game_id=gid, seat=seat, body=body), "fox"
    )
    stream = keys.command_stream("fox", shard_of(gid, SHARDS))
    assert b.poll_once(block_ms=10) == 0  # not b's shard: b does not read it
    redis_client.xreadgroup(GROUP, "a", {stream: ">"}, count=1)  # a read it, then died
    before = app.ports.store.head(gid)[0]

    # b takes a's shards once a's leases run out, and decides the command a left.
    def took_over() -> bool:
        b.poll_once(block_ms=10)
        return len(b.leases.owned) == SHARDS  # type: ignore[union-attr]

    until("b holding every shard", took_over)
    until("the orphaned command decided", lambda: app.ports.store.head(gid)[0] > before)
    assert redis_client.xpending(stream, GROUP)["pending"] == 0
    result = json.loads(redis_client.get(keys.result(gid, "c1")))
    assert result["status"] == "accepted"
    assert [e.command_id for e in app.ports.store.read(gid)].count("c1") >= 1
    assert len({e.version for e in app.ports.store.read(gid)}) == app.ports.store.head(gid)[0]


def test_a_stopping_worker_gives_its_leases_back_at_once(redis_client: redis.Redis) -> None:
    a = consumer(redis_client, "a")
    a.poll_once(block_ms=10)
    assert a.leases.owned == set(range(SHARDS))  # type: ignore[union-attr]
    a.leases.release()  # type: ignore[union-attr]  # what run() does when it stops
    a.leave_group()
    b = consumer(redis_client, "b")
    b.poll_once(block_ms=10)  # no wait for a's leases to run out
    assert b.leases.owned == set(range(SHARDS))  # type: ignore[union-attr]


def test_a_restarted_worker_takes_its_own_leases_back_at_once(redis_client: redis.Redis) -> None:
    first = consumer(redis_client, "slot-1")
    first.poll_once(block_ms=10)
    assert first.leases.owned == set(range(SHARDS))  # type: ignore[union-attr]
    # Killed: no release. Its successor under the same name does not wait for the leases
    # to run out.
    again = consumer(redis_client, "slot-1")
    again.poll_once(block_ms=10)
    assert again.leases.owned == set(range(SHARDS))  # type: ignore[union-attr]
    other = consumer(redis_client, "slot-2")
    other.poll_once(block_ms=10)
    assert not other.leases.owned  # type: ignore[union-attr]  # still held by slot-1
