"""One conformance suite for every registered game (pgx's ``api_test.py`` and OpenSpiel's
consistency tests are the models): whatever a game is, these hold.

* random play-outs through the service's driver never crash and end;
* the kernel and the pure face agree at every step: the kernel's ``apply`` (with a recorder)
  gives the events ``decide`` gives, folding them one ``evolve`` at a time (a thaw and a
  freeze each) gives the state the kernel holds, and the kernel's read-only rules
  (``to_act``, ``legal_commands``, ``outcome``) answer as the engine's do on the frozen state;
* a kernel's ``copy`` shares nothing mutable with its original;
* replay reproduces the state: ``evolve_all`` of every event, the fold, and the fold of the
  events through their JSON are the live state;
* every listed legal command is accepted;
* every view (each seat's and the public one) holds only fields its spec declares (or the
  service's own), each matching its declared schema, in a declared phase;
* a seat's view is blind to what it cannot know: the view of any state ``determinize`` deals
  from it is the same view (hidden facts resampled, the view unchanged).

A game's own rule scenarios and deeper leak tests stay in its own tests.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import reduce
from typing import Any

import jsonschema_rs
import pytest

from services.gateway import view_schemas
from shared import games
from shared.bots import ismcts
from shared.games.rng import Rng
from tests.unit.playouts import Playout, playout

# Games written only for the tests (``tests/games/``): hosted while this module collects and
# runs, so the suite holds for them too and no other module's tests see them.
TEST_GAMES = {"kuhn": "tests.games.kuhn"}


def _host_test_games() -> None:
    for name, module in TEST_GAMES.items():
        games.register(name, module)


def _drop_test_games() -> None:
    for name in TEST_GAMES:
        games.unregister(name)


@pytest.fixture(autouse=True, scope="module")
def _test_games() -> Iterator[None]:
    _host_test_games()
    yield
    _drop_test_games()


def _cases() -> list[tuple[str, int, str]]:
    out = []
    _host_test_games()
    try:
        for name in games.names():
            engine = games.get(name)
            for seats in sorted({engine.MIN_SEATS, min(engine.MAX_SEATS, engine.MIN_SEATS + 2)}):
                out.append((name, seats, f"conformance-{name}-{seats}"))
    finally:
        _drop_test_games()
    return out


CASES = _cases()
_played: dict[tuple[str, int, str], Playout] = {}


def _game(case: tuple[str, int, str]) -> Playout:
    if case not in _played:
        _played[case] = playout(case[0], case[1], {}, case[2])
    return _played[case]


def _kernel(name: str) -> Any:
    engine: Any = games.get(name)
    kernel = getattr(engine, "KERNEL", None)
    if kernel is None:  # the last games being converted to kernels (issue 26)
        pytest.skip(f"{name} has no kernel yet")
    return engine, kernel


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_random_playouts_end_with_an_outcome(case: tuple[str, int, str]) -> None:
    played = _game(case)
    engine = games.get(case[0])
    result = engine.outcome(played.final)
    assert result is not None
    assert {"ranks", "scores", "winners"} <= set(result)
    assert len(result["scores"]) == case[1]
    assert result["winners"] and all(result["ranks"][w] == 1 for w in result["winners"])
    assert len(played.steps) > case[1]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_the_kernel_and_the_pure_face_agree_at_every_step(case: tuple[str, int, str]) -> None:
    engine, kernel_cls = _kernel(case[0])
    for i, step in enumerate(_game(case).steps):
        kernel = kernel_cls.thaw(step.state)
        assert kernel.freeze() == step.state
        assert kernel.to_act() == tuple(engine.to_act(step.state))
        assert kernel.legal_commands(step.seat) == engine.legal_commands(step.state, step.seat)
        assert kernel.outcome() is None
        events: list[Any] = []

        def emit(event: Any, kernel: Any = kernel, events: list[Any] = events) -> None:
            kernel.on(event)
            events.append(event)

        kernel.apply(step.seat, step.command, Rng(case[2], f"k{i}"), emit)
        decided = engine.decide(step.state, step.seat, step.command, Rng(case[2], f"k{i}"))
        assert events == decided
        folded = reduce(engine.evolve, decided, step.state)
        assert kernel.freeze() == folded
        assert engine.outcome(folded) == kernel.outcome()
        assert engine.to_act(folded) == kernel.to_act()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_a_copy_shares_nothing_with_its_original(case: tuple[str, int, str]) -> None:
    engine, kernel_cls = _kernel(case[0])
    steps = _game(case).steps
    for step in steps[:: max(1, len(steps) // 12)]:
        original = kernel_cls.thaw(step.state)
        twin = original.copy()
        twin.apply(step.seat, step.command, Rng(case[2], "copy"), twin.on)
        # Play the copy on to the end: nothing it does may reach the original.
        ismcts.kernel_playout(engine, twin, random.Random(7))
        assert original.freeze() == step.state


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_replay_reproduces_the_state(case: tuple[str, int, str]) -> None:
    played = _game(case)
    engine: Any = games.get(case[0])
    events = played.events
    assert reduce(engine.evolve, events, None) == played.final
    evolve_all = getattr(engine, "evolve_all", None)
    if evolve_all is not None:
        assert evolve_all(None, events) == played.final
        half = len(events) // 2
        assert evolve_all(evolve_all(None, events[:half]), events[half:]) == played.final
    through_json = [engine.event_from_json(engine.event_to_json(e)) for e in events]
    assert through_json == events
    assert reduce(engine.evolve, through_json, None) == played.final


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_every_listed_command_is_accepted(case: tuple[str, int, str]) -> None:
    engine: Any = games.get(case[0])
    steps = _game(case).steps
    checked = 0
    for step in steps[:: max(1, len(steps) // 20)]:
        for seat in engine.to_act(step.state):
            for command in engine.legal_commands(step.state, seat):
                if getattr(command, "template", False) is True:
                    continue  # a listing of commands too many to list (Skye's prices)
                engine.decide(step.state, seat, command, Rng(case[2], "legal"))
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_a_seats_view_is_blind_to_what_determinize_resamples(case: tuple[str, int, str]) -> None:
    engine: Any = games.get(case[0])
    steps = _game(case).steps
    checked = 0
    for i, step in enumerate(steps[:: max(1, len(steps) // 10)]):
        for seat in range(case[1]):
            view = engine.view(step.state, seat)
            for k in range(2):
                dealt = engine.determinize(view, seat, Rng(case[2], f"det{i}:{seat}:{k}"))
                assert engine.view(dealt, seat) == view
                checked += 1
    assert checked > 0


# Fields an engine's view may hold that the service's view schema declares, not the game's.
SERVICE_FIELDS = {"game", "phase", "seat", "to_act", "legal_commands", "outcome", "scores"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_views_match_the_schema_their_spec_declares(case: tuple[str, int, str]) -> None:
    engine: Any = games.get(case[0])
    spec = games.spec(case[0])
    validators = {
        name: jsonschema_rs.Draft7Validator(view_schemas.to_json_schema(schema))
        for name, schema in spec.view_fields.items()
    }
    steps = _game(case).steps
    states = [s.state for s in steps[:: max(1, len(steps) // 15)]] + [_game(case).final]
    for state in states:
        for seat in [None, *range(case[1])]:
            view = engine.view(state, seat)
            assert view["phase"] in spec.phases
            unknown = set(view) - set(validators) - SERVICE_FIELDS
            assert not unknown, f"undeclared view fields {sorted(unknown)}"
            for name, value in view.items():
                if name in validators:
                    errors = [e.message for e in validators[name].iter_errors(value)]
                    assert not errors, (name, errors[:3])
