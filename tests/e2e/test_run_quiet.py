"""Issue 37 (item 7): ``tabletop run`` (``make run``) says what a newcomer needs and little
else. Before its ready line: no Celery banner (three of a screenful each) and no Celery
warning; the ready line names the web page and ``/docs`` (it named ``/openapi.json``); after
it, a registered bot's decisions write no line each (they were one info line per turn)."""

from __future__ import annotations

import random
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from shared.redis_server import free_port
from tests.e2e.stack import ROOT, kill_tree, run_cli, stack_env

pytestmark = pytest.mark.e2e

# What Celery's banner and its start-up warnings print (celery/apps/worker.py, platforms.py).
BANNER = ("-------------- ", "[config]", "[queues]", ".> transport:", "SecurityWarning",
          "superuser privileges", "v5.")  # fmt: skip


class Output:
    """A ``tabletop run`` whose stdout and stderr are read line by line into one list."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        with self.lock:
            return "\n".join(self.lines)

    def wait_for(self, needle: str, timeout: float) -> int:
        """The index of the first line holding ``needle``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for i, line in enumerate(self.lines):
                    if needle in line:
                        return i
            assert self.proc.poll() is None, self.text()[-3000:]
            time.sleep(0.1)
        pytest.fail(f"no {needle!r} in {timeout:g} s:\n{self.text()[-3000:]}")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Output, str]]:
    port = free_port()
    argv = run_cli("run", "--port", str(port), "--workers", "1")
    argv += ["--data-dir", str(tmp_path_factory.mktemp("quiet"))]
    proc = subprocess.Popen(argv, env=stack_env(), cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    out = Output(proc)
    try:
        yield out, f"http://127.0.0.1:{port}"
    finally:
        kill_tree(proc)  # type: ignore[arg-type]


def test_the_ready_line_names_the_page_and_docs_and_no_banner_comes_before_it(
    run: tuple[Output, str],
) -> None:
    out, base = run
    ready = out.wait_for("tabletop is running", timeout=90)
    # Every Celery worker is up by now (readiness waits for the game workers; give the Celery
    # workers, started alongside, the moment they take to print a banner).
    time.sleep(3)
    lines = out.text().splitlines()
    line = lines[ready]
    assert f"{base}/ " in line + " " and f"{base}/docs" in line, line
    assert "openapi.json" not in line, line
    before = "\n".join(lines[:ready])
    for mark in BANNER:
        assert mark not in before, before
    # Nor after it: the banners came whenever each worker started.
    after = "\n".join(lines[ready:])
    for mark in BANNER:
        assert mark not in after, after
    # The page and the docs it names answer.
    assert requests.get(f"{base}/", timeout=10).status_code == 200
    assert requests.get(f"{base}/docs", timeout=10).status_code == 200


def test_a_registered_bots_decisions_write_no_line_each(run: tuple[Output, str]) -> None:
    from tabletop_client import Bot, make_webhook_server

    out, base = run
    out.wait_for("tabletop is running", timeout=90)

    class Random(Bot):
        def act(self, view: Any, legal_commands: Any) -> Any:
            return random.choice(legal_commands)

    port = free_port()
    body: dict[str, Any] = {"name": "quiet", "games": ["fox"], "transport": "webhook",
            "url": f"http://127.0.0.1:{port}/", "budget_ms": 5000}  # fmt: skip
    created = requests.post(f"{base}/v1/bots", json=body, timeout=10)
    assert created.status_code == 201, created.text
    bot = created.json()
    server = make_webhook_server(Random(), bot["key"], "127.0.0.1", port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        game: dict[str, Any] = {"game": "fox", "seats": [{"bot_id": bot["id"]}, {"bot": "heuristic"}],
                "options": {"target": 1}, "listed": False}  # fmt: skip
        resp = requests.post(f"{base}/v1/games", json=game, timeout=10)
        assert resp.status_code == 201, resp.text
        gid = resp.json()["id"]
        deadline = time.monotonic() + 120
        while requests.get(f"{base}/v1/games/{gid}", timeout=10).json()["outcome"] is None:
            assert time.monotonic() < deadline, f"game {gid} did not end"
            time.sleep(0.2)
    finally:
        server.shutdown()
        server.server_close()
    time.sleep(1)
    stats = requests.get(f"{base}/v1/bots/{bot['id']}", timeout=10).json()["stats"]
    assert stats["decisions"] >= 5 and stats["fallbacks"] == 0, stats
    text = out.text()
    assert "registered bot" not in text, text[-3000:]
    assert text.count(gid) <= 2, text[-3000:]  # no line per decision, per move
