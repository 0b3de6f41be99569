"""Sending work to the Celery app by task name, for the gateway and the workers.

Only names cross this boundary (``bots.move``, ``bots.hint``, ``scoring.finalize``,
``tournaments.launch``, ``tournaments.play``; a registered bot's turn goes on ``REMOTE_TURNS``),
so neither service imports the Celery tasks' code.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import redis
from celery import Celery

from shared.app.ports import BotDispatcher, NullDispatcher
from shared.config import Settings

log = logging.getLogger(__name__)

QUEUE = "tabletop"
SEARCH_QUEUE = "tabletop-search"
TOURNAMENT_QUEUE = "tabletop-tournaments"  # batches of whole games, apart from live bots
# Registered bots' turns: not Celery tasks but ``[game_id, seat, version]`` on a plain Redis
# list of the broker's, served by ``services/bots/remote_worker.py`` (gevent: hundreds of
# games wait on their bots at once in one process, none holds a thread). A Celery publish
# (kombu's message, its bookkeeping) was a third of a game worker's time in a game of
# webhook bots, and the remote worker's Celery consumer and acks half of its own.
REMOTE_TURNS = "bots:remote-turns"

# The search queue is ordered by priority, 0 first (``shared/app/searches.py``: a client's n-th
# search waiting gets priority n): kombu's Redis transport keeps a list per step and its workers
# take from the lowest step first. Senders and workers must agree on the steps (its default,
# 0/3/6/9, would lump a client's first three searches together).
BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {"priority_steps": list(range(10))}


class CeleryDispatcher:
    """``BotDispatcher`` that sends Celery tasks (the client is built on first use)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._app: Celery | None = None
        self._broker: redis.Redis | None = None

    @property
    def app(self) -> Celery:
        """The Celery client app."""
        if self._app is None:
            # Its own plain Redis on a cluster (TABLETOP_BROKER_URL): kombu cannot use one.
            self._app = Celery("tabletop-client", broker=self._settings.celery_broker_url)
            self._app.conf.update(
                task_default_queue=QUEUE,
                broker_connection_retry_on_startup=True,
                broker_transport_options=BROKER_TRANSPORT_OPTIONS,
            )
        return self._app

    def move(
        self, game_id: str, seat: int, version: int, *, slow: bool = False, priority: int = 0
    ) -> None:
        """Queue ``bots.move``; a searching bot's on its own queue, which its own workers
        serve, so that a long search never holds up the quick bots of other games, at
        ``priority`` (its task tells the search shares when it ends)."""
        if not slow:
            self.app.send_task("bots.move", args=[game_id, seat, version], queue=QUEUE)
            return
        self.app.send_task(
            "bots.move", args=[game_id, seat, version, True], queue=SEARCH_QUEUE, priority=priority
        )

    def hint(self, request: Mapping[str, Any], *, priority: int = 0) -> None:
        """Queue ``bots.hint`` on the search queue at ``priority``."""
        self.app.send_task("bots.hint", args=[dict(request)], queue=SEARCH_QUEUE, priority=priority)

    def remote(self, game_id: str, seat: int, version: int) -> None:
        """Hand a registered bot's turn to the remote workers (``REMOTE_TURNS``): one LPUSH.
        A turn lost on its way (a worker killed while it waited) is sent again by the
        bot-stall sweep (``clocks.fire_due_deadlines``), as a lost Celery task was."""
        if self._broker is None:
            self._broker = redis.Redis.from_url(self._settings.celery_broker_url)
        self._broker.lpush(REMOTE_TURNS, json.dumps([game_id, seat, version]))

    def finalize(self, game_id: str) -> None:
        """Queue ``scoring.finalize``."""
        self.app.send_task("scoring.finalize", args=[game_id], queue=QUEUE)

    def tournament(self, tournament_id: str) -> None:
        """Queue ``tournaments.launch``, which queues the tournament's batches of games on the
        tournament queue (its own workers: a batch never holds up a live game's bot)."""
        self.app.send_task("tournaments.launch", args=[tournament_id], queue=TOURNAMENT_QUEUE)


def make_dispatcher(settings: Settings) -> BotDispatcher:
    """Celery unless ``TABLETOP_BOT_DISPATCH=none`` (benchmarks of all-human games)."""
    if settings.bot_dispatch == "none":
        return NullDispatcher()
    settings.celery_broker_url  # noqa: B018 - a cluster without a broker URL fails at startup
    return CeleryDispatcher(settings)
