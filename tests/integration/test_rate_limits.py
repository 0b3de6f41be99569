"""Abuse limits: past its limit a client gets a 429 problem with Retry-After; another client,
and organizer keys, are not held back."""

from __future__ import annotations

import redis

from services.gateway.app import create_app
from shared.app.ports import NullDispatcher
from shared.config import Settings
from tests.integration.conftest import AUDITOR, ORGANIZER


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
