"""Write ``fox_search_pins.json``: what Fox's bots, play-outs and rules do today, to pin them.

Run once, from the tree whose behaviour is to be kept (issue 26 ran it on the tree before the
kernel conversion; issue 28 again after a deliberate change of the search, see
``test_fox_kernel_pins.py``)::

    .venv/bin/python -m tests.unit.data.make_fox_search_pins > tests/unit/data/fox_search_pins.json

It only goes through names both trees have (``games.get``, ``ismcts``, the service's
``heuristic`` bot, the engine's ``determinizer``), so the pins say what the engine contract
does, not how it is built. ``tests/unit/test_fox_kernel_pins.py`` replays every case and
asserts the same answers. Recorded games' bot moves are re-decided by audits, so a search that
drew in another order would fail every old game's audit: these pins are the bytes that must
not move.
"""

from __future__ import annotations

import hashlib
import random
import sys
from functools import reduce
from typing import Any

import orjson

from shared import games
from shared.app import bots
from shared.bots import ismcts
from shared.games.rng import Rng
from shared.match import projections

ITERATIONS = 150
# (options, phase the state is taken in, how many such states to pass first at most); the
# seed is the case's index. Matches to 21 reach later rounds; ``first_follow`` asks for a
# play that follows a lead (the Monarch and follow-suit rules then narrow the choice).
CASES: tuple[tuple[dict[str, Any], str, int], ...] = (
    ({}, "play", 3),
    ({}, "play", 40),
    ({}, "play", 50),
    ({}, "play", 60),
    ({"target": 1}, "play", 6),
    ({"target": 1}, "play", 11),
    ({"target": 5}, "play", 8),
    ({"target": 5}, "play", 10),
    ({}, "follow", 10),
    ({}, "follow", 60),
    ({"target": 1}, "follow", 5),
    ({"target": 10}, "follow", 15),
    ({}, "fox_exchange", 1),
    ({}, "fox_exchange", 4),
    ({"target": 1}, "fox_exchange", 1),
    ({"target": 10}, "fox_exchange", 2),
    ({}, "woodcutter_return", 1),
    ({}, "woodcutter_return", 5),
    ({"target": 1}, "woodcutter_return", 1),
    ({"target": 10}, "woodcutter_return", 2),
)
ROLLOUT_SEEDS = (1, 2, 3)
# Whole games played with seeded random commands: their events are the decide/evolve pin.
GAMES: tuple[tuple[dict[str, Any], int], ...] = (({}, 0), ({"target": 1}, 1), ({"target": 10}, 2))
MAX_STEPS = 5_000
# Play-outs from the start of a match to 1000 points: every one ends at ``ismcts.PLAYOUT_CAP``
# moves and is scored by the scores (the cap may fall inside a round).
CAPPED_SEEDS = (1, 2, 3, 4)


def start(options: dict[str, Any], secret: str) -> Any:
    """The state after setup, drawn as the service draws (``Rng(secret)``)."""
    engine = games.get("fox")
    return reduce(engine.evolve, engine.setup(2, options, Rng(secret)), None)


def step(state: Any, seat: int, command: Any, secret: str, n: int) -> tuple[Any, list[Any]]:
    """``command`` decided with the service's per-action stream ``v<n>``, then evolved."""
    engine = games.get("fox")
    events = engine.decide(state, seat, command, Rng(secret, f"v{n}"))
    for event in events:
        state = engine.evolve(state, event)
    return state, events


def phase_of(state: Any) -> str:
    """The case's phase name of ``state``: the view's phase, ``follow`` for a play to a lead."""
    doc = games.get("fox").view(state, None)
    if doc["phase"] == "play" and len(doc["trick"]) == 1:
        return "follow"
    return str(doc["phase"])


