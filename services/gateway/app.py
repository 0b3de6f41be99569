"""The Flask application factory."""

from __future__ import annotations

import http
import logging
import time
from typing import Any

from flask import Flask
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from werkzeug.exceptions import HTTPException

from services.gateway import (
    bot_routes,
    docs_page,
    http_extras,
    limits_guard,
    observe,
    openapi_contract,
    problem_pages,
    routes,
    schemas,
    tournament_routes,
    web_routes,
)
from services.gateway.problems import PROBLEM_TYPE, Problem, from_http_exception, store_full
from shared import games
from shared.adapters import metrics, redis_health
from shared.adapters.redis import REDIS_ERRORS
from shared.adapters.redis import Client as RedisClient
from shared.app import tournament_views
from shared.app.context import App
from shared.app.ports import BotDispatcher
from shared.bootstrap import DispatcherFactory, bootstrap
from shared.config import Settings

log = logging.getLogger(__name__)

API_INFO = {
    "description": (
        f"Event-sourced board games ({', '.join(s.title for s in games.specs())}) for "
        "third-party clients. Errors are application/problem+json with a stable `code`."
    ),
}


class ProblemApi(Api):
    """flask-smorest's Api answering every HTTP error as a problem body."""

    ERROR_SCHEMA = schemas.ProblemSchema

    def _register_responses(self) -> None:
        """Document the error responses as ``application/problem+json`` problem bodies."""
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if not 100 <= status < 200 and status not in (204, 304):
                response["schema"] = self.ERROR_SCHEMA
            prepare_response(response, self.spec, PROBLEM_TYPE)
            self.spec.components.response(status.name, response, lazy=True)
        default: dict[str, Any] = {"description": "An error", "schema": self.ERROR_SCHEMA}
        prepare_response(default, self.spec, PROBLEM_TYPE)
        self.spec.components.response("DEFAULT_ERROR", default, lazy=True)

    def handle_http_exception(self, error: HTTPException) -> Any:
        """Problem body for routing, method and validation errors (a 405 with its ``Allow``
        header)."""
        headers = {}
        valid = getattr(error, "valid_methods", None)
        if valid:
            headers["Allow"] = ", ".join(sorted(valid))
        return from_http_exception(error).response(headers)


def create_app(
    settings: Settings | None = None,
    *,
    client: RedisClient | None = None,
    dispatcher: BotDispatcher | DispatcherFactory | None = None,
    application: App | None = None,
) -> Flask:
    """The gateway app on the application ``bootstrap`` builds (Redis, and Celery for bots
    unless a dispatcher is given), or on ``application``."""
    settings = settings or Settings.from_env()
    app = Flask(__name__)
    app.config.update(
        API_TITLE="tabletop",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        API_SPEC_OPTIONS={"info": API_INFO},
        SETTINGS=settings,
        MAX_CONTENT_LENGTH=64 * 1024,
    )
    if application is None:
        if dispatcher is None:
            from services.celery_client import make_dispatcher

            dispatcher = make_dispatcher(settings)
        application = bootstrap(settings, client=client, dispatcher=dispatcher)
    app.extensions["tabletop"] = application
    api = ProblemApi(app)
    api.spec.components.security_scheme(
        "bearer",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "a seat token, an organizer key or an auditor key",
        },
    )
    api.register_blueprint(routes.blp)
    api.register_blueprint(tournament_routes.blp)
    api.register_blueprint(bot_routes.blp)
    _document_errors(api)
    openapi_contract.install(api.spec)
    app.register_blueprint(docs_page.docs)
    app.register_blueprint(problem_pages.pages)
    app.register_blueprint(web_routes.web)
    http_extras.install(app, settings.cors_origins)
    observe.install(app, settings, application.ports.client)
    limits_guard.install(app, settings, application.ports.client)
    app.register_error_handler(Problem, lambda p: p.response())
    for error in REDIS_ERRORS:  # a cluster's own errors too (no reachable node...)
        app.register_error_handler(error, _redis_down)
    # A full Redis's refusal wrapped by another library (kombu's OperationalError when a task
    # cannot be queued on a broker that is full): a 503 too, never a 500.
    app.register_error_handler(Exception, _wrapped_store_full)
    # A running tournament's document says when its games wait for a full Redis.
    tournament_views.install_store_check(_store_refusal)
    return app


