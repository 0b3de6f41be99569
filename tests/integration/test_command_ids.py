"""One command ``id`` sent twice at once with two different bodies (a new user's case): one is
applied and answered 200, the other is a 422 ``request/idempotency_key_reused`` — never both
"accepted" while one alone is applied."""

from __future__ import annotations

import threading
from typing import Any

from tests.integration.api import bearer, view
from tests.integration.conftest import Stack


def _race(stack: Stack, gid: str, token: str, bodies: list[dict[str, Any]]) -> list[Any]:
    """POST ``bodies`` to the game's commands at once (a barrier), each from its own client."""
    answers: list[Any] = [None] * len(bodies)
    start = threading.Barrier(len(bodies))

    def send(i: int) -> None:
        client = stack.app.test_client()
        start.wait(10)
        answers[i] = client.post(f"/v1/games/{gid}/commands", json=bodies[i],
                                 headers={**bearer(token), "Prefer": "wait=10"})  # fmt: skip

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return answers


def test_two_bodies_with_one_id_at_once_apply_one_and_refuse_the_other(stack: Stack) -> None:
    for attempt in range(5):  # several races: the interleaving differs from one to the next
        created = stack.http.post(
            "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
        ).get_json()
        gid, tokens = created["id"], created["tokens"]
        seat = view(stack, gid)["to_act"][0]
        legal = view(stack, gid, tokens[seat])["legal_commands"]
        assert len(legal) >= 2
        before = view(stack, gid)["version"]
        cid = f"same-{attempt}"
        answers = _race(stack, gid, tokens[seat], [{**c, "id": cid} for c in legal[:2]])
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 422], [a.get_json() for a in answers]
        refused = next(a for a in answers if a.status_code == 422).get_json()
        assert refused["code"] == "request/idempotency_key_reused"
        applied = next(a for a in answers if a.status_code == 200).get_json()
        assert view(stack, gid)["version"] == applied["version"] > before
        # One command's events only: every event since names that one id.
        events = stack.http.get(f"/v1/games/{gid}/events?after={before}").get_json()["events"]
        assert {e["command_id"] for e in events} == {f"s{seat}-{cid}"}
