"""``benchmarks/tree_bot.py``: another checkout's bot, played as a kit bot from a child
process started in that checkout (the baseline of an SPRT match against an earlier version)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.app.playout import play
from shared.match.projections import view

ROOT = Path(__file__).resolve().parents[2]


def test_the_baseline_answers_from_its_own_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import tree_bot

    # This very checkout stands in for the older one; its heuristic is deterministic enough
    # to check against: the child must answer one of the view's legal commands.
    monkeypatch.setenv("TABLETOP_BASELINE_TREE", str(ROOT))
    monkeypatch.setenv("TABLETOP_BASELINE_BOT", "heuristic")
    monkeypatch.setattr(tree_bot, "_child", None)
    bot = tree_bot.TreeBot()
    asked = []

    def chooser(record, seat):  # type: ignore[no-untyped-def]
        doc = view(record, seat)
        command = bot.act(doc, doc["legal_commands"])
        assert command in doc["legal_commands"]
        asked.append(command)
        return (f"c{record.version}", command)

    played = play("fox", [{"bot": "random"}] * 2, {"target": 1}, "tree-bot", chooser=chooser,
                  keep_envelopes=False)  # fmt: skip
    assert played.record.outcome is not None and len(asked) >= 26


def test_a_missing_tree_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import tree_bot

    monkeypatch.delenv("TABLETOP_BASELINE_TREE", raising=False)
    monkeypatch.setattr(tree_bot, "_child", None)
    with pytest.raises(RuntimeError, match="TABLETOP_BASELINE_TREE"):
        tree_bot.TreeBot().act({"id": "g"}, [])


def test_a_spec_is_read_as_the_command_line_spells_it() -> None:
    from benchmarks import tree_bot

    assert tree_bot._spec("ismcts:budget_ms=100") == {"bot": "ismcts", "budget_ms": 100}
    assert tree_bot._spec("heuristic") == {"bot": "heuristic"}
