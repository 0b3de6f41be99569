"""How a game opens: its seats from the creation specs, ``game_created``, the setup drawn with
label ``setup`` and a clock's first deadlines. The service creates games, the play-out driver
plays them and the audit checks openings with these definitions, so the three cannot disagree
on what an honest opening is. Pure (no ports, no ``App``).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from shared import games
from shared.app import bots, names
from shared.app.messages import token_hash
from shared.app.steps import setup_events, ticked
from shared.events import GAME_CREATED, RULES_VERSION, NewEvent
from shared.games import errors as rules
from shared.games.base import Engine
from shared.games.rng import seed_hash
from shared.match import clock, fairness
from shared.match.aggregate import Seat, seat_doc
from shared.match.aggregate import evolve as match_evolve

RNG_NOTE = "HMAC-SHA256 counter stream; every draw of each game in docs/fairness.md"
JSON_SAFE_INT = 2**53 - 1  # beyond it JSON numbers lose precision in many clients


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
    # The rules it is decided under, once they are past their first version (so that the logs
    # of games created before rules were versioned, at 1, stay as they were).
    rules = games.rules_version(game)
    if rules > 1:
        data[RULES_VERSION] = rules
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
    return ticked(engine, match, None, [], state, -1, now_ms, 1 + len(setup))


def seats_from_specs(
    specs: Sequence[Mapping[str, Any]], registered: Mapping[int, Seat] | None = None
) -> tuple[list[Seat], list[str | None]]:
    """Seats for the creation specs (``{"name"}`` or ``{"bot": name}``; ``registered``: the
    seats of ``{"bot_id"}`` specs, by index, from ``bot_registration.registered_seats``) and a fresh
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


def check_json_safe(options: Mapping[str, Any]) -> None:
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
