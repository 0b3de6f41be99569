"""The v1 REST endpoints."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from typing import Any

import marshmallow as ma
from flask import Response, current_app, request, stream_with_context
from flask.views import MethodView
from flask_smorest import Blueprint
from webargs import core as webargs_core
from webargs.flaskparser import FlaskParser

from services.gateway import auth, feed, http_extras, limits_guard, schemas, view_schemas
from services.gateway.problems import Problem
from shared import games
from shared.app import catalogue, handlers, queries, searches
from shared.app.context import App
from shared.app.errors import AppError
from shared.app.messages import CommandMessage, new_command_id, token_hash
from shared.games.errors import GameError
from shared.match import clock, fairness


class JsonBodyParser(FlaskParser):
    """Reads the body as JSON whatever its Content-Type: ``curl -d`` sends
    ``application/x-www-form-urlencoded`` by default, and "missing field" would mislead."""

    def _raw_load_json(self, req: Any) -> Any:
        data = req.get_data(cache=True)
        if not data:
            return webargs_core.missing
        try:
            value = webargs_core.parse_json(data)
        except RecursionError:  # nested deeper than the parser's stack: not a game command
            raise Problem(
                400, "request/malformed", "the JSON body is nested too deeply", title="Bad Request"
            ) from None
        except ValueError as exc:  # e.g. an integer of more digits than Python will read
            raise Problem(
                400, "request/malformed", f"the body is not JSON this service reads: {exc}",
                title="Bad Request",
            ) from None  # fmt: skip
        _check_body(value)
        return value

    def parse(self, argmap: Any, req: Any = None, **kwargs: Any) -> Any:
        """webargs' parse, but a command body that passes ``_command_body_ok`` skips
        marshmallow, which would return the same dict: every move of every game comes here, and
        webargs with marshmallow took about 6% of the gateway's CPU under load (py-spy,
        BENCHMARKS.md). Every other body, and every other schema, is parsed as before, so each
        refusal is still marshmallow's own."""
        if (
            type(argmap) is schemas.CommandSchema
            and kwargs.get("location") in (None, "json")
            and kwargs.get("unknown", _DEFAULT_UNKNOWN) in (_DEFAULT_UNKNOWN, None, ma.INCLUDE)
            and not kwargs.get("validate")
        ):
            value = self._raw_load_json(req if req is not None else self.get_default_request())
            if _command_body_ok(value):
                return {"type": value["type"], **value}  # the schema's order: declared first
        if (
            kwargs.get("location") == "query"
            and not kwargs.get("validate")
            and isinstance(argmap, ma.Schema)
            and not (req if req is not None else self.get_default_request()).args
            and _empty_query_loads_empty(argmap)
        ):
            # No query string (a client reading its view after every move): the schema's
            # answer to nothing is a constant, found once per schema.
            return {}
        return super().parse(argmap, req, **kwargs)


def _command_fast_check() -> dict[str, tuple[type, list[Any]]] | None:
    """Per field of ``CommandSchema``, the Python type a valid value has and the schema's own
    validators, when the schema is what ``_command_body_ok`` assumes (fields ``type``, ``id``
    and ``expected_version``, unknown fields included, ``type`` a required string, ``id`` a
    string, ``expected_version`` a strict integer); None (no fast path) if it has changed."""
    schema = schemas.CommandSchema()
    expected = {"type": ma.fields.String, "id": ma.fields.String,
                "expected_version": ma.fields.Integer}  # fmt: skip
    if set(schema.fields) != set(expected) or schema.unknown != ma.INCLUDE:
        return None
    out: dict[str, tuple[type, list[Any]]] = {}
    for name, field in schema.fields.items():
        if type(field) is not expected[name] or field.data_key is not None or field.allow_none:
            return None
        if (name == "type") != bool(field.required):
            return None
        if isinstance(field, ma.fields.Integer) and not field.strict:
            return None
        out[name] = (str if expected[name] is ma.fields.String else int, list(field.validators))
    return out


_FAST_FIELDS = _command_fast_check()
# Keyed by the decorators' schema instances, which live as long as the routes.
_EMPTY_QUERY: dict[ma.Schema, bool] = {}


