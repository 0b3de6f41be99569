"""Skull's search hooks (``shared/games/skull/search.py``, the package's ``SEARCH``).

Its ``random_rollout`` (the search's play-out until policy version 2 of Skull's ISMCTS, which
plays out as the heuristic plays: ``modelled_rollout``, tested at the end) plays uniformly
random legal commands on the kernel, drawing as the search always had for Skull (forced moves draw nothing; a blind pick draws the lost disc): each
move is checked with a scripted ``randbelow`` (index ``r`` must give the state after the
kernel's ``legal_commands[r]``), also from determinized states, at the move cap (the constants
it restates from ``ismcts`` held equal), and in distribution against ``ismcts.random_playout``.
That the rules themselves hold is the conformance suite's and the engine tests' business; that
the draws did not change, ``test_skull_kernel_pins.py``'s.
"""

from __future__ import annotations

import dataclasses
import importlib
import random
from collections import Counter
from collections.abc import Iterator
from functools import reduce
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.bots import ismcts
from shared.games import skull
from shared.games.rng import Rng
from shared.games.skull import KERNEL, SEARCH, State
from shared.games.skull.search import capped_rewards, play
from shared.match import projections

MAX_ACTIONS = 5_000  # far above the longest game

# Mostly the one-box tables, and some of the combined-box ones.
seat_counts = st.integers(min_value=3, max_value=6) | st.integers(min_value=7, max_value=12)
rules = st.sampled_from(skull.NEXT_STARTER_RULES)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def start(seats: int, rule: str, secret: str) -> State:
    state: State = reduce(
        skull.evolve, skull.setup(seats, {"next_starter": rule}, Rng(secret)), None
    )
    return state


def game(seats: int, rule: str, seed: int) -> Iterator[State]:
    """The states of one random game (uniform commands, or half the time uniform among the
    non-bids, so that games also see full stacks, long biddings and eliminations)."""
    rnd = random.Random(seed)
    secret = f"search-{seed}"
    state = start(seats, rule, secret)
    for version in range(MAX_ACTIONS):
        yield state
        acting = skull.to_act(state)
        if not acting:
            return
        legal = skull.legal_commands(state, acting[0])
        others = [c for c in legal if not isinstance(c, skull.Bid)]
        command = rnd.choice(others if others and rnd.random() < 0.5 else legal)
        state = after(state, acting[0], command, Rng(secret, f"v{version}"))
    raise AssertionError("the game did not end")


def after(state: State, seat: int, command: Any, rng: Any = None) -> State:
    """The engine's state after ``command`` (drawing from ``rng``, a fixed stream if None)."""
    events = skull.decide(state, seat, command, rng or Rng("shuffle"))
    return reduce(skull.evolve, events, state)


def unordered(state: State) -> State:
    """``state`` with the blind-pick order sorted: a play-out draws the lost disc itself, so it
    does not shuffle the challenger's discs (the order is nobody's to see)."""
    return dataclasses.replace(state, shuffled=tuple(sorted(state.shuffled)))


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


def assert_playout_move_is_uniform(state: State) -> None:
    """One play-out move from ``state`` with each index ``r``: the engine's state after
    ``legal_commands[r]`` (a blind pick: after some pick of that face, each face as often as
    the shuffled discs hold it), and the draw is among exactly that many."""
    (seat,) = skull.to_act(state)
    legal = skull.legal_commands(state, seat)
    results = []
    for r in range(max(len(legal), 1)):
        kernel = KERNEL.thaw(state)
        draw = Scripted(r)
        play(kernel, draw, 1)
        if not draw.asked:  # a move with no choice
            assert len(legal) == 1
            assert unordered(kernel.freeze()) == unordered(after(state, seat, legal[0]))
            return
        assert draw.asked == [len(legal)]
        results.append(unordered(kernel.freeze()))
    if state.phase == skull.PENALTY and state.shuffled:
        by_face = {state.shuffled[i]: after(state, seat, c) for i, c in enumerate(legal)}
        assert all(r in by_face.values() for r in results)
        faces = Counter(face for r in results for face, e in by_face.items() if e == r)
        assert faces == Counter(state.shuffled)
    else:
        assert results == [unordered(after(state, seat, c)) for c in legal]


