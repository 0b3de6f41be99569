"""Crashes under `tabletop run` (real processes, `kill -9`): bot games play on after the Celery
worker is killed in the middle of their moves (the supervisor restarts it and the stalled-game
sweep wakes the bots whose tasks died with it), and the gateway loses nothing when one of its
gunicorn workers is killed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest
import requests

from shared.audit import audit
from tests.e2e.stack import Stack, cmdline, descendants, start_stack

pytestmark = pytest.mark.e2e

AUDITOR = {"Authorization": "Bearer aud-e2e"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # A stack of its own, not the shared one (tests/e2e/conftest.py): after its Celery worker
    # is killed, a live feed on the same stack was seen to push no move for a minute.
    running = start_stack(tmp_path_factory.mktemp("crashes"), capture=True)
    try:
        yield running
    finally:
        running.stop()


def version(url: str, gid: str) -> dict:
    resp = requests.get(f"{url}/v1/games/{gid}", timeout=30)
    assert resp.status_code == 200, resp.text
    return resp.json()


def check_log(url: str, gid: str) -> None:
    events = requests.get(
        f"{url}/v1/games/{gid}/events", headers=AUDITOR, params={"limit": 10_000}, timeout=30
    ).json()["events"]
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    report = audit(gid, events)
    assert report.status == "passed", report.failures


def test_bot_games_play_on_after_the_celery_worker_is_killed(stack: Stack) -> None:
    gids = []
    for _ in range(3):
        created = requests.post(
            f"{stack.url}/v1/games",
            json={"game": "skull", "seats": [{"bot": "random"}] * 4},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        gids.append(created.json()["id"])
    [celery] = [p for p in stack.children("celery") if "-Q tabletop " in stack_cmd(p)]
    # Kill it while the games are moving (at least one bot move applied in each).
    deadline = time.monotonic() + 60
    while any(version(stack.url, g)["version"] < 12 for g in gids):
        assert time.monotonic() < deadline, "the bots never moved"
        time.sleep(0.05)
    doomed = [celery, *descendants(celery)]
    for pid in doomed:
        os.kill(pid, signal.SIGKILL)
    # Every game ends: within the sweep's wait (20 s) plus the restart, with room to spare on
    # a busy machine.
    deadline = time.monotonic() + 150
    for gid in gids:
        while version(stack.url, gid)["outcome"] is None:
            assert time.monotonic() < deadline, f"game {gid} stalled at {version(stack.url, gid)}"
            time.sleep(0.2)
        check_log(stack.url, gid)
    assert [p for p in stack.children("celery") if "-Q tabletop " in stack_cmd(p)] != [celery]


def test_a_killed_gunicorn_worker_loses_no_command(stack: Stack) -> None:
    created = requests.post(
        f"{stack.url}/v1/games",
        json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "options": {"target": 1}},
        timeout=30,
    ).json()
    gid, tokens = created["id"], created["tokens"]
    [master] = stack.children("gunicorn")
    answered = 0
    killed = False
    deadline = time.monotonic() + 120
    session = requests.Session()
    while True:
        assert time.monotonic() < deadline, "the game did not finish"
        try:
            doc = session.get(f"{stack.url}/v1/games/{gid}", timeout=30).json()
        except requests.RequestException:
            continue  # the connection to the killed worker: try again
        if doc["outcome"] is not None:
            break
        seat = doc["to_act"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        mine = session.get(f"{stack.url}/v1/games/{gid}", headers=auth, timeout=30).json()
        body = {**mine["legal_commands"][0], "id": f"c{doc['version']}"}
        if answered == 5 and not killed:
            os.kill(descendants(master)[0], signal.SIGKILL)
            killed = True
        try:
            resp = session.post(
                f"{stack.url}/v1/games/{gid}/commands",
                json=body,
                headers={**auth, "Prefer": "wait=5"},
                timeout=30,
            )
        except requests.RequestException:
            session = requests.Session()  # sent again with the same id: applied once
            continue
        assert resp.status_code in (200, 202, 409), resp.text
        answered += resp.status_code == 200
    assert killed
    check_log(stack.url, gid)
    assert requests.get(f"{stack.url}/healthz", timeout=10).status_code == 200


def stack_cmd(pid: int) -> str:
    return cmdline(pid)
