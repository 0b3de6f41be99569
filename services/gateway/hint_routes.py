"""The v1 endpoint of hints: what a bot would play now for a stuck seat."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from services.gateway import limits_guard, schemas
from services.gateway.blueprint import (
    SECURITY,
    _client_owner,
    _seat_of,
    application,
    blp,
    problems,
)
from services.gateway.problems import Problem
from shared.app import searches
from shared.app.errors import AppError


@blp.route("/v1/games/<game_id>/suggestion")
class Suggestion(MethodView):
    """A hint for a stuck player."""

    @blp.arguments(schemas.SuggestionQuerySchema(), location="query")
    @blp.response(200, schemas.SuggestionSchema)
    @problems(
        {
            422: "the seat has nothing to do now, or a bad bot setting",
            429: "`request/rate_limited`: too many hints, or this seat's last `ismcts` hint is "
            "still being searched (one at a time); see `Retry-After`",
            503: "`service/unavailable`: no search worker answered within the budget and 8 s; "
            "see `Retry-After`",
        }
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
