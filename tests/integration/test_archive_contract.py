"""The archive's contract (issue 36): one suite, run on SQLite and on a real PostgreSQL.

PostgreSQL is ``TABLETOP_TEST_POSTGRES_URL`` when set, else a server these tests start
(``postgres_server.PostgresServer``: Debian's binaries, which ``make test`` installs). A test
that cannot reach one fails, never skips: an archive adapter untested is an archive lost.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
import zstandard

from shared.app import playout, queries, tournament_views, tournaments
from shared.app.context import App
from shared.archive import archive_location, open_archive
from shared.archive.packing import LINKED, PLAIN, pack
from shared.archive.port import (
    LOG_FORMAT,
    Archive,
    ArchiveConflict,
    ArchiveFormatError,
    FinishedGame,
    GameRow,
    envelopes_of,
    export_bytes,
)
from shared.archive.postgres import PostgresArchive
from shared.archive.rows import game_row
from shared.archive.sqlite import SqliteArchive
from shared.events import Envelope
from shared.match.record import fold
from shared.tournaments.plan import game_id
from tests.integration.postgres_server import PostgresServer
from tests.unit.test_registered_bots import app_with, first_legal, play_fox, register
from tests.unit.test_tournament_handlers import FOX, memory_app

ROOT = Path(__file__).resolve().parents[2]
Log = list[Envelope]


# ---- the servers and archives ------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL for the session: ``TABLETOP_TEST_POSTGRES_URL``, else one we start (an
    error, not a skip, when none can be started)."""
    given = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    server = PostgresServer()
    try:
        yield server.url
    finally:
        server.stop()


def _in_schema(url: str, schema: str) -> str:
    """``url`` whose connections work in ``schema`` (its own tables: one test's archive)."""
    option = quote(f"-csearch_path={schema}", safe="")
    return f"{url}{'&' if '?' in url else '?'}options={option}"


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where an empty archive is: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield str(tmp_path / "archive.sqlite3")
        return
    url: str = request.getfixturevalue("postgres_url")
    schema = "archive_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield _in_schema(url, schema)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def archive(location: str) -> Iterator[Archive]:
    opened = open_archive(location)
    try:
        yield opened
    finally:
        opened.close()


def _count(location: str, sql: str) -> int:
    """One number from the archive's tables, read beside the adapter."""
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as conn:
            found = conn.execute(sql).fetchone()
    else:
        with sqlite3.connect(location) as conn:
            found = conn.execute(sql).fetchone()
    assert found is not None
    return int(found[0])


# ---- games to archive ----------------------------------------------------------------------------


def _tournament_game(i: int, tournament: str = "tA") -> tuple[str, Log]:
    played = playout.play("fox", [{"bot": "random"}, {"bot": "random"}], {"target": 1},
                          f"seed-{tournament}-{i}", encoded=True,
                          clock=lambda: f"2026-12-03T10:00:{i % 60:02d}.000Z",
                          tournament={"id": tournament, "index": i})  # fmt: skip
    assert played.log is not None
    return game_id(tournament, i), played.log.envelopes()


@dataclass(frozen=True)
class Logs:
    """Play-outs: a tournament's one-hand Fox games, and one game of each type played whole."""

    tournament: list[tuple[str, Log]]
    whole: list[tuple[str, Log]]


@pytest.fixture(scope="module")
def logs() -> Logs:
    whole = []
    for game, seats, options in (
        ("fox", [{"bot": "heuristic"}, {"bot": "random"}], {}),
        ("skull", [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "random"}], {}),
        ("skye", [{"bot": "random"}, {"bot": "random"}], {}),
    ):
        played = playout.play(game, seats, options, f"seed-{game}")
        whole.append((f"{game}-game", played.envelopes))
    return Logs(tournament=[_tournament_game(i) for i in range(30)], whole=whole)


@dataclass(frozen=True)
class Registered:
    """Fox games seating registered bots, played on the in-memory service: their ids, logs,
    and the service's export of each."""

    app: App
    bots: tuple[str, str]
    games: list[tuple[str, Log]]


