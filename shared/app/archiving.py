"""Moving finished games from Redis to the archive (issue 36).

A game moves once it is over and scored: a live game once its result is written, a
tournament's game once its standings and ratings have counted it (``counted``), and at least
``after_s`` after it finished (sooner while Redis's memory is short). Each move:

1. reads the game's log, entry and head from Redis (a page of games in one round trip);
2. checks the log: its versions contiguous and linked, its last envelope Redis's head (the
   audit recomputes every salted hash; the mover does not, for its cost: about a millisecond
   a game, most of a move);
3. archives it (``Archive.put_games``: idempotent, a batch in one transaction), then reads back
   the archived heads: each must be Redis's;
4. removes the game from Redis (``Evictor.evict``): its keys by one script that does nothing
   if the game moved on in between, then its place in the indexes.

At-least-once and idempotent: a kill at any step leaves the game readable from Redis (before
step 4's transaction) or from the archive (after it), and the next sweep finishes the move: a
put of the same log again is a no-op, an index entry left behind is dropped. Reads fall back
to the archive (``shared.adapters.archived``), so a moved game reads the same.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from shared.adapters.archived import entry_doc
from shared.app.context import App
from shared.app.ports import GameDirectory, GameEntry
from shared.archive.port import Archive, ArchiveConflict, FinishedGame
from shared.events import Envelope, verify_links
from shared.match.record import GameRecord, fold
from shared.store.port import EventStore

log = logging.getLogger(__name__)

SWEEP_LIMIT = 500  # games looked at per sweep
PUT_BATCH = 100  # games archived per transaction


@dataclass(frozen=True, slots=True)
class Loaded:
    """A game as Redis holds it: its directory entry, its whole log, its head."""

    entry: GameEntry
    envelopes: Sequence[Envelope]
    head: tuple[int, str]


@dataclass(frozen=True, slots=True)
class Evicting:
    """A game to remove from Redis, if its head is still at ``version``."""

    game_id: str
    game: str
    seats: int
    version: int


class Evictor(Protocol):
    """What the mover needs of Redis, a page of games at a time."""

    def finished_before(self, epoch: float, *, after: float, limit: int) -> list[tuple[str, float]]:
        """(game id, finishing epoch) of games listed finished at or before ``epoch`` and
        after ``after``, oldest first."""
        ...

    def load(self, game_ids: Sequence[str]) -> list[Loaded | None]:
        """Each game as Redis holds it (None: it has no entry left)."""
        ...

    def evict(self, games: Sequence[Evicting]) -> list[bool]:
        """Remove each game's keys and index entries; False (nothing removed) for one whose
        head is no longer at its ``version``."""
        ...

    def forget(self, games: Sequence[tuple[str, str | None]]) -> None:
        """Remove games that have no keys left (a move cut short) from the indexes: (game id,
        game type, or None when unknown)."""
        ...


@dataclass(slots=True)
class Sweep:
    """What one sweep did."""

    looked: int = 0
    moved: int = 0  # archived now and removed from Redis
    finished_before: int = 0  # archived by a sweep before, removed now
    waiting: int = 0  # not scored or not counted yet
    refused: list[tuple[str, str]] = field(default_factory=list)  # (game id, why)
    last_epoch: float | None = None  # the finishing time of the last game looked at


@dataclass(frozen=True, slots=True)
class _Candidate:
    entry: GameEntry
    envelopes: Sequence[Envelope]
    record: GameRecord
    head: tuple[int, str]  # Redis's


def redis_parts(app: App) -> tuple[EventStore, GameDirectory]:
    """The store and directory Redis answers (not their archive-backed wrappers)."""
    store = getattr(app.ports.store, "inner", app.ports.store)
    directory = getattr(app.ports.directory, "inner", app.ports.directory)
    return store, directory


def sweep(
    app: App,
    archive: Archive,
    evictor: Evictor,
    *,
    before_epoch: float,
    after_epoch: float = float("-inf"),
    limit: int = SWEEP_LIMIT,
) -> Sweep:
    """Move the games listed finished at or before ``before_epoch`` (and after
    ``after_epoch``) that are ready, ``limit`` at most."""
    _, directory = redis_parts(app)
    done = Sweep()
    listed = evictor.finished_before(before_epoch, after=after_epoch, limit=limit)
    done.looked = len(listed)
    if not listed:
        return done
    done.last_epoch = listed[-1][1]
    ids = [gid for gid, _ in listed]
    results = directory.results(ids)
    ready: list[_Candidate] = []
    gone: list[tuple[str, str | None]] = []
    scored: list[tuple[str, Loaded]] = []
    for gid, result, loaded in zip(ids, results, evictor.load(ids), strict=True):
        if loaded is None:
            # No entry: a move cut short after its keys went (the archive has it), or a game
            # whose keys someone removed (nothing left to move): either way, off the lists.
            if archive.has_game(gid):
                done.finished_before += 1
            else:
                log.warning("archive: game %s is listed finished but has no entry; unlisted", gid)
            gone.append((gid, None))
        elif not loaded.envelopes:
            done.refused.append((gid, "no log"))
        elif result is None:
            done.waiting += 1  # its scoring has not written its result yet
        else:
            scored.append((gid, loaded))
    counted = _counted(app, [loaded for _, loaded in scored])
    for (gid, loaded), ok in zip(scored, counted, strict=True):
        if not ok:
            done.waiting += 1  # a tournament's game its standings do not hold yet
            continue
        record = fold(gid, loaded.envelopes)
        if record.outcome is None or record.seed is None:
            done.waiting += 1
            continue
        ready.append(_Candidate(loaded.entry, loaded.envelopes, record, loaded.head))
    if gone:
        evictor.forget(gone)
    for start in range(0, len(ready), PUT_BATCH):
        _move(archive, evictor, ready[start : start + PUT_BATCH], done)
    return done


def _counted(app: App, games: Sequence[Loaded]) -> list[bool]:
    """Whether each game may leave Redis as far as its tournament goes: one of no tournament
    may; a tournament's game once its standings hold it (it is folded): no batch plays it
    again (``tournaments.play_games`` skips folded games), and what reads it later (the
    ratings in game order, an sprt's pairs, a cancelled tournament's replay) reads its stored
    result, which the archive keeps (``ArchiveBackedDirectory.results``). One read per
    tournament."""
    tags = [g.envelopes[0].data.get("tournament") if g.envelopes else None for g in games]
    wanted: dict[str, list[int]] = {}
    for tag in tags:
        if tag:
            wanted.setdefault(str(tag["id"]), []).append(int(tag["index"]))
    folded: dict[tuple[str, int], bool] = {}
    for tid, indexes in wanted.items():
        if app.ports.tournaments.get(tid) is None:
            flags = [True] * len(indexes)  # a tournament no longer kept: nothing counts it
        else:
            flags = app.ports.tournaments.folded(tid, indexes)
        folded.update(((tid, i), f) for i, f in zip(indexes, flags, strict=True))
    return [True if not tag else folded[(str(tag["id"]), int(tag["index"]))] for tag in tags]


def _move(archive: Archive, evictor: Evictor, batch: Sequence[_Candidate], done: Sweep) -> None:
    """Check, archive and evict one batch of ready games."""
    checked: list[_Candidate] = []
    for c in batch:
        gid = c.record.id
        try:
            verify_links(c.envelopes)
        except ValueError as broken:
            done.refused.append((gid, f"its chain is broken: {broken}"))
            continue
        last = c.envelopes[-1]
        if c.head != (last.version, last.hash):
            done.refused.append((gid, "its log and head disagree"))
            continue
        checked.append(c)
    if not checked:
        return
    games = [
        FinishedGame(
            c.record.id,
            c.envelopes,
            c.record,
            # Its result is its row's (``result_of``): only the entry is kept beside it.
            access={"entry": entry_doc(c.entry)},
        )
        for c in checked
    ]
    kept: list[tuple[_Candidate, bool]]
    try:
        kept = list(zip(checked, archive.put_games(games), strict=True))
    except ArchiveConflict:
        kept = []
        for game, c in zip(games, checked, strict=True):  # one at a time: find the one
            try:
                kept.append((c, archive.put_games([game])[0]))
            except ArchiveConflict:
                log.error("archive: game %s is archived with another log; kept in Redis",
                          game.game_id)  # fmt: skip
                done.refused.append((game.game_id, "archived with another log"))
    # The copy, read back: its head must be Redis's before Redis lets go of the game.
    heads = archive.heads([c.record.id for c, _ in kept])
    evicting: list[tuple[_Candidate, bool]] = []
    for (c, now), head in zip(kept, heads, strict=True):
        if head != c.head:
            done.refused.append((c.record.id, "the archived copy's head differs"))
        else:
            evicting.append((c, now))
    removed = evictor.evict(
        [Evicting(c.record.id, c.entry.game, len(c.entry.token_hashes), c.head[0])
         for c, _ in evicting]
    )  # fmt: skip
    for (c, now), ok in zip(evicting, removed, strict=True):
        if not ok:
            done.refused.append((c.record.id, "it moved on while being archived"))
        elif now:
            done.moved += 1
        else:
            done.finished_before += 1


def is_archived(app: App, game_id: str) -> bool:
    """Whether the game has left Redis for the archive."""
    archive = app.ports.archive
    if archive is None:
        return False
    store, _ = redis_parts(app)
    return store.head(game_id)[0] == 0 and archive.has_game(game_id)
