"""A command redelivered after a crash (appended, not acknowledged) is not applied twice; a
Redis fault leaves it pending for a retry; one that keeps failing is dead-lettered."""

from __future__ import annotations

import json
import threading
import time

import pytest
import redis

import services.worker.consumer as consumer_module
from services.worker.consumer import GROUP, MAX_DELIVERIES, StreamConsumer
from shared import keys
from shared.app import commands, creation
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.bootstrap import bootstrap
from shared.config import Settings

STREAM = keys.command_stream("fox", 0)


def _app(client: redis.Redis) -> App:
    return bootstrap(Settings(), client=client, dispatcher=InlineDispatcher())


def _new_fox(app: App) -> str:
    return creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}]).game_id


def _first_legal(client: redis.Redis, gid: str) -> tuple[int, dict]:
    public = json.loads(client.get(keys.public(gid)))
    seat = public["to_act"][0]
    view = json.loads(client.get(keys.view(gid, seat)))
    return seat, view["legal_commands"][0]


def _submit(app: App, client: redis.Redis, gid: str, cid: str) -> None:
    seat, cmd = _first_legal(client, gid)
    commands.submit_command(
        app, CommandMessage(command_id=cid, game_id=gid, seat=seat, body=cmd), "fox"
    )


def _result(client: redis.Redis, gid: str, cid: str) -> dict:
    return json.loads(client.get(keys.result(gid, cid)))


def test_redelivered_command_is_recognised_and_not_applied_twice(
    redis_client: redis.Redis,
) -> None:
    app = _app(redis_client)
    gid = _new_fox(app)
    crashed = StreamConsumer(redis_client, app, "fox", name="crashy")
    crashed.ensure_groups()
    _submit(app, redis_client, gid, "c-1")
    # The worker reads and applies the command, then dies before its XACK.
    rows = redis_client.xreadgroup(GROUP, "crashy", {STREAM: ">"})
    ((_stream, [(_msg_id, fields)]),) = rows
    outcome = commands.decide_command(app, CommandMessage.from_fields(fields))
    assert outcome["status"] == "accepted"
    version = app.ports.store.head(gid)[0]
    redis_client.delete(keys.reply(gid, "c-1"))

    # A fresh process (empty cache) takes over the same consumer name and recovers.
    fresh = StreamConsumer(redis_client, _app(redis_client), "fox", name="crashy")
    assert fresh.recover() == 1
    assert fresh.app.ports.store.head(gid)[0] == version  # nothing appended twice
    raw = redis_client.blpop([keys.reply(gid, "c-1")], timeout=1)[1]
    again = json.loads(raw.partition(b"\n")[0])  # the outcome, then the seat's view
    assert again["status"] == "accepted" and again["events"] == outcome["events"]
    assert redis_client.xpending(STREAM, GROUP)["pending"] == 0


def test_another_consumers_stale_message_is_claimed(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _app(redis_client)
    gid = _new_fox(app)
    dead = StreamConsumer(redis_client, app, "fox", name="dead")
    dead.ensure_groups()
    _submit(app, redis_client, gid, "c-2")
    redis_client.xreadgroup(GROUP, "dead", {STREAM: ">"})
    alive = StreamConsumer(redis_client, _app(redis_client), "fox", name="alive")
    monkeypatch.setattr(consumer_module, "CLAIM_IDLE_MS", 0)
    assert alive.recover() == 1
    assert app.ports.store.head(gid)[0] > 0
    assert _result(redis_client, gid, "c-2")["status"] == "accepted"


def test_a_running_worker_takes_over_a_dead_workers_message(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(consumer_module, "CLAIM_IDLE_MS", 300)
    monkeypatch.setattr(consumer_module, "CLAIM_EVERY_S", 0.1)
    app = _app(redis_client)
    gid = _new_fox(app)
    alive = StreamConsumer(redis_client, _app(redis_client), "fox", name="alive")
    alive.ensure_groups()
    # Another worker reads the command and dies without handling it.
    _submit(app, redis_client, gid, "c-3")
    redis_client.xreadgroup(GROUP, "dead", {STREAM: ">"})
    thread = threading.Thread(target=alive.run, daemon=True)
    thread.start()  # too soon for its start-up recovery to count the message as stale
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not redis_client.get(keys.result(gid, "c-3")):
            time.sleep(0.05)
        assert _wait_for(lambda: _result(redis_client, gid, "c-3")["status"] == "accepted")
    finally:
        alive.stop_event.set()
        thread.join(5)
    assert redis_client.xpending(STREAM, GROUP)["pending"] == 0


def _wait_for(condition, seconds: float = 30) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_redis_fault_leaves_the_command_pending_and_a_retry_applies_it_once(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _app(redis_client)
    gid = _new_fox(app)
    worker_app = _app(redis_client)
    worker = StreamConsumer(redis_client, worker_app, "fox", name="w")
    worker.ensure_groups()
    real_append = worker_app.ports.store.append
    calls = {"n": 0}

    def flaky_append(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        result = real_append(*args, **kwargs)
        if calls["n"] == 1:  # the append happened, then the connection dropped
            raise redis.ConnectionError("connection reset")
        return result

    monkeypatch.setattr(worker_app.ports.store, "append", flaky_append)
    _submit(app, redis_client, gid, "c-5")
    version_before = app.ports.store.head(gid)[0]
    assert worker.poll_once(block_ms=100) == 1
    assert _result(redis_client, gid, "c-5")["status"] == "pending"  # the client was not told
    assert redis_client.xpending(STREAM, GROUP)["pending"] == 1
    assert worker.retry_pending() == 1
    assert _result(redis_client, gid, "c-5")["status"] == "accepted"
    assert redis_client.xpending(STREAM, GROUP)["pending"] == 0
    envs = app.ports.store.read(gid, after=version_before)
    assert {e.command_id for e in envs} == {"c-5"}  # applied once, not twice


def test_a_command_that_keeps_failing_is_dead_lettered_then_reported(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _app(redis_client)
    gid = _new_fox(app)
    worker = StreamConsumer(redis_client, _app(redis_client), "fox", name="w")
    worker.ensure_groups()

    def boom(*_args: object) -> None:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(commands, "_apply", boom)
    _submit(app, redis_client, gid, "c-4")
    assert worker.poll_once(block_ms=100) == 1
    for _ in range(MAX_DELIVERIES - 2):
        assert _result(redis_client, gid, "c-4")["status"] == "pending"
        assert worker.retry_pending() == 1
    assert redis_client.xlen(keys.dead_letters(STREAM)) == 0
    assert worker.retry_pending() == 1  # the last delivery
    result = _result(redis_client, gid, "c-4")
    assert result["status"] == "error" and result["error"]["code"] == "server/error"
    assert redis_client.xpending(STREAM, GROUP)["pending"] == 0
    ((_id, dead),) = redis_client.xrange(keys.dead_letters(STREAM))
    assert dead[b"id"] == b"c-4" and b"engine bug" in dead[b"error"]
    # The worker goes on: the next command is applied.
    monkeypatch.undo()
    _submit(app, redis_client, gid, "c-6")
    assert worker.poll_once(block_ms=100) == 1
    assert _result(redis_client, gid, "c-6")["status"] == "accepted"
