"""Abuse limits: past its limit a client gets a 429 problem with Retry-After; another client,
and organizer keys, are not held back."""

from __future__ import annotations

import json
import time
from typing import Any

import redis
from flask.testing import FlaskClient

from services.gateway.app import create_app
from shared import keys
from shared.adapters import retention
from shared.app.ports import NullDispatcher
from shared.bootstrap import bootstrap
from shared.config import Settings
from tests.integration.conftest import AUDITOR, ORGANIZER, Stack, consuming


def test_creating_past_the_limit_is_a_429_with_retry_after(
    redis_url: str, redis_client: redis.Redis
) -> None:
    settings = Settings(
        redis_url=redis_url,
        organizer_keys=frozenset({ORGANIZER}),
        rate_limits={"create": "3/minute", "command": "2/second"},
    )
    app = create_app(settings, client=redis_client, dispatcher=NullDispatcher())
    body = {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    client = app.test_client()
    answers = [client.post("/v1/games", json=body).status_code for _ in range(4)]
    assert answers == [201, 201, 201, 429]
    limited = client.post("/v1/games", json=body)
    assert limited.status_code == 429 and limited.get_json()["code"] == "request/rate_limited"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    # Another address has its own count; an organizer key is not limited.
    other = client.post("/v1/games", json=body, environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert other.status_code == 201
    org = client.post("/v1/games", json=body, headers={"Authorization": f"Bearer {ORGANIZER}"})
    assert org.status_code == 201
    # Commands are counted per token.
    game = other.get_json()
    moves = [
        client.post(
            f"/v1/games/{game['id']}/commands",
            json={"type": "keep_decree"},
            headers={"Authorization": f"Bearer {game['tokens'][0]}"},
        ).status_code
        for _ in range(3)
    ]
    assert moves[:2] == [202, 202] and moves[2] == 429


def test_limits_are_on_by_default_and_can_be_switched_off() -> None:
    assert Settings.from_env({}).rate_limits["create"] == "30/minute"
    assert Settings.from_env({"TABLETOP_RATE_LIMITS": "off"}).rate_limits == {}
    assert Settings.from_env({"TABLETOP_RATE_CREATE": "5/hour"}).rate_limits["create"] == "5/hour"


def test_suggestions_are_limited_per_token(redis_url: str, redis_client: redis.Redis) -> None:
    settings = Settings(redis_url=redis_url, rate_limits={"suggest": "2/minute"})
    app = create_app(settings, client=redis_client, dispatcher=NullDispatcher())
    client = app.test_client()
    game = client.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    auth = {"Authorization": f"Bearer {game['tokens'][0]}"}
    codes = [
        client.get(f"/v1/games/{game['id']}/suggestion?bot=random", headers=auth).status_code
        for _ in range(3)
    ]
    assert 429 not in codes[:2] and codes[2] == 429


def test_audits_and_replays_are_limited_per_address_but_not_for_auditors(
    redis_url: str, redis_client: redis.Redis
) -> None:
    settings = Settings(
        redis_url=redis_url,
        auditor_keys=frozenset({AUDITOR}),
        rate_limits={"audit": "2/minute", "replay": "2/minute"},
    )
    app = create_app(settings, client=redis_client, dispatcher=NullDispatcher())
    client = app.test_client()
    game = client.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    key = {"Authorization": f"Bearer {AUDITOR}"}
    for path in (f"/v1/games/{game['id']}/audit", f"/web/replay/{game['id']}"):
        codes = [client.get(path).status_code for _ in range(3)]
        # A running game's log is not open to anyone: refused, and still counted.
        assert 429 not in codes[:2] and codes[2] == 429, (path, codes)
        problem = client.get(path).get_json()
        assert problem["code"] == "request/rate_limited" and problem["status"] == 429
        assert client.get(path, headers=key).status_code == 200, path
        other = client.get(path, environ_base={"REMOTE_ADDR": "10.0.0.7"})
        assert other.status_code != 429


def test_commands_are_limited_per_address_across_a_games_tokens(
    redis_url: str, redis_client: redis.Redis
) -> None:
    """Issue 23, item 7: six seat tokens of one game, each under its own limit, share one
    count for their address (a flood from many tokens is still a flood); past it a 429, for a
    leave too, while another address plays on."""
    settings = Settings(
        redis_url=redis_url, rate_limits={"command": "3/minute", "command_addr": "8/minute"}
    )
    app = create_app(settings, client=redis_client, dispatcher=NullDispatcher())
    client = app.test_client()
    game = client.post(
        "/v1/games", json={"game": "skull", "seats": [{"name": f"p{i}"} for i in range(6)]}
    ).get_json()
    gid, tokens = game["id"], game["tokens"]
    codes = [
        client.post(
            f"/v1/games/{gid}/commands",
            json={"type": "bid", "count": 1},
            headers={"Authorization": f"Bearer {token}"},
        ).status_code
        for _ in range(2)  # two per token: each token stays under its 3/minute
        for token in tokens
    ]
    assert codes == [202] * 8 + [429] * 4, codes
    limited = client.post(
        f"/v1/games/{gid}/commands",
        json={"type": "bid", "count": 1},
        headers={"Authorization": f"Bearer {tokens[5]}"},
    )
    assert limited.status_code == 429
    problem = limited.get_json()
    assert problem["code"] == "request/rate_limited" and problem["status"] == 429
    assert limited.headers["Content-Type"] == "application/problem+json"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    # A leave is a command too: held back with the rest (not sent to a worker to be refused).
    leave = client.post(
        f"/v1/games/{gid}/seats/1/leave", headers={"Authorization": f"Bearer {tokens[1]}"}
    )
    assert leave.status_code == 429 and leave.get_json()["code"] == "request/rate_limited"
    # Another address has its own count.
    other = client.post(
        f"/v1/games/{gid}/commands",
        json={"type": "bid", "count": 1},
        headers={"Authorization": f"Bearer {tokens[4]}"},
        environ_base={"REMOTE_ADDR": "10.0.0.8"},
    )
    assert other.status_code == 202


def test_the_per_address_command_limit_is_on_by_default() -> None:
    assert Settings.from_env({}).rate_limits["command_addr"] == "30/second"
    env = {"TABLETOP_RATE_COMMAND_ADDR": "5/second"}
    assert Settings.from_env(env).rate_limits["command_addr"] == "5/second"


# How long README ("Configuration", TABLETOP_REJECTED_TTL) promises a refused command's
# outcome stays readable, and so how long it may stay in Redis.
DOCUMENTED_REJECTED_TTL = 600


def _keys_and_ttls(client: redis.Redis) -> dict[bytes, int]:
    return {k: int(client.ttl(k)) for k in client.scan_iter(count=1000)}


def _wait_for_status(http: FlaskClient, path: str, token: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    doc: dict[str, Any] = {}
    while time.monotonic() < deadline:
        doc = http.get(path, headers={"Authorization": f"Bearer {token}"}).get_json()
        if doc.get("status") == status:
            return doc
        time.sleep(0.05)
    raise AssertionError(f"{path} never became {status}: {doc}")


def test_a_rejected_command_leaves_only_short_lived_small_keys(stack: Stack) -> None:
    """Issue 23, item 7: what a refused command writes (its outcome, the reply nobody waited
    for) expires within the documented time, its stored outcome does not repeat the command id
    (the key names it), and its stream entry goes at the next trim; an accepted command's
    outcome keeps its day."""
    game = stack.http.post(
        "/v1/games", json={"game": "skull", "seats": [{"name": f"p{i}"} for i in range(3)]}
    ).get_json()
    gid, tokens = game["id"], game["tokens"]
    [starter] = stack.http.get(f"/v1/games/{gid}").get_json()["to_act"]
    seat = (starter + 1) % 3  # not this seat's turn: its bid is refused by the worker
    before = _keys_and_ttls(stack.redis)
    client_id = "x" * 100  # the longest id a client may send
    padding = "y" * 30_000  # fields the engine ignores, up to the 64 KiB body limit
    sent = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "bid", "count": 1, "id": client_id, "padding": padding},
        headers={"Authorization": f"Bearer {tokens[seat]}"},
    )
    assert sent.status_code == 202
    cid = f"s{seat}-{client_id}"
    # Only the command as the engine reads it travels on the stream.
    stream = keys.command_stream("skull", 0)
    [entry] = [f for _, f in stack.redis.xrange(stream) if f[b"id"] == cid.encode()]
    assert json.loads(entry[b"body"]) == {"type": "bid", "count": 1}
    doc = _wait_for_status(stack.http, sent.headers["Location"], tokens[seat], "rejected")
    # The client still reads the whole answer: its id, and the problem a waiting client got.
    assert doc["command_id"] == cid
    assert doc["error"]["code"] == "move/not_your_turn" and doc["error"]["status"] == 422
    # The game's keys the refusal added (the consumers' own heartbeat is none of them).
    new = {
        k: ttl
        for k, ttl in _keys_and_ttls(stack.redis).items()
        if k not in before and gid.encode() in k
    }
    result = keys.result(gid, cid).encode()
    assert result in new and keys.reply(gid, cid).encode() in new, new
    for key, ttl in new.items():
        assert 0 < ttl <= DOCUMENTED_REJECTED_TTL, (key, ttl)
    stored = stack.redis.get(result)
    assert stored is not None and client_id.encode() not in stored, stored
    # The stream entry was acknowledged: a trim takes it.
    retention.trim_acknowledged(stack.redis, stream, exact=True)
    assert stack.redis.xlen(stream) == 0
    # An accepted command's outcome keeps its day.
    placed = stack.http.post(
        f"/v1/games/{gid}/commands",
        json={"type": "place", "disc": "flower", "id": "ok"},
        headers={"Authorization": f"Bearer {tokens[starter]}", "Prefer": "wait=10"},
    )
    assert placed.status_code == 200, placed.get_json()
    assert stack.redis.ttl(keys.result(gid, f"s{starter}-ok")) > DOCUMENTED_REJECTED_TTL


def test_a_rejected_commands_outcome_expires_after_its_ttl(
    redis_url: str, redis_client: redis.Redis
) -> None:
    """With ``TABLETOP_REJECTED_TTL`` (here 1 s) the outcome of a refusal is gone after it:
    the command is then unknown (404), as any other."""
    settings = Settings.from_env({"REDIS_URL": redis_url, "TABLETOP_REJECTED_TTL": "1",
                                  "TABLETOP_RATE_LIMITS": "off"})  # fmt: skip
    assert settings.rejected_ttl == 1
    worker_client = redis.Redis.from_url(redis_url)
    worker_app = bootstrap(settings, client=worker_client, dispatcher=NullDispatcher())
    app = create_app(settings, client=redis_client, dispatcher=NullDispatcher())
    http = app.test_client()
    game = http.post(
        "/v1/games", json={"game": "skull", "seats": [{"name": f"p{i}"} for i in range(3)]}
    ).get_json()
    gid = game["id"]
    [starter] = http.get(f"/v1/games/{gid}").get_json()["to_act"]
    seat = (starter + 1) % 3
    token = game["tokens"][seat]
    try:
        with consuming(worker_client, worker_app, name="ttl", shards=settings.shards):
            refused = http.post(
                f"/v1/games/{gid}/commands",
                json={"type": "bid", "count": 1, "id": "b1"},
                headers={"Authorization": f"Bearer {token}", "Prefer": "wait=10"},
            )
            assert refused.status_code == 422
            left = redis_client.pttl(keys.result(gid, f"s{seat}-b1"))
            assert left == -2 or 0 < left <= 1000, left  # -2: gone already; -1 would be never
            deadline = time.monotonic() + 30
            answer = None
            while time.monotonic() < deadline:
                answer = http.get(f"/v1/games/{gid}/commands/b1",
                                  headers={"Authorization": f"Bearer {token}"})  # fmt: skip
                if answer.status_code == 404:
                    break
                time.sleep(0.1)
            assert answer is not None and answer.status_code == 404, answer.get_json()
    finally:
        worker_client.close()


def test_a_seat_token_may_send_a_burst_then_its_rate(
    redis_url: str, redis_client: redis.Redis
) -> None:
    """Issue 25: commands per seat token are a token bucket: a bot playing fast over REST may
    send a burst (``command_burst``) at any speed, then the bucket refills at the rate; past
    it a 429 with Retry-After, and the per-address limit still counts every command."""
    settings = Settings(
        redis_url=redis_url,
        rate_limits={"command": "2/second", "command_burst": "12", "command_addr": "14/minute"},
    )
    app = create_app(settings, client=redis_client, dispatcher=NullDispatcher())
    client = app.test_client()
    game = client.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    gid, tokens = game["id"], game["tokens"]

    def command(token: str, addr: str = "127.0.0.1") -> Any:
        return client.post(
            f"/v1/games/{gid}/commands",
            json={"type": "keep_decree"},
            headers={"Authorization": f"Bearer {token}"},
            environ_base={"REMOTE_ADDR": addr},
        )

    burst = [command(tokens[0], "10.0.0.1").status_code for _ in range(12)]
    assert burst == [202] * 12, burst  # a moving window of 2/second refused the third
    limited = command(tokens[0], "10.0.0.1")
    assert limited.status_code == 429 and limited.get_json()["code"] == "request/rate_limited"
    assert int(limited.headers["Retry-After"]) == 1  # one token comes back in half a second
    deadline = time.monotonic() + 10
    while (answer := command(tokens[0], "10.0.0.1").status_code) == 429:
        assert time.monotonic() < deadline, "the bucket never refilled"
        time.sleep(0.05)
    assert answer == 202
    # The per-address limit stays a moving window over every token of the address: 13 of its
    # 14 a minute are spent, so another token's second command is refused, its bucket full.
    assert command(tokens[1], "10.0.0.1").status_code == 202
    assert command(tokens[1], "10.0.0.1").status_code == 429
    assert command(tokens[1], "10.0.0.2").status_code == 202


def test_the_command_burst_is_on_by_default() -> None:
    assert Settings.from_env({}).rate_limits["command"] == "20/second"
    assert Settings.from_env({}).rate_limits["command_burst"] == "120"
    env = {"TABLETOP_RATE_COMMAND_BURST": "40"}
    assert Settings.from_env(env).rate_limits["command_burst"] == "40"
