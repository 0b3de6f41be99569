"""Isle of Skye's search hooks (``shared/games/skye/search.py``, the package's ``SEARCH``) on
the kernel.

Price draws against the engine's distribution; play-outs (the random one to the end, the
default modelled rollout) end with valid rewards and, for the random one, win as often as
``ismcts.random_playout``; the evaluation of the last round is its final score; the
determinizer deals as ``determinize``; sampled commands and the root's commands are legal
(the heuristic's first); the model plays as the heuristic; the modelled deals give the
heuristic's prices mostly; a flat search is deterministic with an iteration budget, and a
tree search (``FLAT_SEARCH`` off) runs on the same hooks.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterator
from functools import reduce
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.bots import ismcts
from shared.games import skye
from shared.games.errors import GameError
from shared.games.rng import Rng
from shared.games.skye import bots as skye_bot
from shared.games.skye import engine as skye_engine
from shared.games.skye import messages as m
from shared.games.skye import search
from shared.games.skye.kernel import Table
from shared.games.skye.state import State, replace
from shared.match import projections

seeds = st.integers(min_value=0, max_value=2**32 - 1)
ENGINE: Any = skye  # as ``shared.games.base.Engine``
# (seats, advanced variant): the variant is for 2 and 3 players.
tables = st.sampled_from([(2, False), (3, False), (4, False), (5, False), (2, True), (3, True)])


def start(seats: int, variant: bool, seed: int) -> State:
    events = skye.setup(seats, {"advanced_variant": variant}, Rng(f"sim-skye-{seed}"))
    state: Any = reduce(skye.evolve, events, None)
    return state


def random_command(state: State, seat: int, rnd: random.Random) -> Any:
    """A uniformly random legal command, as the service's random bot draws it."""
    if state.phase == "prices":
        p = state.players[seat]
        return skye.parse_command(skye_engine.random_prices(list(p.drawn), p.gold, rnd))
    return rnd.choice(skye.legal_commands(state, seat))


def chance(draws: int) -> Any:
    """A move's draws: the engines' ``Rng`` interface over ``random.Random(draws)``."""
    return ismcts.FastRng(random.Random(draws))


def after(state: State, seat: int, command: Any, draws: int) -> State:
    """The engine's state after ``command``."""
    return reduce(skye.evolve, skye.decide(state, seat, command, chance(draws)), state)


def game(seats: int, variant: bool, seed: int) -> Iterator[State]:
    """The states of one random engine game (every seat to act may move next)."""
    rnd = random.Random(seed)
    state = start(seats, variant, seed)
    while True:
        yield state
        acting = skye.to_act(state)
        if not acting:
            return
        seat = rnd.choice(acting)
        state = after(state, seat, random_command(state, seat, rnd), rnd.getrandbits(32))


@functools.lru_cache(maxsize=64)
def states_of(seats: int, variant: bool, seed: int) -> tuple[State, ...]:
    return tuple(game(seats, variant, seed))


def seat_view(state: State, seat: int) -> dict[str, Any]:
    return {**projections.game_view(ENGINE, state, seat), "game": "skye"}


def json_key(doc: Any) -> str:
    return ismcts._json_key(doc)


# --- price draws -----------------------------------------------------------------------------


def all_price_commands(tiles: list[str], gold: int) -> set[tuple[Any, ...]]:
    """Every legal (axe, prices) for ``tiles`` and ``gold``."""
    out = set()
    for axe in tiles:
        rest = [t for t in tiles if t != axe]
        for values in itertools.product(range(1, gold + 1), repeat=len(rest)):
            if sum(values) <= gold:
                out.add((axe, tuple(zip(rest, values, strict=True))))
    return out


def key(discard: Any, prices: dict[str, int]) -> tuple[Any, ...]:
    return (discard, tuple(prices.items()))


@pytest.mark.parametrize(("count", "gold"), [(3, 2), (3, 5), (3, 9), (2, 4), (1, 3)])
def test_price_draws_have_the_engines_distribution(count: int, gold: int) -> None:
    """Fixed seeds: ``draw_prices`` and the engine's ``random_prices`` both give only legal
    commands, every one of them, each about equally often: a chi-square test against the
    uniform distribution the engine documents (p = 0.001 for each; deterministic), and the
    two samples' total variation distance below 0.06."""
    tiles = ["L01", "L02", "L03"][:count]
    legal = all_price_commands(tiles, gold)
    n = 300 * len(legal)
    rnd = random.Random(f"prices-{count}-{gold}")
    below = search._randbelow(rnd)
    ours = Counter(key(*search.draw_prices(tiles, gold, below)) for _ in range(n))
    engine = Counter(
        key(d["discard"], d["prices"])
        for d in (skye_engine.random_prices(tiles, gold, rnd) for _ in range(n))
    )
    for sample in (ours, engine):
        assert set(sample) == legal
        expected = n / len(legal)
        chi2 = sum((c - expected) ** 2 / expected for c in sample.values())
        df = len(legal) - 1
        # Wilson-Hilferty: the chi-square quantile at 1 - 0.001 (z = 3.09).
        critical = df * (1 - 2 / (9 * df) + 3.09 * math.sqrt(2 / (9 * df))) ** 3 if df else 0.0
        assert chi2 <= critical, (chi2, critical)
    tv = sum(abs(ours[k] - engine[k]) for k in legal) / (2 * n)
    assert tv < 0.06, tv


