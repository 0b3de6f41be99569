"""``GET /readyz``: whether this gateway can do its job, not only whether it runs.

Ready when Redis answers, takes writes and, for every game type, some stream consumer polled
within ``READY_IDLE_MS``: each consumer records its polls in ``workers:seen:<game>`` (a sorted
set by wall-clock time, ``shared.adapters.redis_consumer.heartbeat_key``), about once a second,
read through ``shared.adapters.redis_health`` (the gateway imports no redis). (XINFO CONSUMERS'
idle time would do on Redis 7.2+, but before it a blocking read that finds nothing leaves it
unchanged, so a worker on a quiet stream would look dead.) ``/healthz`` stays the
liveness check, so a load balancer can tell "restart me" from "send nothing to me yet".

Memory (issue 36): ``memory`` has Redis's ``used_memory`` against its ``maxmemory``. Past the
warning share (``TABLETOP_REDIS_MEMORY_WARN``, 80%) the report is ``degraded`` (still 200, the
reason in ``warnings``); past the critical share (``TABLETOP_REDIS_MEMORY_CRITICAL``, 95%), or
once Redis refuses writes (past maxmemory: policy ``noeviction``), not ready (503, the reason in
``missing``): a full Redis answers reads and refuses every new game, command and tournament
game, which a load balancer and an operator must hear of.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from shared.adapters.redis_health import Memory, RedisUnreachable, memory, worker_polls
from shared.config import DEFAULT_REDIS_MEMORY_CRITICAL, DEFAULT_REDIS_MEMORY_WARN

READY_IDLE_MS = 10_000


def readiness(
    client: Any,
    game_types: Iterable[str],
    max_idle_ms: int = READY_IDLE_MS,
    *,
    now: float | None = None,
    warn: float | None = None,
    critical: float | None = None,
) -> tuple[bool, dict[str, Any]]:
    """(ready, the body): per game type how many workers polled within the limit and how
    long ago the freshest did, Redis's ``memory`` against the thresholds (``warn`` and
    ``critical`` shares of maxmemory; by default the running app's settings), in ``missing``
    what keeps the service from being ready and in ``warnings`` what degrades it."""
    missing: list[str] = []
    warnings: list[str] = []
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
    if warn is None or critical is None:
        default_warn, default_critical = _thresholds()
        warn = default_warn if warn is None else warn
        critical = default_critical if critical is None else critical
    doc["memory"] = memory_check(client, warn, critical, missing, warnings)
    doc["warnings"] = warnings
    doc["status"] = "unready" if missing else ("degraded" if warnings else "ready")
    return not missing, doc


def memory_check(
    client: Any, warn: float, critical: float, missing: list[str], warnings: list[str]
) -> dict[str, Any]:
    """``memory`` of the report: the figures, the thresholds and a ``status`` (``ok``,
    ``degraded``, ``critical``, ``full``: refusing writes, ``unlimited``: no maxmemory, or
    ``unknown``: INFO not answered); what is past a threshold goes to ``missing`` or
    ``warnings``, one line each."""
    try:
        figures = memory(client)
    except RedisUnreachable as exc:  # INFO refused (a managed Redis may rename it): no verdict
        return {"status": "unknown", "error": str(exc)}
    check: dict[str, Any] = {
        "used_bytes": figures.counted,
        "maxmemory_bytes": figures.maxmemory,
        "used_ratio": None if figures.ratio is None else round(figures.ratio, 4),
        "warn_ratio": warn,
        "critical_ratio": critical,
        "policy": figures.policy,
        "refusing_writes": figures.refusing,
    }
    check["status"] = _memory_status(figures, warn, critical)
    line = f"redis memory: {figures.describe()}"
    if check["status"] == "full":
        missing.append(f"{line}: full, Redis refuses writes")
    elif check["status"] == "critical":
        missing.append(f"{line}, past the critical {critical:.0%}")
    elif check["status"] == "degraded":
        warnings.append(f"{line}, past the warning {warn:.0%}")
    return check


def _memory_status(figures: Memory, warn: float, critical: float) -> str:
    if figures.ratio is None:
        return "unlimited"
    if figures.refusing:
        return "full"
    if figures.ratio >= critical:
        return "critical"
    if figures.ratio >= warn:
        return "degraded"
    return "ok"


def _thresholds() -> tuple[float, float]:
    """The serving app's thresholds (its ``Settings``), else the defaults."""
    from flask import current_app, has_app_context

    settings = current_app.config.get("SETTINGS") if has_app_context() else None
    if settings is None:
        return DEFAULT_REDIS_MEMORY_WARN, DEFAULT_REDIS_MEMORY_CRITICAL
    return settings.redis_memory_warn, settings.redis_memory_critical


def summary(doc: Mapping[str, Any]) -> str:
    """One line for a log."""
    return "; ".join([*doc.get("missing", []), *doc.get("warnings", [])]) or "ready"
