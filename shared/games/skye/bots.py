"""The hand-written ``heuristic`` bot for Isle of Skye (the package's ``HEURISTIC``).

Policy (every number below is in victory points, VP, unless it says gold):

* **What a tile is worth to a seat**: the best gain over the tile's legal spots in that seat's
  territory, where a territory is valued as the points it would score *now* under the scoring
  tiles still to come, times the number of remaining rounds that score each (the current round
  included: its scoring comes after building), plus its end-game scroll points, plus the gold
  its road-connected whisky tiles will pay in the incomes still to come (at the going rate of
  gold), plus a small bonus per touching neighbour (a compact territory makes squares and
  closes areas). Majority tiles (whisky, ships) compare against the other seats' territories
  as they are now. A tile with no legal spot is worth nothing. What a tile is worth to
  another seat (and, while prices are secret, another seat's tile to us) is estimated on the
  few spots touching the most tiles, for speed.
* **Gold** is worth ``gold_value(round)`` VP per coin: more early (it buys tiles), falling to
  the 1-VP-per-5-coins of the final scoring.
* **Prices**: the axe goes on the tile least worth keeping or selling; each other tile is
  priced at about what it is worth in gold to the seat (if nobody buys it, the seat keeps it
  for that price) or, when another seat wants it more, partway up to what it is worth to that
  seat (if they buy it, they pay the seat). Prices are scaled down to the gold in hand, minus a
  reserve for buying when another seat lies a tile the bot would like; every price >= 1.
* **Buying**: the affordable tile with the best worth minus its price in VP, if that is
  positive; else pass.
* **Building**: greedy one ply: the placement (tile, spot, rotation) whose resulting territory
  is worth the most.

Ties are broken with ``rng`` only; the bot reads nothing but the view, so it is a pure
function of (view, rng state). Territories and tile worths are memoised by value (territories
are immutable), which only saves time.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from shared.games.skye import scoring
from shared.games.skye.data import SCORING
from shared.games.skye.territory import Territory

# -- tunables ---------------------------------------------------------------------------------

# VP per gold coin in the first and the last round (linear in between). Early gold buys tiles
# (a round's income of ~5 gold buys about one good tile, worth a few VP); at the end only the
# final scoring's 1 VP per 5 coins is left.
GOLD_VALUE_FIRST = 0.5
GOLD_VALUE_LAST = 0.2
# VP per edge neighbour a placed tile touches: a tie-breaker that keeps the territory compact
# (squares, vertical lines and completed areas need tiles packed together).
NEIGHBOUR_BONUS = 0.15
# Price = worth in gold times this (below 1: keeping a tile unsold must stay a good deal).
KEEP_PRICE_SHARE = 0.8
# How far a price moves from the own worth towards another seat's higher worth.
SELL_PRICE_SHARE = 0.6
# Share of the gold kept back for buying when another seat offers a tile worth this much more
# than the seat's own weakest kept tile.
RESERVE_SHARE = 0.35
# Spots tried when estimating what a tile is worth to another seat, or what another seat's
# tile would be worth to us before its price is known (speed: every spot costs an area count).
ESTIMATE_SPOTS = 4

Placements = tuple[tuple[str, int, int, int], ...]
# (scoring tile id, rounds still scoring it), for the per-territory scoring tiles
Weights = tuple[tuple[str, int], ...]
# (scoring tile id, rounds, the other seats' measures) for majority tiles
Majorities = tuple[tuple[str, int, tuple[int, ...]], ...]

_EPS = 1e-9


def choose(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """The command the heuristic sends for the seat whose ``view`` this is, or None when that
    seat has nothing to do (not to act, or the game is over)."""
    seat = view.get("seat")
    if seat is None or view.get("outcome") is not None or seat not in view.get("to_act", ()):
        return None
    phase = view.get("phase")
    if phase == "prices":
        return _set_prices(view, seat, rng)
    legal = list(view.get("legal_commands") or ())
    if not legal:
        return None
    if phase == "buying":
        return _buy(view, seat, legal, rng)
    if phase == "building":
        return _build(view, seat, legal, rng)
    return dict(legal[0])


# -- valuation --------------------------------------------------------------------------------


class _Context:
    """What the valuation needs from the view, computed once per decision."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        players = view["players"]
        self.seats = len(players)
        self.territories = [_territory(_placements(p["territory"])) for p in players]
        round_no = int(view["round"])
        rounds = int(view["rounds"])
        remaining = [list(letters) for letters in view["schedule"][round_no - 1 :]]
        self.gold_value = gold_value(round_no, rounds)
        # Incomes still to come (round 1's income is paid before anyone acts).
        self.incomes_left = rounds - round_no
        per_player: list[tuple[str, int]] = []
        self.majority_tiles: list[tuple[str, int]] = []
        for tile in view["scoring_tiles"]:
            count = sum(tile["letter"] in letters for letters in remaining)
            if not count:
                continue
            formal = SCORING[tile["id"]].formal
            if formal["kind"] == "majority":
                if _measure_kind(formal) != "gold":  # placements never change gold
                    self.majority_tiles.append((tile["id"], count))
            else:
                per_player.append((tile["id"], count))
        self.weights: Weights = tuple(sorted(per_player))

    def majorities(self, seat: int) -> Majorities:
        """The majority tiles with the other seats' current measures, as seen by ``seat``."""
        out = []
        for tid, count in self.majority_tiles:
            kind = _measure_kind(SCORING[tid].formal)
            others = tuple(_measure(kind, t) for i, t in enumerate(self.territories) if i != seat)
            out.append((tid, count, others))
        return tuple(out)

    def worth(self, seat: int, territory: Territory) -> float:
        """What ``territory`` is worth to ``seat`` (see the module notes)."""
        return _worth(
            territory, self.weights, self.majorities(seat), self.gold_value, self.incomes_left
        )

    def gain(self, seat: int, tile: str, limit: int = 0) -> float:
        """What ``tile`` adds, at its best spot, to ``seat``'s territory (0 without a spot);
        ``limit`` > 0: only among that many of the most compact spots (an estimate)."""
        return _best_gain(
            self.territories[seat],
            tile,
            self.weights,
            self.majorities(seat),
            self.gold_value,
            self.incomes_left,
            limit,
        )

    def best_other_gain(self, seat: int, tile: str) -> float:
        """About the most ``tile`` adds to any other seat's territory."""
        return max(
            (self.gain(i, tile, ESTIMATE_SPOTS) for i in range(self.seats) if i != seat),
            default=0.0,
        )


