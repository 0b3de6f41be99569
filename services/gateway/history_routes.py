"""The v1 endpoints of a game's history: the live feed, the events, the whole log's export and
the audit report."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, request, stream_with_context
from flask.views import MethodView

from services.gateway import auth, feed, http_extras, limits_guard, schemas
from services.gateway.blueprint import (
    SECURITY_OPTIONAL,
    _json_response,
    _read,
    application,
    blp,
)
from services.gateway.problems import Problem
from shared.app import queries
from shared.app.context import App


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
