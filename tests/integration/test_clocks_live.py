"""Turn clocks through the real parts: the gateway, the stream workers and deadline schedulers
on a real Redis, with one-second clocks. A human seat that never acts does not stall its game."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
import redis

from services.worker.consumer import GROUP, StreamConsumer
from services.worker.deadlines import DeadlineScheduler
from shared import keys
from shared.adapters.memory import FixedClock
from shared.app import clocks, commands, creation
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from tests.integration.api import WAIT, bearer, events, problem, send, view
from tests.integration.conftest import AUDITOR, Stack

DEADLINE_S = 90.0  # generous: a busy 2-core machine


@pytest.fixture
def schedulers(stack: Stack) -> Iterator[list[DeadlineScheduler]]:
    """Two schedulers at once, as two worker processes run them."""
    running = [DeadlineScheduler(stack.worker_app) for _ in range(2)]
    threads = [s.start() for s in running]
    yield running
    for s in running:
        s.stop_event.set()
    for t in threads:
        t.join(5)


def create(stack: Stack, body: dict) -> dict:
    resp = stack.http.post("/v1/games", json=body)
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def wait_for(stack: Stack, gid: str, done, what: str) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + DEADLINE_S
    while True:
        doc = view(stack, gid)
        if done(doc):
            return doc
        assert time.monotonic() < deadline, f"{what}: still at {doc['version']}"
        time.sleep(0.05)


def test_a_human_who_never_acts_times_out_is_taken_over_and_the_game_ends(
    stack: Stack, schedulers: list[DeadlineScheduler]
) -> None:
    created = create(
        stack,
        {
            "game": "fox",
            "seats": [{"name": "gone"}, {"bot": "random"}],
            "options": {"target": 1},
            "clock": {"turn_seconds": 1, "reserve_seconds": 0, "takeover_after": 2},
        },
    )
    gid = created["id"]
    first = view(stack, gid)
    assert first["clock"]["turn_seconds"] == 1 and first["clock"]["on_timeout"] == "bot"
    end = wait_for(stack, gid, lambda d: d["outcome"] is not None, "the game never ended")
    assert end["seats"][0]["taken_over"] == "timeouts"
    log = events(stack, gid, AUDITOR)
    timed = [(e["data"]["seat"], e["data"]["armed_version"]) for e in log
             if e["type"] == "turn_timed_out"]  # fmt: skip
    assert timed and all(seat == 0 for seat, _ in timed)
    assert len(timed) == len(set(timed)) == 2  # one per deadline, though two schedulers ran
    for e in log:
        if e["type"] == "turn_timed_out":
            assert e["data"]["at_ms"] >= e["data"]["deadline_ms"]
    report = audit(gid, log)
    assert report.status == "passed", report.failures
    # The taken-over seat's old token holds nothing any more.
    late = send(stack, gid, created["seats"][0]["token"], {"type": "resign"})
    # 401 once the gateway has read the new roster, a refusal from the worker before that.
    assert late.status_code in (401, 403, 409, 422), late.get_json()


def test_a_player_who_resigns_a_two_seat_game_loses_it_at_once(stack: Stack) -> None:
    created = create(stack, {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})
    gid, tokens = created["id"], [s["token"] for s in created["seats"]]
    resp = stack.http.post(
        f"/v1/games/{gid}/commands", json={"type": "resign"}, headers={**bearer(tokens[1]), **WAIT}
    )
    assert resp.status_code == 200, resp.get_json()
    doc = view(stack, gid)
    assert doc["outcome"]["winners"] == [0] and doc["outcome"]["ranks"] == [1, 2]
    assert doc["seats"][1]["resigned"] is True
    problem(send(stack, gid, tokens[0], {"type": "resign"}), 409)


def test_a_stale_time_out_is_refused_and_harmless(stack: Stack) -> None:
    created = create(
        stack,
        {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "clock": {"turn_seconds": 1}},
    )
    gid = created["id"]
    doc = view(stack, gid)
    seat = doc["to_act"][0]
    armed = doc["clock"]["seats"][seat]["armed_version"]
    token = created["seats"][seat]["token"]
    legal = view(stack, gid, token)["legal_commands"][0]
    assert send(stack, gid, token, legal).status_code == 200
    before = view(stack, gid)["version"]
    commands.submit_command(
        stack.worker_app,
        CommandMessage(
            command_id=f"timeout-{seat}-{armed}",
            game_id=gid,
            seat=seat,
            body={"type": "time_out", "armed_version": armed},
        ),
        "fox",
    )
    outcome = stack.worker_app.ports.bus.wait_reply(gid, f"timeout-{seat}-{armed}", 30)
    assert outcome is not None and b'"rejected"' in outcome
    assert view(stack, gid)["version"] == before


@pytest.mark.parametrize(
    "clock, field",
    [
        ({"turn_seconds": 0}, "turn_seconds"),
        ({"on_timeout": "later"}, "on_timeout"),
        ({"timeout_bot": {"bot": "nobody"}}, "bot"),
        ({"reserve_seconds": 10**9}, "reserve_seconds"),
    ],
)
def test_a_bad_clock_gets_a_422_naming_the_field(stack: Stack, clock: dict, field: str) -> None:
    resp = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "clock": clock}
    )
    body = problem(resp, 422)
    assert field in str(body.get("errors")), body


def test_a_worker_killed_mid_time_out_does_not_time_the_seat_out_twice(
    redis_client: redis.Redis,
) -> None:
    moment = FixedClock()

    def app() -> App:
        return bootstrap(
            Settings(), client=redis_client, dispatcher=InlineDispatcher(), clock=moment
        )

    first = app()
    created = creation.create_game(
        first, "fox", [{"name": "a"}, {"name": "b"}], clock_spec={"turn_seconds": 1,
                                                                  "reserve_seconds": 0}
    )  # fmt: skip
    gid = created.game_id
    crashed = StreamConsumer(redis_client, first, "fox", name="crashy")
    crashed.ensure_groups()
    moment.advance(2)
    [cid] = clocks.fire_due_deadlines(first).timeouts
    # The worker appends the time-out, then dies: no projection, no deadline moved, no XACK.
    ((_stream, [(_id, fields)]),) = redis_client.xreadgroup(
        GROUP, "crashy", {keys.command_stream("fox", 0): ">"}
    )
    commands._apply(first, CommandMessage.from_fields(fields))
    version = first.ports.store.head(gid)[0]
    # The scheduler still sees the old deadline and sends the same time-out again.
    moment.advance(3)
    assert clocks.fire_due_deadlines(first).timeouts == [cid]
    fresh = StreamConsumer(redis_client, app(), "fox", name="crashy")
    fresh.recover()
    while fresh.poll_once(block_ms=10):
        pass
    log = fresh.app.ports.store.read(gid)
    assert [e.type for e in log].count("turn_timed_out") == 1
    assert fresh.app.ports.store.head(gid)[0] == version  # the repeats appended nothing
    shown = json.loads(redis_client.get(keys.public(gid)))
    assert shown["version"] == version  # and the projections caught up
