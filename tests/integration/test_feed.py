"""The live feed: a first message that brings the caller up to date, one message per new
version with the events since the last one, resume without a gap, and roles as everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.api import act, bearer, send, view
from tests.integration.conftest import AUDITOR, Stack


def stream(stack: Stack, gid: str, headers: dict[str, str] | None = None, query: str = "") -> Any:
    resp = stack.http.get(f"/v1/games/{gid}/feed{query}", headers=headers or {}, buffered=False)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    return resp


def messages(resp: Any) -> Iterator[dict[str, Any]]:
    """Parsed ``update`` messages (``id`` and ``data``); comments are skipped."""
    buffer = ""
    for chunk in resp.response:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            lines = [line for line in block.splitlines() if not line.startswith(":")]
            if not lines:
                continue
            fields = dict(line.split(": ", 1) for line in lines)
            assert fields["event"] == "update"
            yield {"id": int(fields["id"]), **json.loads(fields["data"])}


def fox(stack: Stack) -> tuple[str, list[str]]:
    created = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    return created["id"], created["tokens"]


def move(stack: Stack, gid: str, tokens: list[str]) -> None:
    seat = view(stack, gid)["to_act"][0]
    mine = view(stack, gid, tokens[seat])
    resp = stack.http.post(f"/v1/games/{gid}/commands", json=mine["legal_commands"][0],
                           headers={**bearer(tokens[seat]), "Prefer": "wait=5"})  # fmt: skip
    assert resp.status_code == 200


def test_updates_arrive_in_order_without_a_gap(stack: Stack) -> None:
    gid, tokens = fox(stack)
    resp = stream(stack, gid, bearer(tokens[0]))
    feed = messages(resp)
    first = next(feed)
    assert first["id"] == first["version"] == view(stack, gid)["version"]
    assert [e["version"] for e in first["events"]] == list(range(1, first["version"] + 1))
    assert first["view"]["seat"] == 0 and first["view"]["hand"]
    seen = first["version"]
    for _ in range(3):
        move(stack, gid, tokens)
        update = next(feed)
        assert [e["version"] for e in update["events"]] == list(range(seen + 1, update["id"] + 1))
        assert update["view"]["version"] == update["id"]
        seen = update["id"]
    resp.close()
    # A reconnect resumes after the last version it saw: nothing missed, nothing twice.
    move(stack, gid, tokens)
    again = next(messages(stream(stack, gid, {**bearer(tokens[0]), "Last-Event-ID": str(seen)})))
    assert again["events"][0]["version"] == seen + 1
    by_query = next(messages(stream(stack, gid, query=f"?after={seen}&access_token={tokens[1]}")))
    assert by_query["view"]["seat"] == 1 and by_query["events"][0]["version"] == seen + 1


def test_a_spectator_feed_shows_no_hand_and_an_auditor_feed_everything(stack: Stack) -> None:
    gid, tokens = fox(stack)
    public = next(messages(stream(stack, gid)))
    assert public["view"]["hand"] is None
    dealt = next(e for e in public["events"] if e["type"] == "round_dealt")
    assert dealt["data"]["hands"] == [None, None] and dealt["data"]["deck"] is None
    full = next(messages(stream(stack, gid, bearer(AUDITOR))))
    dealt = next(e for e in full["events"] if e["type"] == "round_dealt")
    assert all(dealt["data"]["hands"]) and dealt["data"]["deck"]
    bad = stack.http.get(f"/v1/games/{gid}/feed", headers={"Last-Event-ID": "x"})
    assert bad.status_code == 400
    assert stack.http.get(f"/v1/games/{gid}/feed?access_token=nope").status_code == 401


def seat_secrets(message: dict[str, Any], seat: int) -> list[Any]:
    """What a message shows that only ``seat`` may know: its hand and stack in the view, the
    disc of its ``disc_placed`` events."""
    shown: list[Any] = []
    if message["view"].get("seat") == seat:
        shown += [v for v in (message["view"].get("hand"), message["view"].get("stack")) if v]
    shown += [
        e["data"]["disc"]
        for e in message["events"]
        if e["type"] == "disc_placed" and e["data"].get("seat") == seat and e["data"].get("disc")
    ]
    return shown


@pytest.mark.timeout(120)  # a feed that neither ends nor leaks would wait on heartbeats
def test_a_left_seats_feed_ends_before_the_next_occupant_plays(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games",
        json={"game": "skull", "seats": [{"name": "host"}, {"open": True}, {"open": True}],
              "options": {"first_player": 1}},
    )  # fmt: skip
    assert created.status_code == 201, created.get_json()
    gid = created.get_json()["id"]
    joined = stack.http.post(f"/v1/games/{gid}/seats/1/join", json={"name": "ana"})
    token = joined.get_json()["token"]
    feed = messages(stream(stack, gid, query=f"?access_token={token}"))
    assert next(feed)["view"]["seat"] == 1
    left = stack.http.post(f"/v1/games/{gid}/seats/1/leave", headers=bearer(token))
    assert left.status_code == 200, left.get_json()
    assert stack.http.get(f"/v1/games/{gid}", headers=bearer(token)).status_code == 401
    # Someone else takes seat 1, the last seat deals, and the newcomer places a skull.
    other = stack.http.post(f"/v1/games/{gid}/seats/1/join", json={"name": "bob"}).get_json()
    assert other["seat"] == 1
    assert stack.http.post(f"/v1/games/{gid}/seats/2/join", json={"name": "cyd"}).status_code == 200
    placed = act(stack, gid, other["token"], {"type": "place", "disc": "skull"})
    assert placed["stack"] == ["skull"]
    for message in feed:  # the loop ends when the stream does
        assert seat_secrets(message, 1) == [], message
        assert message["version"] < placed["version"], "the feed of a token given up goes on"


@pytest.mark.timeout(120)
def test_a_taken_over_seats_feed_ends(stack: Stack) -> None:
    created = stack.http.post(
        "/v1/games",
        json={"game": "skull", "seats": [{"name": "host"}, {"name": "ana"}, {"bot": "random"}],
              "options": {"first_player": 0}},
    ).get_json()  # fmt: skip
    gid, token = created["id"], created["tokens"][1]
    feed = messages(stream(stack, gid, bearer(token)))
    first = next(feed)
    assert first["view"]["seat"] == 1 and first["view"]["hand"]
    resigned = send(stack, gid, token, {"type": "resign"})
    assert resigned.status_code == 200, resigned.get_json()
    assert view(stack, gid)["seats"][1]["taken_over"] == "resigned"
    # The bot plays seat 1 from now on: the host places, and the bots take their turns.
    act(stack, gid, created["tokens"][0], {"type": "place", "disc": "flower"})
    after = view(stack, gid)["version"]
    for message in feed:
        assert seat_secrets(message, 1) == [], message
        assert message["version"] < after, "the feed of a seat taken over goes on"
