"""The fast Skull simulator (``shared.sim.skull``) against the pure engine.

Random games are played with the engine (``Rng(secret)`` for setup, ``Rng(secret, f"v{n}")``
per action, as the service draws); the simulator follows every command and must agree at each
step on ``to_act``, ``legal_commands``, ``outcome`` and, through ``to_state``, on the whole
state, also when rebuilt with ``from_state`` mid-game. Its play-outs are checked move by move
(a scripted ``randbelow``: index ``r`` must be the engine's ``legal_commands[r]``), at the move
cap, and in distribution against ``ismcts.random_playout``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import random
from collections import Counter
from collections.abc import Callable, Iterator
from functools import reduce
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import projections
from shared.bots import ismcts
from shared.games import skull
from shared.games.errors import GameError
from shared.games.rng import Rng
from shared.games.skull import (
    FLOWER,
    SKULL,
    Bid,
    ChooseStarter,
    Discard,
    Flip,
    Pass,
    PickDisc,
    Place,
    State,
)
from shared.sim import skull as sim
from shared.sim.skull import Sim

SETTINGS = settings(max_examples=40, deadline=None)
MAX_ACTIONS = 5_000  # far above the longest game

# Mostly the one-box tables, and some of the combined-box ones.
seat_counts = st.integers(min_value=3, max_value=6) | st.integers(min_value=7, max_value=12)
rules = st.sampled_from(skull.NEXT_STARTER_RULES)
seeds = st.integers(min_value=0, max_value=2**32 - 1)

# Every command shape, legal or not somewhere: what a confused client could send.
ANY_COMMANDS = [
    *(Place(disc=d) for d in (FLOWER, SKULL)),
    *(Bid(count=c) for c in range(0, 50)),
    Pass(),
    *(Flip(seat=s) for s in range(-1, 13)),
    *(PickDisc(index=i) for i in range(-1, 5)),
    *(Discard(disc=d) for d in (FLOWER, SKULL)),
    *(ChooseStarter(seat=s) for s in range(-1, 13)),
    "not a command",
]


def start(seats: int, rule: str, secret: str) -> State:
    state: State = reduce(
        skull.evolve, skull.setup(seats, {"next_starter": rule}, Rng(secret)), None
    )
    return state


def pick(state: State, seat: int, rnd: random.Random) -> Any:
    """A legal command: uniform, or half the time uniform among the non-bids, so that games
    also see full stacks, long biddings and eliminations."""
    legal = skull.legal_commands(state, seat)
    others = [c for c in legal if not isinstance(c, Bid)]
    return rnd.choice(others if others and rnd.random() < 0.5 else legal)


def game(seats: int, rule: str, seed: int) -> Iterator[tuple[State, int, Any, Callable[[], Rng]]]:
    """The states of one random engine game with, before each move, the seat, its command
    and a maker of that action's ``Rng`` (each call a fresh copy of the stream); the final
    state comes last, with seat -1."""
    rnd = random.Random(seed)
    secret = f"sim-{seed}"
    state = start(seats, rule, secret)
    for version in range(MAX_ACTIONS):
        acting = skull.to_act(state)
        if not acting:
            yield state, -1, None, functools.partial(Rng, secret, "over")
            return
        seat = acting[0]
        command = pick(state, seat, rnd)
        make_rng = functools.partial(Rng, secret, f"v{version}")
        yield state, seat, command, make_rng
        for event in skull.decide(state, seat, command, make_rng()):
            state = skull.evolve(state, event)
    raise AssertionError("the game did not end")


def assert_same(sim_: Sim, state: State) -> None:
    assert sim_.to_state() == state
    assert sim_.to_act() == skull.to_act(state)
    assert sim_.outcome() == skull.outcome(state)
    for seat in range(state.seats):
        assert sim_.legal_commands(seat) == skull.legal_commands(state, seat), seat


def states_of(seats: int, rule: str, seed: int) -> list[State]:
    return [state for state, _, _, _ in game(seats, rule, seed)]


def after(state: State, seat: int, command: Any, rng: Any = None) -> State:
    """The engine's state after ``command`` (drawing from ``rng``, a fixed stream if None)."""
    events = skull.decide(state, seat, command, rng or Rng("shuffle"))
    return reduce(skull.evolve, events, state)


