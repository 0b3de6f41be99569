"""The Fox in the Forest ``heuristic`` bot (``shared.games.fox.bots``): legal, pure, and strong."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.app.playout import play
from shared.games import fox
from shared.games.fox.bots import choose
from shared.games.rng import bot_random
from shared.match.projections import view
from shared.match.record import GameRecord

RANDOMS = [{"bot": "random"}, {"bot": "random"}]  # the chooser plays the heuristic's seat


def heuristic_at(
    hseat: int, seed: str, seen: list[dict[str, Any]] | None = None, *, check_other: bool = True
) -> Callable[[GameRecord, int], tuple[str, dict[str, Any]] | None]:
    """A play-out chooser: the heuristic at ``hseat`` (checked legal), random at the other;
    ``check_other`` also asks the heuristic at the seat not to act (it must say None)."""

    def chooser(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]] | None:
        doc = view(record, seat)
        if check_other:
            other = view(record, 1 - seat)
            assert choose(other, bot_random(seed, 1 - seat, record.version)) is None
        if seat != hseat:
            return None
        command = choose(doc, bot_random(seed, seat, record.version))
        assert command is not None and command in doc["legal_commands"], (command, doc)
        if seen is not None:
            seen.append(doc)
        return f"h-{seat}-{record.version}", command

    return chooser


def play_game(
    seed: str,
    target: int,
    hseat: int,
    seen: list[dict[str, Any]] | None = None,
    *,
    check_other: bool = True,
) -> Any:
    """The final record of a game, the heuristic at ``hseat`` against random."""
    played = play(
        "fox",
        RANDOMS,
        {"target": target},
        seed,
        chooser=heuristic_at(hseat, seed, seen, check_other=check_other),
        keep_envelopes=False,
    )
    assert fox.outcome(played.record.state) is not None
    return played.record


# --- 1. every state reached: a legal command (or None when the seat has nothing to do) -------


@settings(max_examples=30, deadline=None)
@given(
    seed=st.text(min_size=1, max_size=12),
    target=st.sampled_from([1, 7, 21]),
    hseat=st.sampled_from([0, 1]),
)
def test_always_legal_over_random_seeds(seed: str, target: int, hseat: int) -> None:
    play_game(seed, target, hseat)


@pytest.mark.parametrize("target", [1, 7, 21])
@pytest.mark.parametrize("seed", ["fixed-0", "fixed-1", "fixed-2"])
def test_always_legal_fixed_seeds(seed: str, target: int) -> None:
    for hseat in (0, 1):
        play_game(seed, target, hseat)


def test_none_after_the_game_and_for_the_seat_not_to_act() -> None:
    record = play_game("over", 1, 0)
    for seat in (0, 1):
        doc = view(record, seat)
        assert doc["outcome"] is not None
        assert choose(doc, bot_random("over", seat, record.version)) is None


# --- 2. a pure function of its view --------------------------------------------------------


def test_same_view_same_command_and_view_untouched() -> None:
    seen: list[dict[str, Any]] = []
    play_game("pure", 7, 1, seen)
    assert any(d["phase"] == "fox_exchange" for d in seen) or len(seen) > 20
    for doc in seen:
        before = copy.deepcopy(doc)
        seat, version = doc["seat"], doc["version"]
        first = choose(copy.deepcopy(doc), bot_random("pure", seat, version))
        second = choose(copy.deepcopy(doc), bot_random("pure", seat, version))
        third = choose(doc, bot_random("pure", seat, version))
        assert first == second == third
        assert doc == before  # reads its argument, never writes it


# --- 3. strength against random ------------------------------------------------------------

GAMES = 200
TARGET = 16


def test_beats_random_clearly() -> None:
    wins = 0
    for i in range(GAMES):
        hseat = i % 2  # half the games at each seat
        record = play_game(f"strength-{i}", TARGET, hseat, check_other=False)
        result = fox.outcome(record.state)
        wins += hseat in result["winners"] and not result["draw"]
    rate = wins / GAMES
    half = 1.96 * math.sqrt(rate * (1 - rate) / GAMES)  # 95% normal interval
    print(f"heuristic vs random: {wins}/{GAMES} = {rate:.3f} ± {half:.3f}")
    assert rate >= 0.70


# --- 4. scenarios from real engine states ---------------------------------------------------


class _Stop(Exception):
    """The scripted part of a game is over: the view to test has been taken."""


def cards(suit: str, *ranks: int) -> list[dict[str, Any]]:
    return [{"suit": suit, "rank": r} for r in ranks]


def scripted_view(deal: dict[str, Any], script: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The view of the seat to act after ``script`` (client commands, in turn) from ``deal``."""
    taken: list[dict[str, Any]] = []
    moves = iter(script)

    def chooser(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]]:
        move = next(moves, None)
        if move is None:
            taken.append(view(record, seat))
            raise _Stop
        return f"s-{record.version}", move

    with pytest.raises(_Stop):
        play("fox", RANDOMS, {"target": 21, "deal": deal}, "scene", chooser=chooser)
    return taken[0]


