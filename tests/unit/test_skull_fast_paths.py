"""Skull's fast paths give what the plain computation gives.

The generated ``replace`` against ``dataclasses.replace``; the command JSON fast path against
``base.command_json``; shared (cached) commands and events against fresh ones; and callers own
the lists and dicts they get, and the states they hold never change.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from shared.games import skull
from shared.games.base import command_json, replay
from shared.games.rng import Rng
from shared.games.skull import (
    FLOWER,
    Bid,
    ChooseStarter,
    Discard,
    DiscPlaced,
    Flip,
    Pass,
    PickDisc,
    Place,
    Player,
    State,
)


def random_states(seats: int, rule: str, seed: int) -> list[State]:
    """Every state of one random game, setup to game over."""
    rnd = random.Random(seed)
    state: State = replay(skull, skull.setup(seats, {"next_starter": rule}, Rng(str(seed))))
    states = [state]
    for version in range(5_000):
        if skull.outcome(state) is not None:
            break
        (seat,) = skull.to_act(state)
        command = rnd.choice(skull.legal_commands(state, seat))
        for event in skull.decide(state, seat, command, Rng(str(seed), f"v{version}")):
            state = skull.evolve(state, event)
        states.append(state)
    return states


@pytest.mark.parametrize("cls", [State, Player])
def test_replace_matches_dataclasses_replace(cls: type) -> None:
    state = random_states(4, "czech", 1)[20]
    obj: Any = state if cls is State else state.players[1]
    replace = skull._replace_state if cls is State else skull._replace_player
    for f in dataclasses.fields(cls):
        value = ("changed",)
        assert replace(obj, **{f.name: value}) == dataclasses.replace(obj, **{f.name: value})
    assert replace(obj) == obj and replace(obj) is not obj
    with pytest.raises(TypeError):
        replace(obj, no_such_field=1)


def test_command_json_fast_path_writes_what_the_generic_writer_writes() -> None:
    commands: list[Any] = [
        Place(disc=FLOWER),
        Bid(count=3),
        Pass(),
        Flip(seat=2),
        PickDisc(index=0),
        Discard(disc="skull"),
        ChooseStarter(seat=1),
        Place(disc=("not", "a", "face")),  # type: ignore[arg-type]  # built in code
    ]
    for command in commands:
        fast, generic = skull.command_to_json(command), command_json(command)
        assert fast == generic
        assert list(fast) == list(generic)  # same key order, so the same bytes


@pytest.mark.parametrize(("seats", "rule"), [(3, "czech"), (5, "english"), (9, "english")])
def test_evolve_never_changes_the_state_it_is_given(seats: int, rule: str) -> None:
    states = random_states(seats, rule, seats)
    before = [repr(s) for s in states]
    # Fold the same game again from each recorded state: none of them may change.
    for state in states:
        for seat in range(seats):
            for command in skull.legal_commands(state, seat):
                after = state
                for event in skull.decide(state, seat, command, Rng("again")):
                    after = skull.evolve(after, event)
    assert [repr(s) for s in states] == before


def test_callers_own_the_listings_and_views_they_get() -> None:
    states = random_states(4, "czech", 2)
    state = next(s for s in states if s.phase == "bidding")
    (seat,) = skull.to_act(state)
    listing = skull.legal_commands(state, seat)
    expected = list(listing)
    listing.clear()
    assert skull.legal_commands(state, seat) == expected
    view = skull.view(state, seat)
    view["legal_commands"][0]["count"] = -1
    view["legal_commands"].clear()
    assert skull.view(state, seat)["legal_commands"] == [command_json(c) for c in expected]


def test_shared_messages_hold_exactly_the_values_asked_for() -> None:
    state: State = replay(skull, skull.setup(4, {"first_player": 1}, Rng("s")))
    # Given seat 1's placed flower was made once (and cached), a seat sent as True (== 1)
    # still makes an event that holds True
    first, _ = skull.decide(state, 1, Place(disc=FLOWER), Rng("x"))
    placed, _ = skull.decide(state, True, Place(disc=FLOWER), Rng("x"))
    assert placed == first == DiscPlaced(seat=1, disc=FLOWER)
    assert type(first.seat) is int and type(placed.seat) is bool
