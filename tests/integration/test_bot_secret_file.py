"""The bot secret's file (issue 35): without ``TABLETOP_BOT_SECRET`` the secret registered
bots' keys derive from lives in ``<data dir>/bot-secret`` (0600), made race-free by whichever
process needs it first, moved there from Redis for a deployment from before (its keys still
valid), never written to Redis again; a file that cannot be used stops a process with its
path named; ``tabletop bots rotate-secret`` issues every key again under a new one."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import redis

from services import cli
from services.gateway.app import create_app
from shared import keys
from shared.adapters import redis as adapters
from shared.adapters.redis import BOT_SECRET_CHECK, RedisBotRegistry, secret_check
from shared.app.bot_turns import bot_key, key_hash
from shared.app.ports import NullDispatcher, RegisteredBot
from shared.bootstrap import bootstrap
from shared.config import Settings, SettingsError

HOOK = "http://127.0.0.1:9/bot"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def gateway(redis_url: str, secret_file: Path, **extra: Any) -> Any:
    settings = Settings(redis_url=redis_url, bot_secret_file=str(secret_file), **extra)
    return create_app(settings, client=redis.Redis.from_url(redis_url), dispatcher=NullDispatcher())


def register(http: Any, **extra: Any) -> dict[str, Any]:
    body = {"name": "b", "games": ["fox"], "transport": "webhook", "url": HOOK, **extra}
    resp = http.post("/v1/bots", json=body)
    assert resp.status_code == 201, resp.get_json()
    doc: dict[str, Any] = resp.get_json()
    return doc


def test_the_settings_find_the_file_in_the_data_directory_or_where_told(tmp_path: Path) -> None:
    assert Settings.from_env({}).bot_secret_file == os.path.abspath("run/bot-secret")
    data = Settings.from_env({"TABLETOP_DATA_DIR": str(tmp_path)})
    assert data.bot_secret_file == str(tmp_path / "bot-secret")
    told = {"TABLETOP_DATA_DIR": "x", "TABLETOP_BOT_SECRET_FILE": str(tmp_path / "s")}
    assert Settings.from_env(told).bot_secret_file == str(tmp_path / "s")


def test_the_secret_is_made_once_in_a_0600_file_and_never_in_redis(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    path = tmp_path / "data" / "bot-secret"
    first = RedisBotRegistry(redis_client, "", str(path))
    secret = first.secret()
    assert path.read_text().strip() == secret and len(secret) == 64
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert RedisBotRegistry(redis_client, "", str(path)).secret() == secret  # another process
    assert redis_client.get(keys.BOT_SECRET) is None
    assert redis_client.get(BOT_SECRET_CHECK) == secret_check(secret).encode()
    assert [p.name for p in path.parent.iterdir()] == ["bot-secret"]  # no temporary left


def _resolve(redis_url: str, path: str, start: Any, out: Any) -> None:
    client = redis.Redis.from_url(redis_url)
    registry = RedisBotRegistry(client, "", path)
    start.wait()
    out.put(registry.secret())


@pytest.mark.parametrize("before", [None, "secret-of-a-deployment-from-before"])
def test_processes_starting_at_once_agree_on_one_secret(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path, before: str | None
) -> None:
    """Eight processes (the gateway's, the workers', Celery's, the remote worker's) released
    together, with no file yet: one secret for all, also when they move the one Redis held."""
    if before is not None:
        redis_client.set(keys.BOT_SECRET, before)
    path = tmp_path / "bot-secret"
    # Fresh processes from a server that imported this module once (no thread of the test
    # run forked), not eight spawned ones each importing the gateway and the CLI again first:
    # the same eight processes racing, started in a fraction of the time.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_resolve, args=(redis_url, str(path), start, out))
             for _ in range(8)]  # fmt: skip
    for p in procs:
        p.start()
    start.set()
    got = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert len(set(got)) == 1 and path.read_text().strip() == got[0]
    assert mode(path) == 0o600
    if before is not None:
        assert got[0] == before and redis_client.get(keys.BOT_SECRET) is None


def test_a_secret_from_before_moves_into_the_file_and_its_keys_keep_working(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    """A deployment from before: its secret at ``bots:secret`` and a bot registered then (its
    stored document without ``seatable_by``). After the upgrade the key issued then still
    retires it, and Redis holds the secret no more."""
    old = "0f" * 32
    redis_client.set(keys.BOT_SECRET, old)
    key = bot_key(old, "b0ld")
    doc = {"bot_id": "b0ld", "name": "old", "games": ["fox"], "transport": "connected",
           "url": None, "budget_ms": 500, "on_failure": "random", "key_sha256": key_hash(key),
           "created_at": "2026-01-01T00:00:00.000Z", "ladder": False}  # fmt: skip
    redis_client.hset(keys.bot("b0ld"), mapping={"doc": json.dumps(doc), "retired": "0"})
    redis_client.hset(keys.BOT_KEYS, key_hash(key), "b0ld")
    redis_client.zadd(keys.BOTS, {"b0ld": 1.0})
    path = tmp_path / "bot-secret"
    app = gateway(redis_url, path)
    http = app.test_client()
    shown = http.get("/v1/bots/b0ld").get_json()
    assert shown["seatable_by"] == "anyone"  # as it was: anyone seats it
    assert app.extensions["tabletop"].ports.bots.secret() == old
    assert path.read_text().strip() == old and mode(path) == 0o600
    assert redis_client.get(keys.BOT_SECRET) is None
    with http.get("/v1/bots/me/turns", headers={"Authorization": f"Bearer {key}"},
                  buffered=False) as stream:  # fmt: skip
        assert stream.status_code == 200  # the old key still names its bot
    gone = http.delete("/v1/bots/b0ld", headers={"Authorization": f"Bearer {key}"})
    assert gone.status_code == 204
    # The secret is never written to Redis again: a new registration leaves none there.
    register(http)
    assert redis_client.get(keys.BOT_SECRET) is None


@pytest.mark.parametrize("case", ["group readable", "other readable", "a directory", "empty"])
def test_a_file_that_cannot_be_used_stops_the_process_naming_it(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    path = tmp_path / "bot-secret"
    if case == "a directory":
        path.mkdir()
    else:
        path.write_text("" if case == "empty" else "s3cret\n")
        path.chmod({"group readable": 0o640, "other readable": 0o604, "empty": 0o600}[case])
    monkeypatch.setattr(adapters, "SECRET_READ_PATIENCE_S", 0.1)
    settings = Settings(redis_url=redis_url, bot_secret_file=str(path))
    with pytest.raises(SettingsError, match=str(path)):
        bootstrap(settings)
    assert cli.ensure_bot_secret({"REDIS_URL": redis_url,
                                  "TABLETOP_BOT_SECRET_FILE": str(path)})  # fmt: skip
    if case != "a directory":
        assert path.read_text() == ("" if case == "empty" else "s3cret\n")  # left as it was


def test_a_process_with_another_secret_is_refused(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    """Processes not sharing the data directory (a container each, say) would each make
    their own secret and sign turns with keys no bot holds: the second one is refused."""
    RedisBotRegistry(redis_client, "", str(tmp_path / "a" / "bot-secret")).secret()
    with pytest.raises(SettingsError, match="not the one this deployment"):
        RedisBotRegistry(redis_client, "", str(tmp_path / "b" / "bot-secret")).secret()
    with pytest.raises(SettingsError, match="TABLETOP_BOT_SECRET"):
        RedisBotRegistry(redis_client, "another").secret()


def test_a_file_and_a_secret_from_before_that_differ_are_refused(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    path = tmp_path / "bot-secret"
    path.write_text("the-files\n")
    path.chmod(0o600)
    redis_client.set(keys.BOT_SECRET, "redis-s")
    with pytest.raises(SettingsError, match=f"DEL {keys.BOT_SECRET}"):
        RedisBotRegistry(redis_client, "", str(path)).secret()
    assert redis_client.get(keys.BOT_SECRET) == b"redis-s"  # nothing is decided for the operator


def test_rotating_the_secret_issues_every_key_again(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bot-secret"
    app = gateway(redis_url, path)
    http = app.test_client()
    bots = [register(http, name=f"b{i}") for i in range(3)]
    old_secret = path.read_text().strip()
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.delenv("TABLETOP_BOT_SECRET", raising=False)
    monkeypatch.delenv("TABLETOP_BOT_SECRET_FILE", raising=False)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert cli.main(["bots", "rotate-secret", "--data-dir", str(tmp_path)]) == 0
    issued = {d["id"]: d for d in map(json.loads, out.getvalue().splitlines())}
    assert set(issued) == {b["id"] for b in bots} and "restart" in err.getvalue()
    new_secret = path.read_text().strip()
    assert new_secret != old_secret and mode(path) == 0o600
    assert not (tmp_path / "bot-secret.new").exists()
    assert redis_client.get(BOT_SECRET_CHECK) == secret_check(new_secret).encode()
    # The processes, restarted: the new keys work, the old ones no more.
    http = gateway(redis_url, path).test_client()
    for bot in bots:
        new = issued[bot["id"]]["key"]
        assert new == bot_key(new_secret, bot["id"]) != bot["key"]
        old = http.delete(
            f"/v1/bots/{bot['id']}", headers={"Authorization": f"Bearer {bot['key']}"}
        )
        assert old.status_code == 403
    shown = http.get(f"/v1/bots/{bots[0]['id']}", headers={"Authorization": f"Bearer "
                                                           f"{issued[bots[0]['id']]['key']}"})  # fmt: skip
    assert shown.get_json()["url"] == HOOK  # the new key is the owner's
    assert http.delete(f"/v1/bots/{bots[1]['id']}",
                       headers={"Authorization": f"Bearer {issued[bots[1]['id']]['key']}"}
                       ).status_code == 204  # fmt: skip


def test_a_rotation_cut_short_is_finished_by_running_it_again(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    path = tmp_path / "bot-secret"
    registry = RedisBotRegistry(redis_client, "", str(path))
    old = registry.secret()
    bot = RegisteredBot(bot_id="r1", name="r", games=("fox",), transport="connected", url=None,
                        budget_ms=500, on_failure="random", key_sha256=key_hash(bot_key(old, "r1")),
                        created_at="2026-01-01T00:00:00.000Z")  # fmt: skip
    registry.add(bot, 1.0)
    staged = registry.stage_rotation()  # ... and the command was killed here
    again = RedisBotRegistry(redis_client, "", str(path))
    assert again.stage_rotation() == staged  # the staged secret is the one
    again.rekey("r1", key_hash(bot_key(staged, "r1")))
    again.finish_rotation()
    assert path.read_text().strip() == staged
    fresh = RedisBotRegistry(redis_client, "", str(path))
    assert fresh.secret() == staged
    assert fresh.by_key(key_hash(bot_key(staged, "r1"))) == "r1"
    assert fresh.by_key(key_hash(bot_key(old, "r1"))) is None


def test_tabletop_run_refuses_to_start_on_a_bad_secret_file(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    path = tmp_path / "bot-secret"
    path.write_text("s\n")
    path.chmod(0o644)
    problem = cli.ensure_bot_secret({"REDIS_URL": redis_url,
                                     "TABLETOP_DATA_DIR": str(tmp_path)})  # fmt: skip
    assert problem is not None and str(path) in problem and "chmod 600" in problem
    path.chmod(0o600)
    assert (
        cli.ensure_bot_secret({"REDIS_URL": redis_url, "TABLETOP_DATA_DIR": str(tmp_path)}) is None
    )
