"""Creating a game: validate the seats and options, seal ``game_created`` and the opening,
register the game in the directory, append, project and wake its bots.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from shared import games
from shared.app import bot_registration, bots
from shared.app.context import App
from shared.app.messages import Created, shard_of
from shared.app.opening import check_json_safe, creation_events, seats_from_specs
from shared.app.ports import GameEntry
from shared.app.projecting import publish
from shared.events import GENESIS_HASH, NewEvent, seal
from shared.games import errors as rules
from shared.match import clock, fairness
from shared.match.record import GameRecord, fold


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
    caller: bot_registration.BotCaller = bot_registration.ANONYMOUS,
) -> Created:
    """Start a game: validate, run the engine's setup, append, project, wake bots. A game of
    contributed fairness is only created: it is dealt when its human seats sent their client
    seeds. ``owner``: the client creating it (``searches.client_owner``), whose share of the
    search workers its searching bots take; ``caller``: its key, for the registered bots it
    seats (``seatable_by``).

    Raises KeyError for an unknown game and GameError for bad seats or options (403
    ``bot/not_seatable`` for a registered bot the caller may not seat), nothing created.
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
    check_json_safe(options or {})
    opts = engine.parse_options(n, dict(options or {}))
    seed = seed or secrets.token_hex(32)
    game_id = secrets.token_hex(8)
    registered = None
    if any("bot_id" in spec for spec in seat_specs):
        registered = bot_registration.registered_seats(app, game, seat_specs, caller)
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
    at = app.ports.clock.now()
    events = creation_events(
        game,
        seats,
        opts,
        seed,
        fairness_mode=fairness_mode,
        listed=listed,
        clock_spec=spec,
        now_ms=clock.ms_of(at),
    )
    record = open_game(app, game_id, game, events, seed, at, owner=owner)
    return Created(game_id=game_id, tokens=tokens, record=record)


def open_game(
    app: App,
    game_id: str,
    game: str,
    events: Sequence[NewEvent],
    seed: str,
    at: str,
    *,
    owner: str = "",
    tournament: str = "",
) -> GameRecord:
    """Bring a game into being, the one way every game is: seal its opening events, register
    it in the directory, append them, remember and publish it. A game created by a racing
    run first makes the append raise (``StaleVersion``/``DuplicateCommand``), nothing after
    it done."""
    p = app.ports
    envs = seal(events, after_version=0, prev_hash=GENESIS_HASH, command_id="create",
                seat=None, at=at, seed=seed)  # fmt: skip
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
            tournament=tournament,
        ),
        p.clock.epoch(),
    )
    p.store.append(game_id, envs, expected_version=0, command_id="create")
    app.remember(record)
    publish(app, record)
    return record
