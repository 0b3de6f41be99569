"""What the entry points ask of Redis about its health, so that the gateway and the CLIs never
import redis themselves (issue 27): the gateway's ``/readyz`` reads the stream consumers' last
polls and Redis's memory figures, ``tabletop rebuild`` asks whether a stack's Redis still answers.

Every fault of Redis (one server's or a cluster's, ``REDIS_ERRORS``) leaves here as
``RedisUnreachable`` or as a plain answer, so a caller needs no redis-py exception class.

A full Redis (issue 36): with ``maxmemory-policy noeviction`` Redis refuses every write that
could grow its memory once ``used_memory`` is past ``maxmemory`` (``OOM command not allowed``),
and every command queued in a MULTI, while reads go on. ``store_full`` tells that refusal from
other faults, whoever wrapped it (kombu raises its own ``OperationalError`` from redis-py's);
``memory`` reads the figures; ``FullStore`` is how a process's loop meets it: one line when
writes are first refused, one when they go through again, a metric, and a back-off between
tries instead of a traceback per retry.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import redis

from shared.adapters import metrics
from shared.adapters.redis import REDIS_ERRORS
from shared.adapters.redis_consumer import heartbeat_key

log = logging.getLogger(__name__)


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


# --- a full Redis ---------------------------------------------------------------------------

# The text of Redis's refusal: "OOM command not allowed when used memory > 'maxmemory'" (redis-py
# strips the OOM code it raises OutOfMemoryError for; a script's error or a wrapped one keeps it).
OOM_TEXTS = ("OOM command not allowed", "command not allowed when used memory > 'maxmemory'")


def store_full(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error it was raised from (``raise ... from``: kombu's
    ``OperationalError`` around redis-py's), is Redis refusing a write because it is full."""
    for _ in range(8):  # a chain of causes is short; never loop on a cycle
        if exc is None:
            return False
        if isinstance(exc, redis.exceptions.OutOfMemoryError):
            return True
        if isinstance(exc, redis.exceptions.ResponseError) and any(
            text in str(exc) for text in OOM_TEXTS
        ):
            return True
        exc = exc.__cause__
    return False


@dataclass(frozen=True, slots=True)
class Memory:
    """Redis's memory figures (``INFO memory``)."""

    used: int  # used_memory, bytes
    maxmemory: int  # 0: no limit
    not_counted: int = 0  # mem_not_counted_for_evict: replication and AOF buffers
    policy: str = ""  # maxmemory_policy

    @property
    def counted(self) -> int:
        """What Redis holds against ``maxmemory``."""
        return max(0, self.used - self.not_counted)

    @property
    def ratio(self) -> float | None:
        """``counted`` over ``maxmemory``; None without a limit."""
        return self.counted / self.maxmemory if self.maxmemory else None

    @property
    def refusing(self) -> bool:
        """Whether Redis refuses writes now: past ``maxmemory`` (as Redis itself counts, before
        each command) with nothing it may evict."""
        return bool(self.maxmemory) and self.counted > self.maxmemory

    def describe(self) -> str:
        """``used 47.9 MB of maxmemory 48.0 MB (99.8%)``."""
        if not self.maxmemory:
            return f"used {_mb(self.used)}, no maxmemory"
        return (
            f"used {_mb(self.counted)} of maxmemory {_mb(self.maxmemory)} "
            f"({100 * (self.ratio or 0):.1f}%)"
        )


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def _memory_of(info: Mapping[str, Any]) -> Memory:
    if "used_memory" not in info:  # a cluster client: a section per node; the fullest counts
        nodes = [_memory_of(v) for v in info.values() if isinstance(v, Mapping)]
        if not nodes:
            raise RedisUnreachable("INFO memory answered no used_memory")
        return max(nodes, key=lambda m: (m.refusing, m.ratio or 0.0))
    return Memory(
        used=int(info["used_memory"]),
        maxmemory=int(info.get("maxmemory", 0) or 0),
        not_counted=int(info.get("mem_not_counted_for_evict", 0) or 0),
        policy=str(info.get("maxmemory_policy", "")),
    )


def memory(client: Any) -> Memory:
    """Redis's memory figures, in one ``INFO memory``. Raises ``RedisUnreachable``."""
    try:
        info = client.info("memory")
    except REDIS_ERRORS as exc:
        raise RedisUnreachable(str(exc)) from exc
    return _memory_of(info)


