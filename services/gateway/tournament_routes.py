"""The tournament and rating endpoints (organizers and auditors)."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, stream_with_context
from flask.views import MethodView

from services.gateway import auth
from services.gateway import tournament_schemas as schemas
from services.gateway.blueprint import (
    SECURITY,
    GamesBlueprint,
    _read,
    application,
    next_cursor,
    paging,
)
from services.gateway.problems import Problem
from shared.app import tournament_data, tournament_views, tournaments
from shared.app.queries import Keys

blp = GamesBlueprint(
    "tournaments", __name__, description="Tournaments of bot games, standings and ratings"
)


def _keys() -> Keys:
    settings = current_app.config["SETTINGS"]
    return Keys(organizers=settings.organizer_keys, auditors=settings.auditor_keys)


def _require(*, auditors: bool) -> None:
    """403 unless the caller holds an organizer key (or an auditor key, when ``auditors``)."""
    token = auth.bearer()
    keys = _keys()
    if keys.is_organizer(token) or (auditors and keys.is_auditor(token)):
        return
    who = "an organizer or auditor key" if auditors else "an organizer key"
    if token is None:  # nothing sent: authenticate first (401), rather than "not you" (403)
        raise Problem(401, "auth/required", f"this needs {who}", title="Unauthorized")
    raise Problem(403, "auth/organizer_required", f"this needs {who}", title="Forbidden")


@blp.route("/v1/tournaments")
class Tournaments(MethodView):
    """Starting and listing tournaments."""

    @blp.arguments(schemas.CreateTournamentSchema())
    @blp.response(201, schemas.TournamentCreatedSchema)
    @blp.doc(security=SECURITY)
    def post(self, body: dict[str, Any]) -> Any:
        """Start a tournament of bot games (organizer key). 422 names the field at fault: an
        unknown bot, too few entrants for `players`, too many games, or a game count the
        format cannot divide (the answer says which counts it can)."""
        _require(auditors=False)
        settings = current_app.config["SETTINGS"]
        tid, plan = _read(
            tournaments.create_tournament,
            application(),
            body,
            max_games=settings.max_tournament_games,
        )
        location = f"/v1/tournaments/{tid}"
        return (
            {
                "id": tid,
                "status": "queued",
                "progress": {"done": 0, "total": plan.games},
                "location": location,
            },
            201,
            {"Location": location},
        )

    @blp.arguments(schemas.TournamentQuerySchema(), location="query")
    @blp.response(200, schemas.TournamentListSchema)
    @blp.doc(security=SECURITY)
    def get(self, query: dict[str, Any]) -> Any:
        """Every tournament, oldest first (organizer or auditor key)."""
        _require(auditors=True)
        offset, limit = paging(query)
        found = tournament_views.list_tournaments(application(), offset=offset, limit=limit + 1)
        return {"tournaments": found[:limit], **next_cursor(offset, limit, len(found))}


@blp.route("/v1/tournaments/<tournament_id>")
class Tournament(MethodView):
    """One tournament."""

    @blp.arguments(schemas.TournamentQuerySchema(), location="query")
    @blp.response(200, schemas.TournamentSchema)
    @blp.doc(security=SECURITY)
    def get(self, query: dict[str, Any], tournament_id: str) -> Any:
        """Status, progress, standings with 95% intervals, ratings, the head-to-head matrix
        and a page of its games (`offset`, `limit`); organizer or auditor key."""
        _require(auditors=True)
        offset, limit = paging(query)
        return _read(
            tournament_views.tournament_doc, application(), tournament_id, offset=offset,
            limit=limit,
        )  # fmt: skip

    @blp.response(200, schemas.TournamentSchema)
    @blp.doc(security=SECURITY)
    def delete(self, tournament_id: str) -> Any:
        """Cancel (organizer key): games not yet started are dropped; the standings cover the
        finished ones. A finished tournament stays finished."""
        _require(auditors=False)
        return _read(tournament_views.cancel_tournament, application(), tournament_id)


@blp.route("/v1/tournaments/<tournament_id>/games.jsonl.gz")
class TournamentExports(MethodView):
    """A tournament's games in one download."""

    @blp.response(
        200,
        content_type="application/gzip",
        description="gzip of JSON lines, one a finished game in game order: "
        '`{"id", "tournament": {"id", "index"}, "events": [...]}`, `events` its export',
    )
    @blp.doc(security=SECURITY)
    def get(self, tournament_id: str) -> Any:
        """Every finished game's log, in game order, wherever it is kept (organizer or auditor
        key). Each line's `events` are the game's export (`GET /v1/games/{id}/export`), line
        by line: `tabletop audit --file` checks them once written one game a file."""
        _require(auditors=True)
        lines = _read(tournament_data.export_lines, application(), tournament_id)
        return Response(
            stream_with_context(tournament_data.gzipped(lines)),
            mimetype="application/gzip",
            headers={
                "Content-Disposition": f'attachment; filename="{tournament_id}-games.jsonl.gz"'
            },
        )


@blp.route("/v1/tournaments/<tournament_id>/results.csv")
class TournamentResults(MethodView):
    """A tournament's games as a table."""

    @blp.response(
        200,
        content_type="text/csv",
        description="a header, then a row a finished game in game order: tournament, index, "
        "game_id, game, per seat s `seat<s>_entrant`, `_name`, `_bot`, `_rank`, `_score`, "
        "then winners (seats, space-separated), draw, version",
    )
    @blp.doc(security=SECURITY)
    def get(self, tournament_id: str) -> Any:
        """One row per finished game (organizer or auditor key), ready for pandas
        (`pd.read_csv(url, storage_options={"Authorization": ...})`) or DuckDB."""
        _require(auditors=True)
        text = _read(tournament_data.results_csv, application(), tournament_id)
        return Response(
            stream_with_context(chunk.encode() for chunk in text),
            mimetype="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{tournament_id}-results.csv"'},
        )


@blp.route("/v1/ratings")
class Ratings(MethodView):
    """Leaderboards of bots."""

    @blp.arguments(schemas.RatingsQuerySchema(), location="query")
    @blp.response(200, schemas.RatingsSchema)
    def get(self, query: dict[str, Any]) -> Any:
        """The public ladder: bot specs of one game type rated (openskill Plackett-Luce)
        over every finished all-bot game, live and tournament (every format), best ordinal
        (mu - 3 sigma) first, each with its 95% interval `mu_ci`; each setting of a bot is
        its own row, and registered bots are on it only when they opted in (`ladder` in
        `POST /v1/bots`). No key needed; 422 for an unknown `game`."""
        return _read(tournament_views.ratings_doc, application(), query["game"])
