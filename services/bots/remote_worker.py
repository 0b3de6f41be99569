"""``python -m services.bots.remote_worker``: registered bots' turns, waited on by greenlets.

The game workers hand each turn of a registered bot over as ``[game_id, seat, version]`` on
the broker's list ``REMOTE_TURNS`` (``CeleryDispatcher.remote``); this process takes them
oldest first, as many at once as it has free greenlets, and plays each with
``tasks.remote_move`` (``remote.play_remote_move``) in a greenlet of its own: a bot that is
slow or hangs holds only its own greenlet (at most its budget), so it slows only its own
games. Not a Celery worker: a Celery task per turn cost a publish in the game worker and a
consumer loop and an ack here, more than the turn itself.

A turn taken from the list is not acknowledged: one lost with its process (killed while its
bot was asked) is sent again by the bot-stall sweep (``clocks.fire_due_deadlines``,
``BOT_STALL_S`` later), which wakes every game whose bot has not moved; a turn sent twice is
played once (the command id is the seat and version).

A full Redis (issue 36) refuses the turn's writes: that turn is dropped like a lost one (the
sweep sends it again), without a traceback; the process says so in one line (``FULL``,
``tabletop_store_full_total{process="remote-bots"}``) and takes no turn until Redis's figures
show room, looking again after a back-off that grows to ``FULL_BACKOFF_MAX_S``.
"""

from gevent import monkey

monkey.patch_all()  # before anything opens a socket or takes a lock

import os  # noqa: E402

from shared import metrics_dir  # noqa: E402

# Before anything imports prometheus-client (the tasks' metrics do): under ``tabletop run`` a
# directory below the Celery workers' root, which the gateway's /metrics sums.
metrics_dir.adopt(os.environ.get("TABLETOP_REMOTE_METRICS_DIR"))

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any, cast  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import gevent.pool  # noqa: E402
import redis  # noqa: E402

from services.bots import tasks  # noqa: E402
from services.celery_client import REMOTE_TURNS  # noqa: E402
from shared import logs  # noqa: E402
from shared.adapters import metrics  # noqa: E402
from shared.adapters.redis_health import FullStore, store_full  # noqa: E402
from shared.config import Settings  # noqa: E402

log = logging.getLogger(__name__)

CONCURRENCY = 200  # turns waited on at once (greenlets)
POLL_S = 1.0  # an idle BRPOP's wait: how soon a stop is noticed
# A turn's hard limit, as the Celery task had: a webhook's budget_ms is at most 10 s.
TURN_LIMIT_S = 60.0
FULL_BACKOFF_MAX_S = 10.0  # a full Redis is looked at again at least this often

# This process's view of a full Redis (its figures from the game store's client: ``main``).
FULL = FullStore(
    "remote-bots",
    "the registered bots' worker (taking no turn until Redis has room)",
    most=FULL_BACKOFF_MAX_S,
)

Play = Callable[[str, int, int], Any]


def serve(
    client: redis.Redis,
    stop: gevent.event.Event,
    concurrency: int = CONCURRENCY,
    play: Play = tasks.remote_move,
) -> None:
    """Take turns from ``REMOTE_TURNS`` and play each in a greenlet, at most ``concurrency``
    at once, until ``stop`` is set; then wait for those in hand (at most ``TURN_LIMIT_S``)."""
    pool = gevent.pool.Pool(concurrency)
    while not stop.is_set():
        if FULL.full:  # a turn's writes were refused: none taken until there is room
            if stop.wait(FULL.delay):
                break
            if not FULL.room():
                FULL.wait_longer()
                continue
            FULL.accepted()
        free = pool.free_count()
        if free == 0:
            pool.wait_available(timeout=POLL_S)
            continue
        # LPUSHed, so the oldest are at the right: up to `free` at once under load, a
        # blocking wait for one when the list is empty.
        taken: list[bytes] = client.rpop(REMOTE_TURNS, free) or []  # type: ignore[assignment]
        if not taken:
            popped = client.brpop([REMOTE_TURNS], timeout=POLL_S)
            if popped is None:
                continue
            taken = [cast(bytes, popped[1])]
        for raw in taken:
            pool.spawn(_turn, play, raw)
    pool.join(timeout=TURN_LIMIT_S)


# The task name its turns are counted under (``tabletop_celery_tasks``, by state, and
# ``tabletop_celery_task_duration_seconds``): the Celery task that played them before.
TASK = "bots.remote"


def _turn(play: Play, raw: bytes) -> None:
    """One turn, within its hard limit; whatever goes wrong is logged (the sweep retries)."""
    started = time.perf_counter()
    state = "failed"
    try:
        game_id, seat, version = json.loads(raw)
        with gevent.Timeout(TURN_LIMIT_S):
            play(str(game_id), int(seat), int(version))
        state = "succeeded"
    except gevent.Timeout:
        log.error("registered bot's turn %s past its %s s limit", raw, TURN_LIMIT_S)
    except Exception as exc:
        if store_full(exc):  # one line for them all; the sweep sends the turn again
            FULL.refused(exc)
        else:
            log.exception("registered bot's turn %s failed", raw)
    finally:
        metrics.CELERY_TASKS.labels(TASK, state).inc()
        metrics.CELERY_LATENCY.labels(TASK).observe(time.perf_counter() - started)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    args = parser.parse_args(argv)
    logs.configure("remote-bots")
    settings = Settings.from_env()
    client = redis.Redis.from_url(settings.celery_broker_url)
    FULL.client = tasks._application().ports.client  # the game store's figures
    stop = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stop.set)
    gevent.signal_handler(signal.SIGINT, stop.set)
    serve(client, stop, args.concurrency)


if __name__ == "__main__":
    main()
