"""The v1 endpoints of seats before and at the deal: joining an open seat, leaving it, and a
seat's client seed for contributed fairness."""

from __future__ import annotations

import json
import secrets
from typing import Any

from flask.views import MethodView

from services.gateway import limits_guard, schemas
from services.gateway.blueprint import (
    SECURITY,
    SECURITY_OPTIONAL,
    _client_command_id,
    _json_response,
    _no_token_or_a_key,
    _prefer_wait,
    _read,
    _seat_of,
    _token_hash,
    application,
    blp,
    problems,
)
from services.gateway.command_routes import (
    _decided,
    _outcome_response,
    _pending_response,
    _send_and_wait,
)
from services.gateway.problems import Problem
from shared.app import queries, service_commands
from shared.app.messages import CommandMessage, new_command_id, token_hash


@blp.route("/v1/games/<game_id>/seats/<int:seat>/entropy")
class Entropy(MethodView):
    """A seat's client seed for a game of contributed fairness."""

    @blp.arguments(schemas.EntropySchema())
    @blp.response(200, schemas.ViewSchema)
    @problems({422: "not a contributed game, or this seat's seed was sent already"})
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
            body=service_commands.Contribute(body["client_seed"]).to_body(),
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
    @problems({409: "`seat/taken`: someone joined first (of two joins at once, one wins)"})
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
        join = service_commands.Join(body["name"], token_hash(token), body.get("client_seed"))
        cid = new_command_id()
        message = CommandMessage(command_id=cid, game_id=game_id, seat=seat, body=join.to_body())
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
            command_id=cid, game_id=game_id, seat=seat, body=service_commands.Leave().to_body(),
            by=_token_hash(),
        )  # fmt: skip
        _decided(app, message, game_type, "leave")
        return _json_response(_read(queries.view_json, app, game_id, None))
