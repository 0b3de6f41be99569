"""``GET /readyz``: whether this gateway can do its job, not only whether it runs.

Ready when Redis answers and, for every game type, some stream consumer polled within
``READY_IDLE_MS``: each consumer records its polls in ``workers:seen:<game>`` (a sorted set by
wall-clock time, ``shared.adapters.redis_consumer.heartbeat_key``), about once a second, read
through ``shared.adapters.redis_health`` (the gateway imports no redis). (XINFO CONSUMERS'
idle time would do on Redis 7.2+, but before it a blocking read that finds nothing leaves it
unchanged, so a worker on a quiet stream would look dead.) ``/healthz`` stays the
liveness check, so a load balancer can tell "restart me" from "send nothing to me yet".
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from shared.adapters.redis_health import RedisUnreachable, worker_polls

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
        seen = worker_polls(client, game_types)
    except RedisUnreachable as exc:
        doc["redis"] = "unreachable"
        missing.append(f"redis: {exc}")
        doc["status"] = "unready"
        return False, doc
    now = time.time() if now is None else now
    for game, polls in seen.items():
        ages = [max(0, int((now - polled) * 1000)) for polled in polls]
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
