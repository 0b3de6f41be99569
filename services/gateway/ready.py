"""``GET /readyz``: whether this gateway can do its job, not only whether it runs.

Ready when Redis answers and, for every game type, some stream consumer polled within
``READY_IDLE_MS``: each consumer records its polls in ``workers:seen:<game>`` (a sorted set by
wall-clock time, ``shared.adapters.redis_consumer.heartbeat_key``), about once a second. (XINFO
CONSUMERS' idle time would do on Redis 7.2+, but before it a blocking read that finds nothing
leaves it unchanged, so a worker on a quiet stream would look dead.) ``/healthz`` stays the
liveness check, so a load balancer can tell "restart me" from "send nothing to me yet".
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import redis

from shared.adapters.redis_consumer import heartbeat_key

READY_IDLE_MS = 10_000


def readiness(
    client: Any,
    game_types: Iterable[str],
    max_idle_ms: int = READY_IDLE_MS,
    *,
    now: float | None = None,
) -> tuple[bool, dict[str, Any]]:
    """(ready, the body): per game type how many workers polled within the limit and how
    long ago the freshest did, and in ``missing`` what keeps the service from being ready."""
    missing: list[str] = []
    doc: dict[str, Any] = {"redis": "ok", "games": {}, "missing": missing}
    try:
        client.ping()
        now = time.time() if now is None else now
        pipe = client.pipeline(transaction=False)
        names = list(game_types)
        for game in names:
            pipe.zrevrange(heartbeat_key(game), 0, -1, withscores=True)
        seen = pipe.execute()
    except redis.RedisError as exc:
        doc["redis"] = "unreachable"
        missing.append(f"redis: {exc}")
        doc["status"] = "unready"
        return False, doc
    for game, rows in zip(names, seen, strict=True):
        ages = [max(0, int((now - score) * 1000)) for _, score in rows]
        fresh = [a for a in ages if a <= max_idle_ms]
        doc["games"][game] = {"workers": len(fresh), "last_seen_ms": min(ages) if ages else None}
        if not ages:
            missing.append(f"{game}: no worker has polled its streams")
        elif not fresh:
            missing.append(f"{game}: no worker seen for {min(ages)} ms (limit {max_idle_ms})")
    doc["status"] = "unready" if missing else "ready"
    return not missing, doc


def summary(doc: Mapping[str, Any]) -> str:
    """One line for a log."""
    return "; ".join(doc.get("missing", [])) or "ready"
