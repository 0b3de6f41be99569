"""`tabletop run` keeps the stack up: a game worker killed with SIGKILL while commands of several
games flow is restarted, and no command is lost or applied twice; a second stack on the same
data directory, and one whose Redis port is taken, refuse to start."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests

from shared.audit import audit
from shared.redis_server import free_port
from tests.e2e.stack import Stack, run_cli, stack_env, start_stack

pytestmark = pytest.mark.e2e

AUDITOR = {"Authorization": "Bearer aud-e2e"}
WAIT = 3  # Prefer: wait; a command still pending then is sent again with the same id


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = start_stack(tmp_path_factory.mktemp("supervised"), workers=2, capture=True)
    try:
        yield running
    finally:
        running.stop()
        assert running.proc.returncode == 0, running.stderr()[-2000:]


def wait_for(what: str, check: object, timeout: float) -> None:
    """Poll ``check()`` until it is true; fail naming ``what`` after ``timeout`` s."""
    assert callable(check)
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:g} s")
        time.sleep(0.05)


class Player:
    """Plays every seat of one all-human Fox game to the end, each command with an id of its
    own, resent with the same id while the answer is 202 (pending)."""

    def __init__(self, url: str, counter: list[int], lock: threading.Lock) -> None:
        self.url, self.counter, self.lock = url, counter, lock
        self.session = requests.Session()
        created = self.session.post(
            f"{url}/v1/games",
            json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "options": {"target": 1}},
        )
        assert created.status_code == 201, created.text
        self.gid: str = created.json()["id"]
        self.tokens: list[str] = created.json()["tokens"]
        self.answered: list[str] = []  # command ids answered 200
        self.error: str | None = None
        self.thread = threading.Thread(target=self._play, daemon=True)

    def _auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def _play(self) -> None:
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                view = self.session.get(f"{self.url}/v1/games/{self.gid}", headers=self._auth(0))
                view.raise_for_status()
                if view.json()["outcome"] is not None:
                    return
                seat = view.json()["to_act"][0]
                mine = self.session.get(
                    f"{self.url}/v1/games/{self.gid}", headers=self._auth(seat)
                ).json()
                self._send(seat, {**mine["legal_commands"][0], "id": uuid.uuid4().hex}, deadline)
            self.error = "the game did not finish in 60 s"
        except Exception as exc:  # reported by the test, not lost in the thread
            self.error = repr(exc)
        finally:
            # No idle keep-alive connection left: gunicorn's graceful stop would wait on it.
            self.session.close()

    def _send(self, seat: int, body: dict[str, object], deadline: float) -> None:
        while time.monotonic() < deadline:
            resp = self.session.post(
                f"{self.url}/v1/games/{self.gid}/commands",
                json=body,
                headers={**self._auth(seat), "Prefer": f"wait={WAIT}"},
            )
            if resp.status_code == 200:
                self.answered.append(resp.json()["command"]["command_id"])
                with self.lock:
                    self.counter[0] += 1
                return
            assert resp.status_code == 202, resp.text
        raise AssertionError(f"command {body['id']} still pending at the deadline")

    def check_log(self) -> int:
        """Every answered command applied exactly once, versions contiguous, the chain whole;
        returns the number of events."""
        events = requests.get(
            f"{self.url}/v1/games/{self.gid}/events", headers=AUDITOR, params={"limit": 10_000}
        ).json()["events"]
        versions = [e["version"] for e in events]
        assert versions == list(range(1, len(versions) + 1)), versions
        by_command: dict[str, list[int]] = {}
        for e in events:
            if e.get("command_id"):
                by_command.setdefault(e["command_id"], []).append(e["version"])
        for cid in self.answered:
            assert cid in by_command, f"command {cid} answered 200 but not in the log"
        for cid, vs in by_command.items():
            # One append per command: its events are one run; a second application would
            # leave a second run further on.
            assert vs == list(range(vs[0], vs[0] + len(vs))), (cid, vs)
        assert len(set(self.answered)) == len(self.answered)
        report = audit(self.gid, events)
        assert report.ok, report.checks
        return len(events)


def play(url: str, games: int, kill: object = None, kill_at: tuple[int, ...] = ()) -> list[Player]:
    """Play ``games`` games at once; call ``kill()`` as each of ``kill_at`` commands is
    answered in all."""
    counter, lock = [0], threading.Lock()
    players = [Player(url, counter, lock) for _ in range(games)]
    for p in players:
        p.thread.start()
    for at in kill_at:
        wait_for(f"{at} commands answered", lambda at=at: counter[0] >= at, 60)
        assert callable(kill)
        kill()
    for p in players:
        p.thread.join(90)
        assert p.error is None, f"game {p.gid}: {p.error}"
    for p in players:
        p.check_log()
    return players


def test_killed_game_workers_are_restarted_and_no_command_is_lost_or_doubled(
    stack: Stack,
) -> None:
    # Two consumers per game type (`--workers 2`), each a child of the supervisor.
    for game in ("fox", "skull", "skye"):
        assert len(stack.children(f"worker --game {game}")) == 2, game
    killed: list[int] = []

    def kill() -> None:
        # The oldest Fox worker still running: the second kill takes the other one, so that
        # for a moment none is left and the games wait for the restart.
        victim = next(p for p in stack.children("worker --game fox") if p not in killed)
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)

    kill_at = (15, 35, 70)
    players = play(stack.url, games=4, kill=kill, kill_at=kill_at)
    assert len(killed) == 3
    assert sum(len(p.answered) for p in players) > kill_at[-1], "the games ended before a kill"

    def restarted() -> bool:
        now = stack.children("worker --game fox")
        return len(now) == 2 and not set(killed) & set(now)

    wait_for("the supervisor restarting the killed workers", restarted, 60)
    log = stack.stderr()
    for victim in killed:
        assert f"(pid {victim}) exited with code -9 (SIGKILL)" in log, log[-3000:]
    assert log.count("restarted (pid") >= 3
    # The stack plays on with the restarted workers.
    play(stack.url, games=2)
    assert requests.get(f"{stack.url}/healthz", timeout=5).status_code == 200


def test_a_second_stack_on_the_same_data_directory_refuses(stack: Stack) -> None:
    argv = run_cli("run", "--port", str(free_port()), "--data-dir", str(stack.data_dir))
    done = subprocess.run(argv, env=stack_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "in use by another tabletop stack" in done.stderr, done.stderr
    assert f"pid {stack.proc.pid}" in done.stderr
    # The first one is untouched, still on its own Redis.
    assert requests.get(f"{stack.url}/healthz", timeout=5).status_code == 200
    assert (stack.data_dir / "redis.url").read_text().strip() == stack.redis_url


def test_a_taken_redis_port_is_refused_not_used(stack: Stack, tmp_path: Path) -> None:
    taken = stack.redis_url.rsplit(":", 1)[1].split("/")[0]
    argv = run_cli("run", "--port", str(free_port()), "--redis-port", taken)
    argv += ["--data-dir", str(tmp_path)]
    done = subprocess.run(argv, env=stack_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("tabletop run:")]
    assert len(lines) == 1 and f"port {taken} is already taken by another Redis" in lines[0]
    assert not (tmp_path / "redis.url").exists()


def test_a_killed_redis_server_is_restarted_on_its_data_and_the_games_go_on(
    stack: Stack,
) -> None:
    players = play(stack.url, games=1)
    (redis_pid,) = stack.children("redis-server")
    # Every answered write in the AOF file: with `everysec`, one answered while the background
    # fsync still runs is written just after (README, "Running it"), and this kill must not
    # land in that window.
    client = redis.Redis.from_url(stack.redis_url)
    wait_for(
        "the AOF buffer written", lambda: client.info("persistence")["aof_buffer_length"] == 0, 10
    )
    client.close()
    os.kill(redis_pid, signal.SIGKILL)

    def back() -> bool:
        return len(stack.children("redis-server")) == 1 and redis_pid not in stack.children(
            "redis-server"
        )

    wait_for("the supervisor restarting redis-server", back, 30)
    assert f"redis (pid {redis_pid}) exited with code -9 (SIGKILL)" in stack.stderr()
    # Same port, same AOF: the game played before is all there, and play goes on.
    assert players[0].check_log() > 0
    play(stack.url, games=2)
