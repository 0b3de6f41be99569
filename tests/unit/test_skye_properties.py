"""Isle of Skye property tests: random play-outs for 2-5 players checking invariants at every
step (tile conservation, gold, secrecy of views, legal bot commands), then replay and JSON."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shared.games.skye as skye
from shared.app import playout as driver
from shared.games.base import replay
from shared.games.rng import Rng
from shared.games.skye import messages as m
from shared.games.skye.engine import random_prices, tile_locations
from shared.games.skye.state import State
from tests.unit import playouts

SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


def perturb_hidden(state: State, viewer: int | None, rnd: random.Random) -> State:
    """``state`` with everything ``viewer`` cannot know changed: other seats' unrevealed axe
    and prices (within the same total gold), and the bag's order."""
    s = replace(state, bag=tuple(reversed(state.bag)))
    if state.phase != "prices" or state.revealed:
        return s
    for seat, p in enumerate(state.players):
        if seat == viewer or not p.prices_set or not p.drawn:
            continue
        total = p.gold + p.staked
        guess = random_prices(list(p.drawn), total, rnd)
        offer = tuple((t, guess["prices"][t]) for t in p.drawn if t in guess["prices"])
        s = s.with_player(
            seat,
            discard=guess["discard"],
            offer=offer,
            gold=total - sum(v for _, v in offer),
        )
    return s


def check_cheap(state: State) -> None:
    """Invariants checked after every command."""
    tile_locations(state)  # every landscape tile in exactly one place
    for p in state.players:
        assert p.gold >= 0
        assert all(price >= 1 for _, price in p.offer)
    if state.phase != "game_over":
        assert skye.to_act(state), "someone must act"


def check_views(state: State, rnd: random.Random) -> None:
    """Views: JSON-ready, blind to hidden information, and determinize agrees with them."""
    for viewer in (*range(state.seats), None):
        v = skye.view(state, viewer)
        assert skye.view(perturb_hidden(state, viewer, rnd), viewer) == v
        json.dumps(v)  # JSON-ready
        if viewer is not None:
            assert skye.view(skye.determinize(v, viewer, Rng("det")), viewer) == v


def play(seats: int, seed: int, variant: bool) -> tuple[State, list[Any]]:
    """A game of the play-out driver's random bots (commands from each seat's view), every
    move and state checked; the final state and every event."""
    rnd = random.Random(seed)
    game = playouts.playout("skye", seats, {"advanced_variant": variant}, f"skye-{seed}")
    for step in game.steps:
        before, seat, cmd = step.state, step.seat, step.command
        assert seat in skye.to_act(before)
        if before.phase != "prices":
            assert cmd in skye.legal_commands(before, seat)
        check_cheap(before)
    states = game.states[:-1]
    # Check a sample of the states visited (all of them would be slow); always the last.
    check_cheap(game.final)
    for s in [*states[::3], game.final]:
        check_views(s, rnd)
    return game.final, game.events


@SETTINGS
@given(seats=st.integers(2, 5), seed=st.integers(0, 2**31), variant=st.booleans())
def test_random_playouts(seats: int, seed: int, variant: bool) -> None:
    variant = variant and seats <= 3
    state, events = play(seats, seed, variant)
    out = skye.outcome(state)
    assert out is not None
    assert out["scores"] == [p.score for p in state.players]
    assert state.round == (5 if seats == 5 else 6)
    # Replay (a fold of the events) gives the live state; so does replay through JSON.
    assert replay(skye, events) == state
    docs = [json.loads(json.dumps(skye.event_to_json(e))) for e in events]
    back = [skye.event_from_json(d) for d in docs]
    assert back == events
    assert replay(skye, back) == state
    # Every event type seen round-trips; prices stay hidden from the other seats until the
    # reveal.
    for e in events:
        for viewer in (*range(seats), None):
            r = skye.redact(e, viewer)
            assert r is not None
            if isinstance(e, m.PricesSet) and viewer != e.seat:
                assert r == {"type": "prices_set", "data": {"seat": e.seat}}
    # Score = rounds + scrolls + gold.
    for p in state.players:
        assert p.score == (
            sum(v for r in p.round_points for _, v in r)
            + sum(v for _, v in p.scroll_points)
            + p.gold_points
        )


CHECKED_MOVES = 30  # each checked move folds every event so far


@SETTINGS
@given(seats=st.integers(2, 5), seed=st.integers(0, 2**31))
def test_decide_does_not_mutate(seats: int, seed: int) -> None:
    secret = f"skye-{seed}"
    # The driver's setup (label "setup"), then each move's events as the driver makes them.
    events = skye.setup(seats, skye.parse_options(seats, {}), Rng(secret, "setup"))
    before: list[State] = []  # the state before each of the first moves, folded anew
    moves = 0

    def policy(state: State, seat: int) -> None:
        if len(before) < CHECKED_MOVES:
            # Folded from copies of the events: evolve may hand back the very state object it
            # folded before, and comparing a state with itself would prove nothing.
            copy = replay(skye, [skye.event_from_json(skye.event_to_json(e)) for e in events])
            assert copy is not state
            before.append(copy)
        return None  # the seat's bot picks the command, from its view

    def on_step(step: playouts.Step) -> None:
        nonlocal moves
        if moves < len(before):
            assert step.state == before[moves]  # deciding left the state as it was
        moves += 1
        events.extend(step.events)

    playouts.playout("skye", seats, {}, secret, policy=policy, on_step=on_step)
    assert len(before) == CHECKED_MOVES and moves > CHECKED_MOVES


def test_same_seed_same_game() -> None:
    bots = [{"bot": "random"}] * 4
    a = driver.play("skye", bots, {}, "skye-7")
    b = driver.play("skye", bots, {}, "skye-7")
    assert a.envelopes == b.envelopes and a.commands == b.commands
    c = driver.play("skye", bots, {}, "skye-7", keep_envelopes=False)  # the fast path
    assert c.record.state.phase == "game_over"
    assert (c.record.state, c.actions) == (a.record.state, a.actions)
