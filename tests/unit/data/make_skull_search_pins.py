"""Write ``skull_search_pins.json``: what Skull's bots and play-outs do today, to pin them.

Run once, from the tree whose behaviour is to be kept (issue 26 ran it on the tree before the
kernel conversion; issue 28 again after a deliberate change of the search, see
``test_skull_kernel_pins.py``)::

    .venv/bin/python -m tests.unit.data.make_skull_search_pins > tests/unit/data/skull_search_pins.json

It only goes through names both trees have (``games.get``, ``ismcts``, the service's
``heuristic`` bot), so the pins say what the engine contract does, not how it is built.
``tests/unit/test_skull_kernel_pins.py`` replays every case and asserts the same answers.
Recorded games' bot moves are re-decided by audits, so a search that drew in another order
would fail every old game's audit: these pins are the bytes that must not move.
"""

from __future__ import annotations

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
# (seats, next_starter rule, phase the state is taken in); the seed is the case's index.
CASES: tuple[tuple[int, str, str], ...] = (
    (3, "czech", "placing"),
    (4, "czech", "placing"),
    (5, "english", "placing"),
    (3, "czech", "bidding"),
    (4, "english", "bidding"),
    (6, "czech", "bidding"),
    (8, "czech", "bidding"),
    (3, "czech", "flipping"),
    (4, "czech", "flipping"),
    (5, "english", "flipping"),
    (6, "czech", "flipping"),
    (4, "czech", "penalty"),
    (3, "english", "penalty"),
    (5, "czech", "penalty"),
    (6, "english", "penalty"),
    (4, "english", "choosing_starter"),
    (3, "english", "choosing_starter"),
    (4, "czech", "placing"),
    (7, "czech", "bidding"),
    (4, "czech", "flipping"),
    (4, "czech", "blind_pick"),
    (6, "english", "blind_pick"),
    (12, "czech", "blind_pick"),
)
ROLLOUT_SEEDS = (1, 2, 3)
# Whole games played with seeded random commands: their events are the decide/evolve pin.
GAMES: tuple[tuple[int, str, int], ...] = ((3, "czech", 0), (4, "english", 1), (6, "czech", 2))
MAX_STEPS = 5_000


def start(seats: int, rule: str, secret: str) -> Any:
    """The state after setup, drawn as the service draws (``Rng(secret)``)."""
    engine = games.get("skull")
    return reduce(engine.evolve, engine.setup(seats, {"next_starter": rule}, Rng(secret)), None)


def step(state: Any, seat: int, command: Any, secret: str, n: int) -> tuple[Any, list[Any]]:
    """``command`` decided with the service's per-action stream ``v<n>``, then evolved."""
    engine = games.get("skull")
    events = engine.decide(state, seat, command, Rng(secret, f"v{n}"))
    for event in events:
        state = engine.evolve(state, event)
    return state, events


def reach(index: int, seats: int, rule: str, phase: str) -> tuple[Any, str, list[Any]]:
    """Random play (seed ``index``) until the ``k``-th state in ``phase`` (``k`` drawn too);
    the state, the game's secret and the commands (seat, client JSON) that reached it."""
    engine = games.get("skull")
    secret = f"pin-{index}"
    rnd = random.Random(index)
    wanted = rnd.randrange(12 if phase == "placing" else 3)  # placing: later rounds too
    while True:  # a game that never reaches the phase wanted tries the next game
        state = start(seats, rule, secret)
        path: list[Any] = []
        seen = 0
        for n in range(MAX_STEPS):
            if engine.outcome(state) is not None:
                break
            seat = engine.to_act(state)[0]
            legal = engine.legal_commands(state, seat)
            # "blind_pick" is the penalty after another player's skull (a pick, not a discard).
            here = state.phase if state.phase != "penalty" or not state.shuffled else "blind_pick"
            if phase in (here, state.phase) and len(legal) > 1:  # a choice, not a forced move
                if seen == wanted:
                    return state, secret, path
                seen += 1
            command = rnd.choice(legal)
            path.append([seat, engine.command_to_json(command)])
            state, _ = step(state, seat, command, secret, n)
        secret += "+"


def case_pin(index: int, seats: int, rule: str, phase: str) -> dict[str, Any]:
    engine: Any = games.get("skull")
    state, secret, path = reach(index, seats, rule, phase)
    seat = engine.to_act(state)[0]
    doc = projections.game_view(engine, state, seat)
    doc["game"] = "skull"
    found = ismcts.search(doc, random.Random(index), iterations=ITERATIONS)
    rollout = ismcts.default_rollout(engine)
    rollouts = []
    for r in ROLLOUT_SEEDS:
        rand = random.Random(r)
        fast = list(rollout(engine, state, rand))
        fast_next = rand.getrandbits(32)
        rand = random.Random(r)
        plain = ismcts.random_playout(engine, state, rand)
        rollouts.append(
            {
                "seed": r,
                "rollout": fast,
                "rollout_next": fast_next,
                "random_playout": plain,
                "random_playout_next": rand.getrandbits(32),
            }
        )
    return {
        "seats": seats,
        "rule": rule,
        "secret": secret,
        "path": path,
        "seat": seat,
        "view": doc,
        "search": {
            "command": found.command,
            "children": [[c, n, round(m, 9)] for c, n, m in found.children],
        },
        "heuristic": bots._heuristic(doc, random.Random(index), {}),
        "rollouts": rollouts,
    }


def game_pin(seats: int, rule: str, seed: int) -> dict[str, Any]:
    engine: Any = games.get("skull")
    secret = f"pin-game-{seed}"
    rnd = random.Random(seed)
    events = list(engine.setup(seats, {"next_starter": rule}, Rng(secret)))
    state = reduce(engine.evolve, events, None)
    for n in range(MAX_STEPS):
        if engine.outcome(state) is not None:
            break
        seat = engine.to_act(state)[0]
        command = rnd.choice(engine.legal_commands(state, seat))
        state, new = step(state, seat, command, secret, n)
        events += new
    return {
        "seats": seats,
        "rule": rule,
        "seed": seed,
        "events": [engine.event_to_json(e) for e in events],
        "outcome": engine.outcome(state),
    }


def main() -> None:
    pins = {
        "iterations": ITERATIONS,
        "cases": [case_pin(i, *case) for i, case in enumerate(CASES)],
        "games": [game_pin(*g) for g in GAMES],
    }
    sys.stdout.write(orjson.dumps(pins, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
