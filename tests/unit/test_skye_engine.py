"""Isle of Skye engine: options, setup, commands, phases, money flow, building, round and game
end, the advanced variant, views and secrecy."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

import pytest

import shared.games.skye as skye
from shared.games.base import replay
from shared.games.errors import (
    GAME_OVER,
    ILLEGAL,
    INVALID_COMMAND,
    INVALID_OPTIONS,
    NOT_YOUR_TURN,
    GameError,
)
from shared.games.rng import Rng
from shared.games.skye import messages as m
from shared.games.skye.data import CASTLE_IDS, LANDSCAPE_IDS
from shared.games.skye.engine import random_prices, rounds_for, tile_locations
from shared.games.skye.state import State
from shared.games.skye.territory import Territory

TILES4 = ("cattle_on_roads", "sheep", "square_plots", "vertical_lines")


def start(
    hands: tuple[tuple[str, ...], ...],
    *,
    first: int = 0,
    tiles: tuple[str, ...] = TILES4,
    extra: str | None = None,
) -> State:
    """A game at round 1's price phase with chosen draws (5 gold each)."""
    n = len(hands)
    events = [
        m.GameStarted(
            seats=n,
            rounds=rounds_for(n),
            castles=CASTLE_IDS[:n],
            scoring_tiles=tiles,
            first_player=first,
            advanced_variant=extra is not None,
        ),
        m.RoundStarted(round=1, start_player=first),
        m.IncomePaid(round=1, gold=(5,) * n, castle=(5,) * n, whisky=(0,) * n, catch_up=(0,) * n),
        m.TilesDrawn(round=1, tiles=hands, extra=extra, extra_price=2 if extra else 0),
        m.PhaseStarted(phase="prices"),
    ]
    return replay(skye, events)


def act(state: State, seat: int, cmd: dict[str, Any], label: str = "t") -> tuple[State, list]:
    """Parse, decide and apply a command; returns the new state and the events."""
    events = skye.decide(state, seat, skye.parse_command(cmd), Rng("test", label))
    for e in events:
        state = skye.evolve(state, e)
    return state, events


def rule_of(state: State, seat: int, cmd: dict[str, Any]) -> str | None:
    """The rule slug (or code) a command breaks."""
    with pytest.raises(GameError) as err:
        skye.decide(state, seat, skye.parse_command(cmd), Rng("test"))
    if err.value.rule:
        assert err.value.code == ILLEGAL
        return err.value.rule
    return err.value.code


def prices(discard: str, **p: int) -> dict[str, Any]:
    return {"type": "set_prices", "discard": discard, "prices": p}


HANDS3 = (("L25", "L21", "L32"), ("L04", "L08", "L09"), ("L66", "L10", "L06"))

# -- options and setup ------------------------------------------------------------------------


def test_parse_options_defaults_and_choices() -> None:
    assert skye.parse_options(3, {}) == {
        "scoring_tiles": None,
        "first_player": None,
        "advanced_variant": False,
    }
    opts = skye.parse_options(2, {"scoring_tiles": [1, "gold_majority", 0, "15"]})
    assert opts["scoring_tiles"] == [
        "sheep",
        "gold_majority",
        "square_plots",
        "completed_mountains",
    ]
    by_letter = skye.parse_options(
        2, {"scoring_tiles": {"A": "sheep", "B": 3, "C": 4, "D": 5}, "first_player": 1}
    )
    assert by_letter["scoring_tiles"] == [
        "sheep",
        "whisky_majority",
        "animals_near_farms",
        "cattle_on_roads",
    ]
    assert by_letter["first_player"] == 1
    assert skye.parse_options(3, {"advanced_variant": True})["advanced_variant"] is True


@pytest.mark.parametrize(
    ("seats", "options"),
    [
        (1, {}),
        (6, {}),
        (3, {"colour": "red"}),
        (3, {"scoring_tiles": ["sheep", "sheep", 2, 3]}),
        (3, {"scoring_tiles": ["sheep", 2, 3]}),
        (3, {"scoring_tiles": ["nope", 1, 2, 3]}),
        (3, {"scoring_tiles": ["\u00b2", 1, 2, 3]}),  # "²" is a digit that int() does not read
        (3, {"first_player": 3}),
        (3, {"first_player": True}),
        (4, {"advanced_variant": True}),
        (3, {"advanced_variant": "yes"}),
    ],
)
def test_parse_options_rejects(seats: int, options: dict[str, Any]) -> None:
    with pytest.raises(GameError) as err:
        skye.parse_options(seats, options)
    assert err.value.code == INVALID_OPTIONS


