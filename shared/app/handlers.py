"""Handlers: what the application does, as plain functions over an ``App`` (ports + caches).

create a game · submit a command · decide a command · report a failure · rebuild projections ·
finalize a game · play a bot's move. The gateway, the worker, the Celery tasks and the CLI call
these and nothing below them.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from shared import games
from shared.app import bots, errors, names, searches
from shared.app.context import App
from shared.app.messages import (
    CommandMessage,
    Created,
    accepted,
    rejected,
    shard_of,
    token_hash,
)
from shared.app.ports import GameEntry
from shared.events import (
    ENTROPY_CONTRIBUTED,
    GAME_CREATED,
    GENESIS_HASH,
    SEAT_CHANGED,
    SEED_REVEALED,
    SERVICE_EVENTS,
    NewEvent,
    seal,
)
from shared.games import errors as rules
from shared.games.base import Engine, step
from shared.games.errors import GameError
from shared.games.rng import Rng, bot_random, seed_hash
from shared.match import clock, fairness
from shared.match.aggregate import Match, Seat, seat_doc
from shared.match.aggregate import evolve as match_evolve
from shared.match.projections import all_views, projection_json
from shared.match.projections import view as view_of
from shared.match.record import GameRecord, final_outcome, fold
from shared.store import DuplicateCommand, StaleVersion

log = logging.getLogger(__name__)

BOT_COMMAND_PREFIX = "bot-"  # a bot's command id: bot-<seat>-<version>
# Seconds a sent bot command blocks an identical resend: shorter than the sweep's wait
# (BOT_STALL_S), so a game whose bot's command was lost (a crash) gets it sent again.
BOT_SUBMIT_TTL = 15
BOT_STALL_S = 20  # a game whose bot is to act and that has not moved for this long is woken

RNG_NOTE = "HMAC-SHA256 counter stream; every draw of each game in docs/fairness.md"
JSON_SAFE_INT = 2**53 - 1  # beyond it JSON numbers lose precision in many clients


# ---- the events a game starts with and a command causes (shared with the play-out driver) -----


def creation_events(
    game: str,
    seats: Sequence[Seat],
    options: Mapping[str, Any],
    seed: str,
    *,
    tournament: Mapping[str, Any] | None = None,
    fairness_mode: str = fairness.STANDARD,
    listed: bool = True,
    clock_spec: Mapping[str, Any] | None = None,
    now_ms: int | None = None,
) -> list[NewEvent]:
    """``game_created`` and the engine's setup events, drawn with label ``setup``; a
    tournament's game names its tournament (``{"id", "index"}``) in ``game_created``. A lobby
    game or one of contributed fairness is dealt later (``opening_events``). A
    game with a clock (``clock_spec``, parsed) arms the first deadlines at ``now_ms``."""
    engine = games.get(game)
    data = created_data(
        game,
        seats,
        options,
        seed,
        tournament=tournament,
        fairness_mode=fairness_mode,
        listed=listed,
        clock_spec=clock_spec,
    )
    return [NewEvent(type=GAME_CREATED, data=data), *opening_events(engine, data, seed, now_ms)]


def dealt_at_creation(created: Mapping[str, Any]) -> bool:
    """Whether a game is dealt with its creation (``created``: the ``game_created`` data). A
    lobby game (open seats) is dealt by the join that takes its last seat, a game of
    contributed fairness by the command that brings its last client seed: both through
    ``decide_any``."""
    match = match_evolve(None, GAME_CREATED, created)
    assert match is not None
    return match.fairness == fairness.STANDARD and not match.open_seats


def opening_events(
    engine: Engine, created: Mapping[str, Any], seed: str, now_ms: int | None
) -> list[NewEvent]:
    """The events appended with ``game_created`` (its data: ``created``): the setup drawn
    from ``seed`` with label ``setup`` and a clock's first deadlines armed at ``now_ms``; none
    for a game dealt later. The service creates games and the audit checks openings with
    this one definition, so the two cannot disagree on what an honest opening is."""
    if not dealt_at_creation(created):
        return []
    setup = setup_events(engine, len(created["seats"]), created["options"], seed)
    return [*setup, *opening_ticks(engine, created, setup, now_ms)]


def created_data(
    game: str,
    seats: Sequence[Seat],
    options: Mapping[str, Any],
    seed: str,
    *,
    tournament: Mapping[str, Any] | None = None,
    fairness_mode: str = fairness.STANDARD,
    listed: bool = True,
    clock_spec: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The data of ``game_created`` (``creation_events``' first event)."""
    data: dict[str, Any] = {
        "game": game,
        "seats": [seat_doc(s) for s in seats],
        "options": dict(options),
        "seed_sha256": seed_hash(seed),
        "rng": RNG_NOTE,
    }
    if tournament is not None:
        data["tournament"] = dict(tournament)
    if fairness_mode != fairness.STANDARD:
        data["fairness"] = fairness_mode
    if not listed:
        data["listed"] = False
    if clock_spec is not None:
        data["clock"] = dict(clock_spec)
    # The policy versions of every bot that may play here (its seats' bots; a resigned or
    # timed-out seat's substitute; random, which a timeout bot falls back on), so that an
    # audit run by a later service, whose bots may play otherwise, knows which moves it can
    # still re-decide. Only versions past 1 are written: other games' logs stay as they were.
    may_play = [s.bot for s in seats if s.bot]
    may_play += [str(clock.substitute(clock_spec)["bot"]), "random"]
    policies = bots.policies_of(game, may_play)
    if policies:
        data[bots.BOT_POLICIES] = policies
    return data


