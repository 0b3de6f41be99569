"""Skull's bots and play-outs draw exactly as they did before the kernel (issue 26).

``data/skull_search_pins.json`` was written by ``data/make_skull_search_pins.py`` from the tree
before Skull became a kernel package: 23 states reached by seeded random play (every phase,
blind picks and own-skull discards, both next-starter rules, 3 to 12 seats), and for each the
seat's view, the command and root statistics of ``ismcts.search(view, Random(i),
iterations=150)``, the heuristic's choice, and seeded play-outs (the search's rollout and the
generic ``random_playout``: rewards and the generator's next draw, so a play-out that drew
once more or once less fails); plus whole random games' events. Recorded games' bot moves are
re-decided by audits, so a search that drew in another order would fail every old game's
audit: none of these may change.

Issue 28 changed the search on purpose (policy version 2 of Skull's ISMCTS: a flat search of
the heuristic's candidates, each played out as the heuristic plays) and wrote the pins again
from that tree: the views, the heuristic's choices and the games' events are the old tree's
still (unchanged bytes); the searches and the search's rollouts are version 2's. Version 3
(public choices valued on spectator deals of its own discs: ``search.root_search``) wrote
them once more: only the searches of the placing and bidding cases moved.
"""

from __future__ import annotations

import json
import random
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest

from shared.app import bots
from shared.bots import ismcts
from shared.match import projections
from tests.unit.data import make_skull_search_pins as make

PINS_PATH = Path(__file__).parent / "data" / "skull_search_pins.json"


@lru_cache(maxsize=1)
def _pins() -> dict[str, Any]:
    pins: dict[str, Any] = json.loads(PINS_PATH.read_text())
    return pins


CASES = list(range(len(_pins()["cases"])))


@cache
def _state(index: int) -> Any:
    """The pinned case's state, replayed from its commands through the engine."""
    pin = _pins()["cases"][index]
    engine: Any = make.games.get("skull")
    state = make.start(pin["seats"], pin["rule"], pin["secret"])
    for n, (seat, doc) in enumerate(pin["path"]):
        state, _ = make.step(state, seat, engine.parse_command(doc), pin["secret"], n)
    return state


def _view(index: int) -> dict[str, Any]:
    pin = _pins()["cases"][index]
    doc = projections.game_view(make.games.get("skull"), _state(index), pin["seat"])
    doc["game"] = "skull"
    return json.loads(json.dumps(doc))  # tuples as lists, as the pinned JSON holds them


def test_the_pins_cover_every_phase_and_decision() -> None:
    views = [c["view"] for c in _pins()["cases"]]
    assert {v["phase"] for v in views} == {
        "placing",
        "bidding",
        "flipping",
        "penalty",
        "choosing_starter",
    }
    assert any(v["pick_from"] for v in views) and any(
        v["phase"] == "penalty" and not v["pick_from"] for v in views
    )


@pytest.mark.parametrize("index", CASES)
def test_replay_reaches_the_pinned_view(index: int) -> None:
    assert _view(index) == _pins()["cases"][index]["view"]


@pytest.mark.parametrize("index", CASES)
def test_ismcts_chooses_as_pinned(index: int) -> None:
    pin = _pins()["cases"][index]
    found = ismcts.search(_view(index), random.Random(index), iterations=_pins()["iterations"])
    assert found.command == pin["search"]["command"]
    assert [[c, n, round(m, 9)] for c, n, m in found.children] == pin["search"]["children"]


@pytest.mark.parametrize("index", CASES)
def test_the_heuristic_chooses_as_pinned(index: int) -> None:
    pin = _pins()["cases"][index]
    assert bots._heuristic(_view(index), random.Random(index), {}) == pin["heuristic"]


@pytest.mark.parametrize("index", CASES)
def test_playouts_reward_and_draw_as_pinned(index: int) -> None:
    engine: Any = make.games.get("skull")
    state = _state(index)
    rollout = ismcts.default_rollout(engine)
    for pin in _pins()["cases"][index]["rollouts"]:
        rand = random.Random(pin["seed"])
        assert list(rollout(engine, state, rand)) == pin["rollout"]
        assert rand.getrandbits(32) == pin["rollout_next"]
        rand = random.Random(pin["seed"])
        assert ismcts.random_playout(engine, state, rand) == pin["random_playout"]
        assert rand.getrandbits(32) == pin["random_playout_next"]


@pytest.mark.parametrize("index", range(len(make.GAMES)))
def test_random_games_make_the_pinned_events(index: int) -> None:
    pin = _pins()["games"][index]
    played = make.game_pin(pin["seats"], pin["rule"], pin["seed"])
    assert played["events"] == pin["events"]
    assert played["outcome"] == pin["outcome"]