def gold_value(round_no: int, rounds: int) -> float:
    """VP per coin in round ``round_no`` of ``rounds``."""
    if rounds <= 1:
        return GOLD_VALUE_LAST
    share = (round_no - 1) / (rounds - 1)
    return GOLD_VALUE_FIRST + (GOLD_VALUE_LAST - GOLD_VALUE_FIRST) * min(max(share, 0.0), 1.0)


def _placements(doc: Sequence[Mapping[str, Any]]) -> Placements:
    return tuple((str(p["tile"]), int(p["x"]), int(p["y"]), int(p["rotation"])) for p in doc)


@functools.lru_cache(maxsize=4096)
def _territory(placements: Placements) -> Territory:
    # Shared by value: a territory is immutable, and reusing one keeps its cached spots and
    # areas between decisions (the same territories are asked about all round long).
    return Territory.of(*placements)


def _measure_kind(formal: Mapping[str, Any]) -> str:
    measure = str(formal["measure"])
    if measure.startswith("tiles_with_whisky"):
        return "whisky"
    if measure.startswith("ship"):
        return "ship"
    return "gold"


def _measure(kind: str, t: Territory) -> int:
    # What scoring's majority tiles count (gold never reaches here).
    return t.whisky_tiles() if kind == "whisky" else t.icon_total("ship")


def _worth(
    t: Territory, weights: Weights, majorities: Majorities, gold_vp: float, incomes_left: int
) -> float:
    value = 0.0
    for tid, count in weights:
        value += count * scoring.score_tile(tid, (t,), (0,))[0]
    for tid, count, others in majorities:
        formal = SCORING[tid].formal
        mine = _measure(_measure_kind(formal), t)
        points = scoring.majority(
            (mine, *others), formal["first"], formal["second"], formal.get("min", 1)
        )
        value += count * points[0]
    value += sum(scoring.scroll_points(t).values())
    # Each road-connected whisky tile pays 1 gold in every income still to come.
    value += gold_vp * incomes_left * scoring.connected_whisky_tiles(t)
    return value


@functools.lru_cache(maxsize=1 << 14)
def _cached_worth(
    t: Territory, weights: Weights, majorities: Majorities, gold_vp: float, incomes_left: int
) -> float:
    return _worth(t, weights, majorities, gold_vp, incomes_left)


def _neighbours(t: Territory, x: int, y: int) -> int:
    at = t.tile_at
    return sum(at((x + dx, y + dy)) is not None for dx, dy in ((0, 1), (1, 0), (0, -1), (-1, 0)))


def _placement_gain(
    t: Territory,
    tile: str,
    spot: tuple[int, int, int],
    base: float,
    args: tuple[Weights, Majorities, float, int],
) -> float:
    x, y, rotation = spot
    after = t.place(tile, x, y, rotation)
    return _worth(after, *args) - base + NEIGHBOUR_BONUS * _neighbours(t, x, y)


@functools.lru_cache(maxsize=1 << 14)
def _best_gain(
    t: Territory,
    tile: str,
    weights: Weights,
    majorities: Majorities,
    gold_vp: float,
    incomes_left: int,
    limit: int = 0,
) -> float:
    spots: Sequence[tuple[int, int, int]] = t.spots(tile)
    if not spots:
        return 0.0
    if 0 < limit < len(spots):
        # An estimate: only the spots touching the most tiles (a stable sort, so the same
        # spots every time), which is where good placements usually are.
        spots = sorted(spots, key=lambda s: -_neighbours(t, s[0], s[1]))[:limit]
    args = (weights, majorities, gold_vp, incomes_left)
    base = _cached_worth(t, *args)
    return max(_placement_gain(t, tile, spot, base, args) for spot in spots)


