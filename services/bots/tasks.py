"""Celery tasks: a bot's move, a hint's search and a finished game's scoring. They take ids
(a hint, its request) and are idempotent.

The tasks are registered on an app by ``register(app)``; the application they run is built by
``bootstrap`` in each worker process on first use, never at import time.

A full Redis (issue 36: past maxmemory it refuses every write): a task whose writes are refused
is not a failure, so it logs no traceback. Each process says it in one line (``FullStore``,
``tabletop_store_full_total{process="celery"}``) and the task runs again after a growing
back-off (every task is idempotent: what its refused try wrote is found and kept), for as long as
its time limit leaves (``STORE_FULL_WAIT_S``). Past that, a tournament's launch or batch and a
game's scoring are given back to the broker (``Reject``: queued again, or on a broker that is
full itself kept as taken, given back once it has room), so a tournament pauses and goes on once
memory is freed instead of losing a batch; a bot's move and a hint are dropped quietly (the
stalled game's sweep wakes the bot again; the hint's asker has stopped waiting).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import cache, partial
from typing import Any, TypeVar

import redis
from celery import Celery
from celery.exceptions import Reject

from shared import logs
from shared.adapters import metrics
from shared.adapters.redis_health import FullStore, store_full
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


# Of a task's time limit, what a full Redis may hold it (waiting between tries): the rest is
# left for its last try to run, and for the kill not to come first (a task killed at its limit
# is acknowledged, so a tournament's batch would be lost).
STORE_FULL_WAIT_S = {
    "bots.move": 60.0,
    "bots.hint": 20.0,
    "scoring.finalize": 40.0,
    "tournaments.launch": 40.0,
    "tournaments.play": 780.0,
}
# Tasks given back to the broker when Redis stays full past their wait (the others dropped).
KEPT_WHEN_FULL = frozenset({"scoring.finalize", "tournaments.launch", "tournaments.play"})

T = TypeVar("T")


@cache
def _full_store() -> FullStore:
    """This process's view of a full Redis (built on first use: in the pool process)."""
    return FullStore("celery", "this Celery worker's tasks", _application().ports.client)


class StillFull(Exception):
    """Redis stayed full past what a task's time limit allows it to wait."""


class Patience:
    """A task's tries while Redis is full: ``run(fn)`` runs ``fn`` again after each refusal,
    with ``FullStore``'s back-off, until it goes through or the task's ``STORE_FULL_WAIT_S``
    is spent (``StillFull``); one ``Patience`` spans the task (a launch's many sends)."""

    def __init__(self, task: str, full: FullStore | None = None) -> None:
        self.task = task
        self.full = full
        self.started = time.monotonic()
        self.deadline = self.started + STORE_FULL_WAIT_S[task]
        self.tries = 0  # in a row, while Redis is unreachable

    def run(self, fn: Callable[[], T]) -> T:
        """``fn()``, tried again while Redis refuses its writes; raises ``StillFull``."""
        while True:
            began = time.monotonic()
            try:
                result = fn()
            except Exception as exc:
                if _transient(exc):
                    # Redis restarting (killed, or loading its file): the task waits for it
                    # within the same wait as a full Redis, instead of failing, which would
                    # drop its work for good (a tournament's batch: the tournament stalled).
                    delay = min(5.0, 0.5 * 2 ** min(self.tries, 4))
                    self.tries += 1
                    if time.monotonic() + delay > self.deadline:
                        raise StillFull(self.task) from exc
                    log.warning("%s: redis unavailable (%s); trying again in %.1f s",
                                self.task, exc, delay)  # fmt: skip
                    time.sleep(delay)
                    continue
                if not store_full(exc):
                    raise
                full = self.full or _full_store()
                delay = full.refused(exc)
                # The next try must end within the wait: one as long as this one after the
                # back-off.
                if time.monotonic() + delay + (time.monotonic() - began) > self.deadline:
                    raise StillFull(self.task) from exc
                time.sleep(delay)
                continue
            full = self.full or _full_store()
            if full.full and full.room():  # not every task writes: the figures tell
                full.accepted()
            return result


def _transient(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis being away for a moment (restarting, loading its data)."""
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError | redis.BusyLoadingError):
        return True
    return isinstance(exc, redis.ResponseError) and str(exc).startswith("LOADING")


def _when_full(task: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as the task ``task``: run with ``Patience``; still refused past its wait, given
    back to the broker (``KEPT_WHEN_FULL``) or dropped with the word ``store full``."""

    def run(*args: Any) -> Any:
        try:
            return fn(*args)
        except StillFull:
            if task in KEPT_WHEN_FULL:
                raise Reject("redis is full: given back to the broker", requeue=True) from None
            return "store full"

    run.__name__ = run.__qualname__ = getattr(fn, "__name__", task)
    run.__doc__ = fn.__doc__
    return run


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
    patience = Patience("bots.move")
    with logs.context(game_id=game_id, seat=seat, version=version):
        try:
            result = patience.run(
                lambda: bot_moves.play_bot_move(_application(), game_id, seat, version)
            )
        finally:
            if search:
                patience.run(lambda: searches.moved(_application(), game_id, seat, version))
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
        # At debug: one line a decision would flood `tabletop run`'s terminal (the counts are
        # in the metrics: tabletop_bot_moves_total).
        log.debug("registered bot %s", result.label)
    return result.label


def hint(request: dict[str, Any]) -> str:
    """Search a hint and hand the answer to the gateway waiting for it (``answered``), unless
    its deadline passed (``late``)."""
    with logs.context(game_id=request.get("game_id"), seat=request.get("seat")):
        return Patience("bots.hint").run(
            lambda: searches.answer_hint(_application(), request).value
        )


def finalize(game_id: str) -> str:
    """Record a finished game's result once: ``ok``, or ``not over`` (Celery keeps the
    word)."""
    return Patience("scoring.finalize").run(lambda: finalize_game(_application(), game_id).value)


def launch(tournament_id: str, send: Callable[..., Any]) -> int:
    """Queue a tournament's games in batches (``tournaments.play``) with ``send`` (the Celery
    app's ``send_task``); each batch is safe to run twice, so a launch run twice only repeats
    work that is then skipped."""
    from services.celery_client import TOURNAMENT_QUEUE

    entry = _application().ports.tournaments.get(tournament_id)
    if entry is None:
        return 0
    batches = tournaments.chunks(entry.plan)
    patience = Patience("tournaments.launch")  # each batch sent once, on a full broker too
    for batch in batches:
        patience.run(
            partial(send, "tournaments.play", args=[tournament_id, batch], queue=TOURNAMENT_QUEUE)
        )
    return len(batches)


def play(tournament_id: str, indexes: list[int]) -> int:
    """Play, store and fold a batch of a tournament's games; on a full Redis, the batch waits
    and is tried again (``Patience``: the games it stored are read back, none folds twice)."""
    return Patience("tournaments.play").run(
        lambda: tournaments.play_games(_application(), tournament_id, indexes)
    )


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
        app.task(name=name, acks_late=True, ignore_result=True, time_limit=TIME_LIMITS[name])(
            _when_full(name, fn)
        )
