"""Isle of Skye's rules, written once: the kernel (``shared/games/kernel.py``).

``Table`` is a game as one mutable object. Its ``_on_<event>`` mutators are the only statement
of how each event changes a game; ``apply`` is the only statement of what a command may do and
which events it (and the automatic phases after it) causes, handing each to ``emit`` as it
goes. The engine's ``decide``/``evolve``/``evolve_all`` are derived from it (``decide_with``
and friends), and search plays on it directly: ``apply`` with ``emit=table.on`` for a command
it must check, and for one taken from the kernel's own listing or drawn legal, ``apply_listed``
(``apply`` past its checks) with ``emit`` None, the mutators run by the kernel itself.

Why it is fast: a table shares the frozen ``Player`` of every seat no event has touched yet,
and turns a seat into a mutable ``Clan`` (lists instead of tuples) on its first change, so a
thaw costs two list copies, a ``copy`` copies only the seats that changed, and a freeze
rebuilds only those. Territories are the engine's immutable ``Territory`` (shared, so their
cached spots, areas and roads are too). The events a move needs most are shared objects.

The read-only rules (``to_act``, ``legal_commands``, ``outcome``, ``buyer_of``,
``purchases``, ``income``) are functions of a *table-like* object: a frozen ``State`` or a
``Table`` (the same attribute names, a seat's fields read alike from a ``Player`` or a
``Clan``), so the engine's queries on states and search's on tables are one statement.

Where every landscape tile is, at every moment, see ``state.py``.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import operator
from collections.abc import Callable, Mapping
from typing import Any

from shared.games.base import ranks_from_scores
from shared.games.errors import GAME_OVER, NOT_YOUR_TURN, GameError, illegal, invalid_command
from shared.games.kernel import Emit, Kernel, recorder
from shared.games.rng import Rng
from shared.games.skye import messages as m
from shared.games.skye import scoring
from shared.games.skye.data import LANDSCAPE_IDS, LETTERS, schedule
from shared.games.skye.state import Player, State, buyer_of, price_of, staked
from shared.games.skye.territory import castle_territory

TILES_PER_SEAT = 3

_PLACE_DETAIL = {
    "occupied": "a tile already lies there",
    "no_contact": "a tile must touch your territory along an edge",
    "terrain_mismatch": "every touching edge must show the same terrain",
}

# Shared events (immutable): a move's automatic phases emit these over and over.
_PHASE = {name: m.PhaseStarted(phase=name) for name in ("prices", "buying", "building")}
_PASSED = tuple(m.Passed(seat=i) for i in range(8))  # more than any table's seats
# Read in C over every seat by ``settle`` after each command (no generator resumed per seat).
_PRICES_SET = operator.attrgetter("prices_set")
_TO_PLACE = operator.attrgetter("to_place")
# What a play-out that records nothing hands the mutators of the reveal and of the end of the
# buying: they read nothing of their events (``settle``).
_UNRECORDED_REVEAL = m.PricesRevealed(offers=())
_UNRECORDED_KEPT = m.UnsoldTilesKept(tiles=(), gold_lost=())


def _builder(cls: type) -> Callable[..., Any]:
    """A positional constructor for the frozen slotted dataclass ``cls`` that sets each slot
    through its descriptor, without ``__init__`` (a freeze builds a ``Player`` per changed
    seat and a ``State``; the generated ``__init__`` of a frozen class costs twice as much).
    Arguments in field order, every field given."""
    names = [f.name for f in dataclasses.fields(cls)]
    body = "".join(f"    _set_{n}(_new, {n})\n" for n in names)
    source = f"def build({', '.join(names)}):\n    _new = _make(_cls)\n{body}    return _new\n"
    scope: dict[str, Any] = {"_make": object.__new__, "_cls": cls}
    scope.update({f"_set_{n}": cls.__dict__[n].__set__ for n in names})
    exec(compile(source, f"<build {cls.__name__}>", "exec"), scope)
    return scope["build"]


_player = _builder(Player)
_state = _builder(State)
# The events of a move (a play-out makes one per command), built without ``__init__`` too.
_prices_set = _builder(m.PricesSet)
_tile_bought = _builder(m.TileBought)
_tile_placed = _builder(m.TilePlaced)


class Clan:
    """A seat whose state an event has changed since the last thaw: ``Player``'s fields,
    with ``drawn``, ``offer`` and ``to_place`` as lists."""

    __slots__ = (
        "castle", "territory", "gold", "score", "round_points", "scroll_points", "gold_points",
        "drawn", "discard", "offer", "prices_set", "to_place",
    )  # fmt: skip

    castle: str
    territory: Any
    gold: int
    score: int
    round_points: tuple[tuple[tuple[str, int], ...], ...]
    scroll_points: tuple[tuple[str, int], ...]
    gold_points: int
    drawn: list[str]
    discard: str | None
    offer: list[tuple[str, int]]
    prices_set: bool
    to_place: list[str]

    # The same read-only helpers as ``Player`` (one statement: the functions of ``state.py``).
    staked = property(staked)
    price_of = price_of

    @classmethod
    def of(cls, p: Any) -> Clan:
        """A mutable copy of a ``Player`` or a ``Clan``."""
        c = cls.__new__(cls)
        c.castle = p.castle
        c.territory = p.territory
        c.gold = p.gold
        c.score = p.score
        c.round_points = p.round_points
        c.scroll_points = p.scroll_points
        c.gold_points = p.gold_points
        c.drawn = list(p.drawn)
        c.discard = p.discard
        c.offer = list(p.offer)
        c.prices_set = p.prices_set
        c.to_place = list(p.to_place)
        return c

    def freeze(self) -> Player:
        """The ``Player`` of this seat."""
        player: Player = _player(
            self.castle,
            self.territory,
            self.gold,
            self.score,
            self.round_points,
            self.scroll_points,
            self.gold_points,
            tuple(self.drawn),
            self.discard,
            tuple(self.offer),
            self.prices_set,
            tuple(self.to_place),
        )
        return player


# --- the read-only rules, over a ``State`` or a ``Table`` --------------------------------------


def to_act(s: Any) -> tuple[int, ...]:
    """Seats that must send a command now: all who still set prices; the buyer; every seat
    with tiles to place."""
    phase = s.phase
    # Lists, then tuples: a generator resumes once per seat (play-outs ask after every move).
    if phase == "prices":
        return tuple([i for i, p in enumerate(s.players) if not p.prices_set])
    if phase == "buying":
        buyer = buyer_of(s)
        return () if buyer is None else (buyer,)
    if phase == "building":
        return tuple([i for i, p in enumerate(s.players) if p.to_place])
    return ()


def purchases(s: Any, seat: int) -> list[tuple[str, int | None, int]]:
    """(tile, seller or None for the extra tile, price) of every tile ``seat`` may buy now:
    other seats' offers and the extra tile it can afford, in listing order."""
    if buyer_of(s) != seat:
        return []
    gold = s.players[seat].gold
    out: list[tuple[str, int | None, int]] = [
        (t, i, price)
        for i, p in enumerate(s.players)
        if i != seat
        for t, price in p.offer
        if price <= gold
    ]
    if s.extra is not None and s.extra_price <= gold:
        out.append((s.extra, None, s.extra_price))
    return out


