"""The ports a game's commands and news travel through (``typing.Protocol`` s, bundled in
``shared.app.ports.Ports``): the read models, the command bus, the notifier and its
subscriptions, the clock and its deadlines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class ReadModels(Protocol):
    """Projections: one JSON document per seat, and the public one."""

    def write(self, game_id: str, seat_views: Sequence[str], public: str) -> None:
        """Replace every projection of the game."""
        ...

    def read(self, game_id: str, seat: int | None) -> bytes | None:
        """A seat's view (None: the public view) as stored, or None."""
        ...


class CommandBus(Protocol):
    """Commands on their way to a worker, and what became of them."""

    def put(
        self,
        game_type: str,
        shard: int,
        message: Mapping[str, str],
        *,
        game_id: str,
        command_id: str,
        pending: str,
    ) -> None:
        """Queue a command on its game type's stream; record ``pending`` as its outcome unless
        the command id already has one."""
        ...

    def put_and_wait(
        self,
        game_type: str,
        shard: int,
        message: Mapping[str, str],
        *,
        game_id: str,
        command_id: str,
        pending: str,
        timeout: float,
    ) -> bytes | None:
        """``put``, then ``wait_reply`` up to ``timeout`` seconds (one round trip where the
        backend can: a waiting client's command costs the gateway one)."""
        ...

    def outcome(self, game_id: str, command_id: str) -> str | None:
        """The stored outcome (JSON) of a command, or None."""
        ...

    def complete(
        self,
        game_id: str,
        command_id: str,
        outcome: str,
        reply: str,
        *,
        keep: bool = False,
        refused: bool = False,
    ) -> None:
        """Store a command's outcome (unless ``keep``: the first outcome stays, as for a
        command id sent again with another body) and hand ``reply`` to a client waiting.
        ``refused``: the command changed nothing, so its outcome is kept only the short time
        a client needs to read it (``TABLETOP_REJECTED_TTL``), not an accepted one's day:
        illegal commands are free to send, and must not pile up."""
        ...

    def wait_reply(self, game_id: str, command_id: str, timeout: float) -> bytes | None:
        """Block up to ``timeout`` seconds for the reply to a command."""
        ...

    def send_once(self, game_id: str, command_id: str, ttl: int) -> bool:
        """True the first time within ``ttl`` seconds (a bot sends each command once)."""
        ...

    def was_sent(self, game_id: str, command_id: str) -> bool:
        """Whether ``send_once`` marked the command within its ``ttl``."""
        ...


class Notifier(Protocol):
    """Announces new versions of a game (the live feed listens)."""

    def announce(self, game_id: str, version: int) -> None:
        """Tell subscribers the game reached ``version``."""
        ...

    def subscribe(self, game_id: str) -> Subscription:
        """Start listening to a game's announcements."""
        ...

    def subscribe_all(self) -> AllSubscription:
        """Start listening to every game's announcements (one listener per process: the
        live feed's hub)."""
        ...


class AllSubscription(Protocol):
    """An open subscription to every game's announcements."""

    def next(self, timeout: float) -> tuple[str, int] | None:
        """The next (game id, version) announced, or None after ``timeout`` seconds."""
        ...

    def close(self) -> None:
        """Stop listening."""
        ...


class Subscription(Protocol):
    """An open subscription to one game's announcements."""

    def next(self, timeout: float) -> int | None:
        """The next announced version, or None after ``timeout`` seconds."""
        ...

    def close(self) -> None:
        """Stop listening."""
        ...


class Clock(Protocol):
    """Time, and deadlines that come due (turn clocks)."""

    def now(self) -> str:
        """ISO-8601 UTC time with milliseconds (the ``at`` of new envelopes)."""
        ...

    def epoch(self) -> float:
        """Seconds since the epoch."""
        ...

    def set_deadline(self, key: str, epoch: float) -> None:
        """Schedule (or move) the deadline named ``key``."""
        ...

    def cancel_deadline(self, key: str) -> None:
        """Forget a deadline."""
        ...

    def due(self, epoch: float, limit: int = 100) -> list[str]:
        """Deadlines at or before ``epoch``, earliest first."""
        ...

    def claim_due(self, retry_s: float, limit: int = 100) -> list[str]:
        """The deadlines due now (by this clock), earliest first, each moved ``retry_s``
        later in the same step (so a claim that comes to nothing is tried again)."""
        ...
