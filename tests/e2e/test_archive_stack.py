"""Finished games leave Redis for the archive on the running stack, and the API reads them the
same (issue 36): `tabletop run` with ``TABLETOP_ARCHIVE_AFTER_S=0``, a tournament and a live
game, every read through HTTP and the audit CLI on an export saved after the move."""

from __future__ import annotations

import csv
import gzip
import io
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests

from shared import keys
from shared.archive import open_archive
from tests.e2e.stack import ROOT, Stack, start_stack

pytestmark = pytest.mark.e2e

ORG = {"Authorization": "Bearer org-e2e"}
AUDITOR = {"Authorization": "Bearer aud-e2e"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = start_stack(tmp_path_factory.mktemp("archive"), TABLETOP_ARCHIVE_AFTER_S="0")
    try:
        yield running
    finally:
        running.stop()


def _until(what: str, check, timeout: float = 120.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    found = None
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout:.0f} s: {what} (last: {found})")


def test_a_tournaments_games_move_to_the_archive_and_read_the_same(stack: Stack) -> None:
    url = stack.url
    body = {"game": "fox", "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
            "games": 40, "seed": "archive-e2e", "options": {"target": 1}}  # fmt: skip
    created = requests.post(f"{url}/v1/tournaments", json=body, headers=ORG)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    _until(
        "the tournament finished",
        lambda: (
            requests.get(f"{url}/v1/tournaments/{tid}", headers=ORG).json()["status"] == "finished"
        ),
    )
    r = redis.Redis.from_url(stack.redis_url)
    # Every game leaves Redis: its log and its place in the indexes.
    _until("every game archived", lambda: r.zcard(keys.GAMES) == 0)
    assert not list(r.scan_iter(match="game:{*}:log"))
    doc = requests.get(f"{url}/v1/tournaments/{tid}", headers=ORG).json()
    assert doc["progress"] == {"done": 40, "total": 40}
    listed = requests.get(f"{url}/v1/games", params={"tournament": tid, "limit": 100}).json()
    assert [g["tournament"]["index"] for g in listed["games"]] == list(range(40))
    assert {g["status"] for g in listed["games"]} == {"finished"}
    gid = listed["games"][7]["id"]
    view = requests.get(f"{url}/v1/games/{gid}")
    assert view.status_code == 200 and view.json()["outcome"] is not None
    page = requests.get(f"{url}/v1/games/{gid}/events", params={"after": 2, "limit": 3},
                        headers=AUDITOR).json()  # fmt: skip
    assert [e["version"] for e in page["events"]] == [3, 4, 5]
    export = requests.get(f"{url}/v1/games/{gid}/export")
    assert export.status_code == 200
    archive = open_archive(str(stack.data_dir / "archive.sqlite3"))
    try:
        assert export.content == archive.export(gid)
    finally:
        archive.close()
    audit = requests.get(f"{url}/v1/games/{gid}/audit").json()
    assert audit["status"] == "passed", audit
    saved = stack.data_dir / "saved.jsonl"
    saved.write_bytes(export.content)
    cli = subprocess.run(
        [sys.executable, "-m", "services.cli", "audit", "--file", str(saved)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stdout + cli.stderr
    # The tournament as data: its logs in one download, a row per game.
    bundle = requests.get(f"{url}/v1/tournaments/{tid}/games.jsonl.gz", headers=ORG)
    assert bundle.status_code == 200 and bundle.headers["Content-Type"] == "application/gzip"
    lines = gzip.decompress(bundle.content).splitlines()
    assert len(lines) == 40
    from shared.app.tournament_data import split_exports

    assert dict(split_exports(iter(lines)))[gid] == export.content
    table = requests.get(f"{url}/v1/tournaments/{tid}/results.csv", headers=AUDITOR)
    assert table.status_code == 200 and table.headers["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert [int(r["index"]) for r in rows] == list(range(40))
    assert requests.get(f"{url}/v1/tournaments/{tid}/results.csv").status_code == 401


def test_a_live_game_moves_once_scored_and_its_seat_still_reads_its_view(stack: Stack) -> None:
    url = stack.url
    s = requests.Session()
    created = s.post(f"{url}/v1/games", json={"game": "fox", "seats": [{"name": "ana"},
                     {"bot": "random"}], "options": {"target": 1}})  # fmt: skip
    assert created.status_code == 201, created.text
    gid, token = created.json()["id"], created.json()["tokens"][0]
    auth = {"Authorization": f"Bearer {token}"}

    seen: list[dict] = []

    def my_turn_or_over() -> dict | None:
        view = s.get(f"{url}/v1/games/{gid}", headers=auth).json()
        seen.append(view)
        return view if view["outcome"] is not None or 0 in view["to_act"] else None

    while True:
        view = _until("my turn", my_turn_or_over, timeout=60)
        if view["outcome"] is not None:
            break
        sent = s.post(f"{url}/v1/games/{gid}/commands", json=view["legal_commands"][0],
                      headers={**auth, "Prefer": "wait=10"})  # fmt: skip
        assert sent.status_code == 200, sent.text
    r = redis.Redis.from_url(stack.redis_url)
    _until("the game archived", lambda: not r.exists(keys.log(gid)))
    mine = s.get(f"{url}/v1/games/{gid}", headers=auth)
    assert mine.status_code == 200 and mine.json()["seat"] == 0
    assert mine.json() == view
    finished = s.get(f"{url}/v1/games", params={"status": "finished", "limit": 100}).json()
    assert gid in [g["id"] for g in finished["games"]]
    late = s.post(f"{url}/v1/games/{gid}/commands", json={"type": "play", "card": 0},
                  headers={**auth, "Prefer": "wait=5"})  # fmt: skip
    assert late.status_code in (409, 422) and late.json()["code"] == "game/over", late.text
    s.close()


def test_nothing_was_lost_and_the_archive_has_each_game_once(stack: Stack) -> None:
    path = Path(stack.data_dir / "archive.sqlite3")
    import sqlite3

    with sqlite3.connect(path) as conn:
        total, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT game_id) FROM games"
        ).fetchone()
    assert total == distinct >= 41