def test_setup_deals_and_starts_round_one() -> None:
    events = skye.setup(4, {"scoring_tiles": list(TILES4), "first_player": 2}, Rng("s"))
    state = replay(skye, events)
    assert isinstance(events[0], m.GameStarted)
    assert events[0].castles == CASTLE_IDS[:4]
    assert state.scoring_tiles == TILES4
    assert state.start_player == 2 and state.round == 1 and state.rounds == 6
    assert state.phase == "prices"
    assert [p.gold for p in state.players] == [5, 5, 5, 5]
    assert all(len(p.drawn) == 3 for p in state.players)
    assert len(state.bag) == 73 - 12
    assert skye.to_act(state) == (0, 1, 2, 3)
    assert all(p.territory.placements[0].tile == CASTLE_IDS[i] for i, p in enumerate(state.players))
    # The same seed gives the same game; draws are in the events, not only in the seed.
    assert skye.setup(4, {"scoring_tiles": list(TILES4), "first_player": 2}, Rng("s")) == events
    tile_locations(state)


def test_setup_draws_scoring_tiles_and_start_player() -> None:
    seen_first = set()
    for seed in range(12):
        events = skye.setup(5, {}, Rng(str(seed)))
        started = events[0]
        assert len(set(started.scoring_tiles)) == 4
        assert started.rounds == 5
        seen_first.add(started.first_player)
    assert len(seen_first) > 1


# -- parse_command ----------------------------------------------------------------------------


def test_parse_command_forms() -> None:
    assert skye.parse_command({"type": "pass", "expected_version": 3}) == m.Pass()
    assert skye.parse_command({"type": "buy", "tile": 7}) == m.Buy(tile="L07")
    assert skye.parse_command(
        {"type": "place", "tile": "L07", "x": -1, "y": 2, "rotation": 270}
    ) == m.Place(tile="L07", x=-1, y=2, rotation=270)
    cmd = skye.parse_command({"type": "set_prices", "discard": 1, "prices": {"2": 3, "L03": 1}})
    assert cmd == m.SetPrices(discard="L01", prices={"L02": 3, "L03": 1})
    # command_to_json is read back by parse_command.
    for c in (cmd, m.Pass(), m.Buy(tile="L07"), m.Place(tile="L07", x=0, y=1, rotation=90)):
        assert skye.parse_command(skye.command_to_json(c)) == c


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"type": "fly"}, "type"),
        ({}, "type"),
        ({"type": "buy"}, "tile"),
        ({"type": "buy", "tile": "L99"}, "tile"),
        ({"type": "place", "tile": "L01", "x": "1", "y": 0, "rotation": 0}, "x"),
        ({"type": "place", "tile": "L01", "x": 1, "y": 0, "rotation": 45}, "rotation"),
        ({"type": "place", "tile": "L01", "x": 1, "y": None, "rotation": 0}, "y"),
        ({"type": "set_prices", "discard": "L01", "prices": {"L02": "3"}}, "prices"),
        ({"type": "set_prices", "discard": "L01", "prices": {"zz": 3}}, "prices"),
        ({"type": "set_prices", "discard": "L01", "prices": {"2": 1, "L02": 1}}, "prices"),
        ({"type": "set_prices", "discard": "L01", "prices": [1, 2]}, "prices"),
        ({"type": "set_prices", "discard": "Q", "prices": {}}, "discard"),
        # "²" is a digit (str.isdigit) that int() does not read: not a tile number
        ({"type": "buy", "tile": "\u00b2"}, "tile"),
        ({"type": "place", "tile": "\u00b2", "x": 1, "y": 0, "rotation": 0}, "tile"),
        ({"type": "set_prices", "discard": "\u00b2", "prices": {}}, "discard"),
        ({"type": "set_prices", "discard": "L01", "prices": {"\u00b2": 1}}, "prices"),
        ({"type": "buy", "tile": "9" * 5000}, "tile"),  # more digits than int() reads
    ],
)
def test_parse_command_rejects(data: dict[str, Any], field: str) -> None:
    with pytest.raises(GameError) as err:
        skye.parse_command(data)
    assert err.value.code == INVALID_COMMAND
    assert field in err.value.errors


@pytest.mark.parametrize(
    "data",
    [
        {"type": "fly"},
        {"type": "axe"},
        {"type": "Pass"},
        {"type": ""},
        {"type": None},
        {"type": 3},
        {"type": ["pass"]},
        {},
    ],
)
def test_unknown_command_type_is_command_invalid(data: dict[str, Any]) -> None:
    # Given any game, when a command of no Isle of Skye type arrives, then command/invalid
    # naming the type field (not move/illegal: no rule of the game is involved).
    with pytest.raises(GameError) as err:
        skye.parse_command(data)
    assert (err.value.code, err.value.rule) == (INVALID_COMMAND, None)
    assert "type" in err.value.errors


@pytest.mark.parametrize("body", [[], "pass", None, 3])
def test_a_command_that_is_no_object_is_command_invalid(body: Any) -> None:
    with pytest.raises(GameError) as err:
        skye.parse_command(body)
    assert err.value.code == INVALID_COMMAND
    assert "body" in err.value.errors


