"""The Isle of Skye game state and ``evolve`` (how each event changes it).

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shared.games.base import replacer
from shared.games.skye import messages as m
from shared.games.skye.data import LANDSCAPE_IDS
from shared.games.skye.territory import Territory, castle_territory

PHASES = ("prices", "buying", "building", "game_over")


def replace(obj: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` for the frozen slotted classes here, without re-running
    ``__init__`` (evolve calls it tens of thousands of times per game)."""
    cls: type = type(obj)  # as ``type``: mypy does not see ``type[Any]`` as Hashable
    return replacer(cls)(obj, **changes)


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
        return sum(p for _, p in self.offer)

    def price_of(self, tile: str) -> int | None:
        """The price on an own offered tile, or None."""
        for t, p in self.offer:
            if t == tile:
                return p
        return None


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
        if self.phase != "buying" or self.buys_done >= self.seats:
            return None
        return (self.start_player + self.buys_done) % self.seats

    def with_player(self, seat: int, **changes: Any) -> State:
        """A copy with ``players[seat]`` changed."""
        players = list(self.players)
        players[seat] = replace(players[seat], **changes)
        return replace(self, players=tuple(players))


def _bag_add(bag: tuple[str, ...], tiles: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(sorted((*bag, *tiles)))


def _remove(items: tuple[str, ...], item: str) -> tuple[str, ...]:
    out = list(items)
    out.remove(item)
    return tuple(out)


def _game_started(_: State | None, e: m.GameStarted) -> State:
    return State(
        seats=e.seats,
        rounds=e.rounds,
        scoring_tiles=tuple(e.scoring_tiles),
        advanced_variant=e.advanced_variant,
        players=tuple(
            Player(castle=c, territory=castle_territory(c)) for c in e.castles[: e.seats]
        ),
        bag=tuple(sorted(LANDSCAPE_IDS)),
        start_player=e.first_player,
    )


def _round_started(s: State, e: m.RoundStarted) -> State:
    players = tuple(
        replace(p, drawn=(), discard=None, offer=(), prices_set=False) for p in s.players
    )
    return replace(
        s,
        round=e.round,
        start_player=e.start_player,
        phase="income",
        revealed=False,
        buys_done=0,
        players=players,
    )


def _income_paid(s: State, e: m.IncomePaid) -> State:
    players = tuple(replace(p, gold=p.gold + g) for p, g in zip(s.players, e.gold, strict=True))
    return replace(s, players=players, phase="draw")


def _tiles_drawn(s: State, e: m.TilesDrawn) -> State:
    taken = [t for hand in e.tiles for t in hand]
    if e.extra is not None:
        taken.append(e.extra)
    bag = list(s.bag)
    for t in taken:
        bag.remove(t)
    players = tuple(
        replace(p, drawn=tuple(hand), prices_set=not hand)
        for p, hand in zip(s.players, e.tiles, strict=True)
    )
    return replace(s, players=players, bag=tuple(bag), extra=e.extra, extra_price=e.extra_price)


def _phase_started(s: State, e: m.PhaseStarted) -> State:
    return replace(s, phase=e.phase)


def _prices_set(s: State, e: m.PricesSet) -> State:
    p = s.players[e.seat]
    offer = tuple((t, e.prices[t]) for t in p.drawn if t in e.prices)
    return s.with_player(
        e.seat,
        discard=e.discard,
        offer=offer,
        gold=p.gold - sum(e.prices.values()),
        prices_set=True,
    )


def _prices_revealed(s: State, e: m.PricesRevealed) -> State:
    return replace(s, revealed=True)


def _tiles_discarded(s: State, e: m.TilesDiscarded) -> State:
    players = tuple(
        replace(p, drawn=tuple(t for t in p.drawn if t != p.discard), discard=None)
        for p in s.players
    )
    return replace(s, players=players, bag=_bag_add(s.bag, e.tiles))


def _tile_bought(s: State, e: m.TileBought) -> State:
    buyer = s.players[e.seat]
    s = s.with_player(e.seat, gold=buyer.gold - e.price, to_place=(*buyer.to_place, e.tile))
    if e.seller is None:
        s = replace(s, extra=None, extra_price=0)
    else:
        seller = s.players[e.seller]
        stake = seller.price_of(e.tile) or 0
        s = s.with_player(
            e.seller,
            gold=seller.gold + e.price + stake,
            drawn=_remove(seller.drawn, e.tile),
            offer=tuple(o for o in seller.offer if o[0] != e.tile),
        )
    return replace(s, buys_done=s.buys_done + 1)


def _passed(s: State, e: m.Passed) -> State:
    return replace(s, buys_done=s.buys_done + 1)


def _unsold_kept(s: State, e: m.UnsoldTilesKept) -> State:
    players = tuple(
        replace(p, to_place=(*p.to_place, *p.drawn), drawn=(), offer=()) for p in s.players
    )
    return replace(s, players=players)


def _tile_placed(s: State, e: m.TilePlaced) -> State:
    p = s.players[e.seat]
    return s.with_player(
        e.seat,
        territory=p.territory.place(e.tile, e.x, e.y, e.rotation),
        to_place=_remove(p.to_place, e.tile),
    )


def _tile_returned(s: State, e: m.TileReturned) -> State:
    p = s.players[e.seat]
    s = s.with_player(e.seat, to_place=_remove(p.to_place, e.tile))
    return replace(s, bag=_bag_add(s.bag, (e.tile,)))


def _extra_returned(s: State, e: m.ExtraTileReturned) -> State:
    return replace(s, extra=None, extra_price=0, bag=_bag_add(s.bag, (e.tile,)))


def _round_scored(s: State, e: m.RoundScored) -> State:
    players = tuple(
        replace(
            p,
            score=p.score + sum(pts.values()),
            round_points=(*p.round_points, tuple(pts.items())),
        )
        for p, pts in zip(s.players, e.points, strict=True)
    )
    return replace(s, players=players, phase="scored")


def _game_scored(s: State, e: m.GameScored) -> State:
    players = tuple(
        replace(
            p,
            score=p.score + sum(sc.values()) + g,
            scroll_points=tuple(sc.items()),
            gold_points=g,
        )
        for p, sc, g in zip(s.players, e.scrolls, e.gold, strict=True)
    )
    return replace(s, players=players)


def _game_ended(s: State, e: m.GameEnded) -> State:
    return replace(s, phase="game_over")


_EVOLVE: dict[type, Callable[[Any, Any], State]] = {
    m.GameStarted: _game_started,
    m.RoundStarted: _round_started,
    m.IncomePaid: _income_paid,
    m.TilesDrawn: _tiles_drawn,
    m.PhaseStarted: _phase_started,
    m.PricesSet: _prices_set,
    m.PricesRevealed: _prices_revealed,
    m.TilesDiscarded: _tiles_discarded,
    m.TileBought: _tile_bought,
    m.Passed: _passed,
    m.UnsoldTilesKept: _unsold_kept,
    m.TilePlaced: _tile_placed,
    m.TileReturned: _tile_returned,
    m.ExtraTileReturned: _extra_returned,
    m.RoundScored: _round_scored,
    m.GameScored: _game_scored,
    m.GameEnded: _game_ended,
}


# ``decide`` folds the events it returns (to run the automatic phases), then the caller folds
# the very same event objects into the very same state. Remembering the recent folds by the
# identity of (state, event) makes that second pass a lookup; states are immutable, so sharing
# the result is safe. Each entry holds its state and event, so their ids cannot be reused while
# the entry lives; the table is emptied when full.
_RECENT_FOLDS: dict[tuple[int, int], tuple[State | None, Any, State]] = {}
_RECENT_FOLDS_MAX = 128


def evolve(state: State | None, event: Any) -> State:
    """The state after ``event``; never fails for events ``decide``/``setup`` produced."""
    key = (id(state), id(event))
    recent = _RECENT_FOLDS.get(key)
    if recent is not None and recent[0] is state and recent[1] is event:
        return recent[2]
    new = _EVOLVE[type(event)](state, event)
    if len(_RECENT_FOLDS) >= _RECENT_FOLDS_MAX:
        _RECENT_FOLDS.clear()
    _RECENT_FOLDS[key] = (state, event, new)
    return new
