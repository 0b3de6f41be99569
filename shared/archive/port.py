"""The archive port: where a finished game is kept once it leaves Redis (issue 36).

Per game the archive holds its whole log, the bytes of its export (``GET
/v1/games/{id}/export``: one ``Envelope.to_dict`` a line, ``export_bytes``) compressed, so that
an export read back is byte for byte the one written, and an index row (``GameRow``, built from
the envelopes by ``shared.archive.rows.game_row``). Beside the games: tournaments and bot
stats as JSON documents, and a per-bot index of games (a registered bot's games, by the ids in
its rows). Lists page by an opaque cursor.

Two adapters pass one contract suite (``tests/integration/test_archive_contract.py``):
``shared.archive.sqlite`` (the embedded default, one file in the data directory) and
``shared.archive.postgres``; ``shared.archive.open_archive`` picks one by its location.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import orjson

from shared.events import Envelope
from shared.match.record import GameRecord

# The archived log's format (a row's ``store_format``): the export's JSONL, one
# ``Envelope.to_dict`` a line in version order, each line ``orjson.dumps`` of it and a newline,
# packed (``shared.archive.packing``: without the prev_hash each line repeats) and compressed
# with zstd (with the game type's dictionary, when the archive has one).
LOG_FORMAT = 1
# The archive's tables; an archive made by a newer build is refused (``ArchiveFormatError``),
# one made by an older build is brought up to this one when opened (``SqlArchive._open``).
# 2: ``game_access`` (what the service needs to serve an archived game as it served it live).
SCHEMA_VERSION = 2
# ``RULES_VERSION`` (``shared.events``): the key of ``game_created``'s data that records the
# rules version a game was decided under (absent at version 1: its row says None).


class ArchiveConflict(Exception):
    """Another log is archived under this game id (putting the same log again is no error)."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} is archived with another log")
        self.game_id = game_id


