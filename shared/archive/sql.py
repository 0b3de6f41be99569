"""The archive on SQL: one statement of every query, run by SQLite and PostgreSQL alike.

The adapters (``shared.archive.sqlite``, ``shared.archive.postgres``) give a ``Database``:
transactions whose ``run`` takes this module's SQL (``?`` placeholders; PostgreSQL's adapter
spells them ``%s``) and their own tables' DDL (types differ, the names and columns do not).

Tables:
- ``archive_meta``: ``schema`` → the tables' version (``SCHEMA_VERSION``);
- ``dictionaries``: every zstd dictionary a log was compressed with, by its id;
- ``games``: one row a game: ``seq`` (the archive's order, what lists sort and page by), the
  columns lists filter on, and ``doc``, the rest of its ``GameRow`` as JSON
  (``GameRow.stored_doc``);
- ``logs``: the game's export by ``seq``: a zstd frame of it packed (``shared.archive.packing``),
  how it is packed (``form``), and the id of its dictionary (0: none);
- ``bot_games``: the per-bot index (bot id, seq);
- ``tournaments`` and ``bot_stats``: JSON documents;
- ``game_access``: a game's ``FinishedGame.access`` document by ``seq`` (schema 2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from shared.archive.codec import Codec, dict_id, shipped_dictionaries
from shared.archive.packing import pack, unpack
from shared.archive.port import (
    SCHEMA_VERSION,
    ArchiveConflict,
    ArchiveFormatError,
    FinishedGame,
    GameRow,
    Page,
    envelopes_of,
    export_bytes,
)
from shared.archive.rows import game_row
from shared.events import Envelope
from shared.match.record import GameRecord

MAX_PAGE = 1000


class Tx(Protocol):
    """A transaction's statements."""

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Execute ``sql`` (``?`` placeholders) with ``params``; its rows (none for a
        statement that returns none)."""
        ...


class Database(Protocol):
    """Transactions on one database, from any thread of the process."""

    def write(self) -> AbstractContextManager[Tx]:
        """A write transaction, holding the database's write lock where it has one: committed
        when the block ends, rolled back when it raises."""
        ...

    def read(self) -> AbstractContextManager[Tx]:
        """Reads, each statement on one snapshot (the archive's reads are one statement
        each)."""
        ...

    def close(self) -> None:
        """Close this process's connections."""
        ...


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A game ready to insert: its row, its export, and the frame the archive keeps."""

    row: GameRow
    raw: bytes  # the export
    form: int  # how ``frame`` holds it (``shared.archive.packing``)
    dict_id: int
    frame: bytes
    access: Mapping[str, Any] | None = None


class SqlArchive:
    """``Archive`` over a ``Database`` whose tables ``ddl`` makes (run in order, in one
    transaction, on every open: each statement must be idempotent; the first makes
    ``archive_meta``). ``dictionaries``: game type -> the zstd dictionary to compress its
    logs with (None: the ones this build ships; {}: none)."""

    def __init__(
        self, db: Database, ddl: Sequence[str], dictionaries: Mapping[str, bytes] | None = None
    ) -> None:
        self._db = db
        current = shipped_dictionaries() if dictionaries is None else dict(dictionaries)
        try:
            self._open(ddl, current)
        except BaseException:
            db.close()  # an archive refused leaves no connection open
            raise
        self._codec = Codec(current, self._load_dict)

    # ---- writes --------------------------------------------------------------------------

    def put_games(self, games: Sequence[FinishedGame]) -> list[bool]:
        """See ``Archive.put_games``."""
        prepared = [self._prepare(g.game_id, g.envelopes, g.record, g.access) for g in games]
        out: list[bool] = []
        with self._db.write() as tx:
            for p in prepared:
                out.append(self._insert(tx, p))
        return out

    def put_game(
        self, game_id: str, envelopes: Sequence[Envelope], record: GameRecord | None = None
    ) -> bool:
        """See ``Archive.put_game``."""
        return self.put_games([FinishedGame(game_id, envelopes, record)])[0]

    def put_tournament(self, tournament_id: str, doc: Mapping[str, Any]) -> None:
        """See ``Archive.put_tournament``."""
        with self._db.write() as tx:
            tx.run(
                "INSERT INTO tournaments (tournament_id, doc) VALUES (?, ?) "
                "ON CONFLICT (tournament_id) DO UPDATE SET doc = excluded.doc",
                (tournament_id, _json(doc)),
            )

    def put_bot_stats(self, bot_id: str, doc: Mapping[str, Any]) -> None:
        """See ``Archive.put_bot_stats``."""
        with self._db.write() as tx:
            tx.run(
                "INSERT INTO bot_stats (bot_id, doc) VALUES (?, ?) "
                "ON CONFLICT (bot_id) DO UPDATE SET doc = excluded.doc",
                (bot_id, _json(doc)),
            )

    # ---- reads ---------------------------------------------------------------------------

    def has_game(self, game_id: str) -> bool:
        """See ``Archive.has_game``."""
        with self._db.read() as tx:
            return bool(tx.run("SELECT 1 FROM games WHERE game_id = ?", (game_id,)))

    def game(self, game_id: str) -> GameRow | None:
        """See ``Archive.game``."""
        with self._db.read() as tx:
            rows = tx.run(f"SELECT {_ROW} FROM games g WHERE g.game_id = ?", (game_id,))
        return _row(rows[0]) if rows else None

    def export(self, game_id: str) -> bytes | None:
        """See ``Archive.export``."""
        with self._db.read() as tx:
            rows = tx.run(f"SELECT {_LOG} WHERE g.game_id = ?", (game_id,))
        return self._export(rows[0]) if rows else None

    def access(self, game_id: str) -> dict[str, Any] | None:
        """See ``Archive.access``."""
        return self.accesses([game_id])[0]

    def accesses(self, game_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """See ``Archive.accesses``: a statement per 500 ids."""
        found = self._docs(
            "SELECT g.game_id, a.doc FROM games g JOIN game_access a ON a.seq = g.seq "
            "WHERE g.game_id IN ({})",
            game_ids,
        )
        return [found.get(gid) for gid in game_ids]

    def games(self, game_ids: Sequence[str]) -> list[GameRow | None]:
        """See ``Archive.games``: a statement per 500 ids."""
        found: dict[str, GameRow] = {}
        ids = list(dict.fromkeys(game_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ", ".join("?" * len(chunk))
            with self._db.read() as tx:
                rows = tx.run(f"SELECT {_ROW} FROM games g WHERE g.game_id IN ({marks})", chunk)
            found.update((str(r[0]), _row(r)) for r in rows)
        return [found.get(gid) for gid in game_ids]

    def heads(self, game_ids: Sequence[str]) -> list[tuple[int, str] | None]:
        """See ``Archive.heads``: a statement per 500 ids."""
        found = self._docs("SELECT g.game_id, g.doc FROM games g WHERE g.game_id IN ({})", game_ids)
        docs = [found.get(gid) for gid in game_ids]
        return [None if d is None else (int(d["version"]), str(d["head_hash"])) for d in docs]

    def _docs(self, sql: str, game_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Game id -> the JSON of ``sql``'s second column, for the ids (``{}`` in ``sql``
        stands for their placeholders), 500 at a time."""
        found: dict[str, dict[str, Any]] = {}
        ids = list(dict.fromkeys(game_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            with self._db.read() as tx:
                rows = tx.run(sql.format(", ".join("?" * len(chunk))), chunk)
            found.update((str(gid), orjson.loads(doc)) for gid, doc in rows)
        return found

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """See ``Archive.read``."""
        raw = self.export(game_id)
        return [] if raw is None else envelopes_of(raw, after, limit)

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
        """See ``Archive.list_games``."""
        size = max(1, min(limit, MAX_PAGE))
        where: list[str] = []
        params: list[Any] = []
        if bot_id is not None:
            source, key = "bot_games k JOIN games g ON g.seq = k.seq", "k.seq"
            where.append("k.bot_id = ?")
            params.append(bot_id)
        else:
            source, key = "games g", "g.seq"
        for clause, value in (("g.game = ?", game), ("g.tournament_id = ?", tournament)):
            if value is not None:
                where.append(clause)
                params.append(value)
        if lobby:
            where.append("g.lobby = 1")
        if finished:
            where.append("g.finished = 1")
        by_index = tournament is not None
        if by_index:
            key, newest = "g.tournament_index", False
        if cursor is not None:
            where.append(f"{key} {'<' if newest else '>'} ?")
            params.append(_cursor(cursor))
        sql = (
            f"SELECT {_ROW}, {key} FROM {source}"
            f"{' WHERE ' + ' AND '.join(where) if where else ''} "
            f"ORDER BY {key} {'DESC' if newest else 'ASC'} LIMIT ?"
        )
        with self._db.read() as tx:
            rows = tx.run(sql, (*params, size + 1))
        more = len(rows) > size
        rows = rows[:size]
        next_cursor = str(int(rows[-1][-1])) if more else None
        return Page([_row(r) for r in rows], next_cursor)

    def tournament(self, tournament_id: str) -> dict[str, Any] | None:
        """See ``Archive.tournament``."""
        return self._doc("SELECT doc FROM tournaments WHERE tournament_id = ?", tournament_id)

    def list_tournaments(self, *, cursor: str | None = None, limit: int = 100) -> Page[str]:
        """See ``Archive.list_tournaments``."""
        size = max(1, min(limit, MAX_PAGE))
        after = 0 if cursor is None else _cursor(cursor)
        with self._db.read() as tx:
            rows = tx.run(
                "SELECT seq, tournament_id FROM tournaments WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, size + 1),
            )
        more = len(rows) > size
        rows = rows[:size]
        return Page([str(r[1]) for r in rows], str(int(rows[-1][0])) if more else None)

    def bot_stats(self, bot_id: str) -> dict[str, Any] | None:
        """See ``Archive.bot_stats``."""
        return self._doc("SELECT doc FROM bot_stats WHERE bot_id = ?", bot_id)

    def close(self) -> None:
        """See ``Archive.close``."""
        self._db.close()

    # ---- the parts -----------------------------------------------------------------------

    def _open(self, ddl: Sequence[str], dictionaries: Mapping[str, bytes]) -> None:
        """Make the tables of a new archive (refusing one of a newer schema; an archive of
        this one is left as it is, no lock taken on its tables) and store the dictionaries
        this process compresses with (refusing one whose id holds other bytes)."""
        with self._db.write() as tx:
            statements: Iterator[str] = iter(ddl)
            for statement in statements:
                tx.run(statement)
                if "archive_meta" in statement:
                    break
            found = tx.run("SELECT value FROM archive_meta WHERE key = 'schema'")
            version = int(found[0][0]) if found else None
            if version is not None and version > SCHEMA_VERSION:
                raise ArchiveFormatError(
                    f"the archive's schema is version {version}, newer than this build's "
                    f"{SCHEMA_VERSION}: run a newer tabletop on it"
                )
            if version is None or version < SCHEMA_VERSION:
                # A new archive, or an older build's: every statement is idempotent (IF NOT
                # EXISTS), so an older archive gains the tables added since, in this same
                # transaction as its new version number.
                for statement in statements:
                    tx.run(statement)
                tx.run(
                    "INSERT INTO archive_meta (key, value) VALUES ('schema', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(SCHEMA_VERSION),),
                )
            for game, data in sorted(dictionaries.items()):
                did = dict_id(data)
                tx.run(
                    "INSERT INTO dictionaries (dict_id, game, data) VALUES (?, ?, ?) "
                    "ON CONFLICT (dict_id) DO NOTHING",
                    (did, game, data),
                )
                stored = tx.run("SELECT data FROM dictionaries WHERE dict_id = ?", (did,))
                if bytes(stored[0][0]) != data:
                    raise ArchiveFormatError(
                        f"the archive holds another zstd dictionary with id {did} (this build's "
                        f"for {game}): its logs would not read back"
                    )

    def _export(self, found: Sequence[Any]) -> bytes:
        """The export of a ``_LOG`` selection."""
        form, did, frame = found
        return unpack(int(form), self._codec.decompress(int(did), bytes(frame)))

    def _load_dict(self, did: int) -> bytes | None:
        with self._db.read() as tx:
            rows = tx.run("SELECT data FROM dictionaries WHERE dict_id = ?", (did,))
        return bytes(rows[0][0]) if rows else None

    def _prepare(
        self,
        game_id: str,
        envelopes: Sequence[Envelope],
        record: GameRecord | None,
        access: Mapping[str, Any] | None = None,
    ) -> _Prepared:
        """The row, digest and frame of a game: the work done before the transaction."""
        row = game_row(game_id, envelopes, record)
        raw = export_bytes(envelopes)
        form, packed = pack(envelopes, raw)
        did, frame = self._codec.compress(row.game, packed)
        return _Prepared(row=row, raw=raw, form=form, dict_id=did, frame=frame, access=access)

    def _insert(self, tx: Tx, p: _Prepared) -> bool:
        """Insert one game in the open transaction: True, or False when the same log is
        there already (ArchiveConflict when another is: its export's bytes differ)."""
        row = p.row
        lobby = row.listed and row.tournament_id is None
        doc = row.stored_doc()
        for column in _COLUMNS:
            doc.pop(column, None)
        inserted = tx.run(
            "INSERT INTO games (game_id, game, tournament_id, tournament_index, lobby, "
            "finished, doc) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (game_id) DO NOTHING RETURNING seq",
            (row.game_id, row.game, row.tournament_id, row.tournament_index, int(lobby),
             int(row.finished), _json(doc)),
        )  # fmt: skip
        if not inserted:
            found = tx.run(f"SELECT {_LOG} WHERE g.game_id = ?", (row.game_id,))
            if not found or self._export(found[0]) != p.raw:
                raise ArchiveConflict(row.game_id)
            return False
        seq = int(inserted[0][0])
        self._write_log(tx, seq, p)
        if p.access is not None:
            tx.run("INSERT INTO game_access (seq, doc) VALUES (?, ?)", (seq, _json(p.access)))
        for bot in row.bot_ids:
            tx.run("INSERT INTO bot_games (bot_id, seq) VALUES (?, ?)", (bot, seq))
        return True

    def _write_log(self, tx: Tx, seq: int, p: _Prepared) -> None:
        """The game's compressed export, under its row's ``seq``."""
        tx.run(
            "INSERT INTO logs (seq, form, dict_id, data) VALUES (?, ?, ?, ?)",
            (seq, p.form, p.dict_id, p.frame),
        )

    def _doc(self, sql: str, key: str) -> dict[str, Any] | None:
        with self._db.read() as tx:
            rows = tx.run(sql, (key,))
        return orjson.loads(rows[0][0]) if rows else None


def _json(doc: Mapping[str, Any]) -> str:
    return orjson.dumps(doc).decode()


def _cursor(cursor: str) -> int:
    if not cursor.isdigit():
        raise ValueError(f"not a cursor of this list: {cursor!r}")
    return int(cursor)


# The ``games`` columns that are fields of a row (not in its ``doc``), and a row's columns.
_COLUMNS = ("game_id", "game", "tournament_id", "tournament_index")
_ROW = "g.game_id, g.game, g.tournament_id, g.tournament_index, g.doc"
# A game's log: how it is packed, its dictionary, its frame.
_LOG = "l.form, l.dict_id, l.data FROM games g JOIN logs l ON l.seq = g.seq"


def _row(found: Sequence[Any]) -> GameRow:
    """The row of a ``_ROW`` selection (more columns may follow)."""
    doc = orjson.loads(found[4])
    doc.update(zip(_COLUMNS, found[:4], strict=True))
    return GameRow.from_doc(doc)
