"""Search time is shared (issue 23, items 2 and 3), on a real Redis.

* A hint from a searching bot runs on the search workers, never in the gateway's request: the
  gateway queues it and waits for the answer (``shared/app/searches.py``); one hint search per
  seat at a time (a second is a 429 with ``Retry-After``); no answer in time is a 503.
* An anonymous creator may not ask for more search than ``TABLETOP_ANON_SEARCH_*`` allow (a
  422 naming the field); an organizer key may.
* The search queue is fair: a search is queued behind only the searches of clients holding
  fewer (Celery priorities on the Redis broker), so one client's flood of long searches does
  not hold up another client's bot.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis

from services.bots.celery_app import create_celery
from services.celery_client import SEARCH_QUEUE, CeleryDispatcher
from services.gateway.app import create_app
from shared.adapters.memory import memory_ports
from shared.adapters.redis import redis_ports
from shared.app import bot_moves, creation, queries, searches
from shared.app.context import App
from shared.app.ports import Ports
from shared.bootstrap import bootstrap
from shared.bots import ismcts
from shared.config import Settings
from tests.integration.api import bearer, problem
from tests.integration.conftest import ORGANIZER, Stack, consuming

# ---- what an anonymous creator may ask for --------------------------------------------------


def _create(stack: Stack, body: dict[str, Any], key: str | None = None) -> Any:
    return stack.http.post("/v1/games", json=body, headers=bearer(key) if key else {})


@pytest.mark.parametrize(
    ("body", "field"),
    [
        # The attack of issue 23: ten-second searches, four to a game.
        (
            {"game": "skye", "seats": [{"bot": "ismcts", "budget_ms": 10_000}] * 4},
            "seats[0].budget_ms",
        ),
        (
            {"game": "fox", "seats": [{"name": "a"}, {"bot": "ismcts", "iterations": 100_000}]},
            "seats[1].iterations",
        ),
        ({"game": "skye", "seats": [{"bot": "ismcts", "iterations": 50}] * 5}, "seats"),
        (
            {
                "game": "fox",
                "seats": [{"name": "a"}, {"name": "b"}],
                "clock": {"timeout_bot": {"bot": "ismcts", "budget_ms": 5000}},
            },
            "clock.timeout_bot.budget_ms",
        ),
    ],
)
def test_an_anonymous_creator_cannot_ask_for_more_search_than_the_caps(
    stack: Stack, body: dict[str, Any], field: str
) -> None:
    refused = problem(_create(stack, body), 422, "request/invalid")
    assert field in refused["errors"], refused
    # An organizer is not capped.
    assert _create(stack, _waiting(body), ORGANIZER).status_code == 201


def _waiting(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with an open seat (a player's seat opened, else one more seat), so the game
    waits for a player and the test's inline workers never play its long searches; the caps
    are checked at creation all the same."""
    seats = list(body["seats"])
    human = next((i for i, s in enumerate(seats) if "bot" not in s), None)
    if human is not None:
        seats[human] = {"open": True}
    elif len(seats) < 5:  # Isle of Skye's most (a full table of quick searches is left as is)
        seats.append({"open": True})
    return {**body, "seats": seats}


def test_what_the_caps_allow_is_created(stack: Stack) -> None:
    body = {"game": "skye", "seats": [{"bot": "ismcts", "budget_ms": 2000}] * 4}
    assert _create(stack, _waiting(body)).status_code == 201
    fox = {"game": "fox", "seats": [{"name": "a"}, {"bot": "ismcts", "iterations": 1000}]}
    assert _create(stack, _waiting(fox)).status_code == 201


def test_the_caps_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "TABLETOP_ANON_SEARCH_BUDGET_MS": "500",
            "TABLETOP_ANON_SEARCH_ITERATIONS": "300",
            "TABLETOP_ANON_SEARCH_SEATS": "2",
        }
    )
    assert settings.search_caps == searches.SearchCaps(budget_ms=500, iterations=300, seats=2)
    assert Settings.from_env({}).search_caps == searches.SearchCaps()


# ---- hints on the search workers ------------------------------------------------------------


@dataclass
class SearchWorkers:
    """Stands for the Celery search workers: a hint is answered on a thread of its own (as a
    worker process would, away from the gateway's request), or held (``answer`` false) until
    the test answers it. Bot moves are played at once, as ``InlineDispatcher`` does."""

    app: App | None = None
    answer: bool = True
    hints: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)

    def move(
        self, game_id: str, seat: int, version: int, *, slow: bool = False, priority: int = 0
    ) -> None:
        assert self.app is not None
        bot_moves.play_bot_move(self.app, game_id, seat, version)

    def finalize(self, game_id: str) -> None:
        pass

    def tournament(self, tournament_id: str) -> None:
        pass

    def hint(self, request: Mapping[str, Any], *, priority: int = 0) -> None:
        self.hints.append((dict(request), priority))
        if self.answer:
            self.run(dict(request))

    def run(self, request: dict[str, Any]) -> threading.Thread:
        assert self.app is not None
        worker = threading.Thread(target=searches.answer_hint, args=(self.app, request))
        worker.start()
        self.threads.append(worker)
        return worker


