"""The live feed: a first message that brings the caller up to date, one message per new
version with the events since the last one, resume without a gap, and roles as everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.integration.api import bearer, view
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
