"""The gateway's operations endpoints and request instrumentation: ``GET /metrics``
(Prometheus text format), ``GET /readyz`` and request metrics; log lines carry the request's
game id. Plain Flask routes, outside the OpenAPI document (they are for operators, not
clients)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import structlog
from flask import Flask, Response, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from services.gateway import ready
from shared import games
from shared.adapters import metrics
from shared.config import Settings

UNMATCHED = "<unmatched>"  # a 404 for a path no route matches: one label, not one per path


def game_types() -> list[str]:
    """The game types whose engine loads (the ones that have workers)."""
    out = []
    for name in games.names():
        try:
            games.get(name)
        except KeyError:
            continue
        out.append(name)
    return out


def install(app: Flask, settings: Settings, client: Any) -> None:
    """Add the hooks and the two endpoints to ``app``; ``client`` is its Redis client (None on
    the in-memory adapters: no streams to report, no workers to wait for)."""
    stream_registry = CollectorRegistry()
    if client is not None:
        streams = metrics.command_streams(game_types(), settings.shards)
        stream_registry.register(metrics.StreamCollector(client, streams))

    # The labelled children, kept: ``labels()`` takes a lock and builds the key on every call,
    # and two of them ran for every request (py-spy, BENCHMARKS.md). Label values are bounded
    # (route templates, methods, statuses), so the dict is too.
    counted: dict[tuple[str, str, str], Any] = {}
    timed: dict[tuple[str, str], Any] = {}

    @app.before_request
    def _started() -> None:
        g.tabletop_started = time.perf_counter()
        req = request._get_current_object()  # type: ignore[attr-defined]  # one proxy lookup
        game_id = (req.view_args or {}).get("game_id")
        fields = {"method": req.method, "path": req.path}
        if game_id is not None:  # as logs.context: None values are left out
            fields["game_id"] = game_id
        # Bound directly, reset from the tokens at teardown: what logs.context does, without
        # its two generator context managers per request.
        g.tabletop_log = structlog.contextvars.bind_contextvars(**fields)

    @app.after_request
    def _count(response: Response) -> Response:
        started = g.pop("tabletop_started", None)
        req = request._get_current_object()  # type: ignore[attr-defined]
        route = req.url_rule.rule if req.url_rule is not None else UNMATCHED
        key = (req.method, route, str(response.status_code))
        child = counted.get(key)
        if child is None:
            child = counted[key] = metrics.HTTP_REQUESTS.labels(*key)
        child.inc()
        if started is not None:
            took = time.perf_counter() - started
            hist = timed.get(key[:2])
            if hist is None:
                hist = timed[key[:2]] = metrics.HTTP_LATENCY.labels(*key[:2])
            hist.observe(took)
        return response

    @app.teardown_request
    def _unbind(_: BaseException | None) -> None:
        tokens = g.pop("tabletop_log", None)
        if tokens is None:
            return
        try:
            structlog.contextvars.reset_contextvars(**tokens)
        except (ValueError, RuntimeError):  # another context (a streamed body): just unbind
            structlog.contextvars.unbind_contextvars(*tokens)

    def metrics_view() -> Response:
        # Multiprocess mode (under gunicorn): every worker's files summed, else this process;
        # with the stack's stream and Celery workers' files (tabletop run gives their
        # directories), so one scrape has the command counters and decide times too.
        body = generate_latest(metrics.stack_registry())
        body += generate_latest(stream_registry)
        return Response(body, content_type=CONTENT_TYPE_LATEST)

    idle_ms = int(os.environ.get("TABLETOP_READY_IDLE_MS", ready.READY_IDLE_MS))

    def readyz_view() -> Response:
        if client is None:  # in memory: decided in this process, nothing to wait for
            ok, doc = True, {"status": "ready", "redis": "none", "games": {}, "missing": []}
        else:
            ok, doc = ready.readiness(client, game_types(), idle_ms)
        return Response(
            json.dumps(doc), status=200 if ok else 503, mimetype="application/json",
            headers={"Cache-Control": "no-store"},
        )  # fmt: skip

    app.add_url_rule("/metrics", "metrics", metrics_view, methods=["GET"])
    app.add_url_rule("/readyz", "readyz", readyz_view, methods=["GET"])
