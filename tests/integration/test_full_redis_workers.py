"""Workers do not crash-loop on a full Redis (issue 36). Started against a full Redis (16 MB,
filled with junk), a game worker (``tabletop worker``) and a Celery worker stay up, say so in
one line each instead of a traceback per try, and work once memory is freed; a game worker
whose writes are refused while it runs keeps the command pending (never dead-lettered), backs
off and decides it once there is room; the registered bots' worker drops a refused turn with a
line, not a traceback, and counts it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import redis
from prometheus_client import REGISTRY

from services.celery_client import CeleryDispatcher
from services.gateway.app import create_app
from services.worker.consumer import StreamConsumer
from shared.app.dispatch import InlineDispatcher
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.redis_server import RedisServer
from tests.integration.api import WAIT, bearer
from tests.integration.conftest import ORGANIZER
from tests.integration.full_redis import fill, free, log_text, refuses_writes, small_redis, until

__all__ = ["small_redis"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
FULL_LINE = "redis is full"
AGAIN_LINE = "redis takes writes again"


def _env(url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": url,
        "TABLETOP_SHARDS": "1",
        "TABLETOP_ORGANIZER_KEYS": ORGANIZER,
        "TABLETOP_CELERY_METRICS_DIR": str(tmp_path / "metrics"),
        **extra,
    }


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _two_humans(http: Any) -> tuple[str, str, dict[str, Any]]:
    """A Fox game of two people: its id, the token of the seat to act and its first legal
    command."""
    created = http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201, created.get_json()
    game = created.get_json()
    seat = http.get(f"/v1/games/{game['id']}").get_json()["to_act"][0]
    token = game["tokens"][seat]
    mine = http.get(f"/v1/games/{game['id']}", headers=bearer(token)).get_json()
    return game["id"], token, mine["legal_commands"][0]


def test_a_game_worker_started_on_a_full_redis_waits_then_decides(
    small_redis: RedisServer, tmp_path: Path
) -> None:
    url = small_redis.url
    client = redis.Redis.from_url(url)
    fill(client)
    log = tmp_path / "worker.log"
    env = _env(url, tmp_path, TABLETOP_BOT_DISPATCH="none")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "worker", "--game", "fox"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        # Today's worker died at its first write (creating its consumer group): exit code 1.
        until(
            lambda: proc.poll() is not None or FULL_LINE in log_text(log),
            "the worker to say Redis is full",
        )
        assert proc.poll() is None, log_text(log)
        free(client)
        app = create_app(
            Settings(redis_url=url, max_wait=10, shards=1),
            client=redis.Redis.from_url(url),
            dispatcher=lambda a: InlineDispatcher().bind(a),
        )
        http = app.test_client()
        gid, token, command = _two_humans(http)

        def decided() -> Any:
            resp = http.post(
                f"/v1/games/{gid}/commands",
                json={**command, "id": "after-full"},
                headers={**bearer(token), **WAIT},
            )
            assert proc.poll() is None, log_text(log)
            return resp.status_code == 200 and resp

        # Sent again with the same id until the worker answers (it may still be backing off).
        resp = until(decided, "the worker to decide a command after memory was freed")
        assert resp.get_json()["version"] > 0
        assert proc.poll() is None
    finally:
        _stop(proc)
        client.close()
    text = log_text(log)
    assert text.count(FULL_LINE) == 1, text
    assert text.count(AGAIN_LINE) == 1, text
    assert "Traceback" not in text, text


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_command_refused_while_the_worker_runs_waits_and_is_decided(
    small_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = small_redis.url
    client = redis.Redis.from_url(url)
    settings = Settings(redis_url=url, max_wait=10, shards=1)
    app = create_app(settings, client=redis.Redis.from_url(url),
                     dispatcher=lambda a: InlineDispatcher().bind(a))  # fmt: skip
    http = app.test_client()
    gid, token, command = _two_humans(http)
    worker_client = redis.Redis.from_url(url)
    worker_app = bootstrap(settings, client=worker_client,
                           dispatcher=lambda a: InlineDispatcher().bind(a))  # fmt: skip
    consumer = StreamConsumer(worker_client, worker_app, "fox", name="full-fox")
    consumer.ensure_groups()  # a worker that ran before: its group is there
    # Queued while the worker is not running, then Redis fills up.
    resp = http.post(f"/v1/games/{gid}/commands", json={**command, "id": "queued"},
                     headers=bearer(token))  # fmt: skip
    assert resp.status_code == 202, resp.get_json()
    # Read by this worker, which then went away before deciding it (it is in its pending list):
    # its restart decides it first, on a Redis that has meanwhile filled up.
    assert consumer.io.read_new(consumer.streams, 1, 1000)
    fill(client)
    refused_before = _sample("tabletop_store_full_total", process="worker")
    caplog.set_level(logging.INFO)
    thread = threading.Thread(target=consumer.run, daemon=True)
    thread.start()
    try:
        # Its decision is refused; the worker backs off (a growing wait between looks at
        # Redis's figures), the command pending.
        until(lambda: consumer.full.full and consumer.full.delay >= 4, "a growing back-off")
        assert refuses_writes(client)
        assert consumer.io.r.xpending(consumer.streams[0], "workers")["pending"] == 1
        assert _sample("tabletop_store_full_total", process="worker") > refused_before
        status = http.get(f"/v1/games/{gid}/commands/queued", headers=bearer(token))
        assert status.get_json()["status"] == "pending"
        free(client)
        until(
            lambda: (
                http.get(f"/v1/games/{gid}/commands/queued", headers=bearer(token)).get_json()[
                    "status"
                ]
                == "accepted"
            ),
            "the command decided once memory was freed",
        )
        assert consumer.io.r.xlen(f"dead:{consumer.streams[0]}") == 0  # never dead-lettered
        assert not consumer.full.full
    finally:
        consumer.stop_event.set()
        thread.join(15)
        worker_client.close()
        client.close()
    lines = [r for r in caplog.records if r.name.startswith(("services.worker", "shared."))]
    full = [r for r in lines if FULL_LINE in r.getMessage()]
    assert len(full) == 1, [r.getMessage() for r in lines]
    assert "used" in full[0].getMessage() and "maxmemory" in full[0].getMessage()
    assert len([r for r in lines if AGAIN_LINE in r.getMessage()]) == 1
    assert not [r for r in lines if r.exc_info], "no traceback"
    assert not [r for r in lines if "will retry" in r.getMessage()], "no line per try"


def test_a_celery_worker_started_on_a_full_redis_waits_then_works(
    small_redis: RedisServer, tmp_path: Path
) -> None:
    url = small_redis.url
    client = redis.Redis.from_url(url)
    fill(client)
    log = tmp_path / "celery.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "services.bots.worker", "worker",
             "-Q", "tabletop,tabletop-tournaments", "--concurrency", "1",
             "--loglevel", "WARNING", "-n", "full@%h"],
            cwd=ROOT, env=_env(url, tmp_path), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        # Today's worker exited at once (kombu's lock before it gives back overdue tasks).
        until(
            lambda: proc.poll() is not None or FULL_LINE in log_text(log),
            "the Celery worker to say Redis is full",
        )
        assert proc.poll() is None, log_text(log)
        free(client)
        settings = Settings(redis_url=url, organizer_keys=frozenset({ORGANIZER}), shards=1)
        gateway = create_app(settings, client=redis.Redis.from_url(url),
                             dispatcher=CeleryDispatcher(settings)).test_client()  # fmt: skip
        body = {"game": "fox", "entrants": [{"bot": "random"}, {"bot": "random"}],
                "games": 8, "options": {"target": 1}}  # fmt: skip
        resp = gateway.post("/v1/tournaments", json=body, headers=bearer(ORGANIZER))
        assert resp.status_code == 201, resp.get_json()
        tid = resp.get_json()["id"]

        def finished() -> bool:
            assert proc.poll() is None, log_text(log)
            doc = gateway.get(f"/v1/tournaments/{tid}", headers=bearer(ORGANIZER)).get_json()
            return doc["status"] == "finished"

        until(finished, "the tournament to finish on the worker started on a full Redis")
    finally:
        _stop(proc)
        client.close()
    text = log_text(log)
    assert text.count(FULL_LINE) == 1, text
    assert text.count(AGAIN_LINE) == 1, text
    assert "Traceback" not in text and "Unrecoverable" not in text, text


REMOTE_SCRIPT = """
import logging, sys
import redis
from services.bots import remote_worker as rw
from prometheus_client import REGISTRY

logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(levelname)s %(message)s")

def full(game_id, seat, version):
    raise redis.exceptions.OutOfMemoryError(
        "command not allowed when used memory > 'maxmemory'.")

for version in range(5):
    rw._turn(full, b'["g1", 0, %d]' % version)
print("full", rw.FULL.full, "refused",
      REGISTRY.get_sample_value("tabletop_store_full_total", {"process": "remote-bots"}))
"""


def test_the_remote_bots_worker_drops_a_refused_turn_with_one_line() -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", REMOTE_SCRIPT], capture_output=True, text=True, cwd=ROOT, env=env,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout + done.stderr
    assert out.count(FULL_LINE) == 1, out
    assert "Traceback" not in out, out
    assert "full True refused 5.0" in out, out
