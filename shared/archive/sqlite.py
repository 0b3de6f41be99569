"""The archive in one SQLite file (the embedded default: ``archive.sqlite3`` in the data
directory, nothing to start).

Write-ahead logging (readers never wait for the writer), a connection per thread (made on a
thread's first use, again in a forked child), autocommit connections with an explicit ``BEGIN
IMMEDIATE`` for each write (so a put checks and inserts under the write lock: two processes
putting one game store it once) and ``synchronous=FULL`` by default: a game is on disk before
its put returns, so it may leave Redis then. A process killed mid-put leaves the whole game
or none of it (the transaction is SQLite's).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from shared.archive.sql import SqlArchive

# How long a write waits for another connection's (a batch of games takes milliseconds).
BUSY_TIMEOUT_S = 30.0
# A new file's pages. A log of 2-4 kB (a one-hand card game's) fills a 4 KiB page alone, a
# quarter of it left empty; 16 KiB pages hold several of those but leave a third of a page
# empty beside each 10 kB log (a match's). 2 KiB pages cut logs into full overflow pages:
# 3,587 bytes a one-hand game (4 KiB: 4,697) and 10,103 a whole match (4 KiB: 10,267), reads
# alike (``benchmarks/bench_archive.py --pages``).
PAGE_SIZE = 2048

DDL = (
    "CREATE TABLE IF NOT EXISTS archive_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS dictionaries (dict_id INTEGER PRIMARY KEY, game TEXT NOT NULL, "
    "data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS games (seq INTEGER PRIMARY KEY, game_id TEXT NOT NULL UNIQUE, "
    "game TEXT NOT NULL, tournament_id TEXT, tournament_index INTEGER, lobby INTEGER NOT NULL, "
    "finished INTEGER NOT NULL, doc TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS games_by_type ON games (game, seq)",
    "CREATE INDEX IF NOT EXISTS games_by_tournament ON games (tournament_id, tournament_index) "
    "WHERE tournament_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS games_in_lobby ON games (seq) WHERE lobby = 1",
    "CREATE TABLE IF NOT EXISTS logs (seq INTEGER PRIMARY KEY, form INTEGER NOT NULL, "
    "dict_id INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bot_games (bot_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY (bot_id, seq)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS tournaments (seq INTEGER PRIMARY KEY, "
    "tournament_id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bot_stats (bot_id TEXT PRIMARY KEY, doc TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS game_access (seq INTEGER PRIMARY KEY, doc TEXT NOT NULL)",
)


# Connections a forked child inherited: referenced for the child's life, so that it never
# closes them (nor does the garbage collector).
_INHERITED: list[sqlite3.Connection] = []


class _Tx:
    """``Tx`` on a sqlite3 connection."""

    __slots__ = ("_c",)

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._c = connection

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """See ``Tx.run``."""
        return self._c.execute(sql, params).fetchall()


class SqliteDatabase:
    """``Database`` on the SQLite file at ``path`` (its folder made if missing)."""

    def __init__(self, path: str, *, synchronous: str = "FULL") -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"not a synchronous setting: {synchronous}")
        self.path = path
        self._synchronous = synchronous.upper()
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._pid = os.getpid()
        self._all: list[sqlite3.Connection] = []

    def connection(self) -> sqlite3.Connection:
        """This thread's connection."""
        if self._pid != os.getpid():  # a forked child: the parent's connections are not ours
            with self._lock:
                # Kept, never closed here: closing a parent's connection in a child can
                # checkpoint and remove the WAL under the parent (SQLite: no connection
                # across a fork).
                _INHERITED.extend(self._all)
                self._pid, self._all = os.getpid(), []
                self._local = threading.local()
        found: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if found is None:
            found = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,  # autocommit: every transaction begins explicitly
                check_same_thread=False,
                cached_statements=64,
            )
            found.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file's; else no effect
            found.execute("PRAGMA journal_mode=WAL")
            found.execute(f"PRAGMA synchronous={self._synchronous}")
            self._local.connection = found
            with self._lock:
                self._all.append(found)
        return found

    @contextmanager
    def write(self) -> Iterator[_Tx]:
        """See ``Database.write``: ``BEGIN IMMEDIATE`` takes the write lock at once."""
        c = self.connection()
        c.execute("BEGIN IMMEDIATE")
        try:
            yield _Tx(c)
        except BaseException:
            if c.in_transaction:  # SQLite may have rolled it back itself (a full disk)
                c.execute("ROLLBACK")
            raise
        c.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[_Tx]:
        """See ``Database.read``: autocommit, each statement its own snapshot."""
        yield _Tx(self.connection())

    def close(self) -> None:
        """See ``Database.close``."""
        with self._lock:
            mine = self._pid == os.getpid()
            connections, self._all = self._all, []
            self._local = threading.local()
        for c in connections if mine else ():
            c.close()


class SqliteArchive(SqlArchive):
    """``Archive`` in the SQLite file at ``path``; ``dictionaries`` as ``SqlArchive``'s."""

    def __init__(
        self,
        path: str,
        *,
        dictionaries: Mapping[str, bytes] | None = None,
        synchronous: str = "FULL",
    ) -> None:
        self.path = path
        self.database = SqliteDatabase(path, synchronous=synchronous)
        super().__init__(self.database, DDL, dictionaries)
