"""A copy of Redis gives no registered bot's key away (issue 35).

A bot's key is ``tbk_`` + HMAC(server secret, "bot-key:" + id): whoever holds the secret
derives every key. Without ``TABLETOP_BOT_SECRET`` the secret is kept in a file of the data
directory (``<data dir>/bot-secret``, 0600), never in Redis: so a copy of the Redis data (an
RDB or AOF file, a replica, a backup) holds nothing from which a key derives. The attack: take
every key of the Redis server after bots were registered (one with an ``Idempotency-Key``,
whose kept response must not hold the bot's key either), read every value, and try each one
(and every field, member and stream entry) as the secret.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

from services.gateway.app import create_app
from shared.app.ports import NullDispatcher
from shared.config import Settings


def derive(secret: bytes, bot_id: str) -> str:
    """The key a bot would have were ``secret`` the server secret."""
    return "tbk_" + hmac.new(secret, f"bot-key:{bot_id}".encode(), hashlib.sha256).hexdigest()


def values_of(client: redis.Redis, key: bytes) -> Iterator[bytes]:
    """Every value held at ``key``, whatever its type (and the key's own name)."""
    yield key
    kind = client.type(key).decode()
    if kind == "string":
        yield client.get(key) or b""
    elif kind == "hash":
        for field, value in client.hgetall(key).items():
            yield field
            yield value
    elif kind == "list":
        yield from client.lrange(key, 0, -1)
    elif kind == "set":
        yield from client.smembers(key)
    elif kind == "zset":
        for member, _ in client.zrange(key, 0, -1, withscores=True):
            yield member
    elif kind == "stream":
        for _, fields in client.xrange(key):
            for field, value in fields.items():
                yield field
                yield value


def copy_of(client: redis.Redis) -> tuple[list[bytes], list[bytes]]:
    """What a copy of the server holds: each key's DUMP (its RDB serialization) and every
    value read back by type."""
    dumps: list[bytes] = []
    values: list[bytes] = []
    for key in client.scan_iter(count=1000):
        dumps.append(client.dump(key) or b"")
        values.extend(values_of(client, key))
    return dumps, values


def test_a_copy_of_redis_holds_nothing_a_bot_key_derives_from(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    settings = Settings.from_env(
        {"REDIS_URL": redis_url, "TABLETOP_DATA_DIR": str(tmp_path / "data"),
         "TABLETOP_RATE_LIMITS": "off", "TABLETOP_SHARDS": "1"}
    )  # fmt: skip
    gateway = create_app(
        settings, client=redis.Redis.from_url(redis_url), dispatcher=NullDispatcher()
    )
    http = gateway.test_client()
    bots: list[dict[str, Any]] = []
    for i, extra in enumerate([{}, {"budget_ms": 800}, {"on_failure": "forfeit"}]):
        body = {"name": f"b{i}", "games": ["fox"], "transport": "webhook",
                "url": "http://127.0.0.1:9/bot", **extra}  # fmt: skip
        headers = {"Idempotency-Key": f"register-{i}"} if i == 1 else {}
        resp = http.post("/v1/bots", json=body, headers=headers)
        assert resp.status_code == 201, resp.get_json()
        bots.append(resp.get_json())
    connected = http.post(
        "/v1/bots", json={"name": "nat", "games": ["skull"], "transport": "connected"}
    )
    assert connected.status_code == 201, connected.get_json()
    bots.append(connected.get_json())
    # A game seating one, and one retired: whatever the registry keeps of them is in the copy.
    seats = [{"bot_id": bots[0]["id"]}, {"bot": "random"}]
    game = http.post("/v1/games", json={"game": "fox", "seats": seats})
    assert game.status_code == 201, game.get_json()
    auth = {"Authorization": f"Bearer {bots[2]['key']}"}
    assert http.delete(f"/v1/bots/{bots[2]['id']}", headers=auth).status_code == 204

    secret: str = gateway.extensions["tabletop"].ports.bots.secret()
    assert all(b["key"] == derive(secret.encode(), b["id"]) for b in bots)  # the scheme holds

    dumps, values = copy_of(redis_client)
    assert values, "the copy is empty: the test proves nothing"
    for raw in [*dumps, *values]:
        assert secret.encode() not in raw
        assert not any(b["key"].encode() in raw for b in bots)
    # Every value read back, tried as the secret: none derives a key.
    for candidate in set(values):
        for bot in bots:
            assert derive(candidate, bot["id"]) != bot["key"], candidate
            assert derive(candidate.strip(), bot["id"]) != bot["key"], candidate
