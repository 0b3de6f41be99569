"""Finished games move from Redis to the archive, and every read works the same after the move
(issue 36): on a real Redis and a SQLite archive, through the application's queries."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from services.worker.archiver import sweep_all
from shared import keys
from shared.adapters.redis_eviction import RedisEvictor
from shared.app import archiving, commands, creation, finalize, queries, tournaments
from shared.app.bots import random_bot
from shared.app.context import App
from shared.app.errors import AppError
from shared.app.messages import CommandMessage
from shared.app.tournament_views import tournament_doc
from shared.bootstrap import bootstrap
from shared.config import Settings

SEATS = {"fox": 2, "skull": 3, "skye": 2}
KEYS = queries.Keys(organizers=frozenset(), auditors=frozenset({"aud"}))


def _app(client: redis.Redis, archive: Path) -> App:
    return bootstrap(Settings(bot_dispatch="none", archive_url=str(archive)), client=client)


@pytest.fixture
def app(redis_client: redis.Redis, tmp_path: Path) -> Iterator[App]:
    built = _app(redis_client, tmp_path / "archive.sqlite3")
    yield built
    assert built.ports.archive is not None
    built.ports.archive.close()


def _play(app: App, game: str, seed: int = 3) -> tuple[str, list[str]]:
    """A finished, scored live game; its id and seat tokens."""
    created = creation.create_game(app, game, [{"name": f"p{i}"} for i in range(SEATS[game])])
    gid = created.game_id
    rng = random.Random(seed)
    for n in range(2000):
        public = json.loads(queries.view_json(app, gid, None))
        if public["outcome"] is not None:
            break
        seat = public["to_act"][0]
        command = random_bot(json.loads(queries.view_json(app, gid, seat)), rng)
        assert command is not None
        outcome = commands.decide_command(
            app, CommandMessage(command_id=f"c{n}", game_id=gid, seat=seat, body=command)
        )
        assert outcome["status"] == "accepted", outcome
    assert finalize.finalize_game(app, gid) is finalize.Finalized.DONE
    return gid, list(created.tokens)


def _reads(app: App, gid: str, tokens: list[str]) -> dict[str, Any]:
    """Everything a client, an auditor or a page reads of a finished game."""
    spectator = queries.caller(app, gid, None, KEYS)
    auditor = queries.caller(app, gid, "aud", KEYS)
    seats = [queries.caller(app, gid, t, KEYS) for t in tokens]
    return {
        "public": queries.view_json(app, gid, None),
        "seat_views": [queries.view_json(app, gid, s.seat) for s in seats],
        "roles": [(s.role, s.seat) for s in seats],
        "events": [queries.events(app, gid, c) for c in (spectator, auditor, *seats)],
        "page": queries.events(app, gid, auditor, after=3, limit=4),
        "export": queries.export_lines(app, gid, spectator),
        "audit": queries.audit_report(app, gid, spectator),
        "result": app.ports.directory.result(gid),
        "lobby": [g for g in queries.list_lobby(app, limit=100)["games"] if g["id"] == gid],
    }


def _redis_keys_of(client: redis.Redis, gid: str) -> list[bytes]:
    return list(client.scan_iter(match=f"game:{{{gid}}}:*"))


@pytest.mark.parametrize("game", sorted(SEATS))
def test_a_finished_game_moves_and_reads_the_same(
    app: App, redis_client: redis.Redis, tmp_path: Path, game: str
) -> None:
    gid, tokens = _play(app, game)
    before = _reads(app, gid, tokens)
    assert before["lobby"] and before["result"] is not None

    assert sweep_all(app, app.ports.archive) == 1
    assert archiving.is_archived(app, gid)
    # Nothing of the game is left in Redis but its commands' outcomes and replies, which
    # expire.
    left = _redis_keys_of(redis_client, gid)
    assert [k for k in left if redis_client.ttl(k) <= 0] == []
    for index in (keys.GAMES, keys.GAMES_LOBBY, keys.GAMES_FINISHED):
        assert redis_client.zscore(index, gid) is None
    assert redis_client.hget(keys.RESULTS, gid) is None

    # Read by a process that never saw the game live (nothing cached).
    fresh = _app(redis_client, tmp_path / "archive.sqlite3")
    after = _reads(fresh, gid, tokens)
    assert after == before
    # The export is byte for byte the one from before the move.
    assert b"\n".join(after["export"]) + b"\n" == app.ports.archive.export(gid)
    fresh.ports.archive.close()


def test_an_archived_game_takes_no_command_and_is_not_scored_twice(
    app: App, redis_client: redis.Redis
) -> None:
    gid, _tokens = _play(app, "fox")
    result = app.ports.directory.result(gid)
    sweep_all(app, app.ports.archive)
    outcome = commands.decide_command(
        app,
        CommandMessage(command_id="late", game_id=gid, seat=0, body={"type": "play", "card": 0}),
    )
    assert outcome["status"] == "rejected"
    assert [k for k in _redis_keys_of(redis_client, gid) if redis_client.ttl(k) <= 0] == []
    # The scoring task run again (a redelivery) finds the game archived: nothing is written.
    assert finalize.finalize_game(app, gid) is finalize.Finalized.DONE
    assert redis_client.hget(keys.RESULTS, gid) is None
    assert app.ports.directory.result(gid) == result


def test_a_game_not_over_or_not_scored_stays(app: App, redis_client: redis.Redis) -> None:
    running = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}]).game_id
    gid, _ = _play(app, "fox")
    redis_client.hdel(keys.RESULTS, gid)  # as if its scoring task had not run yet
    done = archiving.sweep(app, app.ports.archive, RedisEvictor(redis_client), before_epoch=1e12)
    assert (done.moved, done.waiting) == (0, 1)
    assert redis_client.exists(keys.log(gid)) and redis_client.exists(keys.log(running))
    assert finalize.finalize_game(app, gid) is finalize.Finalized.DONE
    assert sweep_all(app, app.ports.archive) == 1


class _Killed(Exception):
    pass


def test_a_move_cut_short_at_any_step_is_finished_by_the_next_sweep(
    app: App, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = [_play(app, "fox", seed=s)[0] for s in range(3)]
    evictor = RedisEvictor(redis_client)
    archive = app.ports.archive
    real_evict, real_forget = evictor.evict, evictor.forget

    # 1. Killed after the put, before any key went: the game is in both places, read from
    # Redis; the next sweep's put is a no-op and the keys go.
    monkeypatch.setattr(evictor, "evict", lambda *a, **k: (_ for _ in ()).throw(_Killed()))
    with pytest.raises(_Killed):
        archiving.sweep(app, archive, evictor, before_epoch=1e12)
    assert all(archive.has_game(g) and redis_client.exists(keys.log(g)) for g in games)
    # 2. Killed after the game's keys went, before its index entries did.
    monkeypatch.setattr(evictor, "evict", real_evict)
    monkeypatch.setattr(evictor, "forget", lambda *a, **k: (_ for _ in ()).throw(_Killed()))
    with pytest.raises(_Killed):
        archiving.sweep(app, archive, evictor, before_epoch=1e12)
    assert not redis_client.exists(keys.log(games[0]))
    assert redis_client.zscore(keys.GAMES_FINISHED, games[0]) is not None
    for g in games:  # readable throughout, from one place or the other
        assert len(queries.export_lines(app, g, queries.Caller(queries.SPECTATOR))) > 2
    monkeypatch.setattr(evictor, "forget", real_forget)
    done = archiving.sweep(app, archive, evictor, before_epoch=1e12)
    assert done.moved == 0 and done.finished_before == 3 and not done.refused
    assert redis_client.zcard(keys.GAMES_FINISHED) == 0
    assert all(not redis_client.exists(keys.log(g)) for g in games)


def test_a_game_whose_head_moved_on_is_not_removed(app: App, redis_client: redis.Redis) -> None:
    gid, _ = _play(app, "fox")
    evictor = RedisEvictor(redis_client)
    version = int(redis_client.hget(keys.head(gid), "version"))
    assert evictor.evict([archiving.Evicting(gid, "fox", 2, version - 1)]) == [False]
    assert redis_client.exists(keys.log(gid))
    assert evictor.evict([archiving.Evicting(gid, "fox", 2, version)]) == [True]
    assert not redis_client.exists(keys.log(gid))


def test_a_tournaments_games_move_once_folded_and_its_standings_come_out_the_same(
    app: App, redis_client: redis.Redis
) -> None:
    body = {"game": "fox", "games": 12, "players": 2, "options": {"target": 1},
            "seed": "archived-standings",
            "entrants": [{"bot": "random"}, {"bot": "heuristic"}]}  # fmt: skip
    tid, _plan = tournaments.create_tournament(app, body, max_games=100)
    # The later batch first: its games are folded, not yet rated (the ratings go in game
    # order), and move; the earlier batch's fold then rates them from the archived results.
    tournaments.play_games(app, tid, range(6, 12))
    assert sweep_all(app, app.ports.archive) == 6
    tournaments.play_games(app, tid, range(0, 6))
    listed = queries.list_lobby(app, tournament=tid, limit=100)
    tournament_view = tournament_doc(app, tid)
    assert sweep_all(app, app.ports.archive) == 6
    assert redis_client.zcard(keys.GAMES) == 0
    assert queries.list_lobby(app, tournament=tid, limit=100) == listed
    assert tournament_doc(app, tid) == tournament_view
    entry = app.ports.tournaments.get(tid)
    assert entry is not None and entry.tally["done"] == entry.tally["rated"] == 12
    # The same tournament kept whole in memory, in game order, stands the same.
    kept = bootstrap(Settings(bot_dispatch="none"), backend="memory")
    same, _ = tournaments.create_tournament(kept, body, max_games=100)
    tournaments.play_games(kept, same, range(12))
    whole = kept.ports.tournaments.get(same)
    assert whole is not None
    assert entry.tally["entrants"] == whole.tally["entrants"]
    assert len(queries.list_lobby(app, tournament=tid, limit=100)["games"]) == 12


def test_a_tournaments_results_as_data_read_the_same_before_and_after_the_move(
    app: App,
) -> None:
    import csv

    from shared.app import tournament_data

    body = {"game": "fox", "games": 8, "players": 2, "options": {"target": 1},
            "entrants": [{"name": "h", "bot": "heuristic"}, {"bot": "random"}]}  # fmt: skip
    tid, plan = tournaments.create_tournament(app, body, max_games=100)
    tournaments.play_games(app, tid, range(0, 6))  # two games not played yet: left out
    lines = list(tournament_data.export_lines(app, tid))
    table = "".join(tournament_data.results_csv(app, tid))
    spectator = queries.Caller(queries.SPECTATOR)
    exports = dict(tournament_data.split_exports(iter(lines)))
    assert list(exports) == [json.loads(line)["id"] for line in lines]
    assert [json.loads(line)["tournament"]["index"] for line in lines] == list(range(6))
    for gid, export in exports.items():
        assert export == b"".join(x + b"\n" for x in queries.export_lines(app, gid, spectator))
    rows = list(csv.DictReader(table.splitlines()))
    assert [int(r["index"]) for r in rows] == list(range(6))
    for row in rows:
        outcome = json.loads(queries.view_json(app, row["game_id"], None))["outcome"]
        seating = plan.seating(int(row["index"]))
        for s in range(2):
            assert int(row[f"seat{s}_rank"]) == outcome["ranks"][s]
            assert int(row[f"seat{s}_score"]) == outcome["scores"][s]
            assert row[f"seat{s}_name"] == ("h" if seating[s] == 0 else "random")
    sweep_all(app, app.ports.archive)
    assert list(tournament_data.export_lines(app, tid)) == lines
    assert "".join(tournament_data.results_csv(app, tid)) == table
    with pytest.raises(AppError):
        tournament_data.export_lines(app, "tnosuch")


def test_the_lobby_pages_on_into_the_archive(app: App) -> None:
    ids = [_play(app, "fox", seed=s)[0] for s in range(5)]
    waiting = creation.create_game(app, "fox", [{"name": "a"}, {"open": True}]).game_id
    sweep_all(app, app.ports.archive)
    seen: list[str] = []
    cursor: str | None = "0"
    while cursor is not None:
        page = queries.list_lobby(app, limit=2, cursor=cursor)
        seen += [g["id"] for g in page["games"]]
        cursor = page["next_cursor"]
    assert seen == [waiting, *reversed(ids)]
    finished = queries.list_lobby(app, limit=10, status="finished")["games"]
    assert [g["id"] for g in finished] == list(reversed(ids))
    assert all(g["status"] == "finished" for g in finished)
    with pytest.raises(ValueError):
        queries.list_lobby(app, cursor="x1")


def test_an_unknown_game_is_still_not_found(app: App) -> None:
    with pytest.raises(AppError):
        queries.view_json(app, "nosuchgame", None)
    assert app.ports.store.read("nosuchgame") == []
    assert app.entry("nosuchgame") is None


def test_every_list_pages_by_cursor(app: App) -> None:
    from flask.testing import FlaskClient

    from services.gateway.app import create_app

    for _n in range(3):
        tournaments.create_tournament(
            app, {"game": "fox", "games": 2, "players": 2,
                  "entrants": [{"bot": "random"}, {"bot": "random"}]}, max_games=10,
        )  # fmt: skip
    settings = Settings(bot_dispatch="none", organizer_keys=frozenset({"org"}))
    client: FlaskClient = create_app(settings, application=app).test_client()
    seen: list[str] = []
    cursor = None
    for _ in range(5):
        query = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/tournaments", query_string=query,
                          headers={"Authorization": "Bearer org"}).get_json()  # fmt: skip
        seen += [t["id"] for t in page["tournaments"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 3
    bots = client.get("/v1/bots", query_string={"limit": 1}).get_json()
    assert bots == {"bots": [], "next_cursor": None}
