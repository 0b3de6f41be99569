"""Helpers for driving the gateway through the Flask test client in integration tests."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Stack

WAIT = {"Prefer": "wait=10"}


def bearer(token: str) -> dict[str, str]:
    """The Authorization header for a seat token or a key."""
    return {"Authorization": f"Bearer {token}"}


def view(stack: Stack, gid: str, token: str | None = None) -> dict:
    """The view the token may read (the public view without one); asserts 200."""
    resp = stack.http.get(f"/v1/games/{gid}", headers=bearer(token) if token else {})
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


def events(stack: Stack, gid: str, token: str | None = None) -> list[dict]:
    """Every event the token may read; asserts 200."""
    resp = stack.http.get(
        f"/v1/games/{gid}/events?limit=10000", headers=bearer(token) if token else {}
    )
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()["events"]


def send(stack: Stack, gid: str, token: str, command: dict[str, Any]) -> Any:
    """POST a command and wait for its outcome; returns the response."""
    return stack.http.post(
        f"/v1/games/{gid}/commands", json=command, headers={**bearer(token), **WAIT}
    )


def act(stack: Stack, gid: str, token: str, command: dict[str, Any]) -> dict:
    """Send ``command`` and wait: 200 with the seat's new view at a newer version."""
    before = view(stack, gid)["version"]
    resp = send(stack, gid, token, command)
    assert resp.status_code == 200, (command, resp.get_json())
    mine = resp.get_json()
    assert mine["version"] > before
    return mine


def problem(resp: Any, status: int, code: str | None = None) -> dict:
    """Asserts an application/problem+json answer with ``status`` (and ``code``)."""
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    body = resp.get_json()
    for field in ("type", "title", "status", "detail"):
        assert field in body
    assert body["status"] == status
    if code:
        assert body["code"] == code
    return body


def play_out(stack: Stack, gid: str, tokens: dict[int, str], deadline_s: float = 120.0) -> dict:
    """Each seat in ``tokens`` sends its first legal command whenever it is to act (bots and
    the clock play the others) until the game is over; the final public view. Waits on the
    game, never a fixed time (a busy 2-core machine)."""
    import time

    deadline = time.monotonic() + deadline_s
    while True:
        public = view(stack, gid)
        if public["outcome"] is not None:
            return public
        assert time.monotonic() < deadline, f"{gid} did not end: still at {public['version']}"
        mine = [s for s in public["to_act"] if s in tokens]
        if not mine:
            time.sleep(0.02)  # a bot's or the clock's turn: poll the game again
            continue
        seen = view(stack, gid, tokens[mine[0]])
        if seen["version"] == public["version"] and seen["legal_commands"]:
            send(stack, gid, tokens[mine[0]], seen["legal_commands"][0])
