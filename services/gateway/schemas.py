"""Marshmallow schemas: what the gateway accepts and answers (and the OpenAPI document)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import marshmallow as ma
from marshmallow import validate
from marshmallow.error_store import merge_errors

from shared import games
from shared.app import bots, names
from shared.app.errors import CATALOGUE, ErrorCode
from shared.app.opening import JSON_SAFE_INT, check_json_safe
from shared.games.errors import GameError, invalid_options

SUGGESTION_MAX_BUDGET_MS = 2000  # a hint holds a search worker: keep it short
SUGGESTION_MAX_ITERATIONS = 1000  # the slowest game searches 100-200 iterations a second


class StrictSchema(ma.Schema):
    """Unknown fields are an error in requests, so typos do not pass silently."""

    class Meta:
        unknown = ma.RAISE


def printable(value: str) -> None:
    """A display name's characters (``shared.app.names``): no control or format ones."""
    problem = names.characters_error(value)
    if problem is not None:
        raise ma.ValidationError(problem)


NAME_DOC = {"description": "1-64 characters; no control or format characters (Unicode Cc, Cf, "
            "Zl, Zp)"}  # fmt: skip


class SeatSchema(StrictSchema):
    """A human seat (``name``) or a bot seat (``bot``: a policy name, e.g. ``random``)."""

    name = ma.fields.String(validate=[validate.Length(min=1, max=64), printable],
                            metadata=NAME_DOC)  # fmt: skip
    bot = ma.fields.String(
        validate=validate.OneOf(bots.names()),
        metadata={
            "description": "; ".join(f"{b.name}: {b.description}" for b in bots.BOTS.values())
        },
    )
    # strict: 1.5 or "200" is refused, never made an integer (the application's bounds would
    # then see a number the client did not send).
    budget_ms = ma.fields.Integer(
        strict=True,
        metadata={
            "description": "ismcts only: search time per move (10-10000 ms), counted from the first iteration once the search is set up"
        },
    )
    iterations = ma.fields.Integer(
        strict=True,
        metadata={
            "description": "ismcts only, instead of budget_ms: search iterations per "
            "move (1-100000); the same view then gives the same move"
        },
    )

    bot_id = ma.fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "a registered bot (POST /v1/bots) for this game plays the seat; "
            "with an optional name (default the bot's)"
        },
    )
    open = ma.fields.Boolean(
        metadata={
            "description": "true: a seat anyone may join (the lobby); the game is dealt "
            "when its last open seat is taken"
        }  # fmt: skip
    )

    @ma.validates_schema
    def _one_of(self, data: dict, **_: object) -> None:
        if not data:
            raise ma.ValidationError("give a name (a human seat) or a bot")
        if "open" in data:
            if data["open"] is not True or len(data) > 1:
                raise ma.ValidationError({"open": ['an open seat is just {"open": true}']})
            return
        if "bot_id" in data:
            extra = [k for k in data if k not in ("bot_id", "name")]
            if extra:
                raise ma.ValidationError({extra[0]: ["a registered bot's seat takes a name alone"]})
            return
        if "bot" in data and "name" in data:
            raise ma.ValidationError(
                {"name": ["a seat is a human (name) or a bot (bot), not both"]}
            )
        if "bot" not in data:
            extra = [k for k in ("budget_ms", "iterations") if k in data]
            if extra:
                raise ma.ValidationError({extra[0]: ["a setting of a bot seat"]})
            return
        try:
            bots.parse_spec(data)
        except bots.BotSpecError as exc:
            raise ma.ValidationError({exc.field: [exc.message]}) from None


class TimeoutBotSchema(StrictSchema):
    """The bot that moves for a seat that timed out (and takes it over)."""

    bot = ma.fields.String(required=True, validate=validate.OneOf(bots.names()))
    budget_ms = ma.fields.Integer(strict=True)
    iterations = ma.fields.Integer(strict=True)


