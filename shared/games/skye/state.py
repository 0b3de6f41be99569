"""The Isle of Skye game state (frozen: what the service stores, views and audits read).

How each event changes it is ``kernel.py``'s ``Table`` (its ``_on_<event>`` mutators); the
engine's ``evolve`` is derived from those.

Where every landscape tile is, at every moment (exactly one of):

* ``State.bag`` — in the bag. The bag is kept as a sorted tuple: it has no order, every draw
  picks uniformly from it with the ``Rng`` and the event records which tile came out, so there
  is no hidden bag order to leak;
* ``Player.drawn`` — lying face up in front of a seat's screen (drawn, then on offer);
* ``State.extra`` — the advanced variant's extra tile;
* ``Player.to_place`` — received this round, waiting to be built;
* a ``Player.territory``.

``Player.gold`` is the gold not lying on a tile: gold put on an offered tile (``Player.offer``)
is out of hand until the tile is sold (it comes back with the price) or the buying ends (it
goes to the bank).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.games.base import replacer
from shared.games.skye.territory import Territory

PHASES = ("prices", "buying", "building", "game_over")


def replace(obj: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` for the frozen slotted classes here, without re-running
    ``__init__`` (evolve calls it tens of thousands of times per game)."""
    cls: type = type(obj)  # as ``type``: mypy does not see ``type[Any]`` as Hashable
    return replacer(cls)(obj, **changes)


# The read-only facts below are functions of a seat or a game that is a frozen ``Player`` /
# ``State`` or the kernel's mutable ``Clan`` / ``Table`` (the same attribute names), so that
# both read them from one statement.


def staked(p: Any) -> int:
    """Gold lying on the seat's own offered tiles."""
    return sum(price for _, price in p.offer)


def price_of(p: Any, tile: str) -> int | None:
    """The price on one of the seat's own offered tiles, or None."""
    for t, price in p.offer:
        if t == tile:
            return price
    return None


def buyer_of(s: Any) -> int | None:
    """The seat whose turn it is to buy or pass (None outside the buying phase)."""
    if s.phase != "buying" or s.buys_done >= s.seats:
        return None
    return (s.start_player + s.buys_done) % s.seats


@dataclass(frozen=True, slots=True, kw_only=True)
class Player:
    """One clan."""

    castle: str
    territory: Territory
    gold: int = 0
    score: int = 0
    # Per scored round: ((letter, points), ...); final scoring: scrolls by type and gold.
    round_points: tuple[tuple[tuple[str, int], ...], ...] = ()
    scroll_points: tuple[tuple[str, int], ...] = ()
    gold_points: int = 0
    drawn: tuple[str, ...] = ()
    discard: str | None = None
    offer: tuple[tuple[str, int], ...] = ()  # (tile, price) of tiles still for sale
    prices_set: bool = False
    to_place: tuple[str, ...] = ()

    @property
    def staked(self) -> int:
        """Gold lying on the own offered tiles."""
        return staked(self)

    def price_of(self, tile: str) -> int | None:
        """The price on an own offered tile, or None."""
        return price_of(self, tile)


@dataclass(frozen=True, slots=True, kw_only=True)
class State:
    """Everything about a game; ``phase`` is one of ``PHASES`` between commands."""

    seats: int
    rounds: int
    scoring_tiles: tuple[str, ...]
    advanced_variant: bool
    players: tuple[Player, ...]
    bag: tuple[str, ...]
    round: int = 0
    phase: str = "setup"
    start_player: int = 0
    revealed: bool = False
    buys_done: int = 0  # seats that bought or passed this round
    extra: str | None = None
    extra_price: int = 0

    @property
    def buyer(self) -> int | None:
        """The seat whose turn it is to buy or pass (None outside the buying phase)."""
        return buyer_of(self)

    def with_player(self, seat: int, **changes: Any) -> State:
        """A copy with ``players[seat]`` changed."""
        players = list(self.players)
        players[seat] = replace(players[seat], **changes)
        return replace(self, players=tuple(players))
