"""What every handler and query runs with: the ports, and this process's folded games."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from shared.app.ports import GameEntry, Ports
from shared.record import GameRecord, fold


@dataclass(slots=True)
class App:
    """The ports plus per-process caches (folded games, directory entries)."""

    ports: Ports
    cache_size: int = 10_000
    records: OrderedDict[str, GameRecord] = field(default_factory=OrderedDict)
    entries: OrderedDict[str, GameEntry] = field(default_factory=OrderedDict)
    # The gateway's threads share one App: the caches' evictions must not interleave.
    lock: threading.Lock = field(default_factory=threading.Lock)

    def entry(self, game_id: str, *, refresh: bool = False) -> GameEntry | None:
        """The game's directory entry; cached, since only the roster can change and a roster
        miss asks again (``refresh``)."""
        found = None if refresh else self.entries.get(game_id)
        if found is None:
            found = self.ports.directory.get(game_id)
            if found is None:
                return None
            with self.lock:
                self.entries[game_id] = found
                while len(self.entries) > self.cache_size:
                    self.entries.popitem(last=False)
        return found

    def load(self, game_id: str, *, fresh: bool = True) -> GameRecord:
        """The record at the store's head (from cache plus newer events); LookupError if none."""
        record = self.records.get(game_id)
        if record is not None:
            with self.lock:
                if game_id in self.records:
                    self.records.move_to_end(game_id)
            if not fresh:
                return record
        after = record.version if record else 0
        newer = self.ports.store.read(game_id, after=after)
        if record is None and not newer:
            raise LookupError(game_id)
        if newer:
            record = fold(game_id, newer, record)
            self.remember(record)
        assert record is not None
        return record

    def remember(self, record: GameRecord) -> None:
        """Keep a folded record (least recently used ones leave first)."""
        with self.lock:
            self.records[record.id] = record
            self.records.move_to_end(record.id)
            while len(self.records) > self.cache_size:
                self.records.popitem(last=False)

    def forget(self, game_id: str) -> None:
        """Drop what this process keeps of a game."""
        self.records.pop(game_id, None)
        self.entries.pop(game_id, None)
