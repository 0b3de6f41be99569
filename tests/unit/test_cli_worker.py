"""``tabletop worker`` refuses a game it does not host before it touches Redis."""

from __future__ import annotations

import pytest

from services.cli import main


@pytest.mark.parametrize("redis_url", [None, "redis://127.0.0.1:9/0"])
def test_an_unknown_game_is_one_line_and_never_reaches_redis(
    redis_url: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    if redis_url is None:
        monkeypatch.delenv("REDIS_URL", raising=False)
    else:  # nothing listens there: a worker that tried it would fail with a traceback
        monkeypatch.setenv("REDIS_URL", redis_url)
    import services.worker.main as worker_main

    def must_not_run(game_type: str) -> None:
        raise AssertionError(f"the worker started for {game_type!r}")

    monkeypatch.setattr(worker_main, "run", must_not_run)
    assert main(["worker", "--game", "chess"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tabletop worker: unknown game 'chess'"), err
    assert "fox" in err and len(err.splitlines()) == 1
