"""What a view holds, per game, as OpenAPI 3.0 schemas (``<Game>View`` per game, one of them
by ``game``: ``View``), with examples taken from real positions.

The engines' views are plain dicts built in ``shared/games/*``; each game's spec
(``shared.games.spec.GameSpec``: ``view_fields`` and ``phases``) writes down what its view's
fields hold, because no Python type says it; this module adds the service's fields. ``tests/unit/test_view_schemas.py`` plays whole games of every game and checks every
seat's and the public view at every step against them, with every object closed
(``additionalProperties: false``), so a field an engine adds without documenting it here fails
there rather than drifting silently. The document itself leaves objects open: a client must
ignore fields it does not know, so adding one is not a breaking change.

OpenAPI 3.0 (what Swagger UI 4 reads), not JSON Schema 2020-12: ``nullable`` rather than a
``null`` type, ``enum`` rather than ``const``, ``example`` rather than ``examples``.
"""

from __future__ import annotations

import copy
import hashlib
from functools import cache
from typing import Any

from shared import games
from shared.games.spec import FLAG, INT, SEAT_NUMBER, TEXT, GameSpec
from shared.games.spec import ints as _ints
from shared.games.spec import nullable as _null
from shared.match import clock
from shared.match.fairness import CONTRIBUTE as CONTRIBUTE_TYPE

Schema = dict[str, Any]

REF = "#/components/schemas/"
GAMES = tuple(games.names())
COMPONENT = {name: games.spec(name).component for name in GAMES}
WAITING = "waiting"  # the phase of a game not dealt yet (open seats, client seeds to come)


# ---- the service's part of every view -----------------------------------------------------------

SEAT = {
    "type": "object",
    "description": "a seat as everyone sees it: a name; a bot's name and settings; `open` "
    "while nobody holds it (the lobby). Never a token or its hash",
    "required": ["seat", "name"],
    "properties": {
        "seat": SEAT_NUMBER,
        "name": TEXT,
        "bot": {**TEXT, "description": "the bot playing the seat (see the seat spec)"},
        "budget_ms": INT,
        "iterations": INT,
        "open": {**FLAG, "description": "true: anyone may join this seat"},
        "resigned": FLAG,
        "taken_over": {**TEXT, "description": "why a bot plays a player's seat"},
    },
}

OUTCOME = {
    "type": "object",
    "nullable": True,
    "description": "null while the game runs; then the final scores, the winners (several "
    "when tied), each seat's rank (1 = first; ties share) and whether it is a draw. Resigned "
    "seats (`resigned`) rank below every other; a game that ended because all but one seat "
    "resigned has `ended_by: resignation` and no scores (null)",
    "required": ["scores", "winners", "ranks", "draw"],
    "properties": {
        "scores": _null(_ints()),
        "winners": _ints(minimum=0),
        "ranks": _ints(minimum=1),
        "draw": FLAG,
        "tiebreak": _ints("each seat's tie-breaker, in a game that has one"),
        "resigned": _ints("the seats that resigned", minimum=0),
        "ended_by": {"type": "string", "enum": ["resignation"]},
    },
}

FAIRNESS = {
    "type": "object",
    "description": "games of contributed fairness only (docs/fairness.md): who must still "
    "send a client seed, and every client seed sent (null until sent)",
    "required": ["mode", "waiting_for", "client_seeds"],
    "properties": {
        "mode": {"type": "string", "enum": ["contributed"]},
        "waiting_for": _ints(minimum=0),
        "client_seeds": {"type": "array", "items": _null(TEXT)},
    },
}

CONTRIBUTE = {
    "type": "object",
    "description": "a game of contributed fairness waits for this seat's client seed: send "
    "it (POST /v1/games/{game_id}/seats/{seat}/entropy, or this command with your own seed in "
    "place of `template`)",
    "required": ["type", "client_seed"],
    "properties": {"type": {"type": "string", "enum": [CONTRIBUTE_TYPE]}, "client_seed": TEXT},
}