@dataclass(frozen=True)
class Fly:
    """No Isle of Skye command: what decide gets when a caller skips parse_command."""

    TYPE = "fly"


def unknown_command_states() -> list[tuple[str, State, int]]:
    """(label, state, seat): seats that must act and seats that must not, in each phase."""
    prices_done, _ = act(start(HANDS3), 0, prices("L21", L25=1, L32=1))
    buying = prices_done
    for seat in (1, 2):
        buying, _ = act(
            buying,
            seat,
            prices(buying.players[seat].drawn[0], **{t: 1 for t in buying.players[seat].drawn[1:]}),
        )
    return [
        ("prices, to act", start(HANDS3), 0),
        ("prices, already set", prices_done, 0),
        ("buying, the buyer", buying, 0),
        ("buying, not the buyer", buying, 1),
        ("building, to place", building_state(), 0),
    ]


@pytest.mark.parametrize("command", [Fly(), {"type": "pass"}, None])
def test_decide_answers_command_invalid_for_an_object_that_is_no_command(command: Any) -> None:
    # Given each phase, when decide gets something that is no Isle of Skye command (from the
    # seat to act or another), then command/invalid, as parse_command would answer.
    for label, state, seat in unknown_command_states():
        with pytest.raises(GameError) as err:
            skye.decide(state, seat, command, Rng("test"))
        assert (err.value.code, err.value.rule) == (INVALID_COMMAND, None), label
        assert "type" in err.value.errors, label


# -- price phase ------------------------------------------------------------------------------


def test_price_rules() -> None:
    s = start(HANDS3)
    assert rule_of(s, 0, prices("L25", L21=0, L32=1)) == "price_too_low"
    assert rule_of(s, 0, prices("L25", L21=3, L32=3)) == "not_enough_gold"  # 6 > 5
    assert rule_of(s, 0, prices("L04", L21=1, L32=1)) == "not_your_tile"
    assert rule_of(s, 0, prices("L25", L21=1, L04=1)) == "not_your_tile"
    assert rule_of(s, 0, prices("L25", L21=1)) == "missing_price"
    assert rule_of(s, 0, prices("L25", L25=1, L21=1, L32=1)) == "discard_priced"
    assert rule_of(s, 0, {"type": "set_prices", "prices": {"L21": 1, "L32": 1}}) == (
        "discard_required"
    )
    assert rule_of(s, 0, {"type": "pass"}) == "wrong_phase"
    assert (
        rule_of(s, 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0})
        == "wrong_phase"
    )
    s, events = act(s, 0, prices("L21", L25=2, L32=3))  # 5 = all of the gold: allowed
    assert events == [m.PricesSet(seat=0, discard="L21", prices={"L25": 2, "L32": 3})]
    assert rule_of(s, 0, prices("L21", L25=1, L32=1)) == "already_set"
    assert skye.to_act(s) == (1, 2)  # simultaneous: everyone who has not set prices


def test_prices_stay_secret_until_everyone_has_set_them() -> None:
    s0 = start(HANDS3)
    a, _ = act(s0, 0, prices("L21", L25=2, L32=1))
    b, _ = act(s0, 0, prices("L32", L25=1, L21=4))
    for seat in (1, 2, None):
        va, vb = skye.view(a, seat), skye.view(b, seat)
        assert va == vb  # the prices differ, the views do not
        p0 = va["players"][0]
        assert p0["prices_set"] is True
        assert p0["offer"] is None and p0["discard"] is None and p0["free_gold"] is None
        assert p0["gold"] == 5  # total gold in hand and on tiles: says nothing of the prices
        assert p0["drawn"] == ["L25", "L21", "L32"]  # drawn tiles lie face up
    own = skye.view(a, 0)
    assert own["offer"] == {"L25": 2, "L32": 1} and own["discard"] == "L21"
    assert own["players"][0]["free_gold"] == 2
    event = m.PricesSet(seat=0, discard="L21", prices={"L25": 2, "L32": 1})
    hidden = {"type": "prices_set", "data": {"seat": 0}}
    assert skye.redact(event, 1) == hidden
    assert skye.redact(event, None) == hidden
    assert skye.redact(event, 0) == skye.event_to_json(event)


def test_reveal_discard_and_buying_order() -> None:
    s = start(HANDS3, first=1)
    s, _ = act(s, 0, prices("L21", L25=2, L32=1))
    s, _ = act(s, 1, prices("L08", L04=3, L09=2))
    s, events = act(s, 2, prices("L06", L66=1, L10=4))
    types = [e.TYPE for e in events]
    assert types == ["prices_set", "prices_revealed", "tiles_discarded", "phase_started"]
    assert events[1].offers[1] == {"seat": 1, "discard": "L08", "prices": {"L04": 3, "L09": 2}}
    assert events[2].tiles == ("L06", "L08", "L21")  # axed tiles back to the bag
    assert {"L06", "L08", "L21"} <= set(s.bag)
    assert s.phase == "buying" and skye.to_act(s) == (1,)  # start player buys first
    v = skye.view(s, 2)
    assert v["players"][0]["offer"] == {"L25": 2, "L32": 1}
    assert v["current_buyer"] == 1