def test_price_draws_refuse_what_the_engine_refuses() -> None:
    with pytest.raises(GameError) as ours:
        search.draw_prices(["L01", "L02", "L03"], 1, random.Random(0).randrange)
    with pytest.raises(GameError) as engine:
        skye_engine.random_prices(["L01", "L02", "L03"], 1, random.Random(0))
    assert (ours.value.rule, str(ours.value)) == (engine.value.rule, str(engine.value))
    assert search.draw_prices([], 5, random.Random(0).randrange) == (None, {})


# --- play-outs -------------------------------------------------------------------------------


def assert_rewards(values: list[float], state: State) -> None:
    """One reward per seat in [0, 1], summing to 1: a game's rewards or win shares."""
    assert len(values) == state.seats
    assert all(0.0 <= v <= 1.0 for v in values)
    assert sum(values) == pytest.approx(1.0)


def determinized(state: State, viewer: int, k: int) -> State:
    """What ISMCTS searches from: a deal consistent with ``viewer``'s view."""
    view = projections.game_view(ENGINE, state, viewer)
    return skye.determinize(view, viewer, chance(k))


@settings(max_examples=6, deadline=None)
@given(tables, seeds)
def test_playouts_from_game_and_determinized_states_end_with_valid_rewards(
    table: tuple[int, bool], seed: int
) -> None:
    rnd = random.Random(seed)
    for k, state in enumerate(states_of(*table, seed % 1000)):
        if rnd.random() < 0.15:
            full = determinized(state, rnd.randrange(state.seats), k)
            for start_state in (state, full):
                values = search.random_rollout(skye, start_state, random.Random(k))
                assert_rewards(values, start_state)
                assert (
                    values
                    in (
                        [1.0 if i == w else 0.0 for i in range(state.seats)]
                        for w in range(state.seats)
                    )
                    or max(values) < 1.0
                )  # a shared win splits the reward
                assert_rewards(search.playout_rollout(skye, start_state, random.Random(k)), full)
                # The play-out works on its own copy: the state it started from is unchanged.
                assert Table.thaw(start_state).freeze() == start_state


def test_random_rollouts_win_as_often_as_the_engine_path() -> None:
    """Fixed seeds, from the start of round 4 of two games whose result is still open: every
    seat's mean reward over 300 play-outs of ours within 0.13 of the engine path's
    (``ismcts.random_playout``), about 3.2 standard deviations of the difference."""
    for seats, seed in [(3, 34), (2, 38)]:
        state = next(s for s in states_of(seats, False, seed) if s.round == 4)
        n = 300
        engine = [ismcts.random_playout(skye, state, random.Random(k)) for k in range(n)]
        ours = [search.random_rollout(skye, state, random.Random(10**6 + k)) for k in range(n)]
        for seat in range(seats):
            expected = sum(r[seat] for r in engine) / n
            got = sum(r[seat] for r in ours) / n
            assert 0.15 < expected < 0.85, "a state whose result is open"
            assert abs(got - expected) <= 0.13, (seats, seat, got, expected)


def test_the_evaluation_of_the_last_round_is_its_final_score() -> None:
    """In the last round's building, with nothing left to place, ``evaluate`` is the final
    score within what gold rounds off (a coin is worth 1/5 point in both, but the end turns
    only every 5 coins into a point): the round's scoring tiles, majorities, scrolls."""
    checked = 0
    for seats, seed in [(3, 21), (4, 22), (2, 23), (5, 24)]:
        state = next(
            s
            for s in states_of(seats, False, seed)
            if s.round == s.rounds and s.phase == "building"
        )
        # Every tile still to place goes back: only the scoring is left.
        emptied = replace(state, players=tuple(replace(p, to_place=()) for p in state.players))
        table = Table.thaw(emptied)
        values = search.evaluate(table)
        table.settle(chance(0), table.on)
        assert table.phase == "game_over"
        final = [p.score for p in table.players]
        for seat in range(seats):
            assert 0.0 <= values[seat] - final[seat] < 1.0, (values, final)
        checked += 1
    assert checked == 4


