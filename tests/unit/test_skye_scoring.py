"""Isle of Skye points: the 16 scoring tiles, the 7 scrolls, income and gold, worked by hand.

Territories are built from the blue castle (edges N p, E w, S p, W m; one road N-S-W) with real
tiles from tiles.json. Comments give each tile as placed: edges N E S W, the areas that matter,
and the icons.
"""

from __future__ import annotations

import pytest

from shared.games.skye import scoring
from shared.games.skye.data import SCORING
from shared.games.skye.scoring import majority, score_tile, scroll_points
from shared.games.skye.territory import Territory, castle_territory


def build(*placements: tuple[str, int, int, int]) -> Territory:
    """From the blue castle, asserting each placement legal in order."""
    t = castle_territory("blue_castle")
    for tile, x, y, r in placements:
        assert t.check(tile, x, y, r) is None, (tile, x, y, r)
        t = t.place(tile, x, y, r)
    return t


def lake() -> Territory:
    """Territory A.

    (1,0)  L66 @180: w m w w; water N,S,W (2 ships); mountain E.
    (1,1)  L10 @180: m m w p; water S; pasture W; mountain N,E (1 broch).
    (1,-1) L06 @0:   w m m m; water N; mountain E,S,W (1 broch, whisky).
    (-1,0) L22 @90:  p m w p; mountain E; water S; pasture W,N (farm, 1 sheep).

    Completed: the lake castle-E + L66 + L10 + L06 (4 tiles) and the mountain castle-W + L22
    (2 tiles). Column x=1 holds y=-1,0,1. Roads: the castle's W road meets L22's E edge, which
    has no road (L22's road runs W-N): only the castle is road-connected.
    """
    return build(("L66", 1, 0, 180), ("L10", 1, 1, 180), ("L06", 1, -1, 0), ("L22", -1, 0, 90))


def road() -> Territory:
    """Territory B.

    (0,1)  L25 @0: p p p m; roads N,S,W; 1 cattle, 1 sheep, whisky.
    (0,-1) L21 @0: p p m m; roads E,S (none on N); 1 sheep, whisky.
    (0,2)  L32 @0: p p p m; roads N,S,W; 2 cattle, 1 sheep, whisky.

    Road: castle N - L25 S, L25 N - L32 S. L21 is not joined (no road on its N edge).
    """
    return build(("L25", 0, 1, 0), ("L21", 0, -1, 0), ("L32", 0, 2, 0))


def mixed() -> Territory:
    """Territory E.

    (-1,0)  L08 @0:   p m m m; mountain E,S,W (1 broch); pasture N.
    (-1,-1) L09 @90:  m p m m; mountain N,S,W (1 broch); pasture E; enclosed lake.
    (-2,0)  L05 @0:   p m m m; mountain E,S,W (1 broch, whisky); pasture N.
    (0,1)   L04 @180: m p p m; pasture S,E (farm, 1 sheep); mountain W,N (1 broch).
    (1,0)   L49 @0:   w w m w; water N,E,W (lighthouse); mountain S.
    (1,1)   L69 @0:   w w w p; water N,E,S (1 ship); pasture W.

    Mountain castle-W + L08 + L09 + L05 holds 3 brochs (open). Water castle-E + L49 + L69
    holds 1 ship and 1 lighthouse (open). The only completed area is L09's enclosed lake.
    Cells (0,0), (1,0), (0,1), (1,1) make one 2x2 square.
    """
    return build(
        ("L08", -1, 0, 0),
        ("L09", -1, -1, 90),
        ("L05", -2, 0, 0),
        ("L04", 0, 1, 180),
        ("L49", 1, 0, 0),
        ("L69", 1, 1, 0),
    )


def solo(tile: str, t: Territory) -> int:
    return score_tile(tile, [t], [0])[0]


# -- the 16 scoring tiles ---------------------------------------------------------------------


def test_square_plots() -> None:
    # E: (0,0) (1,0) (0,1) (1,1) occupied -> 1 square -> 2 VP. A: no 2x2 block.
    assert solo("square_plots", mixed()) == 2
    assert solo("square_plots", lake()) == 0
    # L21 @180 (m m p p) at (-1,1): S p meets L08's N (p), E m meets L04's W (m). A second
    # square {(-1,0), (0,0), (-1,1), (0,1)} -> 2 squares -> 4 VP.
    t = mixed()
    assert t.check("L21", -1, 1, 180) is None
    assert solo("square_plots", t.place("L21", -1, 1, 180)) == 4


def test_sheep() -> None:
    # B: L25 1 + L21 1 + L32 1 = 3 sheep. A: L22's 1 sheep.
    assert solo("sheep", road()) == 3
    assert solo("sheep", lake()) == 1


