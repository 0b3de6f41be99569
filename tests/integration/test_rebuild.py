"""Projections are disposable: a rebuild from the events writes the same bytes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import redis

from shared import keys
from shared.app import commands, creation, projecting
from shared.app.bots import random_bot
from shared.app.messages import CommandMessage
from shared.bootstrap import bootstrap
from shared.config import Settings

SEATS = {"fox": 2, "skull": 4, "skye": 3}


@pytest.mark.parametrize("game", ["fox", "skull", "skye"])
def test_rebuild_from_events_gives_the_same_bytes(redis_client: redis.Redis, game: str) -> None:
    live = bootstrap(Settings(), client=redis_client)
    gid = creation.create_game(live, game, [{"name": f"p{i}"} for i in range(SEATS[game])]).game_id
    rng = random.Random(3)
    for n in range(60):
        public = json.loads(redis_client.get(keys.public(gid)))
        if public["outcome"] is not None:
            break
        seat = public["to_act"][0]
        view = json.loads(redis_client.get(keys.view(gid, seat)))
        command = random_bot(view, rng)
        assert command is not None
        outcome = commands.decide_command(
            live, CommandMessage(command_id=f"c{n}", game_id=gid, seat=seat, body=command)
        )
        assert outcome["status"] == "accepted", outcome
    names = [keys.view(gid, s) for s in range(SEATS[game])] + [keys.public(gid)]
    before = [redis_client.get(k) for k in names]
    for k in names:
        redis_client.delete(k)
    projecting.rebuild_projections(bootstrap(Settings(), client=redis_client), gid)
    assert [redis_client.get(k) for k in names] == before


def test_the_cli_rebuilds_every_game_with_a_summary(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from services.cli import main
    from shared.app import creation
    from shared.bootstrap import bootstrap
    from shared.config import Settings

    app = bootstrap(Settings(redis_url=redis_url))
    ids = [creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}]).game_id
           for _ in range(3)]  # fmt: skip
    monkeypatch.setenv("REDIS_URL", redis_url)
    assert main(["rebuild", *ids]) == 0
    assert "rebuilt 3 of 3 games" in capsys.readouterr().out


def test_the_cli_finds_the_stack_of_tabletop_data_dir_or_data_dir(
    redis_url: str,
    redis_client: redis.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``tabletop rebuild`` beside a stack started with ``TABLETOP_DATA_DIR`` (``--data-dir``)
    reads the Redis URL that stack wrote there, not ``./run``'s."""
    from services.cli import main

    live = bootstrap(Settings(), client=redis_client)
    gid = creation.create_game(live, "fox", [{"name": "a"}, {"name": "b"}]).game_id
    data = tmp_path / "elsewhere"
    data.mkdir()
    (data / "redis.url").write_text(redis_url + "\n")  # what `tabletop run` writes there
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./run here
    monkeypatch.setenv("TABLETOP_DATA_DIR", str(data))
    assert main(["rebuild", gid]) == 0
    assert "rebuilt 1 of 1 games" in capsys.readouterr().out
    monkeypatch.delenv("TABLETOP_DATA_DIR")
    assert main(["rebuild", "--data-dir", str(data), gid]) == 0
    assert "rebuilt 1 of 1 games" in capsys.readouterr().out
    assert main(["rebuild", gid]) == 2  # neither: no stack to find
    assert "TABLETOP_DATA_DIR" in capsys.readouterr().err
