"""Bot seat specs and the suggestion endpoint over the gateway."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.api import bearer, problem, view
from tests.integration.conftest import Stack


def post_game(stack: Stack, seats: list[dict[str, Any]], game: str = "fox") -> Any:
    return stack.http.post("/v1/games", json={"game": game, "seats": seats})


@pytest.mark.parametrize(
    ("seat", "field"),
    [
        ({"bot": "ismcts", "budget_ms": 5}, "seats[1].budget_ms"),
        ({"bot": "ismcts", "iterations": 0}, "seats[1].iterations"),
        ({"bot": "ismcts", "iterations": 10**9}, "seats[1].iterations"),
        ({"bot": "ismcts", "iterations": 10, "budget_ms": 100}, "seats[1].iterations"),
        ({"bot": "heuristic", "iterations": 10}, "seats[1].iterations"),
        ({"bot": "random", "budget_ms": 100}, "seats[1].budget_ms"),
        ({"name": "ana", "iterations": 10}, "seats[1].iterations"),
        ({"bot": "deep-blue"}, "seats[1].bot"),
    ],
)
def test_a_bad_bot_spec_is_a_422_naming_the_field(
    stack: Stack, seat: dict[str, Any], field: str
) -> None:
    body = problem(post_game(stack, [{"name": "ana"}, seat]), 422)
    assert field in body["errors"], body


@pytest.mark.parametrize(
    "seat",
    [{"bot": "heuristic"}, {"bot": "ismcts", "iterations": 50}, {"bot": "ismcts", "budget_ms": 20}],
)
def test_a_bot_spec_is_kept_and_shown_in_the_seats(stack: Stack, seat: dict[str, Any]) -> None:
    resp = post_game(stack, [{"name": "ana"}, seat])
    assert resp.status_code == 201, resp.get_json()
    listed = view(stack, resp.get_json()["id"])["seats"][1]
    assert {k: listed[k] for k in seat} == seat


def test_a_suggestion_is_a_legal_command_for_the_callers_seat(stack: Stack) -> None:
    created = post_game(stack, [{"name": "ana"}, {"name": "ben"}]).get_json()
    gid, tokens = created["id"], created["tokens"]
    seat = view(stack, gid)["to_act"][0]
    mine = view(stack, gid, tokens[seat])
    for query in ("", "?bot=random", "?bot=ismcts&iterations=20"):
        resp = stack.http.get(f"/v1/games/{gid}/suggestion{query}", headers=bearer(tokens[seat]))
        assert resp.status_code == 200, resp.get_json()
        body = resp.get_json()
        assert body["command"] in mine["legal_commands"]
        assert body["version"] == mine["version"]
    again = stack.http.get(
        f"/v1/games/{gid}/suggestion?bot=ismcts&iterations=20", headers=bearer(tokens[seat])
    ).get_json()
    assert again == body  # the same view and budget give the same hint


def test_a_suggestion_needs_a_seat_to_act(stack: Stack) -> None:
    created = post_game(stack, [{"name": "ana"}, {"name": "ben"}]).get_json()
    gid, tokens = created["id"], created["tokens"]
    seat = view(stack, gid)["to_act"][0]
    problem(stack.http.get(f"/v1/games/{gid}/suggestion"), 401, "auth/seat_required")
    waiting = stack.http.get(f"/v1/games/{gid}/suggestion", headers=bearer(tokens[1 - seat]))
    problem(waiting, 422, "move/not_your_turn")
    bad = stack.http.get(
        f"/v1/games/{gid}/suggestion?bot=ismcts&budget_ms=99999", headers=bearer(tokens[seat])
    )
    assert "budget_ms" in problem(bad, 422)["errors"]
    problem(stack.http.get("/v1/games/nope/suggestion", headers=bearer(tokens[seat])), 404)
