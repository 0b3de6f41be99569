"""The real processes (`tabletop run`: redis-server, gunicorn, a worker per game, Celery):
a full Fox game against the random bot over HTTP, and bots-only Skye and Skull games."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from tests.e2e.stack import Stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def base_url(shared_stack: Stack) -> str:
    # A default stack, shared with other files (tests/e2e/conftest.py): nothing here needs a
    # fresh one.
    return shared_stack.url


def test_full_fox_game_against_the_random_bot_over_http(base_url: str) -> None:
    s = requests.Session()
    created = s.post(
        f"{base_url}/v1/games",
        json={
            "game": "fox",
            "seats": [{"name": "ana"}, {"bot": "random"}],
            "options": {"target": 16},
        },
    )
    assert created.status_code == 201, created.text
    gid, token = created.json()["id"], created.json()["tokens"][0]
    auth = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 120
    moves = 0
    while time.monotonic() < deadline:
        view = s.get(f"{base_url}/v1/games/{gid}", headers=auth).json()
        if view["outcome"] is not None:
            break
        if 0 not in view["to_act"]:
            time.sleep(0.01)  # the Celery bot's turn
            continue
        resp = s.post(
            f"{base_url}/v1/games/{gid}/commands",
            json=view["legal_commands"][0],
            headers={**auth, "Prefer": "wait=10"},
        )
        assert resp.status_code == 200, resp.text
        moves += 1
    final = s.get(f"{base_url}/v1/games/{gid}", headers=auth).json()
    assert final["outcome"] is not None, "the game did not finish in time"
    assert max(final["scores"]) >= 16 and moves >= 13
    audit = s.get(
        f"{base_url}/v1/games/{gid}/events", headers={"Authorization": "Bearer aud-e2e"}
    ).json()
    assert audit["events"][-1]["type"] == "seed_revealed"
    # The Celery scoring task records the result.
    deadline = time.monotonic() + 20
    bad = s.post(
        f"{base_url}/v1/games/{gid}/commands",
        json=final["legal_commands"] or {"type": "play", "card": {"suit": "bells", "rank": 1}},
        headers={**auth, "Prefer": "wait=5"},
    )
    assert bad.status_code == 409 and bad.json()["code"] == "game/over"
    s.close()  # an idle keep-alive connection would hold gunicorn's graceful stop for 10 s


@pytest.mark.parametrize(("game", "seats"), [("skye", 4), ("skull", 4)])
def test_celery_bots_play_a_whole_game_on_their_own(base_url: str, game: str, seats: int) -> None:
    # Celery runs bot tasks late and in any order; simultaneous phases must not stall.
    created = requests.post(
        f"{base_url}/v1/games", json={"game": game, "seats": [{"bot": "random"}] * seats}
    )
    assert created.status_code == 201, created.text
    gid = created.json()["id"]
    deadline = time.monotonic() + 120
    view = created.json()["view"]
    while view["outcome"] is None and time.monotonic() < deadline:
        time.sleep(0.2)
        view = requests.get(f"{base_url}/v1/games/{gid}").json()
    assert view["outcome"] is not None, f"stuck in {view['phase']} at version {view['version']}"
    assert view["outcome"]["winners"]


@pytest.mark.parametrize(
    ("game", "seats"),
    [
        ("fox", [{"bot": "ismcts", "iterations": 30}, {"bot": "heuristic"}]),
        ("skull", [{"bot": "ismcts", "iterations": 10}, {"bot": "heuristic"}, {"bot": "random"}]),
    ],
)
def test_celery_plays_search_and_heuristic_bots(base_url: str, game: str, seats: list) -> None:
    options = {"target": 1} if game == "fox" else {}
    created = requests.post(
        f"{base_url}/v1/games", json={"game": game, "seats": seats, "options": options}
    )
    assert created.status_code == 201, created.text
    gid = created.json()["id"]
    deadline = time.monotonic() + 180
    view = created.json()["view"]
    while view["outcome"] is None and time.monotonic() < deadline:
        time.sleep(0.2)
        view = requests.get(f"{base_url}/v1/games/{gid}").json()
    assert view["outcome"] is not None, f"stuck in {view['phase']} at version {view['version']}"
    assert [s.get("bot") for s in view["seats"]] == [s["bot"] for s in seats]


def test_a_tournament_runs_through_celery_and_its_games_pass_the_audit(base_url: str) -> None:
    from shared.audit import audit
    from shared.tournaments import standings

    org = {"Authorization": "Bearer org-e2e"}
    body = {
        "game": "fox",
        "entrants": [{"name": "h", "bot": "heuristic"}, {"bot": "random"}],
        "games": 12,
        "format": "duplicate",
        "seed": "e2e-tournament",
        "options": {"target": 1},
    }
    assert requests.post(f"{base_url}/v1/tournaments", json=body).status_code == 401
    not_a_key = {"Authorization": "Bearer aud-e2e"}  # an auditor may read, not create
    assert (
        requests.post(f"{base_url}/v1/tournaments", json=body, headers=not_a_key).status_code == 403
    )
    bad = requests.post(f"{base_url}/v1/tournaments", json={**body, "games": 13}, headers=org)
    assert bad.status_code == 422 and "games" in bad.json()["errors"], bad.text
    created = requests.post(f"{base_url}/v1/tournaments", json=body, headers=org)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    deadline = time.monotonic() + 120
    doc = created.json()
    while time.monotonic() < deadline:
        doc = requests.get(f"{base_url}/v1/tournaments/{tid}", headers=org).json()
        if doc["status"] == "finished":
            break
        time.sleep(0.2)
    assert doc["status"] == "finished", doc.get("progress")
    assert doc["progress"] == {"done": 12, "total": 12}
    assert sorted(r["games"] for r in doc["standings"]) == [12, 12]
    assert doc["head_to_head"]["matrix"][0][1]["games"] == 12
    auditor = {"Authorization": "Bearer aud-e2e"}
    assert requests.get(f"{base_url}/v1/tournaments/{tid}", headers=auditor).status_code == 200
    listed = requests.get(f"{base_url}/v1/tournaments", headers=auditor).json()["tournaments"]
    assert tid in [t["id"] for t in listed]
    # Every game is a normal game: its view, its events, its audit.
    for item in doc["games"]["items"][:3]:
        view = requests.get(f"{base_url}/v1/games/{item['id']}").json()
        assert view["outcome"] is not None and view["tournament"]["id"] == tid
        events = requests.get(f"{base_url}/v1/games/{item['id']}/events", headers=auditor).json()
        report = audit(item["id"], events["events"])
        assert report.ok, report.checks
    # The batches finished in whatever order the pool ran them; the final ratings are those
    # of the games folded in game order, as `tabletop tournament run --local` folds them.
    tally = standings.empty(2)
    for item in doc["games"]["items"]:
        outcome = requests.get(f"{base_url}/v1/games/{item['id']}").json()["outcome"]
        seating = [0 if name == "h" else 1 for name in item["seats"]]
        standings.fold(tally, seating, outcome)
    local = standings.render(tally, [{"name": "h"}, {"name": "random"}])["ratings"]
    assert {r["entrant"]: (r["mu"], r["sigma"]) for r in doc["ratings"]} == {
        r["entrant"]: (r["mu"], r["sigma"]) for r in local
    }
    ratings = requests.get(f"{base_url}/v1/ratings", params={"game": "fox"}).json()["ratings"]
    assert {r["bot"] for r in ratings} >= {"heuristic", "random"}


def test_an_sprt_match_stops_at_its_decision_through_celery(base_url: str) -> None:
    from services import tournament_local
    from shared.tournaments.plan import parse

    org = {"Authorization": "Bearer org-e2e"}
    body = {
        "game": "fox",
        "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
        "games": 1000,
        "format": "sprt",
        "seed": "e2e-sprt",
        "options": {"target": 1},
    }
    created = requests.post(f"{base_url}/v1/tournaments", json=body, headers=org)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    deadline = time.monotonic() + 120
    doc = created.json()
    while time.monotonic() < deadline:
        doc = requests.get(f"{base_url}/v1/tournaments/{tid}?limit=1", headers=org).json()
        if doc["status"] == "finished":
            break
        time.sleep(0.2)
    assert doc["status"] == "finished", doc.get("progress")
    assert doc["sprt"]["result"] == "H1" and doc["progress"]["done"] < 1000
    # The pool's batches finished in any order; the decision is the seed's, as a local run's.
    local = tournament_local.play_local(parse(body), jobs=1)
    assert doc["sprt"] == tournament_local.local_doc(parse(body), local.tally)["sprt"]


def test_the_live_feed_through_gunicorn_pushes_each_move(base_url: str) -> None:
    created = requests.post(
        f"{base_url}/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"bot": "random"}]}
    ).json()
    gid, token = created["id"], created["tokens"][0]
    auth = {"Authorization": f"Bearer {token}"}
    with requests.get(f"{base_url}/v1/games/{gid}/feed", headers=auth, stream=True,
                      timeout=30) as feed:  # fmt: skip
        assert feed.headers["Content-Type"].startswith("text/event-stream")
        lines = feed.iter_lines(decode_unicode=True)
        versions: list[int] = []
        deadline = time.monotonic() + 60
        sent = False
        for line in lines:
            if time.monotonic() > deadline:
                break
            if line.startswith("id: "):
                versions.append(int(line[4:]))
                if len(versions) >= 3:
                    break
            if not sent:  # play once: the feed must push the move (and the bot's answer)
                mine = requests.get(f"{base_url}/v1/games/{gid}", headers=auth).json()
                if 0 in mine["to_act"]:
                    resp = requests.post(f"{base_url}/v1/games/{gid}/commands",
                                         json=mine["legal_commands"][0], headers=auth)  # fmt: skip
                    assert resp.status_code == 202, resp.text
                    sent = True
    assert len(versions) >= 2 and versions == sorted(set(versions)), versions


@pytest.mark.parametrize("transport", ["webhook", "connected"])
def test_the_kits_bots_play_a_fox_game_through_the_stack(
    base_url: str, transport: str, tmp_path: Path
) -> None:
    """The kit's example random bot (sdk/python/examples/random_bot.py, a process of its own)
    served as a webhook (``serve_webhook``) or connected (``play_connected``) plays a Fox game
    against the heuristic bot; every decision is its own and the audit passes (issue 24)."""
    import subprocess
    import sys

    from shared.redis_server import free_port

    example = Path(__file__).resolve().parents[2] / "sdk/python/examples/random_bot.py"
    port = free_port()
    body: dict = {"name": f"kit-{transport}", "games": ["fox"], "transport": transport,
                  "budget_ms": 5000}  # fmt: skip
    if transport == "webhook":
        body["url"] = f"http://127.0.0.1:{port}/"
    created = requests.post(f"{base_url}/v1/bots", json=body)
    assert created.status_code == 201, created.text
    bot = created.json()
    argv = [sys.executable, str(example), "--key", bot["key"]]
    argv += ["--port", str(port)] if transport == "webhook" else [
        "--connected", "--api", base_url, "--games", "1"]  # fmt: skip
    log = tmp_path / "bot.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        if transport == "webhook":  # listening before the game sends it a turn
            deadline = time.monotonic() + 30
            while not _answers(f"http://127.0.0.1:{port}/"):
                assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
                time.sleep(0.1)
        seats = [{"bot_id": bot["id"]}, {"bot": "heuristic"}]
        game: dict = {"game": "fox", "seats": seats, "options": {"target": 1}, "listed": False}
        resp = requests.post(f"{base_url}/v1/games", json=game)
        assert resp.status_code == 201, resp.text
        gid = resp.json()["id"]
        deadline = time.monotonic() + 120
        while (view := requests.get(f"{base_url}/v1/games/{gid}").json())["outcome"] is None:
            assert time.monotonic() < deadline, view["version"]
            assert transport == "webhook" or proc.poll() is None, log.read_text()
            time.sleep(0.2)
        audit = requests.get(f"{base_url}/v1/games/{gid}/audit",
                             headers={"Authorization": "Bearer aud-e2e"}).json()  # fmt: skip
        assert audit["status"] == "passed", audit
        stats = requests.get(f"{base_url}/v1/bots/{bot['id']}").json()["stats"]
        assert stats["decisions"] > 0 and stats["fallbacks"] == 0, stats
        if transport == "connected":  # play_connected returns once it hears the game end
            assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)


def _answers(url: str) -> bool:
    """Whether the kit's webhook server answers (an unsigned request: 401)."""
    try:
        return requests.post(url, data=b"{}", timeout=5).status_code == 401
    except requests.ConnectionError:
        return False