@pytest.fixture(scope="module")
def registered() -> Registered:
    app, _hooks = app_with(first_legal)
    a = register(app)["id"]
    b = register(app, name="otherbot")["id"]
    ids = [play_fox(app, a) for _ in range(3)]
    ids += [play_fox(app, b) for _ in range(2)]
    ids.append(play_fox(app, a, {"bot_id": b}))
    return Registered(app, (a, b), [(gid, app.ports.store.read(gid)) for gid in ids])


def _service_export(app: App, gid: str) -> bytes:
    """The export ``GET /v1/games/{id}/export`` answers for a finished game."""
    lines = queries.export_lines(app, gid, queries.Caller(queries.SPECTATOR))
    return b"".join(line + b"\n" for line in lines)


# ---- the contract ------------------------------------------------------------------------------


def test_an_export_reads_back_byte_for_byte(archive: Archive, logs: Logs) -> None:
    for gid, log in [*logs.tournament[:3], *logs.whole]:
        assert not archive.has_game(gid)
        assert archive.put_game(gid, log) is True
        assert archive.has_game(gid)
        assert archive.export(gid) == export_bytes(log)
        assert [e.to_dict() for e in archive.read(gid)] == [e.to_dict() for e in log]
        assert [e.version for e in archive.read(gid, after=10, limit=5)] == [11, 12, 13, 14, 15]
        assert archive.read(gid, after=len(log) - 1) == [log[-1]]
        assert archive.read(gid, after=len(log)) == []
        assert archive.read(gid, limit=0) == []
    assert archive.export("nope") is None
    assert archive.game("nope") is None
    assert archive.read("nope") == []
    assert not archive.has_game("nope")


def test_an_export_is_the_services_export(archive: Archive, registered: Registered) -> None:
    """What the gateway exports of a finished game, the archive gives back, and its events
    read as the store's do, page by page."""
    store = registered.app.ports.store
    for gid, log in registered.games:
        archive.put_game(gid, log)
        assert archive.export(gid) == _service_export(registered.app, gid)
        for after, limit in ((0, None), (0, 7), (12, 5), (len(log) - 2, 50)):
            assert archive.read(gid, after, limit) == store.read(gid, after, limit)


def test_putting_a_game_again_is_a_no_op(
    archive: Archive, location: str, registered: Registered
) -> None:
    gid, log = registered.games[-1]  # two registered bots: two entries in the per-bot index
    assert archive.put_game(gid, log) is True
    assert archive.put_game(gid, log) is False
    assert archive.put_games([FinishedGame(gid, log), FinishedGame(gid, log)]) == [False, False]
    assert archive.put_game(gid, log, fold(gid, log)) is False
    assert [r.game_id for r in archive.list_games().items] == [gid]
    assert _count(location, "SELECT count(*) FROM logs") == 1
    assert _count(location, "SELECT count(*) FROM bot_games") == 2
    assert archive.export(gid) == export_bytes(log)


def test_another_log_under_an_archived_id_is_refused(archive: Archive, logs: Logs) -> None:
    (gid, log), (other_id, other) = logs.tournament[:2]
    archive.put_game(gid, log)
    with pytest.raises(ArchiveConflict):
        archive.put_game(gid, other)
    # A batch with a conflict stores none of its games.
    new_id, new = logs.tournament[2]
    with pytest.raises(ArchiveConflict):
        archive.put_games([FinishedGame(new_id, new), FinishedGame(gid, other)])
    assert not archive.has_game(new_id)
    assert archive.export(gid) == export_bytes(log)
    assert archive.game(gid) == game_row(gid, log)
    assert other_id != gid


def test_a_broken_log_is_refused(archive: Archive, logs: Logs) -> None:
    gid, log = logs.tournament[0]
    for broken in ([], log[:10] + log[11:], log[1:]):
        with pytest.raises(ValueError):
            archive.put_game(gid, broken)
    record = fold(gid, log[:-1])
    with pytest.raises(ValueError):  # a record that is not the log's last
        archive.put_game(gid, log, record)
    assert not archive.has_game(gid)