# -- buying: money flow -----------------------------------------------------------------------


def test_buy_phase_money_flow() -> None:
    s = start(HANDS3, first=0)
    s, _ = act(s, 0, prices("L21", L25=2, L32=1))  # p0: 5 - 3 = 2 in hand
    s, _ = act(s, 1, prices("L08", L04=3, L09=2))  # p1: 0 in hand
    s, _ = act(s, 2, prices("L06", L66=1, L10=4))  # p2: 0 in hand
    assert [p.gold for p in s.players] == [2, 0, 0]

    assert rule_of(s, 1, {"type": "pass"}) == NOT_YOUR_TURN
    assert rule_of(s, 0, {"type": "buy", "tile": "L32"}) == "own_tile"
    assert rule_of(s, 0, {"type": "buy", "tile": "L08"}) == "not_offered"  # axed
    assert rule_of(s, 0, {"type": "buy", "tile": "L04"}) == "not_enough_gold"  # 3 > 2
    assert rule_of(s, 0, prices("L21", L25=1, L32=1)) == "wrong_phase"

    # p0 buys L66 from p2 for 1: p0 2 -> 1; p2 gets 1 paid + 1 back = 2.
    s, events = act(s, 0, {"type": "buy", "tile": "L66"})
    assert events == [m.TileBought(seat=0, tile="L66", seller=2, price=1)]
    assert [p.gold for p in s.players] == [1, 0, 2]
    # p1 has no gold in hand: it can only pass.
    assert skye.legal_commands(s, 1) == [m.Pass()]
    assert rule_of(s, 1, {"type": "buy", "tile": "L25"}) == "not_enough_gold"
    s, _ = act(s, 1, {"type": "pass"})
    # p2 buys L25 from p0 for 2: p2 2 -> 0; p0 gets 2 + its 2 back: 1 -> 5.
    s, events = act(s, 2, {"type": "buy", "tile": "L25"})
    assert events[0] == m.TileBought(seat=2, tile="L25", seller=0, price=2)
    assert events[1] == m.UnsoldTilesKept(
        tiles=(("L32",), ("L04", "L09"), ("L10",)), gold_lost=(1, 5, 4)
    )
    assert events[2] == m.PhaseStarted(phase="building")
    # Unsold tiles are kept; the gold on them went to the bank: 15 - 1 - 5 - 4 = 5.
    assert [p.gold for p in s.players] == [5, 0, 0]
    assert [p.to_place for p in s.players] == [("L66", "L32"), ("L04", "L09"), ("L25", "L10")]
    assert s.phase == "building" and skye.to_act(s) == (0, 1, 2)
    tile_locations(s)


def test_each_seat_buys_at_most_once_per_round() -> None:
    s = start(HANDS3)
    s, _ = act(s, 0, prices("L21", L25=1, L32=1))
    s, _ = act(s, 1, prices("L08", L04=1, L09=1))
    s, _ = act(s, 2, prices("L06", L66=1, L10=1))
    s, _ = act(s, 0, {"type": "buy", "tile": "L04"})
    assert rule_of(s, 0, {"type": "buy", "tile": "L09"}) == NOT_YOUR_TURN
    legal = skye.legal_commands(s, 1)
    assert m.Buy(tile="L25") in legal and m.Buy(tile="L09") not in legal
    assert m.Buy(tile="L04") not in legal  # sold already


# -- building ---------------------------------------------------------------------------------


def building_state() -> State:
    s = start(HANDS3)
    s, _ = act(s, 0, prices("L21", L25=1, L32=1))
    s, _ = act(s, 1, prices("L08", L04=1, L09=1))
    s, _ = act(s, 2, prices("L06", L66=1, L10=1))
    for seat in (0, 1, 2):
        s, _ = act(s, seat, {"type": "pass"})
    return s  # everyone keeps their own two tiles


def test_place_rules_and_simultaneous_building() -> None:
    s = building_state()
    assert skye.to_act(s) == (0, 1, 2)
    place = {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0}
    assert rule_of(s, 0, {**place, "y": 0}) == "occupied"
    assert rule_of(s, 0, {**place, "x": 3}) == "no_contact"
    assert rule_of(s, 0, {**place, "rotation": 270}) == "terrain_mismatch"
    assert rule_of(s, 0, {**place, "tile": "L04"}) == "not_your_tile"
    assert rule_of(s, 0, {"type": "pass"}) == "wrong_phase"
    legal = skye.legal_commands(s, 0)
    assert m.Place(tile="L25", x=0, y=1, rotation=0) in legal
    assert all(isinstance(c, m.Place) for c in legal)
    # Any seat may place in any order.
    s, _ = act(s, 2, {"type": "place", "tile": "L66", "x": 1, "y": 0, "rotation": 180})
    s, _ = act(s, 0, place)
    assert skye.to_act(s) == (0, 1, 2)
    s, _ = act(s, 0, {"type": "place", "tile": "L32", "x": 0, "y": 2, "rotation": 0})
    assert skye.to_act(s) == (1, 2)
    assert rule_of(s, 0, {**place, "tile": "L32", "y": 3}) == NOT_YOUR_TURN
    assert [p.placements[-1].tile for p in (s.players[0].territory,)] == ["L32"]