# --- the simulator follows the engine ----------------------------------------------------------


@SETTINGS
@given(seat_counts, rules, seeds)
def test_apply_follows_the_engine_at_every_step(seats: int, rule: str, seed: int) -> None:
    rnd = random.Random(seed ^ 0x5EED)
    followed: Sim | None = None
    for state, seat, command, make_rng in game(seats, rule, seed):
        if followed is None:
            followed = Sim.from_state(state)
        assert_same(followed, state)
        if seat < 0:
            break
        if rnd.random() < 0.1:  # a fresh one mid-game must agree, now and after the move
            fresh = Sim.from_state(state)
            assert_same(fresh, state)
            fresh.apply(seat, command, make_rng())
            assert fresh.to_state() == after(state, seat, command, make_rng())
        followed.apply(seat, command, make_rng())
    assert followed is not None and followed.outcome() is not None


@SETTINGS
@given(st.integers(min_value=3, max_value=6), rules, seeds)
def test_illegal_commands_raise_the_engines_error_and_change_nothing(
    seats: int, rule: str, seed: int
) -> None:
    rnd = random.Random(seed)
    tried = 0
    for state, _, _, make_rng in game(seats, rule, seed):
        for _ in range(3):
            command = rnd.choice(ANY_COMMANDS)
            seat = rnd.randrange(-1, seats + 1)
            try:
                skull.decide(state, seat, command, make_rng())
            except GameError as error:
                expected = (error.code, error.rule, str(error))
            else:
                continue  # legal: the stepping test covers it
            s = Sim.from_state(state)
            with pytest.raises(GameError) as raised:
                s.apply(seat, command, make_rng())
            assert (raised.value.code, raised.value.rule, str(raised.value)) == expected
            assert s.to_state() == state
            tried += 1
    assert tried > 0


# --- play-outs --------------------------------------------------------------------------------


class Scripted:
    """A ``randbelow`` that answers ``r`` once (recording the ``k`` it was asked for), then
    fails: one play-out move with a chosen index."""

    def __init__(self, r: int) -> None:
        self.r = r
        self.asked: list[int] = []

    def __call__(self, k: int) -> int:
        assert not self.asked, "a move drew twice"
        self.asked.append(k)
        assert 0 <= self.r < k, (self.r, k)
        return self.r


def unshuffled(state: State) -> State:
    """``state`` without the blind-pick order: play-outs draw the lost disc without one."""
    return dataclasses.replace(state, shuffled=())


def assert_playout_move_is_uniform(state: State) -> None:
    """One play-out move from ``state`` with each index ``r``: the engine's state after
    ``legal_commands[r]`` (a blind pick: after some pick of that face, each face as often as
    the shuffled discs hold it), and the draw is among exactly that many."""
    (seat,) = skull.to_act(state)
    legal = skull.legal_commands(state, seat)
    results = []
    for r in range(max(len(legal), 1)):
        s = Sim.from_state(state)
        draw = Scripted(r)
        s.play(draw, 1)
        if not draw.asked:  # a move with no choice
            assert len(legal) == 1
            assert s.to_state() == unshuffled(after(state, seat, legal[0]))
            return
        assert draw.asked == [len(legal)]
        results.append(s.to_state())
    if state.phase == skull.PENALTY and state.shuffled:
        by_face = {state.shuffled[i]: after(state, seat, c) for i, c in enumerate(legal)}
        assert all(r in by_face.values() for r in results)
        faces = Counter(face for r in results for face, e in by_face.items() if e == r)
        assert faces == Counter(state.shuffled)
    else:
        assert results == [unshuffled(after(state, seat, c)) for c in legal]


@settings(max_examples=20, deadline=None)
@given(seat_counts, rules, seeds)
def test_each_playout_move_is_a_uniform_legal_command(seats: int, rule: str, seed: int) -> None:
    rnd = random.Random(seed)
    for state in states_of(seats, rule, seed):
        if skull.to_act(state) and (state.phase != skull.PLACING or rnd.random() < 0.3):
            assert_playout_move_is_uniform(state)


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=3, max_value=6), rules, seeds)
def test_playout_moves_are_uniform_from_determinized_states(
    seats: int, rule: str, seed: int
) -> None:
    rnd = random.Random(seed)
    for i, state in enumerate(states_of(seats, rule, seed)):
        if skull.to_act(state) and rnd.random() < 0.3:
            viewer = rnd.randrange(seats)
            full = skull.determinize(skull.view(state, viewer), viewer, Rng("det", str(i)))
            assert_same(Sim.from_state(full), full)
            assert_playout_move_is_uniform(full)


