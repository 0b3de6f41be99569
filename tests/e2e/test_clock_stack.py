"""Turn clocks through the real processes (`tabletop run`): a human seat that never acts is
timed out by the workers' deadline schedulers, taken over by its timeout bot (a Celery bot
from then on), and the game ends; each deadline timed out once."""

from __future__ import annotations

import time

import pytest
import requests

from shared.audit import audit
from tests.e2e.stack import Stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def base_url(shared_stack: Stack) -> str:
    # A default stack, shared with other files (tests/e2e/conftest.py): the game is this
    # test's own, its clocks too.
    return shared_stack.url


def test_a_seat_that_never_acts_does_not_stall_the_game(base_url: str) -> None:
    created = requests.post(
        f"{base_url}/v1/games",
        json={
            "game": "skull",
            "seats": [{"name": "away"}, {"bot": "random"}, {"bot": "heuristic"}],
            "clock": {"turn_seconds": 1, "reserve_seconds": 1, "takeover_after": 2},
        },
        timeout=30,
    )
    assert created.status_code == 201, created.text
    gid = created.json()["id"]
    deadline = time.monotonic() + 150
    view = {}
    while time.monotonic() < deadline:
        view = requests.get(f"{base_url}/v1/games/{gid}", timeout=30).json()
        if view["outcome"] is not None:
            break
        time.sleep(0.2)
    assert view.get("outcome") is not None, f"stalled at version {view.get('version')}"
    assert view["seats"][0]["taken_over"] == "timeouts"
    log = requests.get(
        f"{base_url}/v1/games/{gid}/events?limit=10000",
        headers={"Authorization": "Bearer aud-e2e"},
        timeout=30,
    ).json()["events"]
    timed = [(e["data"]["seat"], e["data"]["armed_version"]) for e in log
             if e["type"] == "turn_timed_out"]  # fmt: skip
    assert len(timed) == len(set(timed)) == 2
    report = audit(gid, log)
    assert report.status == "passed", report.failures
