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


def test_an_unknown_bot_is_one_line_with_the_commands_prefix(capsys: pytest.CaptureFixture) -> None:
    assert main(["simulate", "--game", "fox", "--bots", "random,alphazero"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tabletop simulate: --bots"), err
    assert "alphazero" in err and len(err.splitlines()) == 1


def test_too_many_bots_for_the_players_is_prefixed(capsys: pytest.CaptureFixture) -> None:
    argv = ["simulate", "--game", "skull", "--players", "3", "--bots", "random,random"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tabletop simulate: --bots names 2 seats"), err


def _seed_and_table(out: str) -> tuple[str, list[str]]:
    """The seed the run printed (``seed: S`` on its last line) and its table's rows."""
    last = out.strip().splitlines()[-1]
    assert "seed: " in last, out
    seed = last.rsplit("seed: ", 1)[1].strip()
    rows = [line for line in out.splitlines() if "│" in line]
    return seed, rows


def test_without_a_seed_one_is_drawn_and_printed_and_repeats_the_run(
    capsys: pytest.CaptureFixture,
) -> None:
    # The rule simulate shares with `tournament run`: a seed drawn unless told, printed so
    # that the run can be played again exactly.
    argv = ["simulate", "--game", "fox", "--games", "4", "--option", "target=1"]
    assert main(argv) == 0
    first, table = _seed_and_table(capsys.readouterr().out)
    assert main(argv) == 0
    second, _ = _seed_and_table(capsys.readouterr().out)
    assert first != second, "each run draws its own seed"
    assert main([*argv, "--seed", first]) == 0
    again, table_again = _seed_and_table(capsys.readouterr().out)
    assert again == first and table_again == table
