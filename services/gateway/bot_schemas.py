"""Request and response schemas of the registered-bot endpoints (``bot_routes``)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from services.gateway.schemas import NAME_DOC, StrictSchema, printable
from shared import games
from shared.app import bot_registration


class StrictBoolean(ma.fields.Boolean):
    """A JSON true or false only: "yes", "1" or 1 are refused, not read as true."""

    def _deserialize(self, value: object, attr: str | None, data: object, **kwargs: object) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


SEATABLE_BY_DOC = (
    'who may seat it ({"bot_id"} in POST /v1/games seats, POST /v1/tournaments entrants): '
    "anyone (default); owner: only a request bearing its own key (Bearer), so never a "
    "tournament (an organizer's); organizers: an organizer key, or its own key. Refused: "
    "403 bot/not_seatable, nothing created"
)


class RegisterBotSchema(StrictSchema):
    """``POST /v1/bots``: a webhook bot (``url``) or a connected one."""

    name = ma.fields.String(
        required=True, validate=[validate.Length(min=1, max=64), printable], metadata=NAME_DOC
    )
    games = ma.fields.List(
        ma.fields.String(validate=validate.OneOf(games.names())),
        required=True,
        validate=validate.Length(min=1),
        metadata={"description": "the game types it plays"},
    )
    transport = ma.fields.String(
        required=True, validate=validate.OneOf(bot_registration.TRANSPORTS)
    )
    url = ma.fields.String(
        validate=validate.Length(max=2048),
        metadata={
            "description": "webhook only: http(s) URL on a host of TABLETOP_BOT_WEBHOOK_HOSTS "
            "(else 422 bot/webhook_not_allowed); each turn is POSTed to it"
        },
    )
    budget_ms = ma.fields.Integer(
        strict=True,
        validate=validate.Range(*bot_registration.BUDGET_MS),
        metadata={"description": "time to answer a turn, round trip included (default 500)"},
    )
    on_failure = ma.fields.String(
        validate=validate.OneOf(bot_registration.ON_FAILURE),
        metadata={
            "description": "random (default): the random bot plays the turn; forfeit: "
            "the seat resigns"
        },  # fmt: skip
    )
    ladder = StrictBoolean(
        metadata={
            "description": "true: its all-bot games are rated on the public ladder (GET "
            "/v1/ratings), where it is listed by name; false (default): a game seating it is "
            "rated for no one"
        }
    )
    seatable_by = ma.fields.String(
        validate=validate.OneOf(bot_registration.SEATABLE_BY),
        metadata={"description": SEATABLE_BY_DOC},
    )


class LatencySchema(ma.Schema):
    """Latency percentiles of the last decisions (ms; null before any)."""

    p50 = ma.fields.Integer(allow_none=True)
    p95 = ma.fields.Integer(allow_none=True)
    max = ma.fields.Integer(allow_none=True)


class BotStatsSchema(ma.Schema):
    """``bot_stats``."""

    decisions = ma.fields.Integer()
    latency_ms = ma.fields.Nested(LatencySchema)
    timeouts = ma.fields.Integer()
    illegal = ma.fields.Integer()
    errors = ma.fields.Integer()
    fallbacks = ma.fields.Integer()


class BotSchema(ma.Schema):
    """A registered bot (never its key)."""

    id = ma.fields.String()
    name = ma.fields.String()
    games = ma.fields.List(ma.fields.String())
    transport = ma.fields.String()
    url = ma.fields.String(
        metadata={
            "description": "a webhook's URL: shown only to a request bearing this bot's own "
            "key or an organizer key"
        }
    )
    budget_ms = ma.fields.Integer()
    on_failure = ma.fields.String()
    created_at = ma.fields.String()
    retired = ma.fields.Boolean()
    ladder = ma.fields.Boolean(metadata={"description": "whether it is on the public ladder"})
    seatable_by = ma.fields.String(
        metadata={"description": "who may seat it: anyone, owner or organizers"}
    )
    stats = ma.fields.Nested(BotStatsSchema)


class RegisteredBotSchema(BotSchema):
    """The answer to ``POST /v1/bots``: the bot with its key, shown this once."""

    key = ma.fields.String(
        metadata={
            "description": "the bot's key: shown once (again to a retry with the same "
            "Idempotency-Key), kept only as a SHA-256 hash; it signs the turns "
            "(Tabletop-Signature), retires the bot, and seats it where its seatable_by asks"
        }  # fmt: skip
    )


class BotListSchema(ma.Schema):
    """``GET /v1/bots``."""

    bots = ma.fields.List(ma.fields.Nested(BotSchema))
    next_cursor = ma.fields.String(
        allow_none=True,
        metadata={"description": "`cursor` of the next page; null at the end"},
    )


class BotListQuerySchema(StrictSchema):
    """A page of bots."""

    offset = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=10**9))
    limit = ma.fields.Integer(load_default=100, validate=validate.Range(min=1, max=500))
    cursor = ma.fields.String(
        validate=validate.Regexp(r"^[0-9]{1,10}$"),
        metadata={"description": "a list's `next_cursor`: the page after it (else `offset`)"},
    )


class TurnAnswerSchema(StrictSchema):
    """``POST /v1/bots/me/turns/{turn_id}``: a connected bot's answer."""

    command = ma.fields.Dict(
        required=True,
        metadata={"description": "the command to play (one of the turn's legal_commands)"},
    )


class TurnAcceptedSchema(ma.Schema):
    """An answer taken: the turn and the command as the engine spells it."""

    turn_id = ma.fields.String()
    command = ma.fields.Dict()
