"""The event store port: append with optimistic concurrency and command de-duplication."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from shared.events import EncodedLog, Envelope


class StaleVersion(Exception):
    """The stream is not at the expected version (another command was applied first)."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"expected version {expected}, stream is at {actual}")
        self.expected = expected
        self.actual = actual


class DuplicateCommand(Exception):
    """The command id was already applied; ``versions`` are the (first, last) it appended."""

    def __init__(self, command_id: str, first: int, last: int) -> None:
        super().__init__(f"command {command_id} already applied at versions {first}..{last}")
        self.command_id = command_id
        self.first = first
        self.last = last


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where an append landed."""

    first: int
    last: int


class EventStore(Protocol):
    """Per-game event streams: contiguous versions, hash-chained, de-duplicated by command."""

    def append(
        self,
        game_id: str,
        envelopes: Sequence[Envelope],
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """Atomically append sealed envelopes if the stream is at ``expected_version`` and
        ``command_id`` was never applied; else raise StaleVersion or DuplicateCommand."""
        ...

    def append_log(
        self,
        game_id: str,
        log: EncodedLog,
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """``append`` for envelopes already encoded as the store keeps them (a whole game
        written in one go)."""
        ...

    def append_logs(
        self, logs: Sequence[tuple[str, EncodedLog]], *, command_id: str | None = None
    ) -> list[AppendResult | StaleVersion | DuplicateCommand]:
        """``append_log`` at version 0 of each (game id, whole log), in one round trip where
        the store can: the outcome of each, in order, the refusals returned, not raised (and
        ValueError, with nothing appended, when a log is empty)."""
        ...

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """Envelopes with version > ``after`` in order (at most ``limit``)."""
        ...

    def head(self, game_id: str) -> tuple[int, str]:
        """(version, hash) of the last envelope; (0, GENESIS_HASH) for an empty stream."""
        ...

    def applied(self, game_id: str, command_id: str) -> tuple[int, int] | None:
        """(first, last) versions a command appended, or None if it was never applied."""
        ...


def append_each(
    store: EventStore, logs: Sequence[tuple[str, EncodedLog]], command_id: str | None
) -> list[AppendResult | StaleVersion | DuplicateCommand]:
    """``EventStore.append_logs`` as one ``append_log`` after the other (an empty log refused
    before any is appended)."""
    if any(not log.raws for _game_id, log in logs):
        raise ValueError("nothing to append")
    out: list[AppendResult | StaleVersion | DuplicateCommand] = []
    for game_id, log in logs:
        try:
            out.append(store.append_log(game_id, log, expected_version=0, command_id=command_id))
        except (StaleVersion, DuplicateCommand) as refused:
            out.append(refused)
    return out
