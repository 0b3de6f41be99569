"""The deadline scheduler: a small loop that turns due turn-clock deadlines into time-out
commands and wakes the bots of stalled games (``clocks.fire_due_deadlines``), and now and
then does the worker's housekeeping (trimming the acknowledged command-stream entries).

Every worker process runs one beside its stream consumer. Several at once are safe: a claim
takes the due deadlines and moves them a little later in one Redis script (by Redis's own
clock), a time-out's command id is its seat and armed version (a repeat is a duplicate), and the
worker refuses a time-out whose deadline is no longer armed. No Celery countdown: a countdown
past the broker's visibility timeout is delivered again and again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis

from shared.adapters.redis_health import FullStore, store_full
from shared.app import clocks
from shared.app.context import App

log = logging.getLogger(__name__)

POLL_S = 0.25  # a time-out fires within about this much of its deadline
RETRY_S = 2.0  # a claimed deadline that is still armed is claimed again this much later
HOUSEKEEPING_S = 30.0  # how often ``housekeeping`` runs (trimming acknowledged commands)


class DeadlineScheduler:
    """Polls the deadlines until ``stop_event`` is set."""

    def __init__(
        self,
        app: App,
        stop_event: threading.Event | None = None,
        housekeeping: Callable[[], object] | None = None,
    ) -> None:
        self.app = app
        self.stop_event = stop_event or threading.Event()
        self.housekeeping = housekeeping
        self.sent = 0
        self._next_housekeeping = time.monotonic() + HOUSEKEEPING_S
        # A full Redis refuses the claims' script and the wakes' tasks: one line, a back-off.
        self.full = FullStore("deadlines", "the deadline scheduler", app.ports.client)

    def step(self) -> clocks.Fired:
        """One claim: the time-out command ids sent and the stalled games' bots woken."""
        fired = clocks.fire_due_deadlines(self.app, retry_s=RETRY_S)
        self.sent += len(fired.timeouts) + len(fired.woken)
        for woken in fired.woken:
            log.info("stalled game's bot woken: %s:%s", woken.game_id, woken.seat)
        for cid in fired.timeouts:
            log.info("time-out sent: %s", cid)
        return fired

    def run(self) -> None:
        """Loop; a Redis fault is logged and the loop goes on (the deadlines stay in Redis). A
        full Redis is said once (``FullStore``) and tried again after a growing back-off, once
        its figures show room; the housekeeping goes on meanwhile (trimming frees memory)."""
        while not self.stop_event.is_set():
            wait = POLL_S
            try:
                if not self.full.full or self._room():
                    self.step()
                    self.full.accepted()
            except Exception as exc:
                if store_full(exc):  # the claim's script, or a woken bot's task (kombu's)
                    wait = max(POLL_S, self.full.refused(exc))
                elif isinstance(exc, redis.RedisError):
                    log.warning("deadline scheduler: redis error %s; retrying", exc)
                else:
                    log.exception("deadline scheduler step failed")
            try:
                if self.housekeeping is not None and time.monotonic() >= self._next_housekeeping:
                    self._next_housekeeping = time.monotonic() + HOUSEKEEPING_S
                    self.housekeeping()
            except redis.RedisError as exc:
                log.warning("deadline scheduler: housekeeping: redis error %s; retrying", exc)
            except Exception:
                log.exception("deadline scheduler housekeeping failed")
            if self.full.full:
                wait = max(wait, self.full.delay)
            self.stop_event.wait(wait)

    def _room(self) -> bool:
        """While Redis is full: whether its figures show room to try again (else the back-off
        grows)."""
        if self.full.room():
            return True
        self.full.wait_longer()
        return False

    def start(self) -> threading.Thread:
        """Run in a daemon thread."""
        thread = threading.Thread(target=self.run, name="deadlines", daemon=True)
        thread.start()
        return thread
