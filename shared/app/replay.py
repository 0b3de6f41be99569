"""Replay: what every seat and a spectator saw at any version of a game whose log is open.

The web page's replay steps through a finished game version by version. Folding the events in
the browser would mean a second implementation of every engine, so the page asks for the
views at a version and the service folds the log with the engines it plays by. Only a log
anyone may export (a finished game, or any game for an auditor) is replayed: at the end every
hidden fact is public, so showing each seat's view then reveals nothing new.
"""

from __future__ import annotations

from typing import Any

import orjson

from shared.app import queries
from shared.app.context import App
from shared.app.queries import Caller
from shared.events import Envelope
from shared.match.projections import all_views
from shared.match.record import fold


def views_at(app: App, game_id: str, caller: Caller, version: int | None) -> dict[str, Any]:
    """At ``version`` (clamped to 1..the last; None: the last): ``{"game", "version",
    "last", "envelope", "public", "seats"}`` with the envelope appended at that version, the
    spectator's view and one view per seat. ``AppError`` when the caller may not export the
    log (a running game without an auditor key) or there is no such game."""
    lines = queries.export_lines(app, game_id, caller)  # refuses a log that is not open
    envelopes = [Envelope.from_dict(orjson.loads(line)) for line in lines]
    last = envelopes[-1].version
    at = last if version is None else max(1, min(version, last))
    upto = [e for e in envelopes if e.version <= at]
    record = fold(game_id, upto)
    seats, public = all_views(record)
    return {
        "game": game_id,
        "version": at,
        "last": last,
        "envelope": upto[-1].to_dict(),
        "public": public,
        "seats": seats,
    }
