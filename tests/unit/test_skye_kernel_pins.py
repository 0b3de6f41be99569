"""Isle of Skye's bots, play-outs and decide/evolve pinned to what they did before the kernel
conversion (issue 26).

``data/skye_search_pins.json`` was written by ``data/make_skye_search_pins.py`` on the tree
before the conversion: from 20 states reached by seeded random play, the command a 150-iteration
ISMCTS search chooses (and its root statistics), the heuristic's choice, the default rollout's
and the random play-out's rewards (and what each left of its generator), and three whole seeded
games' events. Recorded games' bot moves are re-decided by audits, so the converted tree must
give exactly the same: the same events, the same draws in the same order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.unit.data import make_skye_search_pins as pins

PINS: dict[str, Any] = orjson.loads(
    (Path(__file__).parent / "data" / "skye_search_pins.json").read_bytes()
)


def _json(value: Any) -> Any:
    """``value`` as the fixture holds it (tuples as lists)."""
    return orjson.loads(orjson.dumps(value))


def test_the_pins_cover_every_decision_and_table() -> None:
    cases = PINS["cases"]
    assert PINS["iterations"] == pins.ITERATIONS and len(cases) == len(pins.CASES)
    assert {c["phase"] for c in cases} == {"prices", "buying", "building"}
    assert {(c["seats"], c["variant"]) for c in cases} >= {(2, False), (5, False), (3, True)}
    # The price searches really searched (several root candidates), so their draws are pinned.
    assert all(len(c["search"]["children"]) > 1 for c in cases if c["phase"] == "prices")


@pytest.mark.parametrize("index", range(len(pins.CASES)))
def test_search_heuristic_and_rollouts_choose_as_before(index: int) -> None:
    expected = PINS["cases"][index]
    got = _json(pins.case_pin(index, *pins.CASES[index]))
    assert got["path"] == expected["path"]  # the same random play reached the same state
    assert got["view"] == expected["view"]
    assert got["heuristic"] == expected["heuristic"]
    assert got["search"] == expected["search"]
    assert got["rollouts"] == expected["rollouts"]
    assert got == expected


@pytest.mark.parametrize("index", range(len(pins.GAMES)))
def test_seeded_games_decide_the_same_events(index: int) -> None:
    expected = PINS["games"][index]
    got = _json(pins.game_pin(*pins.GAMES[index]))
    assert got["events"] == expected["events"]
    assert got == expected
