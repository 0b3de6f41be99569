"""Issue 27's one decide path: live play, every play-out path (general, sealed, fast), a
registered bot's answer tried before it is sent and the audit's re-decision decide each
command through ``steps.decide_on`` (``steps.decide`` on a frozen state; the fast play-out on
the one kernel it keeps for a game), so that what the service appends, what a tournament
writes and what an auditor recomputes cannot drift apart."""

from __future__ import annotations

from typing import Any

import pytest

from shared.app import steps
from shared.audit import audit
from shared.games.errors import GameError
from shared.games.rng import Rng
from tests.unit.test_handlers import fox_game, given_the_seat_to_act, memory_app, send


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The version of every command decided through ``steps.decide_on`` (the real one runs)."""
    seen: list[int] = []
    real = steps.decide_on

    def spy(kernel: Any, seat: int, command: Any, seed: str, version: int, *args: Any,
            **kw: Any) -> Any:  # fmt: skip
        seen.append(version)
        return real(kernel, seat, command, seed, version, *args, **kw)

    monkeypatch.setattr(steps, "decide_on", spy)
    return seen


def test_live_play_decides_through_the_one_function(calls: list[int]) -> None:
    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)
    outcome = send(app, gid, seat, command, "c1")
    assert outcome["status"] == "accepted"
    assert len(calls) == 1


@pytest.mark.parametrize(
    "how",
    [
        {"keep_envelopes": True},  # the sealed path (a tournament's log)
        {"keep_envelopes": False},  # the fast path (benchmarks, simulate)
        {"on_step": lambda *a: None},  # the general path
    ],
)
def test_every_play_out_path_decides_through_the_one_function(
    calls: list[int], how: dict[str, Any]
) -> None:
    from shared.app.playout import play

    played = play("fox", [{"bot": "random"}] * 2, {"target": 10}, "one-path", **how)
    assert played.actions > 10
    assert len(calls) == played.actions


def test_the_audit_re_decides_through_the_one_function(calls: list[int]) -> None:
    from shared.app.playout import play

    played = play("fox", [{"bot": "random"}] * 2, {"target": 10}, "one-path-audit")
    calls.clear()
    report = audit("g", [e.to_dict() for e in played.envelopes])
    assert report.status == "passed", report.checks
    assert len(calls) == report.commands == played.actions


def test_a_bots_answer_is_tried_through_the_one_function(calls: list[int]) -> None:
    """A registered bot's answer that its turn's listing does not hold is tried as the worker
    would decide it (``remote.check_command``'s dry run), through the same function."""
    from shared.app import queries, remote

    app = memory_app()
    gid, _ = fox_game(app)
    seat, command = given_the_seat_to_act(app, gid)
    view = queries.view(app, gid, seat)
    assert view is not None
    assert remote.check_command(app, gid, seat, view, command) == command
    assert calls == [view["version"]]
    with pytest.raises(GameError):
        remote.check_command(app, gid, 1 - seat, view, command)  # not that seat's turn


def test_the_one_function_draws_v_version_and_reveals_the_seed_at_the_end() -> None:
    from shared import games
    from shared.games.base import step

    engine = games.get("fox")
    opts = engine.parse_options(2, {"target": 10})
    state = None
    for e in engine.setup(2, opts, Rng("s", "setup")):
        state = engine.evolve(state, e)
    version = 5
    while True:
        seat = engine.to_act(state)[0]
        command = engine.legal_commands(state, seat)[0]
        events, after, closing = steps.decide(engine, state, seat, command, "s", version)
        # The randomness is the label ``v<version>``'s: the kernel's own step agrees.
        assert (events, after) == step(engine, state, seat, command, Rng("s", f"v{version}"))
        if closing is not None:
            break
        version += len(events)
        state = after
    assert engine.outcome(after) is not None
    assert (closing.type, closing.data) == ("seed_revealed", {"seed": "s"})
    with pytest.raises(GameError, match="over"):
        steps.decide_events(engine, after, seat, command, "s", version)
