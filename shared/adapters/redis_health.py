"""What the entry points ask of Redis about its health, so that the gateway and the CLIs never
import redis themselves (issue 27): the gateway's ``/readyz`` reads the stream consumers' last
polls, ``tabletop rebuild`` asks whether a stack's Redis still answers.

Every fault of Redis (one server's or a cluster's, ``REDIS_ERRORS``) leaves here as
``RedisUnreachable`` or as a plain answer, so a caller needs no redis-py exception class.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis

from shared.adapters.redis import REDIS_ERRORS
from shared.adapters.redis_consumer import heartbeat_key


class RedisUnreachable(Exception):
    """Redis did not answer; the message is redis-py's own (which host, what failed)."""


def worker_polls(client: Any, game_types: Iterable[str]) -> dict[str, list[float]]:
    """Per game type, the wall-clock times (epoch seconds) at which each of its stream
    consumers last polled, freshest first (``redis_consumer.heartbeat_key``). A ping first,
    then one pipelined round trip for every game type. Raises ``RedisUnreachable``."""
    names = list(game_types)
    try:
        client.ping()
        pipe = client.pipeline(transaction=False)
        for game in names:
            pipe.zrevrange(heartbeat_key(game), 0, -1, withscores=True)
        seen = pipe.execute()
    except REDIS_ERRORS as exc:
        raise RedisUnreachable(str(exc)) from exc
    return {
        game: [float(score) for _, score in rows] for game, rows in zip(names, seen, strict=True)
    }


def answers(url: str, timeout: float = 1.0) -> bool:
    """Whether the Redis at ``url`` answers a ping within ``timeout`` seconds: a stack that
    stopped leaves its URL file behind, and a command must not hang on, or guess, that Redis."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout)
    try:
        return bool(client.ping())
    except REDIS_ERRORS:
        return False
    finally:
        client.close()