def opening_ticks(
    engine: Engine, created: Mapping[str, Any], setup: Sequence[NewEvent], now_ms: int | None
) -> list[NewEvent]:
    """The first deadlines of a game with a clock dealt at its creation (``created``: the
    ``game_created`` data), armed at ``now_ms``; none without a clock."""
    if created.get("clock") is None:
        return []
    match = match_evolve(None, GAME_CREATED, created)
    assert match is not None
    state = None
    for e in setup:
        state = engine.evolve(state, engine.event_from_json({"type": e.type, "data": e.data}))
    return _ticked(engine, match, None, [], state, -1, now_ms, 1 + len(setup))


def setup_events(
    engine: Engine, seats: int, options: Mapping[str, Any], seed: str
) -> list[NewEvent]:
    """The engine's opening events, drawn from ``seed`` with label ``setup``."""
    setup = [engine.event_to_json(e) for e in engine.setup(seats, options, Rng(seed, "setup"))]
    return [NewEvent(type=d["type"], data=d["data"]) for d in setup]


def decide_any(
    engine: Engine,
    match: Match,
    state: Any,
    seat: int,
    body: Mapping[str, Any],
    server_seed: str,
    version: int,
    now_ms: int | None = None,
) -> tuple[list[NewEvent], Any, dict[str, Any]]:
    """(events, state after them, the command as recorded) for any command a seat may send at
    ``version``: a client seed for a game of contributed fairness (the deal comes with the
    last one), a join or a leave, a resignation, a time-out (the deadline scheduler's), or a
    move, decided with the game's play seed. A game with a clock adds its clock's events,
    decided from ``now_ms`` (the command's time). The worker and the audit both decide
    through here. Raises GameError."""
    kind = body.get("type")
    recorded: dict[str, Any]
    if kind in (fairness.CONTRIBUTE, JOIN, LEAVE):
        if kind == fairness.CONTRIBUTE:
            new, after, recorded = _contribute(engine, match, seat, body, server_seed)
        elif kind == JOIN:
            new, after, recorded = _join(engine, match, seat, body, server_seed)
        else:
            new, after, recorded = _leave(match, seat)
        return _ticked(engine, match, state, new, after, seat, now_ms, version), after, recorded
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
    if kind == clock.RESIGN:
        new = _resignation(match, seat, "resigned", server_seed)
        recorded = {"type": clock.RESIGN}
        after = state
    elif kind == clock.TIME_OUT:
        new, after, recorded = _time_out(engine, match, state, seat, body, server_seed, version,
                                         now_ms)  # fmt: skip
    else:
        command = engine.parse_command(body)
        new, after, _ = decide_events(
            engine, state, seat, command, fairness.play_seed(match, server_seed), version,
            reveal=server_seed,
        )  # fmt: skip
        recorded = engine.command_to_json(command)
    acted = kind not in (clock.RESIGN, clock.TIME_OUT)
    new = _ticked(engine, match, state, new, after, seat, now_ms, version, acted=acted)
    return new, after, recorded


