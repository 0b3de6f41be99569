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
    """The one decide path: ``command`` by ``seat`` decided on ``state`` (a game not over) at
    ``version`` with the randomness of label ``v<version>``. Gives (the engine's events, the
    state after them, the ``seed_revealed`` that closes the game when they end it, revealing
    ``reveal`` (the server seed; by default ``seed``), else None). Raises GameError: the
    engine refuses the command, or the command changes nothing.

    Live play and the audit (through ``decide_events``) and every play-out path call it; the
    engine's events are handed back as they are so that a play-out can encode each once
    (``playout._sealed``) or not at all (``playout._fast``). Whether the game is over before
    is the caller's to know (a play-out's loop knows it from the step before, and checking
    again cost the fast play-out 7%); ``decide_events`` checks it."""
    events, after = step(engine, state, seat, command, Rng(seed, f"v{version}"))
    if not events:
        raise GameError(rules.ILLEGAL, "the command changes nothing", rule="no_effect")
    if engine.outcome(after) is None:
        return events, after, None
    return (
        events,
        after,
        NewEvent(type=SEED_REVEALED, data={"seed": seed if reveal is None else reveal}),
    )


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
