"""Projections: what each seat, a spectator or an auditor may see of a game.

A projection is a pure function of the folded record, so ``rebuild`` from the events gives
the same bytes (``canonical_json``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from shared.events import (
    BOT_ITERATIONS,
    BOT_TURN,
    BOT_TURN_PUBLIC,
    GAME_CREATED,
    SERVICE_EVENTS,
    Envelope,
)
from shared.games.base import Engine
from shared.match.aggregate import public_data
from shared.match.clock import TIME_OUT, clock_doc
from shared.match.fairness import CONTRIBUTE, view_doc
from shared.match.record import GameRecord

AUDITOR = "auditor"  # reader that may see everything
GAME_OVER = "game_over"  # every engine's phase once its game is over


def game_view(engine: Engine, state: Any, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (None: spectator) may know of ``state``: the engine's view plus ``seat``,
    ``to_act``, ``legal_commands`` (client JSON) and ``outcome``. A bot decides from this."""
    doc = dict(engine.view(state, seat))
    to_act = list(engine.to_act(state))
    legal: list[dict[str, Any]] = []
    if seat is not None and seat in to_act:
        # An engine's view may list them already (client JSON): not worth listing twice.
        listed: list[dict[str, Any]] | None = doc.get("legal_commands")
        if listed is not None:
            legal = listed
        else:
            legal = [engine.command_to_json(c) for c in engine.legal_commands(state, seat)]
    doc.update(seat=seat, to_act=to_act, legal_commands=legal, outcome=engine.outcome(state))
    return doc


def view(record: GameRecord, seat: int | None) -> dict[str, Any]:
    """The view document for ``seat`` (None: spectator): ``game_view`` plus the service's
    fields ``id``, ``game``, ``version``, ``seats``, ``seed_sha256`` and ``head_hash`` (and
    ``fairness`` for a game of contributed fairness: before its deal the view is only that, in
    phase ``waiting``)."""
    return _view(record, seat, record.engine, record.seats, any(record.match.resigned))


def _view(
    record: GameRecord,
    seat: int | None,
    engine: Engine,
    seats: tuple[Mapping[str, Any], ...],
    resigned: bool,
) -> dict[str, Any]:
    """``view``, given what every view of the record shares: ``record.engine``,
    ``record.seats`` and whether any seat resigned."""
    if record.state is None:
        doc: dict[str, Any] = {
            "phase": "waiting",
            "seat": seat,
            "to_act": [],
            "legal_commands": [],
            "outcome": None,
        }
    else:
        doc = game_view(engine, record.state, seat)
        if resigned:
            doc["outcome"] = record.outcome
            if doc["outcome"] is not None:
                # Won by resignation (or a forfeit): nobody acts any more, and the phase says
                # so as it does for a game played out, whatever ended it.
                doc.update(phase=GAME_OVER, to_act=[], legal_commands=[])
    doc.update(
        id=record.id,
        game=record.game,
        version=record.version,
        seats=[_public_seat(i, s) for i, s in enumerate(seats)],
        seed_sha256=record.seed_sha256,
        head_hash=record.head_hash,
    )
    if record.match.tournament is not None:
        doc["tournament"] = dict(record.match.tournament)
    if not record.match.listed:
        doc["listed"] = False
    shown = clock_doc(record.match.clock, record.match.clocks)
    if shown is not None:
        doc["clock"] = shown
    fair = view_doc(record.match)
    if fair is not None:
        doc["fairness"] = fair
        if seat is not None and seat in fair["waiting_for"]:
            doc["legal_commands"] = [{"type": CONTRIBUTE, "client_seed": "template"}]
    return doc


