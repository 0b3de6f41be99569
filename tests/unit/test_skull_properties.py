"""Skull play-outs for 3-12 players: random legal games checked at every step."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from functools import reduce
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.games import skull
from shared.games.rng import Rng
from shared.games.skull import FLOWER, SKULL, DiscLost, DiscPlaced, DiscsShuffled, State
from tests.unit import playouts
from tests.unit.playouts import Step

MAX_ACTIONS = 5_000  # far above the longest possible game (at most ~5n rounds)
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

games = st.tuples(
    st.integers(min_value=3, max_value=12),
    st.sampled_from(["czech", "english"]),
    st.randoms(use_true_random=False),
)


def playout(seats: int, rule: str, rnd: random.Random) -> tuple[list[Any], list[Step], State]:
    """A whole game through the play-out driver: every command drawn uniformly from
    ``legal_commands`` with ``rnd`` (bids weighted down so that placements and passes also
    happen); the events (setup first), the moves and the final state."""

    def policy(state: State, seat: int) -> Any:
        assert skull.to_act(state) == (seat,)
        options = skull.legal_commands(state, seat)
        assert options, f"seat {seat} must act but has no legal command"
        others = [c for c in options if not isinstance(c, skull.Bid)]
        pool = others if others and rnd.random() < 0.6 else options
        return rnd.choice(pool)

    seed = f"skull-{rnd.getrandbits(32)}"
    game = playouts.playout(
        "skull", seats, {"next_starter": rule}, seed, policy=policy, max_actions=MAX_ACTIONS
    )
    return game.events, game.steps, game.final


def assert_conserved(state: State) -> None:
    for p in state.players:
        hand = Counter({FLOWER: p.in_hand(FLOWER), SKULL: p.in_hand(SKULL)})
        assert min(hand.values()) >= 0
        total = hand + Counter(p.stack) + Counter(p.lost)
        assert total == Counter({FLOWER: 3, SKULL: 1})
        assert 0 <= p.wins <= 2


def assert_known_facts_hold(state: State) -> None:
    """What every seat is said to know is true: ``known_skull`` matches the skull count."""
    for p in state.players:
        if p.known_skull is not None:
            assert p.skulls == int(p.known_skull), p


def flips_by_seat(state: State) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for s, d in state.flipped:
        out.setdefault(s, []).append(d)
    return out


def assert_determinized(full: State, state: State, viewer: int) -> None:
    """``full`` (determinized from ``viewer``'s view of ``state``) contradicts nothing ``viewer``
    knows: its own discs, the public facts, this round's turned-up faces where they lie."""
    assert_conserved(full)
    assert_known_facts_hold(full)
    assert full.players[viewer] == state.players[viewer]
    for other, (p, q) in enumerate(zip(full.players, state.players, strict=True)):
        assert (p.discs, len(p.stack), p.known_skull) == (q.discs, len(q.stack), q.known_skull)
        faces = flips_by_seat(state).get(other, [])
        if state.phase == "flipping" and faces:
            assert list(reversed(p.stack))[: len(faces)] == faces, (other, p.stack, faces)
    assert len(full.shuffled) == len(state.shuffled)
    if full.shuffled:  # the blind-pick order holds exactly the challenger's dealt discs
        c = full.players[state.challenger]
        assert sorted(full.shuffled) == sorted([FLOWER] * c.flowers + [SKULL] * c.skulls)


@SETTINGS
@given(games)
def test_discs_are_conserved_win_markers_capped_and_games_end(game: Any) -> None:
    seats, rule, rnd = game
    _, steps, final = playout(seats, rule, rnd)
    for step in steps:
        assert_conserved(step.state)
        assert_known_facts_hold(step.state)
        assert sum(p.wins == 2 for p in step.state.players) == 0  # 2 wins end the game
    assert_conserved(final)
    assert_known_facts_hold(final)
    out = skull.outcome(final)
    assert out is not None, "the game did not end"
    assert len(out["winners"]) == 1 and out["draw"] is False
    (winner,) = out["winners"]
    alive = [s for s, p in enumerate(final.players) if not p.eliminated]
    assert out["scores"][winner] == 2 or alive == [winner]
    assert sum(w == 2 for w in out["scores"]) <= 1
    assert out["ranks"][winner] == 1 and sorted(out["ranks"])[1] > 1


@SETTINGS
@given(games)
def test_replay_equals_live_state_also_through_json(game: Any) -> None:
    seats, rule, rnd = game
    events, steps, final = playout(seats, rule, rnd)
    assert reduce(skull.evolve, events, None) == final
    docs = json.loads(json.dumps([skull.event_to_json(e) for e in events]))
    read = [skull.event_from_json(d) for d in docs]
    assert read == events
    assert reduce(skull.evolve, read, None) == final
    for step in steps:
        assert skull.parse_command(skull.command_to_json(step.command)) == step.command


def perturb(state: State, other: int, rnd: random.Random) -> State:
    """``state`` with ``other``'s hidden information changed whenever it has any: a face-down
    disc swapped with a different one (in hand or face down), or, when this round's flips do
    not pin it down and no one can deduce whether it owns a skull (``known_skull`` None), a
    skull turned into a flower (or back) with what it lost adjusted; and the blind-pick order,
    hidden from everyone, reversed."""
    p = state.players[other]
    up = sum(1 for s, _ in state.flipped if s == other) if p.stack else 0
    down = list(p.stack[: len(p.stack) - up])
    hand = [FLOWER] * p.in_hand(FLOWER) + [SKULL] * p.in_hand(SKULL)
    pool = down + hand
    flowers, skulls, lost = p.flowers, p.skulls, list(p.lost)
    free = (
        not any(s == other for s, _ in state.flipped) and 0 < p.discs < 4 and p.known_skull is None
    )
    pairs = [
        (i, j) for i in range(len(down)) for j in range(i + 1, len(pool)) if pool[i] != pool[j]
    ]
    if free and (not pairs or rnd.random() < 0.5):
        k = rnd.randrange(len(pool))
        if pool[k] == SKULL:
            pool[k], lost[lost.index(FLOWER)] = FLOWER, SKULL
            flowers, skulls = flowers + 1, skulls - 1
        elif skulls == 0:
            pool[k], lost[lost.index(SKULL)] = SKULL, FLOWER
            flowers, skulls = flowers - 1, 1
        else:  # the skull is elsewhere: give up one flower for the lost skull's place
            pool[pool.index(SKULL)] = FLOWER
            lost[lost.index(FLOWER)] = SKULL
            flowers, skulls = flowers + 1, 0
    elif pairs:
        i, j = rnd.choice(pairs)
        pool[i], pool[j] = pool[j], pool[i]
    stack = (*pool[: len(down)], *p.stack[len(down) :])
    changed = dataclasses.replace(
        p, flowers=flowers, skulls=skulls, stack=stack, lost=tuple(reversed(lost))
    )
    players = list(state.players)
    players[other] = changed
    return dataclasses.replace(state, players=tuple(players), shuffled=state.shuffled[::-1])


@SETTINGS
@given(games)
def test_views_leak_nothing_and_determinize_matches_the_view(game: Any) -> None:
    seats, rule, rnd = game
    _, steps, final = playout(seats, rule, rnd)
    changed = 0
    for i, state in enumerate([*(step.state for step in steps), final]):
        viewer = rnd.randrange(seats)
        other = rnd.choice([s for s in range(seats) if s != viewer])
        twin = perturb(state, other, rnd)
        assert_conserved(twin)
        assert_known_facts_hold(twin)
        changed += twin != state
        assert skull.view(twin, viewer) == skull.view(state, viewer)
        assert skull.view(twin, None) == skull.view(state, None)
        assert skull.to_act(twin) == skull.to_act(state)
        v = skull.view(state, viewer)
        full = skull.determinize(v, viewer, Rng("det", str(i)))
        assert_determinized(full, state, viewer)
        assert skull.view(full, viewer) == v
        json.dumps(v)
    assert changed > 0  # the perturbation really hid something


@SETTINGS
@given(games)
def test_a_view_follows_from_the_events_as_that_seat_saw_them(game: Any) -> None:
    """Replaying the redacted events a seat (or a spectator) was sent gives the same view at
    every step, so nothing in it (``known_skull`` included) rests on a face the seat never saw."""
    seats, rule, rnd = game
    events, steps, final = playout(seats, rule, rnd)
    viewer = rnd.choice([None, *range(seats)])
    seen = [skull.event_from_json(skull.redact(e, viewer)) for e in events]
    opening = len(events) - sum(len(step.events) for step in steps)
    replayed = reduce(skull.evolve, seen[:opening], None)
    at = opening
    for step in steps:
        assert skull.view(replayed, viewer) == skull.view(step.state, viewer)
        replayed = reduce(skull.evolve, seen[at : at + len(step.events)], replayed)
        at += len(step.events)
    assert skull.view(replayed, viewer) == skull.view(final, viewer)


@SETTINGS
@given(games)
def test_redacted_events_hide_hidden_faces(game: Any) -> None:
    seats, rule, rnd = game
    events, _, _ = playout(seats, rule, rnd)
    for event in events:
        for seat in [None, *range(seats)]:
            doc = skull.redact(event, seat)
            assert doc is not None and doc["type"] == event.TYPE
            if isinstance(event, DiscPlaced | DiscLost) and event.seat != seat:
                assert doc["data"]["disc"] is None
            elif isinstance(event, DiscsShuffled):
                assert doc["data"]["order"] is None
            else:
                assert doc == skull.event_to_json(event)


@SETTINGS
@given(games)
def test_only_the_seat_to_act_has_commands_and_each_listed_one_is_accepted(game: Any) -> None:
    seats, rule, rnd = game
    _, steps, _ = playout(seats, rule, rnd)
    for step in steps[:: max(1, len(steps) // 15)]:
        state = step.state
        (actor,) = skull.to_act(state)
        for seat in range(seats):
            if seat != actor:
                assert skull.legal_commands(state, seat) == []
        for command in skull.legal_commands(state, actor):
            events = skull.decide(state, actor, command, Rng("any", "v0"))
            assert events
            reduce(skull.evolve, events, state)


def test_play_outs_cover_every_event_type() -> None:
    seen: set[str] = set()
    rnd = random.Random(7)
    for i in range(40):
        events, _, _ = playout(3 + i % 10, ("czech", "english")[i % 2], rnd)
        seen |= {e.TYPE for e in events}
    assert seen == set(skull.EVENTS)


def test_play_outs_reach_every_kind_of_public_knowledge_and_determinize_holds_there() -> None:
    """Over several rounds, players with fewer than 4 discs are known to hold their skull, known
    not to, and unknown; determinize agrees with every seat's view in such late states."""
    kinds: set[bool | None] = set()
    late = 0
    rnd = random.Random(11)
    for i in range(20):
        _, steps, _ = playout(3 + i % 6, ("czech", "english")[i % 2], rnd)
        for k, step in enumerate(steps):
            state = step.state
            kinds |= {p.known_skull for p in state.players if 0 < p.discs < 4}
            if state.round >= 3 and k % 7 == 0:
                late += 1
                viewer = k % state.seats
                v = skull.view(state, viewer)
                full = skull.determinize(v, viewer, Rng("late", f"{i}-{k}"))
                assert_determinized(full, state, viewer)
                assert skull.view(full, viewer) == v
    assert kinds == {True, False, None}
    assert late > 50