def with_territory(s: State, seat: int, territory: Territory, **changes: Any) -> State:
    """``s`` with seat's territory replaced (tiles taken out of the bag to stay consistent)."""
    used = {p.tile for p in territory.placements} | set(changes.get("to_place", ()))
    s = s.with_player(seat, territory=territory, **changes)
    return replace(s, bag=tuple(t for t in s.bag if t not in used))


U = Territory.of(("blue_castle", 0, 0, 0), ("L45", 1, 0, 0), ("L19", -1, 0, 0))


def test_a_tile_waits_for_another_then_fits() -> None:
    # Territory U: castle, L45 east, L19 west: every free edge is pasture. L06 (w m m m) has no
    # pasture, so no spot; L25 has. L06 stays until L25 is placed.
    s = replace(building_state(), phase="building")
    s = s.with_player(1, to_place=()).with_player(2, to_place=())
    s = with_territory(s, 0, U, to_place=("L06", "L25"))
    assert {c.tile for c in skye.legal_commands(s, 0)} == {"L25"}
    # L25 at (0,1) turned 90 (m p p p) shows mountain north: (0,2) now needs only S = m.
    s2, events = act(s, 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 90})
    assert [e.TYPE for e in events] == ["tile_placed"]
    assert m.Place(tile="L06", x=0, y=2, rotation=0) in skye.legal_commands(s2, 0)
    # L25 at rotation 0 instead leaves only pasture (and a p+m corner) free: L06 goes back.
    s3, events = act(s, 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0})
    assert events[1] == m.TileReturned(seat=0, tile="L06")
    assert "L06" in s3.bag
    assert s3.players[0].to_place == ()
    assert events[2].TYPE == "round_scored"  # nobody has tiles left: the round is scored


def test_unplaceable_kept_tile_returns_to_bag_at_once() -> None:
    s = start(HANDS3)
    s, _ = act(s, 0, prices("L21", L25=1, L32=1))
    s, _ = act(s, 1, prices("L08", L04=1, L09=1))
    s, _ = act(s, 2, prices("L66", L06=1, L10=1))
    s, _ = act(s, 0, {"type": "pass"})
    s, _ = act(s, 1, {"type": "buy", "tile": "L10"})
    # Seat 2 keeps L06, which cannot go into territory U.
    s = with_territory(s, 2, U)
    s, events = act(s, 2, {"type": "pass"})
    assert m.TileReturned(seat=2, tile="L06") in events
    assert s.players[2].to_place == ()
    assert skye.to_act(s) == (0, 1)
    tile_locations(s)


# -- round end, next round, game end ----------------------------------------------------------


def test_round_scoring_and_next_round() -> None:
    s = start((("L25", "L21", "L06"), ("L32", "L04", "L66")), first=0)
    s, _ = act(s, 0, prices("L06", L25=1, L21=1))  # p0: 3 in hand
    s, _ = act(s, 1, prices("L66", L32=2, L04=2))  # p1: 1 in hand
    s, _ = act(s, 0, {"type": "buy", "tile": "L32"})  # p0 3 -> 1; p1 1 + 2 + 2 = 5
    s, _ = act(s, 1, {"type": "buy", "tile": "L21"})  # p1 5 -> 4; p0 1 + 1 + 1 = 3
    assert [p.gold for p in s.players] == [3, 4]
    assert [p.to_place for p in s.players] == [("L32", "L25"), ("L21", "L04")]
    s, _ = act(s, 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0})
    s, _ = act(s, 0, {"type": "place", "tile": "L32", "x": 0, "y": 2, "rotation": 0})
    s, _ = act(s, 1, {"type": "place", "tile": "L21", "x": 0, "y": -1, "rotation": 0})
    s, events = act(s, 1, {"type": "place", "tile": "L04", "x": 0, "y": 1, "rotation": 180})
    types = [e.TYPE for e in events]
    assert types[:5] == [
        "tile_placed",
        "round_scored",
        "round_started",
        "income_paid",
        "tiles_drawn",
    ]
    # Round 1 scores A (cattle_on_roads): p0's road castle-L25-L32 carries 1 + 2 cattle -> 6;
    # p1 has no cattle -> 0.
    assert events[1] == m.RoundScored(round=1, points=({"A": 6}, {"A": 0}))
    # The start player passes left; round 2 income: p0 5 + 2 joined whisky tiles (L25, L32)
    # = 7; p1 5 (L21's whisky road does not reach the castle); no catch-up before round 3.
    assert events[2] == m.RoundStarted(round=2, start_player=1)
    assert events[3].gold == (7, 5) and events[3].whisky == (2, 0)
    assert [p.gold for p in s.players] == [10, 9]
    assert [p.score for p in s.players] == [6, 0]
    assert s.phase == "prices" and s.round == 2
    assert len(s.bag) == 73 - 4 - 6
    v = skye.view(s, 0)
    assert v["players"][0]["score_breakdown"]["rounds"] == [{"round": 1, "points": {"A": 6}}]
    tile_locations(s)


