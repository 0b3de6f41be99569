"""Isle of Skye: options, setup, views, redaction, JSON, determinize, random commands.

The rules themselves (what a command may do, the events it causes, how each event changes the
game, who acts, what is legal, the outcome) are written once, in ``kernel.py``; ``decide``,
``evolve``, ``to_act``, ``legal_commands`` and ``outcome`` are that kernel's.

Round flow (phases that wait for players are ``prices``, ``buying`` and ``building``; the
others run inside ``decide`` as soon as the previous phase ends, each recorded by events):

1. income (``income_paid``);
2. each seat draws 3 tiles, face up (``tiles_drawn``), then ``prices``: SIMULTANEOUS and secret,
   every seat with tiles sends ``set_prices`` (axe on one tile, at least 1 gold on each other,
   total at most its gold); nobody sees another seat's axe or prices until all have set them
   (``prices_revealed``);
3. the axed tiles go back into the bag (``tiles_discarded``);
4. ``buying``: from the start player clockwise, each seat buys one tile of ANOTHER seat's offer
   (the buyer pays the price to the seller, who also takes back the gold they put on it) or
   passes; then each seat keeps its unsold tiles and their gold goes to the bank;
5. ``building``: SIMULTANEOUS, each seat places its received tiles one ``place`` at a time in
   any order; when none of a seat's remaining tiles has a legal spot they go back into the bag
   (``tile_returned``) — a tile that only fits once another one is placed is waited for;
6. the round's scoring tiles score (``round_scored``); the start player passes left (the next
   seat), and the next round starts. After the last round: scrolls and gold (``game_scored``)
   and ``game_ended``.

Short bag (never happens with the real tile count, handled anyway): seats draw one at a time in
turn order from the start player until the bag is empty; a seat with fewer than 3 tiles still
axes one of them and prices the rest; a seat with none sits the price phase out.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from typing import Any

from shared.games import base
from shared.games.base import command_json, from_json, to_json
from shared.games.errors import (
    GAME_OVER,
    NOT_YOUR_TURN,
    GameError,
    illegal,
    invalid_options,
)
from shared.games.rng import Rng
from shared.games.skye import messages as m
from shared.games.skye.data import (
    CASTLE_IDS,
    LANDSCAPE_IDS,
    LETTERS,
    SCORING,
    SCORING_TILES,
    TILES,
    schedule,
    scoring_tile_id,
)
from shared.games.skye.kernel import (
    income as income,  # the income rule, for tests that check a round's gold
)
from shared.games.skye.kernel import (
    legal_commands,
    opening,
    outcome,
    to_act,
)
from shared.games.skye.state import Player, State
from shared.games.skye.territory import Territory

NAME = "skye"
MIN_SEATS = 2
MAX_SEATS = 5
TRAITS = base.Traits(
    simultaneous=True,  # every seat sets prices, and builds, at once
    phase_events=("round_started", "phase_started", "tiles_drawn", "prices_revealed"),
    lists_all_commands=False,  # prices cannot be listed: random_command draws them
    secret_command_fields={"set_prices": ("discard", "prices")},
)
VARIANT_MAX_SEATS = 3

OPTION_KEYS = ("scoring_tiles", "first_player", "advanced_variant")


def rounds_for(seats: int) -> int:
    """6 rounds, 5 with 5 players."""
    return len(schedule(seats))


# -- options and setup ------------------------------------------------------------------------


def parse_options(seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """Validated options with defaults:

    * ``scoring_tiles``: 4 scoring tiles for A..D (ids such as ``"sheep"`` or indices 0..15, as
      a list in A..D order or an object ``{"A": ..., "D": ...}``); None: drawn at random;
    * ``first_player``: the seat that starts; None: drawn at random;
    * ``advanced_variant``: the Czech book's 2–3 player variant (one extra tile per round).
    """
    if not isinstance(seats, int) or not MIN_SEATS <= seats <= MAX_SEATS:
        raise invalid_options(f"Isle of Skye is for {MIN_SEATS}-{MAX_SEATS} players", seats=seats)
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTION_KEYS))
    if unknown:
        raise invalid_options(
            f"unknown options {unknown}", **{k: "unknown option" for k in unknown}
        )
    out: dict[str, Any] = {"scoring_tiles": None, "first_player": None, "advanced_variant": False}

    raw = options.get("scoring_tiles")
    if raw is not None:
        if isinstance(raw, Mapping):
            if set(raw) != set(LETTERS):
                raise invalid_options("scoring_tiles needs keys A, B, C, D", scoring_tiles=raw)
            raw = [raw[k] for k in LETTERS]
        if not isinstance(raw, list | tuple) or len(raw) != len(LETTERS):
            raise invalid_options("scoring_tiles: 4 scoring tiles for A..D", scoring_tiles=raw)
        ids = [scoring_tile_id(v) for v in raw]
        if any(i is None for i in ids):
            raise invalid_options("unknown scoring tile", scoring_tiles=raw)
        if len(set(ids)) != len(ids):
            raise invalid_options("scoring tiles must differ", scoring_tiles=raw)
        out["scoring_tiles"] = ids

    first = options.get("first_player")
    if first is not None:
        if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < seats:
            raise invalid_options("first_player: a seat number", first_player=first)
        out["first_player"] = first

    variant = options.get("advanced_variant", False)
    if not isinstance(variant, bool):
        raise invalid_options("advanced_variant: true or false", advanced_variant=variant)
    if variant and seats > VARIANT_MAX_SEATS:
        raise invalid_options(
            "the advanced variant is for 2 and 3 players", advanced_variant=variant
        )
    out["advanced_variant"] = variant
    return out


def setup(seats: int, options: Mapping[str, Any], rng: Rng) -> list[Any]:
    """``game_started`` (castles, scoring tiles, start player) and round 1 up to the prices."""
    opts = parse_options(seats, options)
    tiles = opts["scoring_tiles"]
    if tiles is None:
        tiles = list(rng.shuffle([s.id for s in SCORING_TILES])[: len(LETTERS)])
    first = opts["first_player"]
    if first is None:
        first = rng.below(seats)
    start = m.GameStarted(
        seats=seats,
        rounds=rounds_for(seats),
        castles=tuple(CASTLE_IDS[:seats]),
        scoring_tiles=tuple(tiles),
        first_player=first,
        advanced_variant=opts["advanced_variant"],
    )
    return [start, *opening(start, rng)]


# -- JSON -------------------------------------------------------------------------------------


def command_to_json(command: Any) -> dict[str, Any]:
    """Flat client JSON ``{"type": ..., field: ...}``."""
    # Fast paths for what views list (hundreds of placements per game), field for field what
    # the generic ``command_json`` writes.
    kind = type(command)
    if kind is m.Place:
        return {
            "type": "place",
            "tile": command.tile,
            "x": command.x,
            "y": command.y,
            "rotation": command.rotation,
        }
    if kind is m.Buy:
        return {"type": "buy", "tile": command.tile}
    if kind is m.Pass:
        return {"type": "pass"}
    if kind is m.SetPricesTemplate:
        return {
            "type": "set_prices",
            "tiles": list(command.tiles),
            "gold": command.gold,
            "min_price": command.min_price,
            "template": command.template,
            "discard": command.discard,
            "prices": dict(command.prices),
        }
    return command_json(command)


def event_to_json(event: Any) -> dict[str, Any]:
    """``{"type": ..., "data": {...}}``."""
    return to_json(event)


def event_from_json(doc: Mapping[str, Any]) -> Any:
    """The event ``event_to_json`` wrote."""
    return from_json(m.EVENTS, doc)


def redact(event: Any, seat: int | None) -> dict[str, Any] | None:
    """The event as ``seat`` sees it: another seat's ``prices_set`` shows only who set them
    (axe and prices stay secret until ``prices_revealed``); everything else is public."""
    if isinstance(event, m.PricesSet) and seat != event.seat:
        return {"type": event.TYPE, "data": {"seat": event.seat}}
    return to_json(event)


# -- view -------------------------------------------------------------------------------------


def _hidden(state: State, seat: int | None, other: int) -> bool:
    """Whether ``other``'s axe, prices and gold in hand are secret from ``seat``."""
    return state.phase == "prices" and not state.revealed and seat != other