@dataclass
class HintStack:
    http: Any
    workers: SearchWorkers
    worker_app: App


@pytest.fixture
def hints(redis_url: str, redis_client: redis.Redis) -> Iterator[HintStack]:
    settings = Settings(redis_url=redis_url, max_wait=10)
    worker_client = redis.Redis.from_url(redis_url)
    workers = SearchWorkers()
    # The search workers' own application, as a Celery process builds it.
    workers.app = bootstrap(settings, client=worker_client, dispatcher=workers)
    gateway = create_app(settings, client=redis.Redis.from_url(redis_url), dispatcher=workers)
    try:
        with consuming(worker_client, workers.app, name="hints"):
            yield HintStack(gateway.test_client(), workers, workers.app)
        for t in workers.threads:
            t.join(30)
    finally:
        worker_client.close()


def _fox_for_two(http: Any) -> tuple[str, list[str], int]:
    created = http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201, created.get_json()
    doc = created.get_json()
    return doc["id"], doc["tokens"], doc["view"]["to_act"][0]


def _searching_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads every ISMCTS search runs on, from now on."""
    seen: list[str] = []
    real = ismcts.search

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(ismcts, "search", spy)
    return seen


def test_a_search_hint_runs_on_the_search_workers_and_is_what_the_seats_bot_would_send(
    hints: HintStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    gid, tokens, seat = _fox_for_two(hints.http)
    searched = _searching_threads(monkeypatch)
    asker = threading.current_thread().name
    resp = hints.http.get(
        f"/v1/games/{gid}/suggestion?bot=ismcts&iterations=30", headers=bearer(tokens[seat])
    )
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    # The search ran, and not on the thread that answered the request (the gateway's).
    assert searched and asker not in searched, (asker, searched)
    assert [request["seat"] for request, _ in hints.workers.hints] == [seat]
    # The same answer as the search run here with the seat's own randomness (bot_random).
    spec = {"bot": "ismcts", "iterations": 30}
    assert body == queries.suggestion(hints.worker_app, gid, seat, spec)
    assert body["bot"] == spec and body["command"] in view_legal(hints, gid, tokens[seat])


def view_legal(hints: HintStack, gid: str, token: str) -> list[dict[str, Any]]:
    resp = hints.http.get(f"/v1/games/{gid}", headers=bearer(token))
    return list(resp.get_json()["legal_commands"])


def test_a_quick_bots_hint_is_answered_in_the_request(hints: HintStack) -> None:
    gid, tokens, seat = _fox_for_two(hints.http)
    for bot in ("heuristic", "random"):
        resp = hints.http.get(f"/v1/games/{gid}/suggestion?bot={bot}", headers=bearer(tokens[seat]))
        assert resp.status_code == 200, resp.get_json()
    assert hints.workers.hints == []


def test_the_errors_of_a_search_hint_are_the_endpoints_own(hints: HintStack) -> None:
    gid, tokens, seat = _fox_for_two(hints.http)
    waiting = hints.http.get(
        f"/v1/games/{gid}/suggestion?bot=ismcts&iterations=30", headers=bearer(tokens[1 - seat])
    )
    problem(waiting, 422, "move/not_your_turn")
    missing = hints.http.get(
        "/v1/games/nope/suggestion?bot=ismcts&iterations=30", headers=bearer(tokens[seat])
    )
    problem(missing, 404)
    assert hints.workers.hints == []  # refused before anything was queued


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    return t, out


def _until(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_one_seat_has_one_hint_search_at_a_time(hints: HintStack) -> None:
    gid, tokens, seat = _fox_for_two(hints.http)
    hints.workers.answer = False  # the first search stays in flight
    url = f"/v1/games/{gid}/suggestion?bot=ismcts&budget_ms=200"
    first, answers = _in_thread(lambda: hints.http.get(url, headers=bearer(tokens[seat])))
    _until(lambda: len(hints.workers.hints) == 1, "the first hint to be queued")
    second = hints.http.get(url, headers=bearer(tokens[seat]))
    busy = problem(second, 429, "request/rate_limited")
    assert int(second.headers["Retry-After"]) >= 1, busy
    assert len(hints.workers.hints) == 1  # the second was not queued
    hints.workers.run(hints.workers.hints[0][0]).join(30)
    first.join(30)
    assert answers[0].status_code == 200, answers[0].get_json()
    # The first one answered, the seat may ask again.
    hints.workers.answer = True
    again = hints.http.get(url, headers=bearer(tokens[seat]))
    assert again.status_code == 200, again.get_json()


def test_a_hint_no_search_worker_answers_in_time_is_a_503(
    hints: HintStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(searches, "HINT_MARGIN_S", 0.3)
    gid, tokens, seat = _fox_for_two(hints.http)
    hints.workers.answer = False
    started = time.monotonic()
    resp = hints.http.get(
        f"/v1/games/{gid}/suggestion?bot=ismcts&budget_ms=100", headers=bearer(tokens[seat])
    )
    took = time.monotonic() - started
    body = problem(resp, 503, "service/unavailable")
    assert "Retry-After" in resp.headers, body
    assert 0.4 <= took < 10, took  # the budget and the margin, not the default 30 s wait
    # The search, taken up after its deadline, is dropped: nobody waits for it any more.
    request = hints.workers.hints[0][0]
    assert searches.answer_hint(hints.worker_app, request) is searches.Hinted.LATE
    # ... which frees the seat's slot at once.
    hints.workers.answer = True
    again = hints.http.get(
        f"/v1/games/{gid}/suggestion?bot=ismcts&budget_ms=100", headers=bearer(tokens[seat])
    )
    assert again.status_code == 200, again.get_json()


# ---- the shares: one contract, both adapters ------------------------------------------------


@pytest.fixture(params=["memory", "redis"])
def ports(request: pytest.FixtureRequest) -> Iterator[Ports]:
    if request.param == "memory":
        yield memory_ports()
        return
    client: redis.Redis = request.getfixturevalue("redis_client")
    yield redis_ports(client)


def test_an_owners_searches_are_counted_until_they_leave_or_expire(ports: Ports) -> None:
    s = ports.searches
    assert [s.enter("a", f"t{i}", 60) for i in range(3)] == [0, 1, 2]
    assert s.enter("b", "t0", 60) == 0  # another owner's count is its own
    assert s.enter("a", "t1", 60) == 2  # entering again (a repeated wake) counts once
    s.leave("a", "t0")
    s.leave("a", "t0")
    assert s.enter("a", "t3", 60) == 2
    assert s.enter("c", "short", 0.05) == 0
    time.sleep(0.1)
    assert s.enter("c", "next", 60) == 0  # the expired ticket no longer counts


def test_a_slot_has_one_holder_at_a_time(ports: Ports) -> None:
    s = ports.searches
    assert s.hold("seat", "h1", 30) == 0
    left = s.hold("seat", "h2", 30)
    assert 0 < left <= 30
    s.release("seat", "h2")  # not its holder: nothing happens
    assert s.hold("seat", "h3", 30) > 0
    s.release("seat", "h1")
    assert s.hold("seat", "h3", 0.05) == 0
    time.sleep(0.1)
    assert s.hold("seat", "h4", 30) == 0  # an expired hold is free


# ---- a fair search queue (Celery priorities on the Redis broker) ----------------------------


def _queued(settings: Settings) -> list[list[Any]]:
    """The search queue's tasks' arguments, in the order a search worker takes them."""
    worker = create_celery(settings)
    taken = []
    with worker.connection_for_read() as conn:
        channel = conn.default_channel
        while (message := channel.basic_get(SEARCH_QUEUE, no_ack=True)) is not None:
            args, _kwargs, _embed = message.decode()
            taken.append(list(args))
    return taken


def test_one_clients_flood_of_searches_does_not_queue_ahead_of_another_clients_bot(
    redis_url: str, redis_client: redis.Redis
) -> None:
    settings = Settings(redis_url=redis_url)
    app = bootstrap(
        settings, client=redis.Redis.from_url(redis_url), dispatcher=CeleryDispatcher(settings)
    )
    flood = [
        creation.create_game(
            app, "skye", [{"bot": "ismcts", "budget_ms": 2000}] * 4, owner="addr:flood"
        ).game_id
        for _ in range(3)
    ]
    fox = creation.create_game(
        app,
        "fox",
        [{"name": "ana"}, {"bot": "ismcts", "budget_ms": 200}],
        {"first_dealer": 0},  # the non-dealer, the bot, leads
        owner="addr:other",
    ).game_id
    order = [args[0] for args in _queued(settings)]
    assert sorted(order) == sorted([*flood * 4, fox])  # every search was queued
    # Behind the flood's first search only, not its twelve.
    assert order.index(fox) <= 1, order


def test_a_search_task_that_ran_leaves_its_owners_count(
    redis_url: str, redis_client: redis.Redis
) -> None:
    settings = Settings(redis_url=redis_url)
    sent: list[tuple[str, list[Any], int]] = []

    class Recording(CeleryDispatcher):
        def move(
            self, game_id: str, seat: int, version: int, *, slow: bool = False, priority: int = 0
        ) -> None:
            sent.append((game_id, [seat, version], priority))

    app = bootstrap(
        settings, client=redis.Redis.from_url(redis_url), dispatcher=Recording(settings)
    )
    spec = [{"bot": "ismcts", "iterations": 5}] * 2
    first = creation.create_game(app, "skye", [*spec, {"name": "x"}], owner="addr:a").game_id
    second = creation.create_game(app, "skye", [*spec, {"name": "y"}], owner="addr:a").game_id
    # Isle of Skye's prices are set at once: both bots of each game are asked together.
    assert [p for _, _, p in sent] == [0, 1, 2, 3]
    for game_id, (seat, version), _ in sent[:2]:
        searches.moved(app, game_id, seat, version)
    assert first != second
    assert app.ports.searches.enter("addr:a", "probe", 60) == 2