def all_views(record: GameRecord) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(one view per seat, the public view); what they share is looked up once."""
    engine, seats, resigned = record.engine, record.seats, any(record.match.resigned)
    views = [_view(record, s, engine, seats, resigned) for s in range(len(seats))]
    return views, _view(record, None, engine, seats, resigned)


def visible_events(
    engine: Engine, envelopes: Iterable[Envelope], reader: int | str | None
) -> list[dict[str, Any]]:
    """Envelopes as ``reader`` (a seat, None for spectators, ``AUDITOR``) may read them.

    Auditors get every field. Others get each event redacted by the engine (wholly secret
    events left out), with the same ``hash`` and ``prev_hash``: every hash is salted with a
    secret from the seed (``events.event_salt``), so it commits to the hidden content without
    giving it away (no one can test a guess of a disc or a price against it), and a player can
    check after the game that the exported history is the one it was shown. A recorded
    ``command`` goes through the same redaction: its sender reads it whole, everyone else
    without the fields the engine declares secret (``TRAITS.secret_command_fields``).
    """
    out: list[dict[str, Any]] = []
    seat = reader if isinstance(reader, int) else None
    for env in envelopes:
        doc = env.to_dict()
        if reader == AUDITOR:
            out.append(doc)
            continue
        if env.command is not None:
            doc["command"] = redact_command(engine, env.command, env.seat, seat)
        if env.type in SERVICE_EVENTS:
            if env.type == GAME_CREATED:
                doc["data"] = _public_creation(engine, env.data)
            else:
                doc["data"] = public_data(env.type, env.data)
            out.append(doc)
            continue
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


def redact_command(
    engine: Engine, command: Mapping[str, Any], sender: int | None, reader: int | None
) -> dict[str, Any]:
    """A recorded command as ``reader`` may read it: whole for its sender, else without its
    secret fields (and ``redacted: true`` when any were removed)."""
    if reader is not None and reader == sender:
        return dict(command)
    # A timed search's iteration count (``bots.BOT_ITERATIONS``) is hidden too: how many
    # iterations fit in the budget depends on what the search explored, and so on the seat's
    # hidden hand. The audit needs it only with the seed, after the game: the export has it.
    secret = (*engine.TRAITS.secret_command_fields.get(str(command.get("type")), ()),
              BOT_ITERATIONS)  # fmt: skip
    shown = {k: v for k, v in command.items() if k not in secret}
    turn = command.get(BOT_TURN)
    if isinstance(turn, Mapping):
        # A registered bot's latency and failure can tell its hand (it thinks longer, or
        # answers wrong, on some hands): its sender's and the export's alone.
        shown[BOT_TURN] = {k: turn[k] for k in BOT_TURN_PUBLIC if k in turn}
        if len(shown[BOT_TURN]) != len(turn):
            shown["redacted"] = True
    move = command.get("move")
    if command.get("type") == TIME_OUT and isinstance(move, Mapping):
        # The move a timeout bot made for the seat is as secret as the seat's own.
        shown["move"] = redact_command(engine, move, sender, reader)
        if shown["move"].get("redacted"):
            shown["redacted"] = True
    if len(shown) != len(command):
        shown["redacted"] = True
    return shown


def _public_creation(engine: Engine, data: Any) -> dict[str, Any]:
    """``game_created`` without secret options (a fixed ``deal`` holds every hand) and without
    token hashes."""
    data = public_data(GAME_CREATED, data)
    options = dict(data.get("options") or {})
    hidden = [k for k in engine.TRAITS.secret_options if k in options]
    if not hidden:
        return data
    for k in hidden:
        options[k] = "hidden"
    return {**data, "options": options}


def _public_seat(index: int, seat: Mapping[str, Any]) -> dict[str, Any]:
    # ``seat`` is ``Seat.public()``: a name, and a bot's name and settings.
    return {"seat": index, **seat}


def projection_json(doc: Mapping[str, Any]) -> str:
    """The bytes of a projection: compact JSON in the (deterministic) order the code built it,
    so a rebuild from the events writes the same bytes. (orjson: the same text as
    ``json.dumps(separators=(",", ":"), ensure_ascii=False)``, several times faster.)"""
    return orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS).decode()
