"""The gateway with a real Redis and a worker: Fox games over the Flask test client."""

from __future__ import annotations

import time
from typing import Any

import pytest

from shared.events import Envelope, verify_chain
from tests.integration.api import WAIT, bearer, problem, view
from tests.integration.conftest import AUDITOR, ORGANIZER, Stack


def create(stack: Stack, seats: list[dict[str, Any]] | None = None, **extra: Any) -> dict:
    body = {"game": "fox", "seats": seats or [{"name": "ana"}, {"bot": "random"}], **extra}
    headers = bearer(ORGANIZER) if ("seed" in extra or "deal" in extra.get("options", {})) else {}
    resp = stack.http.post("/v1/games", json=body, headers=headers)
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def two_humans(stack: Stack) -> tuple[str, list[str]]:
    game = create(stack, [{"name": "ana"}, {"name": "ben"}])
    return game["id"], game["tokens"]


def test_create_answers_id_and_a_token_per_human_seat(stack: Stack) -> None:
    game = create(stack)
    assert game["game"] == "fox" and game["id"]
    assert game["tokens"][0] and game["tokens"][1] is None
    assert game["seats"][1]["bot"] == "random" and "token" not in game["seats"][1]
    public = view(stack, game["id"])
    for field in ("game", "version", "phase", "to_act", "legal_commands", "scores", "outcome"):
        assert field in public
    assert public["legal_commands"] == [] and public["outcome"] is None
    assert not public.get("hand")


def test_seat_view_shows_own_hand_and_legal_commands(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    mine = view(stack, gid, tokens[0])
    assert len(mine["hand"]) == 13
    other = view(stack, gid, tokens[1])
    assert not set(map(_card, mine["hand"])) & set(map(_card, other["hand"]))
    actor = mine if 0 in mine["to_act"] else other
    assert actor["legal_commands"] and all(c["type"] == "play" for c in actor["legal_commands"])


def test_whole_game_against_the_random_bot(stack: Stack) -> None:
    game = create(stack, options={"target": 7})
    gid, token = game["id"], game["tokens"][0]
    for _ in range(2000):
        mine = view(stack, gid, token)
        if mine["outcome"] is not None:
            break
        if 0 not in mine["to_act"]:
            continue  # the bot is thinking (it runs inline, so this is rare)
        resp = stack.http.post(
            f"/v1/games/{gid}/commands",
            json=mine["legal_commands"][0],
            headers={**bearer(token), **WAIT},
        )
        assert resp.status_code == 200, resp.get_json()
        assert resp.get_json()["version"] > mine["version"]
    final = view(stack, gid, token)
    assert final["outcome"] is not None and max(final["scores"]) >= 7
    events = stack.http.get(f"/v1/games/{gid}/events", headers=bearer(AUDITOR)).get_json()
    envelopes = [Envelope.from_dict(e) for e in events["events"]]
    assert verify_chain(envelopes, envelopes[-1].data["seed"]) == final["version"]
    assert envelopes[-1].type == "seed_revealed"


def test_command_without_wait_is_202_then_readable(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    v = view(stack, gid, tokens[0])
    seat = v["to_act"][0]
    cmd = view(stack, gid, tokens[seat])["legal_commands"][0]
    resp = stack.http.post(f"/v1/games/{gid}/commands", json=cmd, headers=bearer(tokens[seat]))
    assert resp.status_code == 202
    body = resp.get_json()
    assert body["status"] == "pending" and body["command_id"]
    for _ in range(200):
        status = stack.http.get(body["location"], headers=bearer(tokens[seat])).get_json()
        if status["status"] != "pending":
            break
        import time

        time.sleep(0.02)
    assert status["status"] == "accepted"


def test_same_command_id_is_applied_once(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seat = view(stack, gid)["to_act"][0]
    cmd = {**view(stack, gid, tokens[seat])["legal_commands"][0], "id": "my-1"}
    first = stack.http.post(
        f"/v1/games/{gid}/commands", json=cmd, headers={**bearer(tokens[seat]), **WAIT}
    )
    again = stack.http.post(
        f"/v1/games/{gid}/commands", json=cmd, headers={**bearer(tokens[seat]), **WAIT}
    )
    assert first.status_code == 200 and again.status_code == 200
    assert again.get_json()["command"]["events"] == first.get_json()["command"]["events"]
    assert view(stack, gid)["version"] == first.get_json()["version"]


# ---- bad input: a clear 4xx problem and nothing changes --------------------------------------


def test_unknown_game_type_and_bad_seats(stack: Stack) -> None:
    body = problem(
        stack.http.post("/v1/games", json={"game": "chess", "seats": [{"name": "a"}]}),
        422,
        "request/invalid",
    )
    assert "game" in body["errors"]
    body = problem(
        stack.http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}]}),
        422,
        "options/invalid",
    )
    assert body["detail"]
    body = problem(stack.http.post("/v1/games", json={"seats": []}), 422)
    assert "game" in body["errors"]


