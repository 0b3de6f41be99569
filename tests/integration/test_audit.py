"""An auditor fetches a finished game's events and proves it: chain, seed, opening, replay."""

from __future__ import annotations

import copy
import time

import pytest

from shared.audit import audit
from tests.integration.api import bearer, view
from tests.integration.conftest import AUDITOR, Stack

BOTS = {"fox": 2, "skull": 3, "skye": 2}
OPTIONS = {"fox": {"target": 1}, "skull": {}, "skye": {}}


def _finished(stack: Stack, game: str) -> tuple[str, list[dict]]:
    body = {"game": game, "seats": [{"bot": "random"}] * BOTS[game], "options": OPTIONS[game]}
    gid = stack.http.post("/v1/games", json=body).get_json()["id"]
    deadline = time.monotonic() + 60
    while view(stack, gid)["outcome"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert view(stack, gid)["outcome"] is not None
    feed = stack.http.get(f"/v1/games/{gid}/events?limit=10000", headers=bearer(AUDITOR))
    return gid, feed.get_json()["events"]


@pytest.mark.parametrize("game", ["fox", "skull", "skye"])
def test_a_finished_game_passes_every_check(stack: Stack, game: str) -> None:
    gid, events = _finished(stack, game)
    report = audit(gid, events)
    assert report.ok, report.checks
    assert report.status == "passed"
    assert set(report.checks) == {"hash chain", "seed commitment", "opening draw",
                                  "commands legal", "outcomes recomputed", "final state"}  # fmt: skip


def test_tampering_and_a_false_seed_are_caught(stack: Stack) -> None:
    gid, events = _finished(stack, "fox")
    forged = copy.deepcopy(events)
    card = forged[3]["data"]["card"]
    # Another card than the one played (a fixed forgery matched the played card 1 time in 33).
    forged[3]["data"]["card"] = {**card, "rank": card["rank"] % 11 + 1}
    assert audit(gid, forged).failures == ["hash chain"]
    # Re-hashing a forged log cannot keep the seed: sha256 of another seed will not match.
    from shared.events import GENESIS_HASH, chain_hash

    lying = copy.deepcopy(events)
    lying[-1]["data"]["seed"] = "another seed"
    prev = GENESIS_HASH
    for e in lying:
        e["prev_hash"] = prev
        e["hash"] = prev = chain_hash(
            prev,
            version=e["version"],
            type=e["type"],
            data=e["data"],
            command_id=e["command_id"],
            seat=e["seat"],
            at=e["at"],
            command=e.get("command"),
        )
    report = audit(gid, lying)
    assert report.failures == ["seed commitment"]
    assert report.first_failure["version"] == lying[-1]["version"]  # type: ignore[index]


def test_a_players_feed_cannot_be_audited_for_it_has_no_hashes(stack: Stack) -> None:
    body = {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    game = stack.http.post("/v1/games", json=body).get_json()
    feed = stack.http.get(
        f"/v1/games/{game['id']}/events", headers=bearer(game["tokens"][0])
    ).get_json()["events"]
    assert audit(game["id"], feed).failures == ["envelopes"]


@pytest.mark.parametrize("game", ["fox", "skull", "skye"])
def test_an_export_audits_offline_to_the_services_own_report(stack: Stack, game: str) -> None:
    import json

    gid, _ = _finished(stack, game)
    exported = stack.http.get(f"/v1/games/{gid}/export")  # anyone, once the game is over
    assert exported.status_code == 200 and exported.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in exported.data.decode().splitlines()]
    offline = audit(gid, lines)
    online = stack.http.get(f"/v1/games/{gid}/audit").get_json()
    assert offline.status == online["status"] == "passed", online
    assert offline.digest == online["final_state_digest"]
    assert [c["name"] for c in online["checks"]][:2] == ["hash chain", "complete"]


def test_a_running_game_is_audited_only_by_auditors_with_the_seed_unshown(stack: Stack) -> None:
    game = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    gid = game["id"]
    for path in ("export", "audit"):
        assert stack.http.get(f"/v1/games/{gid}/{path}").status_code == 403
        seat = stack.http.get(f"/v1/games/{gid}/{path}", headers=bearer(game["tokens"][0]))
        assert seat.status_code == 403 and seat.get_json()["code"] == "auth/forbidden"
    report = stack.http.get(f"/v1/games/{gid}/audit", headers=bearer(AUDITOR)).get_json()
    assert report["status"] == "passed", report  # re-decided with the seed the service holds
    seed = stack.worker_app.ports.directory.get(gid).seed  # type: ignore[union-attr]
    assert seed not in str(report)
    assert stack.http.get("/v1/games/nope/audit", headers=bearer(AUDITOR)).status_code == 404
