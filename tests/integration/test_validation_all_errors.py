"""Issue 37, item 4: a request with several mistakes is told of all of them in one answer
(``errors``: each field's path -> its messages), with the code the mistakes call for, and a
body sent as something other than JSON is told to send JSON. Nothing is created meanwhile."""

from __future__ import annotations

from typing import Any

from tests.integration.api import problem
from tests.integration.conftest import Stack

HINT = "Content-Type: application/json"


def _games(stack: Stack) -> int:
    return int(stack.redis.zcard("games:all"))


def _field_errors(body: dict[str, Any]) -> dict[str, list[str]]:
    errors = body["errors"]
    assert all(
        isinstance(v, list) and v and all(isinstance(m, str) for m in v) for v in errors.values()
    ), errors
    return errors


def test_three_mistakes_in_a_new_game_come_back_at_once(stack: Stack) -> None:
    before = _games(stack)
    body = {
        "game": "fox",
        "seats": [{"name": "ana"}, {"bot": "randum"}, {"name": "cy"}],
        "options": {"targett": 10},
    }
    answer = problem(stack.http.post("/v1/games", json=body), 422, "request/invalid")
    errors = _field_errors(answer)
    assert errors["seats"] == ["exactly 2 seats"], errors
    assert "random" in errors["seats[1].bot"][0], errors
    assert errors["targett"] == ["unknown option"], errors
    for field in ("seats", "seats[1].bot", "targett"):
        assert field in answer["detail"], answer["detail"]
    assert _games(stack) == before


def test_mistakes_the_game_finds_come_back_at_once_as_options_invalid(stack: Stack) -> None:
    before = _games(stack)
    body = {"game": "fox", "seats": [{"name": "a"}] * 3, "options": {"targett": 10}}
    answer = problem(stack.http.post("/v1/games", json=body), 422, "options/invalid")
    errors = _field_errors(answer)
    assert errors == {"seats": ["exactly 2 seats"], "targett": ["unknown option"]}
    assert "fox needs exactly 2 seats, got 3" in answer["detail"], answer["detail"]
    assert "targett" in answer["detail"]
    # A game whose engine reads every option at once names each one at fault.
    body = {
        "game": "skull",
        "seats": [{"name": "a"}] * 2,
        "options": {"next_starter": "dutch", "first_player": 7, "colour": "red"},
    }
    errors = _field_errors(problem(stack.http.post("/v1/games", json=body), 422, "options/invalid"))
    assert {"seats", "next_starter", "first_player", "colour"} <= set(errors), errors
    assert _games(stack) == before


def test_a_field_mistake_and_the_game_s_own_come_back_together(stack: Stack) -> None:
    body = {
        "game": "skull",
        "seats": [{"name": ""}, {"name": "b"}],
        "options": {"next_starter": "dutch"},
        "listed": "maybe",
    }
    errors = _field_errors(problem(stack.http.post("/v1/games", json=body), 422, "request/invalid"))
    assert {"seats[0].name", "listed", "seats", "next_starter"} <= set(errors), errors


def test_an_unknown_game_is_a_field_error_of_game_not_options_invalid(stack: Stack) -> None:
    before = _games(stack)
    body = {"game": "chess", "seats": [{"name": "a"}, {"name": "b"}], "options": {"x": 1}}
    answer = problem(stack.http.post("/v1/games", json=body), 422, "request/invalid")
    errors = _field_errors(answer)
    assert list(errors) == ["game"], errors
    assert all(g in errors["game"][0] for g in ("fox", "skull", "skye")), errors
    # With another mistake: both at once.
    body = {"game": "chess", "seats": [{"bot": "randum"}]}
    errors = _field_errors(problem(stack.http.post("/v1/games", json=body), 422, "request/invalid"))
    assert set(errors) == {"game", "seats[0].bot"}, errors
    assert _games(stack) == before


def test_every_field_of_another_body_at_once(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"open": True}]}
    ).get_json()
    resp = stack.http.post(
        f"/v1/games/{created['id']}/seats/1/join", json={"nam": "bo", "client_seed": ""}
    )
    errors = _field_errors(problem(resp, 422, "request/invalid"))
    assert {"name", "nam", "client_seed"} <= set(errors), errors


def test_a_form_body_is_told_to_send_json(stack: Stack) -> None:
    before = _games(stack)
    # What `curl -d game=fox` sends.
    resp = stack.http.post(
        "/v1/games",
        data="game=fox&seats=ana",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    body = problem(resp, 400, "request/malformed")
    assert HINT in body["detail"] and "application/x-www-form-urlencoded" in body["detail"]
    # JSON sent as text: read, but its mistakes come with the hint too.
    resp = stack.http.post(
        "/v1/games", data='{"game": "fox"}', headers={"Content-Type": "text/plain"}
    )
    body = problem(resp, 422, "request/invalid")
    assert HINT in body["detail"] and "seats" in body["errors"], body
    # The same mistakes sent as JSON: no hint.
    body = problem(stack.http.post("/v1/games", json={"game": "fox"}), 422, "request/invalid")
    assert HINT not in body["detail"], body
    assert _games(stack) == before
    # A command sent as a form, to a real game.
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    resp = stack.http.post(
        f"/v1/games/{created['id']}/commands",
        data="type=play",
        headers={"Authorization": f"Bearer {created['tokens'][0]}",
                 "Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    assert HINT in problem(resp, 400, "request/malformed")["detail"]