def test_brochs_in_mountains() -> None:
    # E: area with 3 brochs -> 6; L04's own mountain with 1 broch -> 1; total 7.
    assert solo("brochs_in_mountains", mixed()) == 7
    # Castle + L08 + L09: 2 brochs in one area -> 3.
    assert solo("brochs_in_mountains", build(("L08", -1, 0, 0), ("L09", -1, -1, 90))) == 3
    # Castle + L08: 1 broch -> 1.
    assert solo("brochs_in_mountains", build(("L08", -1, 0, 0))) == 1
    # A: two separate mountain areas with 1 broch each (L10, L06) -> 1 + 1.
    assert solo("brochs_in_mountains", lake()) == 2


def test_brochs_table_caps_at_six() -> None:
    # E plus L06 @180 (m m w m; 1 broch in its mountain W, N, E) at (-2,-1): N meets L05's S
    # (m), E meets L09's W (m): the big mountain area now holds 4 brochs -> still 6; plus
    # L04's 1 -> 7.
    t = mixed()
    assert t.check("L06", -2, -1, 180) is None
    t = t.place("L06", -2, -1, 180)
    big = max(t.areas(), key=lambda a: a.icons.get("broch", 0))
    assert big.icons["broch"] == 4
    assert solo("brochs_in_mountains", t) == 7


def test_whisky_majority() -> None:
    # Whisky tiles: B 3 (L25, L21, L32; road connection not needed), A 1 (L06), E 1 (L05),
    # a bare castle 0. Most: B 5; second place tied A and E: 2 each; castle: none.
    ts = [road(), lake(), mixed(), castle_territory("red_castle")]
    assert score_tile("whisky_majority", ts, [0, 0, 0, 0]) == (5, 2, 2, 0)
    # Tie for first: both 5, no second place (A would have been second).
    assert score_tile("whisky_majority", [road(), road(), lake()], [0, 0, 0]) == (5, 5, 0)
    # Nobody has whisky: nobody scores.
    c = castle_territory("blue_castle")
    assert score_tile("whisky_majority", [c, c], [0, 0]) == (0, 0)


def test_animals_near_farms() -> None:
    # A: the farm is on L22, which carries 1 sheep -> 1.
    assert solo("animals_near_farms", lake()) == 1
    # B: no farm -> 0.
    assert solo("animals_near_farms", road()) == 0
    # Castle + L25 (0,1: 1 sheep, 1 cattle) + L29 south (0,-1) @0 (p w p p: farm, 1 sheep,
    # 1 cattle) + L32 (0,2: 2 cattle, 1 sheep). L29's own animals: 2. The 8 neighbours of
    # (0,-1) are x in -1..1, y in -2..0: no other animals there -> 2.
    t = build(("L25", 0, 1, 0), ("L29", 0, -1, 0), ("L32", 0, 2, 0))
    assert solo("animals_near_farms", t) == 2
    # Put L22 (farm, 1 sheep) at (-1,0) @90: its 8-neighbourhood holds L25 (-1+1, 0+1) = (0,1)
    # with 2 animals and L29 (0,-1) (already counted, counted once) -> 2 + 2 + L22's sheep 1.
    assert t.check("L22", -1, 0, 90) is None
    t2 = t.place("L22", -1, 0, 90)
    assert solo("animals_near_farms", t2) == 5


def test_cattle_on_roads() -> None:
    # B: cattle on road-joined tiles: L25 1 + L32 2 = 3 -> 6 VP.
    assert solo("cattle_on_roads", road()) == 6
    # Castle + L56 (cattle, no roads) west @90 (p m w w): not joined -> 0.
    assert solo("cattle_on_roads", build(("L56", -1, 0, 90))) == 0


def test_road_connected_tiles() -> None:
    # B: castle, L25, L32 (castle counts) -> 3. A: castle only -> 1.
    assert solo("road_connected_tiles", road()) == 3
    assert solo("road_connected_tiles", lake()) == 1


def test_largest_completed_lake() -> None:
    # A: the completed lake spans 4 tiles -> 8. E: only L09's enclosed lake, 1 tile -> 2.
    assert solo("largest_completed_lake", lake()) == 8
    assert solo("largest_completed_lake", mixed()) == 2
    # B: no completed water -> 0.
    assert solo("largest_completed_lake", road()) == 0


def test_completed_areas() -> None:
    # A: lake + mountain -> 2. E: L09's enclosed lake -> 1. B: none.
    assert solo("completed_areas", lake()) == 2
    assert solo("completed_areas", mixed()) == 1
    assert solo("completed_areas", road()) == 0