class ClockSchema(StrictSchema):
    """A turn clock (all optional; no clock when absent)."""

    turn_seconds = ma.fields.Integer(
        strict=True,
        metadata={"description": "time per turn (1-86400 s, default 60)", "example": 60},
    )
    reserve_seconds = ma.fields.Integer(
        strict=True,
        metadata={
            "description": "spent once a turn's time is gone, kept across turns (0-604800 s, "
            "default 300)",
            "example": 300,
        },
    )
    on_timeout = ma.fields.String(
        validate=validate.OneOf(["bot", "forfeit"]),
        metadata={
            "description": "bot (default): the timeout bot makes that one move; forfeit: the "
            "seat resigns"
        },
    )
    timeout_bot = ma.fields.Nested(
        TimeoutBotSchema, metadata={"description": 'default {"bot": "heuristic"}'}
    )
    takeover_after = ma.fields.Integer(
        strict=True,
        metadata={
            "description": "time-outs in a row after which the timeout bot plays the seat for "
            "the rest of the game (1-1000, default 3)"
        },
    )


def game_problems(game: Any, seats: Any, options: Any) -> list[GameError]:
    """What the game itself says of a body's seat count and options (``options/invalid``
    errors), every one at once: the seat count, then the options as the engine reads them
    (for a count it takes, so that a wrong count does not hide them). Nothing for a game this
    service does not host (the body's ``game`` field error says so)."""
    if not isinstance(game, str) or game not in games.names():
        return []
    try:
        engine = games.get(game)
    except KeyError:
        return []
    found: list[GameError] = []
    n = len(seats) if isinstance(seats, list) else engine.MIN_SEATS
    if not engine.MIN_SEATS <= n <= engine.MAX_SEATS:
        # "2-2 seats" reads as a typo: a fixed count is said as one number (as creation does).
        wanted = (
            f"exactly {engine.MIN_SEATS}"
            if engine.MIN_SEATS == engine.MAX_SEATS
            else f"{engine.MIN_SEATS} to {engine.MAX_SEATS}"
        )
        found.append(
            invalid_options(f"{game} needs {wanted} seats, got {n}", seats=[f"{wanted} seats"])
        )
    if isinstance(options, Mapping):
        try:
            check_json_safe(options)
            engine.parse_options(min(max(n, engine.MIN_SEATS), engine.MAX_SEATS), dict(options))
        except GameError as exc:
            found.append(exc)
    return found


def game_errors(found: list[GameError]) -> dict[str, list[str]]:
    """The field errors of ``game_problems`` as one map (a problem naming no field is the
    options')."""
    out: dict[str, list[str]] = {}
    for problem in found:
        for key, messages in (problem.errors or {"options": [problem.detail]}).items():
            out.setdefault(key, []).extend(m for m in messages if m not in out.get(key, []))
    return out


class CreateGameSchema(StrictSchema):
    """Body of ``POST /v1/games``. A body with invalid fields is refused with every error of
    it at once: its fields' and what the game says of its seat count and options."""

    game = ma.fields.String(
        required=True,
        validate=validate.OneOf(games.names()),
        metadata={"example": games.names()[0], "description": "see GET /v1/game-types"},
    )
    seats = ma.fields.List(
        ma.fields.Nested(SeatSchema), required=True, validate=validate.Length(min=1, max=12)
    )
    options = ma.fields.Dict(keys=ma.fields.String(), load_default=dict)
    seed = ma.fields.String(
        validate=validate.Length(min=1, max=256),
        metadata={"description": "fixed secret seed (organizer key required)"},
    )
    clock = ma.fields.Nested(
        ClockSchema,
        metadata={
            "description": "turn clocks: a seat to act has turn_seconds, then its reserve; "
            "then its turn times out (events turn_timed_out, then the timeout bot's move)",
            "example": {"turn_seconds": 60, "reserve_seconds": 300, "on_timeout": "bot"},
        },
    )
    listed = ma.fields.Boolean(
        load_default=True,
        metadata={"description": "false keeps the game out of GET /v1/games (invite by id)"},
    )
    fairness = ma.fields.String(
        load_default="standard",
        validate=validate.OneOf(["standard", "contributed"]),
        metadata={
            "description": "contributed: the game commits to its seed, then waits (phase "
            "`waiting`) until every human seat sends a `client_seed` (POST "
            "/v1/games/{id}/seats/{seat}/entropy); every draw then comes from a mix of both "
            "(docs/fairness.md), so neither the service nor a player can choose the shuffles"
        },
    )

    def handle_error(self, error: ma.ValidationError, data: Any, **kwargs: Any) -> None:
        """Refuse with the game's own errors too (seat count, options), not one at a time."""
        if not isinstance(data, Mapping):
            return
        found = game_problems(data.get("game"), data.get("seats"), data.get("options", {}))
        if found:
            messages = error.messages if isinstance(error.messages, dict) else {}
            raise ma.ValidationError(merge_errors(messages, game_errors(found)), data=data)


