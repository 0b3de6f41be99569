"""``tabletop audit --file``: the game's id is read from the export itself, not from the file's
name (issue 35): a registered bot's ``bot_turn.turn_id`` (``<game_id>-<seat>-<version>``) or a
tournament game's ``game_created.tournament``; so an export saved as ``game.jsonl`` passes. A
GAME_ID (or a saved events answer's ``game``) that disagrees with the log is an error; a file
that is no export (a saved problem answer) says so in one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from services import audit_cli
from services.cli import main
from shared.app.playout import play
from tests.unit.test_audit_redecide import rehash
from tests.unit.test_registered_bots import app_with, first_legal, log_of, play_fox, register


@pytest.fixture(autouse=True)
def no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TABLETOP_AUDITOR_KEY", "TABLETOP_AUDITOR_KEYS", "TABLETOP_API", "PORT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def registered() -> tuple[str, list[dict[str, Any]]]:
    """A finished Fox game of a registered webhook bot: its id and its export's envelopes."""
    app, _ = app_with(first_legal)
    gid = play_fox(app, register(app)["id"])
    return gid, log_of(app, gid)


def save(path: Path, docs: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return str(path)


def one_line(err: str) -> str:
    err = err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_an_export_saved_under_another_name_passes(
    registered: tuple[str, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    gid, docs = registered
    # The README's recipe saves it as game.jsonl: the name is not the game's id.
    export = save(tmp_path / "game.jsonl", docs)
    assert gid != "game"
    assert main(["audit", "--file", export]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "AUDIT PASSED" in out and "bot moves: ok" in out, out
    # The id the file holds, given as GAME_ID too: the same.
    assert main(["audit", gid, "--file", export]) == 0
    assert "AUDIT PASSED" in capsys.readouterr().out


def test_a_game_id_that_disagrees_with_the_export_is_an_error(
    registered: tuple[str, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    gid, docs = registered
    export = save(tmp_path / f"{gid}.jsonl", docs)
    assert main(["audit", "another-game", "--file", export]) == 2
    captured = capsys.readouterr()
    err = one_line(captured.err)
    assert f"is the export of game {gid}, not another-game" in err, err
    assert "AUDIT" not in captured.out  # nothing was audited


def test_the_id_is_read_from_each_place_a_log_holds_it(
    registered: tuple[str, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    gid, docs = registered
    assert audit_cli.export_game_id(docs) == gid
    # A tournament's game: its id derives from the tournament's and the index.
    created = {"version": 1, "type": "game_created",
               "data": {"game": "fox", "tournament": {"id": "t-abc", "index": 7}}}  # fmt: skip
    assert audit_cli.export_game_id([created]) == "t-abc-00007"
    # Nothing the audit depends on: no id (a game of built-in bots audits the same under any).
    plain = play("fox", [{"bot": "random"}, {"bot": "random"}], {"target": 1}, "no-id")
    assert audit_cli.export_game_id([e.to_dict() for e in plain.envelopes]) is None
    # A saved GET /events answer names its game: it must be the one its log records.
    saved = tmp_path / "events.json"
    saved.write_text(json.dumps({"game": gid, "version": len(docs), "events": docs}))
    assert main(["audit", "--file", str(saved)]) == 0
    assert "AUDIT PASSED" in capsys.readouterr().out
    saved.write_text(json.dumps({"game": "elsewhere", "version": len(docs), "events": docs}))
    assert main(["audit", "--file", str(saved)]) == 2
    err = one_line(capsys.readouterr().err)
    assert f"holds the log of game {gid}, yet names game elsewhere" in err, err


def test_a_log_whose_bot_turns_name_another_game_fails_at_that_turn(
    registered: tuple[str, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    gid, docs = registered
    forged = json.loads(json.dumps(docs))
    moves = [d for d in forged if (d.get("command") or {}).get("bot_turn")]
    turn = moves[1]["command"]["bot_turn"]
    turn["turn_id"] = turn["turn_id"].replace(gid, "other", 1)
    # Re-sealed: the chain holds; the id is read from the first turn, the second fails.
    assert main(["audit", "--file", save(tmp_path / "game.jsonl", rehash(forged))]) == 1
    out = capsys.readouterr().out
    assert f"AUDIT FAILED at version {moves[1]['version']}: " in out, out
    assert "sent_sha256" in out


def test_a_game_without_a_recorded_id_still_audits_under_any_name(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    plain = play("fox", [{"bot": "random"}, {"bot": "heuristic"}], {"target": 1}, "no-id")
    export = save(tmp_path / "whatever.jsonl", [e.to_dict() for e in plain.envelopes])
    assert main(["audit", "--file", export]) == 0
    assert main(["audit", "some-id", "--file", export]) == 0  # nothing in it to disagree with
    assert capsys.readouterr().out.count("AUDIT PASSED") == 2


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            {
                "type": "/problems/game/not_found",
                "title": "Not Found",
                "status": 404,
                "detail": "no game nope",
                "code": "game/not_found",
            },  # fmt: skip
            "it holds a problem answer (404 Not Found: no game nope)",
        ),
        (
            {
                "type": "/problems/export/forbidden",
                "title": "Forbidden",
                "status": 403,
                "detail": "the export of a running game needs an auditor key",
            },  # fmt: skip
            "it holds a problem answer (403 Forbidden: the export of a running game needs an "
            "auditor key)",
        ),
        ({"hello": "world"}, "its line 1 is not an event envelope"),
        ([1, 2], "its event 1 is not an event envelope"),
        ("<html>502 Bad Gateway</html>\n", "its line 1 is not JSON"),
        ("", "it is empty"),
    ],
    ids=["404", "403", "another object", "a list", "html", "empty"],
)
def test_a_file_that_is_not_an_export_says_so_in_one_line(
    content: Any, said: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "game.jsonl"
    # As `curl -s .../export > game.jsonl` saves a refusal: the problem JSON and no newline.
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    assert main(["audit", "--file", str(path)]) == 2
    captured = capsys.readouterr()
    err = one_line(captured.err)
    assert err == f"tabletop audit: {path} is not a game export: {said}", err
    assert "missing field" not in err and "AUDIT" not in captured.out
