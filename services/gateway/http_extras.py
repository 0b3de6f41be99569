"""Browser and cache support for the gateway: CORS for configured origins, and ETags on views
and event pages (``If-None-Match`` answers 304)."""

from __future__ import annotations

import hashlib

from flask import Flask, Response, request

CORS_HEADERS = "Authorization, Content-Type, Prefer, Idempotency-Key, If-None-Match, Last-Event-ID"
CORS_METHODS = "GET, POST, DELETE, OPTIONS"


def install(app: Flask, origins: frozenset[str]) -> None:
    """Add the CORS headers for ``origins`` (``*`` for any) and answer ETag revalidations."""

    @app.after_request
    def _after(response: Response) -> Response:
        origin = request.headers.get("Origin")
        if origin and ("*" in origins or origin in origins):
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = (
                "ETag, Location, Retry-After, Preference-Applied"
            )
            response.vary.add("Origin")
            if request.method == "OPTIONS":
                response.headers["Access-Control-Allow-Methods"] = CORS_METHODS
                response.headers["Access-Control-Allow-Headers"] = CORS_HEADERS
                response.headers["Access-Control-Max-Age"] = "600"
        return response


def conditional(response: Response) -> Response:
    """``response`` (a 200 JSON body) with a strong ETag over its bytes; a 304 without a body
    when the request's ``If-None-Match`` names it already. Authorization is part of what the
    body depends on, so the answer varies by it."""
    if response.status_code != 200:
        return response
    tag = '"' + hashlib.sha256(response.get_data()).hexdigest()[:32] + '"'
    response.headers["ETag"] = tag
    response.vary.add("Authorization")
    wanted = request.headers.get("If-None-Match", "")
    if tag in {t.strip() for t in wanted.split(",")} or wanted.strip() == "*":
        not_modified = Response(status=304)
        not_modified.headers["ETag"] = tag
        not_modified.vary.add("Authorization")
        return not_modified
    return response