class GameTypeSchema(ma.Schema):
    """One game in the catalogue."""

    name = ma.fields.String()
    title = ma.fields.String()
    seats = ma.fields.Dict(metadata={"description": "{min, max}"})
    options = ma.fields.Dict(metadata={"description": "JSON Schema of the options, defaults"})
    commands = ma.fields.List(
        ma.fields.Dict(), metadata={"description": "JSON Schema of each command, an example"}
    )
    command_schema = ma.fields.Dict(metadata={"description": "oneOf the commands, by type"})
    view = ma.fields.Dict(metadata={"description": "the view's fields and JSON types"})
    lists_all_commands = ma.fields.Boolean()
    simultaneous = ma.fields.Boolean()


class GameTypesSchema(ma.Schema):
    """``GET /v1/game-types``."""

    game_types = ma.fields.List(ma.fields.Nested(GameTypeSchema))


class FeedQuerySchema(StrictSchema):
    """Query of ``GET /v1/games/{id}/feed``."""

    after = ma.fields.Integer(
        validate=validate.Range(min=0, max=JSON_SAFE_INT),
        metadata={"description": "resume after this version (or send Last-Event-ID)"},
    )
    access_token = ma.fields.String(
        validate=validate.Length(min=1, max=512),
        metadata={"description": "a seat token or key, for EventSource (never logged)"},
    )


class ListGamesQuerySchema(StrictSchema):
    """Query of ``GET /v1/games``."""

    game = ma.fields.String(validate=validate.OneOf(games.names()))
    status = ma.fields.String(validate=validate.OneOf(["waiting", "active", "finished"]))
    limit = ma.fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))
    # Digits page the games Redis holds; ``a`` and digits page on through the archived ones.
    cursor = ma.fields.String(validate=validate.Regexp(r"^(?:[0-9]{1,9}|a[0-9]{0,18})$"))
    tournament = ma.fields.String(
        validate=validate.Length(min=1, max=128),
        metadata={"description": "a tournament's id: its games, in game order (they are not "
                                 "in the plain list)"},
    )  # fmt: skip
    bot = ma.fields.String(
        validate=validate.Length(min=1, max=128),
        metadata={"description": "a registered bot's id: its games, newest first (the lobby's "
                                 "it sits in, then its finished games in the archive, "
                                 "tournaments' included)"},
    )  # fmt: skip


class GameListSchema(ma.Schema):
    """A page of listed games."""

    games = ma.fields.List(
        ma.fields.Dict(),
        metadata={
            "description": "id, game, status, seats (name, bot, open), version, created_at;"
            " a tournament's game also its tournament {id, index}"
        },
    )
    next_cursor = ma.fields.String(allow_none=True)


class JoinSchema(StrictSchema):
    """Body of ``POST /v1/games/{id}/seats/{seat}/join``."""

    name = ma.fields.String(required=True, validate=[validate.Length(min=1, max=64), printable],
                            metadata=NAME_DOC)  # fmt: skip
    client_seed = ma.fields.String(
        validate=validate.Length(min=1, max=256),
        metadata={"description": "your client seed, for a game of contributed fairness"},
    )


class JoinedSchema(ma.Schema):
    """A seat joined: its number, its secret token (keep it), and its view."""

    seat = ma.fields.Integer()
    token = ma.fields.String()
    view = ma.fields.Dict(allow_none=True)