def _empty_query_loads_empty(schema: ma.Schema) -> bool:
    """Whether the query schema loads an empty query as ``{}`` (no defaults, nothing required,
    its schema checks pass): then an empty query string needs no parsing."""
    known = _EMPTY_QUERY.get(schema)
    if known is None:
        try:
            known = schema.load({}) == {}
        except ma.ValidationError:
            known = False
        _EMPTY_QUERY[schema] = known
    return known


def _command_body_ok(value: Any) -> bool:
    """Whether ``CommandSchema`` would return ``value`` as it is: an object whose ``type``
    (required), ``id`` and ``expected_version`` are of the exact Python type the schema loads
    and pass its own validators. Anything else (a bool for an integer, a missing ``type``...)
    goes through the schema, whose refusal is then the answer."""
    if _FAST_FIELDS is None or type(value) is not dict or "type" not in value:
        return False
    for name, (kind, validators) in _FAST_FIELDS.items():
        if name not in value:
            continue
        item = value[name]
        if type(item) is not kind:
            return False
        try:
            for check in validators:
                if check(item) is False:
                    return False
        except ma.ValidationError:
            return False
    return True


_DEFAULT_UNKNOWN = webargs_core._UNKNOWN_DEFAULT_PARAM  # "the schema's own" (webargs' default)
MAX_DEPTH = 32  # no command, seat or option of any game nests deeper


def _check_body(value: Any) -> None:
    """422 for a body no game can use and whose handling could fail deep down: nesting beyond
    ``MAX_DEPTH`` or text that cannot be encoded (a lone surrogate such as ``"\\ud800"``).
    Iterative, so that no depth of nesting can exhaust the stack here."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Problem(
                422, "request/invalid", f"the body nests deeper than {MAX_DEPTH} levels",
                title="Unprocessable Entity",
            )  # fmt: skip
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, dict):
            for k, v in item.items():
                _check_text(k)
                stack.append((v, depth + 1))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Problem(
            422, "request/invalid", "the body holds text that cannot be encoded as UTF-8 "
            "(a lone surrogate)", title="Unprocessable Entity",
        ) from None  # fmt: skip


class GamesBlueprint(Blueprint):
    """flask-smorest Blueprint with the lenient JSON body parser."""

    ARGUMENTS_PARSER = JsonBodyParser()


blp = GamesBlueprint("games", __name__, description="Games, commands, views and events")
SECURITY: list[dict[str, list[str]]] = [{"bearer": []}]
# Where an anonymous call works too (a spectator's view, a finished game's export...).
SECURITY_OPTIONAL: list[dict[str, list[str]]] = [{}, {"bearer": []}]


def application() -> App:
    """The application this gateway serves."""
    app: App = current_app.extensions["tabletop"]
    return app


def _read(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a query, answering its refusals as problem bodies."""
    try:
        return fn(*args, **kwargs)
    except AppError as exc:
        raise Problem.from_app_error(exc) from exc


def _json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    raw = body if isinstance(body, str | bytes) else json.dumps(body)
    return Response(raw, status=status, mimetype="application/json", headers=headers)


@blp.route("/healthz")
class Health(MethodView):
    """Liveness and Redis reachability."""

    @blp.response(200, schemas.HealthSchema)
    def get(self) -> Any:
        """200 when Redis answers a PING."""
        queries.healthy(application())
        return {"status": "ok", "redis": "ok"}


