"""The gateway's operations endpoints and request instrumentation: ``GET /metrics``
(Prometheus text format), ``GET /readyz`` and request metrics; log lines carry the request's
game id. Plain Flask routes, outside the OpenAPI document (they are for operators, not
clients)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from flask import Flask, Response, g, request
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from services.gateway import ready
from shared import games, logs, metrics_dir
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

    @app.before_request
    def _started() -> None:
        g.tabletop_started = time.perf_counter()
        game_id = (request.view_args or {}).get("game_id")
        g.tabletop_log = logs.context(game_id=game_id, method=request.method, path=request.path)
        g.tabletop_log.__enter__()

    @app.after_request
    def _count(response: Response) -> Response:
        started = g.pop("tabletop_started", None)
        route = request.url_rule.rule if request.url_rule is not None else UNMATCHED
        metrics.HTTP_REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        if started is not None:
            took = time.perf_counter() - started
            metrics.HTTP_LATENCY.labels(request.method, route).observe(took)
        return response

    @app.teardown_request
    def _unbind(_: BaseException | None) -> None:
        bound = g.pop("tabletop_log", None)
        if bound is not None:
            bound.__exit__(None, None, None)

    def metrics_view() -> Response:
        # Multiprocess mode (under gunicorn): every worker's files summed; else this process.
        if os.environ.get(metrics_dir.ENV):
            body = generate_latest(metrics.multiprocess_registry())
        else:
            body = generate_latest(REGISTRY)
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