class EntropySchema(StrictSchema):
    """Body of ``POST /v1/games/{id}/seats/{seat}/entropy``."""

    client_seed = ma.fields.String(
        required=True,
        validate=validate.Length(min=1, max=256),
        metadata={"description": "your own random string (e.g. 32 random bytes in hex)"},
    )


class CreatedSeatSchema(ma.Schema):
    """A seat of a new game; ``token`` only for human seats (shown once)."""

    seat = ma.fields.Integer()
    name = ma.fields.String()
    bot = ma.fields.String()
    token = ma.fields.String()


class CreatedSchema(ma.Schema):
    """Answer of ``POST /v1/games``."""

    id = ma.fields.String()
    game = ma.fields.String()
    version = ma.fields.Integer()
    seats = ma.fields.List(ma.fields.Nested(CreatedSeatSchema))
    tokens = ma.fields.List(
        ma.fields.String(allow_none=True),
        metadata={"description": "one secret token per seat, null for bot seats"},
    )
    view = ma.fields.Dict(metadata={"description": "the public view"})


class CommandSchema(ma.Schema):
    """Body of ``POST /v1/games/{id}/commands``: a game command plus optional envelope fields.

    Game-specific fields (``card``, ``disc``, ``tile``...) pass through to the engine, which
    validates them."""

    class Meta:
        unknown = ma.INCLUDE

    type = ma.fields.String(required=True, validate=validate.Length(min=1, max=64))
    id = ma.fields.String(
        validate=validate.Regexp(r"^[A-Za-z0-9_.:-]{1,100}$"),
        metadata={"description": "client command id; resending it never applies twice"},
    )
    expected_version = ma.fields.Integer(
        strict=True,
        validate=validate.Range(min=0, max=JSON_SAFE_INT),
        metadata={"description": "reject with 409 unless the game is at this version"},
    )


class CommandAcceptedSchema(ma.Schema):
    """Answer of a command without waiting (202) or while still pending."""

    command_id = ma.fields.String()
    status = ma.fields.String(metadata={"description": "pending, accepted, rejected"})
    version = ma.fields.Integer(allow_none=True)
    location = ma.fields.String()
    error = ma.fields.Dict()


class ViewSchema(ma.Schema):
    """A view: the service fields below plus the game's own fields (``hand``, ``trick``...)."""

    class Meta:
        unknown = ma.INCLUDE

    id = ma.fields.String()
    game = ma.fields.String()
    version = ma.fields.Integer()
    seat = ma.fields.Integer(allow_none=True)
    phase = ma.fields.String()
    to_act = ma.fields.List(ma.fields.Integer())
    legal_commands = ma.fields.List(ma.fields.Dict())
    scores = ma.fields.Raw()
    outcome = ma.fields.Dict(allow_none=True)


class EventsQuerySchema(StrictSchema):
    """Query of ``GET /v1/games/{id}/events``."""

    after = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=JSON_SAFE_INT))
    limit = ma.fields.Integer(load_default=1000, validate=validate.Range(min=1, max=10_000))


class ViewQuerySchema(StrictSchema):
    """Query of ``GET /v1/games/{id}``: auditors may ask for any seat's view."""

    seat = ma.fields.Integer(validate=validate.Range(min=0, max=63))


class SuggestionQuerySchema(StrictSchema):
    """Query of ``GET /v1/games/{id}/suggestion``: which bot to ask, with its settings."""

    bot = ma.fields.String(load_default="heuristic", validate=validate.OneOf(bots.names()))
    budget_ms = ma.fields.Integer(
        validate=validate.Range(min=10, max=SUGGESTION_MAX_BUDGET_MS),
        metadata={"description": "ismcts only"},
    )
    iterations = ma.fields.Integer(
        validate=validate.Range(min=1, max=SUGGESTION_MAX_ITERATIONS),
        metadata={"description": "ismcts only, instead of budget_ms"},
    )

    @ma.validates_schema
    def _spec(self, data: dict, **_: object) -> None:
        try:
            bots.parse_spec(data)
        except bots.BotSpecError as exc:
            raise ma.ValidationError({exc.field: [exc.message]}) from None


