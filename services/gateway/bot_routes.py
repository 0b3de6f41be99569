"""Registered bots: ``POST /v1/bots`` (anyone, limited per address; ``Idempotency-Key``
honoured), ``GET /v1/bots``, ``GET /v1/bots/{id}`` with its ``stats`` (a webhook's ``url`` to
its own key or an organizer key only), ``DELETE /v1/bots/{id}`` with its key; a connected
bot's turns: ``GET /v1/bots/me/turns`` (Server-Sent Events) and ``POST
/v1/bots/me/turns/{turn_id}``, with its key.

A connected bot's stream is a greenlet under gunicorn's gevent workers, like the live feed
(``feed.py``): it listens to the bot's own channel, so one bot's turns wake only its streams.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from flask import Response, current_app, stream_with_context
from flask.views import MethodView

from services.gateway import auth, limits_guard
from services.gateway import bot_schemas as schemas
from services.gateway.blueprint import (
    SECURITY,
    SECURITY_OPTIONAL,
    GamesBlueprint,
    _idempotency_key,
    _idempotent,
    _read,
    application,
    next_cursor,
    paging,
)
from shared.app import bot_registration, remote
from shared.app.context import App
from shared.app.ports import TurnSubscription

# The last thing a stream sends when its bot is retired: a comment; its reconnect meets a 401.
BOT_RETIRED = ": this bot is retired\n\n"

blp = GamesBlueprint("bots", __name__, description="Bots registered from outside (webhooks)")


def bot_caller() -> bot_registration.BotCaller:
    """The request's key as registered bots read it (its own bot's, or an organizer's)."""
    token = auth.bearer()
    return bot_registration.BotCaller(key=token, organizer=auth.is_organizer(token))


IDEMPOTENCY_HEADER = {
    "in": "header",
    "name": "Idempotency-Key",
    "schema": {"type": "string", "maxLength": 255},
    "description": "a retry with the same key and body (for 24 hours, per caller) answers the "
    "same bot, its key included, and registers no other; another body is a 422 "
    "`request/idempotency_key_reused`. Use a random key: whoever sends it again with the "
    "same body from the same address is answered the bot's key",
}


@blp.route("/v1/bots")
class Bots(MethodView):
    """Registering and listing bots."""

    @blp.arguments(schemas.RegisterBotSchema())
    @blp.response(201, schemas.RegisteredBotSchema)
    @blp.doc(parameters=[IDEMPOTENCY_HEADER])
    def post(self, body: dict[str, Any]) -> Any:
        """Register a bot; no key needed (limited per client address). The answer holds its
        `key` this once: it signs every turn sent to the bot, retires it, and seats it where
        its `seatable_by` asks for it. A webhook URL off the allowed hosts is a 422
        `bot/webhook_not_allowed`, and nothing is sent to it. With an `Idempotency-Key`, a
        retry answers the same bot (its key derived again: the kept answer holds none)."""
        limits_guard.check("bots")
        key = _idempotency_key()
        if key is None:
            return register(body)
        return idempotent_registration(key, body)

    @blp.arguments(schemas.BotListQuerySchema(), location="query")
    @blp.response(200, schemas.BotListSchema)
    @blp.doc(security=SECURITY_OPTIONAL)
    def get(self, query: dict[str, Any]) -> Any:
        """Registered bots, oldest first; a webhook bot's `url` only to its own key or an
        organizer key (Bearer)."""
        offset, limit = paging(query)
        found = bot_registration.list_bots(
            application(), offset=offset, limit=limit + 1, caller=bot_caller()
        )
        return {"bots": found[:limit], **next_cursor(offset, limit, len(found))}


