"""Isle of Skye territory geometry: rotation, placement legality, areas, roads.

Tile edges quoted in comments are N, E, S, W initials (p = pasture, m = mountain, w = water)
read from tiles.json; rotating 90 degrees clockwise moves the printed N edge to E.
"""

from __future__ import annotations

import pytest

from shared.games.skye.data import (
    ALL_TILES,
    CASTLE_IDS,
    LANDSCAPE_IDS,
    SCORING_TILES,
    TILES,
    build_tiles,
    schedule,
    tile_id,
)
from shared.games.skye.territory import Territory, castle_territory


def build(*placements: tuple[str, int, int, int]) -> Territory:
    """A territory built tile by tile from the blue castle, asserting each placement legal."""
    t = castle_territory("blue_castle")
    for tile, x, y, r in placements:
        assert t.check(tile, x, y, r) is None, (tile, x, y, r, t.check(tile, x, y, r))
        t = t.place(tile, x, y, r)
    return t


def short(edges: tuple[str, ...]) -> str:
    return "".join(e[0] for e in edges)


# -- data -------------------------------------------------------------------------------------


def test_data_loads_as_shipped() -> None:
    assert len(LANDSCAPE_IDS) == 73
    assert len(CASTLE_IDS) == 5
    assert len(SCORING_TILES) == 16
    # totals from tiles.json "totals": edge terrains 107 pasture, 96 water, 89 mountain.
    counts = {"pasture": 0, "water": 0, "mountain": 0}
    for tid in LANDSCAPE_IDS:
        for e in TILES[tid].edges():
            counts[e] += 1
    assert counts == {"pasture": 107, "water": 96, "mountain": 89}
    assert sum(TILES[t].whisky for t in LANDSCAPE_IDS) == 27
    assert sum(TILES[t].scroll is not None for t in LANDSCAPE_IDS) == 14
    assert sum(TILES[t].icons.get("ship", 0) for t in LANDSCAPE_IDS) == 28


def test_schedules_score_each_tile_three_times() -> None:
    assert schedule(4) == (("A",), ("B",), ("A", "C"), ("B", "D"), ("A", "C", "D"), ("B", "C", "D"))
    assert schedule(5) == (("A", "B"), ("A", "C"), ("B", "D"), ("A", "C", "D"), ("B", "C", "D"))
    for seats in (2, 3, 4, 5):
        letters = [x for r in schedule(seats) for x in r]
        assert all(letters.count(x) == 3 for x in "ABCD")


def test_overrides_change_a_disputed_value() -> None:
    # The shipped tile_overrides.json changes nothing; its example (harlyq's reading of L02's
    # roads, N and E, and of L16's sheep, 2) applies cleanly.
    from shared.games.skye.data import TILE_OVERRIDES, TILES_DOC, _read

    assert TILE_OVERRIDES == {}
    patched = build_tiles(TILES_DOC, _read("tile_overrides.json")["example"])
    by_id = {t.id: t for t in patched}
    assert by_id["L02"].orientations[0].segments == (frozenset({0, 1}),)
    assert TILES["L02"].orientations[0].segments == (frozenset({0}),)
    assert by_id["L16"].icons["sheep"] == 2 and TILES["L16"].icons["sheep"] == 3
    assert len(patched) == len(ALL_TILES)


def test_tile_ids_accept_numbers() -> None:
    assert tile_id("L07") == "L07"
    assert tile_id(7) == "L07"
    assert tile_id("7") == "L07"
    assert tile_id("07") == "L07"
    assert tile_id(0) is None
    assert tile_id(74) is None
    assert tile_id(True) is None
    assert tile_id("X1") is None
    assert tile_id("blue_castle") == "blue_castle"


# -- rotation ---------------------------------------------------------------------------------


def test_rotation_moves_edges_clockwise() -> None:
    # L22 printed: N m, E w, S p, W p. 90 cw: the printed W edge is now N -> p m w p.
    assert [short(TILES["L22"].edges(r)) for r in (0, 90, 180, 270)] == [
        "mwpp",
        "pmwp",
        "ppmw",
        "wppm",
    ]
    # The areas turn with the edges: L22's water (printed E) faces S at 90 degrees.
    o = TILES["L22"].orientations[1]
    assert o.edge_area[2] == 1  # area a1 = the water
    # Roads turn too: L22's road joins printed S and W; at 90 it joins W and N.
    assert o.segments == (frozenset({3, 0}),)


