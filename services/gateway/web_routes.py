"""The web page: ``/`` serves a single-page client to play, watch and replay every game.

Everything the page loads comes from this server (no CDN, no build step): its ES modules and
style from ``services/gateway/web/`` (Preact and htm vendored under ``web/vendor/``), the
audit's JavaScript verifier from ``verifier/`` (served as it is, not copied, so the page runs
the very code the audit documents), the Isle of Skye tile data from the engine's own data, and
the views of a replayed version. The page plays through the public ``/v1`` API only.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, request, send_from_directory
from werkzeug.exceptions import NotFound

from services.gateway import auth, limits_guard
from services.gateway.problems import Problem
from services.gateway.routes import application
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


@web.get("/web/skye-tiles.json")
def skye_tiles() -> Response:
    """The Isle of Skye tiles as the engine plays them (its overrides applied), without the
    data's provenance notes: what the page needs to draw terrain, roads and objects."""
    return Response(_skye_tiles(), mimetype="application/json",
                    headers={"Cache-Control": "public, max-age=3600"})  # fmt: skip


@cache
def _skye_tiles() -> str:
    from shared.games.skye import data

    keep = ("id", "edges", "center_terrain", "areas", "roads", "features", "scroll",
            "has_whisky", "income_gold", "player_color")  # fmt: skip
    tiles: dict[str, Any] = {}
    for key in ("castle_tiles", "landscape_tiles"):
        for raw in data.TILES_DOC[key]:
            patched = {**raw, **data.TILE_OVERRIDES.get(raw["id"], {})}
            tiles[raw["id"]] = {k: patched[k] for k in keep if k in patched}
    return json.dumps({"tiles": tiles}, separators=(",", ":"))


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
