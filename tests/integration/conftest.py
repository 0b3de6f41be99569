"""An in-process stack on a real Redis: the Flask app (test client) and one stream consumer
per game type in background threads; bot turns run inline."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from services.cli import available_games
from services.gateway.app import create_app
from services.worker.consumer import StreamConsumer
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.bootstrap import bootstrap
from shared.config import Settings

ORGANIZER = "organizer-key-1"
AUDITOR = "auditor-key-1"


@dataclass
class Stack:
    """What a test can drive and inspect."""

    app: Flask
    http: FlaskClient
    redis: redis.Redis
    worker_app: App
    consumers: list[StreamConsumer]


def _consume(consumer: StreamConsumer) -> None:
    consumer.ensure_groups()
    while not consumer.stop_event.is_set():
        consumer.poll_once(block_ms=50)


@contextlib.contextmanager
def consuming(
    client: Any, worker_app: App, *, name: str, shards: int = 1
) -> Iterator[list[StreamConsumer]]:
    """One stream consumer per game type, each polling in a background thread until the
    block ends."""
    consumers = [
        StreamConsumer(client, worker_app, g, shards=shards, name=f"{name}-{g}")
        for g in available_games()
    ]
    for c in consumers:
        c.ensure_groups()
    threads = [threading.Thread(target=_consume, args=(c,), daemon=True) for c in consumers]
    for t in threads:
        t.start()
    try:
        yield consumers
    finally:
        for c in consumers:
            c.stop_event.set()
        for t in threads:
            t.join(5)


@pytest.fixture
def stack(redis_url: str, redis_client: redis.Redis) -> Iterator[Stack]:
    settings = Settings(
        redis_url=redis_url,
        organizer_keys=frozenset({ORGANIZER}),
        auditor_keys=frozenset({AUDITOR}),
        max_wait=10,
    )
    worker_client = redis.Redis.from_url(redis_url)
    worker_app = bootstrap(
        settings, client=worker_client, dispatcher=lambda a: InlineDispatcher().bind(a)
    )
    app = create_app(
        settings,
        client=redis.Redis.from_url(redis_url),
        dispatcher=lambda a: InlineDispatcher().bind(a),
    )
    try:
        with consuming(worker_client, worker_app, name="test") as consumers:
            yield Stack(
                app=app,
                http=app.test_client(),
                redis=redis_client,
                worker_app=worker_app,
                consumers=consumers,
            )
    finally:
        worker_client.close()


@pytest.fixture
def api(stack: Stack) -> Iterator[str]:
    """The in-process gateway on a real socket (what the CLIs and the bot kit talk to; a
    feed or a bot's turn stream is a long response)."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, stack.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(10)
