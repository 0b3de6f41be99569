"""A bot's policy changes over time; an honest older game must not fail its audit for it
(a follow-up to issue 23, item 5).

The audit's ``bot moves`` check re-decides every bot move with this service's bots. When a
bot's policy changes on purpose (the Skull heuristic's bids no longer give its stack away),
the moves of games played before no longer follow from the seed and the view *under the
current policy*, though they are honest. So a game records the policy version of each bot it
may use (``game_created``'s ``bot_policies``, only where a version is not 1), and a move whose
bot's recorded version (absent: 1) is not the service's current one is "not re-checked":
neither passed nor failed, and said so. So is a search on a time budget whose move recorded
no iteration count (games stored before counts were recorded). Every other move is re-decided
as before, and a forgery of one still fails.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from services.cli import main
from shared.app import bots, creation
from shared.app.playout import play
from shared.audit import audit
from shared.games import skull as skull_bot  # its SPEC names the heuristic bot's policy
from tests.unit.test_audit_bot_moves import (
    BUDGET,
    assert_caught,
    budget_game,
    finish,
    first_forgery,
    memory_app,
    moves_checked,
    searched,
    timed_out_game,
)
from tests.unit.test_audit_redecide import rehash

Doc = dict[str, Any]

SKULL = [{"bot": "heuristic"}, {"bot": "heuristic"}, {"bot": "random"}]
CURRENT_SKULL_HEURISTIC = bots.policy_version("heuristic", "skull")


def version_1(policy: Any) -> Any:
    """A stand-in for the Skull heuristic before its bids were fixed: version 1's tell, with
    its skull down it passed every bid it could pass; otherwise as ``policy``."""

    def choose(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
        mine = view.get("seat") in view.get("to_act", [])
        if mine and view.get("phase") == "bidding" and "skull" in view.get("stack", []):
            passes = [c for c in view["legal_commands"] if c["type"] == "pass"]
            if passes:
                return dict(passes[0])
        chosen: dict[str, Any] | None = policy(view, rng)
        return chosen

    return choose


def as_stored_before(docs: list[Doc]) -> list[Doc]:
    """The log as a service before policy versions stored it: ``game_created`` without
    ``bot_policies``, the chain sealed again with the seed (the forgery tests' sealing)."""
    docs = [dict(d) for d in docs]
    created = dict(docs[0]["data"])
    created.pop("bot_policies", None)
    docs[0]["data"] = created
    return rehash(docs)


def bot_moves(docs: list[Doc]) -> list[Doc]:
    return [d for d in docs if d.get("command") and d["command_id"].startswith("bot-")]


def test_the_skull_heuristic_is_a_new_policy_and_the_others_are_their_first() -> None:
    assert CURRENT_SKULL_HEURISTIC == 2
    assert bots.policy_version("heuristic", "fox") == 1
    assert bots.policy_version("random", "skull") == 1
    # ISMCTS on Skull (version 3: its public choices from deals of its own discs as a spectator
    # deals them) searches the heuristic's candidates and plays out as the heuristic plays, so
    # it follows the heuristic's version too: 3 + 2 - 1.
    assert bots.policy_version("ismcts", "skull") == 4


def test_ismcts_on_skye_follows_the_skye_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    """It searches the heuristic's candidates and plays out with its valuation
    (``shared.games.skye.search``): a new heuristic changes its moves too."""
    assert bots.policy_version("ismcts", "skye") == 1
    bumped = {**bots.POLICY_VERSIONS, ("heuristic", "skye"): 2}
    monkeypatch.setattr(bots, "POLICY_VERSIONS", bumped)
    assert bots.policy_version("ismcts", "skye") == 2
    # Fox's search is its own (version 2: play-outs of one round, worth their match chance).
    assert bots.policy_version("ismcts", "fox") == 2


def test_an_older_skull_game_passes_with_its_heuristic_moves_not_re_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Record a game whose heuristic seats play version 1's policy.
    older = dataclasses.replace(skull_bot.SPEC, heuristic=version_1(skull_bot.HEURISTIC))
    monkeypatch.setattr(skull_bot, "SPEC", older)
    docs = [e.to_dict() for e in play("skull", SKULL, {}, "older-skull").envelopes]
    monkeypatch.undo()
    # Said to be of the current policy, those moves are not what it plays: they differ.
    claimed = audit("g", docs)
    assert claimed.first_failure is not None, claimed.checks
    assert claimed.first_failure["check"] == "bot moves"
    assert "is not what heuristic plays" in claimed.first_failure["reason"]

    older = as_stored_before(docs)
    assert "bot_policies" not in older[0]["data"]
    report = audit("g", older)
    assert report.ok and report.status == "passed", report.checks
    assert report.unchecked == ["bot moves"]
    text = report.checks["bot moves"]
    heuristic = [d for d in bot_moves(older) if d["seat"] in (0, 1)]
    assert text.startswith(f"not re-checked: {len(heuristic)} of {len(bot_moves(older))} "), text
    assert (
        f"heuristic (policy version 1 in this game, {CURRENT_SKULL_HEURISTIC} in this service)"
        in text
    ), text
    # The random seat's moves are still re-decided.
    assert f"the other {len(bot_moves(older)) - len(heuristic)} re-decided" in text, text
    for name in ("hash chain", "seed commitment", "opening draw", "commands legal",
                 "outcomes recomputed", "final state"):  # fmt: skip
        assert report.checks[name].startswith("ok"), (name, report.checks)
    doc = report.to_doc()
    assert doc["status"] == "passed" and doc["unchecked"] == ["bot moves"]
    [check] = [c for c in doc["checks"] if c["name"] == "bot moves"]
    assert check["result"] == "unchecked"  # as the JS verifier reports it


def test_a_new_skull_game_records_its_heuristic_policy_and_is_re_checked() -> None:
    docs = [e.to_dict() for e in play("skull", SKULL, {}, "new-skull").envelopes]
    assert docs[0]["data"]["bot_policies"] == {"heuristic": CURRENT_SKULL_HEURISTIC}
    report = audit("g", docs)
    assert report.status == "passed" and report.unchecked == [], report.checks
    assert moves_checked(report) == len(bot_moves(docs))
    assert report.to_doc()["unchecked"] == []


def test_the_service_records_the_versions_of_every_bot_a_game_may_use() -> None:
    """Its seats' bots and a clock's timeout bot (which also plays resigned seats), only where
    a version is not 1: games of other types, and Skull without the heuristic, record none."""
    app, fixed = memory_app()

    def created(game: str, seats: list[Doc], **kw: Any) -> Doc:
        gid = creation.create_game(app, game, seats, seed=f"policies-{game}", **kw).game_id
        return dict(app.ports.store.read(gid)[0].data)

    assert created("skull", SKULL)["bot_policies"] == {"heuristic": CURRENT_SKULL_HEURISTIC}
    assert "bot_policies" not in created("skull", [{"bot": "random"}] * 3)
    clock = {"turn_seconds": 5, "reserve_seconds": 0, "takeover_after": 2,
             "timeout_bot": {"bot": "heuristic"}}  # fmt: skip
    timed = created("skull", [{"name": f"p{i}"} for i in range(3)], clock_spec=clock)
    assert timed["bot_policies"] == {"heuristic": CURRENT_SKULL_HEURISTIC}
    assert "bot_policies" not in created("fox", [{"bot": "heuristic"}] * 2, options={"target": 1})
    assert "bot_policies" not in created("skye", [{"bot": "heuristic"}, {"bot": "ismcts"}])


def test_a_live_skull_game_of_heuristic_bots_passes_with_every_move_re_checked() -> None:
    app, fixed = memory_app()
    gid = creation.create_game(app, "skull", SKULL, seed="live-skull").game_id
    finish(app, "skull", gid, fixed)
    docs = [e.to_dict() for e in app.ports.store.read(gid)]
    assert docs[0]["data"]["bot_policies"] == {"heuristic": CURRENT_SKULL_HEURISTIC}
    report = audit(gid, docs)
    assert report.status == "passed" and not report.unchecked, report.checks
    assert moves_checked(report) == len(bot_moves(docs))


def test_a_time_budget_search_without_its_count_is_not_re_checked() -> None:
    """A game stored before counts were recorded: the search's moves cannot be replayed
    (how far it got is unknown), so they are not re-checked, and not failed either; the other
    seat's moves are still re-decided."""
    _, gid, docs = budget_game("before-counts")
    moves = searched(docs)
    assert moves
    for d in docs:
        if d.get("command"):
            d["command"] = {k: v for k, v in d["command"].items() if k != bots.BOT_ITERATIONS}
    report = audit(gid, rehash(docs))
    assert report.ok and report.status == "passed", report.checks
    assert report.unchecked == ["bot moves"]
    text = report.checks["bot moves"]
    assert text.startswith(f"not re-checked: {len(moves)} of {len(bot_moves(docs))} "), text
    assert "ismcts:budget_ms=10 (a search on a time budget with no recorded iteration count)" in (
        text
    )
    assert f"the other {len(searched(docs, 1))} re-decided" in text, text


def test_a_timeout_bots_search_without_its_count_is_not_re_checked() -> None:
    gid, docs = timed_out_game("timeout-before-counts")
    outs = [d for d in docs if d.get("command") and d["command"]["type"] == "time_out"]
    assert outs and all(bots.BOT_ITERATIONS in d["command"] for d in outs)
    for d in outs:
        d["command"] = {k: v for k, v in d["command"].items() if k != bots.BOT_ITERATIONS}
    report = audit(gid, rehash(docs))
    assert report.status == "passed" and report.unchecked == ["bot moves"], report.checks
    assert f"{BUDGET['bot']}:budget_ms={BUDGET['budget_ms']}" in report.checks["bot moves"]


def test_a_forged_move_of_the_new_skull_heuristic_fails() -> None:
    """Moves of the current policy are re-decided: a forgery among them fails as before."""
    docs, version, spec = first_forgery("skull", SKULL, {}, "forged-skull-v2", seat=0)
    assert spec == "heuristic" and docs[0]["data"]["bot_policies"] == {"heuristic": 2}
    assert_caught(docs, version, spec)


def test_a_forged_move_in_an_older_game_still_fails() -> None:
    """A forger that also drops ``bot_policies`` only takes the heuristic's moves out of the
    re-check, and the report says so: the random seat's forged move still fails."""
    docs, version, spec = first_forgery("skull", SKULL, {}, "forged-skull-old", seat=2)
    assert spec == "random"
    assert_caught(as_stored_before(docs), version, spec)


def test_the_cli_passes_an_older_game_and_says_what_it_did_not_re_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = dataclasses.replace(skull_bot.SPEC, heuristic=version_1(skull_bot.HEURISTIC))
    monkeypatch.setattr(skull_bot, "SPEC", older)
    docs = [e.to_dict() for e in play("skull", SKULL, {}, "older-skull-cli").envelopes]
    monkeypatch.undo()
    export = tmp_path / "older.jsonl"
    export.write_text("".join(json.dumps(d) + "\n" for d in as_stored_before(docs)))
    assert main(["audit", "--file", str(export)]) == 0
    out = capsys.readouterr().out
    assert "bot moves: not re-checked: " in out, out
    [verdict] = [line for line in out.splitlines() if line.startswith("AUDIT")]
    assert verdict.startswith("AUDIT PASSED") and verdict.endswith("; not re-checked: bot moves")
