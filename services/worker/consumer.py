"""A consumer-group reader of one game type's command streams.

Each message is handled by ``GameService.handle`` (decide, append, project, reply) and only
then acknowledged, so a crash between the append and the XACK redelivers the command; the
store's command-id de-duplication then answers it as already applied.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any

import redis

from shared import keys
from shared.service import CommandMessage, GameService

log = logging.getLogger(__name__)

GROUP = "workers"
CLAIM_IDLE_MS = 30_000  # a message pending this long belongs to a dead consumer
CLAIM_EVERY_S = 5.0  # how often a running worker looks for such messages


class StreamConsumer:
    """Reads ``cmd:<game_type>:<shard>`` for every shard as one consumer of group ``workers``."""

    def __init__(
        self,
        client: redis.Redis,
        service: GameService,
        game_type: str,
        *,
        shards: int = 1,
        name: str | None = None,
        batch: int = 64,
    ) -> None:
        self.r = client
        self.service = service
        self.game_type = game_type
        self.streams = [keys.command_stream(game_type, s) for s in range(shards)]
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.batch = batch
        self.stop_event = threading.Event()

    def ensure_groups(self) -> None:
        """Create the consumer group on every stream (idempotent)."""
        for stream in self.streams:
            try:
                self.r.xgroup_create(stream, GROUP, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    def recover(self) -> int:
        """Re-handle this consumer's own pending messages, then claim long-idle ones of others."""
        done = 0
        for stream in self.streams:
            rows = self.r.xreadgroup(GROUP, self.name, {stream: "0"}, count=10_000)
            done += self._handle_rows(rows)
        return done + self.claim_stale()

    def claim_stale(self) -> int:
        """Take over messages another consumer read but did not acknowledge for
        ``CLAIM_IDLE_MS`` (it died), and handle them."""
        done = 0
        for stream in self.streams:
            start = "0-0"
            while True:
                start, claimed, *_ = self.r.xautoclaim(
                    stream, GROUP, self.name, CLAIM_IDLE_MS, start_id=start, count=100
                )
                done += self._handle_rows([(stream, claimed)])
                if not claimed or start in (b"0-0", "0-0"):
                    break
        return done

    def poll_once(self, block_ms: int = 1000) -> int:
        """Handle one batch of new messages; returns how many."""
        rows = self.r.xreadgroup(
            GROUP, self.name, {s: ">" for s in self.streams}, count=self.batch, block=block_ms
        )
        return self._handle_rows(rows or [])

    def run(self) -> None:
        """Loop until ``stop_event`` is set."""
        self.ensure_groups()
        self.recover()
        log.info("worker %s consuming %s", self.name, ", ".join(self.streams))
        next_claim = time.monotonic() + CLAIM_EVERY_S
        while not self.stop_event.is_set():
            try:
                self.poll_once()
                if time.monotonic() >= next_claim:
                    self.claim_stale()
                    next_claim = time.monotonic() + CLAIM_EVERY_S
            except redis.ConnectionError:
                log.warning("redis unavailable; retrying")
                self.stop_event.wait(1.0)

    def _handle_rows(self, rows: Any) -> int:
        n = 0
        for stream, messages in rows:
            for msg_id, fields in messages:
                self._handle_one(stream, msg_id, fields)
                n += 1
        return n

    def _handle_one(self, stream: Any, msg_id: Any, fields: Any) -> None:
        def ack(pipe: Any) -> None:
            pipe.xack(stream, GROUP, msg_id)

        try:
            message = CommandMessage.from_fields(fields)
        except (KeyError, ValueError) as exc:  # also a claimed entry with no fields left
            log.error("dropping malformed command message %r: %s", fields, exc)
            self.r.xack(stream, GROUP, msg_id)
            return
        try:
            self.service.handle(message, ack=ack)
        except Exception:  # an engine bug must not stop the worker; the command is reported
            log.exception("command %s on game %s failed", message.command_id, message.game_id)
            self.service.report_failure(message, ack=ack)