def test_malformed_json_is_400(stack: Stack) -> None:
    resp = stack.http.post("/v1/games", data="{nope", content_type="application/json")
    problem(resp, 400)
    gid, tokens = two_humans(stack)
    resp = stack.http.post(
        f"/v1/games/{gid}/commands",
        data="[1,",
        headers=bearer(tokens[0]),
        content_type="application/json",
    )
    problem(resp, 400)


def test_unknown_game_id_is_404(stack: Stack) -> None:
    problem(stack.http.get("/v1/games/nope"), 404, "game/not_found")
    problem(stack.http.get("/v1/games/nope/events"), 404, "game/not_found")


def test_wrong_token_is_401_and_changes_nothing(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    before = view(stack, gid)["version"]
    cmd = {"type": "play", "card": {"suit": "bells", "rank": 1}}
    problem(stack.http.post(f"/v1/games/{gid}/commands", json=cmd, headers=bearer("forged")), 401)
    problem(stack.http.post(f"/v1/games/{gid}/commands", json=cmd), 401)
    problem(stack.http.get(f"/v1/games/{gid}", headers={"Authorization": "Basic x"}), 401)
    assert view(stack, gid)["version"] == before


def test_not_your_turn_is_422(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seat = view(stack, gid)["to_act"][0]
    other = 1 - seat
    card = view(stack, gid, tokens[other])["hand"][0]
    resp = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": card},
        headers={**bearer(tokens[other]), **WAIT},
    )
    problem(resp, 422, "move/not_your_turn")


def test_card_not_in_hand_is_422_naming_the_rule_and_changes_nothing(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seat = view(stack, gid)["to_act"][0]
    other_card = view(stack, gid, tokens[1 - seat])["hand"][0]
    before = view(stack, gid)
    resp = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": other_card},
        headers={**bearer(tokens[seat]), **WAIT},
    )
    body = problem(resp, 422, "move/illegal")
    assert body["rule"]
    assert view(stack, gid) == before


@pytest.mark.parametrize(
    "cmd",
    [
        {"type": "dance"},
        {"type": "play"},
        {"type": "play", "card": {"suit": "hearts", "rank": 3}},
        {"type": "play", "card": {"suit": "bells", "rank": 12}},
        {"type": "play", "card": "bells-3"},
        {"type": "play", "card": {"suit": "bells", "rank": 3}, "expected_version": -1},
        {"card": {"suit": "bells", "rank": 3}},
    ],
)
def test_malformed_commands_are_422(stack: Stack, cmd: dict) -> None:
    gid, tokens = two_humans(stack)
    before = view(stack, gid)["version"]
    body = problem(
        stack.http.post(
            f"/v1/games/{gid}/commands", json=cmd, headers={**bearer(tokens[0]), **WAIT}
        ),
        422,
    )
    assert body["errors"] or body["detail"]
    assert view(stack, gid)["version"] == before


def test_stale_expected_version_is_409(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    v = view(stack, gid)
    seat = v["to_act"][0]
    cmd = {
        **view(stack, gid, tokens[seat])["legal_commands"][0],
        "expected_version": v["version"] - 1,
    }
    resp = stack.http.post(
        f"/v1/games/{gid}/commands", json=cmd, headers={**bearer(tokens[seat]), **WAIT}
    )
    problem(resp, 409, "game/stale_version")
    assert view(stack, gid)["version"] == v["version"]


def test_finished_game_refuses_commands_with_409(stack: Stack) -> None:
    human = create(stack, options={"target": 1})
    gid, token = human["id"], human["tokens"][0]
    while (v := view(stack, gid, token))["outcome"] is None:
        if 0 in v["to_act"]:
            stack.http.post(
                f"/v1/games/{gid}/commands",
                json=v["legal_commands"][0],
                headers={**bearer(token), **WAIT},
            )
    before = v["version"]
    resp = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": {"suit": "bells", "rank": 1}},
        headers={**bearer(token), **WAIT},
    )
    problem(resp, 409, "game/over")
    assert view(stack, gid)["version"] == before


def test_two_bots_play_a_game_to_the_end_and_it_is_scored(stack: Stack) -> None:
    import json
    import time

    game = create(stack, [{"bot": "random"}, {"bot": "random"}], options={"target": 1})
    deadline = time.monotonic() + 30
    while view(stack, game["id"])["outcome"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert view(stack, game["id"])["outcome"] is not None
    # The result is written by the scoring task, after the final view.
    while (result := stack.redis.hget("results:games", game["id"])) is None:
        assert time.monotonic() < deadline + 30, "the finished game was not scored"
        time.sleep(0.05)
    assert json.loads(result)["outcome"]["winners"]


def test_fixed_seed_or_deal_needs_an_organizer_key(stack: Stack) -> None:
    body = {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "seed": "s1"}
    problem(stack.http.post("/v1/games", json=body), 403, "auth/organizer_required")
    ok = stack.http.post("/v1/games", json=body, headers=bearer(ORGANIZER))
    assert ok.status_code == 201
    again = stack.http.post("/v1/games", json=body, headers=bearer(ORGANIZER)).get_json()
    hand_a = view(stack, ok.get_json()["id"], ok.get_json()["tokens"][0])["hand"]
    hand_b = view(stack, again["id"], again["tokens"][0])["hand"]
    assert hand_a == hand_b  # the same seed deals the same cards


def test_deal_option_sets_the_first_deal(stack: Stack) -> None:
    suits = ["bells", "keys", "moons"]
    cards = [{"suit": s, "rank": r} for s in suits for r in range(1, 12)]
    deal = {
        "dealer": 0,
        "hands": [cards[0:13], cards[13:26]],
        "decree": cards[26],
        "deck": cards[27:33],
    }
    game = create(stack, [{"name": "a"}, {"name": "b"}], options={"deal": deal})
    mine = view(stack, game["id"], game["tokens"][0])
    assert sorted(map(_card, mine["hand"])) == sorted(map(_card, cards[0:13]))
    assert _card(mine["decree"]) == _card(cards[26])
    assert mine["dealer"] == 0 and mine["to_act"] == [1]


def test_events_are_redacted_for_seats_and_spectators(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    other_hand = {_card(c) for c in view(stack, gid, tokens[1])["hand"]}
    for headers in (bearer(tokens[0]), {}):
        events = stack.http.get(f"/v1/games/{gid}/events", headers=headers).get_json()["events"]
        text = str([e["data"] for e in events])
        leaked = [c for c in other_hand if _card_repr_in(c, events)]
        assert not leaked, text[:500]
    full = stack.http.get(f"/v1/games/{gid}/events", headers=bearer(AUDITOR)).get_json()["events"]
    assert any(_card_repr_in(c, full) for c in other_hand)
    assert full[0]["type"] == "game_created" and "seed" not in full[0]["data"]


def test_auditor_reads_any_seat_view_but_a_seat_cannot(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seen = stack.http.get(f"/v1/games/{gid}?seat=1", headers=bearer(AUDITOR)).get_json()
    assert seen["hand"] == view(stack, gid, tokens[1])["hand"]
    problem(stack.http.get(f"/v1/games/{gid}?seat=1", headers=bearer(tokens[0])), 403)


def test_healthz_and_openapi(stack: Stack) -> None:
    assert stack.http.get("/healthz").status_code == 200
    spec = stack.http.get("/openapi.json").get_json()
    assert "/v1/games/{game_id}/commands" in spec["paths"]
    problem(stack.http.get("/v1/nothing"), 404)


def _card(c: dict) -> tuple[str, int]:
    return (c["suit"], c["rank"])


def _card_repr_in(card: tuple[str, int], events: list[dict]) -> bool:
    suit, rank = card

    def walk(x: Any) -> bool:
        if isinstance(x, dict):
            if x.get("suit") == suit and x.get("rank") == rank:
                return True
            return any(walk(v) for v in x.values())
        if isinstance(x, list):
            return any(walk(v) for v in x)
        return False

    return any(walk(e["data"]) for e in events)


def test_a_seat_cannot_read_another_seats_command_outcome(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seat = view(stack, gid)["to_act"][0]
    other_card = view(stack, gid, tokens[1 - seat])["hand"][0]
    resp = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": other_card, "id": "try-1"},
        headers={**bearer(tokens[seat]), **WAIT},
    )
    assert resp.status_code == 422
    url = f"/v1/games/{gid}/commands/s{seat}-try-1"
    mine = stack.http.get(url, headers=bearer(tokens[seat])).get_json()
    assert mine["status"] == "rejected" and mine["error"]["rule"]
    theirs = stack.http.get(url, headers=bearer(tokens[1 - seat]))
    assert theirs.status_code == 404 and theirs.get_json()["code"] == "command/not_found"
    assert "card" not in theirs.get_data(as_text=True)


def test_a_command_is_found_by_the_id_its_client_sent(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seat = view(stack, gid)["to_act"][0]
    card = view(stack, gid, tokens[seat])["hand"][0]
    # a card of the other seat's hand is not in ours: rejected
    other = view(stack, gid, tokens[1 - seat])["hand"][0]
    stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": other, "id": "mine-1"},
        headers={**bearer(tokens[seat]), **WAIT},
    )
    got = stack.http.get(f"/v1/games/{gid}/commands/mine-1", headers=bearer(tokens[seat]))
    assert got.status_code == 200
    doc = got.get_json()
    assert doc["command_id"] == f"s{seat}-mine-1" and doc["status"] == "rejected"
    # the stored rejection reads as the problem body the waiting client got
    assert {"type", "title", "status", "detail", "code", "rule"} <= set(doc["error"])
    assert doc["error"]["status"] == 422 and doc["error"]["code"] == "move/illegal"
    waited = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": other, "id": "mine-1"},
        headers={**bearer(tokens[seat]), **WAIT},
    )
    assert doc["error"] == waited.get_json()  # the same problem body as the waiting client's
    stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": card, "id": "mine-2"},
        headers={**bearer(tokens[seat]), **WAIT},
    )
    ok = stack.http.get(f"/v1/games/{gid}/commands/mine-2", headers=bearer(tokens[seat]))
    assert ok.get_json()["status"] == "accepted"


def test_an_unknown_command_is_a_404_not_pending_forever(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    resp = stack.http.get(f"/v1/games/{gid}/commands/never-sent", headers=bearer(tokens[0]))
    assert resp.status_code == 404
    assert resp.headers["Content-Type"].startswith("application/problem+json")


def test_a_command_sent_without_waiting_reads_pending_before_its_outcome(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seat = view(stack, gid)["to_act"][0]
    card = view(stack, gid, tokens[seat])["hand"][0]
    for c in stack.consumers:  # hold the workers so the command stays queued
        c.stop_event.set()
    time.sleep(0.2)
    resp = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "play", "card": card},
        headers=bearer(tokens[seat]),
    )
    assert resp.status_code == 202
    status = stack.http.get(resp.headers["Location"], headers=bearer(tokens[seat]))
    assert status.status_code == 200 and status.get_json()["status"] == "pending"


def test_json_body_without_a_json_content_type_is_read_as_json(stack: Stack) -> None:
    body = '{"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}'
    resp = stack.http.post("/v1/games", data=body, content_type="application/x-www-form-urlencoded")
    assert resp.status_code == 201
    problem(
        stack.http.post(
            "/v1/games", data="game=fox", content_type="application/x-www-form-urlencoded"
        ),
        400,
    )


def test_a_fixed_deal_is_not_shown_to_seats_in_the_creation_event(stack: Stack) -> None:
    suits = ["bells", "keys", "moons"]
    cards = [{"suit": s, "rank": r} for s in suits for r in range(1, 12)]
    deal = {
        "dealer": 0,
        "hands": [cards[0:13], cards[13:26]],
        "decree": cards[26],
        "deck": cards[27:33],
    }
    game = create(stack, [{"name": "a"}, {"name": "b"}], options={"deal": deal})
    for headers in (bearer(game["tokens"][0]), {}):
        feed = stack.http.get(f"/v1/games/{game['id']}/events", headers=headers).get_json()
        created = feed["events"][0]
        assert created["type"] == "game_created"
        assert created["data"]["options"]["deal"] == "hidden"
        assert not _card_repr_in(
            ("keys", 5), [e for e in feed["events"] if e["type"] == "game_created"]
        )
    audit = stack.http.get(f"/v1/games/{game['id']}/events", headers=bearer(AUDITOR)).get_json()
    assert len(audit["events"][0]["data"]["options"]["deal"]["hands"]) == 2


def test_a_seat_finds_its_own_command_whatever_id_another_seat_chose(stack: Stack) -> None:
    gid, tokens = two_humans(stack)
    seat = view(stack, gid)["to_act"][0]
    other = 1 - seat
    # The other seat picks as its id the stored id of this seat's command.
    stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "keep_decree", "id": "x"},
        headers={**bearer(tokens[seat]), **WAIT},
    )
    stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "keep_decree", "id": f"s{seat}-x"},
        headers={**bearer(tokens[other]), **WAIT},
    )
    mine = stack.http.get(f"/v1/games/{gid}/commands/s{seat}-x", headers=bearer(tokens[other]))
    assert mine.status_code == 200
    assert mine.get_json()["command_id"] == f"s{other}-s{seat}-x"
    theirs = stack.http.get(f"/v1/games/{gid}/commands/x", headers=bearer(tokens[other]))
    assert theirs.status_code == 404
