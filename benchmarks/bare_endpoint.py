"""The bare yardstick of ``bench_gateway.py``: the least a gateway can do for a command.

A minimal Flask app with one route, ``POST /bare/commands``: it checks a small JSON body by
hand (an object whose ``type`` is a string of 1 to 64 characters, with an optional string
``id`` and an optional integer ``expected_version``, as ``CommandSchema`` asks of a command)
and puts it on one Redis stream with one XADD, then answers 200 with a small JSON body. No
marshmallow, no hooks, no metrics, no auth, no waiting for a worker.

It runs under gunicorn with the gateway's own settings (``deploy/gunicorn.conf.py``: the same
worker class, workers, threads and connections) and the gateway's Redis client
(``shared.adapters.redis.connect``: the same blocking pool), so that the whole path's figures
can be read as a fraction of what the same server, framework and Redis client cost::

    gunicorn -c deploy/gunicorn.conf.py --bind 127.0.0.1:8000 'benchmarks.bare_endpoint:create_app()'
"""

from __future__ import annotations

import json
import os
import secrets
from typing import Any

from flask import Flask, Response, request

from shared.adapters.redis import connect

STREAM = "bare:commands"
MAX_STREAM = 100_000  # approximate cap: a long run must not grow Redis without bound


def _invalid(detail: str) -> Response:
    body = json.dumps({"status": 422, "code": "request/invalid", "detail": detail})
    return Response(body, status=422, mimetype="application/problem+json")


def create_app(url: str | None = None) -> Flask:
    """The bare app on the Redis at ``url`` (default ``REDIS_URL``)."""
    app = Flask(__name__)
    client = connect(url or os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))

    @app.post("/bare/commands")
    def command() -> Response:
        body: Any = request.get_json(force=True, silent=True)
        # The hand check: what CommandSchema requires of every command, nothing per game.
        if not isinstance(body, dict):
            return _invalid("the body must be a JSON object")
        kind = body.get("type")
        if not isinstance(kind, str) or not 1 <= len(kind) <= 64:
            return _invalid("type must be a string of 1 to 64 characters")
        if "id" in body and not isinstance(body["id"], str):
            return _invalid("id must be a string")
        version = body.get("expected_version")
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            return _invalid("expected_version must be an integer")
        cid = secrets.token_hex(12)
        fields = {"command_id": cid, "body": json.dumps(body, separators=(",", ":"))}
        client.xadd(STREAM, fields, maxlen=MAX_STREAM, approximate=True)
        return Response(
            json.dumps({"command_id": cid, "status": "accepted"}),
            status=200,
            mimetype="application/json",
        )

    @app.get("/bare/healthz")
    def healthz() -> Response:
        return Response(b'{"status":"ok"}', mimetype="application/json")

    return app
