"""Numbers too large for JSON clients or the store, and field errors in one shape: always a
4xx problem body, never a 500 or a 503."""

from __future__ import annotations

import pytest

from tests.integration.api import bearer, view
from tests.integration.conftest import Stack

HUGE = 10**30


def create(stack: Stack, game: str, seats: int, options: dict) -> tuple[int, dict]:
    """POST /v1/games with ``seats`` human seats; (status, body)."""
    resp = stack.http.post(
        "/v1/games",
        json={"game": game, "seats": [{"name": f"p{i}"} for i in range(seats)], "options": options},
    )
    return resp.status_code, resp.get_json()


@pytest.mark.parametrize(
    ("game", "seats", "options"),
    [
        ("fox", 2, {"target": HUGE}),
        ("fox", 2, {"target": 2**63}),
        ("fox", 2, {"target": 1001}),
        ("skull", 4, {"first_player": HUGE}),
        ("skye", 3, {"first_player": -HUGE}),
        ("skye", 3, {"anything": [1, {"deep": HUGE}]}),
    ],
)
def test_an_out_of_range_number_in_options_is_a_422(
    stack: Stack, game: str, seats: int, options: dict
) -> None:
    status, body = create(stack, game, seats, options)
    assert status == 422, body
    assert body["code"] == "options/invalid"
    assert all(
        isinstance(v, list) and all(isinstance(m, str) for m in v) for v in body["errors"].values()
    ), body["errors"]


def test_the_longest_fox_game_is_still_allowed(stack: Stack) -> None:
    status, body = create(stack, "fox", 2, {"target": 1000})
    assert status == 201 and body["view"]["target"] == 1000


@pytest.mark.parametrize(
    "options", [{"advanced_variant": 1}, {"first_player": 7}, {"scoring_tiles": ["A"]}]
)
def test_option_errors_are_lists_of_messages(stack: Stack, options: dict) -> None:
    status, body = create(stack, "skye", 2, options)
    assert status == 422
    ((field, messages),) = body["errors"].items()
    assert field in options and messages and all(isinstance(m, str) for m in messages)


@pytest.mark.parametrize(
    "query", ["after=18446744073709551616", f"after={HUGE}", "after=-1", "limit=0"]
)
def test_an_out_of_range_event_cursor_is_a_422(stack: Stack, query: str) -> None:
    _, body = create(stack, "fox", 2, {})
    resp = stack.http.get(
        f"/v1/games/{body['id']}/events?{query}", headers=bearer(body["tokens"][0])
    )
    assert resp.status_code == 422, resp.get_json()
    assert resp.get_json()["code"] == "request/invalid"
    assert "query string" in resp.get_json()["detail"]


def test_a_huge_expected_version_is_a_422_and_changes_nothing(stack: Stack) -> None:
    _, body = create(stack, "fox", 2, {})
    gid, tokens = body["id"], body["tokens"]
    before = view(stack, gid)
    seat = before["to_act"][0]
    card = view(stack, gid, tokens[seat])["hand"][0]
    resp = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": card, "expected_version": HUGE},
        headers=bearer(tokens[seat]),
    )
    assert resp.status_code == 422
    assert view(stack, gid)["version"] == before["version"]


@pytest.mark.parametrize("depth", [900, 2000, 20_000])
def test_a_body_nested_too_deeply_is_a_4xx(stack: Stack, depth: int) -> None:
    body = "[" * depth + "]" * depth
    for path in ("/v1/games", "/v1/games/nope/commands"):
        resp = stack.http.post(path, data=body, content_type="application/json")
        assert 400 <= resp.status_code < 500, (depth, path, resp.status_code)
        assert resp.mimetype == "application/problem+json"


def test_errors_of_nested_fields_are_flat_lists_of_messages(stack: Stack) -> None:
    resp = stack.http.post("/v1/games", json={"game": "fox", "seats": [{"name": ""}, {"bot": "x"}]})
    assert resp.status_code == 422
    errors = resp.get_json()["errors"]
    assert set(errors) == {"seats[0].name", "seats[1].bot"}, errors
    assert all(isinstance(m, str) for v in errors.values() for m in v)