def _command_body_doc() -> dict[str, Any]:
    """The commands' request body for the document: any of every game's commands (from the
    catalogue), each with an example an engine listed."""
    variants: list[dict[str, Any]] = []
    examples: dict[str, Any] = {}
    for entry in catalogue.catalogue():
        for command in entry["commands"]:
            schema = {k: v for k, v in command.items() if k != "examples"}
            schema["title"] = f"{entry['name']} {command['title']}"
            variants.append(schema)
            for example in command.get("examples", [])[:1]:
                examples[f"{entry['name']}-{command['title']}"] = {
                    "summary": f"{entry['title']}: {command['title']}",
                    "value": example,
                }
    variants.append(
        {
            "title": "resign",
            "type": "object",
            "properties": {"type": {"const": clock.RESIGN}},
            "required": ["type"],
            "description": "any game, at any time after the deal: in a two-seat game the "
            "other seat wins at once; otherwise a bot plays the seat to the end and it ranks "
            "below every other seat",
        }
    )
    examples["resign"] = {"summary": "any game: resign", "value": {"type": clock.RESIGN}}
    return {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "anyOf": variants,
                    "description": "a command of the game's type (see GET /v1/game-types); "
                    "any may add `id` and `expected_version`",
                },
                "examples": examples,
            }
        },
    }


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
    @blp.alt_response(
        404,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="no such tournament (`tournament/not_found`)",
    )
    def get(self, query: dict[str, Any]) -> Any:
        """Listed games, newest first: `status` `waiting` (open seats to join, or client
        seeds to come), `active` or `finished`; `game` to pick a type. Continue with
        `cursor=<next_cursor>`. A tournament's games are not in this list: `tournament=<id>`
        lists them, in game order (404 `tournament/not_found` for an unknown id)."""
        return _read(
            queries.list_lobby,
            application(),
            game=query.get("game"),
            status=query.get("status"),
            limit=query["limit"],
            cursor=int(query.get("cursor") or 0),
            tournament=query.get("tournament"),
        )

    @blp.arguments(schemas.CreateGameSchema())
    @blp.response(201, schemas.CreatedSchema)
    @blp.doc(security=SECURITY_OPTIONAL)
    def post(self, body: dict[str, Any]) -> Any:
        """Create a game; answers its id and one secret token per human seat.

        A fixed `seed` or a `deal` option needs an organizer key. With an `Idempotency-Key`
        header a retry with the same key and body answers the first response again (for 24
        hours, per caller) and creates nothing; the same key with another body is a 422
        `request/idempotency_key_reused`."""
        limits_guard.check("create")
        key = _idempotency_key()
        if key is None:
            return self._create(body)
        return _idempotent("create", key, body, lambda: self._create(body))

    def _create(self, body: dict[str, Any]) -> Any:
        token = _no_token_or_a_key("creating a game")
        options = body.get("options") or {}
        if ("seed" in body or "deal" in options) and not auth.is_organizer(token):
            raise Problem(
                403,
                "auth/organizer_required",
                "a fixed seed or deal needs an organizer key",
                title="Forbidden",
            )
        if body["game"] not in games.names():
            raise Problem(
                422,
                "options/invalid",
                f"unknown game {body['game']!r}",
                errors_={"game": [f"one of {', '.join(games.names())}"]},
            )
        if not auth.is_organizer(token):  # search time is shared: a bounded ask without a key
            caps = current_app.config["SETTINGS"].search_caps
            _read(searches.check_caps, body["seats"], body.get("clock"), caps)
        try:
            created = handlers.create_game(
                application(),
                body["game"],
                body["seats"],
                options,
                body.get("seed"),
                fairness_mode=body.get("fairness", "standard"),
                listed=body.get("listed", True),
                clock_spec=body.get("clock"),
                owner=_client_owner(),
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


@blp.route("/v1/games/<game_id>/commands")
class Commands(MethodView):
    """Sending commands."""

    @blp.arguments(schemas.CommandSchema())
    @blp.response(202, schemas.CommandAcceptedSchema)
    @blp.alt_response(
        200,
        schema=schemas.ViewSchema,
        description="with `Prefer: wait=N`: accepted, the seat's new view",
    )
    @blp.alt_response(
        409,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="expected_version is stale, or the game is over",
    )
    @blp.alt_response(
        422,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="the rules forbid the move (`code`, `rule`), or it is malformed",
    )
    @blp.doc(
        security=SECURITY,
        parameters=[
            {
                "in": "header",
                "name": "Prefer",
                "schema": {"type": "string"},
                "description": "`wait=N`: wait up to N seconds for the outcome",
            },
            {
                "in": "header",
                "name": "Idempotency-Key",
                "schema": {"type": "string", "maxLength": 255},
                "description": "the command's id: a retry is applied once",
            },
        ],
        requestBody=_command_body_doc(),
    )
    def post(self, body: dict[str, Any], game_id: str) -> Any:
        """Send a command for the caller's seat; 202 with its id, or its outcome when waiting."""
        limits_guard.check("command", by_token=True)
        limits_guard.check("command_addr")  # one address's many tokens share one count
        app = application()
        seat = _seat_of(app, game_id, "send a seat token to play")
        game_type = _read(queries.game_type, app, game_id)
        engine = games.get(game_type)
        command = {k: v for k, v in body.items() if k not in ("id", "expected_version")}
        try:
            # The worker checks a client seed and a resignation (service commands).
            if command.get("type") not in (fairness.CONTRIBUTE, clock.RESIGN):
                # Shape errors answer here, before the stream. What goes on is the command as
                # the engine reads it: fields it ignores (up to a 64 KiB body of them) would
                # only sit in the stream entry.
                command = engine.command_to_json(engine.parse_command(command))
            else:
                command = {k: command[k] for k in ("type", "client_seed") if k in command}
        except GameError as exc:
            raise Problem.from_game_error(exc) from exc
        key = _idempotency_key()
        if "id" in body:
            cid = _client_command_id(seat, body["id"])
        elif key is not None:
            # An Idempotency-Key is the command's id: the worker applies an id once, and
            # refuses it with another body (request/idempotency_key_reused).
            cid = _client_command_id(seat, "key-" + hashlib.sha256(key.encode()).hexdigest()[:32])
        else:
            cid = new_command_id()
        message = CommandMessage(
            command_id=cid,
            game_id=game_id,
            seat=seat,
            body=command,
            expected_version=body.get("expected_version"),
            by=_token_hash(),
        )
        location = f"/v1/games/{game_id}/commands/{cid}"
        wait = _prefer_wait()
        if wait is None:
            handlers.submit_command(app, message, game_type)
            return _pending_response(cid, location, {"Location": location})
        answered = _send_and_wait(app, message, game_type, wait)
        headers = {"Location": location, "Preference-Applied": f"wait={_fmt(wait)}"}
        if answered is None:
            return _pending_response(cid, location, headers)
        outcome, seat_view = answered
        return _outcome_response(app, game_id, seat, outcome, headers, seat_view)


@blp.route("/v1/games/<game_id>/seats/<int:seat>/entropy")
class Entropy(MethodView):
    """A seat's client seed for a game of contributed fairness."""

    @blp.arguments(schemas.EntropySchema())
    @blp.response(200, schemas.ViewSchema)
    @blp.alt_response(
        422,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="not a contributed game, or this seat's seed was sent already",
    )
    @blp.doc(security=SECURITY)
    def post(self, body: dict[str, Any], game_id: str, seat: int) -> Any:
        """Send your seat's `client_seed` (its token): once every human seat has sent one the
        game is dealt from the mix of the committed server seed and all client seeds. Answers
        your new view (its `fairness` lists every seed sent), or 202 if the worker is slow.
        Sending the same seed again is harmless; another one is a 422 (the first counts)."""
        app = application()
        mine = _seat_of(app, game_id, "send your seat token with your client seed")
        if mine != seat:
            raise Problem(403, "auth/forbidden", f"your token is seat {mine}'s", title="Forbidden")
        game_type = _read(queries.game_type, app, game_id)
        cid = _client_command_id(seat, "entropy")
        message = CommandMessage(
            command_id=cid,
            game_id=game_id,
            seat=seat,
            body={"type": fairness.CONTRIBUTE, "client_seed": body["client_seed"]},
            by=_token_hash(),
        )
        location = f"/v1/games/{game_id}/commands/{cid}"
        answered = _send_and_wait(app, message, game_type, _prefer_wait() or 5.0)
        headers = {"Location": location}
        if answered is None:
            return _pending_response(cid, location, headers)
        outcome, seat_view = answered
        return _outcome_response(app, game_id, seat, outcome, headers, seat_view)


@blp.route("/v1/games/<game_id>/seats/<int:seat>/join")
class Join(MethodView):
    """Taking an open seat (the lobby)."""

    @blp.arguments(schemas.JoinSchema())
    @blp.response(200, schemas.JoinedSchema)
    @blp.alt_response(
        409,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="`seat/taken`: someone joined first (of two joins at once, one wins)",
    )
    @blp.doc(security=SECURITY_OPTIONAL)  # no token; a key is accepted, any other is a 401
    def post(self, body: dict[str, Any], game_id: str, seat: int) -> Any:
        """Join an open seat (no token needed): answers the seat and its secret token. The
        game is dealt when its last open seat is taken (and, for contributed fairness, every
        client seed is in: send yours here as `client_seed`)."""
        limits_guard.check("join")
        _no_token_or_a_key("joining")
        app = application()
        game_type = _read(queries.game_type, app, game_id)
        token = secrets.token_urlsafe(24)
        join = {"type": handlers.JOIN, "name": body["name"], "token_sha256": token_hash(token)}
        if "client_seed" in body:
            join["client_seed"] = body["client_seed"]
        cid = new_command_id()
        message = CommandMessage(command_id=cid, game_id=game_id, seat=seat, body=join)
        outcome, seat_view = _decided(app, message, game_type, "join")
        return {"seat": seat, "token": token, "view": json.loads(seat_view) if seat_view else None}


@blp.route("/v1/games/<game_id>/seats/<int:seat>/leave")
class Leave(MethodView):
    """Giving an open seat back before the deal."""

    @blp.response(200, schemas.ViewSchema)
    @blp.doc(security=SECURITY)
    def post(self, game_id: str, seat: int) -> Any:
        """Leave your seat (its token) while the game waits for players: the seat is open
        again and your token stops working."""
        limits_guard.check("command", by_token=True)  # a leave is a command (refused once dealt)
        limits_guard.check("command_addr")
        app = application()
        mine = _seat_of(app, game_id, "send the token of the seat you leave")
        if mine != seat:
            raise Problem(403, "auth/forbidden", f"your token is seat {mine}'s", title="Forbidden")
        game_type = _read(queries.game_type, app, game_id)
        cid = new_command_id()
        message = CommandMessage(
            command_id=cid, game_id=game_id, seat=seat, body={"type": handlers.LEAVE},
            by=_token_hash(),
        )  # fmt: skip
        _decided(app, message, game_type, "leave")
        return _json_response(_read(queries.view_json, app, game_id, None))


@blp.route("/v1/games/<game_id>/commands/<command_id>")
class CommandStatus(MethodView):
    """What became of a command sent without waiting."""

    @blp.response(200, schemas.CommandAcceptedSchema)
    @blp.alt_response(
        404,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="no such command of the caller's seat",
    )
    @blp.doc(security=SECURITY)
    def get(self, game_id: str, command_id: str) -> Any:
        """`pending`, `accepted` (with the version) or `rejected` (with the error as a problem
        body). A seat may ask by the `id` it sent; another seat's command is a 404."""
        app = application()
        caller = auth.caller_for(app, game_id)
        if caller.role not in (auth.SEAT, auth.AUDITOR):
            # No token: authenticate (401); an organizer key is valid but not a seat (403).
            status = 401 if caller.role == auth.SPECTATOR else 403
            raise Problem(status, "auth/seat_required", "send a seat token",
                          title="Unauthorized" if status == 401 else "Forbidden")  # fmt: skip
        # A seat's own command first, by the id it sent; never another seat's (its rejection
        # could name the card it tried: not yours to read, nor to know of).
        candidates = [command_id]
        if caller.role == auth.SEAT:
            candidates.insert(0, _client_command_id(caller.seat, command_id))
        doc = queries.command_status(app, game_id, candidates, caller)
        if doc is None:
            raise Problem(
                404,
                "command/not_found",
                f"no command {command_id} of yours in game {game_id}",
                title="No such command",
            )
        if doc.get("status") in ("rejected", "error") and isinstance(doc.get("error"), dict):
            doc["error"] = _outcome_problem(doc).body()
        return doc


@blp.route("/v1/games/<game_id>/suggestion")
class Suggestion(MethodView):
    """A hint for a stuck player."""

    @blp.arguments(schemas.SuggestionQuerySchema(), location="query")
    @blp.response(200, schemas.SuggestionSchema)
    @blp.alt_response(
        422,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="the seat has nothing to do now, or a bad bot setting",
    )
    @blp.alt_response(
        429,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="`request/rate_limited`: too many hints, or this seat's last `ismcts` hint "
        "is still being searched (one at a time); see `Retry-After`",
    )
    @blp.alt_response(
        503,
        schema=schemas.ProblemSchema,
        content_type="application/problem+json",
        description="`service/unavailable`: no search worker answered within the budget and "
        "8 s; see `Retry-After`",
    )
    @blp.doc(security=SECURITY)
    def get(self, query: dict[str, Any], game_id: str) -> Any:
        """The command a bot (`?bot=heuristic` by default; `random`, or `ismcts` with
        `budget_ms` or `iterations`) would send now for the caller's seat, from that seat's
        view only. Needs a seat token. An `ismcts` hint is searched on the search workers,
        one at a time per seat."""
        limits_guard.check("suggest", by_token=True)
        app = application()
        seat = _seat_of(app, game_id, "send a seat token to ask for a hint")
        try:
            # A searching bot's hint runs on the search workers; this request only waits for
            # it (a Redis BLPOP, which gevent suspends), so the gateway goes on answering.
            return searches.suggest(app, game_id, seat, query, owner=_client_owner())
        except searches.RetryLater as exc:
            problem = Problem.from_app_error(exc)
            problem.headers["Retry-After"] = str(exc.retry_after)
            raise problem from exc
        except AppError as exc:
            raise Problem.from_app_error(exc) from exc


def _client_owner() -> str:
    """Whom this request's searches count against (``searches.client_owner``): the key it
    sent, if an organizer's or an auditor's, else its client address."""
    token = auth.bearer()
    keyed = token is not None and (auth.is_organizer(token) or auth.is_auditor(token))
    return searches.client_owner(address=request.remote_addr, key=token if keyed else None)


@blp.route("/v1/games/<game_id>/feed")
class Feed(MethodView):
    """The live feed (Server-Sent Events)."""

    @blp.arguments(schemas.FeedQuerySchema(), location="query")
    @blp.response(
        200,
        content_type="text/event-stream",
        description="`: connected` at once; then messages `id: <version>`, `event: update`, "
        '`data: {"version", "events", "view"}` (the events the caller may read since the '
        "previous message, and its view); `: heartbeat` every 15 s; the stream ends after the "
        "message that shows the game over",
    )
    @blp.doc(security=SECURITY_OPTIONAL)
    def get(self, query: dict[str, Any], game_id: str) -> Any:
        """Updates pushed as they happen: a seat token (header, or `?access_token=` for
        browsers' EventSource, which cannot send headers) gets its seat's view, no token the
        public view, an auditor key every event. The first message brings the caller up to
        date; a reconnect with `Last-Event-ID: n` (or `?after=n`) resumes after version n
        without a gap."""
        app = application()
        # The feed keeps the token it was opened with: a seat's feed checks it again at every
        # message and heartbeat, and ends once it no longer holds the seat.
        token = query.get("access_token") or auth.bearer()
        keys = auth.keys()
        caller = _read(queries.caller, app, game_id, token, keys)
        _read(queries.game_type, app, game_id)
        after = query.get("after")
        last_id = request.headers.get("Last-Event-ID")
        if last_id is not None:
            if not last_id.strip().isdigit():
                raise Problem(400, "request/malformed", "Last-Event-ID must be a version",
                              title="Bad Request")  # fmt: skip
            after = int(last_id)
        hub = _hub(app)
        heartbeat = current_app.config["SETTINGS"].feed_heartbeat
        stream = feed.messages(app, hub, game_id, caller, int(after or 0), heartbeat,
                               token=token, keys=keys)  # fmt: skip
        return Response(
            stream_with_context(stream),
            mimetype="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )


def _hub(app: App) -> feed.FeedHub:
    hub: feed.FeedHub | None = current_app.extensions.get("tabletop-feed")
    if hub is None:
        hub = current_app.extensions.setdefault("tabletop-feed", feed.FeedHub(app))
    hub.start()
    return hub


@blp.route("/v1/games/<game_id>/events")
class Events(MethodView):
    """A game's history as the caller may see it."""

    @blp.arguments(schemas.EventsQuerySchema(), location="query")
    @blp.response(200, schemas.EventsSchema)
    @blp.doc(security=SECURITY_OPTIONAL)
    def get(self, query: dict[str, Any], game_id: str) -> Any:
        """Events after version `after`: everything for auditors; hidden facts redacted for
        seats and spectators (wholly secret events are left out)."""
        app = application()
        caller = auth.caller_for(app, game_id)
        page = _read(
            queries.events, app, game_id, caller, after=query["after"], limit=query["limit"]
        )
        return http_extras.conditional(_json_response(page))


@blp.route("/v1/games/<game_id>/export")
class Export(MethodView):
    """The whole log, for offline audits."""

    @blp.response(
        200,
        content_type="application/x-ndjson",
        description="one envelope a line (JSONL), every field, in version order",
    )
    @blp.doc(security=SECURITY_OPTIONAL)
    def get(self, game_id: str) -> Any:
        """The game's envelopes as JSONL (`tabletop audit --file` reads it): auditors at any
        time; anyone once the game is over (its seed is public then)."""
        app = application()
        caller = auth.caller_for(app, game_id)
        lines = _read(queries.export_lines, app, game_id, caller)
        return Response(
            b"".join(line + b"\n" for line in lines),
            mimetype="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{game_id}.jsonl"'},
        )


@blp.route("/v1/games/<game_id>/audit")
class Audit(MethodView):
    """The audit report, computed by the service."""

    @blp.response(200, schemas.AuditSchema)
    @blp.doc(security=SECURITY_OPTIONAL)
    def get(self, game_id: str) -> Any:
        """Every check of `tabletop audit` on the stored log (chain, completeness, seed
        commitment, opening draw, every command and every bot move re-decided, final-state
        digest) with the first version at fault: auditors at any time (a running game is
        re-decided with the seed the service holds, never shown), anyone once the game is over."""
        app = application()
        caller = auth.caller_for(app, game_id)
        limits_guard.check("audit")  # re-deciding a whole log costs the gateway real CPU
        return _read(queries.audit_report, app, game_id, caller)


IDEMPOTENCY_TTL = 24 * 3600
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def _idempotency_key() -> str | None:
    """The request's ``Idempotency-Key`` (1 to 255 visible ASCII characters), or None."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not _KEY.match(key):
        raise Problem(
            400, "request/malformed", "Idempotency-Key must be 1 to 255 visible ASCII characters",
            title="Bad Request",
        )  # fmt: skip
    return key


def _idempotent(route: str, key: str, body: Any, run: Any) -> Any:
    """Run ``run`` once per (caller, route, key): a retry with the same body gets the kept
    response (``Idempotent-Replayed: true``), one with another body a 422, one while the first
    still runs a 409."""
    caller = auth.bearer() or request.remote_addr or "anonymous"
    scope = hashlib.sha256(f"{caller}\n{route}\n{key}".encode()).hexdigest()
    fingerprint = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    store = application().ports.idempotency
    kept = store.claim(scope, fingerprint, IDEMPOTENCY_TTL)
    if kept is not None:
        if kept["fingerprint"] != fingerprint:
            raise Problem(
                422, "request/idempotency_key_reused",
                "this Idempotency-Key was used with another request body",
                title="The key was used for another request",
            )  # fmt: skip
        response = kept.get("response")
        if response is None:
            return Problem(
                409, "request/in_progress", "the first request with this key is still running",
                title="Conflict",
            ).response({"Retry-After": "1"})  # fmt: skip
        headers = {**response.get("headers", {}), "Idempotent-Replayed": "true"}
        return _json_response(response["body"], response["status"], headers)
    try:
        doc, status, headers = run()
    except Problem as problem:
        store.finish(scope, fingerprint, {"status": problem.status, "body": problem.body(),
                                          "headers": {}}, IDEMPOTENCY_TTL)  # fmt: skip
        raise
    store.finish(scope, fingerprint, {"status": status, "body": doc, "headers": headers},
                 IDEMPOTENCY_TTL)  # fmt: skip
    return doc, status, headers


def _send_and_wait(
    app: App, message: CommandMessage, game_type: str, wait: float
) -> tuple[dict[str, Any], bytes | None] | None:
    """Put ``message`` on its stream and wait up to ``wait`` seconds for its outcome: (the
    outcome, the seat's new view when accepted), or None if the worker did not answer."""
    reply = handlers.submit_and_wait(app, message, game_type, wait)
    if reply is None:
        return None
    head, _, seat_view = reply.partition(b"\n")
    return json.loads(head), seat_view or None


def _decided(
    app: App, message: CommandMessage, game_type: str, what: str
) -> tuple[dict[str, Any], bytes | None]:
    """``_send_and_wait`` for a lobby step that must be answered: a 503 when the worker does
    not answer within 5 s (or ``Prefer: wait``), the refusal's problem when it is refused."""
    answered = _send_and_wait(app, message, game_type, max(5.0, _prefer_wait() or 0))
    if answered is None:
        raise Problem(
            503, "service/unavailable", f"the {what} was not answered in time; try again",
            title="Service Unavailable",
        )  # fmt: skip
    outcome, seat_view = answered
    if outcome["status"] != "accepted":
        raise _outcome_problem(outcome)
    return outcome, seat_view


def _no_token_or_a_key(what: str) -> str | None:
    """The bearer token of a call that needs none: None, or a key. Any other token is a 401: a
    seat token of another game, or a typo, would otherwise be ignored silently."""
    token = auth.bearer()
    if token is not None and not (auth.is_organizer(token) or auth.is_auditor(token)):
        raise Problem(
            401, "auth/invalid_token", f"{what} takes no token but an organizer key",
            title="Unauthorized",
        )  # fmt: skip
    return token


def _token_hash() -> str | None:
    """The hash of the caller's bearer token (the worker checks it against the roster)."""
    token = auth.bearer()
    return token_hash(token) if token else None


def _seat_of(app: App, game_id: str, detail: str) -> int:
    """The caller's seat; the caller must hold one: 401 without a token, 403 with a key."""
    caller = auth.caller_for(app, game_id)
    if caller.role != auth.SEAT or caller.seat is None:
        status = 401 if caller.role == auth.SPECTATOR else 403
        raise Problem(
            status,
            "auth/seat_required",
            detail,
            title="Unauthorized" if status == 401 else "Forbidden",
        )
    return caller.seat


def _pending_response(
    cid: str, location: str, headers: dict[str, str]
) -> tuple[dict[str, Any], int, dict[str, str]]:
    """202: the command is queued and not answered yet; its status is at ``location``."""
    return {"command_id": cid, "status": "pending", "location": location}, 202, headers


def _outcome_response(
    app: App,
    game_id: str,
    seat: int,
    outcome: dict[str, Any],
    headers: dict[str, str],
    seat_view: bytes | None,
) -> Response:
    if outcome["status"] == "accepted":
        raw = seat_view or app.ports.read_models.read(game_id, seat) or b"{}"
        command = {k: outcome[k] for k in ("command_id", "status", "events") if k in outcome}
        # Splice the command into the view's JSON object rather than parse and re-encode it.
        raw = raw.rstrip()
        sep = b"," if raw != b"{}" else b""
        body = raw[:-1] + sep + b'"command":' + json.dumps(command).encode() + b"}"
        return _json_response(body, 200, headers)
    return _outcome_problem(outcome).response(headers)


def _outcome_problem(outcome: dict[str, Any]) -> Problem:
    """The problem for a rejected (or failed) command's stored outcome."""
    problem = Problem.from_game_error(outcome["error"])
    problem.extra = {"command_id": outcome["command_id"], "version": outcome.get("version")}
    return problem


_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*\"?(\d+(?:\.\d+)?)\"?", re.IGNORECASE)


def _client_command_id(seat: int | None, client_id: str) -> str:
    # Prefixed with the seat so that two seats' ids never collide (nor a seat forge a bot's).
    return f"s{seat}-{client_id}"


def _prefer_wait() -> float | None:
    header = request.headers.get("Prefer")
    if not header:
        return None
    match = _WAIT.search(header)
    if not match:
        if re.search(r"(?:^|[,;\s])wait\s*=", header, re.IGNORECASE):
            raise Problem(
                400, "request/malformed", "Prefer: wait=N needs a number of seconds",
                title="Bad Request",
            )  # fmt: skip
        return None
    limit = current_app.config["SETTINGS"].max_wait
    return max(0.001, min(float(match.group(1)), limit))


def _fmt(wait: float) -> str:
    return str(int(wait)) if wait == int(wait) else str(wait)