# -- placement legality -----------------------------------------------------------------------


def test_placement_rules() -> None:
    t = castle_territory("blue_castle")  # castle edges: N p, E w, S p, W m
    assert t.check("L25", 0, 0, 0) == "occupied"
    assert t.check("L25", 2, 0, 0) == "no_contact"  # (2, 0) touches nothing
    assert t.check("L25", 1, 1, 0) == "no_contact"  # a corner is not an edge
    # L25 (p p p m) north of the castle: its S (p) meets the castle's N (p).
    assert t.check("L25", 0, 1, 0) is None
    # Turned 270 its S is the printed W edge (m): mismatch with the castle's pasture.
    assert t.check("L25", 0, 1, 270) == "terrain_mismatch"
    # East of the castle the castle shows water: L25 has no water edge at all.
    assert all(t.check("L25", 1, 0, r) == "terrain_mismatch" for r in (0, 90, 180, 270))


def test_roads_need_not_match() -> None:
    # The castle has a road leaving S; L21 (p p m m, roads E-S) has no road on its N edge.
    t = castle_territory("blue_castle")
    assert t.check("L21", 0, -1, 0) is None


def test_every_touching_edge_must_match() -> None:
    # Castle, L25 north (0,1) and L45 east (1,0): the cell (1,1) touches L25's E edge (p) and
    # L45's N edge (p), so a tile there needs pasture on both its W and S edges.
    t = build(("L25", 0, 1, 0), ("L45", 1, 0, 0))
    # L22 at 90 is p m w p: W p ok but S w against L45's N p -> mismatch.
    assert t.check("L22", 1, 1, 90) == "terrain_mismatch"
    # L22 at 180 is p p m w: S m -> mismatch; at 0 (m w p p): S p, W p -> legal.
    assert t.check("L22", 1, 1, 180) == "terrain_mismatch"
    assert t.check("L22", 1, 1, 0) is None


def test_legal_spots_next_to_a_castle() -> None:
    # The castle's free cells need: (0,1) S=p, (1,0) W=w, (0,-1) N=p, (-1,0) E=m.
    # L06 (w m m m) has no pasture; water only at its printed N, which faces W after 270;
    # mountain at E for rotations 0 (E), 180 (printed W) and 270 (printed S).
    spots = castle_territory("blue_castle").legal_spots("L06")
    assert spots == [(-1, 0, 0), (-1, 0, 180), (-1, 0, 270), (1, 0, 270)]
    for x, y, r in spots:
        assert castle_territory("blue_castle").check("L06", x, y, r) is None


def test_a_tile_without_the_needed_terrain_has_no_spot() -> None:
    # Castle with L45 (p p p w) east and L19 (p m p p) west: every free edge is pasture, and
    # L06 (w m m m) has no pasture edge.
    t = build(("L45", 1, 0, 0), ("L19", -1, 0, 0))
    assert t.legal_spots("L06") == []
    assert not t.has_spot("L06")
    assert t.has_spot("L25")


# -- areas ------------------------------------------------------------------------------------


def lake_territory(with_last: bool = True) -> Territory:
    """Castle; L66 (w m w w at 180) east; L10 (m m w p at 180) north-east; L22 (p m w p at 90)
    west; and, if ``with_last``, L06 (w m m m) south-east, closing the lake."""
    placements = [("L66", 1, 0, 180), ("L10", 1, 1, 180), ("L22", -1, 0, 90)]
    if with_last:
        placements.append(("L06", 1, -1, 0))
    return build(*placements)


def water_areas(t: Territory) -> list:
    return [a for a in t.areas() if a.terrain == "water"]


