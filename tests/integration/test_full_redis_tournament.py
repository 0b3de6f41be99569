"""A tournament that fills Redis pauses and says so, then finishes once memory is freed
(issue 36: a second 2,000-game tournament on a 48 MB Redis stalled at 384 games and stayed
``running``, no progress and no error, its Celery workers crash-looping). Here on a 16 MB
redis-server mostly taken by junk keys, through the gateway and a real Celery worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import redis

from services.celery_client import CeleryDispatcher
from services.gateway.app import create_app
from shared.config import Settings
from shared.redis_server import RedisServer
from tests.integration.api import bearer
from tests.integration.conftest import AUDITOR, ORGANIZER
from tests.integration.full_redis import fill, free, log_text, small_redis, until, used_ratio

__all__ = ["small_redis"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
ORG = bearer(ORGANIZER)
GAMES = 600  # one-hand Fox games: some 20 KB each in Redis, far more than the room left


def test_a_tournament_on_a_full_redis_pauses_then_finishes(
    small_redis: RedisServer, tmp_path: Path
) -> None:
    url = small_redis.url
    client = redis.Redis.from_url(url)
    fill(client, 0.85)  # about 2 MB left: room for a hundred games or so
    settings = Settings(redis_url=url, organizer_keys=frozenset({ORGANIZER}),
                        auditor_keys=frozenset({AUDITOR}), shards=1)  # fmt: skip
    gateway = create_app(settings, client=redis.Redis.from_url(url),
                         dispatcher=CeleryDispatcher(settings)).test_client()  # fmt: skip
    body = {"game": "fox", "entrants": [{"bot": "random"}, {"bot": "random"}],
            "games": GAMES, "seed": "full-redis", "options": {"target": 1}}  # fmt: skip
    resp = gateway.post("/v1/tournaments", json=body, headers=ORG)
    assert resp.status_code == 201, resp.get_json()
    tid = resp.get_json()["id"]
    doc = gateway.get(f"/v1/tournaments/{tid}", headers=ORG).get_json()
    assert (doc["status"], doc["paused"], doc["paused_reason"]) == ("queued", False, None)

    env = {**os.environ, "REDIS_URL": url, "TABLETOP_SHARDS": "1",
           "TABLETOP_CELERY_METRICS_DIR": str(tmp_path / "metrics")}  # fmt: skip
    log = tmp_path / "celery.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "services.bots.worker", "worker",
             "-Q", "tabletop,tabletop-tournaments", "--concurrency", "1",
             "--loglevel", "WARNING", "-n", "full-tournament@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, process_group=0,
        )  # fmt: skip

    def read(path: str) -> dict[str, Any]:
        assert proc.poll() is None, log_text(log)
        answer = gateway.get(path, headers=ORG)
        assert answer.status_code == 200, answer.get_json()
        return dict(answer.get_json())

    try:
        # It fills Redis up, and then says it is paused, and why, instead of only "running".
        def paused() -> dict[str, Any] | None:
            doc = read(f"/v1/tournaments/{tid}")
            return doc if doc["paused"] else None

        doc = until(paused, "the tournament to report it is paused", seconds=180)
        assert doc["status"] == "running"
        assert 0 < doc["progress"]["done"] < GAMES
        assert "full" in doc["paused_reason"] and "maxmemory" in doc["paused_reason"]
        assert used_ratio(client) > 0.99
        listed = read("/v1/tournaments")["tournaments"]
        mine = next(t for t in listed if t["id"] == tid)
        assert mine["paused"] is True and "full" in mine["paused_reason"]

        # Memory freed: it goes on by itself, and finishes.
        free(client)

        def finished() -> dict[str, Any] | None:
            doc = read(f"/v1/tournaments/{tid}")
            return doc if doc["status"] == "finished" else None

        doc = until(finished, "the tournament to finish once memory was freed", seconds=300)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:  # a batch still waiting for room holds it
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        client.close()
    assert doc["progress"] == {"done": GAMES, "total": GAMES}
    assert doc["rated_games"] == GAMES
    assert (doc["paused"], doc["paused_reason"]) == (False, None)
    assert sum(row["games"] for row in doc["standings"]) == 2 * GAMES
    text = log_text(log)
    assert "Traceback" not in text and "Unrecoverable" not in text, text
    # One line per process of the worker (its main process and its one pool process) that met
    # the full Redis, and one when it took writes again: not a line per try.
    assert 1 <= text.count("redis is full") <= 2, text