def test_win_shares() -> None:
    shares = search.win_shares([10.0, 14.0, 10.0], 4.0)
    assert sum(shares) == pytest.approx(1.0)
    assert shares[0] == shares[2] < shares[1]
    assert shares[1] / shares[0] == pytest.approx(math.e)
    assert search.win_shares([3.0, 3.0], 2.0) == [0.5, 0.5]


def test_the_rollout_is_the_default_and_drives_a_search() -> None:
    assert skye.SEARCH is search
    assert ismcts.default_rollout(skye) is search.playout_rollout
    for state in states_of(3, False, 7)[5:40:8]:
        seat = skye.to_act(state)[0]
        view = seat_view(state, seat)
        result = ismcts.search(view, random.Random(1), iterations=30)
        assert result.iterations in (0, 30) and result.failed == 0
        assert result.command is not None
        if state.phase == "prices":
            after(state, seat, skye.parse_command(result.command), 0)  # the engine accepts it
        else:
            assert result.command in view["legal_commands"]


def test_a_tree_search_runs_on_the_same_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``FLAT_SEARCH`` off, ISMCTS builds a tree below the root and draws the price
    decisions inside it with ``sample_command``: every answer is still legal."""
    monkeypatch.setattr(search, "FLAT_SEARCH", False)
    drawn: list[Any] = []
    real = search.sample_command

    def counted(state: State, seat: int, rand: random.Random) -> Any:
        drawn.append(seat)
        return real(state, seat, rand)

    monkeypatch.setattr(search, "sample_command", counted)
    for state in states_of(2, False, 5)[::9]:
        acting = skye.to_act(state)
        if not acting or state.phase != "prices":
            continue
        seat = acting[-1]
        result = ismcts.search(seat_view(state, seat), random.Random(2), iterations=40)
        assert result.command is not None and result.failed == 0
        after(state, seat, skye.parse_command(result.command), 0)
    assert drawn  # the tree crossed into later price phases


# --- deals and the root's candidates ------------------------------------------------------------


def unset_prices(state: State, seat: int) -> State:
    """``state`` with ``seat``'s prices taken back (its gold in hand again)."""
    p = state.players[seat]
    undone = replace(p, prices_set=False, offer=(), discard=None, gold=p.gold + p.staked)
    return replace(
        state, players=tuple(undone if i == seat else q for i, q in enumerate(state.players))
    )


@settings(max_examples=6, deadline=None)
@given(tables, seeds)
def test_the_determinizer_deals_as_determinize(table: tuple[int, bool], seed: int) -> None:
    """The same state as ``determinize`` but for the hidden axes and prices, which are legal
    for the seat and leave it its gold (their distribution is ``draw_prices``', tested
    above); deals share the territories, and with them their caches."""
    rnd = random.Random(seed)
    hidden_seen = 0
    for k, state in enumerate(states_of(*table, seed % 1000)):
        secret = state.phase == "prices" and any(p.prices_set and p.drawn for p in state.players)
        if not secret and rnd.random() > 0.2:
            continue
        # In a secret state a seat still to set prices looks, so something is hidden from it.
        unset = [i for i, p in enumerate(state.players) if not p.prices_set]
        viewer = rnd.choice(unset) if secret and unset else rnd.randrange(state.seats)
        view = projections.game_view(ENGINE, state, viewer)
        for deal in (search.determinizer(view, viewer), search.uniform_determinizer(view, viewer)):
            ours = deal(chance(k))
            theirs = skye.determinize(view, viewer, chance(k))
            players = list(ours.players)
            for i, pv in enumerate(view["players"]):
                if not (pv["prices_set"] and pv["offer"] is None and pv["drawn"]):
                    continue
                p, truth = ours.players[i], state.players[i]
                assert p.gold + p.staked == truth.gold + truth.staked
                command = m.SetPrices(discard=p.discard, prices=dict(p.offer))
                skye.decide(unset_prices(state, i), i, command, chance(0))  # raises if illegal
                players[i] = theirs.players[i]
                hidden_seen += 1
            assert replace(ours, players=tuple(players)) == theirs
            again = deal(chance(k + 1))
            assert all(
                a.territory is b.territory for a, b in zip(ours.players, again.players, strict=True)
            )
    assert hidden_seen > 0


