"""Projections: what each seat, a spectator or an auditor may see of a game.

A projection is a pure function of the folded record, so ``rebuild`` from the events gives
the same bytes (``canonical_json``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from shared.events import GAME_CREATED, SERVICE_EVENTS, Envelope
from shared.games.base import Engine
from shared.record import GameRecord

AUDITOR = "auditor"  # reader that may see everything


def game_view(engine: Engine, state: Any, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (None: spectator) may know of ``state``: the engine's view plus ``seat``,
    ``to_act``, ``legal_commands`` (client JSON) and ``outcome``. A bot decides from this."""
    doc = dict(engine.view(state, seat))
    to_act = list(engine.to_act(state))
    legal: list[dict[str, Any]] = []
    if seat is not None and seat in to_act:
        # An engine's view may list them already (client JSON): not worth listing twice.
        legal = doc.get("legal_commands")
        if legal is None:
            legal = [engine.command_to_json(c) for c in engine.legal_commands(state, seat)]
    doc.update(seat=seat, to_act=to_act, legal_commands=legal, outcome=engine.outcome(state))
    return doc


def view(record: GameRecord, seat: int | None) -> dict[str, Any]:
    """The view document for ``seat`` (None: spectator): ``game_view`` plus the service's
    fields ``id``, ``game``, ``version``, ``seats`` and ``seed_sha256``."""
    doc = game_view(record.engine, record.state, seat)
    doc.update(
        id=record.id,
        game=record.game,
        version=record.version,
        seats=[_public_seat(i, s) for i, s in enumerate(record.seats)],
        seed_sha256=record.seed_sha256,
    )
    return doc


def all_views(record: GameRecord) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(one view per seat, the public view)."""
    return [view(record, s) for s in range(len(record.seats))], view(record, None)


def visible_events(
    engine: Engine, envelopes: Iterable[Envelope], reader: int | str | None
) -> list[dict[str, Any]]:
    """Envelopes as ``reader`` (a seat, None for spectators, ``AUDITOR``) may read them.

    Auditors get every field, with the hash chain. Others get each event redacted by the
    engine (wholly secret events left out) and no ``hash``/``prev_hash``: a hash over hidden
    content with few possible values (a disc is a flower or a skull) would give it away to
    anyone who tries each value, and the next event's ``prev_hash`` is that same hash.
    """
    out: list[dict[str, Any]] = []
    for env in envelopes:
        doc = env.to_dict()
        if reader == AUDITOR:
            out.append(doc)
            continue
        del doc["hash"], doc["prev_hash"]
        if env.type == GAME_CREATED:
            doc["data"] = _public_creation(engine, env.data)
        if env.type in SERVICE_EVENTS:
            out.append(doc)
            continue
        seat = reader if isinstance(reader, int) else None
        event = engine.event_from_json({"type": env.type, "data": env.data})
        shown = engine.redact(event, seat)
        if shown is None:
            continue
        if shown.get("data") != env.data:
            doc["redacted"] = True
        doc["type"] = shown.get("type", env.type)
        doc["data"] = shown.get("data", {})
        out.append(doc)
    return out


def _public_creation(engine: Engine, data: Any) -> dict[str, Any]:
    """``game_created`` without secret options: a fixed ``deal`` holds every hand."""
    secret = getattr(engine, "SECRET_OPTIONS", ("deal",))
    options = dict(data.get("options") or {})
    hidden = [k for k in secret if k in options]
    if not hidden:
        return dict(data)
    for k in hidden:
        options[k] = "hidden"
    return {**data, "options": options}


def _public_seat(index: int, seat: dict[str, Any] | Any) -> dict[str, Any]:
    out = {"seat": index, "name": seat.get("name")}
    if seat.get("bot"):
        out["bot"] = seat["bot"]
    return out