def _ticked(
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


def _resignation(match: Match, seat: int, reason: str, server_seed: str) -> list[NewEvent]:
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


def _time_out(
    engine: Engine,
    match: Match,
    state: Any,
    seat: int,
    body: Mapping[str, Any],
    server_seed: str,
    version: int,
    now_ms: int | None,
) -> tuple[list[NewEvent], Any, dict[str, Any]]:
    """A due deadline: ``turn_timed_out``, then the timeout bot's move for the seat (its
    ``takeover_after``-th time-out in a row also hands it the seat), or the seat's
    resignation (``forfeit``). The bot's move is recorded in the command (``move``), so an
    audit re-decides that move (a bot on a time budget may choose otherwise another time)."""
    c = clock.check_time_out(match.clock, match.clocks, seat, body, now_ms)
    assert match.clock is not None and now_ms is not None
    timed_out = clock.timed_out_event(c, seat, now_ms)
    m = match_evolve(match, timed_out.type, timed_out.data)
    assert m is not None
    recorded: dict[str, Any] = {"type": clock.TIME_OUT, "armed_version": c.armed_version}
    if match.clock["on_timeout"] == clock.FORFEIT:
        return [timed_out, *_resignation(m, seat, "forfeit", server_seed)], state, recorded
    move = body.get("move")
    counted = None
    if not isinstance(move, Mapping):
        move, counted = timeout_bot_move(engine, m, state, seat, server_seed, version)
    command = engine.parse_command(move)
    moved, after, _ = decide_events(
        engine, state, seat, command, fairness.play_seed(m, server_seed), version,
        reveal=server_seed,
    )  # fmt: skip
    recorded["move"] = engine.command_to_json(command)
    if counted is not None:  # a timeout bot searching on a time budget: the audit replays it
        recorded[bots.BOT_ITERATIONS] = counted
    tail = [moved.pop()] if moved and moved[-1].type == SEED_REVEALED else []
    if timed_out.data["in_a_row"] >= match.clock["takeover_after"] and not tail:
        moved.append(clock.taken_over_event(seat, match.clock["timeout_bot"], "timeouts"))
    return [timed_out, *moved, *tail], after, recorded


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


def _contribute(
    engine: Engine, match: Match, seat: int, body: Mapping[str, Any], server_seed: str
) -> tuple[list[NewEvent], Any, dict[str, Any]]:
    if match.fairness != fairness.CONTRIBUTED:
        raise GameError(rules.ILLEGAL, "this game takes no client seeds", rule="not_contributed")
    if seat not in fairness.waiting_for(match):
        raise GameError(
            rules.ILLEGAL,
            f"seat {seat} has no client seed to send (a bot's, or sent already)",
            rule="no_contribution_due",
        )
    client_seed = body.get("client_seed")
    if not isinstance(client_seed, str) or not 0 < len(client_seed) <= fairness.MAX_CLIENT_SEED:
        raise GameError(
            rules.INVALID_COMMAND,
            "client_seed must be a string of 1 to 256 characters",
            errors={"client_seed": ["a string of 1 to 256 characters"]},
        )
    data = {"seat": seat, "client_seed": client_seed}
    new = [NewEvent(type=ENTROPY_CONTRIBUTED, data=data)]
    after = match_evolve(match, ENTROPY_CONTRIBUTED, data)
    assert after is not None
    new, state = _deal_if_ready(engine, after, new, server_seed)
    return new, state, {"type": fairness.CONTRIBUTE, "client_seed": client_seed}


def _deal_if_ready(
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


JOIN = "join_seat"  # sent by the gateway's join endpoint for the player it gives a token
LEAVE = "leave_seat"


def _join(
    engine: Engine, match: Match, seat: int, body: Mapping[str, Any], server_seed: str
) -> tuple[list[NewEvent], Any, dict[str, Any]]:
    if seat not in match.open_seats:
        raise GameError(errors.ErrorCode.SEAT_TAKEN, f"seat {seat} is not open")
    name, token = body.get("name"), body.get("token_sha256")
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
    client_seed = body.get("client_seed")
    if client_seed is not None and after.fairness == fairness.CONTRIBUTED:
        if not isinstance(client_seed, str) or not 0 < len(client_seed) <= 256:
            raise GameError(rules.INVALID_COMMAND, "client_seed must be 1 to 256 characters",
                            errors={"client_seed": ["1 to 256 characters"]})  # fmt: skip
        data = {"seat": seat, "client_seed": client_seed}
        new.append(NewEvent(type=ENTROPY_CONTRIBUTED, data=data))
        after = match_evolve(after, ENTROPY_CONTRIBUTED, data)
        assert after is not None
    new, state = _deal_if_ready(engine, after, new, server_seed)
    recorded = {"type": JOIN, "name": name}
    return new, state, recorded


def _leave(match: Match, seat: int) -> tuple[list[NewEvent], Any, dict[str, Any]]:
    if not fairness.undealt(match):
        raise GameError(rules.ILLEGAL, "a seat can be left only before the deal", rule="dealt")
    occupant = seat_doc(Seat(name=f"seat {seat}", open=True))
    new = [NewEvent(type=SEAT_CHANGED, data={"seat": seat, "occupant": occupant})]
    return new, None, {"type": LEAVE}


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
    """(events to append, state after them, the engine's events) for ``command`` decided at
    ``version`` with the randomness of label ``v<version>``; ``seed_revealed`` closes a
    finished game, revealing ``reveal`` (the server seed; by default ``seed``). Raises
    GameError."""
    if engine.outcome(state) is not None:
        raise GameError(rules.GAME_OVER, "the game is over")
    events, state = step(engine, state, seat, command, Rng(seed, f"v{version}"))
    if not events:
        raise GameError(rules.ILLEGAL, "the command changes nothing", rule="no_effect")
    new = []
    for e in events:
        doc = engine.event_to_json(e)
        new.append(NewEvent(type=doc["type"], data=doc["data"]))
    if engine.outcome(state) is not None:
        new.append(NewEvent(type=SEED_REVEALED, data={"seed": seed if reveal is None else reveal}))
    return new, state, events


def seats_from_specs(
    specs: Sequence[Mapping[str, Any]], registered: Mapping[int, Seat] | None = None
) -> tuple[list[Seat], list[str | None]]:
    """Seats for the creation specs (``{"name"}`` or ``{"bot": name}``; ``registered``: the
    seats of ``{"bot_id"}`` specs, by index, from ``remote.registered_seats``) and a fresh
    token for each human seat (None for bots)."""
    seats: list[Seat] = []
    tokens: list[str | None] = []
    for i, spec in enumerate(specs):
        if registered and i in registered:
            seats.append(registered[i])
            tokens.append(None)
            continue
        if spec.get("open") is True:
            seats.append(Seat(name=f"seat {i}", open=True))
            tokens.append(None)
            continue
        bot = spec.get("bot")
        given = spec.get("name")
        if isinstance(given, str) and (problem := names.characters_error(given)) is not None:
            # Names reach every view, web page and terminal: printable text only. (Their
            # length is the gateway's to bound: a tournament's may grow a " #2".)
            raise rules.invalid_options(
                f"seat {i} name: {problem}", **{f"seats[{i}].name": problem}
            )
        name = spec.get("name") or (f"{bot} bot {i}" if bot else f"seat {i}")
        if bot:
            try:
                settings = bots.parse_spec(spec)
            except bots.BotSpecError as exc:
                raise rules.invalid_options(
                    f"seat {i}: {exc.message}", **{f"seats[{i}].{exc.field}": exc.message}
                ) from None
            seats.append(Seat(name=name, bot=str(bot), bot_spec=settings or None))
            tokens.append(None)
        else:
            token = secrets.token_urlsafe(24)
            seats.append(Seat(name=name, token_sha256=token_hash(token)))
            tokens.append(token)
    return seats, tokens


# ---- creating -----------------------------------------------------------------------------------


def create_game(
    app: App,
    game: str,
    seat_specs: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any] | None = None,
    seed: str | None = None,
    fairness_mode: str = fairness.STANDARD,
    listed: bool = True,
    clock_spec: Mapping[str, Any] | None = None,
    owner: str = "",
) -> Created:
    """Start a game: validate, run the engine's setup, append, project, wake bots. A game of
    contributed fairness is only created: it is dealt when its human seats sent their client
    seeds. ``owner``: the client creating it (``searches.client_owner``), whose share of the
    search workers its searching bots take.

    Raises KeyError for an unknown game and GameError for bad seats or options.
    """
    engine = games.get(game)
    n = len(seat_specs)
    if not engine.MIN_SEATS <= n <= engine.MAX_SEATS:
        # "2-2 seats" reads as a typo: a fixed count is said as one number.
        wanted = (
            f"exactly {engine.MIN_SEATS}"
            if engine.MIN_SEATS == engine.MAX_SEATS
            else f"{engine.MIN_SEATS} to {engine.MAX_SEATS}"
        )
        raise rules.invalid_options(f"{game} needs {wanted} seats, got {n}",
                                    seats=[f"{wanted} seats"])  # fmt: skip
    _check_json_safe(options or {})
    opts = engine.parse_options(n, dict(options or {}))
    seed = seed or secrets.token_hex(32)
    game_id = secrets.token_hex(8)
    registered = None
    if any("bot_id" in spec for spec in seat_specs):
        from shared.app import remote

        registered = remote.registered_seats(app, game, seat_specs)
    seats, tokens = seats_from_specs(seat_specs, registered)
    if fairness_mode not in fairness.MODES:
        raise rules.invalid_options(
            "unknown fairness", fairness=[f"one of {', '.join(fairness.MODES)}"]
        )
    if fairness_mode == fairness.CONTRIBUTED and all(s.bot and not s.open for s in seats):
        raise rules.invalid_options(
            "contributed fairness needs a human seat to contribute",
            fairness=["needs at least one human seat"],
        )
    spec = clock.parse_clock(clock_spec, parse_bot=bots.parse_spec)
    p = app.ports
    at = p.clock.now()
    envs = seal(
        creation_events(
            game,
            seats,
            opts,
            seed,
            fairness_mode=fairness_mode,
            listed=listed,
            clock_spec=spec,
            now_ms=clock.ms_of(at),
        ),  # fmt: skip
        after_version=0,
        prev_hash=GENESIS_HASH,
        command_id="create",
        seat=None,
        at=at,
        seed=seed,
    )
    record = fold(game_id, envs)
    # The directory first: a game whose events exist must always have its seed and roster.
    p.directory.register(
        GameEntry(
            game_id=game_id,
            game=game,
            seed=seed,
            shard=shard_of(game_id, p.shards),
            created_at=envs[0].at,
            token_hashes=record.match.token_hashes,
            lobby=bool(record.match.open_seats),
            owner=owner,
        ),
        p.clock.epoch(),
    )
    p.store.append(game_id, envs, expected_version=0, command_id="create")
    app.remember(record)
    publish(app, record)
    return Created(game_id=game_id, tokens=tokens, record=record)


# ---- submitting ---------------------------------------------------------------------------------


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
) -> bytes | None:
    """``submit_command``, then the worker's reply (``wait_reply``) within ``timeout`` seconds,
    in one round trip on Redis."""
    p = app.ports
    return p.bus.put_and_wait(
        game_type,
        shard_of(message.game_id, p.shards),
        message.to_fields(),
        game_id=message.game_id,
        command_id=message.command_id,
        pending=_pending(message),
        timeout=timeout,
    )


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
    reply = body
    refused = outcome["status"] != "accepted"
    if views is not None and not refused and message.seat < len(views):
        # The waiting client gets its new view after a newline (compact JSON has none):
        # one round trip less, and the gateway never parses the view.
        reply = body + "\n" + views[message.seat]
    stored = body
    if refused:
        # Refusals cost their sender nothing, so what one keeps is short-lived (the bus's
        # refusal TTL) and small: not the command id again, which the key already names and
        # a client may make 100 characters long (``queries.command_status`` puts it back).
        stored = _COMPACT.encode({k: v for k, v in outcome.items() if k != "command_id"})
    app.ports.bus.complete(
        message.game_id, message.command_id, stored, reply, keep=keep, refused=refused
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
    body = dict(message.body)
    kind = body.get("type")
    recorded = dict(env.command or {})
    # A timed search's iteration count is recorded with its command, not part of it.
    recorded.pop(bots.BOT_ITERATIONS, None)
    recorded.pop(bots.BOT_TURN, None)
    try:
        if kind == fairness.CONTRIBUTE:
            parsed: Any = {"type": fairness.CONTRIBUTE, "client_seed": body.get("client_seed")}
        elif kind in (clock.RESIGN, LEAVE):
            parsed = {"type": kind}
        elif kind == JOIN:
            parsed = {"type": JOIN, "name": body.get("name")}
        elif kind == clock.TIME_OUT:
            recorded.pop("move", None)  # the bot's choice, made when it was applied
            parsed = {"type": kind, "armed_version": body.get("armed_version")}
        else:
            parsed = record.engine.command_to_json(record.engine.parse_command(body))
    except GameError:
        parsed = None
    if kind == fairness.CONTRIBUTE and env.seat == message.seat and recorded != parsed:
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
    if by_clock != (message.body.get("type") == clock.TIME_OUT):
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
    new, after, recorded = decide_any(
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
        # command, so an audit checks the body it was sent (``remote.turn_fault``).
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


# ---- projections and hand-offs ------------------------------------------------------------------


def publish(app: App, record: GameRecord) -> None:
    """Write every projection, announce the version, and hand off bot and scoring work."""
    with app.ports.unit():
        project(app, record)
    hand_off(app, record)


def project(app: App, record: GameRecord) -> list[str]:
    """Write (in the open batch) the projections and the announcement; returns the seat views'
    JSON."""
    seat_views, public = all_views(record)
    texts = [projection_json(doc) for doc in seat_views]
    p = app.ports
    p.read_models.write(record.id, texts, projection_json(public))
    p.notifier.announce(record.id, record.version)
    if public["outcome"] is not None:
        p.directory.mark_finished(record.id, p.clock.epoch())
    sync_deadlines(app, record)
    return texts


def sync_deadlines(app: App, record: GameRecord) -> None:
    """Make the scheduler's deadlines those the record has, in the open batch: per seat with a
    running turn clock ``<game>:<seat>`` at its deadline; and while a bot is to act,
    ``<game>:bot`` ``BOT_STALL_S`` from now, moved on at every change, so a game whose bot's
    wake was lost (a crash between the append and the hand-off, a Celery worker killed with the
    task, Redis restarted) is found and woken. Written from the record, not from the new
    events, so a command redelivered after a crash writes them again."""
    match = record.match
    p = app.ports
    over = record.outcome is not None
    if match.clock is not None:
        for seat, c in enumerate(match.clocks):
            key = deadline_key(record.id, seat)
            if c.armed and not over:
                assert c.deadline_ms is not None
                p.clock.set_deadline(key, c.deadline_ms / 1000)
            else:
                p.clock.cancel_deadline(key)
    bots_ = match.bot_seats
    if not bots_:
        return
    key = deadline_key(record.id, BOT_KEY)
    if not over and record.state is not None and bots_ & set(record.engine.to_act(record.state)):
        p.clock.set_deadline(key, p.clock.epoch() + BOT_STALL_S)
    else:
        p.clock.cancel_deadline(key)


BOT_KEY = "bot"  # the deadline of a game whose bot is to act: <game>:bot


def deadline_key(game_id: str, seat: int | str) -> str:
    """A seat's deadline in the scheduler's sorted set (``BOT_KEY``: the bot-stall sweep's)."""
    return f"{game_id}:{seat}"


def fire_due_deadlines(app: App, *, retry_s: float = 2.0, limit: int = 100) -> list[str]:
    """The deadline scheduler's step: claim the due deadlines (each put back ``retry_s`` later,
    until a worker's decision cancels or moves it) and send a time-out command for each one
    the game still has armed, or wake the bots of a game that stalled. Returns the time-out
    command ids sent and ``wake:<game>:<seat>`` for each bot woken. Safe to run in many
    processes at once: a time-out's id is its seat and armed version, so a repeat is a
    duplicate, and the worker refuses a stale one; a bot woken twice sends one command id."""
    p = app.ports
    sent = []
    for key in p.clock.claim_due(retry_s, limit):
        game_id, _, seat_text = key.rpartition(":")
        raw = p.read_models.read(game_id, None)
        doc = json.loads(raw) if raw else None
        if doc is None or doc.get("outcome"):
            p.clock.cancel_deadline(key)
            continue
        if seat_text == BOT_KEY:
            sent += _wake_stalled(app, doc, key)
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
            body={"type": clock.TIME_OUT, "armed_version": armed},
        )
        submit_command(app, message, str(doc["game"]))
        sent.append(message.command_id)
    return sent


def _wake_stalled(app: App, public: Mapping[str, Any], key: str) -> list[str]:
    """Wake again the bots to act in a game that has not moved for ``BOT_STALL_S`` (the same
    tasks as the first wake: the same command ids), and look again that much later."""
    game_id = str(public["id"])
    seats = public["seats"]
    woken = []
    for seat in public["to_act"]:
        name = seats[seat].get("bot")
        if name is None:
            continue
        slow = name in bots.BOTS and bots.BOTS[name].slow
        _wake(app, game_id, seat, int(public["version"]), name, slow)
        woken.append(f"wake:{game_id}:{seat}")
    if woken:
        log.warning("game %s stalled at version %s: bots woken again", game_id, public["version"])
        app.ports.clock.set_deadline(key, app.ports.clock.epoch() + BOT_STALL_S)
    else:
        app.ports.clock.cancel_deadline(key)
    return woken


def hand_off(
    app: App,
    record: GameRecord,
    waiting: frozenset[int] | None = None,
    actor: int | None = None,
) -> None:
    """Wake the bots whose turn it is, or score a finished game.

    When several seats act at once (``waiting``: who was to act before this change), a bot
    already asked keeps its pending move instead of being asked again at every other seat's
    move; only seats new to act, and the seat that just acted, are woken.
    """
    engine = record.engine
    dispatcher = app.ports.dispatcher
    if record.state is None:  # waiting for client seeds: nothing dealt, nobody to act
        return
    seats = record.match.seats
    if record.outcome is not None:
        dispatcher.finalize(record.id)
        for seat, occupant in enumerate(seats):  # registered bots hear that it is over
            if occupant.bot == bots.REGISTERED:
                dispatcher.remote(record.id, seat, record.version)
        return
    bot_seats = record.bot_seats
    to_act = engine.to_act(record.state)
    for seat in to_act:
        if seat not in bot_seats:
            continue
        if waiting is None or len(to_act) == 1 or seat not in waiting or seat == actor:
            _wake(app, record.id, seat, record.version, seats[seat].bot, _slow(record, seat))


def _wake(app: App, game_id: str, seat: int, version: int, bot: str | None, slow: bool) -> None:
    """Ask the seat's bot to act: a registered bot through its own workers (they wait on
    many bots at once), a built-in one as ``searches.dispatch_move`` queues it."""
    if bot == bots.REGISTERED:
        app.ports.dispatcher.remote(game_id, seat, version)
    else:
        searches.dispatch_move(app, game_id, seat, version, slow=slow)


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
    _wake(app, record.id, message.seat, record.version,
          record.match.seats[message.seat].bot, _slow(record, message.seat))  # fmt: skip


def _slow(record: GameRecord, seat: int) -> bool:
    """Whether the seat's bot searches (it gets its own queue)."""
    name = record.match.seats[seat].bot
    return name is not None and name in bots.BOTS and bots.BOTS[name].slow


def rebuild_projections(app: App, game_id: str) -> GameRecord:
    """Fold every event afresh and rewrite the projections (they are disposable)."""
    app.forget(game_id)
    record = fold(game_id, app.ports.store.read(game_id))
    app.remember(record)
    publish(app, record)
    return record


# ---- bots and scoring (the Celery tasks) --------------------------------------------------------


def play_bot_move(app: App, game_id: str, seat: int, version: int) -> str:
    """Read only the seat's view, choose with its bot, submit like any client.

    The command id is derived from (seat, version), so a repeated task submits the same
    command and the store applies it at most once. On a turn of its own, a task for an old
    version does nothing (a newer task was queued with the newer version). When several seats
    act at once the service does not re-ask a waiting bot at each other seat's move, so a task
    that finds the game moved on still acts, on the view it reads now.
    """
    raw = app.ports.read_models.read(game_id, seat)
    if raw is None:
        return "no such game"
    view: dict[str, Any] = json.loads(raw)
    if seat not in view["to_act"] or view.get("outcome"):
        return "stale"
    simultaneous = len(view["to_act"]) > 1
    if view["version"] != version and not simultaneous:
        return "stale"
    version = view["version"]
    cid = f"{BOT_COMMAND_PREFIX}{seat}-{version}"
    # A repeated wake (a redelivery, the stall sweep while the first task still waits in a
    # queue) must not search again: a searching bot's minutes would pile up behind it.
    if app.ports.bus.was_sent(game_id, cid):
        return cid
    spec = bot_spec(view, seat)
    # The bot's randomness comes from the game's secret seed: a source anyone could recompute
    # (game id, seat, version are all public) would let them test every hand the bot might
    # hold against what it did.
    seed = fairness.play_seed_of_view(view, secret_seed(app, game_id))
    decision = bots.decide(spec, view, bot_random(seed, seat, version))
    if decision.command is None:
        return "nothing to do"
    command = dict(decision.command)
    if decision.iterations is not None:
        # A search on a time budget says how far it got, so the audit can replay it.
        command[bots.BOT_ITERATIONS] = decision.iterations
    # On its own turn a bot pins the version it decided at. When several seats act at once
    # (a simultaneous phase) another seat's move does not spoil its choice;
    # the engine still checks the command.
    message = CommandMessage(
        command_id=cid,
        game_id=game_id,
        seat=seat,
        body=command,
        expected_version=None if simultaneous else version,
    )
    # Wakes may repeat (redeliveries, retries, Celery's at-least-once, the sweep): send each
    # command once. Marked only once submitted, so a crash between the two leaves no mark of
    # a command never sent (two wakes at once may both send it: the store applies it once).
    if app.ports.bus.was_sent(game_id, message.command_id):
        return message.command_id
    submit_command(app, message, str(view["game"]))
    app.ports.bus.send_once(game_id, message.command_id, BOT_SUBMIT_TTL)
    return message.command_id


def submit_bot_command(
    app: App, view: Mapping[str, Any], seat: int, version: int, command: dict[str, Any], cid: str
) -> str:
    """Submit a bot's ``command`` decided at ``version`` from ``view`` under ``cid``, once, as
    ``play_bot_move`` does (pinning the version unless several seats act at once)."""
    simultaneous = len(view["to_act"]) > 1
    message = CommandMessage(
        command_id=cid,
        game_id=str(view["id"]),
        seat=seat,
        body=command,
        expected_version=None if simultaneous else version,
    )
    if app.ports.bus.was_sent(message.game_id, cid):
        return cid
    submit_command(app, message, str(view["game"]))
    app.ports.bus.send_once(message.game_id, cid, BOT_SUBMIT_TTL)
    return cid


def bot_spec(view: Mapping[str, Any], seat: int) -> dict[str, Any]:
    """The spec of the bot at ``seat`` as the view lists it (``{"bot", setting...}``);
    ``random`` for a seat without one."""
    listed = dict(view["seats"][seat])
    for key in ("seat", "name", "resigned", "taken_over"):  # the seat's, not the bot's
        listed.pop(key, None)
    return listed if listed.get("bot") else {"bot": "random"}


def finalize_game(app: App, game_id: str) -> str:
    """Write the game's result once (the first writer wins) and rate its bots."""
    return finalize_record(app, app.load(game_id))


def finalize_record(app: App, record: GameRecord) -> str:
    """``finalize_game`` for a record in hand. Both steps are idempotent: the result is
    written once, and a game is rated once (atomically with marking it rated), so a task run
    twice, or a crash between the two, leaves each done exactly once."""
    outcome = record.outcome
    if outcome is None:
        return "not over"
    app.ports.directory.record_result(record.id, result_doc(record))
    rate_bots(app, record, outcome)
    if record.match.tournament is not None:
        # A tournament's live game (one seating a registered bot) is folded into its
        # standings here, its result stored first; a game played whole is folded by its batch.
        from shared.app import tournaments

        tournaments.game_finished(app, record)
    return "ok"


def result_doc(record: GameRecord) -> dict[str, Any]:
    """The stored result of a finished game (``GameDirectory.record_result``)."""
    return {
        "game": record.game,
        "seats": [dict(s) for s in record.seats],
        "outcome": record.outcome,
        "version": record.version,
    }


def rate_bots(app: App, record: GameRecord, outcome: Mapping[str, Any]) -> bool:
    """Fold a finished all-bot game into its game type's ratings (``GET /v1/ratings``); False
    when not rated (a human seat, or rated before)."""
    update = rating_update(record, outcome)
    if update is None:
        return False
    return bool(app.ports.ratings.rate(record.game, {record.id: update}))


def rating_update(
    record: GameRecord, outcome: Mapping[str, Any]
) -> Callable[[dict[str, Any]], None] | None:
    """The leaderboard update of one finished game, or None for a game with a human seat:
    each seat's bot spec (``ismcts:iterations=500``) is one rated player; a spec at several
    seats of one game plays as several players whose updates are averaged."""
    seats = record.match.seats
    # A seat a bot took over from a player (time-outs, resigning) was not a bot's game.
    if not seats or any(s.bot is None or s.taken_over for s in seats):
        return None
    labels = [bot_label(s.bot, s.bot_spec) for s in seats]
    ranks = list(outcome["ranks"])

    def update(board: dict[str, Any]) -> None:
        from shared.tournaments.standings import rate_labels

        rate_labels(board, labels, ranks)

    return update


def bot_label(bot: str | None, spec: Mapping[str, Any] | None) -> str:
    """A bot spec's rating label, as the CLI spells it: ``ismcts:iterations=500``."""
    from shared.tournaments.plan import spec_label

    return spec_label({"bot": bot or "random", **(spec or {})})


# ---- checks ---------------------------------------------------------------------------------------


def _check_json_safe(options: Mapping[str, Any]) -> None:
    """Raise ``options/invalid`` for a number no client or store can carry exactly, naming the
    option it sits in."""
    for name, value in options.items():
        if not _json_safe(value):
            raise rules.invalid_options(
                f"option {name!r} holds a number out of range", **{str(name): "number out of range"}
            )


def _json_safe(value: Any) -> bool:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return -JSON_SAFE_INT <= value <= JSON_SAFE_INT  # also false for NaN
    if isinstance(value, Mapping):
        return all(_json_safe(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_json_safe(v) for v in value)
    return True
