"""Registered bots: ``POST /v1/bots`` (anyone, limited per address), ``GET /v1/bots``,
``GET /v1/bots/{id}`` with its ``stats``, ``DELETE /v1/bots/{id}`` with its key."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from services.gateway import auth, limits_guard
from services.gateway import bot_schemas as schemas
from services.gateway.routes import SECURITY, GamesBlueprint, _read, application
from shared.app import remote

blp = GamesBlueprint("bots", __name__, description="Bots registered from outside (webhooks)")


@blp.route("/v1/bots")
class Bots(MethodView):
    """Registering and listing bots."""

    @blp.arguments(schemas.RegisterBotSchema())
    @blp.response(201, schemas.RegisteredBotSchema)
    def post(self, body: dict[str, Any]) -> Any:
        """Register a bot; no key needed (limited per client address). The answer holds its
        `key` this once: it signs every turn sent to the bot and retires it. A webhook URL
        off the allowed hosts is a 422 `bot/webhook_not_allowed`, and nothing is sent to it."""
        limits_guard.check("bots")
        doc = _read(remote.register_bot, application(), body)
        return doc, 201, {"Location": f"/v1/bots/{doc['id']}"}

    @blp.arguments(schemas.BotListQuerySchema(), location="query")
    @blp.response(200, schemas.BotListSchema)
    def get(self, query: dict[str, Any]) -> Any:
        """Registered bots, oldest first."""
        return {
            "bots": remote.list_bots(application(), offset=query["offset"], limit=query["limit"])
        }


@blp.route("/v1/bots/<bot_id>")
class Bot(MethodView):
    """One bot."""

    @blp.response(200, schemas.BotSchema)
    def get(self, bot_id: str) -> Any:
        """The bot with its `stats` (`bot_stats`; latencies over its last 1000 decisions)."""
        return _read(remote.show_bot, application(), bot_id)

    @blp.response(204)
    @blp.doc(security=SECURITY)
    def delete(self, bot_id: str) -> Any:
        """Retire the bot (its own key, Bearer): it takes no new seats; games it plays go on
        with its `on_failure` policy."""
        _read(remote.retire_bot, application(), bot_id, auth.bearer())
        return "", 204
