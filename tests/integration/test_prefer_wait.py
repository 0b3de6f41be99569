"""`Prefer: wait` past redis-py's 5 s default socket timeout: the gateway waits the whole time
and, with no worker to answer, ends with 202 and the status URL (never a 503); the queued
command is applied exactly once when a worker comes."""

from __future__ import annotations

import json
import threading
import time

import redis

from services.gateway.app import create_app
from services.worker.consumer import StreamConsumer
from shared import keys
from shared.adapters.redis import RedisBatch, RedisCommandBus, connect
from shared.app.dispatch import InlineDispatcher
from shared.bootstrap import bootstrap
from shared.config import Settings


def test_wait_reply_outlives_the_clients_socket_timeout(
    redis_url: str, redis_client: redis.Redis
) -> None:
    # A client whose socket timeout (1 s) is shorter than the wait (2.5 s): the wait ends on
    # the server's BLPOP timeout, not with a TimeoutError.
    short = redis.Redis.from_url(redis_url, socket_timeout=1)
    bus = RedisCommandBus(short, RedisBatch(short))
    started = time.monotonic()
    assert bus.wait_reply("g1", "c1", 2.5) is None
    assert 2.4 <= time.monotonic() - started < 4.5
    # A reply pushed after the socket timeout is still received.
    pusher = threading.Timer(1.5, lambda: redis_client.lpush(keys.reply("g1", "c2"), b"done"))
    pusher.start()
    try:
        assert bus.wait_reply("g1", "c2", 5) == b"done"
    finally:
        pusher.cancel()
    # The connection is reusable afterwards (no late reply left on it).
    assert short.ping()
    short.close()


def test_a_long_wait_without_a_worker_is_a_202_then_applied_once(
    redis_url: str, redis_client: redis.Redis
) -> None:
    settings = Settings(redis_url=redis_url, max_wait=30)
    # The production client (redis-py's default 5 s socket timeout).
    app = create_app(
        settings, client=connect(redis_url), dispatcher=lambda a: InlineDispatcher().bind(a)
    )
    http = app.test_client()
    created = http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201, created.get_json()
    gid, tokens = created.get_json()["id"], created.get_json()["tokens"]
    public = http.get(f"/v1/games/{gid}").get_json()
    seat = public["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    mine = http.get(f"/v1/games/{gid}", headers=auth).get_json()
    before = mine["version"]

    started = time.monotonic()
    resp = http.post(
        f"/v1/games/{gid}/commands",
        json={**mine["legal_commands"][0], "id": "long-wait"},
        headers={**auth, "Prefer": "wait=7"},
    )
    waited = time.monotonic() - started
    assert resp.status_code == 202, resp.get_data(as_text=True)
    assert 6.9 <= waited < 12, waited
    body = resp.get_json()
    assert body["status"] == "pending"
    location = resp.headers["Location"]
    assert body["location"] == location and resp.headers["Preference-Applied"] == "wait=7"
    assert http.get(location, headers=auth).get_json()["status"] == "pending"

    # A worker starts: the queued command is applied, once.
    worker_client = redis.Redis.from_url(redis_url)
    worker_app = bootstrap(
        settings, client=worker_client, dispatcher=lambda a: InlineDispatcher().bind(a)
    )
    consumer = StreamConsumer(worker_client, worker_app, "fox", name="late-worker")
    thread = threading.Thread(target=consumer.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        status = "pending"
        while status == "pending" and time.monotonic() < deadline:
            status = http.get(location, headers=auth).get_json()["status"]
            consumer.stop_event.wait(0.05)
        assert status == "accepted"
        applied = worker_app.ports.store.head(gid)[0]
        assert applied > before
        # The same command sent again (same id) is answered from its outcome, not replayed.
        again = http.post(
            f"/v1/games/{gid}/commands",
            json={**mine["legal_commands"][0], "id": "long-wait"},
            headers={**auth, "Prefer": "wait=5"},
        )
        assert again.status_code == 200, again.get_data(as_text=True)
        assert worker_app.ports.store.head(gid)[0] == applied
    finally:
        consumer.stop_event.set()
        thread.join(10)
        worker_client.close()
    # Sent twice, applied once: the version moved by the one command's events only.
    result = json.loads(redis_client.get(keys.result(gid, f"s{seat}-long-wait")))
    assert result["status"] == "accepted" and result["version"] == applied
    assert http.get(f"/v1/games/{gid}").get_json()["version"] == applied
