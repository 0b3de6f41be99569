"""The Celery application, built by a factory from the environment.

Delivery: a task is acknowledged only once it has run (``acks_late``) and given back to the
broker if its pool process dies (``task_reject_on_worker_lost``), so a crash re-runs it (every
task is idempotent). Each pool process reserves one task at a time (prefetch 1): a killed main
process then holds few unacknowledged tasks, and the Redis broker gives them to another worker
after its visibility timeout, which is matched to the longest task's hard time limit (the
default hour would stall a bot game that long; a shorter one than a task would run it twice).

A full broker (issue 36): kombu's Redis transport writes its own bookkeeping — a lock before it
gives back overdue tasks (at start and every few seconds), the queues' bindings, the record of
each task taken (``unacked``), in MULTI transactions that a Redis past its maxmemory refuses
whole — and Celery treats such a refusal as unrecoverable: a worker started on a full Redis
exited at once, and the supervisor started it again and again (issue 36: 36 restarts, 127
tracebacks). ``Transport`` (``broker_transport``) keeps kombu's behaviour and meets a full
Redis instead: the lock and the bindings wait for the next try, no task is taken while the
broker refuses writes (so none is taken that could not be recorded), a task taken just as it
filled is recorded once it has room, an acknowledgement is two deletions Redis always takes
(no transaction), and a task given back while the broker is full stays recorded as taken, to be
given back once it has room (kombu's restore of overdue tasks). One line says it is full, one
that it takes writes again (``FullStore``), and ``tabletop_store_full_total{process="broker"}``
counts it.
"""

from __future__ import annotations

import logging
import time
import warnings
from typing import Any

import redis
from celery import Celery
from celery.exceptions import SecurityWarning
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual

from services.bots.tasks import TIME_LIMITS
from services.celery_client import BROKER_TRANSPORT_OPTIONS
from shared.adapters.redis_health import FullStore, RedisUnreachable, memory, store_full
from shared.config import Settings

log = logging.getLogger(__name__)

VISIBILITY_MARGIN_S = 60  # past the longest time limit: the kill and the ack take a moment
VISIBILITY_TIMEOUT_S = max(TIME_LIMITS.values()) + VISIBILITY_MARGIN_S

# The main process's view of a full broker: shared by its channels (one Redis).
BROKER_FULL = FullStore(
    "broker", "the Celery worker (taking no task until the broker has room)", most=10.0
)


def _stopping() -> bool:
    """Whether the worker was asked to stop (a wait for the broker must not hold it)."""
    from celery.worker import state

    return bool(state.should_stop or state.should_terminate)


class QoS(kombu_redis.QoS):
    """kombu's acknowledgement emulation, meeting a full Redis (the module's docstring)."""

    def can_consume(self) -> bool:
        """kombu's prefetch limit, and no task taken while the broker refuses writes: its
        record in ``unacked`` could not be written. Asked at every turn of the event loop:
        the figures are read only after a refusal, then at most every back-off."""
        return super().can_consume() and _broker_has_room(self.channel)

    def append(self, message: Any, delivery_tag: Any) -> None:
        """Record a task taken. One taken as the broker filled (BRPOP takes from a full
        Redis) waits for room: lost unrecorded, a crash could not give it back."""
        while True:
            try:
                super().append(message, delivery_tag)
            except Exception as exc:
                if not store_full(exc) or _stopping():
                    raise
                time.sleep(BROKER_FULL.refused(exc))
                continue
            return

    def reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        """A task given back (``requeue``): on a full broker it stays recorded as taken and is
        given back once the broker has room, past its visibility timeout (kombu's
        ``restore_visible``); dropped (not ``requeue``): forgotten as an acknowledged one."""
        if not requeue:
            self.ack(delivery_tag)
            return
        try:
            super().reject(delivery_tag, requeue=True)
        except Exception as exc:
            if not store_full(exc):
                raise
            BROKER_FULL.refused(exc)
            virtual.QoS.ack(self, delivery_tag)

    def restore_visible(self, *args: Any, **kwargs: Any) -> Any:
        """Give back tasks taken past the visibility timeout; on a full broker, at the next
        try (its lock is a write)."""
        try:
            return super().restore_visible(*args, **kwargs)
        except Exception as exc:
            if not store_full(exc):
                raise
            BROKER_FULL.refused(exc)
            return None

    def restore_unacked(self, client: Any = None) -> Any:
        """At a stop, give back the tasks in hand; on a full broker they stay recorded as
        taken, given back by another worker once it has room."""
        try:
            return super().restore_unacked(client)
        except Exception as exc:
            if not store_full(exc):
                raise
            log.warning("broker full at stop: tasks in hand stay recorded, given back later")
            return None


