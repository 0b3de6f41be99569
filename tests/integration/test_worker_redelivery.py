"""A command redelivered after a crash (appended, not acknowledged) is not applied twice."""

from __future__ import annotations

import json

import redis

from services.worker.consumer import GROUP, StreamConsumer
from shared import keys
from shared.bot_turns import InlineDispatcher
from shared.service import CommandMessage, GameService
from shared.store.redis_streams import RedisEventStore


def _service(client: redis.Redis) -> GameService:
    return GameService(RedisEventStore(client), client, dispatcher=InlineDispatcher())


def _first_legal(client: redis.Redis, gid: str) -> tuple[int, dict]:
    public = json.loads(client.get(keys.public(gid)))
    seat = public["to_act"][0]
    view = json.loads(client.get(keys.view(gid, seat)))
    return seat, view["legal_commands"][0]


def test_redelivered_command_is_recognised_and_not_applied_twice(
    redis_client: redis.Redis,
) -> None:
    service = _service(redis_client)
    created = service.create("fox", [{"name": "a"}, {"name": "b"}])
    gid = created.game_id
    seat, cmd = _first_legal(redis_client, gid)
    crashed = StreamConsumer(redis_client, service, "fox", name="crashy")
    crashed.ensure_groups()
    service.submit(CommandMessage(command_id="c-1", game_id=gid, seat=seat, body=cmd), "fox")
    # The worker reads and applies the command, then dies before its XACK.
    rows = redis_client.xreadgroup(GROUP, "crashy", {keys.command_stream("fox", 0): ">"})
    (_stream, [(_msg_id, fields)]), = rows
    outcome = service.handle(CommandMessage.from_fields(fields))
    assert outcome["status"] == "accepted"
    version = service.store.head(gid)[0]
    redis_client.delete(keys.reply(gid, "c-1"))

    # A fresh process (empty cache) takes over the same consumer name and recovers.
    fresh = StreamConsumer(redis_client, _service(redis_client), "fox", name="crashy")
    assert fresh.recover() == 1
    assert fresh.service.store.head(gid)[0] == version  # nothing appended twice
    raw = redis_client.blpop([keys.reply(gid, "c-1")], timeout=1)[1]
    again = json.loads(raw.partition(b"\n")[0])  # the outcome, then the seat's view
    assert again["status"] == "accepted" and again["events"] == outcome["events"]
    assert redis_client.xpending(keys.command_stream("fox", 0), GROUP)["pending"] == 0


def test_another_consumers_stale_message_is_claimed(redis_client: redis.Redis) -> None:
    service = _service(redis_client)
    gid = service.create("fox", [{"name": "a"}, {"name": "b"}]).game_id
    seat, cmd = _first_legal(redis_client, gid)
    dead = StreamConsumer(redis_client, service, "fox", name="dead")
    dead.ensure_groups()
    service.submit(CommandMessage(command_id="c-2", game_id=gid, seat=seat, body=cmd), "fox")
    redis_client.xreadgroup(GROUP, "dead", {keys.command_stream("fox", 0): ">"})
    alive = StreamConsumer(redis_client, _service(redis_client), "fox", name="alive")
    import services.worker.consumer as consumer_module

    old = consumer_module.CLAIM_IDLE_MS
    consumer_module.CLAIM_IDLE_MS = 0
    try:
        assert alive.recover() == 1
    finally:
        consumer_module.CLAIM_IDLE_MS = old
    assert service.store.head(gid)[0] > 0
    assert json.loads(redis_client.get(keys.result(gid, "c-2")))["status"] == "accepted"


def test_a_running_worker_takes_over_a_dead_workers_message(
    redis_client: redis.Redis, monkeypatch
) -> None:
    import threading
    import time

    import services.worker.consumer as consumer_module

    monkeypatch.setattr(consumer_module, "CLAIM_IDLE_MS", 300)
    monkeypatch.setattr(consumer_module, "CLAIM_EVERY_S", 0.1)
    service = _service(redis_client)
    gid = service.create("fox", [{"name": "a"}, {"name": "b"}]).game_id
    seat, cmd = _first_legal(redis_client, gid)
    alive = StreamConsumer(redis_client, _service(redis_client), "fox", name="alive")
    alive.ensure_groups()
    # Another worker reads the command and dies without handling it.
    service.submit(CommandMessage(command_id="c-3", game_id=gid, seat=seat, body=cmd), "fox")
    redis_client.xreadgroup(GROUP, "dead", {keys.command_stream("fox", 0): ">"})
    thread = threading.Thread(target=alive.run, daemon=True)
    thread.start()  # too soon for its start-up recovery to count the message as stale
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not redis_client.get(keys.result(gid, "c-3")):
            time.sleep(0.05)
    finally:
        alive.stop_event.set()
        thread.join(5)
    assert json.loads(redis_client.get(keys.result(gid, "c-3")))["status"] == "accepted"
    assert redis_client.xpending(keys.command_stream("fox", 0), GROUP)["pending"] == 0


def test_an_engine_fault_is_reported_acknowledged_and_the_worker_goes_on(
    redis_client: redis.Redis, monkeypatch
) -> None:
    service = _service(redis_client)
    gid = service.create("fox", [{"name": "a"}, {"name": "b"}]).game_id
    seat, cmd = _first_legal(redis_client, gid)
    worker = StreamConsumer(redis_client, _service(redis_client), "fox", name="w")
    worker.ensure_groups()

    def boom(*_args: object) -> None:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(worker.service, "_apply", boom)
    service.submit(CommandMessage(command_id="c-4", game_id=gid, seat=seat, body=cmd), "fox")
    assert worker.poll_once(block_ms=100) == 1
    result = json.loads(redis_client.get(keys.result(gid, "c-4")))
    assert result["status"] == "error" and result["error"]["code"] == "server/error"
    assert redis_client.xpending(keys.command_stream("fox", 0), GROUP)["pending"] == 0
    assert service.store.head(gid)[0] == json.loads(redis_client.get(keys.public(gid)))["version"]
