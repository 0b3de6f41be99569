"""Celery tasks: a bot's move and a finished game's scoring. Both take ids and are idempotent.

The tasks are registered on an app by ``register(app)``; the application they run is built by
``bootstrap`` in each worker process on first use, never at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from celery import Celery

from shared.app import handlers, tournaments
from shared.app.context import App
from shared.bootstrap import bootstrap


@cache
def _application() -> App:
    return bootstrap()


def move(game_id: str, seat: int, version: int) -> str:
    """Let the bot at ``seat`` act if the game is still at ``version``."""
    return handlers.play_bot_move(_application(), game_id, seat, version)


def finalize(game_id: str) -> str:
    """Record a finished game's result once."""
    return handlers.finalize_game(_application(), game_id)


def launch(tournament_id: str, send: Callable[..., Any]) -> int:
    """Queue a tournament's games in batches (``tournaments.play``) with ``send`` (the Celery
    app's ``send_task``); each batch is safe to run twice, so a launch run twice only repeats
    work that is then skipped."""
    from services.celery_client import TOURNAMENT_QUEUE

    entry = _application().ports.tournaments.get(tournament_id)
    if entry is None:
        return 0
    batches = tournaments.chunks(int(entry.plan["games"]))
    for batch in batches:
        send("tournaments.play", args=[tournament_id, batch], queue=TOURNAMENT_QUEUE)
    return len(batches)


def play(tournament_id: str, indexes: list[int]) -> int:
    """Play, store and fold a batch of a tournament's games."""
    return tournaments.play_games(_application(), tournament_id, indexes)


def register(app: Celery) -> None:
    """Register the tasks on ``app`` under the names the dispatcher sends."""

    def launch_task(tournament_id: str) -> int:
        return launch(tournament_id, app.send_task)

    app.task(name="bots.move", acks_late=True, ignore_result=True)(move)
    app.task(name="scoring.finalize", acks_late=True, ignore_result=True)(finalize)
    app.task(name="tournaments.launch", acks_late=True, ignore_result=True)(launch_task)
    app.task(name="tournaments.play", acks_late=True, ignore_result=True)(play)
