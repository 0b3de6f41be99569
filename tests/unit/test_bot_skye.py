"""The Isle of Skye ``heuristic`` bot (``shared/games/skye/bots.py``): every command it sends is
accepted in every state it reaches, it is a pure function of (view, rng), and it beats random
bots."""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from shared.app.playout import Played, play
from shared.games.rng import bot_random
from shared.games.skye import bots as bot
from shared.match.projections import view
from shared.match.record import GameRecord

Seen = list[tuple[dict[str, Any], dict[str, Any]]]


def _play(
    seats: int,
    heuristic: Sequence[int],
    seed: str,
    options: Mapping[str, Any] | None = None,
    seen: Seen | None = None,
) -> Played:
    """A game where the seats in ``heuristic`` play the bot (through the driver's chooser) and
    the others the service's random bot; each bot command is checked against the view."""
    specs = [{"bot": "heuristic" if s in heuristic else "random"} for s in range(seats)]

    def chooser(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]] | None:
        if seat not in heuristic:
            return None
        doc = view(record, seat)
        command = bot.choose(doc, bot_random(seed, seat, record.version))
        assert command is not None, "the seat to act had nothing to do"
        if doc["phase"] in ("buying", "building"):
            assert command in doc["legal_commands"]
        else:
            assert doc["phase"] == "prices"
            assert command["type"] == "set_prices"
            drawn = doc["players"][seat]["drawn"]
            assert command["discard"] in drawn
            assert set(command["prices"]) == set(drawn) - {command["discard"]}
            assert all(p >= 1 for p in command["prices"].values())
            assert sum(command["prices"].values()) <= doc["players"][seat]["free_gold"]
        if seen is not None:
            seen.append((doc, command))
        # The driver decides it: an illegal command raises GameError there.
        return f"h-{seat}-{record.version}", command

    return play("skye", specs, options or {}, seed, chooser=chooser, keep_envelopes=False)


@pytest.mark.parametrize(
    ("seats", "heuristic", "options"),
    [
        (2, (0, 1), {}),
        (2, (1,), {"advanced_variant": True}),
        (3, (0, 1, 2), {"advanced_variant": True}),
        (4, (0, 2), {}),
        (5, (0, 1, 2, 3, 4), {}),
    ],
)
def test_every_command_is_accepted(
    seats: int, heuristic: tuple[int, ...], options: dict[str, Any]
) -> None:
    seen: Seen = []
    played = _play(seats, heuristic, f"legal-{seats}-{len(heuristic)}", options, seen)
    assert played.record.state.phase == "game_over"
    kinds = Counter(c["type"] for _, c in seen)
    assert kinds["set_prices"] and kinds["place"]
    assert kinds["buy"] + kinds["pass"] > 0
    # Finished, the bot sends nothing.
    final = view(played.record, heuristic[0])
    assert bot.choose(final, random.Random(0)) is None


def test_buys_and_passes_over_several_games() -> None:
    kinds: Counter[str] = Counter()
    for g in range(3):
        seen: Seen = []
        _play(3, (g,), f"buy-{g}", None, seen)
        kinds.update(c["type"] for _, c in seen)
    assert kinds["buy"] > 0 and kinds["pass"] > 0


def test_pure_and_deterministic() -> None:
    seen: Seen = []
    _play(3, (0, 1, 2), "pure", None, seen)
    phases = {doc["phase"] for doc, _ in seen}
    assert phases == {"prices", "buying", "building"}
    for i, (doc, _) in enumerate(seen[::7]):
        before = copy.deepcopy(doc)
        first = bot.choose(doc, random.Random(i))
        again = bot.choose(copy.deepcopy(doc), random.Random(i))
        assert first == again
        assert doc == before  # the view is not touched


def test_nothing_to_do_when_not_to_act() -> None:
    seen: Seen = []
    _play(2, (0, 1), "idle", None, seen)
    doc = copy.deepcopy(next(d for d, _ in seen if d["phase"] == "buying"))
    other = next(s for s in range(2) if s not in doc["to_act"])
    doc["seat"] = other
    assert bot.choose(doc, random.Random(0)) is None


def test_prices_fit_the_budget() -> None:
    for budget in range(2, 12):
        prices = bot._fit_prices({"a": 9.6, "b": 3.2}, budget)
        assert sum(prices.values()) <= budget
        assert min(prices.values()) >= 1
    assert bot._fit_prices({"a": 2.4, "b": 1.0}, 10) == {"a": 2, "b": 1}


def test_beats_random_bots() -> None:
    """3 players: the heuristic at each seat in turn against two random bots."""
    games, wins = 30, 0
    for g in range(games):
        seat = g % 3
        played = _play(3, (seat,), f"strength-{g}")
        result = played.record.engine.outcome(played.record.state)
        wins += seat in result["winners"]
    assert wins / games >= 0.6, f"won {wins} of {games}"
