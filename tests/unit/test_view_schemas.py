"""The document's per-game schemas hold what the service answers: every view of whole games of
each game (every seat's and the public one, at every step, at both ends of the seat range)
matches its game's view schema with every object closed, so an undocumented field fails here;
every example in the document matches its schema; every link names a real operation and its
parameters."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import jsonschema_rs
import pytest
from schemathesis.specs.openapi.converter import to_json_schema

from services.gateway import view_schemas
from services.gateway.openapi_dump import spec
from shared import games
from shared.app import bots
from shared.app.playout import play
from shared.match.projections import view

REF = "#/components/schemas/"


@cache
def _doc() -> dict[str, Any]:
    return spec()


def _close(schema: Any) -> Any:
    """``additionalProperties: false`` on every object schema with properties (not on the
    ``$ref``'d command components: a Skye price template carries fields no command has)."""
    if isinstance(schema, list):
        return [_close(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: (v if k == "properties" else _close(v)) for k, v in schema.items()}
    if "properties" in out:
        out["properties"] = {k: _close(v) for k, v in out["properties"].items()}
        if out.get("type") == "object" and "additionalProperties" not in out:
            out["additionalProperties"] = False
    return out


@cache
def _validator(name: str, closed: bool) -> Any:
    components = {
        k: to_json_schema(v, "nullable", is_response_schema=True)
        for k, v in _doc()["components"]["schemas"].items()
    }
    if closed:
        for game in view_schemas.GAMES:
            components[view_schemas.COMPONENT[game]] = _close(
                components[view_schemas.COMPONENT[game]]
            )
    root = {"$ref": REF + name, "components": {"schemas": components}}
    return jsonschema_rs.Draft7Validator(root)


def _check(name: str, doc: Any, closed: bool = True) -> None:
    errors = [f"{list(e.instance_path)}: {e.message}"[:300]
              for e in _validator(name, closed).iter_errors(doc)]  # fmt: skip
    assert not errors, errors[:5]


GAMES = [(g, n) for g in view_schemas.GAMES for n in sorted({games.get(g).MIN_SEATS,
                                                              games.get(g).MAX_SEATS})]  # fmt: skip


@pytest.mark.parametrize(("game", "seats"), GAMES)
def test_every_view_of_whole_games_matches_its_schema(game: str, seats: int) -> None:
    component = view_schemas.COMPONENT[game]
    checked = 0
    phases: set[str] = set()

    def each(record: Any, *_: Any) -> None:
        nonlocal checked
        for seat in [None, *range(seats)]:
            doc = view(record, seat)
            _check(component, doc)
            _check("View", doc, closed=False)
            phases.add(doc["phase"])
            checked += 1

    for seed in ("schema-1", "schema-2"):
        played = play(game, [{"bot": "random"}] * seats, {}, seed, on_step=each)
        each(played.record)
    assert checked > 20 * seats
    assert "game_over" in phases
    # Phases in the schema but never met would be a stale enum; the rare ones excepted.
    enum = set(_doc()["components"]["schemas"][component]["properties"]["phase"]["enum"])
    assert phases <= enum


def test_a_view_missing_a_game_field_or_with_an_unknown_one_fails() -> None:
    # The checks above can fail: a dealt view without its hand, or with a field the schema
    # does not name, is refused.
    doc = view_schemas.examples()["fox-seat"]["value"]
    missing = {k: v for k, v in doc.items() if k != "hand"}
    extra = {**doc, "secret": 1}
    for bad in (missing, extra):
        assert not _validator("FoxView", True).is_valid(bad)
    wrong_game = {**doc, "game": "skull"}
    assert not _validator("View", False).is_valid(wrong_game)


def test_views_before_the_deal_match_their_schema() -> None:
    from shared.app.opening import creation_events, seats_from_specs
    from shared.events import GENESIS_HASH, seal
    from shared.match.record import fold

    for game in view_schemas.GAMES:
        engine = games.get(game)
        specs = [{"name": "host"}] + [{"open": True}] * (engine.MIN_SEATS - 1)
        for fairness in ("standard", "contributed"):
            seats, _ = seats_from_specs(specs)
            options = engine.parse_options(len(seats), {})
            envelopes = seal(creation_events(game, seats, options, "s", fairness_mode=fairness,
                                             listed=False),
                             after_version=0, prev_hash=GENESIS_HASH, command_id="create",
                             seat=None, at="2026-01-01T00:00:00.000Z", seed="s")  # fmt: skip
            record = fold("g", envelopes)
            for seat in (None, 0):
                doc = view(record, seat)
                assert doc["phase"] == "waiting"
                _check(view_schemas.COMPONENT[game], doc)


def _examples() -> list[tuple[str, str, Any]]:
    """(where, component, value) for every example of a view or a command in the document."""
    doc = _doc()
    out: list[tuple[str, str, Any]] = []
    for name, schema in doc["components"]["schemas"].items():
        if "example" in schema:
            out.append((name, name, schema["example"]))
    get = doc["paths"]["/v1/games/{game_id}"]["get"]["responses"]["200"]["content"]
    for key, example in get["application/json"]["examples"].items():
        out.append((f"GET game: {key}", "View", example["value"]))
    post = doc["paths"]["/v1/games/{game_id}/commands"]["post"]
    for key, example in post["requestBody"]["content"]["application/json"]["examples"].items():
        game = key.split("-", 1)[0]
        out.append((f"command {key}", f"{game.capitalize()}Command", example["value"]))
    out.append(("command 200", "View", post["responses"]["200"]["content"]["application/json"]
                ["example"]))  # fmt: skip
    return out


def test_every_example_matches_its_schema() -> None:
    examples = _examples()
    assert len(examples) > 20
    for where, component, value in examples:
        errors = [e.message for e in _validator(component, False).iter_errors(value)]
        assert not errors, (where, errors[:3])


def test_the_examples_show_each_game_from_a_seat_and_from_the_public() -> None:
    examples = view_schemas.examples()
    for game in view_schemas.GAMES:
        mine, public = examples[f"{game}-seat"]["value"], examples[f"{game}-public"]["value"]
        assert mine["seat"] is not None and mine["legal_commands"], game
        assert public["seat"] is None and public["legal_commands"] == []
    assert examples["skull-waiting"]["value"]["phase"] == "waiting"


def test_the_document_names_every_operation_and_every_link_reaches_one() -> None:
    doc = _doc()
    by_id: dict[str, dict[str, Any]] = {}
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            if method in ("get", "post", "delete"):
                assert "operationId" in op, (method, path)
                by_id[op["operationId"]] = {**op, "path": path}
    links = 0
    for path, operations in doc["paths"].items():
        for op in operations.values():
            if not isinstance(op, dict):
                continue
            for response in op.get("responses", {}).values():
                for name, link in response.get("links", {}).items():
                    target = by_id[link["operationId"]]
                    names = {p["name"] for p in target.get("parameters", [])}
                    names |= set(copy.deepcopy(target["path"]).replace("}", "{").split("{")[1::2])
                    assert set(link["parameters"]) <= names, (path, name)
                    links += 1
    assert links >= 15
    created = doc["paths"]["/v1/games"]["post"]["responses"]["201"]["links"]
    assert {"getGame", "sendCommand", "getFeed"} <= {x["operationId"] for x in created.values()}


def test_views_of_a_game_with_a_clock_match_their_schema() -> None:
    from shared.app.opening import creation_events, seats_from_specs
    from shared.events import GENESIS_HASH, seal
    from shared.match import clock
    from shared.match.record import fold

    for game in view_schemas.GAMES:
        engine = games.get(game)
        seats, _ = seats_from_specs([{"name": f"p{i}"} for i in range(engine.MIN_SEATS)])
        options = engine.parse_options(len(seats), {})
        spec = clock.parse_clock({"turn_seconds": 30}, parse_bot=bots.parse_spec)
        events = creation_events(game, seats, options, "s", clock_spec=spec,
                                 now_ms=1_767_225_600_000)  # fmt: skip
        envelopes = seal(events, after_version=0, prev_hash=GENESIS_HASH, command_id="create",
                         seat=None, at="2026-01-01T00:00:00.000Z", seed="s")  # fmt: skip
        record = fold("g", envelopes)
        for seat in (None, *range(len(seats))):
            doc = view(record, seat)
            assert doc["clock"]["seats"], game
            _check(view_schemas.COMPONENT[game], doc)
        armed = [s for s in view(record, None)["clock"]["seats"] if s["deadline"]]
        assert armed and "deadline_ms" in armed[0]


def test_the_catalogue_view_schema_holds_real_views() -> None:
    from shared.app import catalogue

    for entry in catalogue.catalogue():
        full = view_schemas.catalogue_entry(entry)
        root = {**full["view"], "commands": full["commands"],
                "command_schema": full["command_schema"]}  # fmt: skip
        check = jsonschema_rs.Draft202012Validator(root)
        for key in ("seat", "public"):
            assert check.is_valid(view_schemas.examples()[f"{entry['name']}-{key}"]["value"])
        assert not check.is_valid({**view_schemas.examples()[f"{entry['name']}-seat"]["value"],
                                   "hand": 7, "players": 7, "drawn": 7})  # fmt: skip


@pytest.mark.parametrize(("game", "seats"), [("fox", 2), ("skull", 3), ("skye", 3)])
def test_views_after_a_resignation_match_their_schema(game: str, seats: int) -> None:
    # A resigned seat (and, with two seats, an outcome without scores) as the service shows it.
    from shared.adapters.memory import MemoryCommandBus
    from shared.app import commands, creation, queries
    from shared.app.messages import CommandMessage
    from shared.bootstrap import bootstrap
    from shared.config import Settings
    from shared.match import clock

    app = bootstrap(Settings(), backend="memory")
    gid = creation.create_game(app, game, [{"name": f"p{i}"} for i in range(seats)], {}).game_id
    seat = queries.view(app, gid, None)["to_act"][0]  # type: ignore[index]
    message = CommandMessage(command_id="r", game_id=gid, seat=seat, body={"type": clock.RESIGN})
    commands.submit_command(app, message, game)
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    outcomes = [commands.decide_command(app, CommandMessage.from_fields(f)) for f in bus.take(game)]
    assert [o["status"] for o in outcomes] == ["accepted"]
    public = queries.view(app, gid, None)
    assert public is not None and public["seats"][seat].get("resigned") is True
    if seats == 2:
        assert public["outcome"]["ended_by"] == "resignation"
    for reader in (None, *range(seats)):
        _check(view_schemas.COMPONENT[game], queries.view(app, gid, reader))