def test_area_closes_across_several_tiles() -> None:
    # Water: castle E -> L66 (water N, S, W) -> L10's water (S only) north and, last, L06's
    # water (N only) south. Without L06 the lake is open at L66's S edge.
    open_lake = [a for a in water_areas(lake_territory(False)) if (1, 0) in a.cells][0]
    assert not open_lake.completed
    assert open_lake.cells == {(0, 0), (1, 0), (1, 1)}
    lake = [a for a in water_areas(lake_territory()) if (1, 0) in a.cells][0]
    assert lake.completed
    assert lake.cells == {(0, 0), (1, 0), (1, 1), (1, -1)}
    assert lake.icons.get("ship") == 2  # L66's two ships
    # Castle W (mountain) + L22's mountain (E only at 90): a completed 2-tile mountain area.
    mountains = [a for a in lake_territory().areas() if a.terrain == "mountain" and a.completed]
    assert [m.cells for m in mountains] == [{(0, 0), (-1, 0)}]


def test_area_count_and_open_areas() -> None:
    t = lake_territory()
    # 5 tiles: castle 3 areas, L66 2, L10 3, L22 3, L06 2 = 13 regions; joins: castle-L66
    # water, castle-L22 mountain, L66-L10 water, L66-L06 water -> 13 - 4 = 9 areas.
    assert len(t.areas()) == 9
    assert sum(a.completed for a in t.areas()) == 2


def test_enclosed_area_inside_one_tile_is_completed() -> None:
    # L09 (p m m m) holds an enclosed lake: completed as printed.
    t = build(("L09", -1, 0, 0))
    enclosed = [a for a in t.areas() if a.cells == {(-1, 0)} and a.terrain == "water"]
    assert len(enclosed) == 1 and enclosed[0].completed


def test_opposite_edges_are_separate_areas_unless_joined() -> None:
    # L12 (p m p m): its two mountain edges are separate areas; the pasture N-S is one area.
    t = build(("L12", 0, 1, 0))
    mountains = [a for a in t.areas() if a.terrain == "mountain" and (0, 1) in a.cells]
    assert len(mountains) == 2
    pasture = [a for a in t.areas() if a.terrain == "pasture" and (0, 1) in a.cells]
    assert len(pasture) == 1 and pasture[0].cells == {(0, 0), (0, 1)}


# -- roads ------------------------------------------------------------------------------------


def test_roads_connected_to_the_castle() -> None:
    # Castle roads N, S, W. L25 north (roads N-S-W): joined by castle N / L25 S. L32 north of
    # it (roads N-S-W): joined. L21 south (roads E-S): no road on its N edge, not joined.
    t = build(("L25", 0, 1, 0), ("L21", 0, -1, 0), ("L32", 0, 2, 0))
    assert t.road_connected() == {(0, 0), (0, 1), (0, 2)}


def test_road_to_an_empty_or_roadless_edge_stops() -> None:
    # L22 west of the castle at 90 has its road on W and N only: the castle's W road meets
    # L22's E edge, which has no road.
    t = build(("L22", -1, 0, 90))
    assert t.road_connected() == {(0, 0)}
    # At 0 degrees L22 does not fit west (E edge is water); castle alone stays alone.
    assert castle_territory("blue_castle").road_connected() == {(0, 0)}


@pytest.mark.parametrize("castle", CASTLE_IDS)
def test_every_castle_has_income_and_roads(castle: str) -> None:
    t = castle_territory(castle)
    assert TILES[castle].income == 5
    assert len(t.frontier()) == 4
    assert t.road_connected() == {(0, 0)}


def test_territories_built_apart_compare_by_their_placements() -> None:
    """Equality (the search's memo keys) is by placements, also between territories built
    apart, and a difference in any field of any placement tells them apart."""
    built = castle_territory("blue_castle").place("L06", -1, 0, 0)
    again = Territory.of(*((p.tile, p.x, p.y, p.rotation) for p in built.placements))
    assert again is not built
    assert again == built and built == again and hash(again) == hash(built)
    assert {again: 1}[built] == 1
    placed = [(p.tile, p.x, p.y, p.rotation) for p in built.placements]
    for i, field in ((-1, 1), (-1, 2), (-1, 3), (0, 0)):
        changed = list(placed)
        row = list(changed[i])
        row[field] = "L07" if field == 0 else row[field] + 90
        changed[i] = tuple(row)
        assert Territory.of(*changed) != built
    assert Territory.of(*placed[:-1]) != built
    assert built != placed and built != None  # noqa: E711
