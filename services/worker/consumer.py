"""The worker's loop over one game type's command streams: fetch, decide, acknowledge,
publish, retry. It reaches Redis only through ``CommandStreams`` (shared/adapters/
redis_consumer.py).

Each message is decided by ``commands.decide_command`` and only then acknowledged, in the same
round trip as its projections and reply, so a crash between the append and the XACK redelivers
the command; the store's command-id de-duplication then answers it as already applied.

Faults: a Redis error leaves the message pending, and this consumer tries it again shortly
(the append may or may not have happened; de-duplication makes the retry safe). Any other
failure is retried too, up to ``MAX_DELIVERIES`` deliveries; then the message goes to the
dead-letter stream ``dead:<stream>`` with its error, is acknowledged, and only then is the
client told (``status: error``).

A full Redis (issue 36: past maxmemory, policy noeviction, it refuses every write, the worker's
start-up ones too) is neither: nothing is wrong with the command, so it is never dead-lettered,
and there is no traceback per try. The consumer says so in one line (``FullStore``), counts it
(``tabletop_store_full_total{process="worker"}``), reads no new command, and tries the pending
ones again after a back-off growing to ``FULL_BACKOFF_MAX_S``, once Redis's figures show room;
the first write that goes through is a second line. Start-up waits the same way: a worker
started on a full Redis stays up instead of exiting at its first write.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any

from shared import logs
from shared.adapters import metrics
from shared.adapters.redis import REDIS_ERRORS, Client
from shared.adapters.redis_consumer import GROUP, CommandStreams, Rows
from shared.adapters.redis_health import FullStore, store_full
from shared.adapters.shard_leases import RENEW_S
from shared.app import commands
from shared.app.context import App
from shared.app.messages import CommandMessage

log = logging.getLogger(__name__)


def _name(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


CLAIM_IDLE_MS = 30_000  # a message pending this long belongs to a dead consumer
CLAIM_EVERY_S = 5.0  # how often a running worker looks for such messages
RETRY_EVERY_S = 1.0  # how soon a failed message of this consumer is tried again
MAX_DELIVERIES = 5  # deliveries before a failing message is dead-lettered
FULL_BACKOFF_MAX_S = 10.0  # a full Redis is tried again at least this often

__all__ = [
    "CLAIM_EVERY_S",
    "CLAIM_IDLE_MS",
    "GROUP",
    "MAX_DELIVERIES",
    "RETRY_EVERY_S",
    "StreamConsumer",
]


class StreamConsumer:
    """Decides the commands of ``cmd:{<game_type>}:<shard>`` for every shard, as one consumer
    of group ``workers``."""

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
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.io = CommandStreams(client, game_type, shards, self.name, leases=leases)
        self.streams = self.io.streams  # the same list: a legacy stream adopted shows here
        self.leases = self.io.leases
        self.batch = batch
        self.stop_event = threading.Event()
        self.failed = 0  # messages of this consumer left pending by a failure
        self._next_balance = 0.0
        # The labelled metric children, kept: ``labels()`` takes a lock and builds the key on
        # every call, twice a command. Made on first use, as ``labels()`` would.
        self._counted: dict[str, Any] = {}
        self._timed: Any = None
        self.full = FullStore(
            "worker", f"the {game_type} worker {self.name}", client, most=FULL_BACKOFF_MAX_S
        )

    def ensure_groups(self) -> None:
        """Create the consumer group on every stream (idempotent)."""
        self.io.ensure_groups()

    def recover(self) -> int:
        """Re-handle this consumer's own pending messages, then claim long-idle ones of others."""
        return self.retry_pending() + self.claim_stale()

    def retry_pending(self) -> int:
        """Handle again every message this consumer read and did not acknowledge."""
        done = 0
        self.failed = 0
        for stream in self.streams:
            done += self._handle_rows(self.io.read_own_pending(stream))
        return done

    def claim_stale(self) -> int:
        """Take over messages another consumer read but did not acknowledge for
        ``CLAIM_IDLE_MS`` (it died), and handle them."""
        done = 0
        for stream in self.active_streams():
            claimed = self.io.claim_idle(stream, CLAIM_IDLE_MS)
            done += self._handle_rows([(stream, claimed)])
        return done

    def beat(self) -> None:
        """Record that this consumer is polling (at most every second)."""
        self.io.beat()

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
        return done + self._handle_rows(self.io.read_new(streams, self.batch, block))

    def active_streams(self) -> list[str]:
        """The streams this consumer reads now (``CommandStreams.active``)."""
        return self.io.active()

    def _balance(self) -> int:
        """Renew, take and give back shard leases (every ``RENEW_S``); a shard just taken has
        its pending messages (its last owner's, unacknowledged) claimed and handled first, in
        order. Returns how many were handled."""
        now = time.monotonic()
        if now < self._next_balance:
            return 0
        self._next_balance = now + RENEW_S
        gained, lost = self.io.balance_leases()
        if gained or lost:
            assert self.leases is not None
            log.info("worker %s holds shards %s", self.name, sorted(self.leases.owned))
        done = 0
        for shard in gained:
            stream = self.io.streams[shard]
            claimed = self.io.claim_idle(stream, 0)  # whoever read them: the shard is ours
            done += self._handle_rows([(stream, claimed)]) if claimed else 0
        return done

    def run(self) -> None:
        """Loop until ``stop_event`` is set."""
        # Both write (the groups; the pending commands' decisions): on a full Redis they wait
        # for room instead of ending the process.
        if not self._until_written(self._start_groups):
            return
        self._until_written(self.recover)
        log.info("worker %s consuming %s", self.name, ", ".join(self.streams))
        next_claim = time.monotonic() + CLAIM_EVERY_S
        next_retry = time.monotonic() + RETRY_EVERY_S
        while not self.stop_event.is_set():
            try:
                if self.full.full:
                    # No new command while Redis refuses writes: the pending ones first.
                    self.wait_for_room()
                    continue
                self.poll_once()
                now = time.monotonic()
                if self.failed and now >= next_retry:
                    self.retry_pending()
                    next_retry = now + RETRY_EVERY_S
                if now >= next_claim:
                    self.claim_stale()
                    next_claim = now + CLAIM_EVERY_S
            except REDIS_ERRORS as exc:
                if store_full(exc):
                    self.full.refused(exc)
                    continue
                log.warning("redis unavailable (%s); retrying", exc)
                self.failed += 1
                self.stop_event.wait(1.0)
        # A stop (SIGTERM) is only looked at between batches: every message read was decided
        # and acknowledged above, so nothing waits for CLAIM_IDLE_MS to be taken over, and
        # the leases go back at once: another worker need not wait for them to run out.
        try:
            self.io.release_leases()
        except REDIS_ERRORS as exc:
            log.warning("could not give the shard leases back: %s", exc)
        self.leave_group()
        log.info("worker %s stopped", self.name)

    def wait_for_room(self) -> None:
        """While Redis refuses writes: wait the back-off; then, if its figures show room, try
        the pending commands again (a refusal grows the back-off; none ends the wait, said in
        one line)."""
        if self.stop_event.wait(self.full.delay):
            return
        if not self.full.room():
            self.full.wait_longer()
            return
        before = self.full.refusals
        self.beat()  # a write of its own: Redis takes them again, or refuses this one
        self.retry_pending()
        if self.full.refusals == before:
            self.full.accepted()

    def _start_groups(self) -> None:
        """``ensure_groups``; on a full Redis, which refuses XGROUP CREATE even for a group
        that exists, done when every stream has its group already (a worker restarted while
        Redis is full takes its pending commands at once; streams named before the hash tag
        are adopted at its next start)."""
        try:
            self.ensure_groups()
        except REDIS_ERRORS as exc:
            if not (store_full(exc) and self._groups_exist()):
                raise

    def _groups_exist(self) -> bool:
        """Whether every stream of this game type has the consumer group (reads only)."""
        for stream in self.streams[: self.shards]:
            try:
                rows = self.r.xinfo_groups(stream)
            except REDIS_ERRORS:
                return False
            if not any(str(_name(row.get("name"))) == GROUP for row in rows):
                return False
        return True

    def _until_written(self, step: Any) -> bool:
        """Run ``step`` (writes of the start-up) until Redis takes them, waiting while it is
        full; False when stopped first. Other Redis faults end the process as before (the
        supervisor starts it again)."""
        while not self.stop_event.is_set():
            before = self.full.refusals
            try:
                step()
            except REDIS_ERRORS as exc:
                if not store_full(exc):
                    raise
                if self.stop_event.wait(self.full.refused(exc)):
                    return False
                continue
            if self.full.refusals == before:  # a command it decided may have been refused
                self.full.accepted()
            return True
        return False

    def leave_group(self) -> None:
        """Leave the group where nothing of this consumer is pending (``CommandStreams``)."""
        self.io.leave_group()

    def _handle_rows(self, rows: Rows) -> int:
        n = 0
        for stream, messages in rows:
            for msg_id, fields in messages:
                self._handle_one(stream, msg_id, fields)
                n += 1
        return n

    def _handle_one(self, stream: Any, msg_id: Any, fields: Any) -> None:
        def ack(pipe: Any) -> None:
            self.io.ack(stream, msg_id, pipe)

        try:
            message = CommandMessage.from_fields(fields)
        except (KeyError, ValueError) as exc:  # also a claimed entry with no fields left
            log.error("dropping malformed command message %r: %s", fields, exc)
            self.io.ack(stream, msg_id)
            return
        with logs.context(game_id=message.game_id, command_id=message.command_id):
            self._decide(stream, msg_id, fields, message, ack)

    def _decide(
        self, stream: Any, msg_id: Any, fields: Any, message: CommandMessage, ack: Any
    ) -> None:
        started = time.perf_counter()
        outcome = "error"
        try:
            decided = commands.decide_command(self.app, message, ack=ack)
            outcome = str(decided.get("status", "accepted"))
            if self.full.full:
                self.full.accepted()
        except Exception as exc:
            self.app.forget(message.game_id)
            if store_full(exc) or isinstance(exc, REDIS_ERRORS):
                # Transient: the message stays pending and is tried again; the store's dedupe
                # makes that safe whether or not the append happened.
                outcome = "retry"
                self.failed += 1
                if store_full(exc):
                    # Redis is full (a task's queue on it too: kombu wraps the refusal):
                    # said once, not per command, and never dead-lettered.
                    self.full.refused(exc)
                else:
                    log.warning("command %s: redis error %s; will retry", message.command_id, exc)
                return
            # An engine bug must not stop the worker.
            log.exception("command %s on game %s failed", message.command_id, message.game_id)
            if self.io.deliveries(stream, msg_id, unknown=MAX_DELIVERIES) < MAX_DELIVERIES:
                outcome = "retry"
                self.failed += 1
                return
            self.io.dead_letter(stream, msg_id, fields, exc)
            metrics.DEAD_LETTERS.labels(self.game_type).inc()
            commands.report_failure(self.app, message, ack=ack)
        finally:
            took = time.perf_counter() - started
            counted = self._counted.get(outcome)
            if counted is None:
                counted = self._counted[outcome] = metrics.COMMANDS.labels(self.game_type, outcome)
            counted.inc()
            if self._timed is None:
                self._timed = metrics.DECIDE_LATENCY.labels(self.game_type)
            self._timed.observe(took)
