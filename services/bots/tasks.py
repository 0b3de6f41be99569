"""Celery tasks: a bot's move and a finished game's scoring. Both take ids and are idempotent.

The tasks are registered on an app by ``register(app)``; the application they run is built by
``bootstrap`` in each worker process on first use, never at import time.
"""

from __future__ import annotations

from functools import cache

from celery import Celery

from shared.app import handlers
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


def register(app: Celery) -> None:
    """Register the tasks on ``app`` under the names the dispatcher sends."""
    app.task(name="bots.move", acks_late=True, ignore_result=True)(move)
    app.task(name="scoring.finalize", acks_late=True, ignore_result=True)(finalize)
