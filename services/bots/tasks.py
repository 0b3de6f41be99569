"""Celery tasks: a bot's move, a hint's search and a finished game's scoring. They take ids
(a hint, its request) and are idempotent.

The tasks are registered on an app by ``register(app)``; the application they run is built by
``bootstrap`` in each worker process on first use, never at import time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from celery import Celery

from shared import logs
from shared.adapters import metrics
from shared.app import bot_moves, remote, searches, tournaments
from shared.app.context import App
from shared.app.finalize import finalize_game
from shared.bootstrap import bootstrap

log = logging.getLogger(__name__)

# Hard time limits (seconds) by task: a pool process past one is killed and the task fails.
# The broker's visibility timeout is set from the longest (``celery_app``). A bot's move is a
# search of at most 10 s (``budget_ms``); a tournament batch plays up to CHUNK whole games of
# quick bots, or SEARCH_CHUNK of search bots (``tournaments.chunks``).
TIME_LIMITS = {
    "bots.move": 120,
    "bots.hint": 60,  # at most 2 s of search (``SUGGESTION_MAX_BUDGET_MS``), or 1000 iterations
    "scoring.finalize": 60,
    "tournaments.launch": 60,
    "tournaments.play": 900,
}


@cache
def _application() -> App:
    # A real dispatcher: a task may start work of its own (a tournament's live games are
    # created by its batch and by the scoring of the game before, and wake their bots).
    from services.celery_client import make_dispatcher
    from shared.config import Settings

    settings = Settings.from_env()
    return bootstrap(settings, dispatcher=make_dispatcher(settings))


def move(game_id: str, seat: int, version: int, search: bool = False) -> str:
    """Let the bot at ``seat`` act if the game is still at ``version``; a ``search`` (a
    searching bot's move) then stops counting in its owner's share of the search workers,
    whatever came of it."""
    started = time.perf_counter()
    with logs.context(game_id=game_id, seat=seat, version=version):
        try:
            result = bot_moves.play_bot_move(_application(), game_id, seat, version)
        finally:
            if search:
                searches.moved(_application(), game_id, seat, version)
        outcome = bot_outcome(result)
        took = time.perf_counter() - started
        metrics.BOT_MOVES.labels(outcome).inc()
        metrics.BOT_LATENCY.labels(outcome).observe(took)
        fields: dict[str, Any] = {"duration_ms": round(took * 1000, 2)}
        if result.command_id is not None:
            fields["command_id"] = result.command_id
        log.info("bot move %s", outcome, extra=fields)
    return result.command_id or outcome


def bot_outcome(result: bot_moves.BotMove) -> str:
    """The metric label of ``play_bot_move``'s answer."""
    return result.moved.value


def remote_move(game_id: str, seat: int, version: int) -> str:
    """A registered bot's turn (``remote.play_remote_move``): no Celery task, a greenlet of
    ``services/bots/remote_worker.py``, where waiting on the bot's webhook costs a greenlet,
    not a process. Its answer in a word, as ``move``'s (``RemoteMove.label``)."""
    with logs.context(game_id=game_id, seat=seat, version=version):
        result = remote.play_remote_move(_application(), game_id, seat, version)
        log.info("registered bot %s", result.label)
    return result.label


def hint(request: dict[str, Any]) -> str:
    """Search a hint and hand the answer to the gateway waiting for it (``answered``), unless
    its deadline passed (``late``)."""
    with logs.context(game_id=request.get("game_id"), seat=request.get("seat")):
        return searches.answer_hint(_application(), request).value


def finalize(game_id: str) -> str:
    """Record a finished game's result once: ``ok``, or ``not over`` (Celery keeps the
    word)."""
    return finalize_game(_application(), game_id).value


def launch(tournament_id: str, send: Callable[..., Any]) -> int:
    """Queue a tournament's games in batches (``tournaments.play``) with ``send`` (the Celery
    app's ``send_task``); each batch is safe to run twice, so a launch run twice only repeats
    work that is then skipped."""
    from services.celery_client import TOURNAMENT_QUEUE

    entry = _application().ports.tournaments.get(tournament_id)
    if entry is None:
        return 0
    batches = tournaments.chunks(entry.plan)
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

    for name, fn in (
        ("bots.move", move),
        ("bots.hint", hint),
        ("scoring.finalize", finalize),
        ("tournaments.launch", launch_task),
        ("tournaments.play", play),
    ):
        app.task(name=name, acks_late=True, ignore_result=True, time_limit=TIME_LIMITS[name])(fn)
