"""Who sees and who seats a registered bot (issue 35): its webhook ``url`` only to its own key
or an organizer key; its ``seatable_by`` (``anyone``, ``owner``, ``organizers``) enforced where
a game or a tournament seats a ``{"bot_id"}``, a refusal being a 403 ``bot/not_seatable``
problem with nothing created; and ``Idempotency-Key`` on ``POST /v1/bots``: a retry answers
the same bot and key, and registers no second one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from services.gateway.app import create_app
from shared import keys
from shared.app.bot_turns import bot_key, key_hash
from shared.app.ports import NullDispatcher
from shared.config import Settings
from tests.integration.api import bearer, problem
from tests.integration.test_bot_key_secrecy import values_of

ORGANIZER = "organizer-key-1"
HOOK = "http://127.0.0.1:9/bot"


@pytest.fixture
def http(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FlaskClient]:
    """The gateway alone (nothing plays: a game created is only created)."""
    monkeypatch.chdir(tmp_path)  # its bot secret in ./run/bot-secret here
    settings = Settings(redis_url=redis_url, organizer_keys=frozenset({ORGANIZER}), rate_limits={})
    app = create_app(settings, client=redis.Redis.from_url(redis_url), dispatcher=NullDispatcher())
    yield app.test_client()


def register(http: FlaskClient, headers: dict[str, str] | None = None, **extra: Any) -> Any:
    body = {"name": "hookbot", "games": ["fox"], "transport": "webhook", "url": HOOK, **extra}
    return http.post("/v1/bots", json=body, headers=headers or {})


def registered(http: FlaskClient, **extra: Any) -> dict[str, Any]:
    resp = register(http, **extra)
    assert resp.status_code == 201, resp.get_json()
    doc: dict[str, Any] = resp.get_json()
    return doc


def new_game(http: FlaskClient, bot_id: str, token: str | None = None) -> Any:
    seats = [{"name": "ana"}, {"bot_id": bot_id}]
    return http.post("/v1/games", json={"game": "fox", "seats": seats},
                     headers=bearer(token) if token else {})  # fmt: skip


def new_tournament(http: FlaskClient, bot_id: str) -> Any:
    body = {"game": "fox", "games": 2, "options": {"target": 1},
            "entrants": [{"bot": "random"}, {"bot_id": bot_id}]}  # fmt: skip
    return http.post("/v1/tournaments", json=body, headers=bearer(ORGANIZER))


def test_a_webhooks_url_is_shown_to_its_own_key_and_organizers_only(http: FlaskClient) -> None:
    bot = registered(http)
    other = registered(http, name="other")
    assert bot["url"] == HOOK  # the answer to its registration: its owner's
    for token, shown in [(None, False), (other["key"], False), ("tbk_" + "0" * 64, False),
                         (bot["key"], True), (ORGANIZER, True)]:  # fmt: skip
        headers = bearer(token) if token else {}
        one = http.get(f"/v1/bots/{bot['id']}", headers=headers)
        assert one.status_code == 200, one.get_json()
        listed = http.get("/v1/bots", headers=headers).get_json()["bots"]
        mine = next(b for b in listed if b["id"] == bot["id"])
        for doc in (one.get_json(), mine):
            assert ("url" in doc) is shown, (token, doc)
            assert doc["name"] == "hookbot" and doc["transport"] == "webhook"
        assert ("url" in next(b for b in listed if b["id"] == other["id"])) is (
            token in (other["key"], ORGANIZER)
        )


def test_seatable_by_defaults_to_anyone_and_is_shown(http: FlaskClient) -> None:
    bot = registered(http)
    assert bot["seatable_by"] == "anyone"
    assert http.get(f"/v1/bots/{bot['id']}").get_json()["seatable_by"] == "anyone"
    assert new_game(http, bot["id"]).status_code == 201
    assert new_tournament(http, bot["id"]).status_code == 201


@pytest.mark.parametrize(
    ("seatable_by", "allowed"),
    [("owner", {"own key"}), ("organizers", {"own key", "organizer"}),
     ("anyone", {"own key", "organizer", "nobody", "another bot's key"})],
)  # fmt: skip
def test_seatable_by_decides_who_seats_the_bot_in_a_game(
    http: FlaskClient, redis_client: redis.Redis, seatable_by: str, allowed: set[str]
) -> None:
    bot = registered(http, seatable_by=seatable_by)
    assert bot["seatable_by"] == seatable_by
    other = registered(http, name="other")
    tokens = {"nobody": None, "organizer": ORGANIZER, "another bot's key": other["key"],
              "own key": bot["key"]}  # fmt: skip
    for who, token in tokens.items():
        before = redis_client.dbsize()
        resp = new_game(http, bot["id"], token)
        if who in allowed:
            assert resp.status_code == 201, (who, resp.get_json())
            continue
        body = problem(resp, 403, "bot/not_seatable")
        assert body["type"] == "/problems/bot/not_seatable"
        assert body["errors"] == {"seats[1].bot_id": [body["errors"]["seats[1].bot_id"][0]]}
        assert seatable_by in body["errors"]["seats[1].bot_id"][0]
        assert redis_client.dbsize() == before, who  # nothing half-created


def test_a_tournament_seats_organizers_bots_not_owner_only_ones(
    http: FlaskClient, redis_client: redis.Redis
) -> None:
    owners = registered(http, seatable_by="owner")
    before = redis_client.dbsize()
    body = problem(new_tournament(http, owners["id"]), 403, "bot/not_seatable")
    assert "entrants[1].bot_id" in body["errors"]
    assert redis_client.dbsize() == before  # no tournament stored
    assert http.get("/v1/tournaments", headers=bearer(ORGANIZER)).get_json()["tournaments"] == []
    organizers = registered(http, seatable_by="organizers")
    assert new_tournament(http, organizers["id"]).status_code == 201


def test_a_bot_registered_before_seatable_by_is_seatable_by_anyone(
    http: FlaskClient, redis_client: redis.Redis
) -> None:
    doc = {"bot_id": "b0ld", "name": "old", "games": ["fox"], "transport": "webhook",
           "url": HOOK, "budget_ms": 500, "on_failure": "random", "key_sha256": "ab" * 32,
           "created_at": "2026-01-01T00:00:00.000Z", "ladder": False}  # fmt: skip
    redis_client.hset(keys.bot("b0ld"), mapping={"doc": json.dumps(doc), "retired": "0"})
    redis_client.zadd(keys.BOTS, {"b0ld": 1.0})
    assert http.get("/v1/bots/b0ld").get_json()["seatable_by"] == "anyone"
    assert new_game(http, "b0ld").status_code == 201


@pytest.mark.parametrize("value", ["nobody", "", 1, None, ["organizer-key-1"], {"owner": True}])
def test_a_bad_seatable_by_is_a_422_naming_it(http: FlaskClient, value: Any) -> None:
    body = problem(register(http, seatable_by=value), 422)
    assert "seatable_by" in body["errors"], body


def test_an_unknown_bot_key_creates_no_game(http: FlaskClient) -> None:
    bot = registered(http, seatable_by="owner")
    problem(new_game(http, bot["id"], "tbk_" + "1" * 64), 401, "auth/invalid_token")


def test_a_registration_retried_with_its_idempotency_key_answers_the_same_bot(
    http: FlaskClient, redis_client: redis.Redis
) -> None:
    first = register(http, {"Idempotency-Key": "reg-1"})
    assert first.status_code == 201, first.get_json()
    again = register(http, {"Idempotency-Key": "reg-1"})
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()  # the same id, the same key
    assert again.headers["Location"] == first.headers["Location"]
    secret = http.application.extensions["tabletop"].ports.bots.secret()
    assert first.get_json()["key"] == bot_key(secret, first.get_json()["id"])
    assert [b["id"] for b in http.get("/v1/bots").get_json()["bots"]] == [first.get_json()["id"]]
    # What is kept of the answer (in Redis) holds no key, nor its hash.
    key = first.get_json()["key"]
    records = list(redis_client.scan_iter(keys.idempotency("*")))
    assert records
    for name in records:
        for value in [redis_client.dump(name) or b"", *values_of(redis_client, name)]:
            assert key.encode() not in value and key_hash(key).encode() not in value
    other = register(http, {"Idempotency-Key": "reg-1"}, name="another")
    problem(other, 422, "request/idempotency_key_reused")
    fresh = register(http, {"Idempotency-Key": "reg-2"})
    assert fresh.status_code == 201 and fresh.get_json()["id"] != first.get_json()["id"]
    assert "Idempotent-Replayed" not in fresh.headers


def test_a_refused_registration_is_replayed_as_refused(http: FlaskClient) -> None:
    first = register(http, {"Idempotency-Key": "bad-1"}, url="http://example.com/hook")
    problem(first, 422, "bot/webhook_not_allowed")
    again = register(http, {"Idempotency-Key": "bad-1"}, url="http://example.com/hook")
    problem(again, 422, "bot/webhook_not_allowed")
    assert again.headers["Idempotent-Replayed"] == "true"
    assert http.get("/v1/bots").get_json()["bots"] == []