def buy_options(s: Any, seat: int) -> list[m.Buy]:
    """Every tile ``seat`` may buy now, as ``Buy`` commands."""
    return [buy_command(t) for t, _, _ in purchases(s, seat)]


_PASS = m.Pass()


def legal_commands(s: Any, seat: int) -> list[Any]:
    """Every command ``seat`` may send now. In the price phase: one ``SetPricesTemplate``
    (tiles to price, gold available, minimum price 1, and a default split), because price
    splits are not listed."""
    phase = s.phase
    if phase == "game_over" or not 0 <= seat < s.seats:
        return []
    p = s.players[seat]
    if phase == "prices":
        if p.prices_set:
            return []
        return [m.SetPricesTemplate.for_tiles(tuple(p.drawn), p.gold)]
    if phase == "buying":
        if buyer_of(s) != seat:
            return []
        return [*buy_options(s, seat), _PASS]
    if phase == "building":
        return [
            place_command(tile, x, y, r)
            for tile, spots in place_options(s, seat)
            for x, y, r in spots
        ]
    return []


def place_options(s: Any, seat: int) -> list[tuple[str, tuple[tuple[int, int, int], ...]]]:
    """(tile, its spots ``(x, y, rotation)``) for each distinct tile ``seat`` has to place, in
    listing order: a building seat's ``legal_commands`` are these, tile by tile and spot by
    spot (a play-out picks its entry by index without building the commands)."""
    spots = s.players[seat].territory.spots
    return [(tile, spots(tile)) for tile in dict.fromkeys(s.players[seat].to_place)]


