"""Moving finished games from Redis to the archive (issue 36).

A game moves once it is over and scored: a live game once its result is written, a
tournament's game once its standings and ratings have counted it (``counted``), and at least
``after_s`` after it finished (sooner while Redis's memory is short). Each move:

1. reads the game's log, entry and result from Redis;
2. checks the log: its chain (every hash, salted from the seed the game revealed) and its head
   equal Redis's head;
3. archives it (``Archive.put_games``: idempotent, a batch in one transaction), then checks the
   archived row's head against Redis's;
4. removes the game from Redis (``Evictor.evict``): its keys in one transaction that fails if
   the game moved on in between, then its place in the indexes.

At-least-once and idempotent: a kill at any step leaves the game readable from Redis (before
step 4's transaction) or from the archive (after it), and the next sweep finishes the move: a
put of the same log again is a no-op, an index entry left behind is dropped. Reads fall back
to the archive (``shared.adapters.archived``), so a moved game reads the same.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from shared.adapters.archived import entry_doc
from shared.app.context import App
from shared.app.ports import GameDirectory, GameEntry, TournamentEntry
from shared.archive.port import Archive, ArchiveConflict, FinishedGame
from shared.events import Envelope, verify_chain
from shared.match.record import GameRecord, fold
from shared.store.port import EventStore

log = logging.getLogger(__name__)

SWEEP_LIMIT = 500  # games looked at per sweep
PUT_BATCH = 100  # games archived per transaction


class Evictor(Protocol):
    """What the mover needs of Redis beyond the store and the directory."""

    def finished_before(self, epoch: float, *, after: float, limit: int) -> list[tuple[str, float]]:
        """(game id, finishing epoch) of games listed finished at or before ``epoch`` and
        after ``after``, oldest first."""
        ...

    def evict(self, game_id: str, *, game: str, seats: int, version: int) -> bool:
        """Remove the game's keys and index entries; False (nothing removed) when its head
        is no longer at ``version``."""
        ...

    def forget(self, game_id: str, *, game: str | None) -> None:
        """Remove a game that has no keys left from the indexes (a move cut short)."""
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
    result: Mapping[str, Any]


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
    store, directory = redis_parts(app)
    done = Sweep()
    listed = evictor.finished_before(before_epoch, after=after_epoch, limit=limit)
    done.looked = len(listed)
    if not listed:
        return done
    done.last_epoch = listed[-1][1]
    ids = [gid for gid, _ in listed]
    results = directory.results(ids)
    tournaments: dict[str, TournamentEntry | None] = {}
    ready: list[_Candidate] = []
    for gid, result in zip(ids, results, strict=True):
        entry = directory.get(gid)
        if entry is None:
            # No entry: a move cut short after its keys went (the archive has it), or a game
            # whose keys someone removed (nothing left to move): either way, off the lists.
            if archive.has_game(gid):
                done.finished_before += 1
            else:
                log.warning("archive: game %s is listed finished but has no entry; unlisted", gid)
            evictor.forget(gid, game=None)
            continue
        envelopes = store.read(gid)
        if not envelopes:
            done.refused.append((gid, "no log"))
            continue
        record = fold(gid, envelopes)
        why = _not_ready(app, entry, record, result, tournaments)
        if why is not None:
            done.waiting += 1
            continue
        assert result is not None
        ready.append(_Candidate(entry, envelopes, record, result))
    for start in range(0, len(ready), PUT_BATCH):
        _move(store, archive, evictor, ready[start : start + PUT_BATCH], done)
    return done


def _not_ready(
    app: App,
    entry: GameEntry,
    record: GameRecord,
    result: Mapping[str, Any] | None,
    tournaments: dict[str, TournamentEntry | None],
) -> str | None:
    """Why the game may not move yet, or None."""
    if record.outcome is None or record.seed is None:
        return "not over"
    if result is None:
        return "not scored"
    tag = record.match.tournament
    if tag is None:
        return None
    tid, index = str(tag["id"]), int(tag["index"])
    if tid not in tournaments:
        tournaments[tid] = app.ports.tournaments.get(tid)
    found = tournaments[tid]
    if found is None:
        return None  # a tournament no longer kept: nothing will count the game
    return None if counted(app, found, index) else "not counted"


def counted(app: App, tournament: TournamentEntry, index: int) -> bool:
    """Whether the tournament is done with game ``index``: its standings and ratings count it
    (they read its result as they reach it in game order, ``tournaments._finisher``), or it is
    folded in a cancelled (or decided) tournament, whose standings take no more."""
    tally = tournament.tally
    if tournament.plan.get("format") == "sprt":
        if index < int(tally.get("done", 0)):
            return True
    elif index < int(tally.get("rated", 0)):
        return True
    if tournament.cancelled:
        return app.ports.tournaments.folded(tournament.tournament_id, [index])[0]
    return False


def _move(
    store: EventStore,
    archive: Archive,
    evictor: Evictor,
    batch: Sequence[_Candidate],
    done: Sweep,
) -> None:
    """Check, archive and evict one batch of ready games."""
    checked: list[_Candidate] = []
    for c in batch:
        gid = c.record.id
        try:
            version = verify_chain(c.envelopes, str(c.record.seed))
        except ValueError as broken:
            done.refused.append((gid, f"its chain is broken: {broken}"))
            continue
        if store.head(gid) != (version, c.envelopes[-1].hash):
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
            access={"entry": entry_doc(c.entry), "result": dict(c.result)},
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
    for c, now in kept:
        gid = c.record.id
        row = archive.game(gid)
        last = c.envelopes[-1]
        if row is None or (row.version, row.head_hash) != (last.version, last.hash):
            done.refused.append((gid, "the archived copy's head differs"))
            continue
        if evictor.evict(gid, game=c.entry.game, seats=len(c.entry.token_hashes),
                         version=last.version):  # fmt: skip
            if now:
                done.moved += 1
            else:
                done.finished_before += 1
        else:
            done.refused.append((gid, "it moved on while being archived"))


def is_archived(app: App, game_id: str) -> bool:
    """Whether the game has left Redis for the archive."""
    archive = app.ports.archive
    if archive is None:
        return False
    store, _ = redis_parts(app)
    return store.head(game_id)[0] == 0 and archive.has_game(game_id)
