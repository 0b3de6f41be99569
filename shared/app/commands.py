"""A command's way through the service: submitted onto its game type's stream (the gateway's
and bots' path), decided by the worker (``decide_command``: who may send it, its message's
handler, the append, the projections, the outcome and the waiting client's reply in one
round trip), or reported as a server fault.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from shared.app import bots, errors, service_commands
from shared.app.context import App
from shared.app.messages import (
    BOT_COMMAND_PREFIX,
    CommandMessage,
    Reply,
    accepted,
    rejected,
    shard_of,
)
from shared.app.projecting import hand_off, project, slow_bot, wake
from shared.events import SEED_REVEALED, SERVICE_EVENTS, NewEvent, seal
from shared.games import errors as rules
from shared.games.errors import GameError
from shared.match import clock
from shared.match.record import GameRecord, fold
from shared.store import DuplicateCommand, StaleVersion


def submit_command(app: App, message: CommandMessage, game_type: str) -> str:
    """Put a command on its game type's command stream (the gateway's and bots' path), with a
    ``pending`` outcome so the command is known (not a 404) until its outcome replaces it."""
    p = app.ports
    p.bus.put(
        game_type,
        shard_of(message.game_id, p.shards),
        message.to_fields(),
        game_id=message.game_id,
        command_id=message.command_id,
        pending=_pending(message),
    )
    return message.command_id


def submit_and_wait(
    app: App, message: CommandMessage, game_type: str, timeout: float
) -> Reply | None:
    """``submit_command``, then the worker's reply (``wait_reply``) within ``timeout`` seconds,
    in one round trip on Redis; None when none came in time."""
    p = app.ports
    raw = p.bus.put_and_wait(
        game_type,
        shard_of(message.game_id, p.shards),
        message.to_fields(),
        game_id=message.game_id,
        command_id=message.command_id,
        pending=_pending(message),
        timeout=timeout,
    )
    return None if raw is None else Reply.from_wire(raw)


def _pending(message: CommandMessage) -> str:
    return json.dumps(
        {"command_id": message.command_id, "status": "pending", "seat": message.seat},
        separators=(",", ":"),
    )


# ---- deciding (the worker) ----------------------------------------------------------------------


def decide_command(
    app: App, message: CommandMessage, ack: Callable[[Any], None] | None = None
) -> dict[str, Any]:
    """Apply one command and return its outcome (also stored and handed to a waiting client).

    ``ack(batch)`` may add the stream acknowledgement to the same round trip that writes the
    projections and the reply, after the events are safely appended. Safe to call twice with
    the same message: a command already applied is answered as accepted without appending
    again. A fault of the store propagates (nothing is acknowledged; the worker retries).
    """
    gid, cid = message.game_id, message.command_id
    record: GameRecord | None = None
    waiting: frozenset[int] | None = None
    keep = False
    try:
        outcome, record, waiting = _apply(app, message)
    except LookupError:
        outcome = rejected(cid, errors.not_found(gid), None)
    except ReusedCommandId as exc:
        # The first command of this id stands (its outcome stays readable); only the client
        # that sent another body under it hears of the refusal.
        cached = app.records.get(gid)
        outcome = rejected(cid, exc, cached.version if cached else None)
        keep = True
    except GameError as exc:
        cached = app.records.get(gid)
        outcome = rejected(cid, exc, cached.version if cached else None)
    outcome["seat"] = message.seat  # only this seat (and auditors) may read it back
    with app.ports.unit(ack):
        views = project(app, record) if record is not None else None
        if record is not None:
            _sync_roster(app, record)
        _complete(app, message, outcome, views, keep=keep)
    if record is not None:
        hand_off(app, record, waiting, message.seat)
    elif outcome["status"] == "rejected":
        _retry_bot(app, message)
    return outcome


def _sync_roster(app: App, record: GameRecord) -> None:
    """After a join or a leave: the directory's token hashes (what gateways authenticate by)
    follow the match's roster, in the same batch as the projections."""
    entry = app.entry(record.id)
    hashes = record.match.token_hashes
    if entry is not None and tuple(entry.token_hashes) != tuple(hashes):
        app.ports.directory.set_token_hashes(record.id, hashes)
        with app.lock:
            app.entries.pop(record.id, None)  # read again on the next use


def report_failure(
    app: App, message: CommandMessage, ack: Callable[[Any], None] | None = None
) -> None:
    """Tell a waiting client that its command hit a server fault it will not recover from (the
    fault itself stays in the logs and the dead-letter stream, not in what the client reads)."""
    outcome = rejected(message.command_id, errors.server_error(), None) | {
        "status": "error",
        "seat": message.seat,
    }
    with app.ports.unit(ack):
        _complete(app, message, outcome, None)


