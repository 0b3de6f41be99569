"""Sending work to the Celery app by task name, for the gateway and the workers.

Only names cross this boundary (``bots.move``, ``scoring.finalize``), so neither service
imports the Celery tasks' code.
"""

from __future__ import annotations

import logging

from celery import Celery

from shared.config import Settings
from shared.service import BotDispatcher, NullDispatcher

log = logging.getLogger(__name__)

QUEUE = "tabletop"


class CeleryDispatcher:
    """``BotDispatcher`` that sends Celery tasks."""

    def __init__(self, settings: Settings) -> None:
        self.app = Celery("tabletop-client", broker=settings.redis_url)
        self.app.conf.update(task_default_queue=QUEUE, broker_connection_retry_on_startup=True)

    def move(self, game_id: str, seat: int, version: int) -> None:
        """Queue ``bots.move``."""
        self.app.send_task("bots.move", args=[game_id, seat, version], queue=QUEUE)

    def finalize(self, game_id: str) -> None:
        """Queue ``scoring.finalize``."""
        self.app.send_task("scoring.finalize", args=[game_id], queue=QUEUE)


def make_dispatcher(settings: Settings) -> BotDispatcher:
    """Celery unless ``TABLETOP_BOT_DISPATCH=none`` (benchmarks of all-human games)."""
    if settings.bot_dispatch == "none":
        return NullDispatcher()
    return CeleryDispatcher(settings)
