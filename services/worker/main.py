"""``tabletop worker --game fox``: one stream consumer process for a game type."""

from __future__ import annotations

import signal

from services.celery_client import make_dispatcher
from services.worker.consumer import StreamConsumer
from services.worker.deadlines import DeadlineScheduler
from shared import logs
from shared.adapters import metrics, retention
from shared.bootstrap import bootstrap
from shared.config import Settings


def build_consumer(game_type: str, settings: Settings | None = None) -> StreamConsumer:
    """A consumer for ``game_type`` on the application ``bootstrap`` builds (Redis, Celery)."""
    settings = settings or Settings.from_env()
    app = bootstrap(settings, dispatcher=make_dispatcher(settings))
    return StreamConsumer(app.ports.client, app, game_type, shards=settings.shards)


def run(game_type: str) -> None:
    """Run until SIGTERM or SIGINT; the batch being handled is finished and acknowledged
    first (the signal only sets ``stop_event``)."""
    logs.configure(f"worker-{game_type}")
    consumer = build_consumer(game_type)
    streams = len(consumer.streams)
    DeadlineScheduler(  # turn clocks' time-outs, stalled bot games, trimming
        consumer.app,
        consumer.stop_event,
        housekeeping=lambda: retention.trim_game_type(consumer.r, game_type, streams),
    ).start()
    metrics.serve()  # with TABLETOP_METRICS_PORT: this process's own /metrics
    signal.signal(signal.SIGTERM, lambda *_: consumer.stop_event.set())
    signal.signal(signal.SIGINT, lambda *_: consumer.stop_event.set())
    consumer.run()
