"""A Redis of its own with a small ``maxmemory`` (policy noeviction, as every stack runs it),
filled with junk keys until it is as full as a test needs, and emptied of them again (issue 36).

Deleting is always taken, even past maxmemory: that is how an operator (or the archive) frees
memory, and how a test ends the shortage."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from shared.redis_server import RedisServer

JUNK = "junk:"
CHUNK = 4096  # bytes per junk value: fine steps of a few MB


@pytest.fixture
def small_redis() -> Iterator[RedisServer]:
    """A redis-server with maxmemory 16 MB, stopped after the test."""
    server = RedisServer(maxmemory="16mb")
    try:
        yield server
    finally:
        server.stop()


def used_ratio(client: redis.Redis) -> float:
    """used_memory over maxmemory, as Redis counts it."""
    info = client.info("memory")
    used = int(info["used_memory"]) - int(info.get("mem_not_counted_for_evict", 0))
    return used / int(info["maxmemory"])


def fill(client: redis.Redis, ratio: float | None = None, *, start: int = 0) -> int:
    """Set junk keys until Redis's used memory is past ``ratio`` of maxmemory; returns how
    many keys it set (name the next batch from there). ``ratio`` None: full, refusing every
    write, and staying so. Near its limit a Redis flaps: each client's query buffer (16 KB and
    more while it reads) counts in its used memory, so a write refused frees its buffer and
    the next small one is taken. Filled to 97%, maxmemory is lowered to 256 KB below what it
    then uses (``free`` puts it back): full by a margin no buffer crosses."""
    i = start
    target = 0.97 if ratio is None else ratio
    while (i - start) % 16 or used_ratio(client) < target:
        client.set(f"{JUNK}{i}", b"x" * CHUNK)
        i += 1
    if ratio is None:
        info = client.info("memory")
        _LIMITS.setdefault(_where(client), int(info["maxmemory"]))
        used = int(info["used_memory"]) - int(info.get("mem_not_counted_for_evict", 0))
        client.config_set("maxmemory", max(1, used - 256 * 1024))
        assert refuses_writes(client)
    return i - start


_LIMITS: dict[tuple[Any, ...], int] = {}  # a server's maxmemory before ``fill`` lowered it


def _where(client: redis.Redis) -> tuple[Any, ...]:
    kwargs = client.connection_pool.connection_kwargs
    return (kwargs.get("host"), kwargs.get("port"))


def refuses_writes(client: redis.Redis) -> bool:
    """Whether a write is refused now (a junk key; deleted again when taken)."""
    try:
        client.set(f"{JUNK}probe", b"x")
    except redis.exceptions.OutOfMemoryError:
        return True
    client.delete(f"{JUNK}probe")
    return False


def free(client: redis.Redis) -> int:
    """Delete every junk key (Redis takes deletions when full), and give Redis its maxmemory
    back if ``fill`` lowered it; returns how many keys."""
    names = list(client.scan_iter(f"{JUNK}*", count=1000))
    for i in range(0, len(names), 500):
        client.delete(*names[i : i + 500])
    limit = _LIMITS.pop(_where(client), None)
    if limit is not None:
        client.config_set("maxmemory", limit)
    return len(names)


def until(check: Callable[[], Any], what: str, seconds: float = 120.0, every: float = 0.1) -> Any:
    """Wait for ``check()`` to be truthy (its value returned); fail naming ``what`` past the
    deadline. Generous: a busy 2-core machine."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(every)


def log_text(path: Path) -> str:
    """A child's log so far."""
    return path.read_text(errors="replace") if path.exists() else ""