def _player_view(p: Player, i: int, hidden: bool) -> dict[str, Any]:
    """Seat ``i``'s part of a view; ``hidden``: its axe, prices and gold in hand are secret."""
    return {
        "seat": i,
        "castle": p.castle,
        "territory": p.territory.to_json(),
        # Gold held, counting gold lying on own offered tiles (public total: what was set on
        # the tiles is not revealed by it).
        "gold": p.gold + p.staked,
        "free_gold": None if hidden else p.gold,
        "score": p.score,
        "score_breakdown": {
            "rounds": [
                {"round": r, "points": dict(pts)} for r, pts in enumerate(p.round_points, 1)
            ],
            "scrolls": dict(p.scroll_points),
            "gold": p.gold_points,
        },
        "prices_set": p.prices_set,
        "drawn": list(p.drawn),
        "discard": None if hidden else p.discard,
        "offer": None if hidden or (not p.prices_set and p.drawn) else dict(p.offer),
        "to_place": list(p.to_place),
    }


@functools.lru_cache(maxsize=256)
def _scoring_tiles_view(tiles: tuple[str, ...], seats: int) -> tuple[dict[str, Any], ...]:
    """The view's ``scoring_tiles`` for a game (the same all game long; ``view`` copies it)."""
    sched = schedule(seats)
    return tuple(
        {
            "letter": letter,
            "id": tid,
            "name": SCORING[tid].name,
            "definition": SCORING[tid].definition,
            "rounds": [r + 1 for r, ls in enumerate(sched) if letter in ls],
        }
        for letter, tid in zip(LETTERS, tiles, strict=True)
    )