# Fields of every view; the game fields come after them.
SERVICE: Schema = {
    "id": {**TEXT, "description": "the game's id"},
    "version": {
        **INT,
        "minimum": 0,
        "description": "the number of events so far; `expected_version` of a command",
    },
    "seat": _null({**SEAT_NUMBER, "description": "the seat whose view this is; null: public"}),
    "to_act": _ints("the seats that may act now (several in simultaneous phases)", minimum=0),
    "seats": {"type": "array", "items": SEAT},
    "seed_sha256": {
        **TEXT,
        "pattern": "^[0-9a-f]{64}$",
        "description": "SHA-256 of the secret seed, committed at creation: the seed itself is "
        "revealed (event `seed_revealed`) only when the game is over",
    },
    "head_hash": {**TEXT, "description": "the hash of the last event (the chain's head)"},
    "outcome": OUTCOME,
    "fairness": FAIRNESS,
    "tournament": {
        "type": "object",
        "description": "a tournament's game only: the tournament and the game's index in it",
        "properties": {"id": TEXT, "index": INT},
    },
    "listed": {**FLAG, "description": "present (false) only for an unlisted game"},
    "clock": {
        "type": "object",
        "description": "games created with a `clock` only: its settings (defaults filled in) "
        "and per seat its deadline while it is to act, its reserve left and its time-outs in "
        "a row",
        "required": [
            "turn_seconds",
            "reserve_seconds",
            "on_timeout",
            "timeout_bot",
            "takeover_after",
            "seats",
        ],
        "properties": {
            "turn_seconds": {**INT, "minimum": 1},
            "reserve_seconds": {**INT, "minimum": 0},
            "on_timeout": {"type": "string", "enum": list(clock.ON_TIMEOUT)},
            "timeout_bot": {
                "type": "object",
                "description": "a bot seat spec",
                "additionalProperties": True,
            },
            "takeover_after": {**INT, "minimum": 1},
            "seats": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["seat", "reserve_ms", "timeouts_in_a_row", "deadline"],
                    "properties": {
                        "seat": SEAT_NUMBER,
                        "reserve_ms": {**INT, "minimum": 0},
                        "timeouts_in_a_row": {**INT, "minimum": 0},
                        "deadline": _null(
                            {**TEXT, "format": "date-time", "description": "UTC; null: not to act"}
                        ),
                        "deadline_ms": {**INT, "description": "the deadline, ms since 1970"},
                        "armed_version": {**INT, "description": "the version it was armed at"},
                        "turn_started": {**TEXT, "format": "date-time"},
                    },
                },
            },
        },
    },  # fmt: skip
}
SERVICE_REQUIRED = ["id", "game", "version", "seat", "phase", "to_act", "legal_commands",
                    "outcome", "seats", "seed_sha256", "head_hash"]  # fmt: skip


def command_ref(game: str) -> str:
    """The component of the game's commands (``openapi_contract`` registers them)."""
    return f"{REF}{game.capitalize()}Command"


@cache
def _view_schema(game: str) -> Schema:
    spec = games.spec(game)
    fields = dict(spec.view_fields)
    properties: Schema = {
        "game": {"type": "string", "enum": [game]},
        "phase": {
            "type": "string",
            "enum": [WAITING, *spec.phases],
            "description": f"`{WAITING}`: not dealt yet (open seats to join, or client seeds "
            "to come): the view then holds only the service's fields",
        },
        "legal_commands": {
            "type": "array",
            "description": "seat views only: every command this seat may send now, ready to "
            "send (a command listed as a `template` stands for commands too many to list: fill it "
            "in)",
            "items": {"anyOf": [{"$ref": command_ref(game)}, CONTRIBUTE]},
        },
        **SERVICE,
        **fields,
    }
    return {
        "type": "object",
        "title": f"{spec.title} view",
        "description": f"What a seat (its token), a spectator (no token) or an auditor "
        f"(`?seat=N`) sees of a {spec.title} game: the service's fields, and once dealt "
        "every field of the game (another seat's hidden facts are null or absent).",
        "required": SERVICE_REQUIRED,
        "properties": properties,
        # Dealt: every game field is there. (OpenAPI 3.0 has no if/then: one of two shapes.)
        "anyOf": [
            {"properties": {"phase": {"type": "string", "enum": [WAITING]}}},
            {"required": sorted(fields)},
        ],
    }


def view_schema(game: str) -> Schema:
    """The OpenAPI schema of ``game``'s view (a copy: callers may add to it)."""
    return copy.deepcopy(_view_schema(game))


def components() -> dict[str, Schema]:
    """Component name -> schema: one view per game, and ``View``, one of them by ``game``."""
    out = {COMPONENT[g]: view_schema(g) for g in GAMES}
    out["View"] = {
        "description": "A game's view: the schema of its game (`game` tells which). Fields a "
        "client does not know must be ignored: new ones may be added.",
        "oneOf": [{"$ref": REF + COMPONENT[g]} for g in GAMES],
        "discriminator": {
            "propertyName": "game",
            "mapping": {g: REF + COMPONENT[g] for g in GAMES},
        },
    }
    return out


