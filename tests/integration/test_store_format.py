"""The Redis store records its layout; a newer build converts an older one (logs kept as
streams before issue 27) and refuses a newer one in one line (issue 36)."""

from __future__ import annotations

import random

import pytest
import redis

from services.cli import main
from shared import keys
from shared.adapters import store_format
from shared.app import commands, creation, queries
from shared.app.bots import random_bot
from shared.app.messages import CommandMessage
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings


def _played(client: redis.Redis, seed: int) -> str:
    app = bootstrap(Settings(bot_dispatch="none"), client=client)
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}]).game_id
    rng = random.Random(seed)
    for n in range(200):
        public = queries.view(app, gid, None)
        assert public is not None
        if public["outcome"] is not None:
            break
        seat = public["to_act"][0]
        command = random_bot(queries.view(app, gid, seat) or {}, rng)
        commands.decide_command(
            app, CommandMessage(command_id=f"c{n}", game_id=gid, seat=seat, body=command or {})
        )
    return gid


def _as_streams(client: redis.Redis, gid: str, whole: int) -> bytes:
    """Rewrite a game's log as a build before issue 27 kept it: its first ``whole`` entries
    in the string, the rest one stream entry each. Returns the log as it was."""
    log = client.get(keys.log(gid))
    assert log is not None
    entries = log.split(b"\n")
    if whole:
        client.set(keys.log(gid), b"\n".join(entries[:whole]))
    else:
        client.delete(keys.log(gid))
    for version, entry in enumerate(entries[whole:], start=whole + 1):
        client.xadd(keys.events(gid), {"env": entry}, id=f"0-{version}")
    return log


def test_streamed_logs_are_converted_once_and_read_as_before(
    redis_client: redis.Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    games = {_played(redis_client, s): w for s, w in ((1, 0), (2, 1), (3, 5))}
    before = {gid: _as_streams(redis_client, gid, whole) for gid, whole in games.items()}
    redis_client.delete(store_format.FORMAT_KEY)  # a store from before versions were kept

    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("TABLETOP_ARCHIVE_URL", "off")
    assert main(["migrate"]) == 0
    out = capsys.readouterr().out
    assert "layout none recorded -> 2; 3 of 3 streamed logs converted" in out
    assert store_format.stored_version(redis_client) == store_format.CURRENT
    app = bootstrap(Settings(bot_dispatch="none"), client=redis_client)
    for gid, log in before.items():
        assert redis_client.get(keys.log(gid)) == log
        assert not redis_client.exists(keys.events(gid))
        report = audit(gid, [e.to_dict() for e in app.ports.store.read(gid)])
        assert report.status == "passed", report.checks
    # Again: nothing left to convert.
    assert store_format.migrate(redis_client).found == 0


def test_a_conversion_cut_short_is_finished_by_the_next_run(redis_client: redis.Redis) -> None:
    gids = [_played(redis_client, s) for s in (4, 5)]
    logs = [_as_streams(redis_client, g, 2) for g in gids]
    redis_client.delete(store_format.FORMAT_KEY)
    assert store_format.convert(redis_client, gids[0])  # then the process died
    assert store_format.stored_version(redis_client) is None
    done = store_format.migrate(redis_client)
    assert (done.found, done.converted) == (1, 1)
    assert [redis_client.get(keys.log(g)) for g in gids] == logs


def test_a_store_of_a_newer_layout_is_refused_in_one_line(
    redis_client: redis.Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    redis_client.set(store_format.FORMAT_KEY, "9")
    with pytest.raises(store_format.StoreFormatError, match="layout version 9, newer"):
        store_format.migrate(redis_client)
    monkeypatch.setenv("REDIS_URL", redis_url)
    assert main(["migrate"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "newer than this build's 2" in err
    redis_client.delete(store_format.FORMAT_KEY)
