"""A new game is one package (issue 26): Kuhn poker (``tests/games/kuhn/``), written only for
the tests and registered by them, plays through the in-process service with no line of it
naming the game: create, commands, views that keep the other card hidden, a heuristic bot
against a search bot, a tournament, the audit of an export, the catalogue. (The conformance
suite, ``test_conformance.py``, runs its checks on it too.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import orjson
import pytest
from schemathesis.specs.openapi.converter import to_json_schema

from shared import games
from shared.adapters.memory import FixedClock, MemoryCommandBus
from shared.app import catalogue, commands, creation, queries, tournament_views, tournaments
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings

GAME = "kuhn"
CARDS = ("J", "Q", "K")


@pytest.fixture(autouse=True)
def kuhn() -> Iterator[Any]:
    """The game hosted for one test; the catalogue (cached per process) forgets it after."""
    games.register(GAME, "tests.games.kuhn")
    catalogue.catalogue.cache_clear()
    try:
        yield games.get(GAME)
    finally:
        games.unregister(GAME)
        catalogue.catalogue.cache_clear()


def memory_app(*, bots: bool = False) -> App:
    dispatcher = (lambda a: InlineDispatcher().bind(a)) if bots else None
    return bootstrap(Settings(), backend="memory", dispatcher=dispatcher, clock=FixedClock())


def drain(app: App) -> list[dict[str, Any]]:
    """Decide every queued command (what a worker does), until none is left."""
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    outcomes = []
    while queued := bus.take(GAME):
        for fields in queued:
            message = CommandMessage.from_fields(fields)  # type: ignore[arg-type]
            outcomes.append(commands.decide_command(app, message))
    return outcomes


def view(app: App, gid: str, seat: int | None) -> dict[str, Any]:
    doc = queries.view(app, gid, seat)
    assert doc is not None
    return doc


def send(app: App, gid: str, seat: int, body: dict[str, Any], cid: str) -> dict[str, Any]:
    commands.submit_command(app, CommandMessage(command_id=cid, game_id=gid, seat=seat,
                                                body=body), GAME)  # fmt: skip
    (outcome,) = drain(app)
    return outcome


def stored(app: App, gid: str) -> list[dict[str, Any]]:
    """Every envelope as an auditor reads it (the export's lines, parsed)."""
    over = queries.Caller(queries.SPECTATOR)  # anyone may export a finished game
    return [orjson.loads(line) for line in queries.export_lines(app, gid, over)]


def dealt(docs: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Hand number -> both cards, from the auditor's log."""
    return {d["data"]["hand"]: d["data"]["cards"] for d in docs if d["type"] == "hand_dealt"}


def cards_in(value: Any) -> list[str]:
    """Every card named anywhere in a JSON value."""
    if isinstance(value, dict):
        return [c for v in value.values() for c in cards_in(v)]
    if isinstance(value, list):
        return [c for v in value for c in cards_in(v)]
    return [value] if value in CARDS else []


def validator(engine: Any) -> Any:
    """The spec's view fields as a closed JSON Schema: a field the view has and the spec does
    not declare, or one it lacks, fails."""
    spec = engine.SPEC
    fields = {k: to_json_schema(v, "nullable", is_response_schema=True)
              for k, v in spec.view_fields.items()}  # fmt: skip
    fields["phase"] = {"enum": list(spec.phases)}
    schema = {"type": "object", "properties": fields, "required": sorted(fields),
              "additionalProperties": False}  # fmt: skip
    return jsonschema_rs.Draft7Validator(schema)


SERVICE_FIELDS = {"id", "game", "version", "seat", "to_act", "legal_commands", "outcome",
                  "seats", "seed_sha256", "head_hash"}  # fmt: skip

# Per hand, the moves in turn order (hand 1: seat 0 first, hand 2: seat 1 first, ...): a
# showdown after a call, a fold to a bet, a showdown after two checks.
SCRIPT = {1: ["bet", "call"], 2: ["check", "bet", "fold"], 3: ["check", "check"]}


def test_two_players_play_it_by_commands_and_never_see_the_other_card_before_a_showdown(
    kuhn: Any,
) -> None:
    app = memory_app()
    created = creation.create_game(app, GAME, [{"name": "ana"}, {"name": "bob"}], {"hands": 3},
                                   seed="kuhn-humans")  # fmt: skip
    gid = created.game_id
    check = validator(kuhn)
    showdowns_seen = 0
    for n in range(20):
        public = view(app, gid, None)
        docs = stored(app, gid) if public["outcome"] is not None else None
        # Every view holds the spec's fields and no other; no view holds a card of the hand
        # being played but the seat's own (a spectator's: none).
        hand = public["hand"]
        for seat in (None, 0, 1):
            mine = view(app, gid, seat)
            game_fields = {k: v for k, v in mine.items() if k not in SERVICE_FIELDS}
            assert not list(check.iter_errors(game_fields)), game_fields
            shown = mine["last_showdown"]
            rest = {k: v for k, v in game_fields.items() if k not in ("your_card", "last_showdown")}
            assert cards_in(rest) == []
            if seat is None:
                assert mine["your_card"] is None
            else:
                assert mine["your_card"] in CARDS
            # A showdown shows both cards of its hand: an earlier hand, or this one once it
            # ended by one.
            assert shown is None or shown["hand"] < hand or public["outcome"] is not None
        if public["outcome"] is not None:
            break
        (seat,) = public["to_act"]
        mine = view(app, gid, seat)
        step = len(mine["actions"])
        move = {"type": SCRIPT[hand][step]}
        assert move in mine["legal_commands"]
        # An illegal move is refused naming the rule, a move out of turn as not yours.
        assert send(app, gid, 1 - seat, move, f"late-{n}")["error"]["code"] == "move/not_your_turn"
        wrong = {"type": "call" if move["type"] in ("check", "bet") else "check"}
        assert send(app, gid, seat, wrong, f"bad-{n}")["error"]["code"] == "move/illegal"
        assert send(app, gid, seat, move, f"c{n}")["status"] == "accepted"
        after = view(app, gid, seat)
        if after["last_showdown"] is not None and after["last_showdown"]["hand"] == hand:
            showdowns_seen += 1
    else:
        raise AssertionError("the game did not end")
    assert docs is not None and showdowns_seen == 2
    deals = dealt(docs)
    # What each seat's view said was its card, and what the showdowns revealed, are the deal.
    showdowns = [d["data"] for d in docs if d["type"] == "showdown"]
    assert [s["hand"] for s in showdowns] == [1, 3]
    assert all(s["cards"] == deals[s["hand"]] for s in showdowns)
    assert view(app, gid, 0)["your_card"] == deals[3][0]
    assert view(app, gid, 1)["your_card"] == deals[3][1]
    # Chips: hand 1 a pot of 4 (2 won), hand 2 seat 0's bet folded to (1 won), hand 3 a pot of 2.
    expected = [0, 0]
    for won, hand_no in ((2, 1), (1, 3)):
        winner = next(s["winner"] for s in showdowns if s["hand"] == hand_no)
        expected[winner] += won
        expected[1 - winner] -= won
    expected[0] += 1
    expected[1] -= 1
    outcome = view(app, gid, None)["outcome"]
    assert outcome["scores"] == expected
    best = max(expected)
    assert outcome["winners"] == [s for s in (0, 1) if expected[s] == best]
    # The redacted history: each seat reads its own card of a deal, never the other's before
    # the showdown; spectators read neither.
    for seat in (None, 0, 1):
        caller = queries.Caller(queries.SPECTATOR if seat is None else queries.SEAT, seat)
        events = queries.events(app, gid, caller)["events"]
        for e in events:
            if e["type"] == "hand_dealt":
                cards = e["data"]["cards"]
                assert [c is not None for c in cards] == [s == seat for s in (0, 1)]
            if e["type"] == "showdown":
                assert e["data"]["cards"] == deals[e["data"]["hand"]]


def test_a_heuristic_bot_plays_a_search_bot_to_the_end_and_the_export_passes_the_audit() -> None:
    app = memory_app(bots=True)
    seats: list[dict[str, Any]] = [{"bot": "heuristic"}, {"bot": "ismcts", "iterations": 50}]
    gid = creation.create_game(app, GAME, seats, {"hands": 4}, seed="kuhn-bots").game_id
    for _ in range(200):
        if view(app, gid, None)["outcome"] is not None:
            break
        drain(app)
    outcome = view(app, gid, None)["outcome"]
    assert outcome is not None and sum(outcome["scores"]) == 0
    docs = stored(app, gid)
    assert docs[-1]["type"] == "seed_revealed"
    assert len(dealt(docs)) == 4
    moves = [d for d in docs if d.get("command") and d["command_id"].startswith("bot-")]
    assert {d["seat"] for d in moves} == {0, 1}
    report = audit(gid, docs)
    assert report.status == "passed", report.checks
    # Every bot move was re-decided: the heuristic's and the search's.
    assert report.checks["bot moves"].startswith(f"ok: {len(moves)} "), report.checks
    # One byte changed in the export (a card of a deal) and the audit fails.
    lines = [orjson.dumps(d) for d in docs]
    at = next(i for i, d in enumerate(docs) if d["type"] == "hand_dealt" and i > 2)
    card = docs[at]["data"]["cards"][0]
    other = next(c for c in CARDS if c != card)
    needle = b'"cards":["' + card.encode()
    assert lines[at].count(needle) == 1
    lines[at] = lines[at].replace(needle, b'"cards":["' + other.encode())
    forged = audit(gid, [orjson.loads(line) for line in lines])
    assert forged.status == "failed"
    assert forged.first_failure is not None
    assert forged.first_failure["version"] == docs[at]["version"], forged.first_failure


def test_a_round_robin_of_random_against_heuristic_finishes_with_standings() -> None:
    app = memory_app(bots=True)
    body = {"game": GAME, "entrants": [{"bot": "random"}, {"bot": "heuristic"}], "games": 6,
            "format": "round_robin", "seed": "kuhn-tournament", "options": {"hands": 5}}  # fmt: skip
    tid, _plan = tournaments.create_tournament(app, body, max_games=100)
    doc = tournament_views.tournament_doc(app, tid)
    assert doc["status"] == "finished" and doc["progress"] == {"done": 6, "total": 6}
    assert sum(r["games"] for r in doc["standings"]) == 12  # two seats a game
    assert 0 < sum(r["wins"] for r in doc["standings"]) <= 12  # a tied game has two winners
    ratings = tournament_views.ratings_doc(app, GAME)["ratings"]
    assert {r["bot"]: r["games"] > 0 for r in ratings} == {
        "random": True,
        "heuristic": True,
        **({"ismcts": False} if games.spec(GAME).kernel is not None else {}),
    }


def test_the_catalogue_lists_it_from_its_spec(kuhn: Any) -> None:
    entry = next(e for e in catalogue.catalogue() if e["name"] == GAME)
    assert entry["title"] == kuhn.SPEC.title
    assert entry["seats"] == {"min": 2, "max": 2}
    assert entry["options"]["properties"]["hands"]["default"] == 3
    commands = {c["title"]: c for c in entry["commands"]}
    assert set(commands) == {"check", "bet", "call", "fold"}
    for command in commands.values():
        (example,) = command["examples"]
        kuhn.parse_command(example)
    assert {"your_card", "last_showdown", "scores"} <= set(entry["view"]["properties"])


def test_its_options_are_checked() -> None:
    app = memory_app()
    two: list[dict[str, Any]] = [{"name": "ana"}, {"name": "bob"}]
    for options, field in (({"hands": 0}, "hands"), ({"hands": 21}, "hands"),
                           ({"hands": True}, "hands"), ({"blinds": 1}, "blinds")):  # fmt: skip
        with pytest.raises(Exception) as refused:
            creation.create_game(app, GAME, two, options)
        assert getattr(refused.value, "code", None) == "options/invalid"
        assert field in getattr(refused.value, "errors", {}), options
    with pytest.raises(Exception) as three:
        creation.create_game(app, GAME, [*two, {"name": "cyd"}])
    assert getattr(three.value, "code", None) == "options/invalid"
