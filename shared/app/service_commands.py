"""Every command a seat may send, as a typed message decided by one handler: the service's own
commands (``Join``, ``Leave``, ``Contribute``, ``Resign``, ``TimeOut``) and a ``Move`` for the
engine. ``parse`` reads a command body's ``type`` once; ``decide_any`` dispatches on the
message's class through ``HANDLERS`` (the cosmicpython message bus's registry), so no other
module switches on a command's name.

Pure (no ports, no ``App``): the worker decides through ``decide_any`` and the audit re-decides
through it, so a log the service writes is the log the audit expects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from shared.app import bots, errors, names
from shared.app.steps import deal_if_ready, decide_events, resignation, ticked, timeout_bot_move
from shared.events import ENTROPY_CONTRIBUTED, SEAT_CHANGED, SEED_REVEALED, NewEvent
from shared.games import errors as rules
from shared.games.base import Engine
from shared.games.errors import GameError
from shared.match import clock, fairness
from shared.match.aggregate import Match, Seat, seat_doc
from shared.match.aggregate import evolve as match_evolve
from shared.match.record import final_outcome

# Fields of a message are kept as the body sent them (``Any``): the handler checks them, so
# that a refusal names the field the way the worker always named it.


@dataclass(frozen=True, slots=True)
class Join:
    """Take an open seat (the gateway's join endpoint, for the player it gives a token)."""

    TYPE: ClassVar[str] = "join_seat"
    BEFORE_DEAL: ClassVar[bool] = True  # sent while the game waits: no game-over check
    ACTS: ClassVar[bool] = True  # the seat acted (its clock stops)
    name: Any
    token_sha256: Any
    client_seed: Any = None

    def to_body(self) -> dict[str, Any]:
        """The body on the command stream."""
        body = {"type": self.TYPE, "name": self.name, "token_sha256": self.token_sha256}
        if self.client_seed is not None:
            body["client_seed"] = self.client_seed
        return body

    def identity(self, engine: Engine) -> dict[str, Any]:
        """What the log records of it (a resent id must carry the same)."""
        return {"type": self.TYPE, "name": self.name}


@dataclass(frozen=True, slots=True)
class Leave:
    """Give a seat back before the deal."""

    TYPE: ClassVar[str] = "leave_seat"
    BEFORE_DEAL: ClassVar[bool] = True
    ACTS: ClassVar[bool] = True

    def to_body(self) -> dict[str, Any]:
        """The body on the command stream."""
        return {"type": self.TYPE}

    def identity(self, engine: Engine) -> dict[str, Any]:
        """What the log records of it."""
        return {"type": self.TYPE}


@dataclass(frozen=True, slots=True)
class Contribute:
    """A seat's client seed, for a game of contributed fairness."""

    TYPE: ClassVar[str] = fairness.CONTRIBUTE
    BEFORE_DEAL: ClassVar[bool] = True
    ACTS: ClassVar[bool] = True
    client_seed: Any = None

    def to_body(self) -> dict[str, Any]:
        """The body on the command stream (no seed field when none was sent)."""
        body: dict[str, Any] = {"type": self.TYPE}
        if self.client_seed is not None:
            body["client_seed"] = self.client_seed
        return body

    def identity(self, engine: Engine) -> dict[str, Any]:
        """What the log records of it."""
        return {"type": self.TYPE, "client_seed": self.client_seed}


@dataclass(frozen=True, slots=True)
class Resign:
    """A seat gives up: a bot plays on for it, or the game ends with one seat left."""

    TYPE: ClassVar[str] = clock.RESIGN
    BEFORE_DEAL: ClassVar[bool] = False
    ACTS: ClassVar[bool] = False  # a resignation is no move: the clocks run on

    def to_body(self) -> dict[str, Any]:
        """The body on the command stream."""
        return {"type": self.TYPE}

    def identity(self, engine: Engine) -> dict[str, Any]:
        """What the log records of it."""
        return {"type": self.TYPE}


@dataclass(frozen=True, slots=True)
class TimeOut:
    """A due deadline (the deadline scheduler's alone). ``move``: the timeout bot's move as
    recorded, which the audit re-decides with (None: the bot chooses it now)."""

    TYPE: ClassVar[str] = clock.TIME_OUT
    BEFORE_DEAL: ClassVar[bool] = False
    ACTS: ClassVar[bool] = False
    armed_version: Any
    move: Mapping[str, Any] | None = None

    def to_body(self) -> dict[str, Any]:
        """The body on the command stream."""
        body: dict[str, Any] = {"type": self.TYPE, "armed_version": self.armed_version}
        if self.move is not None:
            body["move"] = dict(self.move)
        return body

    def identity(self, engine: Engine) -> dict[str, Any]:
        """What the log records of it, but the bot's move (chosen when it was applied)."""
        return {"type": self.TYPE, "armed_version": self.armed_version}


@dataclass(frozen=True, slots=True)
class Move:
    """A command for the engine (any body whose type no service command has)."""

    BEFORE_DEAL: ClassVar[bool] = False
    ACTS: ClassVar[bool] = True
    body: Mapping[str, Any]

    def to_body(self) -> dict[str, Any]:
        """The body on the command stream."""
        return dict(self.body)

    def identity(self, engine: Engine) -> dict[str, Any]:
        """The command as the engine parses it (GameError when it does not)."""
        out: dict[str, Any] = engine.command_to_json(engine.parse_command(self.body))
        return out


ServiceCommand = Join | Leave | Contribute | Resign | TimeOut
Command = ServiceCommand | Move
# Fields a recorded command carries that its sender's body does not decide (a resent id is
# compared without them): a timeout bot's move is chosen when the time-out is applied.
DECIDED_WHEN_APPLIED: dict[type, frozenset[str]] = {TimeOut: frozenset({"move"})}
# Service commands a client sends on ``POST /v1/games/{id}/commands`` (the others have
# endpoints of their own, or are the service's).
CLIENT_COMMANDS: tuple[type, ...] = (Contribute, Resign)


def parse(body: Mapping[str, Any]) -> Command:
    """The message a command body is: a service command by its ``type``, else a ``Move``."""
    kind = body.get("type")
    if kind == Join.TYPE:
        return Join(body.get("name"), body.get("token_sha256"), body.get("client_seed"))
    if kind == Leave.TYPE:
        return Leave()
    if kind == Contribute.TYPE:
        return Contribute(body.get("client_seed"))
    if kind == Resign.TYPE:
        return Resign()
    if kind == TimeOut.TYPE:
        move = body.get("move")
        return TimeOut(body.get("armed_version"), move if isinstance(move, Mapping) else None)
    return Move(body)


def client_command(body: Mapping[str, Any]) -> ServiceCommand | None:
    """The service command a client may send among its moves (a client seed, a
    resignation), or None: the body is for the engine to parse."""
    command = parse(body)
    return command if isinstance(command, CLIENT_COMMANDS) else None  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Turn:
    """What a command is decided on: the game as it stands and the command's seat and time."""

    engine: Engine
    match: Match
    state: Any
    seat: int
    server_seed: str
    version: int
    now_ms: int | None


class Decided(NamedTuple):
    """A decided command: the events to append, the state after them, the command as the log
    records it (a tuple too, so ``new, after, recorded = decide_any(...)`` reads it)."""

    events: list[NewEvent]
    state: Any
    recorded: dict[str, Any]


def decide_any(
    engine: Engine,
    match: Match,
    state: Any,
    seat: int,
    body: Mapping[str, Any],
    server_seed: str,
    version: int,
    now_ms: int | None = None,
) -> Decided:
    """Any command a seat may send at ``version``, decided by its message's handler: a client
    seed for a game of contributed fairness (the deal comes with the last one), a join or a
    leave, a resignation, a time-out (the deadline scheduler's), or a move, decided with the
    game's play seed. A game with a clock adds its clock's events, decided from ``now_ms``
    (the command's time). The worker and the audit both decide through here. Raises
    GameError."""
    command = parse(body)
    if not command.BEFORE_DEAL:
        _check_in_play(engine, match, state)
    turn = Turn(engine, match, state, seat, server_seed, version, now_ms)
    new, after, recorded = HANDLERS[type(command)](command, turn)
    new = ticked(engine, match, state, new, after, seat, now_ms, version, acted=command.ACTS)
    return Decided(new, after, recorded)


def _check_in_play(engine: Engine, match: Match, state: Any) -> None:
    """GameError unless the game is dealt and not over (a move, a resignation, a time-out)."""
    if state is not None and final_outcome(match, engine, state) is not None:
        raise GameError(rules.GAME_OVER, "the game is over")
    if fairness.undealt(match):
        open_seats, seeds = match.open_seats, fairness.waiting_for(match)
        why = []
        if open_seats:
            why.append(f"seats {', '.join(map(str, open_seats))} are joined")
        if seeds:
            why.append(f"seats {', '.join(map(str, seeds))} send their client seed")
        raise GameError(
            errors.ErrorCode.GAME_WAITING, f"the game is dealt once {' and '.join(why)}"
        )


# ---- the handlers ---------------------------------------------------------------------------


def _move(command: Move, turn: Turn) -> Decided:
    engine = turn.engine
    parsed = engine.parse_command(command.body)
    new, after, _ = decide_events(
        engine, turn.state, turn.seat, parsed, fairness.play_seed(turn.match, turn.server_seed),
        turn.version, reveal=turn.server_seed,
    )  # fmt: skip
    return Decided(new, after, engine.command_to_json(parsed))


def _resign(command: Resign, turn: Turn) -> Decided:
    new = resignation(turn.match, turn.seat, "resigned", turn.server_seed)
    return Decided(new, turn.state, {"type": Resign.TYPE})


def _time_out(command: TimeOut, turn: Turn) -> Decided:
    """A due deadline: ``turn_timed_out``, then the timeout bot's move for the seat (its
    ``takeover_after``-th time-out in a row also hands it the seat), or the seat's
    resignation (``forfeit``). The bot's move is recorded in the command (``move``), so an
    audit re-decides that move (a bot on a time budget may choose otherwise another time)."""
    engine, match, state, seat = turn.engine, turn.match, turn.state, turn.seat
    server_seed, version, now_ms = turn.server_seed, turn.version, turn.now_ms
    c = clock.check_time_out(
        match.clock, match.clocks, seat, {"armed_version": command.armed_version}, now_ms
    )
    assert match.clock is not None and now_ms is not None
    timed_out = clock.timed_out_event(c, seat, now_ms)
    m = match_evolve(match, timed_out.type, timed_out.data)
    assert m is not None
    recorded: dict[str, Any] = {"type": TimeOut.TYPE, "armed_version": c.armed_version}
    if match.clock["on_timeout"] == clock.FORFEIT:
        return Decided([timed_out, *resignation(m, seat, "forfeit", server_seed)], state, recorded)
    move: Mapping[str, Any] | None = command.move
    counted = None
    if move is None:
        move, counted = timeout_bot_move(engine, m, state, seat, server_seed, version)
    parsed = engine.parse_command(move)
    moved, after, _ = decide_events(
        engine, state, seat, parsed, fairness.play_seed(m, server_seed), version,
        reveal=server_seed,
    )  # fmt: skip
    recorded["move"] = engine.command_to_json(parsed)
    if counted is not None:  # a timeout bot searching on a time budget: the audit replays it
        recorded[bots.BOT_ITERATIONS] = counted
    tail = [moved.pop()] if moved and moved[-1].type == SEED_REVEALED else []
    if timed_out.data["in_a_row"] >= match.clock["takeover_after"] and not tail:
        moved.append(clock.taken_over_event(seat, match.clock["timeout_bot"], "timeouts"))
    return Decided([timed_out, *moved, *tail], after, recorded)


def _check_client_seed(client_seed: Any) -> str:
    """The client seed, or GameError ``command/invalid`` naming the field."""
    if not isinstance(client_seed, str) or not 0 < len(client_seed) <= fairness.MAX_CLIENT_SEED:
        raise GameError(
            rules.INVALID_COMMAND,
            "client_seed must be a string of 1 to 256 characters",
            errors={"client_seed": ["a string of 1 to 256 characters"]},
        )
    return client_seed


def _contribute(command: Contribute, turn: Turn) -> Decided:
    match, seat = turn.match, turn.seat
    if match.fairness != fairness.CONTRIBUTED:
        raise GameError(rules.ILLEGAL, "this game takes no client seeds", rule="not_contributed")
    if seat not in fairness.waiting_for(match):
        raise GameError(
            rules.ILLEGAL,
            f"seat {seat} has no client seed to send (a bot's, or sent already)",
            rule="no_contribution_due",
        )
    client_seed = _check_client_seed(command.client_seed)
    data = {"seat": seat, "client_seed": client_seed}
    new = [NewEvent(type=ENTROPY_CONTRIBUTED, data=data)]
    after = match_evolve(match, ENTROPY_CONTRIBUTED, data)
    assert after is not None
    new, state = deal_if_ready(turn.engine, after, new, turn.server_seed)
    return Decided(new, state, {"type": Contribute.TYPE, "client_seed": client_seed})


def _join(command: Join, turn: Turn) -> Decided:
    match, seat = turn.match, turn.seat
    if seat not in match.open_seats:
        raise GameError(errors.ErrorCode.SEAT_TAKEN, f"seat {seat} is not open")
    name, token = command.name, command.token_sha256
    problem = names.name_error(name)
    if problem is not None:
        raise GameError(rules.INVALID_COMMAND, f"name: {problem}",
                        errors={"name": [problem]})  # fmt: skip
    assert isinstance(name, str)  # name_error refuses anything else
    if not isinstance(token, str) or len(token) != 64:
        raise GameError(rules.INVALID_COMMAND, "a join carries the new seat's token hash")
    occupant = seat_doc(Seat(name=name, token_sha256=token))
    new = [NewEvent(type=SEAT_CHANGED, data={"seat": seat, "occupant": occupant})]
    after = match_evolve(match, SEAT_CHANGED, new[0].data)
    assert after is not None
    client_seed = command.client_seed
    if client_seed is not None and after.fairness == fairness.CONTRIBUTED:
        if not isinstance(client_seed, str) or not 0 < len(client_seed) <= 256:
            raise GameError(rules.INVALID_COMMAND, "client_seed must be 1 to 256 characters",
                            errors={"client_seed": ["1 to 256 characters"]})  # fmt: skip
        data = {"seat": seat, "client_seed": client_seed}
        new.append(NewEvent(type=ENTROPY_CONTRIBUTED, data=data))
        after = match_evolve(after, ENTROPY_CONTRIBUTED, data)
        assert after is not None
    new, state = deal_if_ready(turn.engine, after, new, turn.server_seed)
    return Decided(new, state, {"type": Join.TYPE, "name": name})


def _leave(command: Leave, turn: Turn) -> Decided:
    if not fairness.undealt(turn.match):
        raise GameError(rules.ILLEGAL, "a seat can be left only before the deal", rule="dealt")
    occupant = seat_doc(Seat(name=f"seat {turn.seat}", open=True))
    new = [NewEvent(type=SEAT_CHANGED, data={"seat": turn.seat, "occupant": occupant})]
    return Decided(new, None, {"type": Leave.TYPE})


# The one registry: each message's class and the handler that decides it.
HANDLERS: dict[type, Callable[[Any, Turn], Decided]] = {
    Move: _move,
    Join: _join,
    Leave: _leave,
    Contribute: _contribute,
    Resign: _resign,
    TimeOut: _time_out,
}