@functools.lru_cache(maxsize=1 << 15)
def place_command(tile: str, x: int, y: int, rotation: int) -> m.Place:
    """A ``Place`` command, shared (commands are immutable): a building seat's listing holds
    dozens, rebuilt after every placement, and most of them were listed before."""
    return m.Place(tile=tile, x=x, y=y, rotation=rotation)


@functools.lru_cache(maxsize=1 << 10)
def buy_command(tile: str) -> m.Buy:
    """A shared ``Buy`` command."""
    return m.Buy(tile=tile)


def result(s: Any) -> dict[str, Any]:
    """Scores, leftover gold (the tie-break), ranks, winners and ``draw``."""
    players = s.players
    scores = [p.score for p in players]
    tiebreak = [scoring.leftover_gold(p.gold) for p in players]
    ranks = ranks_from_scores(scores, tiebreak)
    winners = [i for i, r in enumerate(ranks) if r == 1]
    return {
        "scores": scores,
        "tiebreak": tiebreak,
        "winners": winners,
        "ranks": ranks,
        "draw": len(winners) > 1,
    }


def outcome(s: Any) -> dict[str, Any] | None:
    """None while the game runs; then scores, winners, ranks (ties broken by leftover gold,
    i.e. the coins not turned into points), ``draw`` and the ``tiebreak`` values."""
    if s.phase != "game_over":
        return None
    return result(s)


def income(s: Any) -> m.IncomePaid:
    """Phase 1 for every seat: castle 5, +1 per whisky tile joined to the castle by road,
    from round 3 the round's amount per player ahead on the score track."""
    players = s.players
    scores = [p.score for p in players]
    castle = tuple(scoring.castle_income(p.territory) for p in players)
    whisky = tuple(scoring.connected_whisky_tiles(p.territory) for p in players)
    catch = tuple(scoring.catch_up(s.round, scores, i) for i in range(s.seats))
    gold = tuple(c + w + k for c, w, k in zip(castle, whisky, catch, strict=True))
    return m.IncomePaid(round=s.round, gold=gold, castle=castle, whisky=whisky, catch_up=catch)


def _stuck(p: Any) -> bool:
    return bool(p.to_place) and not any(map(p.territory.has_spot, set(p.to_place)))


# --- the kernel --------------------------------------------------------------------------------


