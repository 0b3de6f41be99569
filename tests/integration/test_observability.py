"""/metrics and /readyz on a real Redis with the in-process stack's workers."""

from __future__ import annotations

import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.gateway.app import create_app
from shared.app.dispatch import InlineDispatcher
from shared.config import Settings
from tests.integration.api import act, bearer
from tests.integration.conftest import Stack


def _sample(text: str, prefix: str) -> float:
    """The value of the line starting with ``prefix`` (the metric name and its labels)."""
    for line in text.splitlines():
        if line.startswith(prefix + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {prefix} in /metrics")


def test_metrics_report_commands_routes_and_streams(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    gid, tokens = created["id"], created["tokens"]
    seat = stack.http.get(f"/v1/games/{gid}").get_json()["to_act"][0]
    mine = stack.http.get(f"/v1/games/{gid}", headers=bearer(tokens[seat])).get_json()
    act(stack, gid, tokens[seat], mine["legal_commands"][0])
    # The worker counts a command after its reply is out: wait for the count.
    deadline = time.monotonic() + 10
    text = stack.http.get("/metrics").get_data(as_text=True)
    while 'tabletop_commands_total{game="fox",outcome="accepted"}' not in text:
        assert time.monotonic() < deadline, "no command counted"
        time.sleep(0.02)
        text = stack.http.get("/metrics").get_data(as_text=True)
    route = 'route="/v1/games/<game_id>/commands"'
    assert _sample(text, f'tabletop_http_requests_total{{method="POST",{route},status="200"}}') >= 1
    assert _sample(text, 'tabletop_commands_total{game="fox",outcome="accepted"}') >= 1
    assert _sample(text, 'tabletop_decide_duration_seconds_count{game="fox"}') >= 1
    # Read from Redis at scrape time: the command was delivered and acknowledged.
    assert _sample(text, 'tabletop_stream_length{stream="cmd:{fox}:0"}') >= 1
    assert _sample(text, 'tabletop_stream_pending{stream="cmd:{fox}:0"}') == 0
    assert _sample(text, 'tabletop_stream_lag{stream="cmd:{fox}:0"}') == 0
    assert _sample(text, 'tabletop_stream_consumers{stream="cmd:{fox}:0"}') >= 1
    assert _sample(text, "tabletop_stream_scrape_ok") == 1


def test_readyz_follows_the_workers(
    stack: Stack, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABLETOP_READY_IDLE_MS", "3000")  # 3 heartbeats
    app = create_app(
        Settings(redis_url=redis_url),
        client=redis.Redis.from_url(redis_url),
        dispatcher=lambda a: InlineDispatcher().bind(a),
    )
    http = app.test_client()
    deadline = time.monotonic() + 10
    resp = http.get("/readyz")
    while resp.status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.05)  # the consumers' first blocking reads
        resp = http.get("/readyz")
    assert resp.status_code == 200, resp.get_json()
    doc = resp.get_json()
    assert doc["status"] == "ready" and doc["redis"] == "ok" and doc["missing"] == []
    assert set(doc["games"]) == {c.game_type for c in stack.consumers}

    # The fox worker stops (without leaving: as if it hung): past the limit /readyz says so.
    fox = next(c for c in stack.consumers if c.game_type == "fox")
    fox.stop_event.set()
    deadline = time.monotonic() + 10
    while resp.status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.05)
        resp = http.get("/readyz")
    assert resp.status_code == 503
    doc = resp.get_json()
    assert doc["status"] == "unready"
    assert [m.split(":")[0] for m in doc["missing"]] == ["fox"], doc
    assert http.get("/healthz").status_code == 200  # alive all the same


def test_readyz_without_redis_is_503(redis_url: str) -> None:
    # A port nothing listens on.
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5,
                       retry=Retry(NoBackoff(), 0))  # fmt: skip
    app = create_app(Settings(), client=dead, dispatcher=lambda a: InlineDispatcher().bind(a))
    resp = app.test_client().get("/readyz")
    assert resp.status_code == 503
    doc = resp.get_json()
    assert doc["redis"] == "unreachable" and doc["missing"][0].startswith("redis:")
    metrics_text = app.test_client().get("/metrics").get_data(as_text=True)
    assert "tabletop_stream_scrape_ok 0.0" in metrics_text
