"""The application's handlers and queries as scenarios, on the in-memory adapters alone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.adapters.memory import MemoryCommandBus
from shared.app import commands, creation, finalize, projecting, queries
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.errors import AppError
from shared.app.messages import CommandMessage
from shared.bootstrap import bootstrap
from shared.config import Settings

KEYS = queries.Keys(organizers=frozenset({"org"}), auditors=frozenset({"aud"}))


def memory_app(*, bots: bool = False) -> App:
    dispatcher = (lambda a: InlineDispatcher().bind(a)) if bots else None
    return bootstrap(Settings(), backend="memory", dispatcher=dispatcher)


def drain(app: App, game: str) -> list[dict[str, Any]]:
    """Decide every queued command of ``game`` (what a worker does), until none is left."""
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


def fox_game(app: App, seed: str = "scenario") -> tuple[str, list[str | None]]:
    created = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}], seed=seed)
    return created.game_id, created.tokens


def given_the_seat_to_act(app: App, gid: str) -> tuple[int, dict[str, Any]]:
    seat = public(app, gid)["to_act"][0]
    view = queries.view(app, gid, seat)
    assert view is not None
    return seat, view["legal_commands"][0]


def send(
    app: App, gid: str, seat: int, body: dict[str, Any], cid: str, expected: int | None = None
) -> dict[str, Any]:
    commands.submit_command(
        app,
        CommandMessage(
            command_id=cid, game_id=gid, seat=seat, body=body, expected_version=expected
        ),
        "fox",
    )
    (outcome,) = drain(app, "fox")
    return outcome


def test_a_legal_command_is_accepted_recorded_and_projected() -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    before = public(app, gid)["version"]
    seat, command = given_the_seat_to_act(app, gid)
    outcome = send(app, gid, seat, command, "c1")
    assert outcome["status"] == "accepted" and outcome["version"] > before
    assert public(app, gid)["version"] == outcome["version"]
    first = app.ports.store.read(gid, after=before)[0]
    assert first.command_id == "c1" and first.seat == seat
    assert first.command == command  # the command as the engine parsed it, in the log
    assert json.loads(app.ports.bus.outcome(gid, "c1") or "{}")["status"] == "accepted"


def test_the_wrong_seat_is_refused_and_nothing_is_appended() -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)
    version = public(app, gid)["version"]
    outcome = send(app, gid, 1 - seat, command, "c1")
    assert outcome["status"] == "rejected"
    assert outcome["error"]["code"] == "move/not_your_turn"
    assert app.ports.store.head(gid)[0] == version


def test_a_stale_expected_version_is_refused() -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)
    version = public(app, gid)["version"]
    outcome = send(app, gid, seat, command, "c1", expected=version - 1)
    assert outcome["error"]["code"] == "game/stale_version"
    assert send(app, gid, seat, command, "c2", expected=version)["status"] == "accepted"


def test_a_command_id_sent_twice_is_applied_once() -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)
    first = send(app, gid, seat, command, "c1")
    again = send(app, gid, seat, command, "c1")
    assert again["status"] == "accepted" and again["events"] == first["events"]
    assert [e.command_id for e in app.ports.store.read(gid)].count("c1") == (
        first["events"]["last"] - first["events"]["first"] + 1
    )


def test_a_command_id_reused_with_another_body_is_refused_and_the_first_stands() -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)
    view = queries.view(app, gid, seat)
    assert view is not None
    other = next(c for c in view["legal_commands"] if c != command)
    first = send(app, gid, seat, command, "c1")
    version = public(app, gid)["version"]
    reused = send(app, gid, seat, other, "c1")
    assert reused["status"] == "rejected"
    assert reused["error"]["code"] == "request/idempotency_key_reused"
    assert public(app, gid)["version"] == version  # nothing applied
    stored = app.ports.bus.outcome(gid, "c1")
    assert stored is not None and json.loads(stored)["status"] == "accepted"  # the first stands
    # Another seat cannot pass off the id either; the same command again is still fine.
    assert send(app, gid, 1 - seat, command, "c1")["status"] == "rejected"
    assert send(app, gid, seat, command, "c1")["events"] == first["events"]


def test_a_command_for_no_game_is_refused_as_not_found() -> None:
    app = memory_app()
    outcome = commands.decide_command(
        app, CommandMessage(command_id="c", game_id="nope", seat=0, body={"type": "play"})
    )
    assert outcome["error"]["code"] == "game/not_found"


def test_a_finished_game_refuses_commands_reveals_its_seed_and_is_finalized_once() -> None:
    app = memory_app(bots=True)
    gid = creation.create_game(app, "fox", [{"bot": "random"}] * 2, {"target": 1}).game_id
    for _ in range(1000):
        if public(app, gid)["outcome"] is not None:
            break
        drain(app, "fox")
    assert public(app, gid)["outcome"] is not None
    assert app.ports.store.read(gid)[-1].type == "seed_revealed"
    assert queries.list_games(app, finished=True) == [gid]
    result = app.ports.directory.result(gid)
    assert result is not None and result["outcome"] == public(app, gid)["outcome"]
    assert finalize.finalize_game(app, gid) is finalize.Finalized.DONE  # the first result stays
    assert app.ports.directory.result(gid) == result
    outcome = commands.decide_command(
        app, CommandMessage(command_id="late", game_id=gid, seat=0, body={"type": "keep_decree"})
    )
    assert outcome["error"]["code"] == "game/over"


def test_rebuilding_writes_the_same_projections() -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)
    send(app, gid, seat, command, "c1")
    before = [app.ports.read_models.read(gid, s) for s in (0, 1, None)]
    fresh = App(ports=app.ports)  # a new process: nothing cached
    projecting.rebuild_projections(fresh, gid)
    assert [app.ports.read_models.read(gid, s) for s in (0, 1, None)] == before


def test_roles_come_from_the_roster_and_keys() -> None:
    app = memory_app()
    gid, tokens = fox_game(app)
    assert queries.caller(app, gid, None, KEYS).role == queries.SPECTATOR
    assert queries.caller(app, gid, tokens[1], KEYS) == queries.Caller(queries.SEAT, 1)
    assert queries.caller(app, gid, "aud", KEYS).role == queries.AUDITOR_ROLE
    assert queries.caller(app, gid, "org", KEYS).role == queries.ORGANIZER
    with pytest.raises(AppError) as bad:
        queries.caller(app, gid, "not-a-token", KEYS)
    assert bad.value.code == "auth/invalid_token"
    with pytest.raises(AppError) as missing:
        queries.caller(app, "nope", tokens[0], KEYS)
    assert missing.value.code == "game/not_found"


def test_a_roster_change_is_seen_without_a_restart() -> None:
    app = memory_app()
    gid, tokens = fox_game(app)
    assert queries.caller(app, gid, tokens[0], KEYS).seat == 0  # now cached
    from shared.app.messages import token_hash

    entry = app.ports.directory.get(gid)
    assert entry is not None
    app.ports.directory.set_token_hashes(gid, [entry.token_hashes[0], token_hash("newcomer")])
    assert queries.caller(app, gid, "newcomer", KEYS).seat == 1


def test_a_store_fault_propagates_so_the_worker_can_retry() -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)

    def broken(*_a: object, **_k: object) -> None:
        raise ConnectionError("store down")

    app.ports.store.append = broken  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        commands.decide_command(
            app, CommandMessage(command_id="c", game_id=gid, seat=seat, body=command)
        )
    assert app.ports.bus.outcome(gid, "c") is None  # the client was told nothing


def test_a_seat_takes_only_the_commands_of_whoever_plays_it() -> None:
    app = memory_app()
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"bot": "random"}]).game_id
    for seat in (0, 1):
        view = queries.view(app, gid, seat)
        assert view is not None
        body = (view["legal_commands"] or [{"type": "keep_decree"}])[0]
        wrong = f"bot-{seat}-{view['version']}" if seat == 0 else "a-human-id"
        outcome = commands.decide_command(
            app, CommandMessage(command_id=wrong, game_id=gid, seat=seat, body=body)
        )
        assert outcome["error"]["code"] == "move/not_your_turn", outcome
        assert "played by" in outcome["error"]["detail"]