class Table(Kernel):
    """An Isle of Skye game: ``State``'s fields, mutable (``bag`` a sorted list, ``players``
    a list of ``Player`` or ``Clan``)."""

    __slots__ = (
        "seats", "rounds", "scoring_tiles", "advanced_variant", "players", "bag", "round",
        "phase", "start_player", "revealed", "buys_done", "extra", "extra_price",
    )  # fmt: skip

    EVENTS = m.EVENTS

    seats: int
    rounds: int
    scoring_tiles: tuple[str, ...]
    advanced_variant: bool
    players: list[Any]  # Player | Clan
    bag: list[str]
    round: int
    phase: str
    start_player: int
    revealed: bool
    buys_done: int
    extra: str | None
    extra_price: int

    # --- conversion ---------------------------------------------------------------------------

    @classmethod
    def thaw(cls, state: State) -> Table:
        """A table at ``state`` (every seat's ``Player`` shared until an event changes it)."""
        t = cls.__new__(cls)
        t.seats = state.seats
        t.rounds = state.rounds
        t.scoring_tiles = state.scoring_tiles
        t.advanced_variant = state.advanced_variant
        t.players = list(state.players)
        t.bag = list(state.bag)
        t.round = state.round
        t.phase = state.phase
        t.start_player = state.start_player
        t.revealed = state.revealed
        t.buys_done = state.buys_done
        t.extra = state.extra
        t.extra_price = state.extra_price
        return t

    @classmethod
    def start(cls, event: m.GameStarted) -> Table:
        """The table ``game_started`` creates."""
        t = cls.__new__(cls)
        t._on_game_started(event)
        return t

    def freeze(self) -> State:
        """This game as the engine's ``State``."""
        state: State = _state(
            self.seats,
            self.rounds,
            self.scoring_tiles,
            self.advanced_variant,
            tuple(p if type(p) is Player else p.freeze() for p in self.players),
            tuple(self.bag),
            self.round,
            self.phase,
            self.start_player,
            self.revealed,
            self.buys_done,
            self.extra,
            self.extra_price,
        )
        return state

    def copy(self) -> Table:
        """An independent table in the same position (changed seats copied, the rest
        shared)."""
        t = Table.__new__(Table)
        t.seats = self.seats
        t.rounds = self.rounds
        t.scoring_tiles = self.scoring_tiles
        t.advanced_variant = self.advanced_variant
        t.players = [p if type(p) is Player else Clan.of(p) for p in self.players]
        t.bag = self.bag.copy()
        t.round = self.round
        t.phase = self.phase
        t.start_player = self.start_player
        t.revealed = self.revealed
        t.buys_done = self.buys_done
        t.extra = self.extra
        t.extra_price = self.extra_price
        return t

    def clan(self, seat: int) -> Clan:
        """Seat ``seat``, mutable (made a ``Clan`` on its first change)."""
        p = self.players[seat]
        if type(p) is Clan:
            return p
        c = self.players[seat] = Clan.of(p)
        return c

    # --- queries ------------------------------------------------------------------------------

    buyer = property(buyer_of)

    def to_act(self) -> tuple[int, ...]:
        return to_act(self)

    def legal_commands(self, seat: int) -> list[Any]:
        return legal_commands(self, seat)

    def outcome(self) -> dict[str, Any] | None:
        return outcome(self)

    # --- the mutators: how each event changes the game ---------------------------------------

    def _on_game_started(self, e: m.GameStarted) -> None:
        self.seats = e.seats
        self.rounds = e.rounds
        self.scoring_tiles = tuple(e.scoring_tiles)
        self.advanced_variant = e.advanced_variant
        self.players = [
            Player(castle=c, territory=castle_territory(c)) for c in e.castles[: e.seats]
        ]
        self.bag = sorted(LANDSCAPE_IDS)
        self.round = 0
        self.phase = "setup"
        self.start_player = e.first_player
        self.revealed = False
        self.buys_done = 0
        self.extra = None
        self.extra_price = 0

    def _on_round_started(self, e: m.RoundStarted) -> None:
        for i in range(self.seats):
            c = self.clan(i)
            c.drawn = []
            c.discard = None
            c.offer = []
            c.prices_set = False
        self.round = e.round
        self.start_player = e.start_player
        self.phase = "income"
        self.revealed = False
        self.buys_done = 0

    def _on_income_paid(self, e: m.IncomePaid) -> None:
        for i, gold in enumerate(e.gold):
            self.clan(i).gold += gold
        self.phase = "draw"

    def _on_tiles_drawn(self, e: m.TilesDrawn) -> None:
        bag = self.bag
        for hand in e.tiles:
            for t in hand:
                bag.remove(t)
        if e.extra is not None:
            bag.remove(e.extra)
        for i, hand in enumerate(e.tiles):
            c = self.clan(i)
            c.drawn = list(hand)
            c.prices_set = not hand
        self.extra = e.extra
        self.extra_price = e.extra_price

    def _on_phase_started(self, e: m.PhaseStarted) -> None:
        self.phase = e.phase

    def _on_prices_set(self, e: m.PricesSet) -> None:
        c = self.clan(e.seat)
        prices = e.prices
        c.offer = [(t, prices[t]) for t in c.drawn if t in prices]
        c.discard = e.discard
        c.gold -= sum(prices.values())
        c.prices_set = True

    def _on_prices_revealed(self, e: m.PricesRevealed) -> None:
        # The offers are the record of what every seat's own state holds: read nothing of
        # ``e`` (a play-out that records nothing hands a shared empty one, see ``settle``).
        self.revealed = True

    def _on_tiles_discarded(self, e: m.TilesDiscarded) -> None:
        for i, p in enumerate(self.players):
            if p.discard is not None:
                c = p if type(p) is Clan else self.clan(i)
                c.drawn = [t for t in c.drawn if t != c.discard]
                c.discard = None
        for t in e.tiles:
            bisect.insort(self.bag, t)

    def _on_tile_bought(self, e: m.TileBought) -> None:
        buyer = self.clan(e.seat)
        buyer.gold -= e.price
        buyer.to_place.append(e.tile)
        if e.seller is None:
            self.extra = None
            self.extra_price = 0
        else:
            seller = self.clan(e.seller)
            # The seller gets the price and takes back the gold it had put on the tile.
            seller.gold += e.price + (seller.price_of(e.tile) or 0)
            seller.drawn.remove(e.tile)
            seller.offer = [o for o in seller.offer if o[0] != e.tile]
        self.buys_done += 1

    def _on_passed(self, e: m.Passed) -> None:
        self.buys_done += 1

    def _on_unsold_tiles_kept(self, e: m.UnsoldTilesKept) -> None:
        # Read from the seats, not from ``e`` (see ``_on_prices_revealed``).
        for i, p in enumerate(self.players):
            if p.drawn or p.offer:
                c = p if type(p) is Clan else self.clan(i)
                c.to_place.extend(c.drawn)
                c.drawn = []
                c.offer = []

    def _on_tile_placed(self, e: m.TilePlaced) -> None:
        c = self.clan(e.seat)
        c.territory = c.territory.place(e.tile, e.x, e.y, e.rotation)
        c.to_place.remove(e.tile)

    def _on_tile_returned(self, e: m.TileReturned) -> None:
        self.clan(e.seat).to_place.remove(e.tile)
        bisect.insort(self.bag, e.tile)

    def _on_extra_tile_returned(self, e: m.ExtraTileReturned) -> None:
        self.extra = None
        self.extra_price = 0
        bisect.insort(self.bag, e.tile)

    def _on_round_scored(self, e: m.RoundScored) -> None:
        for i, pts in enumerate(e.points):
            c = self.clan(i)
            c.score += sum(pts.values())
            c.round_points = (*c.round_points, tuple(pts.items()))
        self.phase = "scored"

    def _on_game_scored(self, e: m.GameScored) -> None:
        for i, (scrolls, gold) in enumerate(zip(e.scrolls, e.gold, strict=True)):
            c = self.clan(i)
            c.score += sum(scrolls.values()) + gold
            c.scroll_points = tuple(scrolls.items())
            c.gold_points = gold

    def _on_game_ended(self, e: m.GameEnded) -> None:
        self.phase = "game_over"

    # --- commands -----------------------------------------------------------------------------

    def apply(self, seat: int, command: Any, rng: Rng, emit: Emit) -> None:
        """``seat`` sends ``command``: its event, then every automatic one it leads to (until
        players must act), each handed to ``emit``. Raises ``GameError`` naming the broken
        rule before emitting anything. The checks are here; what a legal command does is its
        effect (``_priced``, ``_bought``, ``_passed``, ``_placed``), which ``apply_listed``
        and ``apply_purchase`` reach past them."""
        phase = self.phase
        if phase == "game_over":
            raise GameError(GAME_OVER, "the game is over")
        if not isinstance(seat, int) or not 0 <= seat < self.seats:
            raise GameError(NOT_YOUR_TURN, f"no seat {seat} in this game")
        p = self.players[seat]
        # Dispatch on the exact type (commands are final classes; one ``is`` per branch is
        # what a play-out pays per move).
        kind = type(command)
        if kind is m.SetPricesTemplate:  # the listed entry, taken as its default split
            command = m.SetPrices(discard=command.discard, prices=dict(command.prices))
            kind = m.SetPrices
        if kind is m.SetPrices:
            if phase != "prices":
                raise illegal("wrong_phase", f"prices are set in the price phase, not {phase}")
            if p.prices_set:
                raise illegal("already_set", "you already set your prices this round")
            check_prices(p, command)
            self._priced(seat, command.discard, command.prices, rng, emit)
        elif kind is m.Buy or kind is m.Pass:
            if phase != "buying":
                raise illegal("wrong_phase", f"tiles are bought in the buying phase, not {phase}")
            buyer = buyer_of(self)
            if buyer != seat:
                raise GameError(NOT_YOUR_TURN, f"it is seat {buyer}'s turn to buy")
            if kind is m.Pass:
                self._passed(seat, rng, emit)
            elif command.tile == self.extra:
                if self.extra_price > p.gold:
                    raise illegal(
                        "not_enough_gold",
                        f"the extra tile costs {self.extra_price}, you have {p.gold}",
                    )
                self._bought(seat, command.tile, None, self.extra_price, rng, emit)
            else:
                owner = self._offer_owner(command.tile)
                if owner is None:
                    raise illegal("not_offered", f"{command.tile} is not for sale")
                if owner == seat:
                    raise illegal("own_tile", "you cannot buy your own tile")
                price = self.players[owner].price_of(command.tile) or 0
                if price > p.gold:
                    raise illegal(
                        "not_enough_gold", f"{command.tile} costs {price}, you have {p.gold}"
                    )
                self._bought(seat, command.tile, owner, price, rng, emit)
        elif kind is m.Place:
            if phase != "building":
                raise illegal("wrong_phase", f"tiles are placed in the building phase, not {phase}")
            if not p.to_place:
                raise GameError(NOT_YOUR_TURN, "you have no tile to place")
            if command.tile not in p.to_place:
                raise illegal("not_your_tile", f"{command.tile} is not among your tiles to place")
            why = p.territory.check(command.tile, command.x, command.y, command.rotation)
            if why is not None:
                raise illegal(why, _PLACE_DETAIL[why])
            self._placed(seat, command.tile, command.x, command.y, command.rotation, rng, emit)
        else:
            raise invalid_command(
                f"not an Isle of Skye command: {command!r}", type="an Isle of Skye command"
            )

    def apply_listed(self, seat: int, command: Any, rng: Rng, emit: Emit | None) -> None:
        """``apply`` past its checks, for a command ``seat`` may send now by these same rules:
        one of ``legal_commands(seat)`` (a play-out draws from that listing: checking it again
        would only repeat it), or prices a search drew as ``draw_prices`` draws them or
        checked once already (``search.modelled_prices``). Anything else is ``apply``'s to
        refuse; here it makes a wrong state. The listing's price entry stands for splits it
        cannot list, and its default split may not be affordable: it goes through ``apply``.

        ``emit`` as ``apply``'s, or None when nothing records the events (a play-out): the
        kernel then runs each event's mutator itself. Either way the same events' effects,
        in the same order (``tests/unit/test_skye_kernel_lean.py``)."""
        kind = type(command)
        if kind is m.Place:
            self._placed(seat, command.tile, command.x, command.y, command.rotation, rng, emit)
        elif kind is m.Buy:
            tile = command.tile
            if tile == self.extra:
                self._bought(seat, tile, None, self.extra_price, rng, emit)
            else:
                owner = self._offer_owner(tile)
                assert owner is not None, f"{tile} is not for sale"
                self._bought(seat, tile, owner, self.players[owner].price_of(tile), rng, emit)
        elif kind is m.Pass:
            self._passed(seat, rng, emit)
        elif kind is m.SetPrices:
            self._priced(seat, command.discard, command.prices, rng, emit)
        else:
            self.apply(seat, command, rng, emit or self.on)

    def apply_purchase(
        self, seat: int, purchase: tuple[str, int | None, int], rng: Rng, emit: Emit | None
    ) -> None:
        """``apply_listed`` of a ``Buy`` given as its entry of ``purchases(self, seat)`` (tile,
        seller or None, price): the seller and the price are the listing's, not looked up
        again."""
        tile, seller, price = purchase
        self._bought(seat, tile, seller, price, rng, emit)

    # What each legal command does: its event, then ``settle``. ``emit`` None: the event's
    # mutator runs here, with no ``on`` dispatch (and nothing recorded).

    def _priced(
        self, seat: int, discard: str | None, prices: Mapping[str, int], rng: Rng, emit: Emit | None
    ) -> None:
        if emit is None:
            # The mutator takes the prices in any order; the drawn tiles' order is the
            # recorded event's.
            self._on_prices_set(_prices_set(seat, discard, prices))
        else:
            drawn = self.players[seat].drawn
            emit(_prices_set(seat, discard, {t: prices[t] for t in drawn if t in prices}))
        self.settle(rng, emit)

    def _bought(
        self, seat: int, tile: str, seller: int | None, price: int, rng: Rng, emit: Emit | None
    ) -> None:
        event = _tile_bought(seat, tile, seller, price)
        if emit is None:
            self._on_tile_bought(event)
        else:
            emit(event)
        self.settle(rng, emit)

    def _passed(self, seat: int, rng: Rng, emit: Emit | None) -> None:
        if emit is None:
            self._on_passed(_PASSED[seat])
        else:
            emit(_PASSED[seat])
        self.settle(rng, emit)

    def _placed(
        self, seat: int, tile: str, x: int, y: int, rotation: int, rng: Rng, emit: Emit | None
    ) -> None:
        event = _tile_placed(seat, tile, x, y, rotation)
        if emit is None:
            self._on_tile_placed(event)
        else:
            emit(event)
        self.settle(rng, emit)

    def _offer_owner(self, tile: str) -> int | None:
        for i, p in enumerate(self.players):
            if p.price_of(tile) is not None:
                return i
        return None

    # --- the automatic phases -----------------------------------------------------------------

    def settle(self, rng: Rng, emit: Emit | None) -> None:
        """Every automatic event the position leads to, until players must act or the game is
        over: the reveal, the end of the buying, returned tiles, the round's scoring, the
        extra tile's return, then the next round or the final scoring. ``emit`` None: each
        event's mutator runs through ``on`` and nothing is recorded, so the reveal and the
        end of the buying, whose mutators read nothing of their events, get shared empty
        ones (what the record alone needs is not built)."""
        quiet = emit is None
        put: Emit = self.on if emit is None else emit
        while True:
            phase = self.phase
            if phase == "prices":
                players = self.players
                if not all(map(_PRICES_SET, players)):
                    return
                axed = tuple(sorted(p.discard for p in players if p.discard))
                if quiet:
                    put(_UNRECORDED_REVEAL)
                else:
                    offers = tuple(
                        {"seat": i, "discard": p.discard, "prices": dict(p.offer)}
                        for i, p in enumerate(players)
                    )
                    put(m.PricesRevealed(offers=offers))
                put(m.TilesDiscarded(tiles=axed))
                put(_PHASE["buying"])
            elif phase == "buying":
                if buyer_of(self) is not None:
                    return
                if quiet:
                    put(_UNRECORDED_KEPT)
                else:
                    players = self.players
                    put(
                        m.UnsoldTilesKept(
                            tiles=tuple(tuple(p.drawn) for p in players),
                            gold_lost=tuple(p.staked for p in players),
                        )
                    )
                put(_PHASE["building"])
            elif phase == "building":
                players = self.players
                returned = [
                    m.TileReturned(seat=i, tile=t)
                    for i, p in enumerate(players)
                    if p.to_place and _stuck(p)  # no call for a seat done building
                    for t in p.to_place
                ]
                if returned:
                    for event in returned:
                        put(event)
                elif not any(map(_TO_PLACE, players)):
                    put(self._round_points())
                else:
                    return
            elif phase == "scored":
                if self.extra is not None:
                    put(m.ExtraTileReturned(tile=self.extra))
                elif self.round >= self.rounds:
                    self._final_scoring(put)
                else:
                    self.deal_round(self.round + 1, (self.start_player + 1) % self.seats, rng, put)
            else:
                return

    def deal_round(self, round_no: int, start: int, rng: Rng, emit: Emit) -> None:
        """Round ``round_no`` up to its prices: the round starts, income, each seat draws its
        3 in turn order from ``start`` (a short bag leaves the last seats fewer), the variant's
        extra tile."""
        emit(m.RoundStarted(round=round_no, start_player=start))
        emit(income(self))
        bag = list(self.bag)
        n = self.seats
        below = rng.below
        hands: list[list[str]] = [[] for _ in range(n)]
        for i in range(n):
            hand = hands[(start + i) % n]
            for _ in range(TILES_PER_SEAT):
                if bag:
                    hand.append(bag.pop(below(len(bag))))
        extra = None
        if self.advanced_variant and bag:
            extra = bag.pop(below(len(bag)))
        emit(
            m.TilesDrawn(
                round=round_no,
                tiles=tuple(tuple(h) for h in hands),
                extra=extra,
                extra_price=round_no + 1 if extra else 0,
            )
        )
        emit(_PHASE["prices"])

    def _round_points(self) -> m.RoundScored:
        letters = schedule(self.seats)[self.round - 1]
        territories = [p.territory for p in self.players]
        golds = [p.gold for p in self.players]
        points: list[dict[str, int]] = [{} for _ in range(self.seats)]
        for letter in letters:
            tile = self.scoring_tiles[LETTERS.index(letter)]
            for seat, pts in enumerate(scoring.score_tile(tile, territories, golds)):
                points[seat][letter] = pts
        return m.RoundScored(round=self.round, points=tuple(points))

    def _final_scoring(self, emit: Emit) -> None:
        """Scrolls and gold, then ``game_ended`` with the result."""
        players = self.players
        scrolls = tuple(scoring.scroll_points(p.territory) for p in players)
        gold = tuple(scoring.gold_points(p.gold) for p in players)
        emit(m.GameScored(scrolls=scrolls, gold=gold))
        done = result(self)
        emit(
            m.GameEnded(
                scores=tuple(done["scores"]),
                tiebreak=tuple(done["tiebreak"]),
                winners=tuple(done["winners"]),
                ranks=tuple(done["ranks"]),
                draw=done["draw"],
            )
        )


