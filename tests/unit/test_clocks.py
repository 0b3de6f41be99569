"""Turn clocks, time-outs, resigning and take-over, on the in-memory adapters with a clock that
moves only when told (no sleeping)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from shared import games
from shared.adapters.memory import FixedClock, MemoryCommandBus
from shared.app import bots as bot_registry
from shared.app import clocks, commands, creation, queries, results
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.events import SERVICE_EVENTS
from shared.games.errors import GameError
from shared.match import clock
from shared.match.projections import AUDITOR, visible_events

CLOCK = {"turn_seconds": 10, "reserve_seconds": 20}


def clocked_app(*, bots: bool = True) -> tuple[App, FixedClock]:
    fixed = FixedClock()
    dispatcher = (lambda a: InlineDispatcher().bind(a)) if bots else None
    return bootstrap(Settings(), backend="memory", dispatcher=dispatcher, clock=fixed), fixed


def drain(app: App, game: str) -> list[dict[str, Any]]:
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    outcomes = []
    while queued := bus.take(game):
        for fields in queued:
            outcomes.append(commands.decide_command(app, CommandMessage.from_fields(fields)))
    return outcomes


def public(app: App, gid: str) -> dict[str, Any]:
    doc = queries.view(app, gid, None)
    assert doc is not None
    return doc


def events(app: App, gid: str, after: int = 0) -> list[Any]:
    return app.ports.store.read(gid, after=after)


def send(app: App, gid: str, seat: int, body: dict[str, Any], cid: str) -> dict[str, Any]:
    game = public(app, gid)["game"]
    commands.submit_command(
        app, CommandMessage(command_id=cid, game_id=gid, seat=seat, body=body), game
    )
    outcomes = drain(app, game)
    return outcomes[0]


def play_first_legal(app: App, gid: str, cid: str) -> dict[str, Any]:
    seat = public(app, gid)["to_act"][0]
    view = queries.view(app, gid, seat)
    assert view is not None
    return send(app, gid, seat, view["legal_commands"][0], cid)


def log_as(app: App, gid: str, reader: int | str | None) -> list[dict[str, Any]]:
    engine = games.get(public(app, gid)["game"])
    return visible_events(engine, events(app, gid), reader)


def fire(app: App, game: str) -> list[str]:
    fired = clocks.fire_due_deadlines(app)
    drain(app, game)
    return fired.timeouts


def seat_clock(app: App, gid: str, seat: int) -> dict[str, Any]:
    return dict(public(app, gid)["clock"]["seats"][seat])


def fox(app: App, spec: dict[str, Any] | None = None) -> tuple[str, list[str | None]]:
    created = creation.create_game(
        app,
        "fox",
        [{"name": "a"}, {"name": "b"}],
        seed="clocks",
        clock_spec=CLOCK if spec is None else spec,
    )
    return created.game_id, created.tokens


def test_the_seat_to_act_gets_its_turn_time_then_its_reserve() -> None:
    app, t = clocked_app()
    gid, _ = fox(app)
    seat = public(app, gid)["to_act"][0]
    first = seat_clock(app, gid, seat)
    assert first["deadline_ms"] == round(t.epoch() * 1000) + 30_000  # 10 s turn + 20 s reserve
    assert first["deadline"].endswith("Z") and first["reserve_ms"] == 20_000
    t.advance(25)  # 15 s into the reserve
    assert play_first_legal(app, gid, "m1")["status"] == "accepted"
    stopped = [e for e in events(app, gid) if e.type == "clock_stopped"]
    assert stopped[-1].data == {
        "seat": seat, "armed_version": first["armed_version"], "used_ms": 25_000,
        "reserve_ms": 5_000, "acted": True,
    }  # fmt: skip
    after = seat_clock(app, gid, seat)
    assert after["reserve_ms"] == 5_000
    other = public(app, gid)["to_act"]
    for s in other:  # whoever acts now has its own deadline, from now
        assert seat_clock(app, gid, s)["deadline_ms"] == round(t.epoch() * 1000) + 30_000 - (
            15_000 if s == seat else 0
        )


def test_a_due_deadline_times_out_once_and_the_bot_moves_for_the_seat() -> None:
    app, t = clocked_app()
    gid, _ = fox(app)
    seat = public(app, gid)["to_act"][0]
    armed = seat_clock(app, gid, seat)["armed_version"]
    assert fire(app, "fox") == []  # nothing due yet
    t.advance(29.999)
    assert fire(app, "fox") == []
    t.advance(0.002)
    before = public(app, gid)["version"]
    assert fire(app, "fox") == [f"timeout-{seat}-{armed}"]
    log = events(app, gid, after=before)
    assert log[0].type == "turn_timed_out" and log[0].data["seat"] == seat
    assert log[0].data["at_ms"] >= log[0].data["deadline_ms"]
    assert log[0].command["type"] == "time_out" and "move" in log[0].command
    assert any(e.type not in SERVICE_EVENTS for e in log)  # the bot's move
    assert seat_clock(app, gid, seat)["timeouts_in_a_row"] == 1
    # The scheduler runs again (a second process, a retry): the same deadline fires no more.
    t.advance(3)
    version = public(app, gid)["version"]
    commands.submit_command(
        app,
        CommandMessage(
            command_id=f"timeout-{seat}-{armed}",
            game_id=gid,
            seat=seat,
            body={"type": "time_out", "armed_version": armed},
        ),
        "fox",
    )
    drain(app, "fox")
    assert public(app, gid)["version"] == version


def test_an_early_or_stale_time_out_is_refused_and_changes_nothing() -> None:
    app, t = clocked_app()
    gid, _ = fox(app)
    seat = public(app, gid)["to_act"][0]
    armed = seat_clock(app, gid, seat)["armed_version"]
    version = public(app, gid)["version"]
    body = {"type": "time_out", "armed_version": armed}
    early = send(app, gid, seat, body, f"timeout-{seat}-{armed}")
    assert early["status"] == "rejected" and "not due" in early["error"]["detail"]
    play_first_legal(app, gid, "m1")
    t.advance(100)
    stale = send(app, gid, seat, body, f"timeout-{seat}-{armed}")
    assert stale["status"] == "rejected"
    assert not [e for e in events(app, gid) if e.type == "turn_timed_out"]
    assert public(app, gid)["version"] > version  # only the move


def test_a_client_cannot_send_a_time_out() -> None:
    app, t = clocked_app()
    gid, _ = fox(app)
    seat = public(app, gid)["to_act"][0]
    armed = seat_clock(app, gid, seat)["armed_version"]
    t.advance(100)
    out = send(app, gid, seat, {"type": "time_out", "armed_version": armed}, f"s{seat}-x")
    assert out["status"] == "rejected"


def test_three_time_outs_in_a_row_hand_the_seat_to_the_timeout_bot() -> None:
    app, t = clocked_app()
    gid, _ = fox(app, {"turn_seconds": 5, "reserve_seconds": 0, "takeover_after": 3})
    sleeper = public(app, gid)["to_act"][0]
    outs = 0
    for _ in range(400):
        doc = public(app, gid)
        if doc["outcome"] or doc["seats"][sleeper].get("taken_over"):
            break
        if sleeper in doc["to_act"]:
            t.advance(6)
            if fire(app, "fox"):
                outs += 1
        else:
            play_first_legal(app, gid, f"m{doc['version']}")
    doc = public(app, gid)
    assert outs == 3
    assert doc["seats"][sleeper]["taken_over"] == "timeouts"
    assert doc["seats"][sleeper]["bot"] == "heuristic"
    taken = [e for e in events(app, gid) if e.type == "seat_taken_over"]
    assert [e.data["seat"] for e in taken] == [sleeper]
    # From now on the bot plays that seat (inline here) and no deadline is armed for it.
    for _ in range(400):
        doc = public(app, gid)
        if doc["outcome"]:
            break
        assert doc["clock"]["seats"][sleeper]["deadline"] is None
        play_first_legal(app, gid, f"m{doc['version']}")
    outcome = public(app, gid)["outcome"]
    assert outcome is not None
    assert audit(gid, log_as(app, gid, AUDITOR)).status == "passed"
    # A player's game that bots finished is not a bots' game: the leaderboard leaves it out.
    assert results.rating_update(app.load(gid), outcome) is None


def test_a_seat_that_acts_itself_starts_its_count_again() -> None:
    app, t = clocked_app()
    gid, _ = fox(app, {"turn_seconds": 5, "reserve_seconds": 0})
    sleeper = public(app, gid)["to_act"][0]
    t.advance(6)
    fire(app, "fox")
    assert seat_clock(app, gid, sleeper)["timeouts_in_a_row"] == 1
    for _ in range(50):
        if sleeper in public(app, gid)["to_act"]:
            break
        play_first_legal(app, gid, f"m{public(app, gid)['version']}")
    play_first_legal(app, gid, "mine")
    assert seat_clock(app, gid, sleeper)["timeouts_in_a_row"] == 0


def test_simultaneous_phases_give_every_seat_its_own_deadline() -> None:
    app, t = clocked_app()
    created = creation.create_game(
        app, "skye", [{"name": "a"}, {"name": "b"}, {"name": "c"}], seed="sim", clock_spec=CLOCK
    )
    gid = created.game_id
    to_act = public(app, gid)["to_act"]
    assert len(to_act) == 3  # prices are set at once
    deadlines = {s: seat_clock(app, gid, s)["deadline_ms"] for s in to_act}
    assert all(d is not None for d in deadlines.values())
    t.advance(12)
    view = queries.view(app, gid, to_act[0])
    assert view is not None
    command = bot_registry.random_bot(view, random.Random(1))
    assert command is not None
    assert send(app, gid, to_act[0], command, "p0")["status"] == "accepted"
    assert seat_clock(app, gid, to_act[0])["deadline"] is None  # its clock stopped
    assert seat_clock(app, gid, to_act[0])["reserve_ms"] == 18_000
    for s in to_act[1:]:  # the others' clocks run on, untouched
        assert seat_clock(app, gid, s)["deadline_ms"] == deadlines[s]
    t.advance(30)
    assert len(fire(app, "skye")) == 2  # each late seat times out on its own deadline
    timed = [e.data["seat"] for e in events(app, gid) if e.type == "turn_timed_out"]
    assert sorted(timed) == sorted(to_act[1:])
    assert audit(gid, log_as(app, gid, AUDITOR), seed="sim").ok


def test_forfeit_on_time_out_resigns_the_seat_and_the_other_wins() -> None:
    app, t = clocked_app()
    gid, _ = fox(app, {"turn_seconds": 5, "reserve_seconds": 0, "on_timeout": "forfeit"})
    late = public(app, gid)["to_act"][0]
    t.advance(6)
    fire(app, "fox")
    doc = public(app, gid)
    assert doc["outcome"]["winners"] == [1 - late]
    assert doc["outcome"]["ranks"][late] == 2 and doc["outcome"]["ended_by"] == "resignation"
    assert doc["seats"][late]["resigned"] is True
    assert doc["to_act"] == [] and doc["clock"]["seats"][late]["deadline"] is None
    resigned = [e for e in events(app, gid) if e.type == "seat_resigned"]
    assert resigned[0].data == {"seat": late, "reason": "forfeit"}
    assert events(app, gid)[-1].type == "seed_revealed"
    report = audit(gid, log_as(app, gid, AUDITOR))
    assert report.status == "passed", report.failures


@pytest.mark.parametrize("game", ["fox", "skye"])
def test_resigning_a_two_seat_game_ends_it_at_once(game: str) -> None:
    app, _ = clocked_app()
    created = creation.create_game(app, game, [{"name": "a"}, {"name": "b"}], seed="r")
    gid = created.game_id
    to_act = public(app, gid)["to_act"]
    idle = 1 if 1 not in to_act else 1 - to_act[0]  # resigning needs no turn
    assert send(app, gid, idle, {"type": "resign"}, "r1")["status"] == "accepted"
    doc = public(app, gid)
    assert doc["outcome"]["winners"] == [1 - idle] and doc["to_act"] == []
    assert app.ports.directory.result(gid) is not None  # finalized (the inline dispatcher)
    refused = play_first_legal_or_none(app, gid)
    assert refused is None
    again = send(app, gid, 1 - idle, {"type": "resign"}, "r2")
    assert again["status"] == "rejected" and again["error"]["code"] == "game/over"
    assert audit(gid, log_as(app, gid, AUDITOR)).status == "passed"


def play_first_legal_or_none(app: App, gid: str) -> dict[str, Any] | None:
    doc = public(app, gid)
    return play_first_legal(app, gid, "late") if doc["to_act"] else None


@pytest.mark.parametrize("game, seats", [("skull", 3), ("skye", 3)])
def test_resigning_with_three_seats_hands_the_seat_to_a_bot_and_ranks_it_last(
    game: str, seats: int
) -> None:
    app, _ = clocked_app()
    created = creation.create_game(
        app, game, [{"name": f"p{i}"} for i in range(seats)], seed=f"resign-{game}"
    )
    gid = created.game_id
    assert send(app, gid, 0, {"type": "resign"}, "r")["status"] == "accepted"
    doc = public(app, gid)
    assert doc["seats"][0]["resigned"] is True and doc["seats"][0]["bot"] == "random"
    assert doc["seats"][0]["taken_over"] == "resigned"
    rng = random.Random(3)
    for step in range(5000):
        doc = public(app, gid)
        if doc["outcome"]:
            break
        humans = [s for s in doc["to_act"] if s != 0]
        if not humans:
            drain(app, game)
            continue
        view = queries.view(app, gid, humans[0])
        assert view is not None
        command = bot_registry.random_bot(view, rng)
        assert command is not None
        send(app, gid, humans[0], command, f"c{step}")
    outcome = public(app, gid)["outcome"]
    assert outcome is not None
    assert outcome["ranks"][0] == max(outcome["ranks"]) and 0 not in outcome["winners"]
    assert outcome["ranks"][0] > max(outcome["ranks"][1:])
    assert outcome["resigned"] == [0]
    assert audit(gid, log_as(app, gid, AUDITOR)).status == "passed"


def test_resigned_seats_rank_below_every_other() -> None:
    engine = {"scores": [9, 5, 7, 1], "winners": [0], "ranks": [1, 3, 2, 4], "draw": False}
    out = clock.with_resignations(engine, [True, False, False, True])
    assert out is not None
    assert out["ranks"] == [3, 2, 1, 4] and out["winners"] == [2]
    assert out["scores"] == [9, 5, 7, 1]  # the engine's scores as they were
    tie = {"scores": [3, 3, 1], "winners": [0, 1], "ranks": [1, 1, 3], "draw": True}
    shared = clock.with_resignations(tie, [False, False, True])
    assert shared is not None and shared["winners"] == [0, 1] and shared["draw"] is True
    assert clock.with_resignations(None, [True, False, True]) == {
        "scores": None, "winners": [1], "ranks": [2, 1, 2], "draw": False,
        "resigned": [0, 2], "ended_by": "resignation",
    }  # fmt: skip
    assert clock.with_resignations(None, [True, False, False]) is None  # two play on


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"turn_seconds": 0}, "clock.turn_seconds"),
        ({"turn_seconds": "60"}, "clock.turn_seconds"),
        ({"reserve_seconds": -1}, "clock.reserve_seconds"),
        ({"on_timeout": "pass"}, "clock.on_timeout"),
        ({"timeout_bot": {"bot": "nobody"}}, "clock.timeout_bot.bot"),
        ({"timeout_bot": {"bot": "ismcts", "budget_ms": 1}}, "clock.timeout_bot.budget_ms"),
        ({"takeover_after": 0}, "clock.takeover_after"),
        ({"turn": 5}, "clock.turn"),
    ],
)
def test_a_bad_clock_is_refused_naming_the_field(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(GameError) as exc:
        clock.parse_clock(spec, parse_bot=bot_registry.parse_spec)
    assert field in exc.value.errors, exc.value.errors


def test_the_clock_defaults_and_shows_in_every_view() -> None:
    app, _ = clocked_app()
    gid, _ = fox(app, {})
    doc = public(app, gid)
    assert {k: doc["clock"][k] for k in clock.DEFAULTS} == clock.DEFAULTS
    seat_view = queries.view(app, gid, 0)
    assert seat_view is not None and seat_view["clock"] == doc["clock"]
    no_clock = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}])
    assert "clock" not in public(app, no_clock.game_id)


def test_a_timeout_bots_move_is_as_secret_as_the_seats_own() -> None:
    app, t = clocked_app()
    created = creation.create_game(
        app, "skye", [{"name": "a"}, {"name": "b"}], seed="secret", clock_spec=CLOCK
    )
    gid = created.game_id
    t.advance(31)
    fire(app, "skye")
    timed = [e for e in events(app, gid) if e.type == "turn_timed_out"]
    assert len(timed) == 2
    for e in timed:
        other = 1 - e.seat
        shown = log_as(app, gid, other)
        mine = [d for d in shown if d["version"] == e.version][0]
        assert mine["command"]["move"].get("redacted") is True, mine["command"]
        assert "prices" not in mine["command"]["move"]
        own = [d for d in log_as(app, gid, e.seat) if d["version"] == e.version][0]
        assert own["command"] == e.command