def _pick(scored: list[tuple[float, Any]], rng: random.Random) -> Any:
    """The item with the highest score; ties broken by ``rng``."""
    best = max(s for s, _ in scored)
    top = [item for s, item in scored if s >= best - _EPS]
    return top[0] if len(top) == 1 else rng.choice(top)


# -- the three decisions ----------------------------------------------------------------------


def _set_prices(view: Mapping[str, Any], seat: int, rng: random.Random) -> dict[str, Any]:
    me = view["players"][seat]
    tiles = [str(t) for t in me["drawn"]]
    gold = int(me["free_gold"])
    if not tiles:
        return {"type": "set_prices", "discard": None, "prices": {}}
    ctx = _Context(view)
    lam = ctx.gold_value
    mine = {t: ctx.gain(seat, t) for t in tiles}
    others = {t: ctx.best_other_gain(seat, t) for t in tiles}
    # The axe: the tile least worth keeping (own worth) or selling (what another seat would
    # pay for it, which only comes in part: they may not buy).
    axe = _pick([(-max(mine[t], SELL_PRICE_SHARE * others[t]), t) for t in tiles], rng)
    rest = [t for t in tiles if t != axe]
    if not rest:
        return {"type": "set_prices", "discard": axe, "prices": {}}
    wanted: dict[str, float] = {}
    for t in rest:
        worth = mine[t]
        if others[t] > worth:  # they want it more: ask part of the difference
            worth += SELL_PRICE_SHARE * (others[t] - worth)
        wanted[t] = max(1.0, KEEP_PRICE_SHARE * worth / lam)
    # Keep gold back to buy when another seat lies a tile clearly better for us than what
    # we keep (their tiles lie face up; their prices are still secret).
    on_offer = [
        str(t) for i, p in enumerate(view["players"]) if i != seat for t in p.get("drawn") or ()
    ]
    weakest = min(mine[t] for t in rest)
    # ``any`` stops at the first such tile (each estimate costs a few area counts).
    tempted = any(ctx.gain(seat, t, ESTIMATE_SPOTS) > weakest + 1.0 for t in on_offer)
    reserve = math.floor(gold * RESERVE_SHARE) if tempted else 0
    budget = max(gold - reserve, len(rest))
    prices = _fit_prices(wanted, budget)
    return {"type": "set_prices", "discard": axe, "prices": prices}


def _fit_prices(wanted: Mapping[str, float], budget: int) -> dict[str, int]:
    """Whole prices >= 1 close to ``wanted``, scaled down to a total of at most ``budget``
    (the caller guarantees ``budget`` >= the number of tiles)."""
    prices = {t: max(1, round(w)) for t, w in wanted.items()}
    total = sum(prices.values())
    if total > budget:
        scale = budget / total
        prices = {t: max(1, math.floor(p * scale)) for t, p in prices.items()}
    # Flooring and the minimum of 1 may still overshoot by a coin or two: trim the largest.
    while sum(prices.values()) > budget:
        top = max(prices, key=lambda t: (prices[t], t))
        if prices[top] <= 1:
            break
        prices[top] -= 1
    return prices


def _buy(
    view: Mapping[str, Any], seat: int, legal: list[Mapping[str, Any]], rng: random.Random
) -> dict[str, Any]:
    ctx = _Context(view)
    lam = ctx.gold_value
    price_of: dict[str, int] = {}
    for i, p in enumerate(view["players"]):
        if i != seat:
            price_of.update({str(t): int(v) for t, v in (p.get("offer") or {}).items()})
    extra = view.get("extra_tile")
    if extra:
        price_of[str(extra["tile"])] = int(extra["price"])
    scored: list[tuple[float, Any]] = []
    for cmd in legal:
        if cmd.get("type") != "buy":
            continue
        tile = str(cmd["tile"])
        scored.append((ctx.gain(seat, tile) - lam * price_of.get(tile, 0), cmd))
    passing = next((c for c in legal if c.get("type") == "pass"), None)
    if passing is not None:
        scored.append((0.0, passing))
    # A purchase must beat passing outright: on a tie keep the gold.
    best = max(s for s, _ in scored)
    if passing is not None and best <= _EPS:
        return dict(passing)
    return dict(_pick([(s, c) for s, c in scored if c is not passing], rng))


def _build(
    view: Mapping[str, Any], seat: int, legal: list[Mapping[str, Any]], rng: random.Random
) -> dict[str, Any]:
    ctx = _Context(view)
    t = ctx.territories[seat]
    args = (ctx.weights, ctx.majorities(seat), ctx.gold_value, ctx.incomes_left)
    base = _cached_worth(t, *args)
    scored = [
        (
            _placement_gain(
                t,
                str(cmd["tile"]),
                (int(cmd["x"]), int(cmd["y"]), int(cmd["rotation"])),
                base,
                args,
            ),
            cmd,
        )
        for cmd in legal
        if cmd.get("type") == "place"
    ]
    if not scored:
        return dict(legal[0])
    return dict(_pick(scored, rng))
