"""Points: the 16 scoring tiles, the end-game scrolls, gold, and income.

Each scoring tile is scored from its ``formal`` definition in ``scoring_tiles.json`` (the
``kind`` names the rule; its numbers come from the data). Decisions where the rule book is
silent follow the data file's ``engine_notes`` and are collected here as constants:

* The castle tile is a landscape tile ("dílek krajiny s hradem" in the Czech book): it counts
  for squares of four, vertical lines and tiles connected to the castle (it is connected to
  itself).
* A vertical line is a column with at least 3 contiguous tiles; a column scores once however
  long it is or however many runs it holds (Czech book: 3 tiles, a gap and 3 more is 3 VP).
* Majorities: most gets ``first``; a tie for most gives every tied player ``first`` and no
  second place; otherwise the next-highest value gets ``second`` (shared on a tie); nobody
  scores with less than ``min``.
* Scrolls: ``floor(count / per)`` points, doubled when the scroll lies in a completed area
  (the floor comes first: 5 sheep on a doubled "1 per 2 sheep" scroll give 2 x 2 = 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.games.skye.data import SCORING, ScoringTileDef
from shared.games.skye.territory import Territory

# Gold per player ahead on the score track, by round (index 0 = round 1). The Czech book:
# "from round 3", shown by the round track; its example gives 3 in round 5. The 5-player side
# uses the same amounts for its 5 rounds (harlyq: 0, 0, 1, 2, 3).
CATCH_UP_GOLD = (0, 0, 1, 2, 3, 4)

CASTLE_IS_LANDSCAPE = True
VERTICAL_LINE_NEEDS_CONTIGUOUS = True

# scroll type -> (icon counted, how many per point)
SCROLLS: Mapping[str, tuple[str, int]] = {
    "per_2_sheep": ("sheep", 2),
    "per_cattle": ("cattle", 1),
    "per_2_whisky_tiles": ("whisky_tiles", 2),
    "per_broch": ("broch", 1),
    "per_2_ships": ("ship", 2),
    "per_farm": ("farm", 1),
    "per_lighthouse": ("lighthouse", 1),
}

GOLD_PER_POINT = 5


def _cells(t: Territory) -> set[tuple[int, int]]:
    return {c for c, tile in t.tiles() if CASTLE_IS_LANDSCAPE or not tile.castle}


def squares(t: Territory) -> int:
    """Blocks of 2 x 2 tiles (a tile may be in several)."""
    cells = _cells(t)
    return sum(
        1
        for (x, y) in cells
        if (x + 1, y) in cells and (x, y + 1) in cells and (x + 1, y + 1) in cells
    )


def vertical_lines(t: Territory, min_len: int = 3) -> int:
    """Columns holding a line of at least ``min_len`` tiles; each column counts once."""
    columns: dict[int, list[int]] = {}
    for x, y in _cells(t):
        columns.setdefault(x, []).append(y)
    count = 0
    for ys in columns.values():
        if not VERTICAL_LINE_NEEDS_CONTIGUOUS:
            count += len(ys) >= min_len
            continue
        ys.sort()
        run = best = 1
        for a, b in zip(ys, ys[1:], strict=False):
            run = run + 1 if b == a + 1 else 1
            best = max(best, run)
        count += best >= min_len
    return count


def animals_near_farms(t: Territory, icons: Sequence[str] = ("sheep", "cattle")) -> int:
    """Animals on a tile that has a farm or touches one by edge or corner (each counted once)."""
    farms = {c for c, tile in t.tiles() if tile.icons.get("farm", 0)}
    total = 0
    for (x, y), tile in t.tiles():
        animals = sum(tile.icons.get(i, 0) for i in icons)
        if animals and any((x + dx, y + dy) in farms for dx in (-1, 0, 1) for dy in (-1, 0, 1)):
            total += animals
    return total


def road_tiles(t: Territory) -> int:
    """Tiles joined to the castle by road (the castle counts when it is a landscape tile)."""
    cells = t.road_connected()
    castle = t.castle_cell()
    return len(cells) - (0 if CASTLE_IS_LANDSCAPE or castle not in cells else 1)


def road_icons(t: Territory, icon: str) -> int:
    """Icons of a kind on tiles joined to the castle by road."""
    cells = t.road_connected()
    return sum(tile.icons.get(icon, 0) for c, tile in t.tiles() if c in cells)


def connected_whisky_tiles(t: Territory) -> int:
    """Whisky tiles joined to the castle by road (income)."""
    cells = t.road_connected()
    return sum(1 for c, tile in t.tiles() if c in cells and tile.whisky)


def sets_of(t: Territory, icons: Sequence[str]) -> int:
    """Complete sets of one of each icon (each icon in one set only)."""
    return min(t.icon_total(i) for i in icons)


def majority(values: Sequence[int], first: int, second: int, minimum: int = 1) -> tuple[int, ...]:
    """Points for a majority tile: see the module notes for the tie rules."""
    out = [0] * len(values)
    eligible = [v for v in values if v >= minimum]
    if not eligible:
        return tuple(out)
    top = max(eligible)
    leaders = [i for i, v in enumerate(values) if v == top]
    for i in leaders:
        out[i] = first
    if len(leaders) == 1:
        rest = [v for i, v in enumerate(values) if i not in leaders and v >= minimum]
        if rest:
            runner = max(rest)
            for i, v in enumerate(values):
                if v == runner and i not in leaders:
                    out[i] = second
    return tuple(out)


def _measure(formal: Mapping[str, Any], t: Territory, gold: int) -> int:
    measure = str(formal["measure"])
    if measure.startswith("tiles_with_whisky"):
        return t.whisky_tiles()
    if measure.startswith("ship"):
        return t.icon_total("ship")
    if measure.startswith("gold"):
        return gold
    raise ValueError(f"unknown majority measure {measure!r}")


def _table_points(table: Mapping[str, int], n: int) -> int:
    best = 0
    for key, pts in table.items():
        at_least = key.endswith("+")
        k = int(key.rstrip("+"))
        if n == k or (at_least and n >= k):
            best = max(best, pts)
    return best


def _terrain_ok(formal: Mapping[str, Any], terrain: str) -> bool:
    wanted = formal.get("terrains", formal.get("terrain", "any"))
    if wanted == "any":
        return True
    if isinstance(wanted, str):
        return terrain == wanted
    return terrain in wanted


def _per_player(formal: Mapping[str, Any], t: Territory) -> int:
    """Points of a tile that looks at one territory only."""
    kind = formal["kind"]
    if kind == "per_2x2_block":
        return formal["vp_each"] * squares(t)
    if kind == "per_icon":
        return formal["vp_each"] * t.icon_total(formal["icon"])
    if kind == "per_area_table":
        return sum(
            _table_points(formal["table"], a.icons.get(formal["icon"], 0))
            for a in t.areas()
            if a.terrain == formal["terrain"]
            and (a.completed or not formal.get("requires_completed"))
        )
    if kind == "per_icon_near":
        return formal["vp_each"] * animals_near_farms(t, formal["icons"])
    if kind == "per_icon_road_connected":
        return formal["vp_each"] * road_icons(t, formal["icon"])
    if kind == "per_tile_road_connected":
        return formal["vp_each"] * road_tiles(t)
    if kind == "largest_area_size":
        sizes = [
            a.size
            for a in t.areas()
            if a.terrain == formal["terrain"]
            and (a.completed or not formal.get("requires_completed"))
        ]
        return formal["vp_per_tile"] * max(sizes, default=0)
    if kind == "count_completed_areas":
        return formal["vp_each"] * sum(
            1
            for a in t.areas()
            if a.completed
            and _terrain_ok(formal, a.terrain)
            and a.size >= formal.get("min_tiles", 1)
        )
    if kind == "sets":
        return formal["vp_each"] * sets_of(t, formal["icons"])
    if kind == "per_area_condition":
        needs = formal["needs"]
        return formal["vp_each"] * sum(
            1
            for a in t.areas()
            if a.terrain == formal["terrain"]
            and (a.completed or not formal.get("requires_completed"))
            and a.icons.get("ship", 0) >= needs.get("ship", 0)
            and a.icons.get("lighthouse", 0) >= needs.get("adjacent_lighthouse", 0)
        )
    if kind == "vertical_runs":
        return formal["vp_each"] * vertical_lines(t, formal["min_len"])
    raise ValueError(f"unknown scoring kind {kind!r}")


def score_tile(
    tile: ScoringTileDef | str, territories: Sequence[Territory], golds: Sequence[int]
) -> tuple[int, ...]:
    """Points each player gets from one scoring tile (``golds``: gold held now, per seat)."""
    defn = SCORING[tile] if isinstance(tile, str) else tile
    formal = defn.formal
    if formal["kind"] == "majority":
        values = [_measure(formal, t, g) for t, g in zip(territories, golds, strict=True)]
        return majority(values, formal["first"], formal["second"], formal.get("min", 1))
    return tuple(_per_player(formal, t) for t in territories)


def scroll_count(t: Territory, what: str) -> int:
    """What a scroll counts over the whole territory."""
    return t.whisky_tiles() if what == "whisky_tiles" else t.icon_total(what)


def scroll_points(t: Territory) -> dict[str, int]:
    """End-game points per scroll type (both scrolls of a type add up; completed area x2)."""
    out: dict[str, int] = {}
    for cell, tile in t.tiles():
        if tile.scroll is None or tile.scroll_area is None:
            continue
        what, per = SCROLLS[tile.scroll]
        pts = scroll_count(t, what) // per
        if t.areas()[t.area_index(cell, tile.scroll_area)].completed:
            pts *= 2
        out[tile.scroll] = out.get(tile.scroll, 0) + pts
    return out


def gold_points(gold: int) -> int:
    """End-game points for gold: 1 per 5."""
    return gold // GOLD_PER_POINT


def leftover_gold(gold: int) -> int:
    """The tie-break: coins not turned into points ("zbylé neobodované mince")."""
    return gold % GOLD_PER_POINT


def castle_income(t: Territory) -> int:
    """The castle's printed income (5)."""
    return sum(tile.income for _, tile in t.tiles() if tile.castle)


def catch_up(round_no: int, scores: Sequence[int], seat: int) -> int:
    """Gold for the players ahead of ``seat`` on the score track (more points) this round."""
    per = CATCH_UP_GOLD[round_no - 1] if round_no <= len(CATCH_UP_GOLD) else CATCH_UP_GOLD[-1]
    return per * sum(1 for s in scores if s > scores[seat])
