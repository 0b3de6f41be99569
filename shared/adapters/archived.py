"""Reads that go on working once a finished game has moved from Redis to the archive.

``ArchiveBackedStore`` and ``ArchiveBackedDirectory`` wrap the Redis adapters of the event
store and the game directory: every write goes to Redis as before; a read that finds nothing
there asks the archive (``shared.archive``). So a finished game reads the same whether it is
still in Redis or moved (``shared.app.archiving``): its log, its head, its directory entry
(roster, seed, shard) and its result. A read that finds the game in Redis never touches the
archive, so a live game's path costs what it did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.app.ports import GameDirectory, GameEntry
from shared.archive.port import Archive, GameRow
from shared.archive.rows import result_of
from shared.events import GENESIS_HASH, EncodedLog, Envelope
from shared.store.port import AppendResult, DuplicateCommand, EventStore, StaleVersion


def entry_doc(entry: GameEntry) -> dict[str, Any]:
    """A directory entry as the archive keeps it (``FinishedGame.access``'s ``entry``): the
    fields that hold more than their defaults (a tournament's game has no tokens, no owner)."""
    doc: dict[str, Any] = {"game": entry.game, "seed": entry.seed, "created_at": entry.created_at}
    if entry.shard:
        doc["shard"] = entry.shard
    if any(entry.token_hashes):
        doc["token_hashes"] = list(entry.token_hashes)
    else:
        doc["seats"] = len(entry.token_hashes)
    for name in ("owner", "tournament"):
        if getattr(entry, name):
            doc[name] = getattr(entry, name)
    return doc


def entry_of(game_id: str, doc: Mapping[str, Any]) -> GameEntry:
    """The directory entry ``entry_doc`` wrote."""
    tokens = doc.get("token_hashes")
    return GameEntry(
        game_id=game_id,
        game=str(doc["game"]),
        seed=str(doc["seed"]),
        shard=int(doc.get("shard", 0)),
        created_at=str(doc.get("created_at", "")),
        token_hashes=tuple(tokens) if tokens else (None,) * int(doc.get("seats", 0)),
        # An archived game's roster no longer changes: it is read as it was archived.
        lobby=False,
        owner=str(doc.get("owner", "")),
        tournament=str(doc.get("tournament", "")),
    )


class ArchiveBackedStore:
    """``EventStore``: Redis's, and the archive's log of a game Redis no longer holds."""

    def __init__(self, inner: EventStore, archive: Archive) -> None:
        self.inner = inner
        self.archive = archive

    def append(
        self,
        game_id: str,
        envelopes: Sequence[Envelope],
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """See ``EventStore.append`` (Redis's)."""
        return self.inner.append(
            game_id, envelopes, expected_version=expected_version, command_id=command_id
        )

    def append_log(
        self,
        game_id: str,
        log: EncodedLog,
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """See ``EventStore.append_log`` (Redis's)."""
        return self.inner.append_log(
            game_id, log, expected_version=expected_version, command_id=command_id
        )

    def append_logs(
        self, logs: Sequence[tuple[str, EncodedLog]], *, command_id: str | None = None
    ) -> list[AppendResult | StaleVersion | DuplicateCommand]:
        """See ``EventStore.append_logs`` (Redis's)."""
        return self.inner.append_logs(logs, command_id=command_id)

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """See ``EventStore.read``: the archive's log when Redis holds none of the game. A
        read after a version that finds nothing new is answered by Redis alone (a cached
        record's catching up, the hot path of every command); ``read_any`` asks both."""
        found = self.inner.read(game_id, after=after, limit=limit)
        if found or after > 0:
            return found
        return self.archive.read(game_id, after, limit)

    def read_any(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """``read`` that asks the archive at any ``after`` when Redis holds no log (a page of
        an archived game's events)."""
        found = self.inner.read(game_id, after=after, limit=limit)
        if found or self.inner.head(game_id)[0] > 0:
            return found
        return self.archive.read(game_id, after, limit)

    def head(self, game_id: str) -> tuple[int, str]:
        """See ``EventStore.head``: the archived game's when Redis holds none."""
        found = self.inner.head(game_id)
        if found[0] > 0:
            return found
        row = self.archive.game(game_id)
        return (row.version, row.head_hash) if row is not None else (0, GENESIS_HASH)

    def applied(self, game_id: str, command_id: str) -> tuple[int, int] | None:
        """See ``EventStore.applied`` (Redis's: an archived game takes no command)."""
        return self.inner.applied(game_id, command_id)


class ArchiveBackedDirectory:
    """``GameDirectory``: Redis's, and the archived entry and result of a game that moved.
    Lists are Redis's (the games it holds); ``shared.app.queries`` pages on into the
    archive's."""

    def __init__(self, inner: GameDirectory, archive: Archive) -> None:
        self.inner = inner
        self.archive = archive

    def __getattr__(self, name: str) -> Any:
        # The Redis directory's own extras (``finished_before``, ``evict``) pass through.
        return getattr(self.inner, name)

    def register(self, entry: GameEntry, created_epoch: float) -> None:
        """See ``GameDirectory.register``."""
        self.inner.register(entry, created_epoch)

    def register_all(self, entries: Sequence[tuple[GameEntry, float]]) -> None:
        """See ``GameDirectory.register_all``."""
        self.inner.register_all(entries)

    def get(self, game_id: str) -> GameEntry | None:
        """See ``GameDirectory.get``: an archived game's entry when Redis holds none."""
        found = self.inner.get(game_id)
        if found is not None:
            return found
        access = self.archive.access(game_id)
        if access is None or "entry" not in access:
            return None
        return entry_of(game_id, access["entry"])

    def set_token_hashes(self, game_id: str, token_hashes: Sequence[str | None]) -> None:
        """See ``GameDirectory.set_token_hashes``."""
        self.inner.set_token_hashes(game_id, token_hashes)

    def mark_finished(self, game_id: str, epoch: float) -> None:
        """See ``GameDirectory.mark_finished``."""
        self.inner.mark_finished(game_id, epoch)

    def list_games(
        self,
        *,
        finished: bool = False,
        offset: int = 0,
        limit: int = 100,
        newest: bool = False,
        lobby: bool = False,
    ) -> list[str]:
        """See ``GameDirectory.list_games`` (the games Redis holds)."""
        return self.inner.list_games(
            finished=finished, offset=offset, limit=limit, newest=newest, lobby=lobby
        )

    def record_result(self, game_id: str, result: Mapping[str, Any]) -> bool:
        """See ``GameDirectory.record_result``: False for an archived game (its result was
        written before it moved)."""
        if self.inner.get(game_id) is None and self.archive.has_game(game_id):
            return False
        return self.inner.record_result(game_id, result)

    def record_results(self, results: Mapping[str, Mapping[str, Any]]) -> None:
        """See ``GameDirectory.record_results``."""
        self.inner.record_results(results)

    def result(self, game_id: str) -> dict[str, Any] | None:
        """See ``GameDirectory.result``: an archived game's when Redis holds none."""
        return self.results([game_id])[0]

    def results(self, game_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """See ``GameDirectory.results``: the archive's for those Redis holds none of."""
        out = self.inner.results(game_ids)
        missing = [gid for gid, r in zip(game_ids, out, strict=True) if r is None]
        if not missing:
            return out
        rows = dict(zip(missing, self.archive.games(missing), strict=True))
        return [
            r if r is not None else _archived_result(rows.get(gid))
            for gid, r in zip(game_ids, out, strict=True)
        ]


def _archived_result(row: GameRow | None) -> dict[str, Any] | None:
    return None if row is None or row.outcome is None else result_of(row)
