"""The Isle of Skye component data, loaded once from the packaged JSON into immutable structures.

``data/tiles.json`` and ``data/scoring_tiles.json`` are copies of ``shared/data/skye/`` and are
read exactly as shipped. Disputed values stay data: to play another reading of a tile, put the
changed fields in ``data/tile_overrides.json`` (its ``"tiles"`` object; for example the harlyq
road exits of ``L02``) rather than editing code; ``build_tiles`` applies them on top of
tiles.json. The engine's tests pass with that file empty, i.e. the data exactly as shipped.

Directions are indices ``N=0, E=1, S=2, W=3``. A tile's printed frame is rotation 0; rotating a
tile ``k`` quarter turns clockwise moves the edge printed at ``d`` to ``(d + k) % 4``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

DIRS = ("N", "E", "S", "W")
DIR_INDEX = {d: i for i, d in enumerate(DIRS)}
# (dx, dy) per direction; y grows north.
OFFSETS = ((0, 1), (1, 0), (0, -1), (-1, 0))
ROTATIONS = (0, 90, 180, 270)
TERRAINS = ("pasture", "mountain", "water")
# Terrain -> 2-bit code (0 is left for "no constraint"): edge tables pack one code per
# direction, N in the lowest bits, so a placement test is one integer comparison.
TERRAIN_CODES: Mapping[str, int] = MappingProxyType({t: i + 1 for i, t in enumerate(TERRAINS)})
ICONS = ("sheep", "cattle", "ship", "whisky", "farm", "broch", "lighthouse")
SCROLL_TYPES = (
    "per_2_sheep",
    "per_cattle",
    "per_2_whisky_tiles",
    "per_broch",
    "per_2_ships",
    "per_farm",
    "per_lighthouse",
)
LETTERS = ("A", "B", "C", "D")

# Which of the data file's round schedules the 5-player game uses (the 5-player schedule is
# disputed: two sources against one; see scoring_tiles.json).
FIVE_PLAYER_SCHEDULE_KEY = "5_players_per_harlyq_and_LMU"
FOUR_PLAYER_SCHEDULE_KEY = "2-4_players"


@dataclass(frozen=True, slots=True, kw_only=True)
class AreaDef:
    """One terrain region printed on a tile (in the tile's printed frame)."""

    index: int
    id: str
    terrain: str
    edges: frozenset[int]
    icons: Mapping[str, int]
    scrolls: tuple[str, ...]

    @property
    def enclosed(self) -> bool:
        """True when the region touches no edge (a lake or hill inside the tile)."""
        return not self.edges


@dataclass(frozen=True, slots=True, kw_only=True)
class Orientation:
    """A tile turned ``k`` quarter turns clockwise: what lies at each edge direction."""

    edges: tuple[str, str, str, str]  # terrain at N, E, S, W
    edge_area: tuple[int, int, int, int]  # index of the area touching N, E, S, W
    area_edges: tuple[frozenset[int], ...]  # per area, the directions it touches
    segments: tuple[frozenset[int], ...]  # road pieces: the directions each leaves by
    code: int  # the edge terrains packed: TERRAIN_CODES[edges[d]] << (2 * d)


@dataclass(frozen=True, slots=True, kw_only=True)
class TileDef:
    """A landscape or castle tile with every rotation precomputed."""

    id: str
    index: int
    castle: bool
    areas: tuple[AreaDef, ...]
    icons: Mapping[str, int]  # icon totals on the tile
    whisky: bool
    scroll: str | None
    scroll_area: int | None
    income: int
    orientations: tuple[Orientation, Orientation, Orientation, Orientation]

    def edges(self, rotation: int = 0) -> tuple[str, str, str, str]:
        """Terrain at N, E, S, W after ``rotation`` degrees clockwise."""
        return self.orientations[rotation // 90].edges


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoringTileDef:
    """One of the 16 scoring tiles, with its formal definition from the data file."""

    id: str
    index: int
    name: str
    definition: str
    formal: Mapping[str, Any]


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def pack_edges(edges: tuple[str | None, ...] | list[str]) -> int:
    """Terrains per direction (None: anything goes) as one int, 2 bits per direction."""
    return sum(TERRAIN_CODES[e] << (2 * d) for d, e in enumerate(edges) if e is not None)


def _orient(
    areas: tuple[AreaDef, ...], segments: tuple[frozenset[int], ...], k: int
) -> Orientation:
    def turn(dirs: frozenset[int]) -> frozenset[int]:
        return frozenset((d + k) % 4 for d in dirs)

    area_edges = tuple(turn(a.edges) for a in areas)
    edge_area = [0, 0, 0, 0]
    edges = ["", "", "", ""]
    for a, dirs in zip(areas, area_edges, strict=True):
        for d in dirs:
            edge_area[d] = a.index
            edges[d] = a.terrain
    return Orientation(
        edges=tuple(edges),  # type: ignore[arg-type]
        edge_area=tuple(edge_area),  # type: ignore[arg-type]
        area_edges=area_edges,
        segments=tuple(turn(s) for s in segments),
        code=pack_edges(edges),
    )


def _tile(doc: Mapping[str, Any], index: int, castle: bool) -> TileDef:
    area_ids = [a["id"] for a in doc["areas"]]
    icons_by_area: dict[str, dict[str, int]] = {a: {} for a in area_ids}
    totals: dict[str, int] = {}
    for f in doc.get("features", ()):
        kind = f["type"]
        if kind not in ICONS:  # the castle's own "castle" feature is not an icon that scores
            continue
        totals[kind] = totals.get(kind, 0) + f["count"]
        # Features with no area (none in the shipped data) are put in the first area.
        where = f.get("area") or area_ids[0]
        icons_by_area[where][kind] = icons_by_area[where].get(kind, 0) + f["count"]
    scroll = doc.get("scroll")
    areas = tuple(
        AreaDef(
            index=i,
            id=a["id"],
            terrain=a["terrain"],
            edges=frozenset(DIR_INDEX[e] for e in a["edges"]),
            icons=MappingProxyType(icons_by_area[a["id"]]),
            scrolls=(scroll["type"],) if scroll and scroll["area"] == a["id"] else (),
        )
        for i, a in enumerate(doc["areas"])
    )
    segments = tuple(
        frozenset(DIR_INDEX[e] for e in seg) for seg in doc["roads"]["segments"] if seg
    )
    return TileDef(
        id=doc["id"],
        index=index,
        castle=castle,
        areas=areas,
        icons=MappingProxyType(totals),
        whisky=bool(doc.get("has_whisky")) or totals.get("whisky", 0) > 0,
        scroll=scroll["type"] if scroll else None,
        scroll_area=area_ids.index(scroll["area"]) if scroll else None,
        income=int(doc.get("income_gold", 0)),
        orientations=tuple(_orient(areas, segments, k) for k in range(4)),  # type: ignore[arg-type]
    )


def _read(name: str) -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("data", name).read_text("utf-8"))


def build_tiles(
    doc: Mapping[str, Any], overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> tuple[TileDef, ...]:
    """Castle tiles then landscape tiles from a ``tiles.json`` document, with ``overrides``."""
    overrides = overrides or {}
    out: list[TileDef] = []
    for key, castle in (("castle_tiles", True), ("landscape_tiles", False)):
        for raw in doc[key]:
            patched = {**raw, **overrides.get(raw["id"], {})}
            out.append(_tile(patched, len(out), castle))
    return tuple(out)


TILES_DOC = _read("tiles.json")
SCORING_DOC = _read("scoring_tiles.json")
# Tile id -> top-level fields replacing those of tiles.json (see tile_overrides.json "about").
TILE_OVERRIDES: Mapping[str, Mapping[str, Any]] = _read("tile_overrides.json")["tiles"]

ALL_TILES: tuple[TileDef, ...] = build_tiles(TILES_DOC, TILE_OVERRIDES)
TILES: Mapping[str, TileDef] = MappingProxyType({t.id: t for t in ALL_TILES})
CASTLE_IDS: tuple[str, ...] = tuple(t.id for t in ALL_TILES if t.castle)
LANDSCAPE_IDS: tuple[str, ...] = tuple(t.id for t in ALL_TILES if not t.castle)

SCORING_TILES: tuple[ScoringTileDef, ...] = tuple(
    sorted(
        (
            ScoringTileDef(
                id=t["id"],
                index=t["index_0_15"],
                name=t["name"],
                definition=t["definition"],
                formal=_freeze(t["formal"]),
            )
            for t in SCORING_DOC["tiles"]
        ),
        key=lambda s: s.index,
    )
)
SCORING: Mapping[str, ScoringTileDef] = MappingProxyType({s.id: s for s in SCORING_TILES})


def _schedule(key: str) -> tuple[tuple[str, ...], ...]:
    table = SCORING_DOC["round_schedule"][key]
    return tuple(tuple(table[str(r)]) for r in range(1, len(table) + 1))


SCHEDULE_2_4 = _schedule(FOUR_PLAYER_SCHEDULE_KEY)
SCHEDULE_5 = _schedule(FIVE_PLAYER_SCHEDULE_KEY)


def schedule(seats: int) -> tuple[tuple[str, ...], ...]:
    """Per round (index 0 = round 1), the letters of the scoring tiles that score."""
    return SCHEDULE_5 if seats == 5 else SCHEDULE_2_4


def tile_id(value: Any) -> str | None:
    """The data-file id a client means by ``value``, or None.

    Accepts the id itself (``"L07"``, ``"blue_castle"``) and, for landscape tiles, the number
    as an int or a digit string (``7``, ``"7"``, ``"07"`` mean ``"L07"``): JSON object keys are
    always strings, so both spellings must mean the same tile.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        candidate = f"L{value:02d}"
        return candidate if candidate in TILES and value > 0 else None
    if isinstance(value, str):
        if value in TILES:
            return value
        if value.isdigit():
            try:
                return tile_id(int(value))
            except ValueError:  # a digit int() does not read ("²"), or too many digits
                return None
    return None


def scoring_tile_id(value: Any) -> str | None:
    """The scoring tile a client means: its id, or its index 0..15 (int or digit string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if value in SCORING:
            return value
        if value.isdigit():
            try:
                return scoring_tile_id(int(value))
            except ValueError:  # a digit int() does not read ("²"), or too many digits
                return None
        return None
    if isinstance(value, int) and 0 <= value < len(SCORING_TILES):
        return SCORING_TILES[value].id
    return None
