"""One step of a game, decided without the service around it: the engine's command at label
``v<version>`` (``decide_events``), the setup drawn at label ``setup``, a clock's ticks after
any step (``ticked``), a seat's resignation and a timeout bot's move.

Pure (no ports, no ``App``): the worker, the play-out driver and the audit decide through
these, so that what the service appends and what an auditor recomputes cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.app import bots
from shared.events import SEED_REVEALED, SERVICE_EVENTS, NewEvent
from shared.games import errors as rules
from shared.games.base import Engine, step
from shared.games.errors import GameError
from shared.games.kernel import Emit, recorder
from shared.games.rng import Rng, bot_random
from shared.match import clock, fairness
from shared.match.aggregate import Match
from shared.match.aggregate import evolve as match_evolve
from shared.match.projections import view as view_of
from shared.match.record import GameRecord, final_outcome


def decide(
    engine: Engine,
    state: Any,
    seat: int,
    command: Any,
    seed: str,
    version: int,
    *,
    reveal: str | None = None,
) -> tuple[list[Any], Any, NewEvent | None]:
    """The one decide path on a frozen state: ``command`` by ``seat`` decided on ``state`` (a
    game not over) at ``version`` (``decide_on`` on a kernel holding it). Gives (the engine's
    events, the state after them, the ``seed_revealed`` that closes the game when they end
    it, revealing ``reveal`` (the server seed; by default ``seed``), else None). Raises
    GameError: the engine refuses the command, or the command changes nothing.

    Live play and the audit (through ``decide_events``) and every play-out path that writes a
    log call it; the engine's events are handed back as they are so that a play-out can
    encode each once (``playout._sealed``). The fast play-out (``playout._fast``: no log)
    keeps one kernel for the whole game and calls ``decide_on`` itself. Whether the game is
    over before is the caller's to know (a play-out's loop knows it from the step before,
    and checking again cost the play-out 7%); ``decide_events`` checks it."""
    kernel = kernel_of(engine, state)
    events: list[Any] = []
    decide_on(kernel, seat, command, seed, version, events, emitter(kernel, events))
    after = kernel.freeze()
    if engine.outcome(after) is None:
        return events, after, None
    return (
        events,
        after,
        NewEvent(type=SEED_REVEALED, data={"seed": seed if reveal is None else reveal}),
    )


def decide_on(
    kernel: Any,
    seat: int,
    command: Any,
    seed: str,
    version: int,
    events: list[Any],
    emit: Emit,
    *,
    listed: bool = False,
) -> None:
    """The one decide path's step, on a live kernel (``kernel_of``): ``command`` by ``seat``
    applied with the randomness of label ``v<version>``, each event handed to ``emit``
    (``emitter(kernel, events)``: the kernel then holds the state after them, and ``events``,
    empty before, the events). ``listed``: the command is one of the kernel's own
    ``legal_commands`` now (a random bot's pick), applied past the checks where the kernel
    has ``apply_listed`` (the same events). Raises GameError, the kernel untouched: the
    engine refuses the command, or the command changes nothing."""
    rng = Rng(seed, f"v{version}")
    if listed:
        getattr(kernel, "apply_listed", kernel.apply)(seat, command, rng, emit)
    else:
        kernel.apply(seat, command, rng, emit)
    if not events:
        raise GameError(rules.ILLEGAL, "the command changes nothing", rule="no_effect")


def kernel_of(engine: Engine, state: Any) -> Any:
    """A live kernel holding ``state``: the game's own (``KERNEL.thaw``), or for an engine
    without one a ``Folded`` face of its pure functions."""
    kernel_cls = getattr(engine, "KERNEL", None)
    return Folded(engine, state) if kernel_cls is None else kernel_cls.thaw(state)


def emitter(kernel: Any, events: list[Any]) -> Emit:
    """The ``emit`` that ``decide_on`` hands a kernel's events to: each event's mutator run
    and the event appended to ``events`` (a ``Folded`` face has folded them already)."""
    return events.append if isinstance(kernel, Folded) else recorder(kernel, events)


class Folded:
    """The kernel's face for an engine without a kernel (the engine contract does not require
    one): ``apply`` is the engine's ``decide`` and the fold of its events (``base.step``)."""

    __slots__ = ("engine", "state")

    def __init__(self, engine: Engine, state: Any) -> None:
        self.engine = engine
        self.state = state

    def apply(self, seat: int, command: Any, rng: Rng, emit: Emit) -> None:
        """The command's events, folded into ``state``, each handed to ``emit``."""
        events, self.state = step(self.engine, self.state, seat, command, rng)
        for event in events:
            emit(event)

    def to_act(self) -> tuple[int, ...]:
        """The engine's ``to_act`` of the state held."""
        return tuple(self.engine.to_act(self.state))

    def legal_commands(self, seat: int) -> list[Any]:
        """The engine's ``legal_commands`` of the state held."""
        return list(self.engine.legal_commands(self.state, seat))

    def outcome(self) -> dict[str, Any] | None:
        """The engine's ``outcome`` of the state held."""
        outcome: dict[str, Any] | None = self.engine.outcome(self.state)
        return outcome

    def freeze(self) -> Any:
        """The state held (already frozen)."""
        return self.state