def play_of(suit: str, rank: int) -> dict[str, Any]:
    return {"type": "play", "card": {"suit": suit, "rank": rank}}


def decide(doc: dict[str, Any]) -> dict[str, Any] | None:
    return choose(doc, bot_random("scene", doc["seat"], doc["version"]))


# Seat 1 deals, so seat 0 leads the first trick. Moons are trump (decree: the 10 of moons).
WEAK = {
    "dealer": 1,
    "hands": [
        cards("bells", 3, 5, 7, 9, 10, 11) + cards("keys", 3, 5, 7, 9, 10, 11) + cards("moons", 11),
        cards("bells", 1, 2, 4, 6, 8) + cards("keys", 1, 2, 4, 6, 8) + cards("moons", 1, 2, 4),
    ],
    "decree": {"suit": "moons", "rank": 10},
    "deck": cards("moons", 3, 5, 6, 7, 8, 9),
}


def test_weak_hand_dodges_with_the_highest_card_that_loses() -> None:
    doc = scripted_view(WEAK, [play_of("bells", 7)])
    assert doc["seat"] == 1 and doc["phase"] == "play"
    # The 8 would win; of the 1, 2, 4 and 6 that lose, the 6 is the most dangerous to keep.
    assert decide(doc) == play_of("bells", 6)


def test_weak_hand_keeps_its_seven_out_of_the_opponents_trick() -> None:
    deal = {
        "dealer": 1,
        "hands": [
            cards("bells", 3, 5, 6, 8, 9, 10, 11)
            + cards("keys", 3, 5, 9, 10, 11)
            + cards("moons", 11),
            cards("bells", 1, 2, 4, 7) + cards("keys", 1, 2, 4, 6, 7, 8) + cards("moons", 1, 2, 4),
        ],
        "decree": {"suit": "moons", "rank": 10},
        "deck": cards("moons", 3, 5, 6, 7, 8, 9),
    }
    doc = scripted_view(deal, [play_of("bells", 10)])
    # Every bell loses; the 7 is the highest, but it would give the opponent a point.
    assert decide(doc) == play_of("bells", 4)


STRONG = {
    "dealer": 1,
    "hands": [
        cards("bells", 1, 2, 3, 4, 5, 6, 7) + cards("keys", 1, 2, 3, 4, 5, 6),
        cards("moons", 4, 6, 8, 9, 10, 11)
        + cards("bells", 8, 9, 10, 11)
        + cards("keys", 8, 10, 11),
    ],
    "decree": {"suit": "moons", "rank": 7},
    "deck": cards("moons", 1, 2, 3, 5) + cards("keys", 7, 9),
}


def test_strong_hand_takes_with_the_cheapest_winner() -> None:
    doc = scripted_view(STRONG, [play_of("bells", 2)])
    assert doc["seat"] == 1
    assert decide(doc) == play_of("bells", 8)  # every bell wins: the 8 is the cheapest


def test_weak_hand_fox_gives_its_monarch_of_trump_away() -> None:
    # Seat 0 deals: seat 1 leads, with its Fox. Its hand is weak but for the 11 of trump.
    deal = {
        "dealer": 0,
        "hands": [
            cards("bells", 3, 5, 7, 8, 9, 10, 11) + cards("keys", 3, 5, 7, 9, 10, 11),
            cards("bells", 1, 2, 4, 6) + cards("keys", 1, 2, 4, 6, 8) + cards("moons", 1, 3, 4, 11),
        ],
        "decree": {"suit": "moons", "rank": 2},
        "deck": cards("moons", 5, 6, 7, 8, 9, 10),
    }
    doc = scripted_view(deal, [play_of("moons", 3)])
    assert doc["seat"] == 1 and doc["phase"] == "fox_exchange"
    # Moons stay trump, and the one card that would surely win a trick leaves the hand.
    assert decide(doc) == {"type": "exchange_decree", "card": {"suit": "moons", "rank": 11}}
