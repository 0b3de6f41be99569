"""A full Redis is loud at the gateway (issue 36): ``/readyz`` reports Redis's memory against
its maxmemory (degraded past the warning share, not ready past the critical one or once Redis
refuses writes), and a write Redis refuses is a 503 ``service/store_full`` problem with
``Retry-After`` that leaves nothing written, never a 500. On a real redis-server of 16 MB."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask import Flask

from services.cli import available_games
from services.gateway.app import create_app
from services.worker.consumer import StreamConsumer
from shared.app.dispatch import InlineDispatcher
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.redis_server import RedisServer
from tests.integration.api import WAIT, bearer, problem
from tests.integration.full_redis import fill, free, refuses_writes, small_redis, until

__all__ = ["small_redis"]  # the fixture, used by name


def _app(url: str, **settings: Any) -> Flask:
    return create_app(
        Settings(redis_url=url, max_wait=10, **settings),
        client=redis.Redis.from_url(url),
        dispatcher=lambda a: InlineDispatcher().bind(a),
    )


@contextlib.contextmanager
def running_workers(url: str) -> Iterator[list[StreamConsumer]]:
    """A stream consumer per game type, each running its whole loop (``run``: start-up,
    back-off on a full Redis) in a thread until the block ends."""
    client = redis.Redis.from_url(url)
    worker_app = bootstrap(Settings(redis_url=url), client=client)
    consumers = [StreamConsumer(client, worker_app, g, name=f"mem-{g}") for g in available_games()]
    threads = [threading.Thread(target=c.run, daemon=True) for c in consumers]
    for t in threads:
        t.start()
    try:
        yield consumers
    finally:
        for c in consumers:
            c.stop_event.set()
        for t in threads:
            t.join(15)
        client.close()


@pytest.fixture
def filled(small_redis: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(small_redis.url)
    try:
        yield client
    finally:
        client.close()


def test_readyz_reports_memory_degraded_then_not_ready(
    small_redis: RedisServer, filled: redis.Redis
) -> None:
    url = small_redis.url
    app = _app(url, redis_memory_warn=0.6, redis_memory_critical=0.8)
    http = app.test_client()
    with running_workers(url):
        # Every game type's worker polls: ready, and the memory check is there, ok.
        resp = until(lambda: (r := http.get("/readyz")).status_code == 200 and r, "ready")
        doc = resp.get_json()
        assert doc["status"] == "ready" and doc["warnings"] == []
        memory = doc["memory"]
        assert memory["status"] == "ok" and memory["refusing_writes"] is False
        assert memory["maxmemory_bytes"] == 16 * 1024 * 1024
        assert 0 < memory["used_bytes"] < memory["maxmemory_bytes"]
        assert memory["used_ratio"] < 0.6
        assert (memory["warn_ratio"], memory["critical_ratio"]) == (0.6, 0.8)
        assert memory["policy"] == "noeviction"

        # Past the warning share: still ready (200), degraded, the figures in a warning line.
        n = fill(filled, 0.65)
        resp = http.get("/readyz")
        assert resp.status_code == 200, resp.get_json()
        doc = resp.get_json()
        assert doc["status"] == "degraded" and doc["memory"]["status"] == "degraded"
        assert 0.6 <= doc["memory"]["used_ratio"] < 0.8
        assert len(doc["warnings"]) == 1 and "past the warning 60%" in doc["warnings"][0]
        assert "of maxmemory 16.0 MB" in doc["warnings"][0]

        # Past the critical share, writes still taken: not ready, saying why.
        n += fill(filled, 0.85, start=n)
        assert not refuses_writes(filled)
        resp = http.get("/readyz")
        assert resp.status_code == 503
        doc = resp.get_json()
        assert doc["status"] == "unready" and doc["memory"]["status"] == "critical"
        assert [m for m in doc["missing"] if m.startswith("redis memory:")] == [
            m for m in doc["missing"] if "past the critical 80%" in m
        ]

        # Full: Redis refuses writes (the workers' heartbeats too).
        fill(filled, start=n)
        assert refuses_writes(filled)
        resp = http.get("/readyz")
        assert resp.status_code == 503
        doc = resp.get_json()
        assert doc["memory"]["status"] == "full" and doc["memory"]["refusing_writes"] is True
        assert any("full, Redis refuses writes" in m for m in doc["missing"]), doc["missing"]
        assert http.get("/healthz").status_code == 200  # alive all the same

        # Memory freed: ready again once the workers' heartbeats are taken.
        free(filled)
        until(lambda: http.get("/readyz").status_code == 200, "ready again")


def _keys(client: redis.Redis) -> set[bytes]:
    return {k for k in client.scan_iter(count=1000) if not k.startswith(b"junk:")}


def test_a_write_on_a_full_redis_is_a_503_store_full_and_writes_nothing(
    small_redis: RedisServer, filled: redis.Redis
) -> None:
    url = small_redis.url
    app = _app(url)
    http = app.test_client()
    created = http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201, created.get_json()
    game = created.get_json()
    gid = game["id"]
    seat = http.get(f"/v1/games/{gid}").get_json()["to_act"][0]
    token = game["tokens"][seat]
    command = http.get(f"/v1/games/{gid}", headers=bearer(token)).get_json()["legal_commands"][0]

    fill(filled)
    assert refuses_writes(filled)
    before = _keys(filled)
    version = filled.hget(f"game:{{{gid}}}:head", "version")

    # A new game: refused whole.
    resp = http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"bot": "random"}]})
    body = problem(resp, 503, "service/store_full")
    assert resp.headers["Retry-After"] == "30"
    assert body["type"] == "/problems/service/store_full"
    assert body["title"] == "The game store is full"
    assert "nothing was changed" in body["detail"]

    # A command, sent with an id to ask for it again: refused, nothing of it stored.
    resp = http.post(
        f"/v1/games/{gid}/commands",
        json={**command, "id": "full-1"},
        headers={**bearer(token), **WAIT},
    )
    problem(resp, 503, "service/store_full")
    assert resp.headers["Retry-After"] == "30"
    assert _keys(filled) == before  # not a key more: no game, no pending outcome, no entry
    assert filled.hget(f"game:{{{gid}}}:head", "version") == version
    assert http.get(f"/v1/games/{gid}/commands/full-1", headers=bearer(token)).status_code == 404

    # Reads go on.
    assert http.get(f"/v1/games/{gid}").status_code == 200
    # The refusals are counted.
    metrics_text = http.get("/metrics").get_data(as_text=True)
    assert 'tabletop_store_full_total{process="gateway"}' in metrics_text
    # And Redis's memory figures, read at scrape time.
    assert "tabletop_redis_used_memory_bytes" in metrics_text
    assert "tabletop_redis_maxmemory_bytes" in metrics_text


def test_a_refusal_wrapped_by_another_library_is_a_503_not_a_500(small_redis: RedisServer) -> None:
    from kombu.exceptions import OperationalError

    app = _app(small_redis.url)

    def queue_a_task() -> Any:
        # What kombu raises when a task cannot be queued on a full broker.
        try:
            raise redis.exceptions.OutOfMemoryError(
                "Command # 1 (LLEN tabletop) of pipeline caused error: command not allowed "
                "when used memory > 'maxmemory'."
            )
        except redis.exceptions.OutOfMemoryError as exc:
            raise OperationalError(str(exc)) from exc

    def broken() -> Any:
        raise RuntimeError("a bug")

    app.add_url_rule("/test/queue", "queue", queue_a_task)
    app.add_url_rule("/test/broken", "broken", broken)
    http = app.test_client()
    resp = http.get("/test/queue")
    problem(resp, 503, "service/store_full")
    assert resp.headers["Retry-After"] == "30"
    # Any other error is what it was.
    app.config["PROPAGATE_EXCEPTIONS"] = False
    assert http.get("/test/broken").status_code == 500