def decide_events(
    engine: Engine,
    state: Any,
    seat: int,
    command: Any,
    seed: str,
    version: int,
    *,
    reveal: str | None = None,
) -> tuple[list[NewEvent], Any, list[Any]]:
    """``decide`` spelt as the service appends it: (events to append, a finished game's
    ``seed_revealed`` last among them; the state after them; the engine's events). Raises
    GameError."""
    if engine.outcome(state) is not None:
        raise GameError(rules.GAME_OVER, "the game is over")
    events, state, closing = decide(engine, state, seat, command, seed, version, reveal=reveal)
    new = []
    for e in events:
        doc = engine.event_to_json(e)
        new.append(NewEvent(type=doc["type"], data=doc["data"]))
    if closing is not None:
        new.append(closing)
    return new, state, events


def setup_events(
    engine: Engine, seats: int, options: Mapping[str, Any], seed: str
) -> list[NewEvent]:
    """The engine's opening events, drawn from ``seed`` with label ``setup``."""
    setup = [engine.event_to_json(e) for e in engine.setup(seats, options, Rng(seed, "setup"))]
    return [NewEvent(type=d["type"], data=d["data"]) for d in setup]


def deal_if_ready(
    engine: Engine, match: Match, new: list[NewEvent], server_seed: str
) -> tuple[list[NewEvent], Any]:
    """``new`` and the setup events when ``match`` (after ``new``) waits for nothing more."""
    if fairness.undealt(match):
        return new, None
    dealt = setup_events(engine, len(match.seats), match.options,
                         fairness.play_seed(match, server_seed))  # fmt: skip
    state = None
    for e in dealt:
        state = engine.evolve(state, engine.event_from_json({"type": e.type, "data": e.data}))
    return [*new, *dealt], state


def ticked(
    engine: Engine,
    match: Match,
    before: Any,
    new: list[NewEvent],
    after: Any,
    actor: int,
    now_ms: int | None,
    version: int,
    *,
    acted: bool = True,
) -> list[NewEvent]:
    """``new`` with the clock's events (before a closing ``seed_revealed``), for a game with a
    clock; ``new`` as it is for one without."""
    if match.clock is None:
        return new
    tail = [new.pop()] if new and new[-1].type == SEED_REVEALED else []
    m = match
    for e in new:
        if e.type in SERVICE_EVENTS:
            m = match_evolve(m, e.type, e.data) or m
    over = bool(tail) or (after is not None and final_outcome(m, engine, after) is not None)
    humans = [s.bot is None and not s.open for s in m.seats]
    if now_ms is None:
        if not any(c.armed for c in m.clocks) and not any(humans):
            return [*new, *tail]
        raise ValueError("a game with a clock decides with the command's time (now_ms)")

    def ticks(version_after: int) -> list[NewEvent]:
        return clock.tick_events(
            m.clock,
            m.clocks,
            humans,
            engine.to_act(before) if before is not None else [],
            engine.to_act(after) if after is not None else [],
            actor=actor,
            acted=acted,
            over=over,
            now_ms=now_ms,
            version_after=version_after,
        )

    count = len(ticks(0))
    return [*new, *ticks(version + len(new) + count + len(tail)), *tail]


def resignation(match: Match, seat: int, reason: str, server_seed: str) -> list[NewEvent]:
    """A seat's resignation: the game ends when one seat alone is left un-resigned (the seed
    is revealed); otherwise a bot takes the seat over."""
    if match.seats[seat].resigned:
        raise GameError(rules.ILLEGAL, f"seat {seat} has resigned already", rule="resigned")
    new = [clock.resigned_event(seat, reason)]
    left = sum(1 for i, s in enumerate(match.seats) if i != seat and not s.resigned)
    if left <= 1:
        new.append(NewEvent(type=SEED_REVEALED, data={"seed": server_seed}))
    else:
        new.append(clock.taken_over_event(seat, clock.substitute(match.clock), "resigned"))
    return new


def timeout_bot_move(
    engine: Engine,
    match: Match,
    state: Any,
    seat: int,
    server_seed: str,
    version: int,
    iterations: int | None = None,
    *,
    replay: bool = False,
) -> tuple[dict[str, Any], int | None]:
    """The timeout bot's move for the seat, from the seat's view alone (random if the bot
    finds none), and the iterations it searched when on a time budget (else None). ``match``
    is the match after ``turn_timed_out``. ``replay``: the audit's re-decision, which runs the
    recorded ``iterations`` instead of the clock (``bots.replay``; BotSpecError if they do
    not fit the spec)."""
    assert match.clock is not None
    record = GameRecord(id="", match=match, version=version, head_hash="", state=state)
    seen = view_of(record, seat)
    rng = bot_random(fairness.play_seed(match, server_seed), seat, version)
    spec = dict(match.clock["timeout_bot"])
    if replay:
        command, counted = bots.replay(spec, seen, rng, iterations), iterations
    else:
        decision = bots.decide(spec, seen, rng)
        command, counted = decision.command, decision.iterations
    if command is None:
        command, counted = bots.random_bot(seen, rng), None
    if command is None:
        raise GameError(rules.NOT_YOUR_TURN, f"seat {seat} has nothing to do")
    return dict(command), counted
