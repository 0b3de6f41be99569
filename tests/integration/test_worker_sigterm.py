"""A real worker process stopped with SIGTERM in the middle of a stream of commands finishes
and acknowledges what it read (nothing left pending for a 30 s take-over), exits 0, and the
next worker applies the rest: every command once. It also serves /metrics on its own port
and logs JSON lines carrying the game and command ids."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests

from services.worker.consumer import GROUP
from shared import keys
from shared.app import creation
from shared.app.commands import submit_command
from shared.app.messages import CommandMessage
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
STREAM = keys.command_stream("fox", 0)
GAMES = 300


def _worker(redis_url: str, metrics_port: int, log_path: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "TABLETOP_BOT_DISPATCH": "none",
        "TABLETOP_LOG_FORMAT": "json",
        "TABLETOP_METRICS_PORT": str(metrics_port),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with log_path.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-c", "from services.worker.main import run; run('fox')"],
            cwd=ROOT,
            env=env,
            stderr=out,
            stdout=out,
        )


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(10)


def _serving(port: int) -> bool:
    try:
        return requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).ok
    except requests.ConnectionError:
        return False


def _accepted(client: redis.Redis, commands: list[tuple[str, str]]) -> int:
    pipe = client.pipeline(transaction=False)
    for gid, cid in commands:
        pipe.get(keys.result(gid, cid))
    return sum(1 for raw in pipe.execute() if raw and json.loads(raw)["status"] == "accepted")


def test_sigterm_finishes_and_acknowledges_then_the_next_worker_applies_the_rest(
    redis_url: str,
    redis_client: redis.Redis,
    procs: list[subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    app = bootstrap(Settings(redis_url=redis_url), client=redis_client)
    commands: list[tuple[str, str]] = []
    for i in range(GAMES):
        gid = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}]).game_id
        public = json.loads(redis_client.get(keys.public(gid)))
        seat = public["to_act"][0]
        view = json.loads(redis_client.get(keys.view(gid, seat)))
        cid = f"sigterm-{i}"
        message = CommandMessage(
            command_id=cid, game_id=gid, seat=seat, body=view["legal_commands"][0]
        )
        submit_command(app, message, "fox")
        commands.append((gid, cid))
    heads = {gid: app.ports.store.head(gid)[0] for gid, _ in commands}

    port = free_port()
    log_path = tmp_path / "worker.log"
    first = _worker(redis_url, port, log_path)
    procs.append(first)
    deadline = time.monotonic() + 30
    while _accepted(redis_client, commands) == 0:
        assert first.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, "the worker decided nothing"
        time.sleep(0.005)
    metrics_text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    first.send_signal(signal.SIGTERM)
    assert first.wait(20) == 0, log_path.read_text()

    # Everything the worker read was acknowledged before it exited.
    assert redis_client.xpending(STREAM, GROUP)["pending"] == 0
    done_first = _accepted(redis_client, commands)
    assert done_first > 0
    consumers = redis_client.xinfo_consumers(STREAM, GROUP)
    assert consumers == []  # it left the group (it held nothing)

    second_port = free_port()
    second = _worker(redis_url, second_port, log_path)
    procs.append(second)
    # The first may have applied every command before its stop: the second is signalled only
    # once it serves /metrics (its handlers are installed by then), never while it starts.
    deadline = time.monotonic() + 60
    while not _serving(second_port):
        assert second.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, "the second worker never served /metrics"
        time.sleep(0.05)
    deadline = time.monotonic() + 60
    while _accepted(redis_client, commands) < GAMES:
        assert second.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, f"{_accepted(redis_client, commands)} of {GAMES}"
        time.sleep(0.02)
    second.send_signal(signal.SIGTERM)
    assert second.wait(20) == 0, log_path.read_text()

    # Each game's one command applied once: its head moved to the recorded outcome's version.
    for gid, cid in commands:
        result = json.loads(redis_client.get(keys.result(gid, cid)))
        head = app.ports.store.head(gid)[0]
        assert head == result["version"] > heads[gid]

    # The metrics the worker served, and its JSON log lines with the ids.
    assert 'tabletop_commands_total{game="fox",outcome="accepted"}' in metrics_text
    assert 'tabletop_decide_duration_seconds_count{game="fox"}' in metrics_text
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    assert any(line.get("event", "").startswith("worker ") for line in lines), lines[:5]
    assert all(line["process"] == "worker-fox" for line in lines)