# What json.dumps(separators=(",", ":")) builds on every call, built once (it keeps no state).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def _complete(
    app: App,
    message: CommandMessage,
    outcome: dict[str, Any],
    views: list[str] | None,
    *,
    keep: bool = False,
) -> None:
    body = _COMPACT.encode(outcome)
    refused = outcome["status"] != "accepted"
    # The waiting client gets its new view with the outcome: one round trip less, and the
    # gateway never parses the view.
    seat_view = None
    if views is not None and not refused and message.seat < len(views):
        seat_view = views[message.seat]
    stored = body
    if refused:
        # Refusals cost their sender nothing, so what one keeps is short-lived (the bus's
        # refusal TTL) and small: not the command id again, which the key already names and
        # a client may make 100 characters long (``queries.command_status`` puts it back).
        stored = _COMPACT.encode({k: v for k, v in outcome.items() if k != "command_id"})
    app.ports.bus.complete(
        message.game_id,
        message.command_id,
        stored,
        Reply(body, seat_view).to_wire(),
        keep=keep,
        refused=refused,
    )


def _apply(
    app: App, message: CommandMessage
) -> tuple[dict[str, Any], GameRecord, frozenset[int] | None]:
    """(outcome, record to publish, seats that were to act before it — None when unknown)
    or GameError."""
    gid, cid, seat = message.game_id, message.command_id, message.seat
    fresh = gid not in app.records
    record = app.load(gid, fresh=False)
    store = app.ports.store
    for _attempt in range(6):
        at = app.ports.clock.now()
        try:
            new, state, parsed = _decide(app, record, message, clock.ms_of(at))
        except GameError:
            if not fresh:  # the cache may be behind another worker: look again
                record, fresh = app.load(gid), True
                continue
            seen = store.applied(gid, cid)
            if seen is None:
                raise
            # Applied before (a redelivery after a crash): answer as it was answered, if it is
            # the same command.
            _check_same_command(app, record, message, seen[0])
            return accepted(cid, record, seen), record, None
        envs = seal(
            new,
            after_version=record.version,
            prev_hash=record.head_hash,
            command_id=cid,
            seat=seat,
            at=at,
            seed=secret_seed(app, gid),
            command=parsed,
        )
        try:
            result = store.append(gid, envs, expected_version=record.version, command_id=cid)
        except StaleVersion:
            record, fresh = app.load(gid), True  # another worker got there first
            continue
        except DuplicateCommand as dup:
            record = app.load(gid)
            _check_same_command(app, record, message, dup.first)
            return accepted(cid, record, (dup.first, dup.last)), record, None
        waiting = (
            frozenset(record.engine.to_act(record.state)) if record.state is not None else None
        )
        if any(e.type in SERVICE_EVENTS and e.type != SEED_REVEALED for e in new):
            record = fold(gid, envs, record)  # the match changed too (a client seed)
        else:
            seed = new[-1].data["seed"] if new[-1].type == SEED_REVEALED else record.seed
            record = replace(
                record, state=state, version=envs[-1].version, head_hash=envs[-1].hash, seed=seed
            )
        app.remember(record)
        return accepted(cid, record, (result.first, result.last)), record, waiting
    raise errors.stale("the game kept changing; try again")


def _same_decision(app: App, record: GameRecord, message: CommandMessage) -> bool:
    """In a simultaneous phase, whether ``expected_version`` still stands: the seat is still
    to act, and every event since is another seat's move in the same phase (no phase or round
    began). A client that sends the version it read is then not refused for the others'
    moves, which change nothing it decides on."""
    engine = record.engine
    expected = message.expected_version
    if (
        not engine.TRAITS.simultaneous
        or expected is None
        or not 0 < expected < record.version
        or record.state is None
        or message.seat not in engine.to_act(record.state)
    ):
        return False
    since = app.ports.store.read(record.id, after=expected)
    boundaries = set(engine.TRAITS.phase_events)
    return all(e.seat != message.seat and e.type not in boundaries for e in since)


class ReusedCommandId(GameError):
    """A command id already applied, sent again with another body."""


def _check_same_command(
    app: App, record: GameRecord, message: CommandMessage, first_version: int
) -> None:
    """Raise ReusedCommandId unless ``message`` is the command its id applied at
    ``first_version`` (the same seat and command, as the engine parses it)."""
    [env] = app.ports.store.read(record.id, after=first_version - 1, limit=1)
    command = service_commands.parse(message.body)
    recorded = dict(env.command or {})
    # A timed search's iteration count is recorded with its command, not part of it; nor is
    # what was decided when it was applied (a timeout bot's move).
    for key in (bots.BOT_ITERATIONS, bots.BOT_TURN,
                *service_commands.DECIDED_WHEN_APPLIED.get(type(command), ())):  # fmt: skip
        recorded.pop(key, None)
    try:
        parsed: Any = command.identity(record.engine)
    except GameError:
        parsed = None
    contributed = isinstance(command, service_commands.Contribute)
    if contributed and env.seat == message.seat and recorded != parsed:
        # A seat's client seed has one command id (``s<seat>-entropy``): another seed is not a
        # client's id mix-up but a second seed, which must not replace the first.
        raise ReusedCommandId(
            errors.ErrorCode.FAIRNESS_SEED_ALREADY_SENT,
            f"seat {message.seat} sent its client seed already (version {first_version}); "
            "the first one counts and cannot be changed",
        )
    if env.seat != message.seat or recorded != parsed:
        raise ReusedCommandId(
            errors.ErrorCode.REQUEST_IDEMPOTENCY_KEY_REUSED,
            f"command id {message.command_id} was used for another command (version "
            f"{first_version}); send a new id",
        )