def view(state: State, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may know, JSON-ready.

    Keys: ``game``, ``seat``, ``phase``, ``round``, ``rounds``, ``start_player``,
    ``scoring_tiles`` ([{letter, id, name, definition, rounds}]), ``schedule``,
    ``advanced_variant``, ``revealed``, ``current_buyer``, ``extra_tile`` ({tile, price} or
    None), ``players`` (per seat: seat, castle, territory, gold, free_gold, score,
    score_breakdown, prices_set, drawn, discard, offer, to_place), the viewer's own ``drawn``,
    ``discard``, ``offer``, ``to_place``, ``bag_size``, ``scores``, ``to_act``,
    ``legal_commands`` (client JSON) and ``outcome``.
    """
    sched = schedule(state.seats)
    players = [_player_view(p, i, _hidden(state, seat, i)) for i, p in enumerate(state.players)]
    mine = players[seat] if seat is not None and 0 <= seat < state.seats else None
    return {
        "game": NAME,
        "seat": seat,
        "phase": state.phase,
        "round": state.round,
        "rounds": state.rounds,
        "start_player": state.start_player,
        "scoring_tiles": [
            {**tile, "rounds": list(tile["rounds"])}
            for tile in _scoring_tiles_view(state.scoring_tiles, state.seats)
        ],
        "schedule": [list(ls) for ls in sched],
        "advanced_variant": state.advanced_variant,
        "revealed": state.revealed,
        "current_buyer": state.buyer,
        "extra_tile": (
            {"tile": state.extra, "price": state.extra_price} if state.extra is not None else None
        ),
        "players": players,
        "drawn": mine["drawn"] if mine else None,
        "discard": mine["discard"] if mine else None,
        "offer": mine["offer"] if mine else None,
        "to_place": mine["to_place"] if mine else None,
        "bag_size": len(state.bag),
        "scores": [p.score for p in state.players],
        "to_act": list(to_act(state)),
        "legal_commands": (
            [command_to_json(c) for c in legal_commands(state, seat)]
            if mine and seat is not None
            else []
        ),
        "outcome": outcome(state),
    }


# -- bots -------------------------------------------------------------------------------------


def random_prices(tiles: list[str], gold: int, rng: random.Random) -> dict[str, Any]:
    """A uniformly random legal ``set_prices`` command for ``tiles`` and ``gold``.

    The axe is uniform over the tiles; the prices uniform over all vectors of integers >= 1
    with sum <= gold (rejection sampling; with 2 prices about half the draws are kept). Every
    axe choice has the same number of price vectors, so the command is uniform overall.
    """
    if not tiles:
        return {"type": "set_prices", "discard": None, "prices": {}}
    discard = rng.choice(tiles)
    rest = [t for t in tiles if t != discard]
    if len(rest) > gold:  # cannot happen (income is at least 5); price nothing impossible
        raise illegal(
            "not_enough_gold", f"each priced tile needs 1 gold: {len(rest)} needed, you have {gold}"
        )
    while True:
        values = [rng.randint(1, max(gold, 1)) for _ in rest]
        if sum(values) <= gold:
            break
    return {
        "type": "set_prices",
        "discard": discard,
        "prices": dict(zip(rest, values, strict=True)),
    }


def random_command(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A uniformly random legal command (client JSON) for the seat whose ``view`` this is."""
    seat = view.get("seat")
    if seat is None:
        raise GameError(NOT_YOUR_TURN, "a spectator cannot act")
    me = view["players"][seat]
    if view["phase"] == "prices" and not me["prices_set"]:
        return random_prices(list(me["drawn"]), me["free_gold"], rng)
    if view["phase"] == "game_over":
        raise GameError(GAME_OVER, "the game is over")
    options = view.get("legal_commands") or []
    if not options:
        raise GameError(NOT_YOUR_TURN, "nothing to do now")
    return dict(rng.choice(options))


def random_command_at(s: Any, seat: int, rng: random.Random) -> Any:
    """``random_command`` of ``seat``'s view, read from the game itself (a ``State`` or the
    kernel's ``Table``), as an engine command: the same draws from ``rng`` and the same
    command as ``parse_command(random_command(view(s, seat), rng))``, without building the
    view (every territory as JSON, per move). ``seat`` must be one to act.

    The view's own gold in hand (``free_gold``) and tiles drawn are the seat's ``gold`` and
    ``drawn``; its ``legal_commands`` are ``legal_commands``' listing in JSON, in order."""
    p = s.players[seat]
    phase = s.phase
    if phase == "prices" and not p.prices_set:
        return m.parse_command(random_prices(list(p.drawn), p.gold, rng))
    if phase == "game_over":
        raise GameError(GAME_OVER, "the game is over")
    options = legal_commands(s, seat)
    if not options:
        raise GameError(NOT_YOUR_TURN, "nothing to do now")
    return rng.choice(options)


# -- determinize ------------------------------------------------------------------------------


def determinize(view: Mapping[str, Any], seat: int, rng: Rng) -> State:
    """A full state consistent with ``view``: another seat's unrevealed axe and prices are
    drawn at random within its gold; the bag is every landscape tile not seen elsewhere."""
    seen: set[str] = set()
    players: list[Player] = []
    for pv in view["players"]:
        placements = [(pl["tile"], pl["x"], pl["y"], pl["rotation"]) for pl in pv["territory"]]
        drawn = tuple(pv["drawn"])
        discard = pv["discard"]
        gold_total = pv["gold"]
        if pv["prices_set"] and pv["offer"] is None and drawn:
            # Hidden: invent an axe and prices the seat could have set.
            guess = random_prices(list(drawn), gold_total, _PyRng(rng))
            discard = guess["discard"]
            offer = tuple((t, guess["prices"][t]) for t in drawn if t in guess["prices"])
        else:
            offer = tuple((t, pv["offer"][t]) for t in drawn if pv["offer"] and t in pv["offer"])
        staked = sum(p for _, p in offer)
        bd = pv["score_breakdown"]
        players.append(
            Player(
                castle=pv["castle"],
                territory=Territory.of(*placements),
                gold=gold_total - staked,
                score=pv["score"],
                round_points=tuple(tuple(r["points"].items()) for r in bd["rounds"]),
                scroll_points=tuple(bd["scrolls"].items()),
                gold_points=bd["gold"],
                drawn=drawn,
                discard=discard,
                offer=offer,
                prices_set=pv["prices_set"],
                to_place=tuple(pv["to_place"]),
            )
        )
        seen.update(pl[0] for pl in placements)
        seen.update(drawn)
        seen.update(pv["to_place"])
    extra = view["extra_tile"]
    if extra is not None:
        seen.add(extra["tile"])
    n = len(players)
    buyer = view["current_buyer"]
    start = view["start_player"]
    # Seats done buying: none before the buying phase, all after it.
    buys_done = 0 if view["phase"] == "prices" else n
    if view["phase"] == "buying" and buyer is not None:
        buys_done = (buyer - start) % n
    return State(
        seats=n,
        rounds=view["rounds"],
        scoring_tiles=tuple(t["id"] for t in view["scoring_tiles"]),
        advanced_variant=view["advanced_variant"],
        players=tuple(players),
        bag=tuple(sorted(set(LANDSCAPE_IDS) - seen)),
        round=view["round"],
        phase=view["phase"],
        start_player=start,
        revealed=view["revealed"],
        buys_done=buys_done,
        extra=extra["tile"] if extra else None,
        extra_price=extra["price"] if extra else 0,
    )


class _PyRng(random.Random):
    """``random.Random`` seeded from the game ``Rng`` (so determinize stays replayable)."""

    def __init__(self, rng: Rng) -> None:
        super().__init__(rng.below(1 << 62))


def tile_locations(state: State) -> dict[str, str]:
    """Where each landscape tile is: ``bag``, ``offer:<seat>``, ``extra``, ``to_place:<seat>``
    or ``territory:<seat>`` (tests check every tile is in exactly one)."""
    where: dict[str, list[str]] = {t: [] for t in LANDSCAPE_IDS}
    for t in state.bag:
        where[t].append("bag")
    if state.extra is not None:
        where[state.extra].append("extra")
    for i, p in enumerate(state.players):
        for t in p.drawn:
            where[t].append(f"offer:{i}")
        for t in p.to_place:
            where[t].append(f"to_place:{i}")
        for pl in p.territory.placements:
            if not TILES[pl.tile].castle:
                where[pl.tile].append(f"territory:{i}")
    out = {}
    for t, places in where.items():
        if len(places) != 1:
            raise AssertionError(f"tile {t} is in {places}")
        out[t] = places[0]
    return out
