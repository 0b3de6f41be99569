"""What every handler and query runs with: the ports, and this process's folded games."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from shared.app.ports import GameEntry, Ports
from shared.match.record import GameRecord, fold

# How long a cached directory entry is trusted. A roster changes without a miss: a seat taken
# over by a bot (a resignation, time-outs) drops its player's token, which this process's copy
# would go on accepting; past this age the entry is read again.
ROSTER_TTL_S = 1.0


@dataclass(slots=True)
class App:
    """The ports plus per-process caches (folded games, directory entries)."""

    ports: Ports
    cache_size: int = 10_000
    records: OrderedDict[str, GameRecord] = field(default_factory=OrderedDict)
    entries: OrderedDict[str, GameEntry] = field(default_factory=OrderedDict)
    entry_times: dict[str, float] = field(default_factory=dict)  # when each entry was read
    now: Callable[[], float] = time.monotonic
    # The gateway's threads share one App: the caches' evictions must not interleave.
    lock: threading.Lock = field(default_factory=threading.Lock)

    def entry(self, game_id: str, *, refresh: bool = False) -> GameEntry | None:
        """The game's directory entry; cached, since only the roster can change: a roster
        miss asks again (``refresh``), and an entry older than ``ROSTER_TTL_S`` is read again
        (a take-over changes the roster without a miss)."""
        now = self.now()
        found = None if refresh else self.entries.get(game_id)
        if found is not None and now - self.entry_times.get(game_id, now) > ROSTER_TTL_S:
            found = None
        if found is None:
            found = self.ports.directory.get(game_id)
            if found is None:
                return None
            with self.lock:
                self.entries[game_id] = found
                self.entry_times[game_id] = now
                while len(self.entries) > self.cache_size:
                    gone, _ = self.entries.popitem(last=False)
                    self.entry_times.pop(gone, None)
        return found

    def load(self, game_id: str, *, fresh: bool = True, archived: bool = False) -> GameRecord:
        """The record at the store's head (from cache plus newer events); LookupError if none.
        ``archived``: the game may have moved to the archive since this process cached it (a
        reader's load, not a command's), so newer events are looked for there too."""
        record = self.records.get(game_id)
        if record is not None:
            with self.lock:
                if game_id in self.records:
                    self.records.move_to_end(game_id)
            if not fresh:
                return record
        after = record.version if record else 0
        store = self.ports.store
        read = getattr(store, "read_any", store.read) if archived else store.read
        newer = read(game_id, after=after)
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
