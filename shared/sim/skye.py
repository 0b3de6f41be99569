"""A fast, mutable simulator of Isle of Skye for search play-outs, equal to ``shared.games.skye``,
and the play-out ISMCTS uses for Skye.

The pure engine stays the source of truth; ``tests/unit/test_sim_skye.py`` proves ``Sim``
equal to it (the same ``to_act``, ``legal_commands``, ``outcome`` and, through ``to_state``,
the same state after the same commands and the same random draws).

Why ``Sim`` is faster than ``ismcts.random_playout`` on the engine: one mutable object instead
of a new frozen ``State`` and ``Player`` per event (a Skye move folds 3 to 10 events, each
built twice: once in ``decide``'s automatic phases and once by the caller), no event objects,
no listing of every placement command (a uniform index among the spots is drawn and located),
and prices drawn straight from the state instead of through ``random_command``'s whole view
(every seat's territory as JSON, and the placements as JSON, per price decision). The costly
geometry stays the engine's own: ``Territory`` (immutable, caching spots, areas and roads, so
a territory the play-out does not touch keeps its caches) and ``scoring``.

The state moves only through the phases that wait for players (``prices``, ``buying``,
``building``) and ``game_over``; everything automatic between them (reveal, axe, unsold tiles,
returned tiles, round scoring, the extra tile, income and the draw of the next round) runs
inside the move that leads to it, as in the engine's ``decide``. The game's own random draws
(each round's tiles) go through ``chance`` exactly as the engine asks its ``Rng.below`` (same
bag order, same bounds, same sequence), so the same draws give the same state.

Play-outs (``shared.bots.ismcts.Rollout``s):

* ``random_playout`` / ``random_rollout``: uniformly random legal commands to the end of the
  game (prices with ``random_command``'s distribution): in distribution the play-outs of
  ``ismcts.random_playout(skye, state, rand)``, about 3x faster, but a poor signal: random
  builders blur what a position is worth, and random buyers buy whatever they can afford;
* ``modelled_rollout``, what ``playout_rollout`` (ISMCTS's default for Skye) is: the rest of
  the current round's market as the ``heuristic`` bot plays it (its prices and purchases for
  every seat), then a static evaluation (``evaluate``) turned into win shares (see "search
  against heuristic-like opponents" below);
* ``evaluated_rollout``, the former default: the rest of the current round's market only
  (random prices, greedy buyers), then ``evaluate``; cheaper and less noisy than random play
  to the end, but it won 10% against two heuristics (30 games).
  ``random_round_rollout`` (random play to the round's end, then ``evaluate``) is kept for
  comparison.

``sample_command``, ``determinizer`` (``modelled_determinizer``: the heuristic's prices for a
hidden-priced seat; ``uniform_determinizer`` deals as ``skye.determinize``), ``root_commands``
(the heuristic's choice and, for prices, its alternatives), ``root_candidates`` and
``FLAT_SEARCH`` are the hooks ``shared.bots.ismcts`` reads.
Everything here is pure: no I/O, no clock, randomness only from the generators passed in;
the ``functools`` caches are memoisation of pure functions of immutable values.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from shared.bots import ismcts
from shared.bots import skye as skye_bot
from shared.games import base
from shared.games.errors import NOT_YOUR_TURN, GameError, illegal
from shared.games.skye import engine as skye_engine
from shared.games.skye import messages as m
from shared.games.skye import scoring
from shared.games.skye.data import LETTERS, SCORING, schedule
from shared.games.skye.state import Player, State, evolve, replace
from shared.games.skye.territory import Placement, Territory

# Phases as small ints (tested on every move); PHASES[code] is the engine's name.
PRICES, BUYING, BUILDING, OVER = range(4)
PHASES = ("prices", "buying", "building", "game_over")
_PHASE_CODE = {name: code for code, name in enumerate(PHASES)}

TILES_PER_SEAT = skye_engine.TILES_PER_SEAT

# (n) -> uniform int in [0, n), n >= 1: how every choice and every chance draw is asked.
Below = Callable[[int], int]

_PASS = m.Pass()


class Draws(Protocol):
    """What ``apply`` draws the game's chance events with: the engines' ``Rng.below``."""

    def below(self, n: int) -> int: ...


@functools.lru_cache(maxsize=1 << 15)
def _place(tile: str, x: int, y: int, rotation: int) -> m.Place:
    """A shared ``Place`` command (immutable, equal to the engine's)."""
    return m.Place(tile=tile, x=x, y=y, rotation=rotation)


@functools.lru_cache(maxsize=1 << 10)
def _buy(tile: str) -> m.Buy:
    """A shared ``Buy`` command."""
    return m.Buy(tile=tile)


def draw_prices(tiles: Sequence[str], gold: int, below: Below) -> tuple[str | None, dict[str, int]]:
    """An axe and prices for ``tiles`` with ``gold`` in hand, distributed exactly as the
    engine's ``random_prices`` (the draw of ``random_command`` in the price phase): the axe
    uniform over the tiles, the prices uniform over every vector of integers >= 1 with sum at
    most ``gold``.

    Instead of rejection sampling, a uniform ``k``-subset of ``1..gold`` (Floyd's algorithm,
    ``k`` the tiles to price) read as the partial sums of the prices: that map is a bijection
    onto those vectors, so the vector is uniform, and it costs ``k`` draws instead of about
    ``2k``. Raises ``GameError`` (as the engine does) if ``gold`` cannot put 1 on each."""
    if not tiles:
        return None, {}
    n = len(tiles)
    discard = tiles[below(n)] if n > 1 else tiles[0]
    rest = [t for t in tiles if t != discard]
    k = len(rest)
    if k > gold:
        raise illegal(
            "not_enough_gold", f"each priced tile needs 1 gold: {k} needed, you have {gold}"
        )
    if not k:
        return discard, {}
    chosen: set[int] = set()
    for j in range(gold - k + 1, gold + 1):  # Floyd: a uniform k-subset of 1..gold
        t = 1 + below(j)
        chosen.add(j if t in chosen else t)
    sums = sorted(chosen)
    prices = {rest[0]: sums[0]}
    for i in range(1, k):
        prices[rest[i]] = sums[i] - sums[i - 1]
    return discard, prices


class Sim:
    """An Isle of Skye game as one mutable object: ``apply`` and the play-outs change it in
    place.

    Per seat (lists indexed by seat): ``territory`` (the engine's immutable ``Territory``),
    ``gold`` (in hand, as ``Player.gold``), ``score``, ``drawn`` / ``offer`` / ``discard`` /
    ``prices_set`` / ``to_place`` as in ``Player`` (lists instead of tuples), and the score
    breakdown (``round_points``, ``scroll_points``, ``gold_points``) so that ``to_state`` is
    the engine's state exactly. The bag is a sorted list, as the engine's sorted tuple, so a
    draw of index ``i`` takes the same tile.
    """

    __slots__ = (
        "seats",
        "rounds",
        "scoring_tiles",
        "advanced_variant",
        "schedule",
        "round",
        "phase",
        "start_player",
        "revealed",
        "buys_done",
        "extra",
        "extra_price",
        "bag",
        "castle",
        "territory",
        "gold",
        "score",
        "round_points",
        "scroll_points",
        "gold_points",
        "drawn",
        "discard",
        "offer",
        "prices_set",
        "to_place",
    )

    seats: int
    rounds: int
    scoring_tiles: tuple[str, ...]
    advanced_variant: bool
    schedule: tuple[tuple[str, ...], ...]
    round: int
    phase: int
    start_player: int
    revealed: bool
    buys_done: int
    extra: str | None
    extra_price: int
    bag: list[str]
    castle: list[str]
    territory: list[Territory]
    gold: list[int]
    score: list[int]
    round_points: list[tuple[tuple[tuple[str, int], ...], ...]]
    scroll_points: list[tuple[tuple[str, int], ...]]
    gold_points: list[int]
    drawn: list[list[str]]
    discard: list[str | None]
    offer: list[list[tuple[str, int]]]
    prices_set: list[bool]
    to_place: list[list[str]]

    # --- conversion ---------------------------------------------------------------------------

    @classmethod
    def from_state(cls, state: State) -> Sim:
        """A simulator at the engine's ``state`` (a phase that waits for players, or
        ``game_over``; determinized states included). Territories are shared, not copied:
        they are immutable, and sharing keeps their caches."""
        if state.phase not in _PHASE_CODE:
            raise ValueError(f"not a state between commands: phase {state.phase!r}")
        sim = cls.__new__(cls)
        players = state.players
        sim.seats = state.seats
        sim.rounds = state.rounds
        sim.scoring_tiles = state.scoring_tiles
        sim.advanced_variant = state.advanced_variant
        sim.schedule = schedule(state.seats)
        sim.round = state.round
        sim.phase = _PHASE_CODE[state.phase]
        sim.start_player = state.start_player
        sim.revealed = state.revealed
        sim.buys_done = state.buys_done
        sim.extra = state.extra
        sim.extra_price = state.extra_price
        sim.bag = list(state.bag)
        sim.castle = [p.castle for p in players]
        sim.territory = [p.territory for p in players]
        sim.gold = [p.gold for p in players]
        sim.score = [p.score for p in players]
        sim.round_points = [p.round_points for p in players]
        sim.scroll_points = [p.scroll_points for p in players]
        sim.gold_points = [p.gold_points for p in players]
        sim.drawn = [list(p.drawn) for p in players]
        sim.discard = [p.discard for p in players]
        sim.offer = [list(p.offer) for p in players]
        sim.prices_set = [p.prices_set for p in players]
        sim.to_place = [list(p.to_place) for p in players]
        return sim

    def to_state(self) -> State:
        """The engine's ``State`` for this position (``==`` the engine's own; not fast)."""
        players = tuple(
            Player(
                castle=self.castle[i],
                territory=self.territory[i],
                gold=self.gold[i],
                score=self.score[i],
                round_points=self.round_points[i],
                scroll_points=self.scroll_points[i],
                gold_points=self.gold_points[i],
                drawn=tuple(self.drawn[i]),
                discard=self.discard[i],
                offer=tuple(self.offer[i]),
                prices_set=self.prices_set[i],
                to_place=tuple(self.to_place[i]),
            )
            for i in range(self.seats)
        )
        return State(
            seats=self.seats,
            rounds=self.rounds,
            scoring_tiles=self.scoring_tiles,
            advanced_variant=self.advanced_variant,
            players=players,
            bag=tuple(self.bag),
            round=self.round,
            phase=PHASES[self.phase],
            start_player=self.start_player,
            revealed=self.revealed,
            buys_done=self.buys_done,
            extra=self.extra,
            extra_price=self.extra_price,
        )

    # --- queries ------------------------------------------------------------------------------

    def buyer(self) -> int | None:
        """``State.buyer``: the seat to buy or pass, or None outside the buying."""
        if self.phase != BUYING or self.buys_done >= self.seats:
            return None
        return (self.start_player + self.buys_done) % self.seats

    def to_act(self) -> tuple[int, ...]:
        """``skye.to_act``: every seat still to set prices; the buyer; every seat with tiles
        to place."""
        phase = self.phase
        if phase == PRICES:
            return tuple(i for i, done in enumerate(self.prices_set) if not done)
        if phase == BUYING:
            buyer = self.buyer()
            return () if buyer is None else (buyer,)
        if phase == BUILDING:
            return tuple(i for i, tiles in enumerate(self.to_place) if tiles)
        return ()

    def _buy_options(self, seat: int) -> list[tuple[str, int | None, int]]:
        """(tile, seller or None for the extra tile, price) of every tile ``seat`` may buy,
        in the engine's ``buy_options`` order."""
        gold = self.gold[seat]
        out: list[tuple[str, int | None, int]] = [
            (t, i, price)
            for i, offer in enumerate(self.offer)
            if i != seat
            for t, price in offer
            if price <= gold
        ]
        if self.extra is not None and self.extra_price <= gold:
            out.append((self.extra, None, self.extra_price))
        return out

    def legal_commands(self, seat: int) -> list[Any]:
        """``skye.legal_commands``: equal commands in the same order (a new list each call)."""
        if self.phase == OVER or not 0 <= seat < self.seats:
            return []
        if self.phase == PRICES:
            if self.prices_set[seat]:
                return []
            return [m.SetPricesTemplate.for_tiles(tuple(self.drawn[seat]), self.gold[seat])]
        if self.phase == BUYING:
            if self.buyer() != seat:
                return []
            return [*(_buy(t) for t, _, _ in self._buy_options(seat)), _PASS]
        territory = self.territory[seat]
        return [
            _place(tile, x, y, r)
            for tile in dict.fromkeys(self.to_place[seat])
            for x, y, r in territory.spots(tile)
        ]

    def winners(self) -> list[int]:
        """The seats ranked first: highest score, ties broken by leftover gold (``gold % 5``),
        as the engine's ``outcome``."""
        keys = [(s, g % scoring.GOLD_PER_POINT) for s, g in zip(self.score, self.gold, strict=True)]
        best = max(keys)
        return [i for i, k in enumerate(keys) if k == best]

    def outcome(self) -> dict[str, Any] | None:
        """``skye.outcome``: None while the game runs; then scores, tie-break, winners, ranks
        and ``draw``."""
        if self.phase != OVER:
            return None
        scores = list(self.score)
        tiebreak = [scoring.leftover_gold(g) for g in self.gold]
        ranks = base.ranks_from_scores(scores, tiebreak)
        winners = [i for i, r in enumerate(ranks) if r == 1]
        return {
            "scores": scores,
            "tiebreak": tiebreak,
            "winners": winners,
            "ranks": ranks,
            "draw": len(winners) > 1,
        }

    def rewards(self) -> list[float]:
        """``ismcts.rewards`` of the outcome: 1 to the sole winner, ``1/k`` to each of ``k``
        winners, 0 otherwise (for a finished game)."""
        winners = self.winners()
        out = [0.0] * self.seats
        share = 1.0 / len(winners)
        for w in winners:
            out[w] = share
        return out

    def capped_rewards(self) -> list[float]:
        """``ismcts._capped``: each seat's share of the other seats it outscores (ties half)."""
        scores = self.score
        n = len(scores)
        if n < 2:
            return [1.0] * n
        return [
            (sum(1.0 if mine > other else 0.5 if mine == other else 0.0 for other in scores) - 0.5)
            / (n - 1)
            for mine in scores
        ]

    # --- commands -----------------------------------------------------------------------------

    def apply(self, seat: int, command: Any, rng: Draws) -> None:
        """``seat`` sends ``command``: the state ``skye.decide`` and ``skye.evolve`` would give,
        drawing the next round's tiles from ``rng.below`` exactly as ``decide`` does.

        Only commands the simulator sees are legal take its own path; anything else goes to
        the engine, which raises its ``GameError`` (or decides it, for a command only the
        engine understands, such as the listed price template), so the simulator never
        accepts what the engine refuses."""
        kind = type(command)
        chance = rng.below
        if kind is m.SetPrices and self._prices_ok(seat, command):
            self._set_prices(seat, command.discard, command.prices, chance)
        elif kind is m.Pass and self.buyer() == seat:
            self._pass(chance)
        elif kind is m.Buy and self.buyer() == seat:
            options = {t: (seller, price) for t, seller, price in self._buy_options(seat)}
            if command.tile not in options:
                self._through_engine(seat, command, rng)
                return
            seller, price = options[command.tile]
            self._bought(seat, command.tile, seller, price, chance)
        elif (
            kind is m.Place
            and self.phase == BUILDING
            and 0 <= seat < self.seats
            and command.tile in self.to_place[seat]
            and self.territory[seat].check(command.tile, command.x, command.y, command.rotation)
            is None
        ):
            self._placed(seat, command.tile, command.x, command.y, command.rotation, chance)
        else:
            self._through_engine(seat, command, rng)

    def _prices_ok(self, seat: int, command: m.SetPrices) -> bool:
        """Whether ``command`` is a legal ``set_prices`` for ``seat`` now (the engine's
        ``_check_prices`` and phase checks)."""
        if self.phase != PRICES or not 0 <= seat < self.seats or self.prices_set[seat]:
            return False
        drawn = set(self.drawn[seat])
        prices = command.prices
        return (
            command.discard in drawn
            and command.discard not in prices
            and set(prices) == drawn - {command.discard}
            and all(isinstance(p, int) and p >= 1 for p in prices.values())
            and sum(prices.values()) <= self.gold[seat]
        )

    def _through_engine(self, seat: int, command: Any, rng: Any) -> None:
        """The engine decides (raising its ``GameError`` for an illegal command, before any
        change here); its resulting state is loaded."""
        state = self.to_state()
        for event in skye_engine.decide(state, seat, command, rng):
            state = evolve(state, event)
        other = Sim.from_state(state)
        for name in Sim.__slots__:
            setattr(self, name, getattr(other, name))

    # --- the rules (each step followed by the automatic phases it leads to) ------------------

    def _set_prices(
        self, seat: int, discard: str | None, prices: Mapping[str, int], chance: Below
    ) -> None:
        self.discard[seat] = discard
        self.offer[seat] = [(t, prices[t]) for t in self.drawn[seat] if t in prices]
        self.gold[seat] -= sum(prices.values())
        self.prices_set[seat] = True
        if all(self.prices_set):
            self._reveal(chance)

    def _reveal(self, chance: Below) -> None:
        """Every seat has set prices: reveal, the axed tiles back into the bag, buying."""
        self.revealed = True
        bag = self.bag
        for i, axed in enumerate(self.discard):
            if axed is not None:
                bisect.insort(bag, axed)
                drawn = self.drawn[i]
                self.drawn[i] = [t for t in drawn if t != axed]
                self.discard[i] = None
        self.phase = BUYING
        if self.buys_done >= self.seats:  # only without seats; kept for the engine's order
            self._end_buying(chance)

    def _pass(self, chance: Below) -> None:
        self.buys_done += 1
        if self.buys_done >= self.seats:
            self._end_buying(chance)

    def _bought(self, seat: int, tile: str, seller: int | None, price: int, chance: Below) -> None:
        self.gold[seat] -= price
        self.to_place[seat].append(tile)
        if seller is None:
            self.extra = None
            self.extra_price = 0
        else:
            # The seller gets the price and takes back the gold it had put on the tile (which
            # is the price).
            self.gold[seller] += 2 * price
            self.drawn[seller].remove(tile)
            self.offer[seller] = [o for o in self.offer[seller] if o[0] != tile]
        self._pass(chance)

    def _end_buying(self, chance: Below) -> None:
        """Unsold tiles are kept (their gold is gone), then the building starts."""
        for i in range(self.seats):
            drawn = self.drawn[i]
            if drawn:
                self.to_place[i].extend(drawn)
                self.drawn[i] = []
            self.offer[i] = []
        self.phase = BUILDING
        for i in range(self.seats):
            self._return_if_stuck(i)
        if not any(self.to_place):
            self._score_round(chance)

    def _return_if_stuck(self, seat: int) -> None:
        """A seat none of whose tiles has a spot puts them all back into the bag."""
        tiles = self.to_place[seat]
        if not tiles:
            return
        territory = self.territory[seat]
        for tile in tiles:
            if territory.spots(tile):
                return
        bag = self.bag
        for tile in tiles:
            bisect.insort(bag, tile)
        self.to_place[seat] = []

    def _placed(self, seat: int, tile: str, x: int, y: int, rotation: int, chance: Below) -> None:
        self.territory[seat] = self.territory[seat].place(tile, x, y, rotation)
        self.to_place[seat].remove(tile)
        # Only this seat's territory and tiles changed, so only it can have become stuck.
        self._return_if_stuck(seat)
        if not any(self.to_place):
            self._score_round(chance)

    def _score_round(self, chance: Below) -> None:
        """The round's scoring tiles score; then the extra tile goes back, and the next round
        starts or the game ends."""
        letters = self.schedule[self.round - 1]
        territories = self.territory
        points: list[dict[str, int]] = [{} for _ in range(self.seats)]
        for letter in letters:
            tile = self.scoring_tiles[LETTERS.index(letter)]
            for seat, got in enumerate(scoring.score_tile(tile, territories, self.gold)):
                points[seat][letter] = got
        for i, pts in enumerate(points):
            self.score[i] += sum(pts.values())
            self.round_points[i] = (*self.round_points[i], tuple(pts.items()))
        if self.extra is not None:
            bisect.insort(self.bag, self.extra)
            self.extra = None
            self.extra_price = 0
        if self.round >= self.rounds:
            self._final_scoring()
        else:
            self._start_round(self.round + 1, (self.start_player + 1) % self.seats, chance)

    def _final_scoring(self) -> None:
        for i, territory in enumerate(self.territory):
            scrolls = scoring.scroll_points(territory)
            gold_points = scoring.gold_points(self.gold[i])
            self.score[i] += sum(scrolls.values()) + gold_points
            self.scroll_points[i] = tuple(scrolls.items())
            self.gold_points[i] = gold_points
        self.phase = OVER

    def _start_round(self, round_no: int, start: int, chance: Below) -> None:
        """Income, then each seat draws 3 tiles in turn order (the engine's draws exactly),
        the variant's extra tile, and the prices."""
        n = self.seats
        self.round = round_no
        self.start_player = start
        self.revealed = False
        self.buys_done = 0
        scores = self.score
        catch_up = scoring.CATCH_UP_GOLD
        per = catch_up[round_no - 1] if round_no <= len(catch_up) else catch_up[-1]
        for i, territory in enumerate(self.territory):
            ahead = sum(1 for s in scores if s > scores[i]) if per else 0
            self.gold[i] += (
                scoring.castle_income(territory)
                + scoring.connected_whisky_tiles(territory)
                + per * ahead
            )
        bag = self.bag
        hands: list[list[str]] = [[] for _ in range(n)]
        for k in range(n):
            hand = hands[(start + k) % n]
            for _ in range(TILES_PER_SEAT):
                if bag:
                    hand.append(bag.pop(chance(len(bag))))
        self.drawn = hands
        self.discard = [None] * n
        self.offer = [[] for _ in range(n)]
        self.prices_set = [not hand for hand in hands]
        if self.advanced_variant and bag:
            self.extra = bag.pop(chance(len(bag)))
            self.extra_price = round_no + 1
        self.phase = PRICES
        if all(self.prices_set):  # an empty bag (never with the real tiles)
            self._reveal(chance)

    # --- random play --------------------------------------------------------------------------

    def actor(self) -> int:
        """The seat ``ismcts.random_playout`` moves next: the first of ``to_act``."""
        phase = self.phase
        if phase == PRICES:
            return self.prices_set.index(False)
        if phase == BUYING:
            return (self.start_player + self.buys_done) % self.seats
        for i, tiles in enumerate(self.to_place):
            if tiles:
                return i
        raise RuntimeError("skye sim: nobody is to act")

    def random_move(self, pick: Below, chance: Below) -> tuple[int, Any]:
        """One uniformly random legal command for ``actor()``, applied: ``(seat, command)``.

        A listed decision draws ``pick(len(legal))`` as an index into the engine's
        ``legal_commands`` (not called when there is one command); prices come from
        ``draw_prices`` (``random_command``'s distribution). ``chance`` draws what the
        engine's ``Rng`` draws (the next round's tiles)."""
        phase = self.phase
        if phase == PRICES:
            seat = self.prices_set.index(False)
            discard, prices = draw_prices(self.drawn[seat], self.gold[seat], pick)
            self._set_prices(seat, discard, prices, chance)
            return seat, m.SetPrices(discard=discard, prices=prices)
        if phase == BUYING:
            seat = (self.start_player + self.buys_done) % self.seats
            options = self._buy_options(seat)
            r = pick(len(options) + 1) if options else 0
            if r == len(options):  # Pass is listed last
                self._pass(chance)
                return seat, _PASS
            tile, seller, price = options[r]
            self._bought(seat, tile, seller, price, chance)
            return seat, _buy(tile)
        if phase == BUILDING:
            seat = self.actor()
            territory = self.territory[seat]
            tiles = self.to_place[seat]
            listing = [(tile, territory.spots(tile)) for tile in dict.fromkeys(tiles)]
            total = sum(len(spots) for _, spots in listing)
            r = pick(total) if total > 1 else 0
            for tile, spots in listing:
                if r < len(spots):
                    x, y, rotation = spots[r]
                    self._placed(seat, tile, x, y, rotation, chance)
                    return seat, _place(tile, x, y, rotation)
                r -= len(spots)
            raise RuntimeError(f"skye sim: seat {seat} is to build with no spot")
        raise RuntimeError("skye sim: the game is over")

    def play(self, pick: Below, chance: Below, cap: int) -> list[float]:
        """Random moves (``random_move``) until the game ends, then ``rewards``; after
        ``cap`` moves ``capped_rewards`` instead, counted as ``ismcts.random_playout`` counts
        (a game ending on the last allowed move is scored as capped there too)."""
        move = self.random_move
        for _ in range(cap):
            if self.phase == OVER:
                return self.rewards()
            move(pick, chance)
        return self.capped_rewards()

    def play_round(self, pick: Below, chance: Below) -> int:
        """Random moves until the current round has been scored (the next one's prices, or
        the game's end); returns the moves made."""
        round_no = self.round
        moves = 0
        move = self.random_move
        while self.phase != OVER and self.round == round_no:
            move(pick, chance)
            moves += 1
        return moves


def _randbelow(rand: random.Random) -> Below:
    """``rand``'s unchecked uniform integer in ``[0, n)`` for ``n >= 1``: what ``randrange``
    and ``choice`` call after checking their arguments (so ``FastRng(rand).below(n)`` draws
    the same numbers)."""
    below: Below = rand._randbelow  # type: ignore[attr-defined]
    return below


def random_playout(state: State, rand: random.Random) -> list[float]:
    """``ismcts.random_playout(skye, state, rand)`` in distribution: uniformly random legal
    commands (prices as ``random_command`` draws them) from ``state`` until the game ends or
    ``ismcts.PLAYOUT_CAP`` moves; one reward per seat. Draws from ``rand`` differently from
    the engine path, so the same ``rand`` does not give the same game."""
    below = _randbelow(rand)
    return Sim.from_state(state).play(below, below, ismcts.PLAYOUT_CAP)


def playout_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """What ``ismcts`` uses by default for Skye (``default_rollout``): ``modelled_rollout``
    (the round's market as the heuristic plays it, then ``evaluate``). ``evaluated_rollout``
    (random prices, greedy buyers) won 10% against two heuristics (30 games)."""
    return modelled_rollout(engine, state, rand)


def random_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """``random_playout`` as an ``ismcts.Rollout`` (``engine`` is Skye's; not read)."""
    return random_playout(state, rand)


# --- static evaluation -----------------------------------------------------------------------

# Points per coin in the evaluation (``coin_value``): the final scoring's 1 per 5, plus this
# much per round still to come, since gold buys tiles before the end (the heuristic bot's
# coin is worth 0.5 to 0.2 points). Tuned against the heuristic: a flat 0.25 made the search
# hoard gold, a flat 0.15 sell its tiles too cheaply.
GOLD_FINAL = 0.2
GOLD_PER_ROUND = 0.06
# Points per tile in a territory and round still to come after the current one: what a tile
# will still make of later ones (squares, lines, areas to close), which the points it scores
# as it is leave out. Without it the search valued tiles below gold (margin against the
# heuristic -11.7 points a game; 0.3: -5; 0.6: -10, in 18 games each).
TILE_POINTS = 0.3
# How a buyer in ``evaluated_rollout`` judges a tile: its gain over at most this many spots
# (those touching the most tiles, where good placements usually are; every spot costs an
# area count).
ESTIMATE_SPOTS = 4
# The softness of ``win_shares``: about the points by which the rest of a game can still
# move one seat against another, so it grows with the rounds left after the current one.
WIN_TEMPERATURE = 2.0
WIN_TEMPERATURE_PER_ROUND = 1.5

# (scoring tile id, times it still scores) for the tiles that look at one territory
Weights = tuple[tuple[str, int], ...]


def coin_value(incomes_left: int) -> float:
    """Points per coin with ``incomes_left`` rounds to come after the current one: the final
    scoring's 1 per 5, plus what gold can still buy before the end."""
    return GOLD_FINAL + GOLD_PER_ROUND * incomes_left


class Outlook:
    """What is still to come from the position of a ``Sim``: per scoring tile, how many
    scorings are left (split into tiles scored per territory and majority tiles), and the
    incomes still to be paid. The current round still scores unless it is over; between two
    rounds the state sits at the next round's prices, with its income paid."""

    __slots__ = ("weights", "majorities", "incomes_left", "coin")

    def __init__(self, sim: Sim) -> None:
        counts: dict[str, int] = {}
        for letters in sim.schedule[sim.round - 1 : sim.rounds]:
            for letter in letters:
                counts[letter] = counts.get(letter, 0) + 1
        weights: list[tuple[str, int]] = []
        majorities: list[tuple[str, int]] = []
        for letter, count in sorted(counts.items()):
            tile = sim.scoring_tiles[LETTERS.index(letter)]
            if SCORING[tile].formal["kind"] == "majority":
                majorities.append((tile, count))
            else:
                weights.append((tile, count))
        self.weights: Weights = tuple(weights)
        self.majorities: tuple[tuple[str, int], ...] = tuple(majorities)
        self.incomes_left = max(sim.rounds - sim.round, 0)
        self.coin = coin_value(self.incomes_left)


@functools.lru_cache(maxsize=1 << 14)
def territory_value(territory: Territory, weights: Weights, incomes_left: int) -> float:
    """What a territory is worth from here on, by itself: the points it scores *now* under
    each scoring tile still to score, once per scoring left (a floor: it only grows), its
    end-game scroll points, and the gold its road-connected whisky tiles pay in the incomes
    still to come. Cached by value: territories are immutable and hash by their placements,
    and a search meets the same ones in iteration after iteration."""
    value = 0.0
    for tile, count in weights:
        value += count * scoring.score_tile(tile, (territory,), (0,))[0]
    value += sum(scoring.scroll_points(territory).values())
    value += coin_value(incomes_left) * incomes_left * scoring.connected_whisky_tiles(territory)
    # What the tiles will still make of later tiles (squares, lines, areas to close): the
    # points above count only what they score as they are.
    value += TILE_POINTS * incomes_left * (len(territory) - 1)
    return value


def _majority_measure(tile: str, territory: Territory, gold: int) -> int:
    measure = str(SCORING[tile].formal["measure"])
    if measure.startswith("tiles_with_whisky"):
        return territory.whisky_tiles()
    if measure.startswith("ship"):
        return territory.icon_total("ship")
    return gold


def evaluate(sim: Sim, outlook: Outlook | None = None) -> list[float]:
    """Each seat's expected final score, statically: points so far, plus ``territory_value``,
    plus ``pending_gain`` for each tile still to place, plus the majority tiles still to
    score as they would score now, plus ``Outlook.coin`` per coin in hand."""
    outlook = outlook or Outlook(sim)
    weights, incomes_left = outlook.weights, outlook.incomes_left
    territories, golds = sim.territory, sim.gold
    building = sim.phase == BUILDING
    values = [
        s
        + territory_value(t, weights, incomes_left)
        + sum(pending_gain(t, tile, weights, incomes_left, building) for tile in pending)
        + outlook.coin * g
        for s, t, g, pending in zip(sim.score, territories, golds, sim.to_place, strict=True)
    ]
    for tile, count in outlook.majorities:
        formal = SCORING[tile].formal
        measures = [_majority_measure(tile, t, g) for t, g in zip(territories, golds, strict=True)]
        points = scoring.majority(measures, formal["first"], formal["second"], formal.get("min", 1))
        for seat, pts in enumerate(points):
            values[seat] += count * pts
    return values


def _touching(territory: Territory, spot: tuple[int, int, int]) -> int:
    at = territory.tile_at
    x, y, _ = spot
    return sum(at((x + dx, y + dy)) is not None for dx, dy in ((0, 1), (1, 0), (0, -1), (-1, 0)))


@functools.lru_cache(maxsize=1 << 14)
def tile_gain(territory: Territory, tile: str, weights: Weights, incomes_left: int) -> float:
    """About what ``tile`` adds to ``territory``'s ``territory_value`` at its best spot, over
    the ``ESTIMATE_SPOTS`` spots touching the most tiles; 0 without a spot."""
    spots = territory.spots(tile)
    if not spots:
        return 0.0
    if len(spots) > ESTIMATE_SPOTS:
        # A stable sort: the same spots every time.
        spots = tuple(sorted(spots, key=lambda s: -_touching(territory, s))[:ESTIMATE_SPOTS])
    base = territory_value(territory, weights, incomes_left)
    return max(
        territory_value(territory.place(tile, x, y, r), weights, incomes_left) - base
        for x, y, r in spots
    )


def pending_gain(
    territory: Territory, tile: str, weights: Weights, incomes_left: int, building: bool
) -> float:
    """What a tile still to place is worth to ``territory``: its ``tile_gain``, except while
    building, where it is the gain on the territory before its last placement (as long as
    the tile still has a spot), so that the many territories a building seat's candidates
    lead to share one cached estimate (for a search's first placement, the gains on the
    territory it started from) instead of counting areas at four spots each."""
    if not building or len(territory) < 2:
        return tile_gain(territory, tile, weights, incomes_left)
    if not territory.spots(tile):
        return 0.0
    return tile_gain(_parent(territory.placements[:-1]), tile, weights, incomes_left)


@functools.lru_cache(maxsize=1 << 12)
def _parent(placements: tuple[Placement, ...]) -> Territory:
    """The territory of these placements (shared, so that its caches are)."""
    return Territory(placements)


def greedy_buy(sim: Sim, seat: int, outlook: Outlook) -> tuple[str, int | None, int] | None:
    """The buy ``evaluated_rollout`` makes for ``seat``: the affordable tile with the best
    ``tile_gain`` minus its price at ``Outlook.coin`` per coin, if that is positive; else None
    (pass). Random buyers would buy whatever they can afford, so that a search would learn to
    ask high prices that no thinking buyer pays."""
    best = None
    best_score = 0.0
    territory = sim.territory[seat]
    for option in sim._buy_options(seat):
        tile, _, price = option
        score = tile_gain(territory, tile, outlook.weights, outlook.incomes_left)
        score -= outlook.coin * price
        if score > best_score:
            best, best_score = option, score
    return best


def _buy_out(
    sim: Sim, choose: Callable[[int], tuple[str, int | None, int] | None], below: Below
) -> None:
    """Every purchase left in the round, each seat in turn buying what ``choose(seat)`` names
    (tile, seller, price) or passing on None."""
    while sim.phase == BUYING:
        seat = (sim.start_player + sim.buys_done) % sim.seats
        choice = choose(seat)
        if choice is None:
            sim._pass(below)
        else:
            tile, seller, price = choice
            sim._bought(seat, tile, seller, price, below)


def evaluated_rollout(state: State, rand: random.Random) -> list[float]:
    """The current round's remaining prices (random, as ``random_command`` draws them) and
    buys (``greedy_buy``), then rewards (``win_shares``) from ``evaluate``, which values the
    tiles still to place by their ``tile_gain`` instead of placing them."""
    below = _randbelow(rand)
    sim = Sim.from_state(state)
    outlook = Outlook(sim)
    if sim.phase == PRICES and not any(sim.prices_set[i] for i, d in enumerate(sim.drawn) if d):
        # A round that has only just begun (a search crossing into the next round): its
        # tiles lie untouched with every seat; playing its market out would value territories
        # the search never meets again.
        return win_shares(evaluate(sim, outlook), temperature_of(sim))
    round_no = sim.round
    while sim.phase == PRICES and sim.round == round_no:
        sim.random_move(below, below)
    _buy_out(sim, lambda seat: greedy_buy(sim, seat, outlook), below)
    if sim.phase == OVER:
        return sim.rewards()
    if sim.round != round_no:  # every tile came back: the round was scored already
        outlook = Outlook(sim)
    return win_shares(evaluate(sim, outlook), temperature_of(sim))


def temperature_of(sim: Sim) -> float:
    """``win_shares``' temperature for the position of ``sim``."""
    return WIN_TEMPERATURE + WIN_TEMPERATURE_PER_ROUND * max(sim.rounds - sim.round, 0)


def random_round_rollout(state: State, rand: random.Random) -> list[float]:
    """Uniformly random play (``random_move``) to the end of the current round, then
    ``evaluate``: the plain truncated play-out, for comparison (noisier: random builders
    blur what the position is worth)."""
    below = _randbelow(rand)
    sim = Sim.from_state(state)
    sim.play_round(below, below)
    if sim.phase == OVER:
        return sim.rewards()
    return win_shares(evaluate(sim), temperature_of(sim))


def win_shares(values: Sequence[float], temperature: float) -> list[float]:
    """Rewards from evaluations: a softmax, i.e. each seat's chance to end first if the
    rest of the game adds independent Gumbel noise of scale ``temperature`` to each value.
    They lie in [0, 1] and sum to 1 like a game's rewards; equal evaluations share evenly.
    Softer than a win indicator of the evaluation (1 to the leader): a search then sees a
    move that gains a point even while far ahead or behind."""
    top = max(values)
    weights = [math.exp((v - top) / temperature) for v in values]
    total = sum(weights)
    return [w / total for w in weights]


# --- hooks for ISMCTS (proposed: see the module's report) ------------------------------------


def sample_command(state: State, seat: int, rand: random.Random) -> Any:
    """One ``random_command`` draw for ``seat`` in ``state``, as an engine command, without
    the view ``ismcts._sample`` builds for it (every territory as JSON, per draw): in the
    price phase ``draw_prices`` (the same distribution), else a uniform listed command."""
    p = state.players[seat]
    if state.phase == "prices" and not p.prices_set:
        discard, prices = draw_prices(p.drawn, p.gold, _randbelow(rand))
        return m.SetPrices(discard=discard, prices=prices)
    legal = skye_engine.legal_commands(state, seat)
    if not legal:
        raise GameError(NOT_YOUR_TURN, "nothing to do now")
    return legal[_randbelow(rand)(len(legal))]


def uniform_determinizer(view: Mapping[str, Any], seat: int) -> Callable[[Any], State]:
    """``rng -> state``: ``skye.determinize(view, seat, rng)`` in distribution, with the view
    read once. Everything but the unrevealed axes and prices of other seats is the same in
    every deal, so one template state is built and shared (states and territories are
    immutable), and with it the territories' cached spots, areas and roads; a deal only
    draws the hidden prices (``draw_prices``: ``random_prices``' distribution)."""
    return _hidden_price_dealer(view, seat, modelled=False)


def _hidden_price_dealer(
    view: Mapping[str, Any], seat: int, *, modelled: bool
) -> Callable[[Any], State]:
    """The deals of ``uniform_determinizer`` or, ``modelled``, of ``modelled_determinizer``:
    one template state, and per deal only the hidden seats' prices drawn."""
    template = skye_engine.determinize(view, seat, _ZERO)
    views = view["players"]
    hidden = [
        i for i, pv in enumerate(views) if pv["prices_set"] and pv["offer"] is None and pv["drawn"]
    ]
    if not hidden:
        return lambda rng: template
    players = template.players
    totals = {i: int(views[i]["gold"]) for i in hidden}  # gold in hand + gold on the tiles
    predicted: dict[int, tuple[str | None, dict[str, int]]] = {}
    for i in hidden if modelled else ():
        before = Sim.from_state(template)
        before.prices_set[i] = False
        before.gold[i] = totals[i]
        before.discard[i] = None
        before.offer[i] = []
        predicted[i] = modelled_prices(before, i)

    def deal(rng: Any) -> State:
        below = rng.below
        out = list(players)
        for i in hidden:
            p = players[i]
            if modelled and below(MODEL_DEN) < MODEL_NUM:
                discard, prices = predicted[i]
            else:
                discard, prices = draw_prices(p.drawn, totals[i], below)
            offer = tuple((t, prices[t]) for t in p.drawn if t in prices)
            out[i] = replace(p, discard=discard, offer=offer, gold=totals[i] - sum(prices.values()))
        new: State = replace(template, players=tuple(out))
        return new

    return deal


class _ZeroRng:
    """The ``Rng`` of the template deal: its hidden draws are replaced in every deal."""

    def below(self, n: int) -> int:
        return 0


_ZERO: Any = _ZeroRng()  # as the engines' ``Rng``: only ``below`` is asked


# Price candidates: a price near what the tile is worth to the seat itself (kept unsold, it
# costs that much) and near what it is worth to the seat that wants it most (sold, it pays
# that much); below 1, as ``shared.bots.skye`` does, so that keeping stays a good deal.
KEEP_PRICE_SHARE = 0.8
SELL_PRICE_SHARE = 0.8
# Axe positions tried: on the tiles least worth keeping or selling.
CANDIDATE_AXES = 2
# Uniform ``random_command`` draws added to the structured candidates.
RANDOM_CANDIDATES = 2


def root_candidates(view: Mapping[str, Any], rand: random.Random) -> list[dict[str, Any]]:
    """Candidate ``set_prices`` commands (client JSON) for the seat of ``view`` in the price
    phase, for the root of a search instead of ``ROOT_SAMPLES`` uniform draws (which spend
    most of a seat's gold at random and rarely ask a sensible price).

    Per tile ``tile_gain`` to the seat (``mine``) and the most to any other seat (``theirs``),
    in gold at ``Outlook.coin`` per coin; the axe on each of the ``CANDIDATE_AXES`` tiles with
    the smallest ``max(mine, theirs)``; each other tile priced 1, ``KEEP_PRICE_SHARE`` of
    ``mine`` or ``SELL_PRICE_SHARE`` of ``theirs`` (at least 1), every combination within the
    gold; then ``RANDOM_CANDIDATES`` uniform draws. Distinct, in a fixed order."""
    seat = int(view["seat"])
    me = view["players"][seat]
    tiles = [str(t) for t in me["drawn"]]
    gold = int(me["free_gold"])
    below = _randbelow(rand)
    if not tiles:
        return [{"type": "set_prices", "discard": None, "prices": {}}]
    sim = Sim.from_state(uniform_determinizer(view, seat)(_ZERO))
    outlook = Outlook(sim)
    weights, incomes_left = outlook.weights, outlook.incomes_left

    def gain(i: int, tile: str) -> float:
        return tile_gain(sim.territory[i], tile, weights, incomes_left)

    mine = {t: gain(seat, t) for t in tiles}
    theirs = {
        t: max((gain(i, t) for i in range(sim.seats) if i != seat), default=0.0) for t in tiles
    }

    def in_gold(points: float, share: float) -> int:
        return max(1, round(share * points / outlook.coin))

    levels = {
        t: sorted({1, in_gold(mine[t], KEEP_PRICE_SHARE), in_gold(theirs[t], SELL_PRICE_SHARE)})
        for t in tiles
    }
    axes = sorted(tiles, key=lambda t: (max(mine[t], theirs[t]), tiles.index(t)))
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    doc: dict[str, Any]
    for axe in axes[:CANDIDATE_AXES]:
        rest = [t for t in tiles if t != axe]
        for prices in itertools.product(*(levels[t] for t in rest)):
            if sum(prices) <= gold:
                doc = {
                    "type": "set_prices",
                    "discard": axe,
                    "prices": dict(zip(rest, prices, strict=True)),
                }
                out.setdefault(_doc_key(doc), doc)
    for _ in range(RANDOM_CANDIDATES):
        discard, drawn = draw_prices(tiles, gold, below)
        doc = {"type": "set_prices", "discard": discard, "prices": drawn}
        out.setdefault(_doc_key(doc), doc)
    return list(out.values())


def _doc_key(doc: Mapping[str, Any]) -> tuple[Any, ...]:
    return (doc["discard"], tuple(sorted(doc["prices"].items())))


# --- search against heuristic-like opponents -------------------------------------------------
#
# What ISMCTS searches for Skye (these hooks are read by ``shared.bots.ismcts``): only the
# prices, the decision where looking ahead pays (the heuristic places and buys). The other
# seats are modelled as the ``heuristic`` bot plays (a decent player's prices and buys, and the
# only other Skye policy the service has), where uniformly random prices and purchases made a
# search learn from opponents nobody meets. Everything comes from the searching seat's view:
# the heuristic's prices for another seat are a function of that seat's view, which holds
# nothing the searching seat cannot see either (prices are simultaneous; drawn tiles, gold and
# territories are public); a search may deal a share of uniform prices instead, for other
# opponents (``MODEL_NUM``; none today). The model is an assumption: against opponents that
# price or buy otherwise the search predicts their market wrongly. The search is flat
# (``FLAT_SEARCH``): UCB1 over the root's candidates, each iteration one modelled play-out of
# the round's market from a deal, the answer the best mean. What it finds: the prices at
# which the modelled buyers still buy (or no longer buy), which the heuristic only
# approximates by shares of worths.

# The tree of a Skye search is one level deep: below the root, every seat plays the model
# (``modelled_rollout``) instead of branching (a tree over the opponents' purchases assumed
# they search for themselves, and spent the budget on their options).
FLAT_SEARCH = True
# Out of ``MODEL_DEN`` deals, ``MODEL_NUM`` give a hidden-priced seat the heuristic's prices;
# the rest draw them uniformly (``draw_prices``). Every deal, for now: against two heuristics
# (90 games each, 200 iterations) a quarter of uniform deals won 68.9%, none 71.1%, and
# without them the play-outs are deterministic, so a search needs a visit per candidate.
MODEL_NUM = 1
MODEL_DEN = 1
# Prices tried per tile around the heuristic's own (and at the limits where a modelled buyer
# stops buying).
PRICE_STEPS = (-2, -1, 1, 2)

_EPSILON = 1e-9
_PRICE_MEMO: dict[tuple[Any, ...], tuple[str | None, dict[str, int]]] = {}


class Model:
    """The ``heuristic`` bot's valuation from a ``Sim`` (as ``shared.bots.skye._Context``
    computes it from a view): the scoring tiles still to come (per territory, and majority
    tiles with every seat's rivals' measures), the VP of a coin and the incomes still to come.
    Built once per position of the market (``model_of``): the territories do not change
    before the building, so its gains are memoised per (seat, tile)."""

    __slots__ = ("weights", "majorities", "gold_value", "incomes_left", "territories", "gains")

    def __init__(self, sim: Sim) -> None:
        remaining = sim.schedule[sim.round - 1 :]
        per_player: list[tuple[str, int]] = []
        majority_tiles: list[tuple[str, str, int]] = []
        for letter, tile in zip(LETTERS, sim.scoring_tiles, strict=False):
            count = sum(letter in letters for letters in remaining)
            if not count:
                continue
            formal = SCORING[tile].formal
            if formal["kind"] == "majority":
                kind = skye_bot._measure_kind(formal)
                if kind != "gold":  # as the heuristic: placements never change gold
                    majority_tiles.append((tile, kind, count))
            else:
                per_player.append((tile, count))
        self.weights: Weights = tuple(sorted(per_player))
        self.territories = tuple(sim.territory)
        self.majorities = [
            tuple(
                (
                    tid,
                    count,
                    tuple(
                        skye_bot._measure(kind, t)
                        for i, t in enumerate(self.territories)
                        if i != seat
                    ),
                )
                for tid, kind, count in majority_tiles
            )
            for seat in range(sim.seats)
        ]
        self.gold_value = skye_bot.gold_value(sim.round, sim.rounds)
        self.incomes_left = sim.rounds - sim.round
        self.gains: dict[tuple[int, str], float] = {}

    def gain(self, seat: int, tile: str) -> float:
        """What the heuristic thinks ``tile`` adds to ``seat``'s territory (its ``gain``)."""
        key = (seat, tile)
        got = self.gains.get(key)
        if got is None:
            got = self.gains[key] = skye_bot._best_gain(
                self.territories[seat],
                tile,
                self.weights,
                self.majorities[seat],
                self.gold_value,
                self.incomes_left,
                0,
            )
        return got


_MODELS: dict[tuple[Any, ...], Model] = {}
_MEMO_MAX = 1 << 12


def model_of(sim: Sim) -> Model:
    """The ``Model`` of ``sim``'s position (memoised by round and territories)."""
    key = (sim.round, sim.rounds, sim.scoring_tiles, tuple(sim.territory))
    model = _MODELS.get(key)
    if model is None:
        if len(_MODELS) >= _MEMO_MAX:
            _MODELS.clear()
        model = _MODELS[key] = Model(sim)
    return model


def modelled_buy(sim: Sim, seat: int, model: Model) -> tuple[str, int | None, int] | None:
    """The heuristic's purchase for ``seat`` (its ``_buy``; ties to the first listed): the
    affordable tile with the best gain minus its price in VP if that is positive, else None."""
    best = None
    best_score = _EPSILON
    lam = model.gold_value
    for option in sim._buy_options(seat):
        score = model.gain(seat, option[0]) - lam * option[2]
        if score > best_score:
            best, best_score = option, score
    return best


def modelled_prices(sim: Sim, seat: int) -> tuple[str | None, dict[str, int]]:
    """The heuristic's axe and prices for ``seat``, still to price in ``sim``'s price phase,
    from the view the service would give that seat (memoised by what that decision reads:
    the seat's drawn tiles and gold, every seat's territory and drawn tiles, the round)."""
    key = (
        seat,
        sim.round,
        sim.rounds,
        sim.scoring_tiles,
        sim.gold[seat],
        tuple(sim.territory),
        tuple(tuple(d) for d in sim.drawn),
    )
    hit = _PRICE_MEMO.get(key)
    if hit is not None:
        return hit
    state = sim.to_state()
    view = dict(skye_engine.view(state, seat))
    view["seat"] = seat
    # Ties are broken by a fixed generator: the model is a function of the position only.
    doc = skye_bot.choose(view, random.Random(0))
    assert doc is not None and doc["type"] == "set_prices"
    result = (doc["discard"], {str(t): int(p) for t, p in doc["prices"].items()})
    if len(_PRICE_MEMO) >= _MEMO_MAX:
        _PRICE_MEMO.clear()
    _PRICE_MEMO[key] = result
    return result


_EVALUATIONS: dict[tuple[Any, ...], list[float]] = {}


def memo_evaluate(sim: Sim) -> list[float]:
    """``evaluate(sim)`` memoised by the position after a market (the flat search's play-outs
    end in few distinct ones)."""
    key = (
        sim.round,
        sim.phase,
        sim.rounds,
        sim.scoring_tiles,
        tuple(sim.territory),
        tuple(tuple(t) for t in sim.to_place),
        tuple(sim.gold),
        tuple(sim.score),
    )
    got = _EVALUATIONS.get(key)
    if got is None:
        if len(_EVALUATIONS) >= _MEMO_MAX:
            _EVALUATIONS.clear()
        got = _EVALUATIONS[key] = evaluate(sim)
    return got


def modelled_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """The rest of the current round's market as the heuristic would play it for every seat
    (prices of the seats still to price, then every purchase, the searching seat's later ones
    included), then rewards (``win_shares``) from ``evaluate`` (the tiles still to place
    valued by their ``tile_gain``). ``engine`` is Skye's; not read."""
    below = _randbelow(rand)
    sim = Sim.from_state(state)
    if sim.phase == OVER:
        return sim.rewards()
    round_no = sim.round
    while sim.phase == PRICES and sim.round == round_no:
        seat = sim.prices_set.index(False)
        discard, prices = modelled_prices(sim, seat)
        sim._set_prices(seat, discard, prices, below)
    if sim.phase == BUYING:
        model = model_of(sim)
        _buy_out(sim, lambda seat: modelled_buy(sim, seat, model), below)
    if sim.phase == OVER:
        return sim.rewards()
    return win_shares(memo_evaluate(sim), temperature_of(sim))


def modelled_determinizer(view: Mapping[str, Any], seat: int) -> Callable[[Any], State]:
    """``rng -> state`` as ``determinizer``, but a hidden-priced seat gets the heuristic's
    prices (from its own view of the position before it priced) in ``MODEL_NUM`` of
    ``MODEL_DEN`` deals, ``draw_prices``' uniform ones otherwise. Either is legal for it."""
    return _hidden_price_dealer(view, seat, modelled=True)


# The deals ISMCTS asks for (its ``determinizer`` hook).
determinizer = modelled_determinizer


def root_commands(view: Mapping[str, Any], rand: random.Random) -> list[dict[str, Any]] | None:
    """The root's candidates (client JSON) for the searching seat (None outside the three
    decisions):

    * building and buying: the heuristic's choice alone (a forced move, so no search). Its
      greedy placement scores the territory exactly, where the evaluation only estimates
      tiles to place; and its purchases won more than the search's (against two heuristics
      at 200 iterations, 90 games each: 68.9% with the heuristic's purchases, 58.9% with
      every purchase searched);
    * prices: the heuristic's own prices first; then, with its axe, every combination of
      prices per tile among its price, that price ``PRICE_STEPS`` away, 1, and the prices
      at which the most eager modelled buyer still buys and no longer buys; then with each
      other axe, the combinations of the heuristic's price (or the tile's worth to the seat,
      for the tile it axed), 1 and those two limits. All within the gold, distinct."""
    phase = view.get("phase")
    if phase in ("building", "buying"):
        doc = skye_bot.choose(view, rand)
        return None if doc is None else [doc]
    if phase != "prices":
        return None
    seat = int(view["seat"])
    me = view["players"][seat]
    tiles = [str(t) for t in me["drawn"]]
    gold = int(me["free_gold"])
    own = skye_bot.choose(view, rand)
    assert own is not None
    out: dict[tuple[Any, ...], dict[str, Any]] = {_doc_key(own): own}
    if len(tiles) < 2:
        return list(out.values())
    model = model_of(Sim.from_state(uniform_determinizer(view, seat)(_ZERO)))
    lam = model.gold_value
    seats = len(view["players"])

    def limits(tile: str) -> set[int]:
        # The highest price some modelled buyer would still pay (gain - lam * price > 0),
        # and one coin more (nobody buys it).
        eager = max((model.gain(i, tile) for i in range(seats) if i != seat), default=0.0)
        top = math.ceil((eager - _EPSILON) / lam) - 1
        return {top, top + 1}

    axes = [own["discard"], *(t for t in tiles if t != own["discard"])]
    for k, axe in enumerate(axes):
        rest = [t for t in tiles if t != axe]
        levels = []
        for t in rest:
            if t in own["prices"]:
                base = int(own["prices"][t])
            else:
                base = max(1, round(skye_bot.KEEP_PRICE_SHARE * model.gain(seat, t) / lam))
            options = {1, base, *limits(t)}
            if k == 0:
                options.update(base + step for step in PRICE_STEPS)
            levels.append(sorted(p for p in options if 1 <= p <= gold))
        for prices in itertools.product(*levels):
            if sum(prices) <= gold:
                doc = {
                    "type": "set_prices",
                    "discard": axe,
                    "prices": dict(zip(rest, prices, strict=True)),
                }
                out.setdefault(_doc_key(doc), doc)
    return list(out.values())


def clear_memos() -> None:
    """Empty every memo of this module and the heuristic valuations it shares (benchmarks
    time cold searches with it; the memos only ever save time)."""
    territory_value.cache_clear()
    tile_gain.cache_clear()
    _parent.cache_clear()
    skye_bot._best_gain.cache_clear()
    skye_bot._cached_worth.cache_clear()
    _PRICE_MEMO.clear()
    _MODELS.clear()
    _EVALUATIONS.clear()