def _decide(
    app: App, record: GameRecord, message: CommandMessage, now_ms: int
) -> tuple[list[NewEvent], Any, dict[str, Any]]:
    """(events to append, state after them, the command as parsed) or GameError; ``now_ms``
    is the command's time (its envelopes' ``at``)."""
    expected = message.expected_version
    if (
        expected is not None
        and expected != record.version
        and not _same_decision(app, record, message)
    ):
        raise errors.stale(f"expected version {expected}, game is at {record.version}")
    engine = record.engine
    if record.outcome is not None:
        raise GameError(rules.GAME_OVER, "the game is over")
    seat = message.seat
    if not 0 <= seat < len(record.match.seats):
        raise GameError(
            errors.ErrorCode.SEAT_NOT_FOUND,
            f"no seat {seat} in this game: it has {len(record.match.seats)} seats, "
            f"numbered 0 to {len(record.match.seats) - 1}",
        )
    # A time-out is the deadline scheduler's alone (clients' command ids start with s<seat>-).
    by_clock = message.command_id.startswith(clock.TIMEOUT_PREFIX)
    if by_clock != isinstance(service_commands.parse(message.body), service_commands.TimeOut):
        raise GameError(rules.INVALID_COMMAND, "a time-out is sent by the turn clock only")
    # Who may act for a seat is the match's say, not a token cache's: a bot's seat takes only
    # its bot's commands, a human's seat only its player's.
    by_bot = message.command_id.startswith(BOT_COMMAND_PREFIX)
    occupant = record.match.seats[seat]
    if not by_clock and by_bot != (occupant.bot is not None):
        played_by = "a bot" if not by_bot else "its player"
        raise GameError(rules.NOT_YOUR_TURN, f"seat {seat} is played by {played_by}")
    if message.by is not None and not occupant.open and message.by != occupant.token_sha256:
        # The gateway's roster was behind: this token no longer holds the seat.
        raise GameError(
            errors.ErrorCode.AUTH_INVALID_TOKEN, f"this token does not hold seat {seat}"
        )
    new, after, recorded = service_commands.decide_any(
        engine,
        record.match,
        record.state,
        seat,
        message.body,
        secret_seed(app, record.id),
        record.version,
        now_ms,
    )
    counted = message.body.get(bots.BOT_ITERATIONS)
    if by_bot and counted is not None:
        # The iterations a bot's search on a time budget ran: recorded with its command (and
        # so hashed), so that an audit replays the same search. Only a bot's own command
        # records one (a player's body may say anything: it is dropped with the other keys
        # the engine ignores).
        if isinstance(counted, bool) or not isinstance(counted, int) or counted < 0:
            raise GameError(rules.INVALID_COMMAND, f"{bots.BOT_ITERATIONS} must be a count")
        recorded = {**recorded, bots.BOT_ITERATIONS: counted}
    turn = message.body.get(bots.BOT_TURN)
    if by_bot and turn is not None:
        # A registered bot's turn (what it was sent, what came of it): recorded with the
        # command, so an audit checks the body it was sent (``bot_turns.turn_fault``).
        if not isinstance(turn, Mapping) or occupant.bot != bots.REGISTERED:
            raise GameError(rules.INVALID_COMMAND, f"{bots.BOT_TURN} is a registered bot's")
        recorded = {**recorded, bots.BOT_TURN: dict(turn)}
    return new, after, recorded


def secret_seed(app: App, game_id: str) -> str:
    """The game's secret seed (for deciding and for the service's own bots); LookupError."""
    entry = app.entry(game_id)
    if entry is None:
        raise LookupError(game_id)
    return entry.seed


def _retry_bot(app: App, message: CommandMessage) -> None:
    """A bot's refused move (the game moved on under it): ask it again if it still has to act,
    once per newer version, so a simultaneous phase cannot stall on it."""
    prefix, _, decided = message.command_id.rpartition("-")
    record = app.records.get(message.game_id)
    if (
        record is None
        or not prefix.startswith(BOT_COMMAND_PREFIX)
        or not decided.isdigit()
        or record.version <= int(decided)
        or message.seat not in record.engine.to_act(record.state)
    ):
        return
    wake(app, record.id, message.seat, record.version,
          record.match.seats[message.seat].bot, slow_bot(record, message.seat))  # fmt: skip
