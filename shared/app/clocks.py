"""The deadline scheduler's step: a seat's turn clock that ran out gets a time-out command, and
the bots of a game that stalled are woken again. Typed results (``Fired``) say which.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.app import bots
from shared.app.commands import submit_command
from shared.app.context import App
from shared.app.messages import CommandMessage
from shared.app.projecting import BOT_KEY, BOT_STALL_S, project, wake
from shared.app.service_commands import TimeOut
from shared.match import clock
from shared.match.record import fold

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Woken:
    """A stalled game's bot woken again."""

    game_id: str
    seat: int


@dataclass(slots=True)
class Fired:
    """What one step of the deadline scheduler did: the time-out command ids it sent, and the
    bots of stalled games it woke again."""

    timeouts: list[str] = field(default_factory=list)
    woken: list[Woken] = field(default_factory=list)


def fire_due_deadlines(app: App, *, retry_s: float = 2.0, limit: int = 100) -> Fired:
    """The deadline scheduler's step: claim the due deadlines (each put back ``retry_s`` later,
    until a worker's decision cancels or moves it) and send a time-out command for each one
    the game still has armed, or wake the bots of a game that stalled. Returns the time-out
    command ids sent and the bots woken (``Fired``). Safe to run in many
    processes at once: a time-out's id is its seat and armed version, so a repeat is a
    duplicate, and the worker refuses a stale one; a bot woken twice sends one command id."""
    p = app.ports
    fired = Fired()
    for key in p.clock.claim_due(retry_s, limit):
        game_id, _, seat_text = key.rpartition(":")
        raw = p.read_models.read(game_id, None)
        doc = json.loads(raw) if raw else None
        if doc is None or doc.get("outcome"):
            p.clock.cancel_deadline(key)
            continue
        if seat_text == BOT_KEY:
            fired.woken += _wake_stalled(app, doc, key)
            continue
        shown = doc.get("clock")
        if shown is None or not seat_text.isdigit():
            p.clock.cancel_deadline(key)
            continue
        seat = int(seat_text)
        mine = shown["seats"][seat] if seat < len(shown["seats"]) else {}
        if mine.get("deadline") is None:
            p.clock.cancel_deadline(key)
            continue
        armed = int(mine["armed_version"])
        message = CommandMessage(
            command_id=f"{clock.TIMEOUT_PREFIX}{seat}-{armed}",
            game_id=game_id,
            seat=seat,
            body=TimeOut(armed).to_body(),
        )
        submit_command(app, message, str(doc["game"]))
        fired.timeouts.append(message.command_id)
    return fired


def _wake_stalled(app: App, public: Mapping[str, Any], key: str) -> list[Woken]:
    """Wake again the bots to act in a game that has not moved for ``BOT_STALL_S`` (the same
    tasks as the first wake: the same command ids), and look again that much later."""
    game_id = str(public["id"])
    # Its projections first, from its log: a write Redis refused half-way (full, a pipeline's
    # commands each taking or refusing their write) can leave a bot's view a version behind,
    # and a bot deciding from it would be woken again and again, never to move.
    with app.ports.unit():
        project(app, fold(game_id, app.ports.store.read(game_id)))
    seats = public["seats"]
    woken = []
    for seat in public["to_act"]:
        name = seats[seat].get("bot")
        if name is None:
            continue
        slow = name in bots.BOTS and bots.BOTS[name].slow
        wake(app, game_id, seat, int(public["version"]), name, slow)
        woken.append(Woken(game_id, int(seat)))
    if woken:
        log.warning("game %s stalled at version %s: bots woken again", game_id, public["version"])
        app.ports.clock.set_deadline(key, app.ports.clock.epoch() + BOT_STALL_S)
    else:
        app.ports.clock.cancel_deadline(key)
    return woken
