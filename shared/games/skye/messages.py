"""Isle of Skye commands (what players send) and events (what happened), and their JSON.

Commands, as clients send them (extra keys such as ``expected_version`` are ignored):

* ``{"type": "set_prices", "discard": tile, "prices": {tile: gold, tile: gold}}``
* ``{"type": "buy", "tile": tile}`` (a tile of another seat's offer, or the variant's extra
  tile)
* ``{"type": "pass"}``
* ``{"type": "place", "tile": tile, "x": int, "y": int, "rotation": 0|90|180|270}``

A tile is its id in ``tiles.json`` (``"L07"``); a landscape tile may also be given by its
number (``7``, ``"7"``, ``"07"``), so price keys, which JSON makes strings, work either way.

``SetPricesTemplate`` is the one entry ``legal_commands`` lists in the price phase (``{"type":
"set_prices", "tiles": [...], "gold": n, "min_price": 1, "template": true, "discard": t,
"prices": {t: 1, ...}}``) because every price split cannot be listed: ``tiles`` and ``gold`` say
what there is to decide, and ``discard``/``prices`` hold a legal default (the axe on the first
tile, the minimum price on the others), so that the entry, sent back as it is, is a valid
command like every other listed one. Clients and bots change the split (``random_command``
draws one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from shared.games.base import registry
from shared.games.errors import invalid_command
from shared.games.skye.data import ROTATIONS, tile_id

# -- commands ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SetPrices:
    """Put the axe on ``discard`` and ``prices[tile]`` gold on each other drawn tile."""

    TYPE: ClassVar[str] = "set_prices"
    discard: str | None
    prices: dict[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class Buy:
    """Buy ``tile`` from another seat's offer (or the variant's extra tile)."""

    TYPE: ClassVar[str] = "buy"
    tile: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Pass:
    """Buy nothing this round."""

    TYPE: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """Put a tile received this round into the own territory."""

    TYPE: ClassVar[str] = "place"
    tile: str
    x: int
    y: int
    rotation: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SetPricesTemplate:
    """What a seat must decide in the price phase, with a legal default split (see above)."""

    TYPE: ClassVar[str] = "set_prices"
    tiles: tuple[str, ...]
    gold: int
    min_price: int = 1
    template: bool = True
    discard: str | None = None
    prices: dict[str, int] = field(default_factory=dict)

    @classmethod
    def for_tiles(cls, tiles: tuple[str, ...], gold: int) -> SetPricesTemplate:
        """The entry with its default split: the axe on the first tile, the minimum on the
        others."""
        return cls(
            tiles=tiles,
            gold=gold,
            discard=tiles[0] if tiles else None,
            prices={t: 1 for t in tiles[1:]},
        )


COMMANDS = registry(SetPrices, Buy, Pass, Place)

# -- events -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GameStarted:
    """The game's first event: it creates the state."""

    TYPE: ClassVar[str] = "game_started"
    seats: int
    rounds: int
    castles: tuple[str, ...]
    scoring_tiles: tuple[str, ...]  # ids, for letters A..D
    first_player: int
    advanced_variant: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundStarted:
    """A round began with ``start_player`` holding the start player marker."""

    TYPE: ClassVar[str] = "round_started"
    round: int
    start_player: int