# ---- examples -----------------------------------------------------------------------------------


@cache
def examples() -> dict[str, dict[str, Any]]:
    """Name -> ``{"summary", "value"}``: per game a seat's view and the public view a few moves
    into a real game (a fixed seed and the ``random`` bots: the same every time, so the
    generated document is stable)."""
    from shared.app.playout import play
    from shared.match.projections import view

    out: dict[str, dict[str, Any]] = {}
    specs = [games.spec(game) for game in GAMES]
    for spec in specs:
        game = spec.name
        seen: dict[str, Any] = {}

        def keep(record: Any, seat: int, *_: Any, spec: GameSpec = spec, seen: dict = seen) -> None:
            if len(seen) < spec.example_step:  # a few moves in: a trick, bids, prices set
                seen[str(len(seen))] = (view(record, seat), view(record, None))

        seats = [{"name": n} for n in ("ana", "bob", "cyd", "dee", "eve")[: spec.example_seats]]
        play(game, seats, {}, f"example-{game}", on_step=keep,
             clock=lambda: "2026-01-01T12:00:00.000Z")  # fmt: skip
        mine, public = seen[str(spec.example_step - 1)]
        for doc in (mine, public):
            _fix(doc, game)
        out[f"{game}-seat"] = {"summary": f"{spec.title}: a seat's view", "value": mine}
        out[f"{game}-public"] = {"summary": f"{spec.title}: the public view", "value": public}
    for spec in specs:
        if spec.lobby_example:
            opened = spec.example_seats - 1
            out[f"{spec.name}-waiting"] = {
                "summary": f"{spec.title} in the lobby: {_count(opened)} open seats, not dealt yet",
                "value": _waiting_view(spec.name, [{"name": "ana"}] + [{"open": True}] * opened),
            }
    return out


def _count(n: int) -> str:
    return ("no", "one", "two", "three", "four")[n] if n < 5 else str(n)


def _waiting_view(game: str, specs: list[dict[str, Any]]) -> dict[str, Any]:
    """The public view of a game created with open seats (before its deal)."""
    from shared.app.opening import creation_events, seats_from_specs
    from shared.events import GENESIS_HASH, seal
    from shared.match.projections import view
    from shared.match.record import fold

    seats, _ = seats_from_specs(specs)
    options = games.get(game).parse_options(len(seats), {})
    seed = f"example-{game}-lobby"
    envelopes = seal(creation_events(game, seats, options, seed), after_version=0,
                     prev_hash=GENESIS_HASH, command_id="create", seat=None,
                     at="2026-01-01T12:00:00.000Z", seed=seed)  # fmt: skip
    doc = view(fold(games.spec(game).example_id, envelopes), None)
    _fix(doc, game)
    return doc


def _fix(doc: dict[str, Any], game: str) -> None:
    """A stable id and head hash: the real hash covers the seats' random token hashes, and the
    generated document must be the same at every run."""
    doc["id"] = games.spec(game).example_id
    doc["head_hash"] = hashlib.sha256(f"example {game} {doc['version']}".encode()).hexdigest()


# ---- the catalogue's JSON Schema ----------------------------------------------------------------


def catalogue_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A catalogue entry (``GET /v1/game-types``) with its ``view`` as the full JSON Schema of
    the view (the catalogue's own lists only the top-level fields and their JSON types)."""
    return {**entry, "view": json_schema(entry["name"])}


def json_schema(game: str) -> Schema:
    """``game``'s view schema in JSON Schema (the catalogue's dialect, like its commands): null
    as a type, ``examples``; a legal command refers to the entry's ``command_schema``."""
    out = to_json_schema(view_schema(game))
    out["properties"]["legal_commands"]["items"] = {
        "anyOf": [{"$ref": "#/command_schema"}, to_json_schema(CONTRIBUTE)]
    }
    return out


def to_json_schema(schema: Any) -> Any:
    """An OpenAPI 3.0 schema (``nullable``, ``example``) in JSON Schema (null as a type,
    ``examples``), as the catalogue and the conformance suite read them."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: to_json_schema(v) for k, v in schema.items() if k not in ("discriminator",)}
    if "example" in out:
        out["examples"] = [out.pop("example")]
    if out.pop("nullable", False):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out