def test_income_catch_up_in_round_five() -> None:
    # Seat 0 (roads: castle-L25-L32, both whisky; L21 whisky but no road) with 10 points,
    # two players ahead: 5 + 2 + 2 x 3 = 13.
    s = start((("L01",), ("L02",), ("L03",)))
    t = Territory.of(
        ("blue_castle", 0, 0, 0), ("L25", 0, 1, 0), ("L21", 0, -1, 0), ("L32", 0, 2, 0)
    )
    s = with_territory(s, 0, t)
    s = replace(s, round=5)
    for seat, score in enumerate((10, 20, 30)):
        s = s.with_player(seat, score=score)
    paid = skye.engine.income(s)
    assert paid.gold == (13, 5 + 3, 5)
    assert paid.catch_up == (6, 3, 0)


def final_state(gold0: int, gold1: int) -> State:
    """Round 6 building: p0 (29 points) still places L25; p1 (30 points) is done."""
    s = start((("L25",), ("L21",)))
    s = replace(s, round=6, phase="building")
    s = s.with_player(0, drawn=(), to_place=("L25",), score=29, gold=gold0)
    s = s.with_player(1, drawn=(), score=30, gold=gold1)
    return replace(s, bag=tuple(sorted((*s.bag, "L21"))))


def test_end_game_gold_points_and_tie_break() -> None:
    # Round 6 scores B (sheep), C (squares), D (vertical lines): p0's L25 has 1 sheep -> 30.
    # Gold: p0 14 -> 2 points, 4 left over; p1 10 -> 2 points, 0 left. 32 all: p0 wins on
    # the leftover gold.
    s, events = act(
        final_state(14, 10), 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0}
    )
    assert [e.TYPE for e in events] == ["tile_placed", "round_scored", "game_scored", "game_ended"]
    assert events[1].points == ({"B": 1, "C": 0, "D": 0}, {"B": 0, "C": 0, "D": 0})
    assert events[2] == m.GameScored(scrolls=({}, {}), gold=(2, 2))
    assert skye.outcome(s) == {
        "scores": [32, 32],
        "tiebreak": [4, 0],
        "winners": [0],
        "ranks": [1, 2],
        "draw": False,
    }
    assert events[3].winners == (0,)
    v = skye.view(s, None)
    assert v["phase"] == "game_over" and v["scores"] == [32, 32]
    assert v["players"][0]["score_breakdown"]["gold"] == 2
    assert rule_of(s, 0, {"type": "pass"}) == GAME_OVER
    assert skye.to_act(s) == () and skye.legal_commands(s, 0) == []


def test_end_game_draw() -> None:
    # p0 10 gold -> 2 points, 0 left; p1 the same: 32 and 32, tie-break 0 and 0: a draw.
    s, _ = act(
        final_state(10, 10), 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0}
    )
    assert skye.outcome(s) == {
        "scores": [32, 32],
        "tiebreak": [0, 0],
        "winners": [0, 1],
        "ranks": [1, 1],
        "draw": True,
    }


def test_outcome_none_while_running() -> None:
    assert skye.outcome(start(HANDS3)) is None


# -- advanced variant -------------------------------------------------------------------------


def variant_state() -> State:
    s = start((("L25", "L21", "L32"), ("L04", "L08", "L09")), extra="L49")
    s, _ = act(s, 0, prices("L21", L25=1, L32=1))  # p0: 3 in hand
    s, _ = act(s, 1, prices("L08", L04=1, L09=1))  # p1: 3 in hand
    return s


def test_variant_extra_tile_bought_from_the_bank() -> None:
    s = variant_state()
    assert skye.view(s, 1)["extra_tile"] == {"tile": "L49", "price": 2}  # round 1 + 1
    assert m.Buy(tile="L49") in skye.legal_commands(s, 0)
    s, events = act(s, 0, {"type": "buy", "tile": "L49"})
    assert events == [m.TileBought(seat=0, tile="L49", seller=None, price=2)]
    assert [p.gold for p in s.players] == [1, 3]  # paid to the bank, not to a seat
    assert s.extra is None  # not refilled
    assert rule_of(s, 1, {"type": "buy", "tile": "L49"}) == "not_offered"
    assert s.players[0].to_place == ("L49",)
    tile_locations(s)


