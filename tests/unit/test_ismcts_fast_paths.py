"""ISMCTS's cheaper iteration (issue 38) draws and chooses as the plain one did.

An audit replays a timed search with its recorded iteration count and must find the same
move, so nothing here may change a draw or a choice: ``FastRng.shuffle`` is
``random.Random.shuffle`` written out (the same draws), UCB1 reads ``ln`` of an availability
count from a table (``math.log``'s own values), the root's children are keyed by candidate
index (one child per distinct command, as when keyed by the command). The pins of recorded
searches (``test_fox_kernel_pins.py`` and the other games') hold the choices themselves.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from shared.bots import ismcts
from shared.games import fox
from shared.games.fox import search as fox_search
from shared.games.rng import Rng
from shared.match import projections

ENGINE: Any = fox  # the engine contract, as the service holds it


class OwnDraws(random.Random):
    """A generator whose draws are not ``random.Random``'s (``random()`` overridden: its
    ``_randbelow`` then does not use ``getrandbits``)."""

    def random(self) -> float:
        return super().random() ** 2


@pytest.mark.parametrize("seed", range(20))
def test_fast_rng_shuffles_exactly_as_random_shuffles(seed: int) -> None:
    for size in (*range(0, 40), ismcts._SHUFFLE_MAX, ismcts._SHUFFLE_MAX + 1, 100):
        items = [f"c{i}" for i in range(size)]
        mine, theirs = random.Random(seed * 1000 + size), random.Random(seed * 1000 + size)
        expected = list(items)
        theirs.shuffle(expected)
        assert ismcts.FastRng(mine).shuffle(items) == tuple(expected)
        assert mine.getstate() == theirs.getstate()  # the same draws, no more, no fewer


def test_another_generator_shuffles_by_its_own_method() -> None:
    items = list(range(30))
    expected = list(items)
    OwnDraws(5).shuffle(expected)
    assert ismcts.FastRng(OwnDraws(5)).shuffle(items) == tuple(expected)


def test_the_ln_table_holds_math_log() -> None:
    table = ismcts._ln_table(5_000)
    assert isinstance(table, list) and len(table) >= 5_000
    assert all(table[n] == math.log(n) for n in range(1, 5_000))
    past = ismcts._ln_table(ismcts._LN_MAX + 1)  # too long to keep: computed each time
    assert isinstance(past, ismcts._Ln) and past[12_345] == math.log(12_345)


def one_hand_view(secret: str = "fast-paths", moves: int = 6) -> dict[str, Any]:
    """A seat's view a few random moves into a one-hand game, with a choice to make."""
    rnd = random.Random(secret)
    state: Any = None
    for event in fox.setup(2, {"target": 1}, Rng(secret)):
        state = fox.evolve(state, event)
    for n in range(40):
        seat = fox.to_act(state)[0]
        legal = fox.legal_commands(state, seat)
        if n >= moves and len(legal) > 1:
            return {**projections.game_view(ENGINE, state, seat), "game": "fox"}
        state = fox.evolve_all(state, fox.decide(state, seat, rnd.choice(legal),
                                                 Rng(secret, f"v{n}")))  # fmt: skip
    raise AssertionError("no choice found")


def test_a_timed_search_is_replayed_by_its_iteration_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The audit's property, with the ``ln`` table grown several times within the budget."""
    monkeypatch.setattr(ismcts, "_LN_AHEAD", 8)
    view = one_hand_view()
    timed = ismcts.search(view, random.Random(3), budget_ms=40)
    assert timed.iterations > 64
    counted = ismcts.search(view, random.Random(3), iterations=timed.iterations)
    assert (counted.command, counted.children) == (timed.command, timed.children)


def test_equal_root_candidates_share_one_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game's ``root_commands`` may propose a command twice: one child, as when the root
    was keyed by the command, answered with the last of the equal candidates' JSON."""
    view = one_hand_view()
    listed = list(view["legal_commands"])
    twice = [*listed, *({**doc, "note": "again"} for doc in listed)]
    monkeypatch.setattr(fox_search, "root_commands", lambda _view, _rand: twice, raising=False)
    found = ismcts.search(view, random.Random(4), iterations=300)
    assert len(found.children) == len(listed)
    assert sum(visits for _, visits, _ in found.children) == 300
    assert all(doc.get("note") == "again" for doc, _, _ in found.children)
