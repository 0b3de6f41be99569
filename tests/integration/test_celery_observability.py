"""A real Celery worker (prefork) on a real Redis: its main process serves the pool children's
metrics (bot moves, task outcomes) from its own multiprocess directory, and its JSON log lines
carry the task's game id and the bot's command id."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import redis
import requests
from celery import Celery

from shared import keys
from shared.app import creation
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_celery_serves_bot_and_task_metrics_and_logs_json(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    app = bootstrap(Settings(redis_url=redis_url), client=redis_client)  # no dispatch
    gid = creation.create_game(app, "fox", [{"bot": "random"}, {"bot": "random"}]).game_id
    public = json.loads(redis_client.get(keys.public(gid)))
    seat, version = public["to_act"][0], public["version"]

    port = free_port()
    log_path = tmp_path / "celery.log"
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "TABLETOP_SHARDS": "1",  # as the test's own app: the bot's command on stream 0
        "TABLETOP_METRICS_PORT": str(port),
        "TABLETOP_LOG_FORMAT": "json",
        "TABLETOP_CELERY_METRICS_DIR": str(tmp_path / "metrics"),
    }
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "services.bots.worker", "worker",
             "-Q", "tabletop", "--concurrency", "1", "--loglevel", "INFO", "--without-mingle",
             "--without-gossip"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    client = Celery("test-client", broker=redis_url)
    try:
        client.send_task("bots.move", args=[gid, seat, version], queue="tabletop")
        client.send_task("bots.move", args=["no-such-game", 0, 1], queue="tabletop")
        deadline = time.monotonic() + 60
        text = ""
        done = 'tabletop_celery_tasks_total{state="succeeded",task="bots.move"} 2.0'
        while done not in text:
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, text or log_path.read_text()
            with contextlib.suppress(requests.RequestException):  # not listening yet
                text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
            time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(30)
        client.close()
    assert 'tabletop_bot_moves_total{outcome="submitted"} 1.0' in text
    assert 'tabletop_bot_moves_total{outcome="missing"} 1.0' in text
    assert 'tabletop_bot_move_duration_seconds_count{outcome="submitted"} 1.0' in text
    assert 'tabletop_celery_task_duration_seconds_count{task="bots.move"} 2.0' in text
    # The bot's command is on its stream, and its log line names it.
    (entry,) = redis_client.xrange(keys.command_stream("fox", 0))
    command_id = entry[1][b"id"].decode()
    lines = [json.loads(x) for x in log_path.read_text().splitlines() if x.startswith("{")]
    moved = [x for x in lines if x.get("event") == "bot move submitted"]
    assert moved and moved[0]["game_id"] == gid and moved[0]["command_id"] == command_id
    assert moved[0]["task"] == "bots.move" and moved[0]["process"] == "celery"
