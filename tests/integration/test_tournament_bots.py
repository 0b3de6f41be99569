"""Registered bots as tournament entrants (issue 24): a Fox round robin between a webhook bot
and ``random`` through the gateway, the stream consumers and a real Celery worker (its games
are live games: the bots' turns on the gevent pool, each game folded by its scoring task), with
standings, the bot's ``bot_stats`` and every game's audit; and the 422s of bad entrants."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import redis

from services.celery_client import CeleryDispatcher
from services.gateway.app import create_app
from shared.bootstrap import bootstrap
from shared.config import Settings
from tests.integration.api import bearer, problem
from tests.integration.conftest import AUDITOR, ORGANIZER, Stack, consuming
from tests.integration.test_webhook_bots import first_legal, hooks, register, remote_worker

__all__ = ["hooks"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
ORG = bearer(ORGANIZER)


def test_a_registered_bot_that_cannot_play_is_refused_naming_the_entrant(
    stack: Stack, hooks: Any
) -> None:
    hook = hooks(first_legal)
    bot = register(stack, url=hook.url).get_json()
    skull_only = register(stack, url=hook.url, games=["skull"]).get_json()
    retired = register(stack, url=hook.url).get_json()
    stack.http.delete(f"/v1/bots/{retired['id']}", headers=bearer(retired["key"]))
    body = {"game": "fox", "games": 2, "options": {"target": 1}}
    for wrong, field in (
        ({"bot_id": "nope"}, "entrants[1].bot_id"),
        ({"bot_id": skull_only["id"]}, "entrants[1].bot_id"),
        ({"bot_id": retired["id"]}, "entrants[1].bot_id"),
        ({"bot_id": bot["id"], "budget_ms": 100}, "entrants[1].budget_ms"),
    ):
        entrants = [{"bot": "random"}, wrong]
        resp = stack.http.post("/v1/tournaments", json={**body, "entrants": entrants}, headers=ORG)
        found = problem(resp, 422)
        assert field in found["errors"], found
    # A known bot for the game is taken, under its registered name by default.
    resp = stack.http.post(
        "/v1/tournaments", json={**body, "entrants": [{"bot_id": bot["id"]}, {"bot": "random"}]},
        headers=ORG,
    )  # fmt: skip
    assert resp.status_code == 201, resp.get_json()
    doc = stack.http.get(resp.headers["Location"], headers=ORG).get_json()
    assert doc["entrants"][0]["name"] == "hookbot"
    assert doc["entrants"][0]["label"] == f"bot_id={bot['id']}"


def wait_finished(gateway: Any, tid: str, proc: Any, log: Path, seconds: float = 150) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        doc = gateway.get(f"/v1/tournaments/{tid}", headers=ORG).get_json()
        if doc["status"] == "finished":
            return doc
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, (doc["status"], doc["progress"], log.read_text())
        time.sleep(0.1)


def test_a_round_robin_of_a_webhook_bot_and_random_runs_live_through_celery(
    redis_url: str, redis_client: redis.Redis, hooks: Any, tmp_path: Path
) -> None:
    hook = hooks(first_legal)
    settings = Settings(redis_url=redis_url, auditor_keys=frozenset({AUDITOR}),
                        organizer_keys=frozenset({ORGANIZER}), max_wait=10)  # fmt: skip
    worker_client = redis.Redis.from_url(redis_url)
    worker_app = bootstrap(settings, client=worker_client, dispatcher=CeleryDispatcher(settings))
    gateway = create_app(settings, client=redis.Redis.from_url(redis_url),
                         dispatcher=CeleryDispatcher(settings)).test_client()  # fmt: skip
    env = {**os.environ, "REDIS_URL": redis_url, "TABLETOP_SHARDS": "1",
           "TABLETOP_ORGANIZER_KEYS": ORGANIZER,
           "TABLETOP_CELERY_METRICS_DIR": str(tmp_path / "metrics")}  # fmt: skip
    log = tmp_path / "celery.log"
    with log.open("wb") as out:
        # One gevent worker serves every queue: the tournament's batch, the random bot's
        # moves and each game's scoring; the remote worker the webhook bot's turns.
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "services.bots.worker", "worker",
             "-Q", "tabletop,tabletop-tournaments", "-P", "gevent",
             "--concurrency", "50", "--loglevel", "WARNING", "--without-mingle",
             "--without-gossip"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        remote = remote_worker(env, out)
    try:
        with consuming(worker_client, worker_app, name="tournament-bots"):
            bot = gateway.post("/v1/bots", json={"name": "hookbot", "games": ["fox"],
                "transport": "webhook", "url": hook.url}).get_json()  # fmt: skip
            body = {
                "game": "fox",
                "entrants": [{"bot_id": bot["id"], "name": "mine"}, {"bot": "random"}],
                "games": 6,
                "seed": "bots-as-entrants",
                "options": {"target": 1},
            }
            resp = gateway.post("/v1/tournaments", json=body, headers=ORG)
            assert resp.status_code == 201, resp.get_json()
            tid = resp.get_json()["id"]
            doc = wait_finished(gateway, tid, proc, log)
    finally:
        proc.terminate()
        remote.terminate()
        proc.wait(30)
        remote.wait(30)
        worker_client.close()
    assert doc["progress"] == {"done": 6, "total": 6} and doc["rated_games"] == 6
    rows = {r["name"]: r for r in doc["standings"]}
    assert rows["mine"]["games"] == rows["random"]["games"] == 6
    assert rows["mine"]["wins"] + rows["random"]["wins"] == 6
    assert "bot_stats" not in rows["random"]
    turns = [json.loads(raw) for raw, _ in hook.got]
    turns = [t for t in turns if t["type"] == "turn"]
    ids = [g["id"] for g in doc["games"]["items"]]
    assert ids == [f"{tid}-{i:05d}" for i in range(6)]  # derived from the request
    assert {t["game_id"] for t in turns} == set(ids)
    stats = rows["mine"]["bot_stats"]
    assert stats["decisions"] == len(turns) > 0
    assert (stats["timeouts"], stats["illegal"], stats["errors"], stats["fallbacks"]) == (0,) * 4
    assert (
        0 <= stats["latency_ms"]["p50"] <= stats["latency_ms"]["p95"] <= stats["latency_ms"]["max"]
    )
    overall = gateway.get(f"/v1/bots/{bot['id']}").get_json()["stats"]
    assert overall["decisions"] == stats["decisions"]
    for i, gid in enumerate(ids):
        view = gateway.get(f"/v1/games/{gid}").get_json()
        assert view["tournament"] == {"id": tid, "index": i} and view["outcome"] is not None
        # The bot sat at seat 0 in even games, seat 1 in odd ones (the seatings alternate).
        assert view["seats"][i % 2]["name"] == "mine"
        audited = gateway.get(f"/v1/games/{gid}/audit", headers=bearer(AUDITOR)).get_json()
        assert audited["status"] == "passed", audited
        decided = [e for e in gateway.get(f"/v1/games/{gid}/events?limit=10000",
                   headers=bearer(AUDITOR)).get_json()["events"] if e.get("command")]  # fmt: skip
        recorded = [e for e in decided if "bot_turn" in e["command"]]
        assert recorded and all(e["seat"] == i % 2 for e in recorded)
