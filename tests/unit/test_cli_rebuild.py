"""``tabletop rebuild`` uses the stack's Redis and never guesses one."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.cli import main


def test_rebuild_refuses_to_guess_a_redis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["rebuild"]) == 2
    err = capsys.readouterr().err.strip()
    assert "set REDIS_URL" in err and len(err.splitlines()) == 1


def test_rebuild_ignores_a_stale_stack_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "redis.url").write_text("redis://127.0.0.1:9/0\n")  # nothing there
    assert main(["rebuild"]) == 2
