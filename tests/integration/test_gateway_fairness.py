"""Contributed fairness over HTTP: create, send each seat's client seed, play, audit."""

from __future__ import annotations

from tests.integration.api import bearer, view
from tests.integration.conftest import AUDITOR, Stack


def test_a_contributed_game_over_http(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games",
        json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "fairness": "contributed"},
    )
    assert created.status_code == 201, created.get_json()
    gid, tokens = created.get_json()["id"], created.get_json()["tokens"]
    assert view(stack, gid)["phase"] == "waiting"
    url = f"/v1/games/{gid}/seats/0/entropy"
    # Only seat 0's token sends seat 0's seed; a spectator none.
    assert stack.http.post(url, json={"client_seed": "x"}).status_code == 401
    other = stack.http.post(url, json={"client_seed": "x"}, headers=bearer(tokens[1]))
    assert other.status_code == 403
    missing = stack.http.post(url, json={}, headers=bearer(tokens[0]))
    assert missing.status_code == 422 and "client_seed" in str(missing.get_json()["errors"])
    first = stack.http.post(url, json={"client_seed": "seed-of-a"}, headers=bearer(tokens[0]))
    assert first.status_code == 200, first.get_json()
    assert first.get_json()["fairness"]["waiting_for"] == [1]
    second = stack.http.post(
        f"/v1/games/{gid}/seats/1/entropy",
        json={"client_seed": "seed-of-b"},
        headers=bearer(tokens[1]),
    )
    assert second.status_code == 200 and len(second.get_json()["hand"]) == 13
    # Sending the same seed again is harmless; another seed is refused and changes nothing.
    again = stack.http.post(url, json={"client_seed": "seed-of-a"}, headers=bearer(tokens[0]))
    assert again.status_code == 200
    other_seed = stack.http.post(url, json={"client_seed": "other"}, headers=bearer(tokens[0]))
    assert other_seed.status_code == 422
    assert other_seed.get_json()["code"] == "fairness/seed_already_sent"
    assert view(stack, gid)["fairness"]["client_seeds"] == ["seed-of-a", "seed-of-b"]
    report = stack.http.get(f"/v1/games/{gid}/audit", headers=bearer(AUDITOR)).get_json()
    assert report["status"] == "passed", report
    refused = stack.http.post(
        "/v1/games",
        json={"game": "fox", "seats": [{"bot": "random"}] * 2, "fairness": "contributed"},
    )
    assert refused.status_code == 422
