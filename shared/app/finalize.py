"""Scoring a finished game (the Celery task's work): its result written once, its bots rated
once, a tournament's live game folded into its standings.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from shared.app import tournaments
from shared.app.archiving import is_archived
from shared.app.bots import BOT_TURN, REGISTERED
from shared.app.context import App
from shared.app.results import rating_update, registered_ids, result_doc
from shared.match.record import GameRecord


class Finalized(enum.Enum):
    """What came of scoring a game (its value is what the Celery task returns)."""

    DONE = "ok"  # its result is written and its bots rated (now, or by a run before)
    NOT_OVER = "not over"  # nothing to score yet


def finalize_game(app: App, game_id: str) -> Finalized:
    """Write the game's result once (the first writer wins) and rate its bots."""
    return finalize_record(app, app.load(game_id))


def finalize_record(app: App, record: GameRecord) -> Finalized:
    """``finalize_game`` for a record in hand. Both steps are idempotent: the result is
    written once, and a game is rated once (atomically with marking it rated), so a task run
    twice, or a crash between the two, leaves each done exactly once."""
    outcome = record.outcome
    if outcome is None:
        return Finalized.NOT_OVER
    if is_archived(app, record.id):
        # Archived once scored and counted (``shared.app.archiving``): a task run again after
        # that must not count or rate it a second time.
        return Finalized.DONE
    if app.ports.directory.record_result(record.id, result_doc(record)):
        count_bot_turns(app, record)
    rate_bots(app, record, outcome)
    if record.match.tournament is not None:
        # A tournament's live game (one seating a registered bot) is folded into its
        # standings here, its result stored first; a game played whole is folded by its batch.
        tournaments.game_finished(app, record)
    return Finalized.DONE


def count_bot_turns(app: App, record: GameRecord) -> int:
    """Count the registered bots' decisions of a finished game into their stats (``GET
    /v1/bots/{id}``); how many. Counted when the game ends, not turn by turn: a bot's latency
    and failures can depend on its hand, and stats anyone can poll between two moves would
    tell them while the game runs. Once, with the result's first write (a crash between the
    two loses a game's counts, never doubles them)."""
    seats = record.match.seats
    counted = 0
    for env in app.ports.store.read(record.id):
        turn = (env.command or {}).get(BOT_TURN)
        if not isinstance(turn, Mapping) or env.seat is None:
            continue
        spec = seats[env.seat].bot_spec or {}
        if seats[env.seat].bot != REGISTERED or "bot_id" not in spec:
            continue
        app.ports.bots.record(str(spec["bot_id"]), int(turn["latency_ms"]), turn["failure"])
        counted += 1
    return counted


def rate_bots(app: App, record: GameRecord, outcome: Mapping[str, Any]) -> bool:
    """Fold a finished all-bot game into its game type's ratings (``GET /v1/ratings``); False
    when not rated (a human seat, a registered bot that did not opt in, or rated before)."""
    update = rating_update(record, outcome, ladder=ladder_bots(app, record))
    if update is None:
        return False
    return bool(app.ports.ratings.rate(record.game, {record.id: update}))


def ladder_bots(app: App, record: GameRecord) -> list[str]:
    """The registered bots seated in the game that opted in to the public ladder."""
    found = (app.ports.bots.get(bot_id) for bot_id in registered_ids(record))
    return [bot.bot_id for bot in found if bot is not None and bot.ladder]