class ArchiveFormatError(RuntimeError):
    """The archive cannot be used by this build (made by a newer one, or its stored
    dictionaries disagree with this build's); the message is one line for a person."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRow:
    """A game's index row: what lists, result tables and bot pages read without its log.

    ``seats`` are the final seats, each ``{"name", "bot", "bot_spec", "bot_id", "resigned",
    "taken_over"}`` (``bot`` None for a player; ``bot_id`` a registered bot's id, else None;
    never a token hash); ``bot_ids`` the registered bots seated, in seat order, each once.
    ``finished_at`` is the time of the last envelope of a finished game (None while a game
    runs). ``rules_version`` and ``bot_policies`` are what ``game_created`` recorded (None and
    {} when it recorded none: every bot at its first policy)."""

    game_id: str
    game: str
    options: Mapping[str, Any]
    seats: tuple[Mapping[str, Any], ...]
    bot_ids: tuple[str, ...]
    tournament_id: str | None
    tournament_index: int | None
    listed: bool
    created_at: str
    finished_at: str | None
    outcome: Mapping[str, Any] | None
    version: int
    head_hash: str
    store_format: int
    rules_version: int | str | None
    bot_policies: Mapping[str, int] = field(default_factory=dict)

    def to_doc(self) -> dict[str, Any]:
        """JSON-ready, every field."""
        return {
            "game_id": self.game_id,
            "game": self.game,
            "options": dict(self.options),
            "seats": [dict(s) for s in self.seats],
            "bot_ids": list(self.bot_ids),
            "tournament_id": self.tournament_id,
            "tournament_index": self.tournament_index,
            "listed": self.listed,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "outcome": None if self.outcome is None else dict(self.outcome),
            "version": self.version,
            "head_hash": self.head_hash,
            "store_format": self.store_format,
            "rules_version": self.rules_version,
            "bot_policies": dict(self.bot_policies),
        }

    def stored_doc(self) -> dict[str, Any]:
        """``to_doc`` as an archive stores it: without the fields (and seat fields) that hold
        their defaults (None, false, empty), which ``from_doc`` puts back."""
        doc = {k: v for k, v in self.to_doc().items() if k in _KEPT or not _default(v)}
        doc["seats"] = [
            {k: v for k, v in s.items() if k == "name" or not _default(v)} for s in self.seats
        ]
        return doc

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> GameRow:
        """The row ``to_doc`` (or ``stored_doc``) wrote."""
        return cls(
            game_id=doc["game_id"],
            game=doc["game"],
            options=doc.get("options") or {},
            seats=tuple({**_SEAT, **s} for s in doc["seats"]),
            bot_ids=tuple(doc.get("bot_ids") or ()),
            tournament_id=doc.get("tournament_id"),
            tournament_index=doc.get("tournament_index"),
            listed=bool(doc.get("listed", False)),
            created_at=doc["created_at"],
            finished_at=doc.get("finished_at"),
            outcome=doc.get("outcome"),
            version=doc["version"],
            head_hash=doc["head_hash"],
            store_format=doc["store_format"],
            rules_version=doc.get("rules_version"),
            bot_policies=doc.get("bot_policies") or {},
        )

    @property
    def finished(self) -> bool:
        """Whether the game is over."""
        return self.finished_at is not None


# A seat's fields with their defaults (a stored seat keeps its name and the others it sets).
_SEAT: dict[str, Any] = {"name": "", "bot": None, "bot_spec": None, "bot_id": None,
                         "resigned": False, "taken_over": None}  # fmt: skip
# Stored whatever their value (the rest are left out at their defaults).
_KEPT = frozenset({"game_id", "game", "seats", "created_at", "version", "head_hash",
                   "store_format"})  # fmt: skip


def _default(value: Any) -> bool:
    """None, false, or an empty list or object (never 0: a tournament's first game)."""
    return value is None or value is False or (isinstance(value, dict | list) and not value)


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """A game to archive: its id, its whole log, and its folded record when the caller holds
    it already (the row is built from it instead of folding the log again; it must be the
    log's last record)."""

    game_id: str
    envelopes: Sequence[Envelope]
    record: GameRecord | None = None
    # What the service needs to go on serving the game as it did live and that its log does
    # not hold: its directory entry (roster token hashes, shard, owner) and stored result.
    # Never served as it is (``Archive.access``); None: none kept.
    access: Mapping[str, Any] | None = None


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list; ``next_cursor`` continues it (None at its end)."""

    items: list[T]
    next_cursor: str | None


def export_bytes(envelopes: Sequence[Envelope]) -> bytes:
    """The export of a log, as ``GET /v1/games/{id}/export`` writes it: one
    ``orjson.dumps(envelope.to_dict())`` a line, each followed by a newline."""
    return b"".join([orjson.dumps(env.to_dict()) + b"\n" for env in envelopes])


def envelopes_of(export: bytes, after: int = 0, limit: int | None = None) -> list[Envelope]:
    """The envelopes of an export (``export_bytes``) with version > ``after`` (at most
    ``limit``): line ``v`` holds version ``v``, so only those lines are parsed."""
    lines = export.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    end = len(lines) if limit is None else min(len(lines), after + max(0, limit))
    return [Envelope.from_dict(orjson.loads(line)) for line in lines[max(0, after) : end]]


class Archive(Protocol):
    """Finished games kept for good: whole logs (compressed), index rows, tournaments, bot
    stats and a per-bot index of games."""

    def put_games(self, games: Sequence[FinishedGame]) -> list[bool]:
        """Archive each game (its log, its row, its bots' index entries) in one transaction:
        per game, True when stored now, False when that very log was archived before (a no-op).
        ArchiveConflict (nothing stored) when an id holds another log; ValueError (nothing
        stored) for a log that is empty, does not begin with ``game_created``, or whose versions
        or links are broken. The hashes' contents are the caller's to check
        (``shared.events.verify_chain`` with the revealed seed) before it drops its copy."""
        ...

    def put_game(
        self, game_id: str, envelopes: Sequence[Envelope], record: GameRecord | None = None
    ) -> bool:
        """``put_games`` of one game."""
        ...

    def has_game(self, game_id: str) -> bool:
        """Whether the game is archived (whole: a game is archived in one transaction)."""
        ...

    def game(self, game_id: str) -> GameRow | None:
        """The game's index row, or None when it is not archived."""
        ...

    def export(self, game_id: str) -> bytes | None:
        """The game's export, byte for byte the one archived; None when it is not archived."""
        ...

    def games(self, game_ids: Sequence[str]) -> list[GameRow | None]:
        """``game`` of each, in order, in a few statements."""
        ...

    def heads(self, game_ids: Sequence[str]) -> list[tuple[int, str] | None]:
        """(version, head hash) of each archived game's log, in order (None: not archived),
        in a few statements."""
        ...

    def access(self, game_id: str) -> dict[str, Any] | None:
        """The ``FinishedGame.access`` document archived with the game, or None."""
        ...

    def accesses(self, game_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """``access`` of each, in order, in a few statements."""
        ...

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """Envelopes with version > ``after`` in order (at most ``limit``), as
        ``EventStore.read`` gives them; [] for a game not archived."""
        ...

    def list_games(
        self,
        *,
        game: str | None = None,
        tournament: str | None = None,
        bot_id: str | None = None,
        lobby: bool = False,
        finished: bool = False,
        newest: bool = True,
        cursor: str | None = None,
        limit: int = 100,
    ) -> Page[GameRow]:
        """Rows in the order they were archived, newest first unless ``newest`` is False; a
        ``tournament``'s games by index. Filters: ``game`` type,
        ``tournament`` id, a registered bot's ``bot_id`` (the per-bot index), ``lobby`` (listed
        games of no tournament), ``finished`` (over). ValueError for a cursor it did not give."""
        ...

    def put_tournament(self, tournament_id: str, doc: Mapping[str, Any]) -> None:
        """Store a tournament's JSON document (plan, standings, SPRT history), replacing the
        one stored before."""
        ...

    def tournament(self, tournament_id: str) -> dict[str, Any] | None:
        """The tournament's document, or None."""
        ...

    def list_tournaments(self, *, cursor: str | None = None, limit: int = 100) -> Page[str]:
        """Tournament ids in the order first stored, oldest first."""
        ...

    def put_bot_stats(self, bot_id: str, doc: Mapping[str, Any]) -> None:
        """Store a bot's stats document, replacing the one stored before."""
        ...

    def bot_stats(self, bot_id: str) -> dict[str, Any] | None:
        """The bot's stats document, or None."""
        ...

    def close(self) -> None:
        """Close this process's connections (the archive opens them again when used)."""
        ...