@settings(max_examples=20, deadline=None)
@given(seat_counts, rules, seeds)
def test_each_playout_move_is_a_uniform_legal_command(seats: int, rule: str, seed: int) -> None:
    rnd = random.Random(seed)
    for state in game(seats, rule, seed):
        if skull.to_act(state) and (state.phase != skull.PLACING or rnd.random() < 0.3):
            assert_playout_move_is_uniform(state)


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=3, max_value=6), rules, seeds)
def test_playout_moves_are_uniform_from_determinized_states(
    seats: int, rule: str, seed: int
) -> None:
    rnd = random.Random(seed)
    for i, state in enumerate(game(seats, rule, seed)):
        if skull.to_act(state) and rnd.random() < 0.3:
            viewer = rnd.randrange(seats)
            full = skull.determinize(skull.view(state, viewer), viewer, Rng("det", str(i)))
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
    for i, state in enumerate(game(seats, rule, seed)):
        if rnd.random() < 0.1:
            before = repr(state)
            assert_rewards(SEARCH.random_rollout(skull, state, random.Random(i)), state)
            assert repr(state) == before  # the play-out ran on a thawed copy
            viewer = rnd.randrange(seats)
            view = projections.game_view(skull, state, viewer)
            full = skull.determinize(view, viewer, ismcts.FastRng(random.Random(i)))
            assert_rewards(SEARCH.random_rollout(skull, full, random.Random(i)), full)


def test_the_search_uses_the_hooks() -> None:
    assert ismcts.default_rollout(skull) is SEARCH.playout_rollout
    assert SEARCH.PLAYOUT_CAP == ismcts.PLAYOUT_CAP  # restated: engines may not import bots


