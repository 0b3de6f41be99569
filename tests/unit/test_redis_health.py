"""``shared.adapters.redis_health``: what the gateway's ``/readyz`` and ``tabletop rebuild``
ask of Redis, so that neither imports redis itself (issue 27), with their behaviour kept: the
workers' last polls read in one round trip, an unreachable Redis reported, never raised."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest
import redis

from services.gateway.ready import readiness
from shared.adapters import redis_health
from shared.adapters.redis_consumer import heartbeat_key


class Down:
    """A client whose Redis is gone: every command fails as redis-py's do."""

    def ping(self) -> Any:
        raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:9. Connection refused.")

    def pipeline(self, transaction: bool = True) -> Any:
        raise AssertionError("no pipeline after a failed ping")


def test_worker_polls_are_the_heartbeats_freshest_first() -> None:
    fake = fakeredis.FakeRedis()
    fake.zadd(heartbeat_key("fox"), {"w1": 900.0, "w2": 999.5})
    assert redis_health.worker_polls(fake, ["fox", "skull"]) == {
        "fox": [999.5, 900.0],
        "skull": [],
    }


def test_an_unreachable_redis_is_one_error_with_redis_own_message() -> None:
    with pytest.raises(redis_health.RedisUnreachable, match="Connection refused"):
        redis_health.worker_polls(Down(), ["fox"])
    # The gateway's /readyz report of it, unchanged: unready, naming Redis.
    ok, doc = readiness(Down(), ["fox"])
    assert not ok and doc["redis"] == "unreachable" and doc["status"] == "unready"
    assert doc["missing"] == ["redis: Error 111 connecting to 127.0.0.1:9. Connection refused."]
