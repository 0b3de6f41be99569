"""The web page: ``/`` serves a single-page client to play, watch and replay every game, and
``/ladder`` leads to its public ladder of bots.

Everything the page loads comes from this server (no CDN, no build step): its ES modules and
style from ``services/gateway/web/`` (Preact and htm vendored under ``web/vendor/``), the
audit's JavaScript verifier from ``verifier/`` (served as it is, not copied, so the page runs
the very code the audit documents), the data each game's spec gives its page (``web_assets``:
a game's own data, such as its tiles' edges and areas), and
the views of a replayed version. The page plays through the public ``/v1`` API only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, request, send_from_directory
from werkzeug.exceptions import NotFound

from services.gateway import auth, limits_guard
from services.gateway.blueprint import application
from services.gateway.problems import Problem
from shared import games
from shared.app import replay
from shared.app.errors import AppError

web = Blueprint("web", __name__)

WEB_DIR = Path(__file__).with_name("web")
# The verifier lives at the top of the repository (an editable install runs from there).
VERIFIER_DIR = Path(__file__).resolve().parents[2] / "verifier"

# Browsers refuse a module script served as application/octet-stream, and Python's mimetypes
# table does not know .mjs everywhere.
TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".html": "text/html",
    ".json": "application/json",
}


def _static(directory: Path, name: str) -> Response:
    # max_age=0 with the file's ETag: a reload revalidates (a 304) and never runs a stale module.
    response = send_from_directory(directory, name, max_age=0)
    kind = TYPES.get(Path(name).suffix)
    if kind is not None:
        response.mimetype = kind
    return response


@web.get("/")
def page() -> Response:
    """The page (one HTML shell; the lobby, boards and replay are routed in the page)."""
    return _static(WEB_DIR, "index.html")


@web.get("/ladder")
def ladder() -> Response:
    """The public ladder's address: the page at its ``#/ladder`` route (``?game=`` kept when
    it names a game type)."""
    game = request.args.get("game")
    query = f"?game={game}" if game in games.names() else ""
    return Response(status=302, headers={"Location": f"/#/ladder{query}"})


@web.get("/favicon.ico")
def favicon() -> Response:
    """The page's icon where browsers look for it unasked (a 404 there would be logged)."""
    return _static(WEB_DIR, "icon.svg")


@web.get("/web/<path:name>")
def asset(name: str) -> Response:
    """The page's modules, style and vendored libraries."""
    return _static(WEB_DIR, name)


@web.get("/web/verifier/<name>")
def verifier(name: str) -> Response:
    """The audit's verifier modules (``fairness.mjs``), imported by the page as they are."""
    if not name.endswith(".mjs"):
        raise NotFound()
    return _static(VERIFIER_DIR, name)


def _asset_route(name: str, build: Callable[[], Any]) -> None:
    """``/web/<name>``: a document a game's spec gives its web page (``web_assets``), built
    once per process."""

    @cache
    def body() -> str:
        return json.dumps(build(), separators=(",", ":"))

    def serve() -> Response:
        return Response(body(), mimetype="application/json",
                        headers={"Cache-Control": "public, max-age=3600"})  # fmt: skip

    endpoint = "asset_" + name.replace(".", "_").replace("-", "_")
    web.add_url_rule(f"/web/{name}", endpoint, serve, methods=["GET"])


for _spec in games.specs():
    for _name, _build in _spec.web_assets.items():
        _asset_route(_name, _build)


@web.get("/web/replay/<game_id>")
def replay_views(game_id: str) -> Response:
    """Every seat's view and the spectator's at ``?version=N`` (default: the last) of a game
    whose log the caller may export: anyone once it is over, auditors at any time."""
    app = application()
    limits_guard.check("replay")  # each answer folds the whole log again
    raw = request.args.get("version")
    if raw is not None and not raw.isdigit():
        raise Problem(422, "request/invalid", "version must be a whole number",
                      title="Unprocessable Entity")  # fmt: skip
    try:
        doc = replay.views_at(app, game_id, auth.caller_for(app, game_id),
                              int(raw) if raw else None)  # fmt: skip
    except AppError as exc:
        raise Problem.from_app_error(exc) from exc
    return Response(json.dumps(doc, separators=(",", ":")), mimetype="application/json")
