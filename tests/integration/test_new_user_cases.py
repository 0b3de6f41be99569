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