class SuggestionSchema(ma.Schema):
    """Answer of ``GET /v1/games/{id}/suggestion``."""

    command = ma.fields.Dict(metadata={"description": "the command the bot would send now"})
    bot = ma.fields.Dict(metadata={"description": "the bot asked, with its settings"})
    version = ma.fields.Integer(metadata={"description": "the version it decided at"})
    iterations = ma.fields.Integer(
        metadata={
            "description": "an `ismcts` hint on `budget_ms`: the iterations its search ran "
            "(counted from the first, once the search is set up)"
        }
    )


class EventSchema(ma.Schema):
    """One event envelope as the reader may see it."""

    class Meta:
        unknown = ma.INCLUDE

    version = ma.fields.Integer()
    type = ma.fields.String()
    data = ma.fields.Dict()
    command_id = ma.fields.String(allow_none=True)
    seat = ma.fields.Integer(allow_none=True)
    at = ma.fields.String()
    prev_hash = ma.fields.String()
    hash = ma.fields.String()
    redacted = ma.fields.Boolean()
    command = ma.fields.Dict(
        metadata={
            "description": "on the first event a command caused: that command as the engine "
            "parsed it (hashed into the chain); readers other than its seat and "
            "auditors get it without its secret fields, with `redacted: true`"
        }
    )


class EventsSchema(ma.Schema):
    """Answer of ``GET /v1/games/{id}/events``."""

    game = ma.fields.String()
    version = ma.fields.Integer()
    events = ma.fields.List(ma.fields.Nested(EventSchema))


class AuditSchema(ma.Schema):
    """``GET /v1/games/{id}/audit``: the audit report."""

    game = ma.fields.String()
    status = ma.fields.String(metadata={"enum": ["passed", "failed", "incomplete"]})
    version = ma.fields.Integer()
    commands = ma.fields.Integer(metadata={"description": "commands re-decided"})
    checks = ma.fields.List(
        ma.fields.Dict(),
        metadata={
            "description": "{name, result: ok | failed | waits | unchecked, detail}, in order"
        },
    )
    first_failure = ma.fields.Dict(
        allow_none=True, metadata={"description": "{check, version, reason}"}
    )
    unchecked = ma.fields.List(
        ma.fields.String(),
        metadata={
            "description": "checks that passed without re-checking all they cover (result "
            "unchecked; their detail says what and why): `bot moves` when a bot's policy "
            "changed since the game, or a time-budget search recorded no iteration count. "
            "No failure: the status stays passed"
        },
    )
    final_state_digest = ma.fields.String(
        allow_none=True,
        metadata={"description": "SHA-256 of the canonical JSON of every final view"},
    )


class HealthSchema(ma.Schema):
    """Answer of ``GET /healthz``."""

    status = ma.fields.String()
    redis = ma.fields.String()


class ProblemSchema(ma.Schema):
    """An error (RFC 9457 problem details, ``application/problem+json``)."""

    type = ma.fields.String(
        metadata={
            "example": "/problems/move/illegal",
            "description": "`/problems/<code>`: a page saying what the problem means and what "
            "to do (HTML; JSON with `Accept: application/json`)",
        }
    )
    title = ma.fields.String()
    status = ma.fields.Integer()
    detail = ma.fields.String()
    code = ma.fields.String(
        metadata={
            "description": "stable, from the error catalogue (shared/app/errors.py): "
            + "; ".join(f"{c.value} ({CATALOGUE[c][0]})" for c in ErrorCode),
            "enum": [c.value for c in ErrorCode],
        }
    )
    rule = ma.fields.String(metadata={"description": "for move/illegal: the rule that forbade it"})
    errors = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.List(ma.fields.String()),
        metadata={
            "description": "every invalid field of the request at once: its path in what was "
            "sent (`seats[2].bot`, `body` for the whole body, `query`) -> its messages",
            "example": {"seats[2].bot": ["Must be one of: random, heuristic, ismcts."]},
        },
    )
    command_id = ma.fields.String()
    version = ma.fields.Integer(allow_none=True)