def reach(index: int, options: dict[str, Any], phase: str, most: int) -> tuple[Any, str]:
    """Random play (seed ``index``) until the ``k``-th state in ``phase`` (``k`` drawn below
    ``most``) with a choice to make; the state and the game's secret."""
    engine = games.get("fox")
    secret = f"pin-{index}"
    rnd = random.Random(index)
    wanted = rnd.randrange(most)
    while True:  # a game that ends before the state wanted tries the next game
        state = start(options, secret)
        seen = 0
        for n in range(MAX_STEPS):
            if engine.outcome(state) is not None:
                break
            seat = engine.to_act(state)[0]
            legal = engine.legal_commands(state, seat)
            if phase_of(state) == phase and len(legal) > 1:
                if seen == wanted:
                    return state, secret
                seen += 1
            state, _ = step(state, seat, rnd.choice(legal), secret, n)
        secret += "+"


def digest(value: Any) -> str:
    """A short digest of a state's ``repr`` (the engine's frozen State type, unchanged)."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def case_pin(index: int, options: dict[str, Any], phase: str, most: int) -> dict[str, Any]:
    engine: Any = games.get("fox")
    state, secret = reach(index, options, phase, most)
    seat = engine.to_act(state)[0]
    doc = projections.game_view(engine, state, seat)
    doc["game"] = "fox"
    found = ismcts.search(doc, random.Random(index), iterations=ITERATIONS)
    rollout = ismcts.default_rollout(engine)
    rollouts = []
    for r in ROLLOUT_SEEDS:
        rand = random.Random(r)
        fast = list(rollout(engine, state, rand))
        fast_next = rand.getrandbits(32)
        rand = random.Random(r)
        plain = ismcts.random_playout(engine, state, rand)
        deal = engine.determinizer(doc, seat)(ismcts.FastRng(random.Random(r)))
        rollouts.append(
            {
                "seed": r,
                "rollout": fast,
                "rollout_next": fast_next,
                "random_playout": plain,
                "random_playout_next": rand.getrandbits(32),
                "determinized": digest(deal),
            }
        )
    return {
        "options": options,
        "phase": phase,
        "most": most,
        "secret": secret,
        "state": digest(state),
        "seat": seat,
        "view": doc,
        "search": {
            "command": found.command,
            "children": [[c, n, round(m, 9)] for c, n, m in found.children],
        },
        "heuristic": bots._heuristic(doc, random.Random(index), {}),
        "rollouts": rollouts,
    }


def game_pin(options: dict[str, Any], seed: int) -> dict[str, Any]:
    engine: Any = games.get("fox")
    secret = f"pin-game-{seed}"
    rnd = random.Random(seed)
    events = list(engine.setup(2, options, Rng(secret)))
    state = reduce(engine.evolve, events, None)
    for n in range(MAX_STEPS):
        if engine.outcome(state) is not None:
            break
        seat = engine.to_act(state)[0]
        command = rnd.choice(engine.legal_commands(state, seat))
        state, new = step(state, seat, command, secret, n)
        events += new
    return {
        "options": options,
        "seed": seed,
        "events": [engine.event_to_json(e) for e in events],
        "state": digest(state),
        "outcome": engine.outcome(state),
    }


def capped_pin(seed: int) -> dict[str, Any]:
    engine: Any = games.get("fox")
    state = start({"target": 1000}, f"pin-capped-{seed}")
    rand = random.Random(seed)
    fast = list(ismcts.default_rollout(engine)(engine, state, rand))
    fast_next = rand.getrandbits(32)
    rand = random.Random(seed)
    plain = ismcts.random_playout(engine, state, rand)
    return {
        "seed": seed,
        "rollout": fast,
        "rollout_next": fast_next,
        "random_playout": plain,
        "random_playout_next": rand.getrandbits(32),
    }


def main() -> None:
    pins = {
        "iterations": ITERATIONS,
        "cases": [case_pin(i, *case) for i, case in enumerate(CASES)],
        "games": [game_pin(*g) for g in GAMES],
        "capped": [capped_pin(s) for s in CAPPED_SEEDS],
    }
    sys.stdout.write(orjson.dumps(pins, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
