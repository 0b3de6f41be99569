"""``tabletop worker --game <name>``: one stream consumer process for a game type."""

from __future__ import annotations

import logging
import os
import signal

from services.celery_client import make_dispatcher
from services.worker.archiver import Archiver
from services.worker.consumer import StreamConsumer
from services.worker.deadlines import DeadlineScheduler
from shared import logs
from shared.adapters import metrics, retention, store_format
from shared.bootstrap import bootstrap
from shared.config import Settings

log = logging.getLogger(__name__)


def build_consumer(game_type: str, settings: Settings | None = None) -> StreamConsumer:
    """A consumer for ``game_type`` on the application ``bootstrap`` builds (Redis, Celery)."""
    settings = settings or Settings.from_env()
    app = bootstrap(settings, dispatcher=make_dispatcher(settings))
    # Leases: each shard read by one worker at a time, in order, with a warm cache.
    # The supervisor names each worker slot: restarted, it takes back its own pending
    # commands and leases at once instead of waiting for them to time out.
    name = os.environ.get("TABLETOP_CONSUMER_NAME") or None
    return StreamConsumer(
        app.ports.client, app, game_type, shards=settings.shards, name=name, leases=True
    )


def run(game_type: str) -> None:
    """Run until SIGTERM or SIGINT; the batch being handled is finished and acknowledged
    first (the signal only sets ``stop_event``)."""
    logs.configure(f"worker-{game_type}")
    consumer = build_consumer(game_type)
    try:  # a store from an older build is brought to this one's layout first
        store_format.migrate(consumer.r)
    except store_format.StoreFormatError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    # Before anything that lets a caller see the worker alive (its /metrics port, its
    # decisions): a SIGTERM from then on is a clean stop, never the default kill.
    signal.signal(signal.SIGTERM, lambda *_: consumer.stop_event.set())
    signal.signal(signal.SIGINT, lambda *_: consumer.stop_event.set())
    streams = len(consumer.streams)
    DeadlineScheduler(  # turn clocks' time-outs, stalled bot games, trimming
        consumer.app,
        consumer.stop_event,
        housekeeping=lambda: retention.trim_game_type(consumer.r, game_type, streams),
    ).start()
    # With TABLETOP_METRICS_PORT: this process's own /metrics (its own files alone when they
    # are in the directory the stack's workers share).
    metrics.serve(metrics.own_registry())
    archive = consumer.app.ports.archive
    if archive is not None:  # finished games move out of Redis (one worker sweeps at a time)
        settings = Settings.from_env()
        Archiver(
            consumer.app,
            archive,
            after_s=settings.archive_after_s,
            memory_warn=settings.redis_memory_warn,
            stop_event=consumer.stop_event,
        ).start()
    consumer.run()
