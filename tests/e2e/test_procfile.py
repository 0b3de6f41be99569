"""deploy/Procfile starts the service with honcho as documented: the gateway answers, two
workers per game type (``-c``) consume, and Celery's bots play a game to its end."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from shared.redis_server import RedisServer, free_port
from tests.e2e.stack import ROOT, cmdline, descendants, kill_tree, stack_env, wait_healthy

pytestmark = pytest.mark.e2e


def test_the_procfile_runs_the_stack_under_honcho(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    server = RedisServer()
    port = free_port()  # honcho gives the first line (the gateway) PORT=-p, the others +100s
    env = stack_env(REDIS_URL=server.url, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "honcho.log"
    argv = [str(bin_dir / "honcho"), "-f", "deploy/Procfile", "-d", str(ROOT), "start"]
    argv += ["-p", str(port), "-c", "worker_fox=2,worker_skull=2,worker_skye=2"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        for game in ("fox", "skull", "skye"):
            workers = [p for p in descendants(proc.pid) if f"worker --game {game}" in cmdline(p)]
            # honcho runs each line through a shell; count the Python processes only.
            assert len([p for p in workers if "python" in cmdline(p)]) == 2, game
        created = requests.post(
            f"{url}/v1/games",
            json={"game": "fox", "seats": [{"bot": "random"}] * 2, "options": {"target": 1}},
        )
        assert created.status_code == 201, created.text
        gid = created.json()["id"]
        deadline = time.monotonic() + 60
        view = created.json()["view"]
        while view["outcome"] is None and time.monotonic() < deadline:
            time.sleep(0.2)
            view = requests.get(f"{url}/v1/games/{gid}").json()
        assert view["outcome"] is not None, log.read_text()[-3000:]
        # honcho passes a SIGTERM on to every process and waits for them.
        below = descendants(proc.pid)
        proc.terminate()
        proc.wait(30)
        left = [cmdline(p) for p in below if cmdline(p)]  # a zombie's command line is empty
        assert not left, left
    finally:
        kill_tree(proc)
        server.stop()