def test_completed_areas_3plus() -> None:
    # A: the 4-tile lake counts (3 VP); the 2-tile mountain does not.
    assert solo("completed_areas_3plus", lake()) == 3
    assert solo("completed_areas_3plus", mixed()) == 0


def test_broch_farm_lighthouse_sets() -> None:
    # E: brochs 4 (L08, L09, L05, L04), farm 1 (L04), lighthouse 1 (L49) -> 1 set -> 5.
    assert solo("broch_farm_lighthouse_sets", mixed()) == 5
    # A: 2 brochs, 1 farm, no lighthouse -> 0.
    assert solo("broch_farm_lighthouse_sets", lake()) == 0


def test_ships_majority() -> None:
    # Ships: A 2 (L66), E 1 (L69), B 0 -> 5, 2, 0.
    assert score_tile("ships_majority", [lake(), mixed(), road()], [0, 0, 0]) == (5, 2, 0)


def test_gold_majority() -> None:
    c = castle_territory("blue_castle")
    assert score_tile("gold_majority", [c] * 4, [3, 7, 7, 0]) == (0, 5, 5, 0)
    assert score_tile("gold_majority", [c] * 3, [10, 3, 0]) == (5, 2, 0)
    assert score_tile("gold_majority", [c] * 4, [9, 4, 4, 1]) == (5, 2, 2, 0)
    assert score_tile("gold_majority", [c] * 2, [0, 0]) == (0, 0)


def test_ship_lighthouse_waters() -> None:
    # E: water castle-E + L49 (lighthouse) + L69 (1 ship), not completed -> 3.
    assert solo("ship_lighthouse_waters", mixed()) == 3
    # A: the lake has ships but no lighthouse -> 0.
    assert solo("ship_lighthouse_waters", lake()) == 0


def test_vertical_lines() -> None:
    # A: column x=1 holds y=-1,0,1 -> 3. B: column 0 holds y=-1..2 (4 tiles), once -> 3.
    assert solo("vertical_lines", lake()) == 3
    assert solo("vertical_lines", road()) == 3
    # E: no column with 3 -> 0.
    assert solo("vertical_lines", mixed()) == 0


def test_vertical_line_counts_once_and_needs_contiguous_tiles() -> None:
    c = castle_territory
    # Unchecked layout (geometry only): column 0 with y=0,1,2, gap, 4,5,6 -> once (3 VP).
    t = Territory.of(
        ("blue_castle", 0, 0, 0),
        *[("L25", 0, y, 0) for y in (1, 2)],
        *[("L32", 0, y, 0) for y in (4, 5, 6)],
    )
    assert scoring.vertical_lines(t) == 1
    # Column 0 with y=0,1, gap, 3: no run of 3 -> 0.
    t2 = Territory.of(("blue_castle", 0, 0, 0), ("L25", 0, 1, 0), ("L32", 0, 3, 0))
    assert scoring.vertical_lines(t2) == 0
    assert scoring.vertical_lines(c("blue_castle")) == 0


def test_completed_mountains() -> None:
    # A: castle-W + L22 -> 1 completed mountain area -> 2 VP.
    assert solo("completed_mountains", lake()) == 2
    assert solo("completed_mountains", mixed()) == 0


def test_every_scoring_tile_is_tested() -> None:
    tested = {
        "square_plots", "sheep", "brochs_in_mountains", "whisky_majority",
        "animals_near_farms", "cattle_on_roads", "road_connected_tiles",
        "largest_completed_lake", "completed_areas", "completed_areas_3plus",
        "broch_farm_lighthouse_sets", "ships_majority", "gold_majority",
        "ship_lighthouse_waters", "vertical_lines", "completed_mountains",
    }  # fmt: skip
    assert tested == set(SCORING)


def test_majority_rules() -> None:
    assert majority([3, 1, 1], 5, 2) == (5, 2, 2)
    assert majority([3, 3, 1], 5, 2) == (5, 5, 0)
    assert majority([3, 0, 0], 5, 2) == (5, 0, 0)  # second needs at least 1 too
    assert majority([0, 0, 0], 5, 2) == (0, 0, 0)


# -- scrolls ----------------------------------------------------------------------------------


def test_scroll_per_broch_doubled_in_completed_area() -> None:
    # L28 (per_broch scroll in its S mountain) at (-1,0) @270 (w m p w): the scroll's mountain
    # faces E and meets the castle's W mountain -> completed. Brochs: L04 (0,1) @180 and L01
    # (0,-1) @0 -> 2 brochs -> 2 x 2 = 4.
    t = build(("L28", -1, 0, 270), ("L04", 0, 1, 180), ("L01", 0, -1, 0))
    assert scroll_points(t) == {"per_broch": 4}