# Errors an operation can answer, besides those it documents itself: by what it takes.
RATE_LIMITED = {("post", "/v1/games"), ("post", "/v1/games/{game_id}/commands"),
                ("post", "/v1/games/{game_id}/seats/{seat}/join"),
                ("post", "/v1/games/{game_id}/seats/{seat}/leave"),
                ("get", "/v1/games/{game_id}/suggestion"),
                ("get", "/v1/games/{game_id}/audit")}  # fmt: skip


def _document_errors(api: Api) -> None:
    """Add to every operation the problem responses it can give (401 and 403 where a token or
    key is read, 404 for a path naming a game or tournament, 409, 413 and 422 for a body,
    422 for a query, 429 where limited, 503 always), so clients and fuzzers know them."""
    spec = api.spec
    names = {401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "CONFLICT",
             413: "REQUEST_ENTITY_TOO_LARGE", 422: "UNPROCESSABLE_ENTITY",
             429: "TOO_MANY_REQUESTS", 503: "SERVICE_UNAVAILABLE"}  # fmt: skip
    for path, operations in spec._paths.items():  # apispec keeps the registered paths here
        for method, op in operations.items():
            if method not in ("get", "post", "delete", "put", "patch"):
                continue
            codes = {503}
            if op.get("security"):
                codes |= {401, 403}
            if "{game_id}" in path or "{tournament_id}" in path or "{name}" in path:
                codes.add(404)
            if method == "post":
                codes |= {409, 413, 422}
            if op.get("parameters"):
                codes.add(422)
            if (method, path) in RATE_LIMITED:
                codes.add(429)
            responses = op.setdefault("responses", {})
            for code in sorted(codes):
                responses.setdefault(str(code), spec.components.get_ref("response", names[code]))


def _redis_down(error: Exception) -> Any:
    if redis_health.store_full(error):
        return _store_full(error)
    # The request's game id and path are bound to this line (services/gateway/observe.py).
    log.error("redis error: %s", error)
    return Problem(
        503,
        "service/unavailable",
        "the game store is unavailable; retry later",
        title="Service Unavailable",
    ).response({"Retry-After": "1"})


# A full Redis refuses every request that writes: one line a minute says so, the metric counts
# each (``tabletop_store_full_total{process="gateway"}``), /readyz has the figures.
STORE_FULL_LOG_EVERY_S = 60.0
_store_full_said = [-STORE_FULL_LOG_EVERY_S]


def _store_full(error: BaseException) -> Any:
    """503 ``service/store_full`` with ``Retry-After``: Redis refused a write for want of
    memory (maxmemory, policy noeviction). No traceback, and at most a line a minute."""
    metrics.STORE_FULL.labels("gateway").inc()
    now = time.monotonic()
    if now - _store_full_said[0] < STORE_FULL_LOG_EVERY_S:
        return store_full().response()
    _store_full_said[0] = now
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    log.warning(
        "redis is full and refuses writes: requests that write are answered 503 "
        "service/store_full (GET /readyz has its memory; said at most once a minute); %s",
        first,
    )
    return store_full().response()


def _wrapped_store_full(error: Exception) -> Any:
    """A full Redis's refusal raised from inside another library's error; any other error is
    raised again, to be answered as it would have been (a 500, logged with its traceback)."""
    if redis_health.store_full(error):
        return _store_full(error)
    raise error


def _store_refusal(application: App) -> str | None:
    """Why the application's Redis refuses writes now (its memory figures), or None."""
    return redis_health.write_refusal(application.ports.client)
