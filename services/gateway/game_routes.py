"""The v1 endpoints of games as a whole: health, the catalogue of game types, creating and
listing games, and a game's view."""

from __future__ import annotations

import json
from typing import Any

from flask import current_app
from flask.views import MethodView

from services.gateway import auth, http_extras, limits_guard, schemas, view_schemas
from services.gateway.blueprint import (
    SECURITY_OPTIONAL,
    _client_owner,
    _idempotency_key,
    _idempotent,
    _json_response,
    _no_token_or_a_key,
    _read,
    application,
    blp,
    problems,
)
from services.gateway.problems import Problem
from shared.app import bot_registration, catalogue, creation, queries, searches
from shared.games.errors import GameError


@blp.route("/healthz")
class Health(MethodView):
    """Liveness and Redis reachability."""

    @blp.response(200, schemas.HealthSchema)
    def get(self) -> Any:
        """200 when Redis answers a PING."""
        queries.healthy(application())
        return {"status": "ok", "redis": "ok"}


@blp.route("/v1/game-types")
class GameTypes(MethodView):
    """The games this service hosts."""

    @blp.response(200, schemas.GameTypesSchema)
    def get(self) -> Any:
        """Per game: name, title, seat limits, options (JSON Schema with defaults), each
        command's JSON Schema with an example an engine listed, and the view's JSON Schema."""
        return {"game_types": [view_schemas.catalogue_entry(e) for e in catalogue.catalogue()]}


@blp.route("/v1/game-types/<name>")
class GameType(MethodView):
    """One game's entry in the catalogue."""

    @blp.response(200, schemas.GameTypeSchema)
    def get(self, name: str) -> Any:
        """The catalogue entry of one game (404 for an unknown one)."""
        for entry in catalogue.catalogue():
            if entry["name"] == name:
                return view_schemas.catalogue_entry(entry)
        raise Problem(404, "http/not_found", f"no game type {name!r}", title="Not Found")


@blp.route("/v1/games")
class Games(MethodView):
    """Creating and listing games."""

    @blp.arguments(schemas.ListGamesQuerySchema(), location="query")
    @blp.response(200, schemas.GameListSchema)
    @problems({404: "no such tournament (`tournament/not_found`)"})
    def get(self, query: dict[str, Any]) -> Any:
        """Listed games, newest first: `status` `waiting` (open seats to join, or client
        seeds to come), `active` or `finished`; `game` to pick a type. Continue with
        `cursor=<next_cursor>`. A tournament's games are not in this list: `tournament=<id>`
        lists them, in game order (404 `tournament/not_found` for an unknown id)."""
        try:
            return _read(
                queries.list_lobby,
                application(),
                game=query.get("game"),
                status=query.get("status"),
                limit=query["limit"],
                cursor=query.get("cursor") or "0",
                tournament=query.get("tournament"),
                bot=query.get("bot"),
            )
        except ValueError as exc:  # a cursor of another list (the archive's, for a tournament)
            raise Problem(
                422, "request/invalid", f"the query string has invalid fields: cursor ({exc})",
                title="Unprocessable Entity", errors_={"cursor": [str(exc)]},
            ) from exc  # fmt: skip

    @blp.arguments(schemas.CreateGameSchema())
    @blp.response(201, schemas.CreatedSchema)
    @blp.doc(security=SECURITY_OPTIONAL)
    def post(self, body: dict[str, Any]) -> Any:
        """Create a game; answers its id and one secret token per human seat.

        A fixed `seed` or a `deal` option needs an organizer key. A registered bot's own key
        may be sent instead, to seat that bot where its `seatable_by` is `owner` (403
        `bot/not_seatable` for a bot the caller may not seat). With an `Idempotency-Key`
        header a retry with the same key and body answers the first response again (for 24
        hours, per caller) and creates nothing; the same key with another body is a 422
        `request/idempotency_key_reused`."""
        limits_guard.check("create")
        key = _idempotency_key()
        if key is None:
            return self._create(body)
        return _idempotent("create", key, body, lambda: self._create(body))

    def _create(self, body: dict[str, Any]) -> Any:
        # A registered bot's own key seats that bot whatever its seatable_by (issue 35).
        bot_key = bot_registration.registered_key(application(), auth.bearer())
        token = None if bot_key else _no_token_or_a_key("creating a game")
        options = body.get("options") or {}
        if ("seed" in body or "deal" in options) and not auth.is_organizer(token):
            raise Problem(
                403,
                "auth/organizer_required",
                "a fixed seed or deal needs an organizer key",
                title="Forbidden",
            )
        # The body's fields are valid (``CreateGameSchema``): what the game says of its seat
        # count and options, every error at once (creation would stop at the first).
        found = schemas.game_problems(body["game"], body["seats"], options)
        if found:
            raise Problem(
                422,
                "options/invalid",
                "; ".join(p.detail for p in found),
                errors_=schemas.game_errors(found),
            )
        if not auth.is_organizer(token):  # search time is shared: a bounded ask without a key
            caps = current_app.config["SETTINGS"].search_caps
            _read(searches.check_caps, body["seats"], body.get("clock"), caps)
        try:
            created = creation.create_game(
                application(),
                body["game"],
                body["seats"],
                options,
                body.get("seed"),
                fairness_mode=body.get("fairness", "standard"),
                listed=body.get("listed", True),
                clock_spec=body.get("clock"),
                owner=_client_owner(),
                caller=bot_registration.BotCaller(bot_key, organizer=auth.is_organizer(token)),
            )
        except KeyError as exc:
            raise Problem(
                422,
                "options/invalid",
                f"game {body['game']!r} is not available",
                errors_={"game": ["not available"]},
            ) from exc
        except GameError as exc:
            raise Problem.from_game_error(exc) from exc
        record = created.record
        seats = []
        for i, seat in enumerate(record.seats):
            entry: dict[str, Any] = {"seat": i, "name": seat["name"]}
            if seat.get("bot"):
                entry["bot"] = seat["bot"]
            if created.tokens[i]:
                entry["token"] = created.tokens[i]
            seats.append(entry)
        raw = application().ports.read_models.read(created.game_id, None)
        return (
            {
                "id": created.game_id,
                "game": record.game,
                "version": record.version,
                "seats": seats,
                "tokens": created.tokens,
                "view": json.loads(raw) if raw else None,
            },
            201,
            {"Location": f"/v1/games/{created.game_id}"},
        )


@blp.route("/v1/games/<game_id>")
class Game(MethodView):
    """One game's view."""

    @blp.arguments(schemas.ViewQuerySchema(), location="query")
    @blp.response(200, schemas.ViewSchema)
    @blp.doc(security=SECURITY_OPTIONAL)
    def get(self, query: dict[str, Any], game_id: str) -> Any:
        """The public view; with a seat token that seat's view; auditors may add `?seat=N`."""
        app = application()
        caller = auth.caller_for(app, game_id)
        seat = caller.seat
        if caller.role == auth.AUDITOR and "seat" in query:
            seat = query["seat"]
        elif "seat" in query and query["seat"] != caller.seat:
            raise Problem(
                403,
                "auth/forbidden",
                "only auditors may read another seat's view",
                title="Forbidden",
            )
        return http_extras.conditional(_json_response(_read(queries.view_json, app, game_id, seat)))