def test_scroll_per_2_sheep_rounds_down() -> None:
    # L34 (per_2_sheep in its E-S pasture) north @0; L19 south @0 (2 sheep); L27 west @180
    # (m m w p; 3 sheep). 5 sheep -> 2 VP (the book's example); the pasture is open.
    t = build(("L34", 0, 1, 0), ("L19", 0, -1, 0), ("L27", -1, 0, 180))
    assert t.icon_total("sheep") == 5
    assert scroll_points(t) == {"per_2_sheep": 2}


def test_scroll_per_2_ships_floor_before_doubling() -> None:
    # L47 (per_2_ships in its E-S water) east @180 (w p p w): water W (castle) and N; L10 @180
    # at (1,1) closes the N side -> completed. Ships: L53 south @0 (2) + L56 west @90 (1) = 3
    # -> floor(3 / 2) = 1, doubled = 2 (not floor(3 / 2 * 2) = 3).
    t = build(("L47", 1, 0, 180), ("L10", 1, 1, 180), ("L53", 0, -1, 0), ("L56", -1, 0, 90))
    assert t.icon_total("ship") == 3
    assert scroll_points(t) == {"per_2_ships": 2}


def test_scroll_per_cattle() -> None:
    # L24 (per_cattle in its N-S pasture) north @0; L32 beyond (2 cattle); L25 south (1 cattle)
    # -> 3; pasture open -> 3.
    t = build(("L24", 0, 1, 0), ("L32", 0, 2, 0), ("L25", 0, -1, 0))
    assert scroll_points(t) == {"per_cattle": 3}
    # Roads: castle N - L24 (N-S) - L32, castle S - L25: all 3 cattle joined -> 6 VP.
    assert solo("cattle_on_roads", t) == 6


def test_scroll_per_2_whisky_tiles() -> None:
    # L23 (per_2_whisky_tiles in its mountain) west @90 (m m w m): mountain E, W, N, open.
    # Whisky tiles L25, L21, L32 -> 3 -> 1.
    t = build(("L23", -1, 0, 90), ("L25", 0, 1, 0), ("L21", 0, -1, 0), ("L32", 0, 2, 0))
    assert scroll_points(t) == {"per_2_whisky_tiles": 1}


def test_scroll_per_farm() -> None:
    # L13 (per_farm in its pasture) north @180 (m p p m); farms: L22 west @90, L29 south @0
    # -> 2; the pasture runs on into the castle's, open -> 2.
    t = build(("L13", 0, 1, 180), ("L22", -1, 0, 90), ("L29", 0, -1, 0))
    assert scroll_points(t) == {"per_farm": 2}


def test_scroll_per_lighthouse_doubled() -> None:
    # L63 (per_lighthouse in its water) east @270 (w p p w): water W and N; L10 @180 north of
    # it closes the lake. Lighthouses: L41 south @0 -> 1 -> doubled 2.
    t = build(("L63", 1, 0, 270), ("L10", 1, 1, 180), ("L41", 0, -1, 0))
    assert scroll_points(t) == {"per_lighthouse": 2}


def test_no_scroll_no_points() -> None:
    assert scroll_points(mixed()) == {}


# -- income and gold --------------------------------------------------------------------------


def test_income_whisky_only_when_road_reaches_the_castle() -> None:
    # B: castle 5; whisky on L25 and L32 (joined) +2; L21's whisky road does not reach: +0.
    t = road()
    assert scoring.castle_income(t) == 5
    assert scoring.connected_whisky_tiles(t) == 2
    assert t.whisky_tiles() == 3


@pytest.mark.parametrize(("round_no", "expected"), [(1, 0), (2, 0), (3, 2), (4, 4), (5, 6), (6, 8)])
def test_catch_up_gold(round_no: int, expected: int) -> None:
    # Seat 0 has 10 points, two players are ahead (20, 30), one behind (5): 2 x (0,0,1,2,3,4).
    # Round 5: 2 x 3 = 6, the book's example.
    assert scoring.catch_up(round_no, [10, 20, 30, 5], 0) == expected


def test_catch_up_ties_are_not_ahead() -> None:
    assert scoring.catch_up(5, [10, 10, 9], 0) == 0
    assert scoring.catch_up(5, [10, 10, 9], 2) == 6


def test_gold_points_and_leftover() -> None:
    assert [scoring.gold_points(g) for g in (0, 4, 5, 14, 15)] == [0, 0, 1, 2, 3]
    assert [scoring.leftover_gold(g) for g in (0, 4, 5, 14, 15)] == [0, 4, 0, 4, 0]