def assert_rewards(values: list[float], state: State) -> None:
    """A valid reward vector from ``state``: one per seat, a win for a seat still in (or the
    capped score-rank shares, which sum to half the seats)."""
    assert len(values) == state.seats
    assert all(0.0 <= v <= 1.0 for v in values)
    if sorted(values)[:-1] == [0.0] * (state.seats - 1) and max(values) == 1.0:
        winner = values.index(1.0)
        assert not state.players[winner].eliminated
        if skull.outcome(state) is not None:
            assert state.winners == (winner,)
    else:
        assert sum(values) == pytest.approx(state.seats / 2)


@settings(max_examples=15, deadline=None)
@given(seat_counts, rules, seeds)
def test_playouts_from_midgame_and_determinized_states_give_rewards(
    seats: int, rule: str, seed: int
) -> None:
    rnd = random.Random(seed)
    for i, state in enumerate(states_of(seats, rule, seed)):
        if rnd.random() < 0.1:
            assert_rewards(sim.random_playout(state, random.Random(i)), state)
            viewer = rnd.randrange(seats)
            view = projections.game_view(skull, state, viewer)
            full = skull.determinize(view, viewer, ismcts.FastRng(random.Random(i)))
            assert_rewards(sim.playout_rollout(skull, full, random.Random(i)), full)


def test_the_move_cap_is_counted_and_scored_as_the_engine_path_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At cap 0 both paths score the start state; at cap 1 after one forced move (or a game
    already over) they agree exactly: the same moves counted, the same capped shares."""
    checked = Counter()
    for seats, rule, seed in [(4, "czech", 1), (6, "english", 2), (12, "czech", 3)]:
        for state in states_of(seats, rule, seed):
            for cap in (0, 1):
                acting = skull.to_act(state)
                if cap == 1 and acting and len(skull.legal_commands(state, acting[0])) != 1:
                    continue
                monkeypatch.setattr(ismcts, "PLAYOUT_CAP", cap)
                ours = sim.random_playout(state, random.Random(0))
                assert ours == ismcts.random_playout(skull, state, random.Random(0))
                assert Sim.from_state(state).capped_rewards() == ismcts._capped(skull, state)
                checked[cap, skull.outcome(state) is None] += 1
    assert all(checked[key] for key in [(0, True), (0, False), (1, True), (1, False)])


def test_playouts_win_as_often_as_the_engine_path() -> None:
    """Fixed seeds, 2000 play-outs each from two mid-game states: every seat's mean reward
    within 0.06 of the engine path's (about four standard deviations of the difference)."""
    for seats, rule, seed in [(4, "czech", 3), (5, "english", 4)]:
        # A round's start well into the game, with a win marker and lost discs about.
        state = next(
            s
            for s in states_of(seats, rule, seed)
            if s.round >= 4
            and s.phase == skull.PLACING
            and not any(p.stack for p in s.players)
            and any(p.wins for p in s.players)
        )
        engine = [ismcts.random_playout(skull, state, random.Random(k)) for k in range(2000)]
        ours = [sim.random_playout(state, random.Random(10**6 + k)) for k in range(2000)]
        for seat in range(seats):
            expected = sum(r[seat] for r in engine) / len(engine)
            got = sum(r[seat] for r in ours) / len(ours)
            assert abs(got - expected) <= 0.06, (seats, seat, got, expected)


def test_the_rollout_drives_a_search() -> None:
    state = states_of(4, "czech", 7)[5]
    (seat,) = skull.to_act(state)
    view = {**projections.game_view(skull, state, seat), "game": "skull"}
    result = ismcts.search(view, random.Random(1), iterations=60, rollout=sim.playout_rollout)
    assert result.command in view["legal_commands"]
    assert result.iterations == 60 and result.failed == 0


def test_the_benchmark_script_imports() -> None:
    module = importlib.import_module("benchmarks.bench_sim_skull")
    assert callable(module.main)
