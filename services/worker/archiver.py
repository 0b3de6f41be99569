"""The archiver: a loop, in every stream worker process, that moves finished games from Redis
to the archive (``shared.app.archiving.sweep``).

One process sweeps at a time: the loop holds a lock in Redis (``archiver:lock``, renewed while
it runs, taken over by another worker when its holder dies). A sweep goes on at once while it
finds a full page of games, and waits ``POLL_S`` otherwise. While Redis's memory is past the
warning share (``TABLETOP_REDIS_MEMORY_WARN``) every scored game moves at once, whatever
``TABLETOP_ARCHIVE_AFTER_S`` says: the archive is how a full Redis gets room back.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import threading
import time

import redis

from shared.adapters import metrics
from shared.adapters.redis_eviction import RedisEvictor
from shared.adapters.redis_health import memory, store_full
from shared.app import archiving
from shared.app.context import App
from shared.archive.port import Archive

log = logging.getLogger(__name__)

LOCK = "archiver:lock"
LOCK_MS = 15_000
POLL_S = 1.0
RELEASE = (
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"  # noqa: E501
)
RENEW = (
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
)


class Archiver:
    """Sweeps until ``stop_event`` is set."""

    def __init__(
        self,
        app: App,
        archive: Archive,
        *,
        after_s: float,
        memory_warn: float,
        stop_event: threading.Event | None = None,
    ) -> None:
        self.app = app
        self.archive = archive
        self.after_s = after_s
        self.memory_warn = memory_warn
        self.stop_event = stop_event or threading.Event()
        self.client = app.ports.client
        self.evictor = RedisEvictor(self.client)
        # Who holds the lock, for a person (and the fault benchmark) reading it: host and pid.
        self.token = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        # While sweeps come back with a full page the cursor moves on through the finished
        # games; a pass that reaches the end starts again from the oldest (games that waited
        # for their scoring, or finished in the same instant as a page's last).
        self.cursor = float("-inf")
        self.moved = 0

    def holds_lock(self) -> bool:
        """Take or renew the sweeping lock; whether this process holds it. A full Redis
        refuses a new lock (a write that grows it): the holder goes on sweeping (its renewal
        grows nothing), the others wait, quietly, as they would for the holder."""
        if self.client.eval(RENEW, 1, LOCK, self.token, LOCK_MS):
            return True
        try:
            return bool(self.client.set(LOCK, self.token, nx=True, px=LOCK_MS))
        except redis.RedisError as exc:
            if store_full(exc):
                return False
            raise

    def cutoff(self) -> float:
        """Games finished at or before this epoch may move: ``after_s`` ago, or now while
        Redis's memory is short."""
        now = self.app.ports.clock.epoch()
        ratio = memory(self.client).ratio
        if ratio is not None and ratio >= self.memory_warn:
            return now
        return now - self.after_s

    def step(self) -> archiving.Sweep:
        """One sweep from the cursor."""
        done = archiving.sweep(
            self.app, self.archive, self.evictor, before_epoch=self.cutoff(),
            after_epoch=self.cursor,
        )  # fmt: skip
        full_page = done.looked >= archiving.SWEEP_LIMIT and done.last_epoch is not None
        self.cursor = done.last_epoch if full_page and done.last_epoch else float("-inf")
        moved = done.moved + done.finished_before
        self.moved += moved
        if moved:
            metrics.ARCHIVE_MOVED.inc(moved)
        for gid, why in done.refused:
            metrics.ARCHIVE_REFUSED.inc()
            log.warning("archive: game %s not moved: %s", gid, why)
        return done

    def run(self) -> None:
        """Loop; a Redis or archive fault is logged and the loop goes on (a move cut short
        is finished by a later sweep)."""
        _yield_to_games()
        while not self.stop_event.is_set():
            wait = POLL_S
            try:
                if self.holds_lock():
                    done = self.step()
                    if done.looked >= archiving.SWEEP_LIMIT:
                        wait = 0.0
            except Exception as exc:
                if store_full(exc) or isinstance(exc, redis.RedisError):
                    log.warning("archiver: redis error %s; retrying", exc)
                else:
                    log.exception("archiver sweep failed")
            self.stop_event.wait(wait)
        with contextlib.suppress(redis.RedisError):
            self.client.eval(RELEASE, 1, LOCK, self.token)

    def start(self) -> threading.Thread:
        """Run in a daemon thread."""
        thread = threading.Thread(target=self.run, name="archiver", daemon=True)
        thread.start()
        return thread


# The archiver's thread runs at this niceness: moving games is housekeeping, and on a busy
# machine it waits for the games being played (a tournament's batches, the workers' commands)
# rather than taking half their CPU; it catches up when they pause, and at once when Redis's
# memory runs short (a full Redis pauses them). BENCHMARKS.md, "The record outlives Redis".
NICENESS = 10


def _yield_to_games() -> None:
    """Lower this thread's scheduling priority (Linux: a thread's own niceness)."""
    # Not Linux, or not allowed: it runs as it is.
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)


def sweep_all(app: App, archive: Archive, *, after_s: float = 0.0, limit: int = 100_000) -> int:
    """Move every game ready now, in the caller's thread (``tabletop archive``, tests); how
    many moved."""
    archiver = Archiver(app, archive, after_s=after_s, memory_warn=1.0)
    total = 0
    deadline = time.monotonic() + 3600
    while total < limit and time.monotonic() < deadline:
        done = archiver.step()
        total += done.moved + done.finished_before
        if archiver.cursor == float("-inf"):
            break
    return total
