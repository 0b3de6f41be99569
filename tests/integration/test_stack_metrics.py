"""One scrape of the gateway's /metrics holds the stream workers' command counters and decide
times (issue 25): a real gunicorn gateway (deploy/gunicorn.conf.py) and a real stream worker,
as ``tabletop run`` starts them, each writing to its own multiprocess directory."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import requests
from prometheus_client.parser import text_string_to_metric_families

from shared.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]


def _families(text: str) -> dict[str, list]:
    """The exposition's families by name; asserts it parses and names each family once."""
    families = list(text_string_to_metric_families(text))
    names = [f.name for f in families]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    return {f.name: f.samples for f in families}


def test_the_gateways_scrape_holds_the_workers_counters(redis_url: str, tmp_path: Path) -> None:
    port, worker_port = free_port(), free_port()
    gateway_dir, workers_dir = tmp_path / "gateway", tmp_path / "workers"
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "TABLETOP_SHARDS": "1",
        "TABLETOP_WORKER_METRICS_DIR": str(workers_dir),
    }
    # A directory a worker inherits (from the shell, say) must not take its values: they
    # would be summed wherever that directory is read, and missed where they belong.
    inherited = tmp_path / "inherited"
    inherited.mkdir()
    logs = tmp_path / "out.log"
    with logs.open("wb") as out:
        gateway = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--bind",
             f"127.0.0.1:{port}", "--workers", "1", "services.gateway.app:create_app()"],
            cwd=ROOT,
            env={**env, "GATEWAY_WORKER_CLASS": "gthread", "PROMETHEUS_MULTIPROC_DIR": str(gateway_dir)}, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        worker = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "worker", "--game", "fox"],
            cwd=ROOT,
            env={**env, "TABLETOP_METRICS_PORT": str(worker_port), "PROMETHEUS_MULTIPROC_DIR": str(inherited)}, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    accepted = 'tabletop_commands_total{game="fox",outcome="accepted"}'
    try:
        deadline = time.monotonic() + 60
        while True:
            assert gateway.poll() is None and worker.poll() is None, logs.read_text()
            assert time.monotonic() < deadline, logs.read_text()
            with contextlib.suppress(requests.RequestException):
                # /readyz would wait for every game type's worker: this test runs fox's alone.
                up = requests.get(f"{base}/healthz", timeout=2).status_code == 200
                if up and requests.get(f"http://127.0.0.1:{worker_port}/metrics", timeout=2).ok:
                    break
            time.sleep(0.1)
        created = requests.post(
            f"{base}/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]},
            timeout=10,
        ).json()  # fmt: skip
        gid, tokens = created["id"], created["tokens"]
        seat = created["to_act"][0] if "to_act" in created else None
        if seat is None:
            seat = requests.get(f"{base}/v1/games/{gid}", timeout=10).json()["to_act"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        mine = requests.get(f"{base}/v1/games/{gid}", headers=auth, timeout=10).json()
        resp = requests.post(
            f"{base}/v1/games/{gid}/commands", json=mine["legal_commands"][0],
            headers={**auth, "Prefer": "wait=10"}, timeout=20,
        )  # fmt: skip
        assert resp.status_code == 200, resp.text
        # The worker counts a command after its reply is out: wait for the count.
        deadline = time.monotonic() + 20
        text = requests.get(f"{base}/metrics", timeout=10).text
        while accepted not in text:
            assert time.monotonic() < deadline, text
            time.sleep(0.05)
            text = requests.get(f"{base}/metrics", timeout=10).text
        own = requests.get(f"http://127.0.0.1:{worker_port}/metrics", timeout=10).text
    finally:
        for proc in (gateway, worker):
            proc.terminate()
        for proc in (gateway, worker):
            proc.wait(30)
    families = _families(text)
    count = [
        s for s in families["tabletop_decide_duration_seconds"]
        if s.name.endswith("_count") and s.labels == {"game": "fox"}
    ]  # fmt: skip
    assert count and count[0].value >= 1
    assert any(s.labels.get("status") == "200" for s in families["tabletop_http_requests"])
    assert "tabletop_stream_length" in families
    # Still served by the worker itself, for a Prometheus that scrapes the workers directly.
    assert accepted + " 1.0" in own
    assert not list(inherited.iterdir())
    assert list(workers_dir.glob("counter_*.db"))
