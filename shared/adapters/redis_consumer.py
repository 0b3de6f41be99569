"""What the worker asks of Redis about its command streams: read them as one consumer of the
group, acknowledge, claim what a dead consumer left pending, dead-letter, beat, leave.

The worker's loop (fetch, decide, acknowledge, publish, retry) is ``services/worker/
consumer.py``; it reaches the streams only through ``CommandStreams``. Nothing here decides a
command or counts one: a Redis fault leaves as the client raised it (``REDIS_ERRORS``) for
the loop to retry.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Any, cast

import redis

from shared import keys
from shared.adapters.redis import Client, is_cluster
from shared.adapters.shard_leases import ShardLeases, live_workers

log = logging.getLogger(__name__)

GROUP = "workers"
# Liveness for /readyz: each consumer's last poll, by wall clock, in a sorted set per game
# type. XINFO CONSUMERS' idle time cannot serve: before Redis 7.2 a blocking read that finds
# nothing does not renew it, so a quiet worker looks dead.
HEARTBEAT_EVERY_S = 1.0
HEARTBEAT_KEEP_S = 3600.0  # entries older than this are pruned

# What a read answers: per stream, its (message id, fields) in order, as redis-py gives them.
Rows = Sequence[tuple[Any, Sequence[tuple[Any, Mapping[Any, Any]]]]]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def heartbeat_key(game_type: str) -> str:
    """The sorted set of ``game_type``'s consumers by the time they last polled."""
    return f"workers:seen:{game_type}"


class CommandStreams:
    """``cmd:{<game_type>}:<shard>`` for every shard, read as consumer ``name`` of group
    ``workers`` (one XREADGROUP for all: the streams share the game type's hash tag, so on a
    cluster they are in one slot)."""

    def __init__(
        self, client: Client, game_type: str, shards: int, name: str, *, leases: bool = False
    ) -> None:
        self.r = client
        self.game_type = game_type
        self.shards = shards
        self.name = name
        self.streams = [keys.command_stream(game_type, s) for s in range(shards)]
        self._next_beat = 0.0
        # With leases each shard is read by one worker at a time (shared/adapters/
        # shard_leases.py); without, every worker of the group reads every shard.
        self.leases = ShardLeases(client, game_type, shards, name) if leases else None

    def ensure_groups(self) -> None:
        """Create the consumer group on every stream (idempotent)."""
        for stream in self.streams:
            try:
                self.r.xgroup_create(stream, GROUP, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._adopt_legacy_streams()

    def _adopt_legacy_streams(self) -> None:
        """On a single server, also read the streams named before the hash tag
        (``cmd:<type>:<shard>``) that an older worker's group still reads: commands an older
        gateway queued across an upgrade are decided, not stranded. Only a stream with the
        group: creating one would replay every command it ever held. (A cluster deployment
        never had them, and could not read them with the others in one XREADGROUP.)"""
        if is_cluster(self.r):
            return
        for shard in range(self.shards):
            old = keys.legacy_command_stream(self.game_type, shard)
            if old in self.streams:
                continue
            try:
                groups = self.r.xinfo_groups(old)
            except redis.ResponseError:  # no such stream: nothing to drain
                continue
            if any(_text(row.get("name")) == GROUP for row in groups):
                log.info("also draining %s (named before the hash tag)", old)
                self.streams.append(old)

    def active(self) -> list[str]:
        """The streams this consumer reads now: all of them, or those of the shards it holds
        (and any stream named before the hash tag, drained by every worker)."""
        if self.leases is None:
            return self.streams
        owned = [keys.command_stream(self.game_type, s) for s in sorted(self.leases.owned)]
        legacy = self.streams[self.shards :]
        return owned + legacy

    def read_new(self, streams: Sequence[str], count: int, block_ms: int) -> Rows:
        """Messages of ``streams`` never delivered to the group, up to ``count``, waiting up
        to ``block_ms`` for the first."""
        rows = self.r.xreadgroup(
            GROUP, self.name, {s: ">" for s in streams}, count=count, block=block_ms
        )
        return cast(Rows, rows or [])

    def read_own_pending(self, stream: str) -> Rows:
        """The messages of ``stream`` this consumer read and did not acknowledge."""
        return cast(Rows, self.r.xreadgroup(GROUP, self.name, {stream: "0"}, count=10_000))

    def claim_idle(self, stream: str, idle_ms: int) -> list[Any]:
        """Take every message of ``stream`` pending for at least ``idle_ms`` (any consumer's),
        in the stream's order."""
        claimed: list[Any] = []
        start = "0-0"
        while True:
            start, rows, *_ = self.r.xautoclaim(
                stream, GROUP, self.name, idle_ms, start_id=start, count=100
            )
            claimed += rows
            if not rows or start in (b"0-0", "0-0"):
                return claimed

    def ack(self, stream: Any, msg_id: Any, pipe: Any = None) -> None:
        """XACK, on ``pipe`` (the block of writes it must land with) or at once."""
        (pipe or self.r).xack(stream, GROUP, msg_id)

    def deliveries(self, stream: Any, msg_id: Any, unknown: int) -> int:
        """How many times ``msg_id`` was delivered; ``unknown`` if it is no longer pending."""
        rows = self.r.xpending_range(stream, GROUP, min=msg_id, max=msg_id, count=1)
        return int(rows[0]["times_delivered"]) if rows else unknown

    def dead_letter(self, stream: Any, msg_id: Any, fields: Any, exc: BaseException) -> None:
        """Keep a message that failed every delivery in ``dead:<stream>``, with its error."""
        entry: dict[Any, Any] = {_text(k): v for k, v in fields.items()}
        entry.update(
            message_id=msg_id,
            error=repr(exc),
            trace="".join(traceback.format_exception(exc))[-4000:],
        )
        self.r.xadd(keys.dead_letters(_text(stream)), entry)

    def beat(self) -> None:
        """Record that this consumer is polling (at most every ``HEARTBEAT_EVERY_S``)."""
        now = time.monotonic()
        if now < self._next_beat:
            return
        self._next_beat = now + HEARTBEAT_EVERY_S
        wall = time.time()
        key = heartbeat_key(self.game_type)
        pipe = self.r.pipeline(transaction=False)
        pipe.zadd(key, {self.name: wall})
        pipe.zremrangebyscore(key, "-inf", wall - HEARTBEAT_KEEP_S)
        pipe.execute()

    def balance_leases(self) -> tuple[list[int], list[int]]:
        """Renew, take and give back shard leases among the live workers: (gained, lost)."""
        assert self.leases is not None
        return self.leases.balance(live_workers(self.r, heartbeat_key(self.game_type)))

    def release_leases(self) -> None:
        """Give the shard leases back (a stopping worker's, so no one waits them out)."""
        if self.leases is not None:
            self.leases.release()

    def leave_group(self) -> None:
        """Remove this consumer from each stream's group if it holds no pending message (a
        stopped worker's name would otherwise stay listed, idle, for ever); one that does
        keep them stays, so they can still be claimed."""
        try:
            self.r.zrem(heartbeat_key(self.game_type), self.name)  # /readyz: gone, not stale
        except redis.RedisError as exc:
            log.warning("could not remove the heartbeat: %s", exc)
        for stream in self.streams:
            try:
                if self.r.xpending_range(stream, GROUP, "-", "+", 1, consumername=self.name):
                    continue
                self.r.xgroup_delconsumer(stream, GROUP, self.name)
            except redis.RedisError as exc:
                log.warning("could not leave group on %s: %s", stream, exc)