def check_prices(p: Any, cmd: m.SetPrices) -> None:
    """Raises ``GameError`` unless ``cmd`` is a legal axe and prices for seat ``p`` (its drawn
    tiles and gold; ``apply`` checks the phase and the turn)."""
    drawn = set(p.drawn)
    if cmd.discard is None:
        raise illegal("discard_required", "put the axe on one of your drawn tiles")
    if cmd.discard not in drawn:
        raise illegal("not_your_tile", f"you did not draw {cmd.discard}")
    for tile, price in cmd.prices.items():
        if tile == cmd.discard:
            raise illegal("discard_priced", f"{tile} carries the axe; it cannot have a price")
        if tile not in drawn:
            raise illegal("not_your_tile", f"you did not draw {tile}")
        if price < 1:
            raise illegal("price_too_low", f"{tile} needs at least 1 gold")
    # Every priced tile is drawn and not the axe (checked above), so a price is missing exactly
    # when there are fewer prices than tiles besides the axe: the sets are built only then
    # (each play-out prices every seat's tiles).
    if len(cmd.prices) != len(drawn) - 1:
        missing = sorted(drawn - {cmd.discard} - set(cmd.prices))
        raise illegal("missing_price", f"set a price on {', '.join(missing)}")
    total = sum(cmd.prices.values())
    if total > p.gold:
        raise illegal("not_enough_gold", f"prices total {total} but you have {p.gold} gold")


def opening(event: m.GameStarted, rng: Rng) -> list[Any]:
    """``setup``'s events after ``game_started``: round 1 up to the prices (and, with an empty
    bag, what follows)."""
    table = Table.start(event)
    events: list[Any] = []
    emit = recorder(table, events)
    table.deal_round(1, event.first_player, rng, emit)
    table.settle(rng, emit)
    return events