def test_a_log_that_does_not_pack_is_kept_as_it_is(archive: Archive, logs: Logs) -> None:
    """A line whose data holds a ``hash`` key before the envelope's own is kept whole (the
    packing checks every log) and still reads back byte for byte."""
    gid, log = logs.tournament[0]
    odd = list(log)
    odd[0] = replace(odd[0], data={"x": 1, "hash": "0" * 64, **odd[0].data})
    assert pack(odd, export_bytes(odd))[0] == PLAIN
    assert pack(log, export_bytes(log))[0] == LINKED
    archive.put_game(gid, odd)
    assert archive.export(gid) == export_bytes(odd)
    assert archive.read(gid, 0, 2) == odd[:2]


def test_lists_page_by_cursor_newest_first(archive: Archive, logs: Logs) -> None:
    tournament_games = logs.tournament[:20]
    for gid, log in tournament_games:
        archive.put_game(gid, log)
    first = archive.list_games(limit=7)
    lobby_id, lobby_log = logs.whole[0]
    archive.put_game(lobby_id, lobby_log)  # archived after the first page: not on later ones
    seen = [r.game_id for r in first.items]
    cursor = first.next_cursor
    while cursor is not None:
        page = archive.list_games(limit=7, cursor=cursor)
        assert len(page.items) <= 7
        seen += [r.game_id for r in page.items]
        cursor = page.next_cursor
    assert seen == [gid for gid, _ in reversed(tournament_games)]
    everything = archive.list_games(limit=100)
    assert everything.next_cursor is None
    assert [r.game_id for r in everything.items][0] == lobby_id
    oldest = archive.list_games(newest=False, limit=5)
    assert [r.game_id for r in oldest.items] == [gid for gid, _ in tournament_games[:5]]
    after = archive.list_games(newest=False, limit=100, cursor=oldest.next_cursor)
    assert [r.game_id for r in after.items][-1] == lobby_id
    with pytest.raises(ValueError):
        archive.list_games(cursor="not-a-cursor")


def test_lists_filter_by_type_lobby_and_finished(archive: Archive, logs: Logs) -> None:
    for gid, log in [*logs.tournament[:3], *logs.whole]:
        archive.put_game(gid, log)
    running_id, running = "running", logs.whole[0][1][:30]  # a game not over yet
    archive.put_game(running_id, running)
    assert archive.game(running_id).finished is False  # type: ignore[union-attr]
    assert [r.game_id for r in archive.list_games(game="skull").items] == ["skull-game"]
    assert [r.game_id for r in archive.list_games(lobby=True).items] == [
        "running", "skye-game", "skull-game", "fox-game"
    ]  # fmt: skip
    assert [r.game_id for r in archive.list_games(lobby=True, finished=True, game="fox").items] == [
        "fox-game"
    ]
    assert len(archive.list_games(finished=True).items) == 6
    assert archive.list_games(game="kuhn").items == []


def test_a_tournaments_games_list_in_index_order(archive: Archive, logs: Logs) -> None:
    games = list(logs.tournament)
    random.Random(3).shuffle(games)
    archive.put_games([FinishedGame(gid, log) for gid, log in games[:12]])
    for gid, log in games[12:]:
        archive.put_game(gid, log)
    other_id, other = _tournament_game(0, "tB")
    archive.put_game(other_id, other)
    indexes: list[int] = []
    cursor = None
    while True:
        page = archive.list_games(tournament="tA", limit=4, cursor=cursor)
        assert all(r.tournament_id == "tA" for r in page.items)
        indexes += [r.tournament_index for r in page.items]  # type: ignore[misc]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert indexes == list(range(30))
    assert [r.game_id for r in archive.list_games(tournament="tB").items] == [other_id]
    assert archive.list_games(tournament="tC").items == []


def test_a_bots_games_list_from_the_per_bot_index(archive: Archive, registered: Registered) -> None:
    for gid, log in registered.games:
        archive.put_game(gid, log)
    a, b = registered.bots
    ids = [gid for gid, _ in registered.games]
    first = archive.list_games(bot_id=a, limit=3)
    rest = archive.list_games(bot_id=a, limit=3, cursor=first.next_cursor)
    assert rest.next_cursor is None
    assert [r.game_id for r in first.items + rest.items] == [ids[5], ids[2], ids[1], ids[0]]
    assert [r.game_id for r in archive.list_games(bot_id=b).items] == [ids[5], ids[4], ids[3]]
    assert [r.game_id for r in archive.list_games(bot_id=b, newest=False).items] == [
        ids[3], ids[4], ids[5]
    ]  # fmt: skip
    assert archive.list_games(bot_id="nobody").items == []
    assert all(a in r.bot_ids for r in first.items + rest.items)


