"""The web page's server side: the page and its modules (with the types browsers require),
the verifier served from verifier/ as it is, the Skye tile data, and the replay's views, which
only an open log (a finished game, or an auditor) may read. The page itself is tested in a
browser by tests/e2e/test_browser.py."""

from __future__ import annotations

import time
from pathlib import Path

from tests.integration.api import bearer, problem, view
from tests.integration.conftest import AUDITOR, Stack

ROOT = Path(__file__).resolve().parents[2]


def finished_fox(stack: Stack) -> str:
    created = stack.http.post(
        "/v1/games",
        json={"game": "fox", "seats": [{"bot": "random"}, {"bot": "random"}],
              "options": {"target": 1}},
    )  # fmt: skip
    assert created.status_code == 201, created.get_json()
    gid = str(created.get_json()["id"])
    deadline = time.monotonic() + 60
    while view(stack, gid)["outcome"] is None:
        assert time.monotonic() < deadline, "the bots did not finish"
        time.sleep(0.05)
    return gid


def test_the_page_and_its_modules_are_served_with_browser_types(stack: Stack) -> None:
    page = stack.http.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert '<script type="module" src="/web/app.js">' in html
    assert "http://" not in html and "https://" not in html  # no other host
    for path in ("/web/app.js", "/web/vendor/preact.mjs", "/web/vendor/htm.mjs"):
        resp = stack.http.get(path)
        assert resp.status_code == 200 and resp.mimetype == "text/javascript", path
    assert stack.http.get("/web/style.css").mimetype == "text/css"
    assert stack.http.get("/web/nothing.js").status_code == 404
    assert stack.http.get("/web/../pyproject.toml").status_code == 404


def test_the_verifier_is_the_audits_own_file(stack: Stack) -> None:
    resp = stack.http.get("/web/verifier/fairness.mjs")
    assert resp.status_code == 200 and resp.mimetype == "text/javascript"
    assert resp.get_data() == (ROOT / "verifier" / "fairness.mjs").read_bytes()
    assert stack.http.get("/web/verifier/README.md").status_code == 404


def test_the_skye_tiles_are_the_engines(stack: Stack) -> None:
    from shared.games.skye import data

    tiles = stack.http.get("/web/skye-tiles.json").get_json()["tiles"]
    assert set(tiles) == set(data.TILES)
    l01 = tiles["L01"]
    assert l01["edges"] == {"N": "pasture", "E": "pasture", "S": "mountain", "W": "mountain"}
    assert {"areas", "roads", "features", "scroll"} <= set(l01) and "disputes" not in l01


def test_replay_views_only_for_an_open_log(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "skull", "seats": [{"name": "a"}, {"bot": "random"},
                                                      {"bot": "random"}]},
    )  # fmt: skip
    running = created.get_json()["id"]
    problem(stack.http.get(f"/web/replay/{running}"), 403)
    problem(stack.http.get(f"/web/replay/{running}?version=x"), 422)
    audited = stack.http.get(f"/web/replay/{running}", headers=bearer(AUDITOR))
    assert audited.status_code == 200
    problem(stack.http.get("/web/replay/nosuchgame"), 404)

    gid = finished_fox(stack)
    last = stack.http.get(f"/web/replay/{gid}").get_json()
    assert last["version"] == last["last"] and last["public"]["outcome"] is not None
    assert last["envelope"]["type"] == "seed_revealed"
    middle = stack.http.get(f"/web/replay/{gid}?version=10").get_json()
    assert middle["version"] == 10 and middle["public"]["version"] == 10
    hands = [seat["hand"] for seat in middle["seats"]]
    assert all(hands) and middle["public"]["hand"] is None
    assert stack.http.get(f"/web/replay/{gid}?version=0").get_json()["version"] == 1
    assert stack.http.get(f"/web/replay/{gid}?version=99999").get_json()["version"] == last["last"]
