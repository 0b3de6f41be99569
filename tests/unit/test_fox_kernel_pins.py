"""Fox's bots, play-outs and rules answer today exactly as they did before the kernel.

``data/fox_search_pins.json`` was written by ``data/make_fox_search_pins.py`` on the tree
before issue 26's conversion (the engine module, the ``shared.sim`` simulator, the bot
module). Recorded games' bot moves are re-decided by audits, so the search's command and its
statistics, the heuristic's command, the play-outs' rewards and the draws they consumed, the
determinizer's deals and whole games' events must all stay the same, to the bit.

Issue 28 changed the search on purpose (policy version 2 of Fox's ISMCTS: a play-out plays
the current round only and is worth its scores' match chance) and wrote the pins again from
that tree: the games' events, the heuristic's commands and the determinizer's deals are
those of the tree before the kernel still (unchanged bytes), and so are the searches and
play-outs of one-round games (``target`` 1), whose play-outs ended with the round already;
the searches and play-outs of matches, and the capped play-outs (which now stop at the
round's end), are version 2's.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from shared import games
from shared.app import bots
from shared.bots import ismcts
from shared.match import projections
from tests.unit.data import make_fox_search_pins as make

PINS: dict[str, Any] = orjson.loads(
    (Path(__file__).parent / "data" / "fox_search_pins.json").read_bytes()
)


def test_the_pins_cover_every_decision() -> None:
    assert PINS["iterations"] == make.ITERATIONS
    phases = {case["phase"] for case in PINS["cases"]}
    assert phases == {"play", "follow", "fox_exchange", "woodcutter_return"}
    assert len(PINS["cases"]) == len(make.CASES)


@pytest.mark.parametrize("index", range(len(make.CASES)))
def test_search_heuristic_and_playouts_are_unchanged(index: int) -> None:
    pin = PINS["cases"][index]
    engine: Any = games.get("fox")
    state, secret = make.reach(index, *make.CASES[index])
    assert secret == pin["secret"]
    assert make.digest(state) == pin["state"]
    seat = engine.to_act(state)[0]
    assert seat == pin["seat"]
    doc = projections.game_view(engine, state, seat)
    doc["game"] = "fox"
    assert orjson.loads(orjson.dumps(doc)) == pin["view"]

    found = ismcts.search(doc, random.Random(index), iterations=make.ITERATIONS)
    assert found.command == pin["search"]["command"]
    children = [[c, n, round(m, 9)] for c, n, m in found.children]
    assert children == pin["search"]["children"]
    assert bots._heuristic(doc, random.Random(index), {}) == pin["heuristic"]

    rollout = ismcts.default_rollout(engine)
    for want in pin["rollouts"]:
        rand = random.Random(want["seed"])
        assert list(rollout(engine, state, rand)) == want["rollout"]
        assert rand.getrandbits(32) == want["rollout_next"]
        rand = random.Random(want["seed"])
        assert ismcts.random_playout(engine, state, rand) == want["random_playout"]
        assert rand.getrandbits(32) == want["random_playout_next"]
        deal = engine.determinizer(doc, seat)(ismcts.FastRng(random.Random(want["seed"])))
        assert make.digest(deal) == want["determinized"]


@pytest.mark.parametrize("index", range(len(make.GAMES)))
def test_seeded_games_give_the_same_events(index: int) -> None:
    assert make.game_pin(*make.GAMES[index]) == PINS["games"][index]


@pytest.mark.parametrize("index", range(len(make.CAPPED_SEEDS)))
def test_capped_playouts_are_unchanged(index: int) -> None:
    assert make.capped_pin(make.CAPPED_SEEDS[index]) == PINS["capped"][index]
