"""Issue 25, "API and docs": the codes and words a client written from the docs expects, a Fox
card as the docs give it, and one phase for every game that is over."""

from __future__ import annotations

import pytest

from shared.games import fox
from tests.integration.api import WAIT, bearer, problem, send, view
from tests.integration.conftest import Stack

SEATS = {
    "fox": [{"name": "a"}, {"name": "b"}],
    "skull": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
    "skye": [{"name": "a"}, {"name": "b"}],
}


def test_joining_a_seat_the_game_has_not_is_a_seat_not_found(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"open": True}]}
    ).get_json()
    resp = stack.http.post(f"/v1/games/{created['id']}/seats/9/join", json={"name": "late"})
    body = problem(resp, 404, "seat/not_found")
    assert "seat 9" in body["detail"] and "2 seats" in body["detail"], body
    assert view(stack, created["id"])["phase"] == "waiting"  # nothing changed


def test_a_json_list_as_the_body_names_the_body_not_schema(stack: Stack) -> None:
    resp = stack.http.post("/v1/games", json=[{"game": "fox"}])
    body = problem(resp, 422, "request/invalid")
    assert "_schema" not in str(body), body
    assert list(body["errors"]) == ["body"] and "object" in str(body["errors"]["body"])
    # A nested object's own error is keyed by that object's path.
    resp = stack.http.post("/v1/games", json={"game": "fox", "seats": [{}, {"name": "a"}]})
    body = problem(resp, 422, "request/invalid")
    assert list(body["errors"]) == ["seats[0]"], body


def test_a_fixed_seat_count_is_said_as_exactly(stack: Stack) -> None:
    resp = stack.http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}]})
    body = problem(resp, 422, "options/invalid")
    assert "fox needs exactly 2 seats, got 1" in body["detail"], body
    assert "2-2" not in str(body)
    resp = stack.http.post("/v1/games", json={"game": "skull", "seats": [{"name": "a"}]})
    assert "skull needs 3 to 12 seats, got 1" in problem(resp, 422)["detail"]


def test_a_second_client_seed_is_refused_with_words_about_the_seed(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": SEATS["fox"], "fairness": "contributed"}
    ).get_json()
    gid, token = created["id"], created["tokens"][0]
    url = f"/v1/games/{gid}/seats/0/entropy"
    first = stack.http.post(url, json={"client_seed": "mine"}, headers=bearer(token))
    assert first.status_code == 200, first.get_json()
    again = stack.http.post(url, json={"client_seed": "another"}, headers=bearer(token))
    body = problem(again, 422, "fairness/seed_already_sent")
    assert "client seed" in body["detail"] and "first" in body["detail"], body
    assert "new id" not in body["detail"]
    assert view(stack, gid)["fairness"]["client_seeds"][0] == "mine"


def test_a_fox_card_may_be_sent_as_its_card_code(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": SEATS["fox"], "options": {"first_dealer": 1}}
    ).get_json()
    gid, token = created["id"], created["tokens"][0]
    card = view(stack, gid, token)["hand"][0]
    resp = send(stack, gid, token, {"type": "play", "card": fox.card_code(**card)})
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["trick"][0]["card"] == card  # answered in the object form
    # A code out of range names the field.
    later = send(stack, gid, created["tokens"][1], {"type": "play", "card": 33})
    assert "card" in problem(later, 422, "command/invalid")["errors"]


@pytest.mark.parametrize("game", sorted(SEATS))
def test_a_resigned_game_is_in_phase_game_over(stack: Stack, game: str) -> None:
    created = stack.http.post("/v1/games", json={"game": game, "seats": SEATS[game]}).get_json()
    gid, tokens = created["id"], created["tokens"]
    for token in tokens[1:]:
        resp = stack.http.post(
            f"/v1/games/{gid}/commands", json={"type": "resign"}, headers={**bearer(token), **WAIT}
        )
        assert resp.status_code == 200, resp.get_json()
    for token in (None, *tokens):
        doc = view(stack, gid, token)
        assert doc["outcome"] is not None and doc["outcome"]["winners"] == [0]
        assert doc["phase"] == "game_over", (token, doc["phase"])
