"""Isle of Skye's search path on the kernel: commands past the checks play the plain rules.

A search's play-outs take their commands from the kernel's own listing (``legal_commands``,
``purchases``, ``place_options``) or draw legal prices (``draw_prices``; the heuristic's,
checked once by ``search.modelled_prices``), and apply them past ``apply``'s checks
(``Table.apply_listed``, ``Table.apply_purchase``), with ``emit`` None when nothing records
them (the kernel runs the mutators itself; the reveal and the end of the buying get shared
empty events). These tests hold that path to the plain one: the same events, the same state
and the same draws as ``apply`` with a recorder, for every listed command of seeded games,
and ``search.random_move`` plays the move the plain path (the listing, one draw, ``apply``)
plays.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.games import skye
from shared.games.kernel import recorder
from shared.games.skye import messages as m
from shared.games.skye import search
from shared.games.skye.kernel import Table, legal_commands, place_options, purchases
from shared.games.skye.state import State
from tests.unit.test_skye_search import states_of

seeds = st.integers(min_value=0, max_value=2**32 - 1)
# (seats, advanced variant): the variant is for 2 and 3 players.
tables = st.sampled_from([(2, False), (3, False), (4, False), (5, False), (2, True), (3, True)])


def draws(seed: int) -> tuple[random.Random, Any]:
    """A generator and the engines' ``Rng`` over it (the next round's tiles)."""
    rand = random.Random(seed)
    return rand, search._Chance(search._randbelow(rand))


def three_ways(state: State, seat: int, command: Any, seed: int, listed: Any) -> None:
    """``command`` applied checked and recorded, ``listed(kernel, emit)`` recorded and
    ``listed(kernel, None)``: the same events, states and draws."""
    checked, recorded, silent = Table.thaw(state), Table.thaw(state), Table.thaw(state)
    want: list[Any] = []
    got: list[Any] = []
    rand_c, rng_c = draws(seed)
    rand_r, rng_r = draws(seed)
    rand_s, rng_s = draws(seed)
    checked.apply(seat, command, rng_c, recorder(checked, want))
    listed(recorded, recorder(recorded, got), rng_r)
    listed(silent, None, rng_s)
    assert got == want, (seat, command)
    assert recorded.freeze() == checked.freeze()
    assert silent.freeze() == checked.freeze(), (seat, command, want)
    assert rand_r.getstate() == rand_c.getstate() == rand_s.getstate()


def test_apply_listed_gives_what_apply_gives_for_every_listed_command() -> None:
    """In every state of seeded games (prices with drawn prices and the listing's template,
    purchases, passes, placements, stuck tiles returned, round ends and the game's end), each
    listed command through ``apply_listed`` (and each purchase through ``apply_purchase``)
    emits what ``apply`` emits and leaves the same state; with ``emit`` None the same state
    and the same draws."""
    seen: set[str] = set()
    cases = [(2, True, 1), (3, False, 2), (4, False, 3), (5, False, 4), (3, True, 5)]
    for seats, variant, seed in cases:
        for n, state in enumerate(states_of(seats, variant, seed)):
            for seat in skye.to_act(state):
                commands = list(legal_commands(state, seat))
                if state.phase == "prices":
                    p = state.players[seat]
                    discard, prices = search.draw_prices(
                        p.drawn, p.gold, search._randbelow(random.Random(n))
                    )
                    commands.append(m.SetPrices(discard=discard, prices=prices))
                for k, command in enumerate(commands):
                    three_ways(
                        state,
                        seat,
                        command,
                        seed * 1000 + k,
                        lambda t, emit, rng, c=command, s=seat: t.apply_listed(s, c, rng, emit),
                    )
                    events: list[Any] = []
                    t = Table.thaw(state)
                    t.apply(seat, command, draws(0)[1], recorder(t, events))
                    seen.update(type(e).TYPE for e in events)
                for k, option in enumerate(purchases(state, seat)):
                    three_ways(
                        state,
                        seat,
                        m.Buy(tile=option[0]),
                        seed * 1000 + k,
                        lambda t, emit, rng, o=option, s=seat: t.apply_purchase(s, o, rng, emit),
                    )
    assert {
        "prices_revealed",
        "tile_bought",
        "passed",
        "unsold_tiles_kept",
        "tile_placed",
        "round_scored",
        "tiles_drawn",
        "extra_tile_returned",
        "game_ended",
    } <= seen


def plain_move(table: Table, seat: int, below: search.Below, chance: Any, out: list[Any]) -> None:
    """The plain path of a random move: prices drawn by ``draw_prices``, else the listing's
    entry at one draw (none for a single entry), through ``apply`` with a recorder."""
    if table.phase == "prices":
        p = table.players[seat]
        discard, prices = search.draw_prices(p.drawn, p.gold, below)
        command: Any = m.SetPrices(discard=discard, prices=prices)
    else:
        legal = legal_commands(table, seat)
        command = legal[below(len(legal))] if len(legal) > 1 else legal[0]
    table.apply(seat, command, chance, recorder(table, out))


@settings(max_examples=25, deadline=None)
@given(table=tables, seed=seeds)
def test_random_move_plays_the_plain_random_move(table: tuple[int, bool], seed: int) -> None:
    """Given a state of a seeded game and the same draws, when the plain path picks a move
    from the listing and ``apply``s it and ``random_move`` picks it from the listing's parts
    and applies it past the checks with nothing recorded, then after every move to the
    game's end both tables hold the same game and have drawn the same numbers."""
    seats, variant = table
    states = states_of(seats, variant, seed % 50)
    state = states[seed % len(states)]
    plain, lean = Table.thaw(state), Table.thaw(state)
    plain_rand, plain_chance = draws(seed)
    lean_rand, lean_chance = draws(seed)
    plain_below, lean_below = search._randbelow(plain_rand), search._randbelow(lean_rand)
    moves = 0
    while plain.phase != "game_over":
        seat = plain.to_act()[0]
        assert lean.to_act()[0] == seat
        events: list[Any] = []
        plain_move(plain, seat, plain_below, plain_chance, events)
        search.random_move(lean, seat, lean_below, lean_chance)
        moves += 1
        assert lean.freeze() == plain.freeze(), (seed, moves, events)
        assert lean_rand.getstate() == plain_rand.getstate()
    assert lean.outcome() == plain.outcome()


def test_the_place_listing_is_its_parts_in_order() -> None:
    """A building seat's ``legal_commands`` are ``place_options``' spots, tile by tile: the
    index a play-out draws names the same command in both."""
    checked = 0
    for state in states_of(3, False, 7):
        if state.phase != "building":
            continue
        for seat in skye.to_act(state):
            parts = [
                (tile, x, y, r) for tile, spots in place_options(state, seat) for x, y, r in spots
            ]
            listed = [(c.tile, c.x, c.y, c.rotation) for c in legal_commands(state, seat)]
            assert listed == parts
            checked += 1
    assert checked
