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
    from shared.events import GENESIS_HASH, chain_hash, event_salt

    lying = copy.deepcopy(events)
    lying[-1]["data"]["seed"] = "another seed"
    prev = GENESIS_HASH
    # The forger salts with the seed it reveals; the commitment still gives it away.
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
            salt=event_salt("another seed", e["version"]),
            command=e.get("command"),
        )
    report = audit(gid, lying)
    assert report.failures == ["seed commitment"]
    assert report.first_failure["version"] == lying[-1]["version"]  # type: ignore[index]


def test_a_player_checks_the_export_against_the_hashes_it_was_shown(stack: Stack) -> None:
    import json

    from shared.audit import check_history

    body = {"game": "fox", "seats": [{"name": "a"}, {"bot": "random"}], "options": {"target": 1}}
    game = stack.http.post("/v1/games", json=body).get_json()
    gid, token = game["id"], game["tokens"][0]
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        mine = view(stack, gid, token)
        seen[mine["version"]] = mine["head_hash"]  # what a client keeps as it plays
        if mine["outcome"] is not None:
            break
        if 0 in mine["to_act"]:
            stack.http.post(f"/v1/games/{gid}/commands", json=mine["legal_commands"][0],
                            headers={**bearer(token), "Prefer": "wait=5"})  # fmt: skip
        else:
            time.sleep(0.01)
    assert len(seen) > 5
    # Its event feed carries the same commitments as the full log.
    feed = stack.http.get(f"/v1/games/{gid}/events", headers=bearer(token)).get_json()["events"]
    lines = stack.http.get(f"/v1/games/{gid}/export").data.decode().splitlines()
    export = [json.loads(line) for line in lines]
    by_version = {e["version"]: e["hash"] for e in export}
    assert all(by_version[e["version"]] == e["hash"] for e in feed)
    # After the game: the export is the history it was shown, version by version...
    assert check_history(export, seen) == []
    assert audit(gid, export).status == "passed"
    # ...and a history rewritten after the fact (consistently re-hashed) is not.
    from shared.events import GENESIS_HASH, chain_hash, event_salt

    forged = copy.deepcopy(export)
    played = next(e for e in forged if e["type"] == "card_played" and e["seat"] == 1)
    played["at"] = "2000-01-01T00:00:00.000Z"
    seed, prev = forged[-1]["data"]["seed"], GENESIS_HASH
    for e in forged:
        e["prev_hash"] = prev
        e["hash"] = prev = chain_hash(
            prev, version=e["version"], type=e["type"], data=e["data"],
            command_id=e["command_id"], seat=e["seat"], at=e["at"],
            salt=event_salt(seed, e["version"]), command=e.get("command"),
        )  # fmt: skip
    assert audit(gid, forged).checks["hash chain"].startswith("ok")  # consistent on its own
    wrong = check_history(forged, seen)
    assert wrong and min(wrong) >= played["version"]


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
