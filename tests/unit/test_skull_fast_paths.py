"""Skull's fast paths give what the plain computation gives.

The generated ``replace`` against ``dataclasses.replace``; the command JSON fast path against
``base.command_json``; shared (cached) commands and events against fresh ones; and callers own
the lists and dicts they get, and the states they hold never change.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from typing import Any

import pytest

from shared.games import skull
from shared.games.base import command_json, replay
from shared.games.errors import GameError
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
from shared.games.skull.kernel import SkullKernel, _after


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


# --- the kernel a freeze keeps (issue 26's speed: a thaw of the state just frozen) -----------


def _slots(kernel: SkullKernel) -> dict[str, Any]:
    return {name: getattr(kernel, name) for name in SkullKernel.__slots__}


def _python_calls(fn: Any) -> list[str]:
    """The names of the Python functions ``fn()`` calls (``fn`` itself first)."""
    names: list[str] = []

    def profiler(frame: Any, event: str, _arg: Any) -> None:
        if event == "call":
            names.append(frame.f_code.co_name)

    sys.setprofile(profiler)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names


def test_a_state_just_frozen_thaws_without_a_rebuild() -> None:
    # The play-out driver, the derived evolve and the search thaw the state they froze a
    # moment before: that thaw takes the kept kernel instead of a pass over the players (a
    # rebuild runs a comprehension per column: eight Python calls on this interpreter).
    state = random_states(4, "czech", 3)[30]
    kernel = SkullKernel.thaw(state)
    frozen = kernel.freeze()
    calls = _python_calls(lambda: SkullKernel.thaw(frozen))
    assert "<listcomp>" not in calls, calls
    # A state freeze did not just make is rebuilt (and equals what it was).
    rebuilt = dataclasses.replace(frozen)
    assert "<listcomp>" in _python_calls(lambda: SkullKernel.thaw(rebuilt))


def test_a_kept_kernel_is_the_position_of_its_state_and_goes_to_one_thaw() -> None:
    for seats, rule, seed in [(3, "czech", 4), (5, "english", 5), (12, "czech", 6)]:
        rnd = random.Random(seed)
        for state in random_states(seats, rule, seed)[:-1]:
            kernel = SkullKernel.thaw(state)
            (seat,) = kernel.to_act()
            kernel.apply(seat, rnd.choice(kernel.legal_commands(seat)), Rng("k"), kernel.on)
            frozen = kernel.freeze()
            # The kernel goes on changing after its freeze: the kept one does not.
            if kernel.to_act():
                (seat,) = kernel.to_act()
                kernel.apply(seat, rnd.choice(kernel.legal_commands(seat)), Rng("k2"), kernel.on)
            kept = SkullKernel.thaw(frozen)
            rebuilt = SkullKernel.thaw(dataclasses.replace(frozen))
            assert _slots(kept) == _slots(rebuilt)
            assert kept.freeze() == frozen
            # Taken once: a second thaw of the same state is another kernel.
            again = SkullKernel.thaw(frozen)
            assert again is not kept and _slots(again) == _slots(rebuilt)


def test_the_next_seat_table_is_the_next_seat_still_in() -> None:
    rnd = random.Random(7)
    for _ in range(500):
        alive = [rnd.random() < 0.6 for _ in range(rnd.randint(1, 12))]
        after = _after(alive)
        n = len(alive)
        for seat in range(n):
            later = [(seat + k) % n for k in range(1, n + 1) if alive[(seat + k) % n]]
            assert after[seat] == (later[0] if later else seat)


def test_a_subclass_of_a_command_type_is_applied_by_that_type_s_rule() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class MarkedPlace(Place):
        pass

    state: State = replay(skull, skull.setup(4, {"first_player": 1}, Rng("s")))
    assert skull.decide(state, 1, MarkedPlace(disc=FLOWER), Rng("x")) == skull.decide(
        state, 1, Place(disc=FLOWER), Rng("x")
    )
    with pytest.raises(GameError) as caught:
        skull.decide(state, 1, object(), Rng("x"))
    assert caught.value.code == "command/invalid"