def register(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """``POST /v1/bots`` once: the bot with its key."""
    doc = _read(bot_registration.register_bot, application(), body)
    return doc, 201, {"Location": f"/v1/bots/{doc['id']}"}


def idempotent_registration(key: str, body: dict[str, Any]) -> Any:
    """``blueprint._idempotent`` for a registration, whose answer holds the bot's key: the
    response is kept (in Redis) without it, and a replay derives it again from the bot's id,
    so a copy of Redis holds no key here either."""
    app = application()
    return _idempotent(
        "bots",
        key,
        body,
        lambda: register(body),
        kept_of=lambda doc: {k: v for k, v in doc.items() if k != "key"},
        replayed_of=lambda doc: {**doc, "key": bot_registration.key_of(app, doc["id"])},
    )


@blp.route("/v1/bots/<bot_id>")
class Bot(MethodView):
    """One bot."""

    @blp.response(200, schemas.BotSchema)
    @blp.doc(security=SECURITY_OPTIONAL)
    def get(self, bot_id: str) -> Any:
        """The bot with its `stats` (`bot_stats`; latencies over its last 1000 decisions); a
        webhook bot's `url` only to its own key or an organizer key (Bearer)."""
        return _read(bot_registration.show_bot, application(), bot_id, bot_caller())

    @blp.response(204)
    @blp.doc(security=SECURITY)
    def delete(self, bot_id: str) -> Any:
        """Retire the bot (its own key, Bearer): it takes no new seats; games it plays go on
        with its `on_failure` policy."""
        _read(bot_registration.retire_bot, application(), bot_id, auth.bearer())
        return "", 204


@blp.route("/v1/bots/me/turns")
class MyTurns(MethodView):
    """A connected bot's turns."""

    @blp.response(
        200,
        content_type="text/event-stream",
        description="`: connected` at once; then each turn still open (a reconnect gets them "
        "again) and each new one as `id: <turn_id>`, `event: turn`, `data: <the turn body>` "
        "(the same canonical JSON bytes a webhook is sent, whose SHA-256 is the move's "
        "`bot_turn.sent_sha256`); `event: game_over` when a game it plays ends (sent to the "
        "streams open then); `: heartbeat` every 15 s",
    )
    @blp.doc(security=SECURITY)
    def get(self) -> Any:
        """The turns of the bot whose key this is (Bearer): 401 without a key or with one of
        no bot, 403 for a webhook bot's. Each turn must be answered before its deadline
        (`budget_ms` from when it was issued) at `POST /v1/bots/me/turns/{turn_id}`; else
        the seat plays its `on_failure` policy (failure `timeout`)."""
        app = application()
        bot = _read(remote.bot_of_key, app, auth.bearer())
        # Subscribed before the open turns are read, so a turn issued in between is not lost.
        sub = app.ports.turns.subscribe(bot.bot_id)
        heartbeat = current_app.config["SETTINGS"].feed_heartbeat
        return Response(
            stream_with_context(turn_messages(app, bot.bot_id, sub, heartbeat)),
            mimetype="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )


@blp.route("/v1/bots/me/turns/<turn_id>")
class MyTurn(MethodView):
    """A connected bot's answer to one of its turns."""

    @blp.arguments(schemas.TurnAnswerSchema())
    @blp.response(200, schemas.TurnAcceptedSchema)
    @blp.doc(security=SECURITY)
    def post(self, body: dict[str, Any], turn_id: str) -> Any:
        """Answer a turn with the bot's key (Bearer): 200 when taken (the seat plays it); 409
        `turn/expired` past its deadline or once answered; 422 (the rules' code) for an
        illegal command, recorded as the turn's failure `illegal` (the seat then plays its
        `on_failure` policy); 404 `turn/not_found` for a turn that is not this bot's."""
        return _read(remote.answer_turn, application(), auth.bearer(), turn_id, body["command"])


def turn_messages(app: App, bot_id: str, sub: TurnSubscription, heartbeat: float) -> Iterator[str]:
    """The stream's text: a comment at once, the bot's open turns, then every message
    published to the bot (each turn once per stream), a heartbeat comment every
    ``heartbeat`` seconds; it ends with ``BOT_RETIRED`` once the bot is retired."""
    sent: OrderedDict[str, None] = OrderedDict()  # turn ids sent on this stream

    def event(raw: bytes) -> str | None:
        doc = json.loads(raw)
        kind = doc.get("type")
        if kind == "turn":
            turn = str(doc["turn_id"])
            if turn in sent:
                return None  # read as open and then heard published: once is enough
            sent[turn] = None
            if len(sent) > 1000:
                sent.popitem(last=False)
            return f"id: {turn}\nevent: turn\ndata: {raw.decode()}\n\n"
        return f"event: {kind}\ndata: {raw.decode()}\n\n"

    try:
        yield ": connected\n\n"
        for raw in app.ports.turns.pending(bot_id):
            if (text := event(raw)) is not None:
                yield text
        while True:
            got = sub.next(heartbeat)
            if got is None:
                bot = app.ports.bots.get(bot_id)
                if bot is None or bot.retired:
                    yield BOT_RETIRED
                    return
                yield ": heartbeat\n\n"
            elif (text := event(got)) is not None:
                yield text
    finally:
        sub.close()