class PlainPipelines(redis.Redis):
    """redis-py's client whose ``pipeline()`` is a plain one unless asked for a transaction
    (``transaction()`` asks, where kombu needs its WATCH). kombu batches its bookkeeping in
    pipelines with redis-py's default, a MULTI, and a full Redis refuses every command queued
    in a MULTI: the reads (a queue's length), the deletions (an acknowledgement, a reply
    queue's removal) with the writes. Plain, those go through; a refused write fails alone."""

    def pipeline(self, transaction: bool = False, shard_hint: Any = None) -> Any:
        return super().pipeline(transaction, shard_hint)


class Channel(kombu_redis.Channel):
    """kombu's Redis channel meeting a full broker: plain pipelines (``PlainPipelines``), and
    binding writes that wait for the next try."""

    QoS = QoS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if BROKER_FULL.client is None:  # its figures in the line that says it is full
            BROKER_FULL.client = self._create_client()

    def _get_client(self) -> Any:
        client = super()._get_client()
        return PlainPipelines if client is redis.Redis else client  # a key prefix: kombu's

    def _queue_bind(self, exchange: Any, routing_key: Any, pattern: Any, queue: Any) -> None:
        # A binding not written now is written by the next declare (a sender's, or this
        # worker's refresh of its expiring queues); a queue's tasks are read from its list.
        try:
            super()._queue_bind(exchange, routing_key, pattern, queue)
        except Exception as exc:
            if not store_full(exc):
                raise
            BROKER_FULL.refused(exc)

    def _maybe_update_queues_expire(self, client: Any, queue: Any) -> None:
        # An expiring queue's time-to-live, renewed at the next read if refused now.
        try:
            super()._maybe_update_queues_expire(client, queue)
        except Exception as exc:
            if not store_full(exc):
                raise
            BROKER_FULL.refused(exc)

    def maybe_refresh_binding_expiry(self) -> None:
        try:
            super().maybe_refresh_binding_expiry()
        except Exception as exc:
            if not store_full(exc):
                raise
            BROKER_FULL.refused(exc)


class Transport(kombu_redis.Transport):
    """kombu's Redis transport meeting a full broker (the module's docstring)."""

    Channel = Channel


TRANSPORT = f"{__name__}:Transport"

_next_check = 0.0


def _broker_has_room(channel: Any) -> bool:
    """False while the broker refuses writes: once one was refused (``BROKER_FULL``), its
    figures are read at most every back-off until they show room again."""
    global _next_check
    if not BROKER_FULL.full:
        return True
    now = time.monotonic()
    if now < _next_check:
        return False
    try:
        with channel.conn_or_acquire() as client:
            refusing = memory(client).refusing
    except RedisUnreachable:
        refusing = False  # a fault of its own: the consumer meets it and reconnects
    if refusing:
        _next_check = now + BROKER_FULL.wait_longer()
        return False
    BROKER_FULL.accepted()
    return True


def create_celery(settings: Settings | None = None) -> Celery:
    """A Celery app whose broker is the service's Redis, or on a Redis Cluster the plain Redis
    of ``TABLETOP_BROKER_URL`` (kombu's Redis transport runs MULTI/EXEC and BRPOP across its
    queue lists and ``unacked`` keys, which a cluster refuses as cross-slot), through
    ``Transport`` (kombu's, meeting a full broker). Results are not kept
    (``task_ignore_result``): the tasks write theirs to the service's own store."""
    settings = settings or Settings.from_env()
    # A worker run as root (a container's default) warns at every start, in seven lines, of
    # the risk of unpickling as root: this app accepts JSON alone (Celery's default), never
    # pickle, so the warning says nothing here and buried `tabletop run`'s ready line.
    warnings.filterwarnings("ignore", category=SecurityWarning)
    broker = settings.celery_broker_url
    app = Celery("tabletop", broker=broker)
    if broker.startswith("redis://"):  # a plain Redis (kombu's own for rediss:// and others)
        app.conf.broker_transport = TRANSPORT
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_transport_options={
            **BROKER_TRANSPORT_OPTIONS,  # the search queue's priorities, as senders use them
            "visibility_timeout": VISIBILITY_TIMEOUT_S,
        },
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        task_default_queue="tabletop",
        worker_hijack_root_logger=False,
    )
    from services.bots.tasks import register

    register(app)
    return app