@dataclass(frozen=True, slots=True, kw_only=True)
class IncomePaid:
    """Phase 1: ``gold[seat]`` = castle + connected whisky tiles + catch-up gold."""

    TYPE: ClassVar[str] = "income_paid"
    round: int
    gold: tuple[int, ...]
    castle: tuple[int, ...]
    whisky: tuple[int, ...]
    catch_up: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TilesDrawn:
    """Phase 2: the tiles each seat drew (face up, so public), and the variant's extra tile."""

    TYPE: ClassVar[str] = "tiles_drawn"
    round: int
    tiles: tuple[tuple[str, ...], ...]
    extra: str | None = None
    extra_price: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseStarted:
    """A phase that waits for players began: ``prices``, ``buying`` or ``building``."""

    TYPE: ClassVar[str] = "phase_started"
    phase: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PricesSet:
    """A seat set its axe and prices behind its screen (secret until all are revealed)."""

    TYPE: ClassVar[str] = "prices_set"
    seat: int
    discard: str | None
    prices: dict[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class PricesRevealed:
    """Every seat had set prices; the screens are lifted. ``offers[seat]`` =
    ``{"seat", "discard", "prices"}``."""

    TYPE: ClassVar[str] = "prices_revealed"
    offers: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TilesDiscarded:
    """Phase 3: the axed tiles went back into the bag."""

    TYPE: ClassVar[str] = "tiles_discarded"
    tiles: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TileBought:
    """Phase 4: ``seat`` paid ``price`` for ``tile``; ``seller`` None means the bank (the
    variant's extra tile). The seller also took back the gold they had put on it."""

    TYPE: ClassVar[str] = "tile_bought"
    seat: int
    tile: str
    seller: int | None
    price: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Passed:
    """Phase 4: ``seat`` bought nothing."""

    TYPE: ClassVar[str] = "passed"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UnsoldTilesKept:
    """End of phase 4: each seat keeps its unsold tiles; the gold on them goes to the bank."""

    TYPE: ClassVar[str] = "unsold_tiles_kept"
    tiles: tuple[tuple[str, ...], ...]
    gold_lost: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TilePlaced:
    """Phase 5: ``seat`` put ``tile`` into its territory."""

    TYPE: ClassVar[str] = "tile_placed"
    seat: int
    tile: str
    x: int
    y: int
    rotation: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TileReturned:
    """Phase 5: a tile with no legal spot went back into the bag (its price is not refunded)."""

    TYPE: ClassVar[str] = "tile_returned"
    seat: int
    tile: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtraTileReturned:
    """Advanced variant: the unsold extra tile went back into the bag at the round's end."""

    TYPE: ClassVar[str] = "extra_tile_returned"
    tile: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundScored:
    """Phase 6: ``points[seat]`` = {letter: points} for this round's scoring tiles."""

    TYPE: ClassVar[str] = "round_scored"
    round: int
    points: tuple[dict[str, int], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class GameScored:
    """Final scoring: scroll points per seat (by scroll type) and 1 point per 5 gold."""

    TYPE: ClassVar[str] = "game_scored"
    scrolls: tuple[dict[str, int], ...]
    gold: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEnded:
    """The game is over; ``tiebreak`` = leftover gold (not turned into points)."""

    TYPE: ClassVar[str] = "game_ended"
    scores: tuple[int, ...]
    tiebreak: tuple[int, ...]
    winners: tuple[int, ...]
    ranks: tuple[int, ...]
    draw: bool = False


EVENTS = registry(
    GameStarted,
    RoundStarted,
    IncomePaid,
    TilesDrawn,
    PhaseStarted,
    PricesSet,
    PricesRevealed,
    TilesDiscarded,
    TileBought,
    Passed,
    UnsoldTilesKept,
    TilePlaced,
    TileReturned,
    ExtraTileReturned,
    RoundScored,
    GameScored,
    GameEnded,
)

# -- parsing ----------------------------------------------------------------------------------


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_command(data: Mapping[str, Any]) -> Any:
    """A command from client JSON; ``GameError(command/invalid)`` with field errors if not."""
    if not isinstance(data, Mapping):
        raise invalid_command("a command is a JSON object", body="expected an object")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in COMMANDS:
        raise invalid_command(f"unknown command type {kind!r}", type="unknown command type")
    if kind == "pass":
        return Pass()
    if kind == "buy":
        tile = tile_id(data.get("tile"))
        if tile is None:
            raise invalid_command("buy needs a tile", tile="unknown tile id")
        return Buy(tile=tile)
    if kind == "place":
        errors: dict[str, str] = {}
        tile = tile_id(data.get("tile"))
        if tile is None:
            errors["tile"] = "unknown tile id"
        for key in ("x", "y"):
            if not _int(data.get(key)):
                errors[key] = "an integer is required"
        rotation = data.get("rotation")
        if not _int(rotation) or rotation not in ROTATIONS:
            errors["rotation"] = "one of 0, 90, 180, 270"
        if errors:
            raise invalid_command("malformed place command", **errors)
        assert tile is not None and rotation is not None
        return Place(tile=tile, x=data["x"], y=data["y"], rotation=rotation)
    # set_prices
    errors = {}
    raw_discard = data.get("discard")
    discard = None if raw_discard is None else tile_id(raw_discard)
    if raw_discard is not None and discard is None:
        errors["discard"] = "unknown tile id"
    raw_prices = data.get("prices", {})
    prices: dict[str, int] = {}
    if not isinstance(raw_prices, Mapping):
        errors["prices"] = "an object {tile: gold} is required"
    else:
        for key, value in raw_prices.items():
            tid = tile_id(key)
            if tid is None:
                errors["prices"] = f"unknown tile id {key!r}"
            elif tid in prices:
                errors["prices"] = f"tile {tid} priced twice"
            elif not _int(value):
                errors["prices"] = f"price of {tid} must be an integer"
            else:
                prices[tid] = value
    if errors:
        raise invalid_command("malformed set_prices command", **errors)
    return SetPrices(discard=discard, prices=prices)