def test_the_move_cap_is_counted_and_scored_as_the_engine_path_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At cap 0 both paths score the start state; at cap 1 after one forced move (or a game
    already over) they agree exactly: the same moves counted, the same capped shares."""
    checked: Counter[tuple[int, bool]] = Counter()
    for seats, rule, seed in [(4, "czech", 1), (6, "english", 2), (12, "czech", 3)]:
        for state in game(seats, rule, seed):
            for cap in (0, 1):
                acting = skull.to_act(state)
                if cap == 1 and acting and len(skull.legal_commands(state, acting[0])) != 1:
                    continue
                monkeypatch.setattr(ismcts, "PLAYOUT_CAP", cap)
                monkeypatch.setattr(SEARCH, "PLAYOUT_CAP", cap)
                ours = SEARCH.random_rollout(skull, state, random.Random(0))
                assert ours == ismcts.random_playout(skull, state, random.Random(0))
                wins = [p.wins for p in state.players]
                assert capped_rewards(wins) == ismcts._capped(skull, state)
                checked[cap, skull.outcome(state) is None] += 1
    assert all(checked[key] for key in [(0, True), (0, False), (1, True), (1, False)])


def test_playouts_win_as_often_as_the_plain_random_playout() -> None:
    """Fixed seeds, 2000 play-outs each from two mid-game states: every seat's mean reward
    within 0.06 of ``ismcts.random_playout``'s (about four standard deviations of the
    difference)."""
    for seats, rule, seed in [(4, "czech", 3), (5, "english", 4)]:
        # A round's start well into the game, with a win marker and lost discs about.
        state = next(
            s
            for s in game(seats, rule, seed)
            if s.round >= 4
            and s.phase == skull.PLACING
            and not any(p.stack for p in s.players)
            and any(p.wins for p in s.players)
        )
        plain = [ismcts.random_playout(skull, state, random.Random(k)) for k in range(2000)]
        ours = [SEARCH.random_rollout(skull, state, random.Random(10**6 + k)) for k in range(2000)]
        for seat in range(seats):
            expected = sum(r[seat] for r in plain) / len(plain)
            got = sum(r[seat] for r in ours) / len(ours)
            assert abs(got - expected) <= 0.06, (seats, seat, got, expected)


def test_the_rollout_drives_a_search() -> None:
    state = list(game(4, "czech", 7))[5]
    (seat,) = skull.to_act(state)
    view = {**projections.game_view(skull, state, seat), "game": "skull"}
    result = ismcts.search(view, random.Random(1), iterations=60)
    assert result.command in view["legal_commands"]
    assert result.iterations == 60 and result.failed == 0


def test_the_benchmark_script_imports() -> None:
    module = importlib.import_module("benchmarks.bench_sim_skull")
    assert callable(module.main)


# --- the modelled search (ISMCTS policy version 2) -------------------------------------------


def test_the_root_candidates_are_legal_and_lead_with_the_heuristics_choice() -> None:
    seen: Counter[str] = Counter()
    for seats, rule, seed in [(4, "czech", 11), (5, "english", 12), (3, "czech", 13)]:
        for state in game(seats, rule, seed):
            acting = skull.to_act(state)
            if not acting:
                continue
            seat = acting[0]
            view = {**projections.game_view(skull, state, seat), "game": "skull"}
            found = SEARCH.root_commands(view, random.Random(seed))
            own = skull.HEURISTIC(view, random.Random(seed))
            assert found is not None and found[0] == own
            assert all(doc in view["legal_commands"] for doc in found)
            assert len({tuple(sorted(d.items())) for d in found}) == len(found)  # distinct
            if state.phase in (skull.PLACING, skull.BIDDING):
                seen["searched"] += len(found) > 1
            else:
                assert found == [own]  # flips, penalties, the starter: the heuristic's alone
                seen["forced"] += 1
    assert seen["searched"] and seen["forced"]


@settings(max_examples=10, deadline=None)
@given(seat_counts, rules, seeds)
def test_modelled_playouts_end_with_rewards_and_leave_the_state(
    seats: int, rule: str, seed: int
) -> None:
    rnd = random.Random(seed)
    for i, state in enumerate(game(seats, rule, seed)):
        if rnd.random() < 0.1:
            before = repr(state)
            got = SEARCH.modelled_rollout(skull, state, random.Random(i))
            assert_rewards(got, state)
            assert repr(state) == before
            # The same generator plays the same game: the search is deterministic.
            assert SEARCH.modelled_rollout(skull, state, random.Random(i)) == got


def test_the_search_plays_the_heuristics_candidates_flat() -> None:
    assert SEARCH.FLAT_SEARCH is True
    assert ismcts.default_rollout(skull) is SEARCH.playout_rollout
    state = next(s for s in game(4, "czech", 7) if s.phase == skull.BIDDING)
    (seat,) = skull.to_act(state)
    view = {**projections.game_view(skull, state, seat), "game": "skull"}
    result = ismcts.search(view, random.Random(1), iterations=24)
    candidates = SEARCH.root_commands(view, random.Random(1))
    assert candidates is not None and result.command in candidates
    assert {tuple(sorted(c.items())) for c, _, _ in result.children} <= {
        tuple(sorted(c.items())) for c in candidates
    }


# --- the tell-free search (ISMCTS policy version 3) ------------------------------------------


def _twin_view(view: dict[str, Any]) -> dict[str, Any] | None:
    """``view`` with the seat's skull swapped between its stack and its hand (None when it
    cannot be): the same public position, the other private one."""
    stack, hand = list(view["stack"]), dict(view["hand"])
    if skull.SKULL in stack and hand[skull.FLOWER]:
        stack[stack.index(skull.SKULL)] = skull.FLOWER
        hand[skull.SKULL], hand[skull.FLOWER] = hand[skull.SKULL] + 1, hand[skull.FLOWER] - 1
    elif hand[skull.SKULL] and skull.FLOWER in stack:
        stack[stack.index(skull.FLOWER)] = skull.SKULL
        hand[skull.SKULL], hand[skull.FLOWER] = hand[skull.SKULL] - 1, hand[skull.FLOWER] + 1
    else:
        return None
    return {**view, "stack": stack, "hand": hand}


def test_the_spectator_deal_does_not_read_the_seats_own_discs() -> None:
    # The public part's deals (``keep_own=False``) are the same, draw for draw, whether the
    # seat's skull is on its stack or in its hand; the kept deals are not (they hold its
    # stack as it is).
    compared = 0
    for seats, rule, seed in [(4, "czech", 21), (5, "english", 22), (3, "czech", 23)]:
        for i, state in enumerate(game(seats, rule, seed)):
            if state.phase not in (skull.PLACING, skull.BIDDING):
                continue
            seat = skull.to_act(state)[0]
            view = projections.game_view(skull, state, seat)
            twin = _twin_view(view)
            if twin is None:
                continue
            for k in range(3):
                mine = skull.determinize(view, seat, Rng("deal", f"{i}-{k}"), keep_own=False)
                theirs = skull.determinize(twin, seat, Rng("deal", f"{i}-{k}"), keep_own=False)
                assert mine == theirs
                rand, other = random.Random(k), random.Random(k)
                dealt = SEARCH.spectator_deal(view, seat, SEARCH._Draws(rand))
                assert dealt == SEARCH.spectator_deal(twin, seat, SEARCH._Draws(other))
                assert rand.random() == other.random()  # and the same draws after
                stack = dealt.players[seat].stack
                assert skull.SKULL not in stack[1:]  # only ever the first disc
            kept = skull.determinize(view, seat, Rng("deal", str(i)))
            assert kept.players[seat].stack == tuple(view["stack"])
            compared += 1
    assert compared > 20


def test_a_budget_searchs_count_of_playouts_replays_its_choice() -> None:
    # An audit re-decides a timed move with the play-outs it recorded: the search stopped
    # by the clock (part-way through a round, often) and the one stopped by that count
    # choose alike, from the same statistics.
    checked = 0
    for seats, rule, seed in [(4, "czech", 31), (5, "english", 32)]:
        for i, state in enumerate(game(seats, rule, seed)):
            seat = skull.to_act(state)[0] if skull.to_act(state) else None
            if seat is None or state.phase != skull.BIDDING or not state.players[seat].stack:
                continue
            view = {**projections.game_view(skull, state, seat), "game": "skull"}
            timed = ismcts.search(view, random.Random(i), budget_ms=15)
            counted = ismcts.search(view, random.Random(i), iterations=timed.iterations)
            assert timed.iterations > 0
            assert (counted.command, counted.children) == (timed.command, timed.children)
            checked += 1
            if checked >= 6:
                return
    raise AssertionError(f"only {checked} bidding positions")


def test_a_rounds_first_disc_is_drawn_and_another_is_a_flower() -> None:
    firsts: Counter[str] = Counter()
    for seed in range(60):
        state = start(4, "czech", f"first-{seed}")
        seat = skull.to_act(state)[0]
        view = {**projections.game_view(skull, state, seat), "game": "skull"}
        found = ismcts.search(view, random.Random(seed), iterations=50)
        assert found.command is not None and found.command["type"] == "place"
        assert found.iterations == 0  # no search
        firsts[found.command["disc"]] += 1
    assert 0 < firsts[skull.SKULL] < firsts[skull.FLOWER]  # FIRST_SKULL is 0.2
    state = after(start(4, "czech", "second"), 0, skull.Place(disc=skull.SKULL))
    for s in (1, 2, 3):
        state = after(state, s, skull.Place(disc=skull.FLOWER))
    view = {**projections.game_view(skull, state, 0), "game": "skull"}
    found = ismcts.search(view, random.Random(0), iterations=30)
    assert found.command is not None
    if found.command["type"] == "place":
        assert found.command["disc"] == skull.FLOWER
