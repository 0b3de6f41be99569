"""A game records the rules version it was decided under; an audit by a build of other rules
says so instead of failing the game (issue 36: formats that outlive upgrades)."""

from __future__ import annotations

from typing import Any

import pytest

from shared import games
from shared.app.playout import play
from shared.audit import audit
from shared.events import GAME_CREATED, RULES_VERSION
from tests.unit.test_audit_redecide import rehash

SEATS = [{"bot": "random"}, {"bot": "heuristic"}]


def _log(monkeypatch: pytest.MonkeyPatch, version: int) -> list[dict[str, Any]]:
    """A finished Fox game decided by a build whose Fox rules are at ``version``."""
    monkeypatch.setitem(games.RULES_VERSIONS, "fox", version)
    played = play("fox", SEATS, {"target": 1}, f"rules-{version}")
    monkeypatch.setitem(games.RULES_VERSIONS, "fox", 1)
    return [env.to_dict() for env in played.envelopes]


def test_version_1_is_not_written_and_the_log_is_re_decided(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = _log(monkeypatch, 1)
    assert RULES_VERSION not in docs[0]["data"]
    report = audit("g", docs)
    assert report.status == "passed" and not report.unchecked


def test_a_game_of_other_rules_is_said_so_not_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _log(monkeypatch, 2)
    assert docs[0]["type"] == GAME_CREATED and docs[0]["data"][RULES_VERSION] == 2
    report = audit("g", docs)  # this build: version 1
    assert report.failures == [] and report.status == "incomplete", report.checks
    assert {"rules", "opening draw", "commands legal", "bot moves"} <= set(report.unchecked)
    assert "rules version 2" in report.checks["rules"] and "version 1" in report.checks["rules"]
    assert report.checks["hash chain"].startswith("ok") and report.checks["seed commitment"]
    # The same build that decided it re-decides every move.
    monkeypatch.setitem(games.RULES_VERSIONS, "fox", 2)
    again = audit("g", docs)
    assert again.status == "passed" and not again.unchecked


def test_a_forged_rules_version_still_breaks_the_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _log(monkeypatch, 1)
    docs[0]["data"][RULES_VERSION] = 7  # to dodge the re-decision: the hashes give it away
    assert audit("g", docs).failures == ["hash chain"]
    forged = rehash(docs)  # rehashed by whoever holds the store: the chain holds...
    report = audit("g", forged)
    # ...and the game is reported as one this build cannot re-decide, never as passed.
    assert report.status == "incomplete" and "rules" in report.unchecked
