"""What a new user hit: each case answers a clear 4xx (never a 500) and changes nothing."""

from __future__ import annotations

import json

import pytest

from tests.integration.api import bearer
from tests.integration.conftest import Stack


def post(stack: Stack, path: str, raw: str, headers: dict[str, str] | None = None):
    return stack.http.post(
        path, data=raw, headers={"Content-Type": "application/json", **(headers or {})}
    )


def test_a_lone_surrogate_in_a_name_is_a_422(stack: Stack) -> None:
    raw = '{"game": "fox", "seats": [{"name": "\\ud800"}, {"bot": "random"}]}'
    resp = post(stack, "/v1/games", raw)
    assert resp.status_code == 422, resp.get_json()
    assert resp.get_json()["code"] == "request/invalid"


def test_a_seat_with_both_a_name_and_a_bot_is_a_422(stack: Stack) -> None:
    body = {"game": "fox", "seats": [{"name": "ana", "bot": "random"}, {"name": "b"}]}
    resp = stack.http.post("/v1/games", json=body)
    assert resp.status_code == 422, resp.get_json()
    assert "seats" in json.dumps(resp.get_json()["errors"])


def test_a_garbage_bearer_token_on_create_is_a_401(stack: Stack) -> None:
    body = {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    resp = stack.http.post("/v1/games", json=body, headers=bearer("not-a-key"))
    assert resp.status_code == 401 and resp.get_json()["code"] == "auth/invalid_token"


def test_a_malformed_prefer_wait_is_a_400(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    resp = stack.http.post(
        f"/v1/games/{created['id']}/commands",
        json={"type": "keep_decree"},
        headers={**bearer(created["tokens"][0]), "Prefer": "wait=abc"},
    )
    assert resp.status_code == 400 and resp.get_json()["code"] == "request/malformed"


@pytest.mark.parametrize("depth", [100, 500, 950])
def test_deeply_nested_options_are_a_422(stack: Stack, depth: int) -> None:
    raw = (
        '{"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "options": {"x": '
        + ("[" * depth + "]" * depth)
        + "}}"
    )
    resp = post(stack, "/v1/games", raw)
    assert 400 <= resp.status_code < 500, resp.status_code
    assert resp.get_json()["code"] in ("request/invalid", "request/malformed", "options/invalid")


def test_a_huge_integer_is_a_4xx(stack: Stack) -> None:
    raw = (
        '{"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "options": {"target": '
        + ("9" * 5000)
        + "}}"
    )
    resp = post(stack, "/v1/games", raw)
    assert 400 <= resp.status_code < 500, resp.status_code
    assert resp.is_json and resp.get_json()["status"] == resp.status_code


def test_a_retried_create_with_an_idempotency_key_makes_one_game(stack: Stack) -> None:
    body = {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    key = {"Idempotency-Key": "create-7f3a"}
    first = stack.http.post("/v1/games", json=body, headers=key)
    again = stack.http.post("/v1/games", json=body, headers=key)
    assert first.status_code == again.status_code == 201
    assert again.get_json()["id"] == first.get_json()["id"]
    assert again.get_json()["tokens"] == first.get_json()["tokens"]
    assert again.headers["Idempotent-Replayed"] == "true"
    other = stack.http.post("/v1/games", json={**body, "options": {"target": 5}}, headers=key)
    assert other.status_code == 422 and other.get_json()["code"] == "request/idempotency_key_reused"
    # Keys are per caller: an organizer's same key is its own.
    from tests.integration.conftest import ORGANIZER

    mine = stack.http.post("/v1/games", json=body, headers={**key, **bearer(ORGANIZER)})
    assert mine.status_code == 201 and mine.get_json()["id"] != first.get_json()["id"]
    bad = stack.http.post("/v1/games", json=body, headers={"Idempotency-Key": "é"})
    assert bad.status_code == 400


def test_a_retried_command_with_an_idempotency_key_is_applied_once(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    gid, tokens = created["id"], created["tokens"]
    view0 = stack.http.get(f"/v1/games/{gid}", headers=bearer(tokens[0])).get_json()
    seat = view0["to_act"][0]
    mine = stack.http.get(f"/v1/games/{gid}", headers=bearer(tokens[seat])).get_json()
    move, other = mine["legal_commands"][0], mine["legal_commands"][1]
    headers = {**bearer(tokens[seat]), "Prefer": "wait=5", "Idempotency-Key": "move-1"}
    first = stack.http.post(f"/v1/games/{gid}/commands", json=move, headers=headers)
    again = stack.http.post(f"/v1/games/{gid}/commands", json=move, headers=headers)
    assert first.status_code == again.status_code == 200
    assert first.get_json()["command"]["events"] == again.get_json()["command"]["events"]
    reused = stack.http.post(f"/v1/games/{gid}/commands", json=other, headers=headers)
    assert reused.status_code == 422
    assert reused.get_json()["code"] == "request/idempotency_key_reused"


def test_a_wrong_method_is_a_405_with_allow(stack: Stack) -> None:
    resp = stack.http.put("/v1/games")
    assert resp.status_code == 405 and resp.get_json()["code"] == "http/method_not_allowed"
    assert {"GET", "POST"} <= {m.strip() for m in resp.headers["Allow"].split(",")}
