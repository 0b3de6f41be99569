"""The game catalogue (``GET /v1/game-types``): per game its name, title, seat limits, options
(JSON Schema with defaults, from the game's spec), each command's schema with an example, and the view's fields.

Command schemas are read from the engines' command classes (their fields and types) with the
spelling the API uses (the game spec's ``command_fields``); each example is a command an engine
listed in a real position, so the catalogue cannot drift from what the engines accept. The
view's schema lists the fields and JSON types of a real view at the game's start.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from shared import games
from shared.games.rng import Rng
from shared.match.projections import game_view


@cache
def catalogue() -> list[dict[str, Any]]:
    """Every game type's entry."""
    return [_entry(name) for name in games.names()]


def _entry(name: str) -> dict[str, Any]:
    engine: Any = games.get(name)
    spec = games.spec(name)
    seats = engine.MIN_SEATS
    options = dict(spec.options)
    examples = _examples(engine, seats, name)
    commands = []
    for kind, cls in engine.COMMANDS.items():
        schema = _command_schema(spec.command_fields, kind, cls)
        if kind in examples:
            schema["examples"] = [examples[kind]]
        commands.append(schema)
    return {
        "name": name,
        "title": spec.title,
        "seats": {"min": engine.MIN_SEATS, "max": engine.MAX_SEATS},
        "options": {"type": "object", "additionalProperties": False, "properties": options},
        "commands": commands,
        "command_schema": {
            "oneOf": [{"$ref": f"#/commands/{i}"} for i in range(len(commands))],
            "discriminator": "type",
        },  # fmt: skip
        "view": _view_schema(engine, seats),
        "lists_all_commands": engine.TRAITS.lists_all_commands,
        "simultaneous": engine.TRAITS.simultaneous,
    }


def _command_schema(fields: Mapping[str, Any], kind: str, cls: type) -> dict[str, Any]:
    properties: dict[str, Any] = {"type": {"const": kind}}
    required = ["type"]
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        properties[f.name] = fields.get(f.name) or _json_type(hints.get(f.name))
        required.append(f.name)
    return {
        "title": kind,
        "description": (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else "",
        "type": "object",
        "required": required,
        "properties": properties,
    }


def _json_type(hint: Any) -> dict[str, Any]:
    if hint is int:
        return {"type": "integer"}
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        parts = [_json_type(a) for a in typing.get_args(hint)]
        return {"anyOf": parts}
    if hint is type(None):
        return {"type": "null"}
    return {}


EXAMPLE_PLAYS = 40  # random plays per option set at most (a few suffice; each is milliseconds)


def _start(engine: Any, seats: int, options: Mapping[str, Any] | None = None,
           setup: str = "setup") -> Any:  # fmt: skip
    state = None
    parsed = engine.parse_options(seats, dict(options or {}))
    for event in engine.setup(seats, parsed, Rng("catalogue", setup)):
        state = engine.evolve(state, event)
    return state


def _examples(engine: Any, seats: int, name: str) -> dict[str, Any]:
    """A listed command of each type met in short random plays from the start: the first play
    as ever (so examples stay put), then more, under the spec's ``example_options`` too, until every
    command type has one (a client writing from the docs needs an example of each)."""
    found: dict[str, Any] = {}
    for options in games.spec(name).example_options:
        for play in range(EXAMPLE_PLAYS):
            if len(found) == len(engine.COMMANDS):
                return found
            setup = "setup" if play == 0 else f"setup-{play}"
            _play_for_examples(engine, _start(engine, seats, options, setup), found, 7 + play)
    return found


def _play_for_examples(engine: Any, state: Any, found: dict[str, Any], seed: int) -> None:
    """Add to ``found`` the first listed command of each type met in one random play."""
    import random

    pick = random.Random(seed)
    for step in range(400):
        if engine.outcome(state) is not None or len(found) == len(engine.COMMANDS):
            break
        seat = engine.to_act(state)[0]
        legal = engine.legal_commands(state, seat)
        for c in legal:
            doc = engine.command_to_json(c)
            if doc.get("template") is True:  # prices: a listed template, not a command
                continue
            found.setdefault(doc["type"], doc)
        if not engine.TRAITS.lists_all_commands and any(
            getattr(c, "template", False) for c in legal
        ):
            view = game_view(engine, state, seat)
            view["seat"] = seat
            doc = engine.random_command(view, pick)
            found.setdefault(doc["type"], doc)
            command = engine.parse_command(doc)
        else:
            command = legal[pick.randrange(len(legal))]
        for event in engine.decide(state, seat, command, Rng("catalogue", f"v{step}")):
            state = engine.evolve(state, event)


def _view_schema(engine: Any, seats: int) -> dict[str, Any]:
    view = game_view(engine, _start(engine, seats), 0)
    return {
        "type": "object",
        "description": "a seat's view (others' hidden facts are null); the service adds id, "
        "game, version, seats, seed_sha256 and head_hash",
        "properties": {k: {"type": _kind(v)} for k, v in sorted(view.items())},
    }


def _kind(value: Any) -> str | list[str]:
    if value is None:
        return ["null", "object", "array", "string", "integer"]
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