@settings(max_examples=6, deadline=None)
@given(tables, seeds)
def test_sampled_commands_are_legal(table: tuple[int, bool], seed: int) -> None:
    rnd = random.Random(seed)
    for k, state in enumerate(states_of(*table, seed % 1000)):
        acting = skye.to_act(state)
        if not acting or rnd.random() > 0.3:
            continue
        seat = rnd.choice(acting)
        command = search.sample_command(state, seat, random.Random(k))
        if state.phase != "prices":
            assert command in skye.legal_commands(state, seat)
        after(state, seat, command, k)  # decide raises for an illegal command


@settings(max_examples=4, deadline=None)
@given(tables, seeds)
def test_root_commands_are_legal_and_start_with_the_heuristics_choice(
    table: tuple[int, bool], seed: int
) -> None:
    """Building and buying: the heuristic's choice alone; prices: the heuristic's prices
    first, then distinct legal alternatives."""
    rnd = random.Random(seed)
    for k, state in enumerate(states_of(*table, seed % 1000)):
        acting = skye.to_act(state)
        if not acting or rnd.random() > 0.3:
            continue
        seat = rnd.choice(acting)
        view = seat_view(state, seat)
        docs = search.root_commands(view, random.Random(k))
        own = skye_bot.choose(view, random.Random(k))
        assert docs is not None and docs[0] == own
        if state.phase in ("building", "buying"):
            assert docs == [own] and own in view["legal_commands"]
            continue
        assert len({search._doc_key(d) for d in docs}) == len(docs)
        for doc in docs:
            after(state, seat, skye.parse_command(doc), k)  # decide raises for an illegal one


@settings(max_examples=4, deadline=None)
@given(tables, seeds)
def test_the_model_plays_as_the_heuristic(table: tuple[int, bool], seed: int) -> None:
    """``modelled_prices`` is the heuristic's price decision (its ties broken by
    ``Random(0)``), and ``modelled_buy`` its purchase where the heuristic has no tie."""
    rnd = random.Random(seed)
    for state in states_of(*table, seed % 1000):
        if state.phase not in ("prices", "buying") or rnd.random() > 0.5:
            continue
        t = Table.thaw(state)
        for seat in skye.to_act(state):
            view = seat_view(state, seat)
            if state.phase == "prices":
                own = skye_bot.choose(view, random.Random(0))
                assert own is not None
                assert search.modelled_prices(t, seat) == (own["discard"], own["prices"])
            else:
                picks = {json_key(skye_bot.choose(view, random.Random(r))) for r in range(3)}
                if len(picks) > 1:
                    continue  # a tie the heuristic breaks at random
                choice = search.modelled_buy(t, seat, search.model_of(t))
                expected = (
                    {"type": "pass"} if choice is None else {"type": "buy", "tile": choice[0]}
                )
                assert json_key(expected) in picks


def test_the_modelled_determinizer_deals_the_heuristics_prices_mostly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hidden-priced seat gets the heuristic's prices in about ``MODEL_NUM`` of
    ``MODEL_DEN`` deals (3 of 4 here), legal either way, and the rest of the state as
    ``determinize``."""
    monkeypatch.setattr(search, "MODEL_NUM", 3)
    monkeypatch.setattr(search, "MODEL_DEN", 4)
    for state in states_of(3, False, 11):
        hidden = [i for i, p in enumerate(state.players) if p.prices_set and p.drawn]
        unset = [i for i, p in enumerate(state.players) if not p.prices_set]
        if state.phase == "prices" and hidden and unset:
            break
    else:
        pytest.fail("no state with hidden prices")
    viewer, other = unset[0], hidden[0]
    view = seat_view(state, viewer)
    before = unset_prices(state, other)
    own = skye_bot.choose(seat_view(before, other), random.Random(0))
    assert own is not None
    deal = search.modelled_determinizer(view, viewer)
    rng = chance(5)
    modelled = 0
    for _ in range(400):
        dealt = deal(rng)
        p = dealt.players[other]
        command = m.SetPrices(discard=p.discard, prices=dict(p.offer))
        skye.decide(unset_prices(state, other), other, command, chance(0))  # legal
        modelled += (p.discard, dict(p.offer)) == (own["discard"], own["prices"])
        assert skye.view(dealt, viewer)["players"] == view["players"]
    assert 0.65 < modelled / 400 < 0.9


def test_a_flat_search_is_deterministic_with_iterations() -> None:
    for state in states_of(3, False, 4)[2:30:6]:
        seat = skye.to_act(state)[0]
        view = seat_view(state, seat)
        first = ismcts.search(view, random.Random(3), iterations=40)
        search.clear_memos()  # the memos only save time: a cold search answers the same
        again = ismcts.search(view, random.Random(3), iterations=40)
        assert first.command == again.command and first.children == again.children


def test_the_benchmark_script_imports() -> None:
    module = importlib.import_module("benchmarks.bench_sim_skye")
    assert callable(module.main)
