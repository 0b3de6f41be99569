"""The v1 endpoints of commands: sending one (``Prefer: wait`` for its outcome) and asking
what became of one; and the worker's reply to a waited command, read back into an outcome
and the seat's new view (``_send_and_wait``, ``_decided``, ``_outcome_response``), which the
seat endpoints share."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from flask import Response
from flask.views import MethodView

from services.gateway import auth, limits_guard, schemas
from services.gateway.blueprint import (
    SECURITY,
    _client_command_id,
    _fmt,
    _idempotency_key,
    _json_response,
    _prefer_wait,
    _read,
    _seat_of,
    _token_hash,
    application,
    blp,
    problems,
)
from services.gateway.problems import Problem
from shared import games
from shared.app import catalogue, commands, queries, service_commands
from shared.app.context import App
from shared.app.messages import CommandMessage, new_command_id
from shared.games.errors import GameError
from shared.match import clock


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
    @problems(
        {
            409: "expected_version is stale, or the game is over",
            422: "the rules forbid the move (`code`, `rule`), or it is malformed",
        }
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
            service = service_commands.client_command(command)
            if service is None:
                # Shape errors answer here, before the stream. What goes on is the command as
                # the engine reads it: fields it ignores (up to a 64 KiB body of them) would
                # only sit in the stream entry.
                command = engine.command_to_json(engine.parse_command(command))
            else:
                command = service.to_body()
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
            commands.submit_command(app, message, game_type)
            return _pending_response(cid, location, {"Location": location})
        answered = _send_and_wait(app, message, game_type, wait)
        headers = {"Location": location, "Preference-Applied": f"wait={_fmt(wait)}"}
        if answered is None:
            return _pending_response(cid, location, headers)
        outcome, seat_view = answered
        return _outcome_response(app, game_id, seat, outcome, headers, seat_view)


@blp.route("/v1/games/<game_id>/commands/<command_id>")
class CommandStatus(MethodView):
    """What became of a command sent without waiting."""

    @blp.response(200, schemas.CommandAcceptedSchema)
    @problems({404: "no such command of the caller's seat"})
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


def _send_and_wait(
    app: App, message: CommandMessage, game_type: str, wait: float
) -> tuple[dict[str, Any], bytes | None] | None:
    """Put ``message`` on its stream and wait up to ``wait`` seconds for its outcome: (the
    outcome, the seat's new view when accepted), or None if the worker did not answer."""
    reply = commands.submit_and_wait(app, message, game_type, wait)
    if reply is None:
        return None
    return reply.outcome_doc(), reply.view.encode() if reply.view else None


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
    """200 with the seat's new view and ``command`` (its id, status and events) for an
    accepted command, else the refusal's problem."""
    if outcome["status"] == "accepted":
        raw = seat_view or app.ports.read_models.read(game_id, seat) or b"{}"
        view = orjson.loads(raw)
        view["command"] = {
            k: outcome[k] for k in ("command_id", "status", "events") if k in outcome
        }
        return _json_response(orjson.dumps(view), 200, headers)
    return _outcome_problem(outcome).response(headers)


def _outcome_problem(outcome: dict[str, Any]) -> Problem:
    """The problem for a rejected (or failed) command's stored outcome."""
    problem = Problem.from_game_error(outcome["error"])
    problem.extra = {"command_id": outcome["command_id"], "version": outcome.get("version")}
    return problem