# Within the last share of maxmemory Redis is full for whatever writes much at once (a
# tournament's batch of games): the small writes it still takes there come and go with its
# clients' buffers, which count in its used memory.
FULL_RATIO = 0.99


def write_refusal(client: Any) -> str | None:
    """Why Redis refuses writes now (its figures: past maxmemory, or within its last
    ``FULL_RATIO``), or None when it takes them or cannot be asked (an unreachable Redis is
    another fault, reported as such where it is met)."""
    if client is None:
        return None
    try:
        figures = memory(client)
    except RedisUnreachable:
        return None
    if not (figures.refusing or (figures.ratio or 0.0) >= FULL_RATIO):
        return None
    return f"the game store is full: Redis {figures.describe()}, refusing writes past it"


class FullStore:
    """How one loop of a process meets a full Redis (``store_full``): ``refused`` counts each
    refused write (``tabletop_store_full_total``), logs ONE warning line the first time (with
    the memory figures when ``client`` is given) and answers how long to wait before trying
    again, doubling from ``first`` to ``most`` seconds; ``accepted`` — a write went through —
    logs one line that writes are taken again, after how long. ``room`` asks the figures
    whether to try again at all. A Redis at its limit flaps (a refused write frees its buffer,
    and the next small one is taken): a shortage that starts again within ``quiet`` seconds of
    the last line is counted, not said again. Thread-safe: a process's threads may share one."""

    def __init__(
        self,
        process: str,
        what: str,
        client: Any = None,
        *,
        first: float = 0.5,
        most: float = 10.0,
        quiet: float = 60.0,
        logger: logging.Logger | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.process = process
        self.what = what
        self.client = client
        self.first = first
        self.most = most
        self.quiet = quiet
        self._said_at: float | None = None  # when the last line was logged
        self._said = False  # whether this shortage was said (then its end is too)
        self.log = logger or log
        self.clock = clock
        self.since: float | None = None  # when writes were first refused, while they are
        self.delay = first
        self.refusals = 0  # refused writes since the first (reset once writes go through)
        self._lock = threading.Lock()
        self._counted = metrics.STORE_FULL.labels(process)
        self._waiting = metrics.STORE_FULL_WAITING.labels(process)

    @property
    def full(self) -> bool:
        """Whether the last write tried was refused."""
        return self.since is not None

    def refused(self, exc: BaseException | None = None) -> float:
        """A write was refused: count it, say so if it is the first, and answer the seconds
        to wait before the next try (the back-off grows with each refusal)."""
        self._counted.inc()
        with self._lock:
            self.refusals += 1
            if self.since is not None:
                self.delay = min(self.most, self.delay * 2)
                return self.delay
            self.since = self.clock()
            self.delay = self.first
            said_at = self._said_at
            self._said = said_at is None or self.since - said_at >= self.quiet
            if self._said:
                self._said_at = self.since
        self._waiting.set(1)
        if not self._said:
            return self.delay
        figures = ""
        if self.client is not None:
            with contextlib.suppress(RedisUnreachable):
                figures = f" ({memory(self.client).describe()})"
        self.log.warning(
            "redis is full%s and refuses writes; %s: waiting, trying again every %g s at most "
            "(free memory, or raise TABLETOP_REDIS_MAXMEMORY); %s",
            figures,
            self.what,
            self.most,
            _first_line(exc),
        )
        return self.delay

    def wait_longer(self) -> float:
        """Still full by the figures (no write tried): the back-off grows, nothing counted."""
        with self._lock:
            self.delay = min(self.most, self.delay * 2)
            return self.delay

    def accepted(self) -> None:
        """A write went through: if writes were being refused, say that they are taken again."""
        with self._lock:
            if self.since is None:
                return
            waited, refused = self.clock() - self.since, self.refusals
            self.since, self.delay, self.refusals = None, self.first, 0
            said, self._said = self._said, False
            if said:
                self._said_at = self.clock()
        self._waiting.set(0)
        if not said:
            return
        self.log.warning(
            "redis takes writes again; %s: going on after %.1f s (%d writes refused)",
            self.what,
            waited,
            refused,
        )

    def room(self) -> bool:
        """Whether the figures say Redis would take a write now (True when they cannot be
        read, or without a client: the next write will tell)."""
        if self.client is None:
            return True
        try:
            return not memory(self.client).refusing
        except RedisUnreachable:
            return True


def _first_line(exc: BaseException | None) -> str:
    if exc is None:
        return "no error given"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
