"""Fixtures shared by every test layer: a real redis-server (or ``REDIS_URL``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest
import redis
from hypothesis import HealthCheck, settings

from shared.redis_server import RedisServer

# A busy 2-core CI machine must not turn slow examples into failures: play-outs are long by
# nature. The checks that catch wrong strategies (filtering too much, huge data) stay on.
settings.register_profile("tabletop", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "tabletop"))

# The data directory (the registered bots' signing secret is a file there) of every process the
# tests start: one of the session's own, never the checkout's ./run.
os.environ.setdefault("TABLETOP_DATA_DIR", tempfile.mkdtemp(prefix="tabletop-tests-"))


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real Redis for the session: ``REDIS_URL`` if set, else a redis-server we start."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    server = RedisServer()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """A client on an empty database (flushed before each test)."""
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.close()
