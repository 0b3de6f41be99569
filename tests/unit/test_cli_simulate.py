"""``tabletop simulate`` answers a bad request with one clear line and a non-zero exit."""

from __future__ import annotations

import pytest

from services.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "chess"], "unknown game"),
        (["--game", "skull", "--players", "2"], "3 to 12"),
        (["--game", "fox", "--option", "target"], "KEY=JSON"),
        (["--game", "fox", "--option", "target=abc"], "KEY=JSON"),
        (["--game", "fox", "--option", "target=0"], "target"),
        (["--game", "fox", "--games", "-5"], "at least 1"),
        (["--game", "fox", "--bots", "deep-blue,random"], "--bots"),
    ],
)
def test_a_bad_request_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture
) -> None:
    assert main(["simulate", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_good_request_plays(capsys: pytest.CaptureFixture) -> None:
    assert main(["simulate", "--game", "fox", "--games", "3", "--option", "target=1"]) == 0
    assert "games: 3" in capsys.readouterr().out