def test_two_threads_putting_one_game_store_it_once(
    location: str, archive: Archive, registered: Registered
) -> None:
    """Four writers, each with its own archive (as processes would have), put the same games
    at the same moment: each game is stored by one of them, once."""
    writers = [open_archive(location) for _ in range(4)]
    stored: list[list[bool]] = [[] for _ in writers]
    games = registered.games
    barrier = threading.Barrier(len(writers))

    def write(i: int) -> None:
        for gid, log in games:
            barrier.wait()
            stored[i].append(writers[i].put_game(gid, log))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(writers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for w in writers:
        w.close()
    assert all(len(s) == len(games) for s in stored)
    assert [sum(s[g] for s in stored) for g in range(len(games))] == [1] * len(games)
    assert len(archive.list_games().items) == len(games)
    assert _count(location, "SELECT count(*) FROM logs") == len(games)
    assert _count(location, "SELECT count(*) FROM bot_games") == 7  # one game seats both bots
    for gid, log in games:
        assert archive.export(gid) == export_bytes(log)


@pytest.mark.timeout(120)
def test_a_forked_child_opens_connections_of_its_own(archive: Archive, logs: Logs) -> None:
    """A worker forked after the archive was used (Celery's prefork) writes and reads on its
    own connections, and the parent's go on working."""
    (g1, l1), (g2, l2), (g3, l3) = logs.tournament[:3]
    archive.put_game(g1, l1)
    pid = os.fork()
    if pid == 0:  # the child: no pytest past this point, only an exit code
        code = 3
        try:
            stored = archive.put_game(g2, l2)
            code = 0 if stored and archive.export(g1) == export_bytes(l1) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert archive.put_game(g3, l3) is True
    assert archive.export(g2) == export_bytes(l2)
    assert [r.game_id for r in archive.list_games().items] == [g3, g2, g1]


# A process putting exported games (files given as arguments), one put each, printing a line
# after each put returns: "<game id> <True|False>".
PUTTER = """
import sys
from pathlib import Path
from shared.archive import open_archive
from shared.archive.port import envelopes_of
archive = open_archive(sys.argv[1])
for path in sys.argv[2:]:
    stored = archive.put_game(Path(path).stem, envelopes_of(Path(path).read_bytes()))
    print(Path(path).stem, stored, flush=True)
archive.close()
"""


def _exports(folder: Path, games: list[tuple[str, Log]]) -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for gid, log in games:
        path = folder / f"{gid}.jsonl"
        path.write_bytes(export_bytes(log))
        paths.append(str(path))
    return paths


def _putter(location: str, paths: list[str], script: str = PUTTER) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", script, location, *paths], env=env,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip


@pytest.mark.timeout(180)
def test_two_processes_putting_the_same_games_store_each_once(
    location: str, archive: Archive, logs: Logs, tmp_path: Path
) -> None:
    games = logs.tournament[:20]
    paths = _exports(tmp_path / "exports", games)
    procs = [_putter(location, paths), _putter(location, list(reversed(paths)))]
    outs = [p.communicate(timeout=150)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    answers = [line.split() for out in outs for line in out.splitlines()]
    assert len(answers) == 40
    assert sorted(gid for gid, stored in answers if stored == "True") == sorted(g for g, _ in games)
    assert len(archive.list_games(limit=100).items) == 20
    for gid, log in games:
        assert archive.export(gid) == export_bytes(log)


# A putter stopped inside its transaction: every row of the game written, none committed.
STOPPED_INSIDE = """
import sys, time
from pathlib import Path
from shared.archive import open_archive
from shared.archive.port import envelopes_of
from shared.archive.sql import SqlArchive
inserted = SqlArchive._insert
def insert_then_wait(self, tx, prepared):
    done = inserted(self, tx, prepared)
    print("inside", flush=True)
    time.sleep(120)
    return done
SqlArchive._insert = insert_then_wait
archive = open_archive(sys.argv[1])
path = Path(sys.argv[2])
archive.put_game(path.stem, envelopes_of(path.read_bytes()))
"""


def _whole_or_nothing(location: str, archive: Archive, games: list[tuple[str, Log]]) -> int:
    """Every game archived whole (row, export byte for byte, per-bot entries) or not at all;
    how many are."""
    whole = 0
    for gid, log in games:
        if archive.has_game(gid):
            assert archive.export(gid) == export_bytes(log)
            assert archive.game(gid) == game_row(gid, log)
            whole += 1
    assert _count(location, "SELECT count(*) FROM games") == whole
    assert _count(location, "SELECT count(*) FROM logs") == whole
    assert _count(location, "SELECT count(*) FROM logs l JOIN games g ON g.seq = l.seq") == whole
    assert _count(location, "SELECT count(*) FROM bot_games k LEFT JOIN games g ON g.seq = k.seq "
                            "WHERE g.seq IS NULL") == 0  # fmt: skip
    bots = sum(len(game_row(gid, log).bot_ids) for gid, log in games if archive.has_game(gid))
    assert _count(location, "SELECT count(*) FROM bot_games") == bots
    return whole


@pytest.mark.timeout(180)
def test_a_kill_inside_a_put_leaves_nothing_of_the_game(
    tmp_path: Path, registered: Registered
) -> None:
    location = str(tmp_path / "archive.sqlite3")
    open_archive(location).close()
    gid, log = registered.games[-1]
    [path] = _exports(tmp_path / "exports", [(gid, log)])
    proc = _putter(location, [path], STOPPED_INSIDE)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "inside"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    archive = open_archive(location)
    try:
        assert not archive.has_game(gid)
        assert _whole_or_nothing(location, archive, [(gid, log)]) == 0
        assert archive.put_game(gid, log) is True  # the archive goes on
        assert _whole_or_nothing(location, archive, [(gid, log)]) == 1
    finally:
        archive.close()


@pytest.mark.timeout(300)
def test_a_kill_at_any_moment_of_puts_leaves_each_game_whole_or_absent(
    tmp_path: Path, logs: Logs, registered: Registered
) -> None:
    """kill -9 of a process putting games one after the other, at random moments: each game
    is archived whole or not at all, and every put that returned is there."""
    games = [*registered.games, *logs.tournament]
    random.Random(36).shuffle(games)
    paths = _exports(tmp_path / "exports", games)
    rng = random.Random(7)
    location = str(tmp_path / "archive.sqlite3")
    open_archive(location).close()
    for _attempt in range(4):
        proc = _putter(location, paths)
        assert proc.stdout is not None
        returned = []
        for _ in range(rng.randint(1, 8)):
            line = proc.stdout.readline().split()
            if line:
                returned.append(line[0])
        time.sleep(rng.random() * 0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        archive = open_archive(location)
        try:
            assert all(archive.has_game(gid) for gid in returned)
            _whole_or_nothing(location, archive, games)
        finally:
            archive.close()


def test_the_row_of_a_game_seating_a_registered_bot(
    archive: Archive, registered: Registered
) -> None:
    gid, log = registered.games[0]
    a, _b = registered.bots
    archive.put_game(gid, log)
    row = archive.game(gid)
    assert row is not None
    record = fold(gid, log)
    bot = registered.app.ports.bots.get(a)
    assert bot is not None
    result = registered.app.ports.directory.result(gid)
    assert result is not None
    created = log[0].data
    assert row == GameRow(
        game_id=gid,
        game="fox",
        options=created["options"],
        seats=(
            {"name": bot.name, "bot": "registered", "bot_spec": created["seats"][0]["bot_spec"],
             "bot_id": a, "resigned": False, "taken_over": None},
            {"name": "random bot 1", "bot": "random", "bot_spec": None, "bot_id": None,
             "resigned": False, "taken_over": None},
        ),
        bot_ids=(a,),
        tournament_id=None,
        tournament_index=None,
        listed=True,
        created_at=log[0].at,
        finished_at=log[-1].at,
        outcome=result["outcome"],
        version=len(log),
        head_hash=registered.app.ports.store.head(gid)[1],
        store_format=LOG_FORMAT,
        rules_version=None,
        bot_policies=created.get("bot_policies", {}),
    )  # fmt: skip
    assert created["seats"][0]["bot_spec"]["bot_id"] == a
    assert row.outcome == record.outcome and row.finished
    assert row == game_row(gid, log, record)
    assert GameRow.from_doc(row.to_doc()) == row == GameRow.from_doc(row.stored_doc())


def test_the_row_and_document_of_a_tournament_game(archive: Archive) -> None:
    app = memory_app(inline=True)
    tid, plan = tournaments.create_tournament(app, {**FOX, "games": 4}, max_games=100)
    gid = game_id(tid, 2)
    log = app.ports.store.read(gid)
    archive.put_game(gid, log)
    row = archive.game(gid)
    assert row is not None
    result = app.ports.directory.result(gid)
    assert result is not None
    assert (row.tournament_id, row.tournament_index, row.game) == (tid, 2, "fox")
    assert [s["name"] for s in row.seats] == [plan.entrants[e].name for e in plan.seating(2)]
    assert sorted(str(s["bot"]) for s in row.seats) == ["heuristic", "random"]
    assert row.bot_ids == () and row.listed is True
    assert row.outcome == result["outcome"] and row.version == result["version"]
    assert row.options == log[0].data["options"] and row.options["target"] == 1
    assert (row.created_at, row.finished_at) == (log[0].at, log[-1].at)
    assert archive.list_games(lobby=True).items == []  # a tournament's game is not the lobby's
    doc = tournament_views.tournament_doc(app, tid)
    archive.put_tournament(tid, doc)
    assert archive.tournament(tid) == doc


def test_tournament_and_bot_stats_documents(archive: Archive) -> None:
    assert archive.tournament("t1") is None and archive.bot_stats("b1") is None
    for i in range(5):
        archive.put_tournament(f"t{i}", {"plan": {"games": i}, "standings": [], "sprt": None})
    archive.put_tournament("t1", {"plan": {"games": 10}, "standings": [{"name": "x"}]})
    assert archive.tournament("t1") == {"plan": {"games": 10}, "standings": [{"name": "x"}]}
    first = archive.list_tournaments(limit=2)
    second = archive.list_tournaments(limit=2, cursor=first.next_cursor)
    third = archive.list_tournaments(limit=2, cursor=second.next_cursor)
    assert first.items + second.items + third.items == ["t0", "t1", "t2", "t3", "t4"]
    assert third.next_cursor is None
    stats = {"decisions": 3, "latency_ms": {"p50": 7, "p95": 7, "max": 9}, "timeouts": 0}
    archive.put_bot_stats("b1", stats)
    assert archive.bot_stats("b1") == stats
    archive.put_bot_stats("b1", {**stats, "decisions": 4})
    assert archive.bot_stats("b1") == {**stats, "decisions": 4}


def _dictionary(samples: list[bytes], did: int) -> bytes:
    return zstandard.train_dictionary(4096, samples, dict_id=did).as_bytes()


def test_old_logs_stay_readable_when_the_dictionaries_change(location: str, logs: Logs) -> None:
    exports = [export_bytes(log) for _gid, log in logs.tournament]
    first = _dictionary(exports[:15], 40_001)
    second = _dictionary(exports[15:], 40_002)
    games = logs.tournament[:3]
    for i, dictionaries in enumerate(({"fox": first}, {"fox": second}, {})):
        archive = open_archive(location, dictionaries=dictionaries)
        try:
            archive.put_game(*games[i])
            for gid, log in games[: i + 1]:
                assert archive.export(gid) == export_bytes(log)
        finally:
            archive.close()
    assert _count(location, "SELECT count(*) FROM dictionaries WHERE dict_id > 40000") == 2
    assert _count(location, "SELECT count(DISTINCT dict_id) FROM logs") == 3
    # Another dictionary under an id the archive holds: its logs could not be read back.
    clash = _dictionary(exports[15:], 40_001)
    with pytest.raises(ArchiveFormatError, match="40001"):
        open_archive(location, dictionaries={"fox": clash})


def test_an_archive_of_a_newer_schema_is_refused(location: str) -> None:
    archive = open_archive(location)
    assert isinstance(archive, SqliteArchive | PostgresArchive)
    with archive.database.write() as tx:
        tx.run("UPDATE archive_meta SET value = '99' WHERE key = 'schema'")
    archive.close()
    with pytest.raises(ArchiveFormatError, match="newer"):
        open_archive(location)


def test_an_archive_of_schema_1_gains_the_access_table_and_keeps_its_games(
    location: str, logs: Logs
) -> None:
    gid, log = logs.tournament[0]
    archive = open_archive(location)
    assert isinstance(archive, SqliteArchive | PostgresArchive)
    archive.put_game(gid, log)
    export = archive.export(gid)
    with archive.database.write() as tx:  # as the build before schema 2 left it
        tx.run("DROP TABLE game_access")
        tx.run("UPDATE archive_meta SET value = '1' WHERE key = 'schema'")
    archive.close()
    upgraded = open_archive(location)
    try:
        assert _count(location, "SELECT value FROM archive_meta WHERE key = 'schema'") == 2
        assert upgraded.export(gid) == export and upgraded.access(gid) is None
        other, other_log = logs.tournament[1]
        upgraded.put_games([FinishedGame(other, other_log, access={"entry": {"game": "fox"}})])
        assert upgraded.accesses([gid, other, "nope"]) == [None, {"entry": {"game": "fox"}}, None]
    finally:
        upgraded.close()


def test_open_archive_chooses_by_location(tmp_path: Path, postgres_url: str) -> None:
    plain = open_archive(str(tmp_path / "a" / "one.sqlite3"))
    url = open_archive(f"sqlite://{tmp_path}/two.sqlite3")
    pg = open_archive(postgres_url)
    try:
        assert isinstance(plain, SqliteArchive) and plain.path == str(tmp_path / "a/one.sqlite3")
        assert isinstance(url, SqliteArchive) and url.path == f"{tmp_path}/two.sqlite3"
        assert isinstance(pg, PostgresArchive)
    finally:
        for opened in (plain, url, pg):
            opened.close()
    assert archive_location({"TABLETOP_ARCHIVE_URL": "postgresql://h/db"}) == "postgresql://h/db"
    assert archive_location({"TABLETOP_DATA_DIR": str(tmp_path)}) == str(
        tmp_path / "archive.sqlite3"
    )


def test_the_export_file_reads_back_as_envelopes(logs: Logs) -> None:
    """``envelopes_of`` (what a read parses) is the inverse of ``export_bytes``."""
    _gid, log = logs.whole[1]
    raw = export_bytes(log)
    assert envelopes_of(raw) == log
    assert envelopes_of(raw, 5, 3) == log[5:8]


def test_the_lobby_lists_a_registered_bots_archived_games(
    archive: Archive, registered: Registered
) -> None:
    from shared.bootstrap import bootstrap
    from shared.config import Settings

    archive.put_games([FinishedGame(gid, log) for gid, log in registered.games])
    app = bootstrap(Settings(bot_dispatch="none"), backend="memory")
    app.ports.archive = archive  # a service whose Redis holds none of them any more
    a, b = registered.bots
    ids = [gid for gid, _ in registered.games]
    mine = queries.list_lobby(app, bot=a, limit=2)
    pages = [g["id"] for g in mine["games"]]
    while mine["next_cursor"] is not None:
        mine = queries.list_lobby(app, bot=a, limit=2, cursor=mine["next_cursor"])
        pages += [g["id"] for g in mine["games"]]
    assert pages == [ids[5], ids[2], ids[1], ids[0]]  # newest first, the mixed game too
    theirs = queries.list_lobby(app, bot=b, limit=10)["games"]
    assert [g["id"] for g in theirs] == [ids[5], ids[4], ids[3]]
    assert all(any(s.get("bot_id") == b for s in g["seats"]) for g in theirs)
