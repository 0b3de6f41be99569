"""A consumer-group reader of one game type's command streams (the worker's loop).

Each message is decided by ``handlers.decide_command`` and only then acknowledged, in the same
round trip as its projections and reply, so a crash between the append and the XACK redelivers
the command; the store's command-id de-duplication then answers it as already applied.

Faults: a Redis error leaves the message pending, and this consumer tries it again shortly
(the append may or may not have happened; de-duplication makes the retry safe). Any other
failure is retried too, up to ``MAX_DELIVERIES`` deliveries; then the message goes to the
dead-letter stream ``dead:<stream>`` with its error, is acknowledged, and only then is the
client told (``status: error``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import traceback
from typing import Any

import redis

from shared import keys, logs
from shared.adapters import metrics
from shared.adapters.redis import REDIS_ERRORS, Client, is_cluster
from shared.adapters.shard_leases import RENEW_S, ShardLeases, live_workers
from shared.app import handlers
from shared.app.context import App
from shared.app.messages import CommandMessage

log = logging.getLogger(__name__)

GROUP = "workers"
CLAIM_IDLE_MS = 30_000  # a message pending this long belongs to a dead consumer
CLAIM_EVERY_S = 5.0  # how often a running worker looks for such messages
RETRY_EVERY_S = 1.0  # how soon a failed message of this consumer is tried again
MAX_DELIVERIES = 5  # deliveries before a failing message is dead-lettered
# Liveness for /readyz: each consumer's last poll, by wall clock, in a sorted set per game
# type. XINFO CONSUMERS' idle time cannot serve: before Redis 7.2 a blocking read that finds
# nothing does not renew it, so a quiet worker looks dead.
HEARTBEAT_EVERY_S = 1.0
HEARTBEAT_KEEP_S = 3600.0  # entries older than this are pruned


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def heartbeat_key(game_type: str) -> str:
    """The sorted set of ``game_type``'s consumers by the time they last polled."""
    return f"workers:seen:{game_type}"


