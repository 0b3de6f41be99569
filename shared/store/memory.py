"""In-memory event store: the reference adapter for unit tests and in-process simulation."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from shared.events import GENESIS_HASH, EncodedLog, Envelope
from shared.store.port import AppendResult, DuplicateCommand, StaleVersion, append_each


class MemoryEventStore:
    """Keeps every stream in a dict; thread-safe so tests can race appends."""

    def __init__(self) -> None:
        self._streams: dict[str, list[Envelope]] = {}
        self._commands: dict[str, dict[str, tuple[int, int]]] = {}
        self._lock = threading.Lock()

    def append(
        self,
        game_id: str,
        envelopes: Sequence[Envelope],
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """See ``EventStore.append``."""
        with self._lock:
            stream = self._streams.setdefault(game_id, [])
            seen = self._commands.setdefault(game_id, {})
            if command_id is not None and command_id in seen:
                first, last = seen[command_id]
                raise DuplicateCommand(command_id, first, last)
            if len(stream) != expected_version:
                raise StaleVersion(expected_version, len(stream))
            _check_link(stream[-1].hash if stream else GENESIS_HASH, expected_version, envelopes)
            stream.extend(envelopes)
            result = AppendResult(expected_version + 1, len(stream))
            if command_id is not None:
                seen[command_id] = (result.first, result.last)
            return result

    def append_log(
        self,
        game_id: str,
        log: EncodedLog,
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """See ``EventStore.append_log``."""
        return self.append(
            game_id, log.envelopes(), expected_version=expected_version, command_id=command_id
        )

    def append_logs(
        self, logs: Sequence[tuple[str, EncodedLog]], *, command_id: str | None = None
    ) -> list[AppendResult | StaleVersion | DuplicateCommand]:
        """See ``EventStore.append_logs``."""
        return append_each(self, logs, command_id)

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """See ``EventStore.read``."""
        with self._lock:
            stream = self._streams.get(game_id, [])
            end = None if limit is None else after + limit
            return list(stream[after:end])

    def head(self, game_id: str) -> tuple[int, str]:
        """See ``EventStore.head``."""
        with self._lock:
            stream = self._streams.get(game_id, [])
            return (len(stream), stream[-1].hash) if stream else (0, GENESIS_HASH)

    def applied(self, game_id: str, command_id: str) -> tuple[int, int] | None:
        """See ``EventStore.applied``."""
        with self._lock:
            return self._commands.get(game_id, {}).get(command_id)


def _check_link(prev_hash: str, expected_version: int, envelopes: Sequence[Envelope]) -> None:
    # A caller that sealed against another head would break the chain; refuse it as stale.
    if not envelopes:
        raise ValueError("nothing to append")
    first = envelopes[0]
    if first.version != expected_version + 1 or first.prev_hash != prev_hash:
        raise StaleVersion(expected_version, first.version - 1)
