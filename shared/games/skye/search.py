"""What ISMCTS searches for Isle of Skye (the package's ``SEARCH``): its hooks, on the kernel.

``shared.bots.ismcts`` reads these hooks (see its docstring): ``playout_rollout``,
``determinizer``, ``sample_command``, ``root_commands``, ``prepare`` and ``FLAT_SEARCH``. Every
rule they play comes from the kernel (``kernel.Table``: ``copy``, ``apply`` with its own
mutators, ``legal_commands``, ``outcome``); nothing here restates one.

Search against heuristic-like opponents: only the prices are searched, the decision where
looking ahead pays (the heuristic places and buys). The other seats are modelled as the
``heuristic`` bot plays (a decent player's prices and buys, and the only other Skye policy the
service has), where uniformly random prices and purchases made a search learn from opponents
nobody meets. Everything comes from the searching seat's view: the heuristic's prices for
another seat are a function of that seat's view, which holds nothing the searching seat cannot
see either (prices are simultaneous; drawn tiles, gold and territories are public); a search
may deal a share of uniform prices instead, for other opponents (``MODEL_NUM``; none today).
The model is an assumption: against opponents that price or buy otherwise the search predicts
their market wrongly. The search is flat (``FLAT_SEARCH``): UCB1 over the root's candidates,
each iteration one modelled play-out of the round's market from a deal (``modelled_rollout``),
then a static evaluation (``evaluate``) turned into win shares, the answer the best mean. What
it finds: the prices at which the modelled buyers still buy (or no longer buy), which the
heuristic only approximates by shares of worths.

``random_rollout`` is a uniformly random play-out to the game's end on the kernel (prices as
``random_command`` draws them, ``draw_prices``), for comparisons and benchmarks.

Everything here is pure: no I/O, no clock, randomness only from the generators passed in; the
``functools`` caches and memo tables are memoisation of pure functions of immutable values.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from shared.games.errors import NOT_YOUR_TURN, GameError, illegal
from shared.games.skye import bots as heuristic
from shared.games.skye import engine as skye_engine
from shared.games.skye import messages as m
from shared.games.skye import scoring
from shared.games.skye.data import LETTERS, SCORING, schedule
from shared.games.skye.kernel import (
    Table,
    check_prices,
    legal_commands,
    outcome,
    place_command,
    place_options,
    purchases,
    to_act,
)
from shared.games.skye.state import State, buyer_of, replace
from shared.games.skye.territory import Placement, Territory

# (n) -> uniform int in [0, n), n >= 1: how every choice and every chance draw is asked.
Below = Callable[[int], int]

_PASS = m.Pass()


class _Chance:
    """The engines' ``Rng`` interface (``below``) over an unchecked ``random.Random`` draw:
    ``FastRng(rand).below(n)`` draws the same numbers (``randrange`` checks, then calls
    ``_randbelow``), so a play-out here deals the tiles the engine path would."""

    __slots__ = ("below",)

    def __init__(self, below: Below) -> None:
        self.below = below


def _randbelow(rand: random.Random) -> Below:
    """``rand``'s unchecked uniform integer in ``[0, n)`` for ``n >= 1``: what ``randrange``
    and ``choice`` call after checking their arguments."""
    below: Below = rand._randbelow  # type: ignore[attr-defined]
    return below


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


def rewards(table: Table) -> list[float]:
    """``ismcts.rewards`` of a finished game: 1 to the sole winner, ``1/k`` to each of ``k``
    winners, 0 otherwise."""
    done = outcome(table)
    assert done is not None
    winners = done["winners"]
    out = [0.0] * table.seats
    share = 1.0 / len(winners)
    for w in winners:
        out[w] = share
    return out


# --- random play ---------------------------------------------------------------------------------


def random_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """Uniformly random legal commands from ``state`` to the game's end (a Skye game always
    ends after its rounds), on the kernel: the first seat to act moves (``random_move``); one
    reward per seat. ``ismcts.random_playout`` in distribution (it draws prices through a
    view, so the same ``rand`` does not give the same game). ``engine`` is Skye's; not
    read."""
    below = _randbelow(rand)
    chance: Any = _Chance(below)  # as the engines' ``Rng``: only ``below`` is asked
    table = Table.thaw(state)
    while table.phase != "game_over":
        random_move(table, to_act(table)[0], below, chance)
    return rewards(table)


def random_move(table: Table, seat: int, below: Below, chance: Any) -> None:
    """One uniformly random legal command of ``seat``, to act in ``table``, applied past the
    checks with nothing recorded (``Table.apply_listed``): prices as ``random_command`` draws
    them (``draw_prices``); else the entry ``below(n)`` of the ``n`` commands
    ``legal_commands`` lists (no draw when ``n`` is 1), found in the listing's parts (the
    ``purchases`` then ``Pass``; ``place_options``, tile by tile) without building it.
    ``chance`` is the engines' ``Rng`` for the kernel's own draws (the next round's tiles)."""
    phase = table.phase
    if phase == "prices":
        p = table.players[seat]
        discard, prices = draw_prices(p.drawn, p.gold, below)
        table.apply_listed(seat, m.SetPrices(discard=discard, prices=prices), chance, None)
    elif phase == "buying":
        options = purchases(table, seat)
        r = below(len(options) + 1) if options else 0
        if r == len(options):  # ``Pass``, listed last
            table.apply_listed(seat, _PASS, chance, None)
        else:
            table.apply_purchase(seat, options[r], chance, None)
    else:
        listing = place_options(table, seat)
        total = sum([len(spots) for _, spots in listing])
        r = below(total) if total > 1 else 0
        for tile, spots in listing:
            if r < len(spots):
                x, y, rotation = spots[r]
                table.apply_listed(seat, place_command(tile, x, y, rotation), chance, None)
                return
            r -= len(spots)
        raise GameError(NOT_YOUR_TURN, f"seat {seat} has nothing to do now")


def sample_command(state: State, seat: int, rand: random.Random) -> Any:
    """One ``random_command`` draw for ``seat`` in ``state``, as an engine command, without
    the view ``ismcts._sample`` builds for it (every territory as JSON, per draw): in the
    price phase ``draw_prices`` (the same distribution), else a uniform listed command."""
    p = state.players[seat]
    if state.phase == "prices" and not p.prices_set:
        discard, prices = draw_prices(p.drawn, p.gold, _randbelow(rand))
        return m.SetPrices(discard=discard, prices=prices)
    legal = legal_commands(state, seat)
    if not legal:
        raise GameError(NOT_YOUR_TURN, "nothing to do now")
    return legal[_randbelow(rand)(len(legal))]


# --- static evaluation ---------------------------------------------------------------------------

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
# How ``tile_gain`` judges a tile: its gain over at most this many spots (those touching the
# most tiles, where good placements usually are; every spot costs an area count).
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
    """What is still to come from the position of a table: per scoring tile, how many
    scorings are left (split into tiles scored per territory and majority tiles), and the
    incomes still to be paid. The current round still scores unless it is over; between two
    rounds the table sits at the next round's prices, with its income paid."""

    __slots__ = ("weights", "majorities", "incomes_left", "coin")

    def __init__(self, table: Table) -> None:
        counts: dict[str, int] = {}
        for letters in schedule(table.seats)[table.round - 1 : table.rounds]:
            for letter in letters:
                counts[letter] = counts.get(letter, 0) + 1
        weights: list[tuple[str, int]] = []
        majorities: list[tuple[str, int]] = []
        for letter, count in sorted(counts.items()):
            tile = table.scoring_tiles[LETTERS.index(letter)]
            if SCORING[tile].formal["kind"] == "majority":
                majorities.append((tile, count))
            else:
                weights.append((tile, count))
        self.weights: Weights = tuple(weights)
        self.majorities: tuple[tuple[str, int], ...] = tuple(majorities)
        self.incomes_left = max(table.rounds - table.round, 0)
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


def evaluate(table: Table, outlook: Outlook | None = None) -> list[float]:
    """Each seat's expected final score, statically: points so far, plus ``territory_value``,
    plus ``pending_gain`` for each tile still to place, plus the majority tiles still to
    score as they would score now, plus ``Outlook.coin`` per coin in hand."""
    outlook = outlook or Outlook(table)
    weights, incomes_left = outlook.weights, outlook.incomes_left
    players = table.players
    territories = [p.territory for p in players]
    golds = [p.gold for p in players]
    building = table.phase == "building"
    values = [
        p.score
        + territory_value(p.territory, weights, incomes_left)
        + sum(
            pending_gain(p.territory, tile, weights, incomes_left, building) for tile in p.to_place
        )
        + outlook.coin * p.gold
        for p in players
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


def temperature_of(table: Table) -> float:
    """``win_shares``' temperature for the position of ``table``."""
    return WIN_TEMPERATURE + WIN_TEMPERATURE_PER_ROUND * max(table.rounds - table.round, 0)


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


# --- the model of the other seats ----------------------------------------------------------------

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
_MEMO_MAX = 1 << 12
_PRICE_MEMO: dict[tuple[Any, ...], tuple[str | None, dict[str, int]]] = {}


class Model:
    """The ``heuristic`` bot's valuation from a table (as ``bots._Context`` computes it from a
    view): the scoring tiles still to come (per territory, and majority tiles with every
    seat's rivals' measures), the VP of a coin and the incomes still to come. Built once per
    position of the market (``model_of``): the territories do not change before the building,
    so its gains are memoised per (seat, tile)."""

    __slots__ = ("weights", "majorities", "gold_value", "incomes_left", "territories", "gains")

    def __init__(self, table: Table) -> None:
        remaining = schedule(table.seats)[table.round - 1 :]
        per_player: list[tuple[str, int]] = []
        majority_tiles: list[tuple[str, str, int]] = []
        for letter, tile in zip(LETTERS, table.scoring_tiles, strict=False):
            count = sum(letter in letters for letters in remaining)
            if not count:
                continue
            formal = SCORING[tile].formal
            if formal["kind"] == "majority":
                kind = heuristic._measure_kind(formal)
                if kind != "gold":  # as the heuristic: placements never change gold
                    majority_tiles.append((tile, kind, count))
            else:
                per_player.append((tile, count))
        self.weights: Weights = tuple(sorted(per_player))
        self.territories = tuple(p.territory for p in table.players)
        self.majorities = [
            tuple(
                (
                    tid,
                    count,
                    tuple(
                        heuristic._measure(kind, t)
                        for i, t in enumerate(self.territories)
                        if i != seat
                    ),
                )
                for tid, kind, count in majority_tiles
            )
            for seat in range(table.seats)
        ]
        self.gold_value = heuristic.gold_value(table.round, table.rounds)
        self.incomes_left = table.rounds - table.round
        self.gains: dict[tuple[int, str], float] = {}

    def gain(self, seat: int, tile: str) -> float:
        """What the heuristic thinks ``tile`` adds to ``seat``'s territory (its ``gain``)."""
        key = (seat, tile)
        got = self.gains.get(key)
        if got is None:
            got = self.gains[key] = heuristic._best_gain(
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


def _territories(table: Table) -> tuple[Territory, ...]:
    return tuple(p.territory for p in table.players)


def model_of(table: Table, territories: tuple[Territory, ...] | None = None) -> Model:
    """The ``Model`` of ``table``'s position (memoised by round and territories;
    ``territories``, when given, are ``table``'s)."""
    key = (table.round, table.rounds, table.scoring_tiles, territories or _territories(table))
    model = _MODELS.get(key)
    if model is None:
        if len(_MODELS) >= _MEMO_MAX:
            _MODELS.clear()
        model = _MODELS[key] = Model(table)
    return model


def modelled_buy(table: Table, seat: int, model: Model) -> tuple[str, int | None, int] | None:
    """The heuristic's purchase for ``seat`` (its ``_buy``; ties to the first listed): the
    affordable tile with the best gain minus its price in VP if that is positive, else None."""
    best = None
    best_score = _EPSILON
    lam = model.gold_value
    gains = model.gains
    for option in purchases(table, seat):
        gain = gains.get((seat, option[0]))  # ``model.gain``, its call saved when memoised
        if gain is None:
            gain = model.gain(seat, option[0])
        score = gain - lam * option[2]
        if score > best_score:
            best, best_score = option, score
    return best


def modelled_prices(
    table: Table, seat: int, territories: tuple[Territory, ...] | None = None
) -> tuple[str | None, dict[str, int]]:
    """The heuristic's axe and prices for ``seat``, still to price in ``table``'s price phase,
    from the view the service would give that seat (memoised by what that decision reads:
    the seat's drawn tiles and gold, every seat's territory and drawn tiles, the round;
    ``territories``, when given, are ``table``'s). Checked against the rules when made
    (``GameError`` if the heuristic broke one): the key holds everything the check reads
    of a seat still to price (its drawn tiles and gold), so a play-out applies them past
    the checks (``Table.apply_listed``)."""
    players = table.players
    key = (
        seat,
        table.round,
        table.rounds,
        table.scoring_tiles,
        players[seat].gold,
        territories or _territories(table),
        tuple([tuple(p.drawn) for p in players]),
    )
    hit = _PRICE_MEMO.get(key)
    if hit is not None:
        return hit
    view = dict(skye_engine.view(table.freeze(), seat))
    view["seat"] = seat
    # Ties are broken by a fixed generator: the model is a function of the position only.
    doc = heuristic.choose(view, random.Random(0))
    assert doc is not None and doc["type"] == "set_prices"
    result = (doc["discard"], {str(t): int(p) for t, p in doc["prices"].items()})
    check_prices(players[seat], m.SetPrices(discard=result[0], prices=result[1]))
    if len(_PRICE_MEMO) >= _MEMO_MAX:
        _PRICE_MEMO.clear()
    _PRICE_MEMO[key] = result
    return result


_EVALUATIONS: dict[tuple[Any, ...], list[float]] = {}


def memo_evaluate(table: Table, territories: tuple[Territory, ...] | None = None) -> list[float]:
    """``evaluate(table)`` memoised by the position after a market (the flat search's
    play-outs end in few distinct ones; ``territories``, when given, are ``table``'s)."""
    players = table.players
    key = (
        table.round,
        table.phase,
        table.rounds,
        table.scoring_tiles,
        territories or _territories(table),
        tuple(tuple(p.to_place) for p in players),
        tuple(p.gold for p in players),
        tuple(p.score for p in players),
    )
    got = _EVALUATIONS.get(key)
    if got is None:
        if len(_EVALUATIONS) >= _MEMO_MAX:
            _EVALUATIONS.clear()
        got = _EVALUATIONS[key] = evaluate(table)
    return got


def modelled_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """The rest of the current round's market as the heuristic would play it for every seat
    (prices of the seats still to price, then every purchase, the searching seat's later ones
    included), on the kernel, then rewards (``win_shares``) from ``evaluate`` (the tiles still
    to place valued by their ``tile_gain``). ``engine`` is Skye's; not read.

    Each command goes past ``apply``'s checks with nothing recorded (``apply_listed``,
    ``apply_purchase``, ``emit`` None): the prices are the ones ``modelled_prices`` checked
    when it made them, and a purchase is an entry of the kernel's own ``purchases``."""
    chance: Any = _Chance(_randbelow(rand))  # as the engines' ``Rng``
    table = Table.thaw(state)
    if table.phase == "game_over":
        return rewards(table)
    # The territories do not change before the building: one tuple for every memo key.
    territories = _territories(table)
    if table.phase == "prices":
        apply_listed = table.apply_listed
        # The seats still to price, in ``to_act``'s order (setting one seat's prices changes
        # no other seat's turn); the last one's prices reveal them all and start the buying.
        for seat, p in enumerate(table.players):
            if not p.prices_set:
                discard, prices = modelled_prices(table, seat, territories)
                apply_listed(seat, m.SetPrices(discard=discard, prices=prices), chance, None)
    if table.phase == "buying":
        model = model_of(table, territories)
        buy, apply_listed = table.apply_purchase, table.apply_listed
        buyer = buyer_of(table)
        while buyer is not None:
            choice = modelled_buy(table, buyer, model)
            if choice is None:
                apply_listed(buyer, _PASS, chance, None)
            else:
                buy(buyer, choice, chance, None)
            buyer = buyer_of(table)
    if table.phase == "game_over":
        return rewards(table)
    return win_shares(memo_evaluate(table, territories), temperature_of(table))


def playout_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """What ``ismcts`` uses by default for Skye (``default_rollout``): ``modelled_rollout``
    (the round's market as the heuristic plays it, then ``evaluate``)."""
    return modelled_rollout(engine, state, rand)


# --- deals -----------------------------------------------------------------------------------------


def modelled_determinizer(view: Mapping[str, Any], seat: int) -> Callable[[Any], State]:
    """``rng -> state`` as ``uniform_determinizer``, but a hidden-priced seat gets the
    heuristic's prices (from its own view of the position before it priced) in ``MODEL_NUM``
    of ``MODEL_DEN`` deals, ``draw_prices``' uniform ones otherwise. Either is legal for it."""
    return _hidden_price_dealer(view, seat, modelled=True)


# The deals ISMCTS asks for (its ``determinizer`` hook).
determinizer = modelled_determinizer


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
    template = _interned(skye_engine.determinize(view, seat, _ZERO))
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
        # The position before seat i priced: its gold all in hand, nothing on offer.
        before = Table.thaw(template)
        c = before.clan(i)
        c.prices_set = False
        c.gold = totals[i]
        c.discard = None
        c.offer = []
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


def _interned(state: State) -> State:
    """``state`` with each territory the one ``_parent`` holds for its placements: a search
    makes this template twice (its root's candidates, its deals), and the memo keys of its
    play-outs then meet the very same territories (equal at once) instead of equal ones
    built apart (compared placement by placement, once per play-out)."""
    players = tuple(replace(p, territory=_parent(p.territory.placements)) for p in state.players)
    new: State = replace(state, players=players)
    return new


class _ZeroRng:
    """The ``Rng`` of the template deal: its hidden draws are replaced in every deal."""

    def below(self, n: int) -> int:
        return 0


_ZERO: Any = _ZeroRng()  # as the engines' ``Rng``: only ``below`` is asked


def prepare(view: Mapping[str, Any], seat: int) -> None:
    """``ismcts``'s ``prepare`` hook, in a timed search's set-up before its budget's clock
    starts: the valuations every modelled play-out of a price decision reads, memoised here
    once (each a pure function of the position; nothing is drawn, so the search finds what it
    would find without them). The territories do not change before the building, so a
    market's play-outs all read the ``Model`` of the position with each seat's gain for the
    tiles the other seats drew (``modelled_buy``), the model's prices of the seats still to
    price (``modelled_prices``), and each territory's ``territory_value`` and ``pending_gain``
    of every drawn tile (``evaluate``). Without it the first play-outs computed them inside
    the budget: 10-70 ms of CPU in a search worker, whose process plays none of the heuristic
    seats' moves (issue 38). Outside the price phase (the heuristic's choice alone, no
    search) nothing."""
    if view.get("phase") != "prices" or view.get("outcome") is not None:
        return
    table = Table.thaw(_interned(skye_engine.determinize(view, seat, _ZERO)))
    territories = _territories(table)
    players = table.players
    for i, p in enumerate(players):
        if i != seat and not p.prices_set:
            modelled_prices(table, i, territories)
    model = model_of(table, territories)
    outlook = Outlook(table)
    weights, incomes_left = outlook.weights, outlook.incomes_left
    tiles = [str(t) for p in players for t in p.drawn]
    for i, p in enumerate(players):
        # A buyer weighs the other seats' tiles; any drawn tile may end up its to place.
        for tile in tiles:
            if tile not in p.drawn:
                model.gain(i, tile)
            pending_gain(p.territory, tile, weights, incomes_left, True)
        territory_value(p.territory, weights, incomes_left)


# --- the root's candidates -------------------------------------------------------------------------


def _doc_key(doc: Mapping[str, Any]) -> tuple[Any, ...]:
    return (doc["discard"], tuple(sorted(doc["prices"].items())))


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
        doc = heuristic.choose(view, rand)
        return None if doc is None else [doc]
    if phase != "prices":
        return None
    seat = int(view["seat"])
    me = view["players"][seat]
    tiles = [str(t) for t in me["drawn"]]
    gold = int(me["free_gold"])
    own = heuristic.choose(view, rand)
    assert own is not None
    out: dict[tuple[Any, ...], dict[str, Any]] = {_doc_key(own): own}
    if len(tiles) < 2:
        return list(out.values())
    model = model_of(Table.thaw(uniform_determinizer(view, seat)(_ZERO)))
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
                base = max(1, round(heuristic.KEEP_PRICE_SHARE * model.gain(seat, t) / lam))
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
    heuristic._best_gain.cache_clear()
    heuristic._cached_worth.cache_clear()
    _PRICE_MEMO.clear()
    _MODELS.clear()
    _EVALUATIONS.clear()