class StreamConsumer:
    """Reads ``cmd:{<game_type>}:<shard>`` for every shard as one consumer of group
    ``workers`` (one XREADGROUP for all: the streams share the game type's hash tag, so on a
    cluster they are in one slot)."""

    def __init__(
        self,
        client: Client,
        app: App,
        game_type: str,
        *,
        shards: int = 1,
        name: str | None = None,
        batch: int = 64,
        leases: bool = False,
    ) -> None:
        self.r = client
        self.app = app
        self.game_type = game_type
        self.shards = shards
        self.streams = [keys.command_stream(game_type, s) for s in range(shards)]
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.batch = batch
        self.stop_event = threading.Event()
        self.failed = 0  # messages of this consumer left pending by a failure
        self._next_beat = 0.0
        # With leases each shard is read by one worker at a time (shared/adapters/
        # shard_leases.py); without, every worker of the group reads every shard.
        self.leases = ShardLeases(client, game_type, shards, self.name) if leases else None
        self._next_balance = 0.0
        # The labelled metric children, kept: ``labels()`` takes a lock and builds the key on
        # every call, twice a command. Made on first use, as ``labels()`` would.
        self._counted: dict[str, Any] = {}
        self._timed: Any = None

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

    def recover(self) -> int:
        """Re-handle this consumer's own pending messages, then claim long-idle ones of others."""
        return self.retry_pending() + self.claim_stale()

    def retry_pending(self) -> int:
        """Handle again every message this consumer read and did not acknowledge."""
        done = 0
        self.failed = 0
        for stream in self.streams:
            rows = self.r.xreadgroup(GROUP, self.name, {stream: "0"}, count=10_000)
            done += self._handle_rows(rows)
        return done

    def claim_stale(self) -> int:
        """Take over messages another consumer read but did not acknowledge for
        ``CLAIM_IDLE_MS`` (it died), and handle them."""
        done = 0
        for stream in self.active_streams():
            start = "0-0"
            while True:
                start, claimed, *_ = self.r.xautoclaim(
                    stream, GROUP, self.name, CLAIM_IDLE_MS, start_id=start, count=100
                )
                done += self._handle_rows([(stream, claimed)])
                if not claimed or start in (b"0-0", "0-0"):
                    break
        return done

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

    def poll_once(self, block_ms: int = 1000) -> int:
        """Handle one batch of new messages; returns how many."""
        self.beat()
        done = self._balance() if self.leases is not None else 0
        streams = self.active_streams()
        if not streams:  # a standby: every shard is held by another worker
            self.stop_event.wait(min(block_ms / 1000, RENEW_S))
            return done
        # Not longer than a renewal: a lease must be renewed before it runs out.
        block = block_ms if self.leases is None else min(block_ms, int(RENEW_S * 1000))
        rows = self.r.xreadgroup(
            GROUP, self.name, {s: ">" for s in streams}, count=self.batch, block=block
        )
        return done + self._handle_rows(rows or [])

    def active_streams(self) -> list[str]:
        """The streams this consumer reads now: all of them, or those of the shards it holds
        (and any stream named before the hash tag, drained by every worker)."""
        if self.leases is None:
            return self.streams
        owned = [keys.command_stream(self.game_type, s) for s in sorted(self.leases.owned)]
        legacy = self.streams[self.shards :]
        return owned + legacy

    def _balance(self) -> int:
        """Renew, take and give back shard leases (every ``RENEW_S``); a shard just taken has
        its pending messages (its last owner's, unacknowledged) claimed and handled first, in
        order. Returns how many were handled."""
        assert self.leases is not None
        now = time.monotonic()
        if now < self._next_balance:
            return 0
        self._next_balance = now + RENEW_S
        live = live_workers(self.r, heartbeat_key(self.game_type))
        gained, lost = self.leases.balance(live)
        if gained or lost:
            log.info("worker %s holds shards %s", self.name, sorted(self.leases.owned))
        done = 0
        for shard in gained:
            done += self._claim_all(keys.command_stream(self.game_type, shard))
        return done

    def _claim_all(self, stream: str) -> int:
        """Take every pending message of ``stream`` (whoever read it) and handle them in the
        stream's order."""
        claimed: list[Any] = []
        start = "0-0"
        while True:
            start, rows, *_ = self.r.xautoclaim(
                stream, GROUP, self.name, 0, start_id=start, count=100
            )
            claimed += rows
            if not rows or start in (b"0-0", "0-0"):
                break
        return self._handle_rows([(stream, claimed)]) if claimed else 0

    def run(self) -> None:
        """Loop until ``stop_event`` is set."""
        self.ensure_groups()
        self.recover()
        log.info("worker %s consuming %s", self.name, ", ".join(self.streams))
        next_claim = time.monotonic() + CLAIM_EVERY_S
        next_retry = time.monotonic() + RETRY_EVERY_S
        while not self.stop_event.is_set():
            try:
                self.poll_once()
                now = time.monotonic()
                if self.failed and now >= next_retry:
                    self.retry_pending()
                    next_retry = now + RETRY_EVERY_S
                if now >= next_claim:
                    self.claim_stale()
                    next_claim = now + CLAIM_EVERY_S
            except REDIS_ERRORS as exc:
                log.warning("redis unavailable (%s); retrying", exc)
                self.failed += 1
                self.stop_event.wait(1.0)
        # A stop (SIGTERM) is only looked at between batches: every message read was decided
        # and acknowledged above, so nothing waits for CLAIM_IDLE_MS to be taken over, and
        # the leases go back at once: another worker need not wait for them to run out.
        if self.leases is not None:
            try:
                self.leases.release()
            except REDIS_ERRORS as exc:
                log.warning("could not give the shard leases back: %s", exc)
        self.leave_group()
        log.info("worker %s stopped", self.name)

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

    def _handle_rows(self, rows: Any) -> int:
        n = 0
        for stream, messages in rows:
            for msg_id, fields in messages:
                self._handle_one(stream, msg_id, fields)
                n += 1
        return n

    def _handle_one(self, stream: Any, msg_id: Any, fields: Any) -> None:
        def ack(pipe: Any) -> None:
            (pipe or self.r).xack(stream, GROUP, msg_id)

        try:
            message = CommandMessage.from_fields(fields)
        except (KeyError, ValueError) as exc:  # also a claimed entry with no fields left
            log.error("dropping malformed command message %r: %s", fields, exc)
            self.r.xack(stream, GROUP, msg_id)
            return
        with logs.context(game_id=message.game_id, command_id=message.command_id):
            self._decide(stream, msg_id, fields, message, ack)

    def _decide(
        self, stream: Any, msg_id: Any, fields: Any, message: CommandMessage, ack: Any
    ) -> None:
        started = time.perf_counter()
        outcome = "error"
        try:
            decided = handlers.decide_command(self.app, message, ack=ack)
            outcome = str(decided.get("status", "accepted"))
        except REDIS_ERRORS as exc:
            # Transient: the message stays pending and is tried again; the store's dedupe
            # makes that safe whether or not the append happened.
            outcome = "retry"
            log.warning("command %s: redis error %s; will retry", message.command_id, exc)
            self.failed += 1
            self.app.forget(message.game_id)
        except Exception as exc:  # an engine bug must not stop the worker
            log.exception("command %s on game %s failed", message.command_id, message.game_id)
            self.app.forget(message.game_id)
            if self._deliveries(stream, msg_id) < MAX_DELIVERIES:
                outcome = "retry"
                self.failed += 1
                return
            self._dead_letter(stream, msg_id, fields, exc)
            metrics.DEAD_LETTERS.labels(self.game_type).inc()
            handlers.report_failure(self.app, message, ack=ack)
        finally:
            took = time.perf_counter() - started
            counted = self._counted.get(outcome)
            if counted is None:
                counted = self._counted[outcome] = metrics.COMMANDS.labels(self.game_type, outcome)
            counted.inc()
            if self._timed is None:
                self._timed = metrics.DECIDE_LATENCY.labels(self.game_type)
            self._timed.observe(took)

    def _deliveries(self, stream: Any, msg_id: Any) -> int:
        rows = self.r.xpending_range(stream, GROUP, min=msg_id, max=msg_id, count=1)
        return int(rows[0]["times_delivered"]) if rows else MAX_DELIVERIES

    def _dead_letter(self, stream: Any, msg_id: Any, fields: Any, exc: Exception) -> None:
        name = stream.decode() if isinstance(stream, bytes) else str(stream)
        entry = {(k.decode() if isinstance(k, bytes) else k): v for k, v in fields.items()}
        entry.update(
            message_id=msg_id,
            error=repr(exc),
            trace="".join(traceback.format_exception(exc))[-4000:],
        )
        self.r.xadd(keys.dead_letters(name), entry)
