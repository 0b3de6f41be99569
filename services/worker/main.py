"""``tabletop worker --game fox``: one stream consumer process for a game type."""

from __future__ import annotations

import logging
import signal

import redis

from services.celery_client import make_dispatcher
from services.worker.consumer import StreamConsumer
from shared.config import Settings
from shared.service import GameService
from shared.store.redis_streams import RedisEventStore


def bootstrap(game_type: str, settings: Settings | None = None) -> StreamConsumer:
    """Wire a consumer for ``game_type`` to Redis and Celery."""
    settings = settings or Settings.from_env()
    client = redis.Redis.from_url(settings.redis_url)
    service = GameService(
        RedisEventStore(client),
        client,
        dispatcher=make_dispatcher(settings),
        shards=settings.shards,
    )
    return StreamConsumer(client, service, game_type, shards=settings.shards)


def run(game_type: str) -> None:
    """Run until SIGTERM or SIGINT."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker[%(process)d] %(message)s")
    consumer = bootstrap(game_type)
    signal.signal(signal.SIGTERM, lambda *_: consumer.stop_event.set())
    signal.signal(signal.SIGINT, lambda *_: consumer.stop_event.set())
    consumer.run()