def test_variant_unsold_extra_tile_is_replaced_next_round() -> None:
    s = variant_state()
    s, _ = act(s, 0, {"type": "pass"})
    s, _ = act(s, 1, {"type": "pass"})
    assert s.extra == "L49"
    s, _ = act(s, 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0})
    s, _ = act(s, 0, {"type": "place", "tile": "L32", "x": 0, "y": 2, "rotation": 0})
    s, _ = act(s, 1, {"type": "place", "tile": "L04", "x": 0, "y": 1, "rotation": 180})
    s, events = act(s, 1, {"type": "place", "tile": "L09", "x": -1, "y": 0, "rotation": 0})
    types = [e.TYPE for e in events]
    assert types.index("extra_tile_returned") < types.index("round_started")
    drawn = next(e for e in events if isinstance(e, m.TilesDrawn))
    assert drawn.extra is not None and drawn.extra_price == 3  # round 2 + 1
    assert s.extra == drawn.extra
    tile_locations(s)


def test_variant_setup_draws_an_extra_tile() -> None:
    s = replay(skye, skye.setup(3, {"advanced_variant": True}, Rng("v")))
    assert s.extra is not None and s.extra_price == 2
    assert len(s.bag) == 73 - 9 - 1


# -- legal_commands, random_command, determinize -------------------------------------------


def test_price_phase_legal_command_is_a_template() -> None:
    s = start(HANDS3)
    (entry,) = skye.legal_commands(s, 1)
    assert skye.command_to_json(entry) == {
        "type": "set_prices",
        "tiles": ["L04", "L08", "L09"],
        "gold": 5,
        "min_price": 1,
        "template": True,
        "discard": "L04",
        "prices": {"L08": 1, "L09": 1},
    }
    assert skye.view(s, 1)["legal_commands"] == [skye.command_to_json(entry)]
    # sent back as it is, the entry is a valid command: the default split
    sent = skye.parse_command(skye.command_to_json(entry))
    assert sent == skye.parse_command(
        {"type": "set_prices", "discard": "L04", "prices": {"L08": 1, "L09": 1}}
    )
    assert skye.decide(s, 1, sent, Rng("t"))
    assert skye.view(s, None)["legal_commands"] == []


def test_random_command_is_legal_in_every_phase() -> None:
    rnd = random.Random(5)
    discards = set()
    for _ in range(60):
        s = start(HANDS3)
        cmd = skye.random_command(skye.view(s, 0), rnd)
        discards.add(cmd["discard"])
        assert sum(cmd["prices"].values()) <= 5 and min(cmd["prices"].values()) >= 1
        act(s, 0, cmd)
    assert discards == {"L25", "L21", "L32"}
    s = building_state()
    for seat in (0, 1, 2):
        act(s, seat, skye.random_command(skye.view(s, seat), rnd))
    with pytest.raises(GameError) as err:
        skye.random_command(skye.view(s, None), rnd)
    assert err.value.code == NOT_YOUR_TURN  # a spectator never has a turn


def test_random_prices_without_enough_gold_is_illegal_not_enough_gold() -> None:
    # Given 2 tiles to price (each needs at least 1 gold) and 1 gold, when a random split is
    # asked for, then move/illegal naming not_enough_gold, as decide names it for set_prices:
    # it is the seat's turn, so not move/not_your_turn.
    with pytest.raises(GameError) as err:
        random_prices(["L25", "L21", "L32"], 1, random.Random(1))
    assert (err.value.code, err.value.rule) == (ILLEGAL, "not_enough_gold")
    # The same shortage through decide names the same rule.
    s = start(HANDS3).with_player(0, gold=1)
    assert rule_of(s, 0, prices("L25", L21=1, L32=1)) == "not_enough_gold"
    # Exactly enough gold still prices every tile at 1.
    cmd = random_prices(["L25", "L21", "L32"], 2, random.Random(1))
    assert sorted(cmd["prices"].values()) == [1, 1]


def test_random_command_after_the_game_is_game_over() -> None:
    # Given a finished game, when a bot asks for a random command, then game/over (as decide
    # answers), not move/not_your_turn.
    s, _ = act(
        final_state(14, 10), 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0}
    )
    for seat in (0, 1):
        with pytest.raises(GameError) as err:
            skye.random_command(skye.view(s, seat), random.Random(1))
        assert err.value.code == GAME_OVER


def test_random_command_with_nothing_to_do_is_not_your_turn() -> None:
    # Given the buying phase with seat 0 to buy, when a bot asks for seat 1's command, then
    # move/not_your_turn: it is another seat's turn.
    s = start(HANDS3)
    for seat in (0, 1, 2):
        drawn = s.players[seat].drawn
        s, _ = act(s, seat, prices(drawn[0], **{t: 1 for t in drawn[1:]}))
    assert skye.to_act(s) == (0,)
    with pytest.raises(GameError) as err:
        skye.random_command(skye.view(s, 1), random.Random(1))
    assert err.value.code == NOT_YOUR_TURN


