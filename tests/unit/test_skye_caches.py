"""Isle of Skye's caches and fast paths give what the plain computation gives.

Territories grown tile by tile against the same placements built at once and against a check
that compares terrain names; the generated ``replace`` against ``dataclasses.replace``; the
command JSON fast paths against ``base.command_json``; remembered folds and listings against
fresh ones; and callers own the lists and dicts they get.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import fields

import pytest

import shared.games.skye as skye
from shared.games.base import command_json, replay
from shared.games.rng import Rng
from shared.games.skye import messages as m
from shared.games.skye.data import LANDSCAPE_IDS, OFFSETS, ROTATIONS, TILES
from shared.games.skye.state import Player, State, replace
from shared.games.skye.territory import Territory, castle_territory, fitting_rotations
from tests.unit.playouts import playout


def naive_check(t: Territory, tile: str, x: int, y: int, rotation: int) -> str | None:
    """``Territory.check`` from the rules, comparing terrain names edge by edge."""
    if t.tile_at((x, y)) is not None:
        return "occupied"
    edges = TILES[tile].edges(rotation)
    touching = False
    for d, (dx, dy) in enumerate(OFFSETS):
        other = t.tile_at((x + dx, y + dy))
        if other is None:
            continue
        touching = True
        placed = next(p for p in t.placements if (p.x, p.y) == (x + dx, y + dy))
        if other.edges(placed.rotation)[(d + 2) % 4] != edges[d]:
            return "terrain_mismatch"
    return None if touching else "no_contact"


def same_territory(grown: Territory, built: Territory, rnd: random.Random) -> None:
    assert grown == built
    assert grown.frontier() == built.frontier()
    assert grown.to_json() == [p.to_json() for p in built.placements]
    assert grown.road_connected() == built.road_connected()
    assert grown.areas() == built.areas()
    for tile in rnd.sample(LANDSCAPE_IDS, 8):
        spots = grown.legal_spots(tile)
        assert spots == built.legal_spots(tile)
        assert grown.has_spot(tile) == bool(spots)
        assert all(naive_check(built, tile, x, y, r) is None for x, y, r in spots)
        cells = [*built.frontier()[:4], (0, 0), (40, 40)]
        for x, y in cells:
            for r in ROTATIONS:
                assert grown.check(tile, x, y, r) == naive_check(built, tile, x, y, r)


@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_territories_grown_tile_by_tile_match_ones_built_at_once(seats: int) -> None:
    rnd = random.Random(seats)
    final = playout("skye", seats, {}, f"caches-{seats}").final
    for p in final.players:
        placements = p.territory.placements
        grown = castle_territory(placements[0].tile)
        for k, pl in enumerate(placements[1:], 2):
            grown = grown.place(pl.tile, pl.x, pl.y, pl.rotation)
            same_territory(grown, Territory(placements[:k]), rnd)


def test_placing_on_an_occupied_cell_is_the_same_as_building_it_at_once() -> None:
    # Not a legal move, but ``place`` leaves legality to its caller: the later tile wins.
    grown = castle_territory("blue_castle").place("L25", 0, 1, 0).place("L45", 0, 1, 0)
    built = Territory.of(("blue_castle", 0, 0, 0), ("L25", 0, 1, 0), ("L45", 0, 1, 0))
    same_territory(grown, built, random.Random(1))


def test_fitting_rotations_compare_terrain_names() -> None:
    rnd = random.Random(2)
    choices = (None, "pasture", "mountain", "water")
    for tile in LANDSCAPE_IDS:
        for _ in range(20):
            needs = tuple(rnd.choice(choices) for _ in range(4))
            expected = tuple(
                r
                for r in ROTATIONS
                if all(
                    n is None or n == e for n, e in zip(needs, TILES[tile].edges(r), strict=True)
                )
            )
            assert fitting_rotations(tile, needs) == expected


@pytest.mark.parametrize("cls", [State, Player])
def test_replace_matches_dataclasses_replace(cls: type) -> None:
    state = playout("skye", 3, {}, "caches-replace").final
    obj = state if cls is State else state.players[1]
    for f in fields(cls):
        value = ("changed",)
        assert replace(obj, **{f.name: value}) == dataclasses.replace(obj, **{f.name: value})
    assert replace(obj) == obj and replace(obj) is not obj
    with pytest.raises(TypeError):
        replace(obj, no_such_field=1)


def test_command_json_fast_paths_write_what_the_generic_writer_writes() -> None:
    commands = [
        m.Place(tile="L07", x=-1, y=2, rotation=270),
        m.Buy(tile="L07"),
        m.Pass(),
        m.SetPricesTemplate(tiles=("L01", "L02", "L03"), gold=7),
        m.SetPrices(discard="L01", prices={"L02": 1, "L03": 4}),
    ]
    for command in commands:
        fast, generic = skye.command_to_json(command), command_json(command)
        assert fast == generic
        assert list(fast) == list(generic)  # same key order, so the same bytes


def test_folding_the_same_events_twice_gives_equal_states() -> None:
    # (Before the kernel, ``evolve`` remembered recent folds by identity, so that folding
    # ``decide``'s events a second time was a lookup; ``decide`` now folds on the kernel
    # instead, and the remembered folds went with the old ``evolve``.)
    events = skye.setup(4, {}, Rng("fold"))
    first, again = replay(skye, events), replay(skye, events)
    assert again == first
    copies = [skye.event_from_json(skye.event_to_json(e)) for e in events]
    fresh = replay(skye, copies)
    assert fresh == first and fresh is not first


def test_callers_own_the_listings_and_views_they_get() -> None:
    events = skye.setup(2, {}, Rng("own"))
    state = replay(skye, events)
    seat = skye.to_act(state)[0]
    listing = skye.legal_commands(state, seat)
    listing.clear()
    assert skye.legal_commands(state, seat) != []
    view = skye.view(state, seat)
    view["players"][0]["territory"][0]["x"] = 99
    view["scoring_tiles"][0]["rounds"].append(99)
    view["legal_commands"][0]["gold"] = -1
    assert skye.view(state, seat) != view
    assert skye.view(state, seat) == skye.view(replay(skye, events), seat)
