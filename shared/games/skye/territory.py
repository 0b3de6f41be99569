"""A clan territory: tiles on a square grid, placement legality, terrain areas and roads.

Coordinates: ``x`` grows east, ``y`` grows north; the castle starts at (0, 0). Rotation is in
degrees clockwise (0, 90, 180, 270). Two tiles touch when they share an edge; every touching
edge must show the same terrain (roads need not match).

An *area* is the union of the printed regions of the tiles joined across touching edges (two
regions on neighbouring tiles that meet at a shared edge have the same terrain, because
placement made the edges match). An area is *completed* when no region of it touches an edge
without a neighbour: it is closed on all sides by other terrain. A region enclosed inside one
tile is a completed area on its own.

Speed (random play-outs and search bots ask for legal spots on every move): ``place`` builds
the new territory from its parent's grid and open edges plus one tile instead of from scratch,
each empty cell's edge constraints are one packed int (``data.pack_edges``) looked up in a
per-tile table of fitting rotations, and a territory caches what it derives (spots, areas,
roads). Every cache is a pure function of the placements, which never change.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from shared.games.skye.data import OFFSETS, ROTATIONS, TILES, Orientation, TileDef, pack_edges

Cell = tuple[int, int]
# A cell's constraints: per direction d, bits 2d..2d+1 hold the terrain code a tile placed
# there must show at d (0: no neighbour on that side). 0 overall means no contact.
Needs = int


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """A tile put at (x, y), turned ``rotation`` degrees clockwise."""

    tile: str
    x: int
    y: int
    rotation: int

    def to_json(self) -> dict[str, int | str]:
        """``{"tile", "x", "y", "rotation"}`` as in views and events."""
        return {"tile": self.tile, "x": self.x, "y": self.y, "rotation": self.rotation}


@dataclass(frozen=True, slots=True, kw_only=True)
class Area:
    """A terrain area spanning one or more tiles of a territory."""

    terrain: str
    cells: frozenset[Cell]
    completed: bool
    icons: Mapping[str, int]  # icon counts inside the area
    scrolls: tuple[str, ...]  # scroll types printed inside the area

    @property
    def size(self) -> int:
        """Number of tiles the area spans."""
        return len(self.cells)


@dataclass(frozen=True, slots=True)
class _Slot:
    tile: TileDef
    orient: Orientation


class Territory:
    """An immutable territory. Build it with ``Territory.of`` or ``place``; never mutate it."""

    __slots__ = (
        "placements",
        "_grid",
        "_needs",
        "_frontier",
        "_spots",
        "_areas",
        "_area_of",
        "_roads",
        "_json",
        "_hash",
        "_flat",
    )

    def __init__(self, placements: Iterable[Placement]) -> None:
        placements = tuple(placements)
        grid: dict[Cell, _Slot] = {}
        for p in placements:
            grid[(p.x, p.y)] = _slot(p.tile, p.rotation)
        needs: dict[Cell, Needs] = {}
        for cell, slot in grid.items():
            _add_needs(needs, grid, cell, slot)
        self._init(placements, grid, needs)

    def _init(
        self, placements: tuple[Placement, ...], grid: dict[Cell, _Slot], needs: dict[Cell, Needs]
    ) -> None:
        self.placements: tuple[Placement, ...] = placements
        self._grid = grid
        # Every empty cell touching the territory -> its constraints (never 0).
        self._needs = needs
        # Caches (a territory never changes, so these never go stale).
        self._frontier: tuple[Cell, ...] | None = None
        self._spots: dict[str, tuple[tuple[int, int, int], ...]] = {}
        self._areas: tuple[Area, ...] | None = None
        self._area_of: dict[tuple[Cell, int], int] | None = None
        self._roads: frozenset[Cell] | None = None
        self._json: tuple[dict[str, int | str], ...] | None = None
        self._hash: int | None = None
        self._flat: tuple[tuple[str, int, int, int], ...] | None = None

    @classmethod
    def of(cls, *placements: tuple[str, int, int, int]) -> Territory:
        """A territory from ``(tile, x, y, rotation)`` tuples, without legality checks."""
        return cls(Placement(tile=t, x=x, y=y, rotation=r) for t, x, y, r in placements)

    # -- identity -------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Territory):
            return False
        # The search's memo keys meet equal territories built apart (a view's and a deal's)
        # on every lookup: compared as plain tuples (in C), not placement by placement
        # through the dataclass ``__eq__``; the cached hashes part most unequal ones first.
        if len(self.placements) != len(other.placements) or hash(self) != hash(other):
            return False
        return self._plain() == other._plain()

    def _plain(self) -> tuple[tuple[str, int, int, int], ...]:
        """The placements as ``(tile, x, y, rotation)`` tuples (cached)."""
        flat = self._flat
        if flat is None:
            flat = self._flat = tuple((p.tile, p.x, p.y, p.rotation) for p in self.placements)
        return flat

    def __hash__(self) -> int:
        # Cached: search memo keys hash every seat's territory per play-out, and hashing the
        # placements hashes each placement's fields.
        h = self._hash
        if h is None:
            h = self._hash = hash(self.placements)
        return h

    def __repr__(self) -> str:
        return f"Territory({list(self.placements)!r})"

    def __len__(self) -> int:
        return len(self.placements)

    def __iter__(self) -> Iterator[Placement]:
        return iter(self.placements)

    def to_json(self) -> list[dict[str, int | str]]:
        """Every placement as ``Placement.to_json`` writes it, in order (new dicts each call:
        views are built from it on every move, and their callers own what they get)."""
        if self._json is None:
            self._json = tuple(p.to_json() for p in self.placements)
        return [d.copy() for d in self._json]

    @property
    def cells(self) -> Mapping[Cell, str]:
        """Occupied cell -> tile id."""
        return MappingProxyType({c: s.tile.id for c, s in self._grid.items()})

    def tile_at(self, cell: Cell) -> TileDef | None:
        """The tile at ``cell``, or None."""
        slot = self._grid.get(cell)
        return slot.tile if slot else None

    def tiles(self) -> Iterator[tuple[Cell, TileDef]]:
        """Every (cell, tile) of the territory."""
        for cell, slot in self._grid.items():
            yield cell, slot.tile

    # -- placement --------------------------------------------------------------------------

    def frontier(self) -> tuple[Cell, ...]:
        """Empty cells that touch the territory by an edge (sorted, so listings are stable)."""
        if self._frontier is None:
            self._frontier = tuple(sorted(self._needs))
        return self._frontier

    def check(self, tile: str, x: int, y: int, rotation: int) -> str | None:
        """Why ``tile`` may not go at (x, y, rotation): a rule slug, or None when it may."""
        if (x, y) in self._grid:
            return "occupied"
        needs = self._needs.get((x, y), 0)
        if not needs:
            return "no_contact"
        if not _fits(needs, TILES[tile].orientations[rotation // 90].code):
            return "terrain_mismatch"
        return None

    def spots(self, tile: str) -> tuple[tuple[int, int, int], ...]:
        """Every legal ``(x, y, rotation)`` for ``tile``, sorted (a shared, cached tuple)."""
        found = self._spots.get(tile)
        if found is None:
            table = fit_table(tile)
            needs = self._needs
            found = tuple(
                (x, y, rotation) for (x, y) in self.frontier() for rotation in table[needs[(x, y)]]
            )
            self._spots[tile] = found
        return found

    def legal_spots(self, tile: str) -> list[tuple[int, int, int]]:
        """Every legal ``(x, y, rotation)`` for ``tile``, sorted."""
        return list(self.spots(tile))

    def has_spot(self, tile: str) -> bool:
        """True when ``tile`` has at least one legal spot."""
        # The full listing, not a short-circuit: it is cached, and the seat asking usually
        # lists its moves next.
        return bool(self.spots(tile))

    def place(self, tile: str, x: int, y: int, rotation: int) -> Territory:
        """A new territory with ``tile`` added (legality is the caller's business)."""
        placement = Placement(tile=tile, x=x, y=y, rotation=rotation)
        placements = (*self.placements, placement)
        cell = (x, y)
        if cell in self._grid:  # not a legal move; rebuild rather than patch the constraints
            return Territory(placements)
        grid = dict(self._grid)
        slot = grid[cell] = _slot(tile, rotation)
        needs = dict(self._needs)
        needs.pop(cell, None)  # absent only for a tile without contact (not a legal move)
        _add_needs(needs, grid, cell, slot)
        child = object.__new__(Territory)
        child._init(placements, grid, needs)
        if self._json is not None:
            child._json = (*self._json, placement.to_json())
        return child

    # -- areas ------------------------------------------------------------------------------

    def areas(self) -> tuple[Area, ...]:
        """Every terrain area of the territory (regions joined across touching edges)."""
        if self._areas is None:
            self._compute_areas()
        assert self._areas is not None
        return self._areas

    def area_index(self, cell: Cell, area: int) -> int:
        """Index in ``areas()`` of the area holding region ``area`` of the tile at ``cell``."""
        if self._area_of is None:
            self._compute_areas()
        assert self._area_of is not None
        return self._area_of[(cell, area)]

    def _compute_areas(self) -> None:
        # Union-find over the printed regions, numbered 0..n-1 in grid order (plain lists and
        # ints rather than dicts of tuples: it runs for every territory at most scorings).
        cells = list(self._grid)
        slots = list(self._grid.values())
        index = {cell: i for i, cell in enumerate(cells)}
        first: list[int] = []  # per tile, the number of its region 0
        regions: list[tuple[int, int]] = []  # per region, (tile index, area index)
        for i, slot in enumerate(slots):
            first.append(len(regions))
            regions.extend((i, a) for a in range(len(slot.tile.areas)))
        parent = list(range(len(regions)))
        is_open = [False] * len(regions)  # the region reaches an edge with no neighbour

        def find(r: int) -> int:
            while parent[r] != r:
                parent[r] = parent[parent[r]]  # path halving
                r = parent[r]
            return r

        for i, (x, y) in enumerate(cells):
            edge_area = slots[i].orient.edge_area
            for d, (dx, dy) in enumerate(OFFSETS):
                here = first[i] + edge_area[d]
                j = index.get((x + dx, y + dy))
                if j is None:
                    is_open[here] = True
                elif d < 2:  # each shared edge once: from its south / west tile
                    ra, rb = find(here), find(first[j] + slots[j].orient.edge_area[d + 2])
                    if ra != rb:
                        parent[rb] = ra
        # Areas in the order of their first region, each listing its regions in order.
        groups: dict[int, list[int]] = {}
        for r in range(len(regions)):
            groups.setdefault(find(r), []).append(r)
        areas: list[Area] = []
        area_of: dict[tuple[Cell, int], int] = {}
        for members in groups.values():
            for r in members:
                i, a = regions[r]
                area_of[(cells[i], a)] = len(areas)
            if len(members) == 1:  # most areas: one region, with its printed icons and scrolls
                r = members[0]
                i, a = regions[r]
                printed = slots[i].tile.areas[a]
                areas.append(
                    Area(
                        terrain=printed.terrain,
                        cells=frozenset((cells[i],)),
                        completed=not is_open[r],
                        icons=printed.icons,
                        scrolls=printed.scrolls,
                    )
                )
                continue
            icons: dict[str, int] = {}
            scrolls: list[str] = []
            for r in members:
                i, a = regions[r]
                printed = slots[i].tile.areas[a]
                for k, v in printed.icons.items():
                    icons[k] = icons.get(k, 0) + v
                scrolls.extend(printed.scrolls)
            i, a = regions[members[0]]
            areas.append(
                Area(
                    terrain=slots[i].tile.areas[a].terrain,
                    cells=frozenset(cells[regions[r][0]] for r in members),
                    completed=not any(is_open[r] for r in members),
                    icons=MappingProxyType(icons),
                    scrolls=tuple(scrolls),
                )
            )
        self._areas = tuple(areas)
        self._area_of = area_of

    # -- roads ------------------------------------------------------------------------------

    def castle_cell(self) -> Cell | None:
        """Where the castle tile lies (None for a territory without one)."""
        for cell, slot in self._grid.items():
            if slot.tile.castle:
                return cell
        return None

    def road_connected(self) -> frozenset[Cell]:
        """Cells of the tiles joined to the castle by continuous road, the castle included.

        A road runs from a road piece leaving a tile by edge ``d`` into the neighbour's road
        piece that leaves it by the opposite edge; a road ending at an edge with no road on the
        other side (or no tile) goes no further.
        """
        if self._roads is None:
            start = self.castle_cell()
            seen: set[tuple[Cell, int]] = set()
            if start is not None:
                grid = self._grid
                stack = [(start, i) for i in range(len(grid[start].orient.segments))]
                seen.update(stack)
                while stack:
                    (x, y), i = stack.pop()
                    for d in grid[(x, y)].orient.segments[i]:
                        dx, dy = OFFSETS[d]
                        ncell = (x + dx, y + dy)
                        other = grid.get(ncell)
                        if other is None:
                            continue
                        back = (d + 2) % 4
                        for j, seg in enumerate(other.orient.segments):
                            if back in seg and (ncell, j) not in seen:
                                seen.add((ncell, j))
                                stack.append((ncell, j))
                cells = {c for c, _ in seen}
                cells.add(start)
                self._roads = frozenset(cells)
            else:
                self._roads = frozenset()
        return self._roads

    # -- counts -----------------------------------------------------------------------------

    def icon_total(self, icon: str) -> int:
        """Icons of a kind in the whole territory (sheep, ships: icons; whisky: tiles)."""
        return sum(slot.tile.icons.get(icon, 0) for slot in self._grid.values())

    def whisky_tiles(self) -> int:
        """Tiles with barrels of whisky in the territory."""
        return sum(1 for slot in self._grid.values() if slot.tile.whisky)


def _slot(tile: str, rotation: int) -> _Slot:
    t = TILES[tile]
    return _Slot(t, t.orientations[rotation // 90])


def _add_needs(
    needs: dict[Cell, Needs], grid: Mapping[Cell, _Slot], cell: Cell, slot: _Slot
) -> None:
    """Add the constraints the tile at ``cell`` puts on its empty neighbours to ``needs``."""
    x, y = cell
    code = slot.orient.code
    for d, (dx, dy) in enumerate(OFFSETS):
        other = (x + dx, y + dy)
        if other not in grid:
            # Our edge d faces the neighbour's edge (d + 2) % 4, which must show our terrain.
            terrain = (code >> (2 * d)) & 3
            needs[other] = needs.get(other, 0) | terrain << (2 * ((d + 2) % 4))


# Per needs value, the bits that matter: 0b11 for every direction that has a neighbour.
_MASKS: tuple[int, ...] = tuple(
    sum(3 << (2 * d) for d in range(4) if (needs >> (2 * d)) & 3) for needs in range(256)
)


def _fits(needs: Needs, edges: int) -> bool:
    """Whether packed ``edges`` show the terrain ``needs`` asks for at every constrained side."""
    return edges & _MASKS[needs] == needs


@functools.cache
def fit_table(tile: str) -> tuple[tuple[int, ...], ...]:
    """Per needs value (0..255), the rotations (degrees) at which ``tile`` fits: a pure
    function of the data, built once per tile."""
    table: list[list[int]] = [[] for _ in range(256)]
    for rotation, orient in zip(ROTATIONS, TILES[tile].orientations, strict=True):
        # The needs this rotation meets: on each side, no neighbour or exactly its terrain.
        sides = [orient.code & (3 << (2 * d)) for d in range(4)]
        met = {sum(side for d, side in enumerate(sides) if pick >> d & 1) for pick in range(16)}
        for needs in met:
            table[needs].append(rotation)
    return tuple(tuple(rotations) for rotations in table)


def fitting_rotations(tile: str, needs: tuple[str | None, ...]) -> tuple[int, ...]:
    """Rotations (degrees) at which ``tile`` shows ``needs[d]`` at every constrained edge ``d``."""
    return fit_table(tile)[pack_edges(needs)]


def castle_territory(castle: str) -> Territory:
    """A starting territory: the castle at (0, 0), castle side up (rotation 0)."""
    return Territory((Placement(tile=castle, x=0, y=0, rotation=0),))
