"""``tabletop worker --game fox``: one stream consumer process for a game type."""

from __future__ import annotations

import logging
import signal

from services.celery_client import make_dispatcher
from services.worker.consumer import StreamConsumer
from shared.bootstrap import bootstrap
from shared.config import Settings


def build_consumer(game_type: str, settings: Settings | None = None) -> StreamConsumer:
    """A consumer for ``game_type`` on the application ``bootstrap`` builds (Redis, Celery)."""
    settings = settings or Settings.from_env()
    app = bootstrap(settings, dispatcher=make_dispatcher(settings))
    return StreamConsumer(app.ports.client, app, game_type, shards=settings.shards)


def run(game_type: str) -> None:
    """Run until SIGTERM or SIGINT."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker[%(process)d] %(message)s")
    consumer = build_consumer(game_type)
    signal.signal(signal.SIGTERM, lambda *_: consumer.stop_event.set())
    signal.signal(signal.SIGINT, lambda *_: consumer.stop_event.set())
    consumer.run()
