"""Search time against the real stack (`tabletop run`: gunicorn with gevent, Celery's search
workers), issue 23 items 2 and 3, with generous bounds: the figures are measured by
``benchmarks/bench_search_load.py`` (BENCHMARKS.md), not asserted here.

* Four seats asking for two-second ISMCTS hints in a loop: every hint is answered, and
  ``/healthz`` stays quick meanwhile (the searches run on the search workers, not in the
  gateway's event loop, which the issue measured at 2 s p50).
* One anonymous client floods the search workers with five Isle of Skye games of four
  two-second ISMCTS seats: another client's Fox bot (200 ms) still gets its first move in
  seconds (the issue measured 200 s).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator

import pytest
import requests
from requests.adapters import HTTPAdapter

from tests.e2e.stack import Stack, start_stack

pytestmark = pytest.mark.e2e

HINT = "bot=ismcts&budget_ms=2000"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = start_stack(tmp_path_factory.mktemp("search-load"))
    try:
        yield running
    finally:
        running.stop()


class _From(HTTPAdapter):
    """Connections from another loopback address: the gateway tells clients apart by
    address, and Linux routes all of 127.0.0.0/8 to the loopback."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)  # type: ignore[arg-type]


def client(address: str) -> requests.Session:
    """A session whose requests come from ``address`` (127.x.y.z)."""
    session = requests.Session()
    session.mount("http://", _From(address))
    return session


def _fox_seat(url: str) -> tuple[str, str]:
    """A Fox game of two humans: its id and the token of the seat to act."""
    created = requests.post(
        f"{url}/v1/games",
        json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    doc = created.json()
    return doc["id"], doc["tokens"][doc["view"]["to_act"][0]]


def test_healthz_stays_quick_while_four_seats_loop_on_search_hints(stack: Stack) -> None:
    seats = [_fox_seat(stack.url) for _ in range(4)]
    stop = threading.Event()
    answers: list[int] = []

    def ask(gid: str, token: str) -> None:
        with requests.Session() as s:
            while not stop.is_set():
                resp = s.get(
                    f"{stack.url}/v1/games/{gid}/suggestion?{HINT}",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=60,
                )
                answers.append(resp.status_code)

    loops = [threading.Thread(target=ask, args=seat, daemon=True) for seat in seats]
    for t in loops:
        t.start()
    # Once every loop has a search going, time /healthz on new connections for a while.
    deadline = time.monotonic() + 60
    while len(answers) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    health: list[float] = []
    until = time.monotonic() + 8
    while time.monotonic() < until:
        started = time.monotonic()
        assert requests.get(f"{stack.url}/healthz", timeout=30).status_code == 200
        health.append(time.monotonic() - started)
        time.sleep(0.05)
    stop.set()
    for t in loops:
        t.join(60)
    assert len(answers) >= 8 and set(answers) == {200}, answers
    # The figure with the searches in the gateway: 2 s p50, 6 s p95.
    assert statistics.median(health) < 0.5, sorted(health)
    assert max(health) < 3, sorted(health)


def test_another_clients_search_bot_moves_while_one_client_floods_the_search_workers(
    stack: Stack,
) -> None:
    flood = {"game": "skye", "seats": [{"bot": "ismcts", "budget_ms": 2000}] * 4}
    with client("127.0.0.2") as attacker:
        for _ in range(5):
            created = attacker.post(f"{stack.url}/v1/games", json=flood, timeout=30)
            assert created.status_code == 201, created.text
    with client("127.0.0.3") as other:
        fox = other.post(
            f"{stack.url}/v1/games",
            json={
                "game": "fox",
                "seats": [{"name": "ana"}, {"bot": "ismcts", "budget_ms": 200}],
                "options": {"first_dealer": 0},  # the non-dealer, the bot, leads
            },
            timeout=30,
        )
    assert fox.status_code == 201, fox.text
    gid, version = fox.json()["id"], fox.json()["view"]["version"]
    started = time.monotonic()
    while requests.get(f"{stack.url}/v1/games/{gid}", timeout=30).json()["version"] == version:
        assert time.monotonic() - started < 60, "the Fox bot never moved"
        time.sleep(0.1)
    took = time.monotonic() - started
    # Queued behind the flood's twenty two-second searches it would wait 40 s on one worker.
    assert took < 20, took