def test_determinize_matches_the_view() -> None:
    s = start(HANDS3)
    s, _ = act(s, 1, prices("L08", L04=3, L09=2))
    v = skye.view(s, 0)
    d = skye.determinize(v, 0, Rng("d"))
    assert skye.view(d, 0) == v
    assert d.players[1].prices_set and d.players[1].discard in ("L04", "L08", "L09")
    assert sum(p for _, p in d.players[1].offer) + d.players[1].gold == 5
    # With nothing hidden the state comes back exactly.
    b = building_state()
    assert skye.determinize(skye.view(b, 2), 2, Rng("d")) == b
    tile_locations(d)


def test_event_json_round_trip_for_every_type() -> None:
    samples = [
        m.GameStarted(seats=2, rounds=6, castles=("a", "b"), scoring_tiles=TILES4, first_player=1),
        m.RoundStarted(round=1, start_player=0),
        m.IncomePaid(round=1, gold=(5, 6), castle=(5, 5), whisky=(0, 1), catch_up=(0, 0)),
        m.TilesDrawn(round=1, tiles=(("L01", "L02"), ()), extra="L03", extra_price=2),
        m.PhaseStarted(phase="buying"),
        m.PricesSet(seat=0, discard="L01", prices={"L02": 3}),
        m.PricesRevealed(offers=({"seat": 0, "discard": "L01", "prices": {"L02": 3}},)),
        m.TilesDiscarded(tiles=("L01",)),
        m.TileBought(seat=1, tile="L02", seller=None, price=2),
        m.Passed(seat=0),
        m.UnsoldTilesKept(tiles=(("L02",), ()), gold_lost=(3, 0)),
        m.TilePlaced(seat=0, tile="L02", x=-1, y=0, rotation=270),
        m.TileReturned(seat=0, tile="L02"),
        m.ExtraTileReturned(tile="L03"),
        m.RoundScored(round=1, points=({"A": 1}, {"A": 0})),
        m.GameScored(scrolls=({"per_broch": 2}, {}), gold=(1, 0)),
        m.GameEnded(scores=(3, 0), tiebreak=(1, 0), winners=(0,), ranks=(1, 2)),
    ]
    assert {type(e) for e in samples} == set(skye.EVENTS.values())
    import json

    for e in samples:
        doc = json.loads(json.dumps(skye.event_to_json(e)))
        assert skye.event_from_json(doc) == e


def test_all_landscape_tiles_accounted_for() -> None:
    s = start(HANDS3)
    where = tile_locations(s)
    assert len(where) == len(LANDSCAPE_IDS)
    assert where["L25"] == "offer:0" and where["L07"] == "bag"


# -- short bag --------------------------------------------------------------------------------


def short_bag_state(bag: tuple[str, ...]) -> State:
    """Round 1 building with p0 placing its last tile and only ``bag`` left to draw from."""
    s = start((("L25",), ("L21",)))
    s = replace(s, phase="building", bag=bag)
    s = s.with_player(0, drawn=(), to_place=("L25",))
    return s.with_player(1, drawn=())


def test_short_bag_draws_in_turn_order() -> None:
    # Round 2's start player is seat 1: it draws 3 of the 4 tiles, seat 0 the last one.
    s = short_bag_state(("L01", "L02", "L03", "L04"))
    s, events = act(s, 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0})
    drawn = next(e for e in events if isinstance(e, m.TilesDrawn))
    assert [len(h) for h in drawn.tiles] == [1, 3]
    assert s.bag == ()
    # A seat with one tile axes it and prices nothing.
    (only,) = s.players[0].drawn
    assert rule_of(s, 0, prices(only, **{only: 1})) == "discard_priced"
    s, _ = act(s, 0, {"type": "set_prices", "discard": only, "prices": {}})
    a, b, c = s.players[1].drawn
    s, events = act(s, 1, prices(a, **{b: 1, c: 1}))
    assert events[2] == m.TilesDiscarded(tiles=tuple(sorted((only, a))))
    assert s.phase == "buying" and len(s.bag) == 2


def test_short_bag_seat_without_tiles_sits_out_the_prices() -> None:
    s = short_bag_state(("L01", "L02"))
    s, _ = act(s, 0, {"type": "place", "tile": "L25", "x": 0, "y": 1, "rotation": 0})
    assert s.players[0].drawn == () and s.players[0].prices_set
    assert skye.to_act(s) == (1,)
    assert skye.legal_commands(s, 0) == []
    rnd = random.Random(1)
    s, _ = act(s, 1, skye.random_command(skye.view(s, 1), rnd))
    assert s.phase == "buying"
