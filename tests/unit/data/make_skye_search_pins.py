"""Write ``skye_search_pins.json``: what Isle of Skye's bots and play-outs do today, to pin them.

Run once, from the tree whose behaviour is to be kept (issue 26 ran it on the tree before the
kernel conversion)::

    .venv/bin/python -m tests.unit.data.make_skye_search_pins > tests/unit/data/skye_search_pins.json

It only goes through names both trees have (``games.get``, ``projections.game_view``,
``ismcts``, the service's ``heuristic`` bot), so the pins say what the engine contract does,
not how it is built. ``tests/unit/test_skye_kernel_pins.py`` replays every case and asserts
the same answers. Recorded games' bot moves are re-decided by audits, so a search that drew in
another order would fail every old game's audit: these pins are the bytes that must not move.
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
# (seats, advanced variant, phase the state is taken in); the seed is the case's index.
CASES: tuple[tuple[int, bool, str], ...] = (
    (2, False, "prices"),
    (3, False, "prices"),
    (4, False, "prices"),
    (5, False, "prices"),
    (2, True, "prices"),
    (3, True, "prices"),
    (4, False, "prices"),
    (3, False, "prices"),
    (2, False, "buying"),
    (3, False, "buying"),
    (4, False, "buying"),
    (5, False, "buying"),
    (3, True, "buying"),
    (2, True, "buying"),
    (2, False, "building"),
    (3, False, "building"),
    (4, False, "building"),
    (5, False, "building"),
    (3, True, "building"),
    (2, True, "building"),
)
ROLLOUT_SEEDS = (1, 2, 3)
# Whole games played with seeded random commands: their events are the decide/evolve pin.
GAMES: tuple[tuple[int, bool, int], ...] = ((2, False, 0), (3, True, 1), (5, False, 2))
MAX_STEPS = 5_000


def start(seats: int, variant: bool, secret: str) -> Any:
    """The state after setup, drawn as the service draws (``Rng(secret)``)."""
    engine = games.get("skye")
    events = engine.setup(seats, {"advanced_variant": variant}, Rng(secret))
    return reduce(engine.evolve, events, None)


def step(state: Any, seat: int, command: Any, secret: str, n: int) -> tuple[Any, list[Any]]:
    """``command`` decided with the service's per-action stream ``v<n>``, then evolved."""
    engine = games.get("skye")
    events = engine.decide(state, seat, command, Rng(secret, f"v{n}"))
    for event in events:
        state = engine.evolve(state, event)
    return state, events


def random_move(state: Any, rnd: random.Random) -> tuple[int, Any]:
    """A seat among those to act and a uniformly random legal command of it, as the service's
    random bot draws it (``random_command`` on the seat's view)."""
    engine: Any = games.get("skye")
    seat = rnd.choice(engine.to_act(state))
    doc = projections.game_view(engine, state, seat)
    return seat, engine.parse_command(engine.random_command(doc, rnd))


def reach(index: int, seats: int, variant: bool, phase: str) -> tuple[Any, list[Any], str]:
    """Random play (seed ``index``) until the first state in ``phase`` of a round drawn at
    random, after skipping a few; the state, the commands (seat, client JSON) that reached it
    and the game's secret."""
    engine: Any = games.get("skye")
    secret = f"pin-{index}"
    rnd = random.Random(index)
    while True:  # a game that never reaches the phase wanted tries the next game
        state = start(seats, variant, secret)
        wanted_round = rnd.randint(1, state.rounds)
        skip = rnd.randrange(3)
        path: list[Any] = []
        for n in range(MAX_STEPS):
            if engine.outcome(state) is not None:
                break
            if state.phase == phase and state.round == wanted_round:
                if skip == 0:
                    return state, path, secret
                skip -= 1
            seat, command = random_move(state, rnd)
            path.append([seat, engine.command_to_json(command)])
            state, _ = step(state, seat, command, secret, n)
        secret += "+"


def case_pin(index: int, seats: int, variant: bool, phase: str) -> dict[str, Any]:
    engine: Any = games.get("skye")
    state, path, secret = reach(index, seats, variant, phase)
    seat = random.Random(index).choice(engine.to_act(state))
    doc = projections.game_view(engine, state, seat)
    doc["game"] = "skye"
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
        "variant": variant,
        "phase": phase,
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


def game_pin(seats: int, variant: bool, seed: int) -> dict[str, Any]:
    engine: Any = games.get("skye")
    secret = f"pin-game-{seed}"
    rnd = random.Random(seed)
    events = list(engine.setup(seats, {"advanced_variant": variant}, Rng(secret)))
    state = reduce(engine.evolve, events, None)
    for n in range(MAX_STEPS):
        if engine.outcome(state) is not None:
            break
        seat, command = random_move(state, rnd)
        state, new = step(state, seat, command, secret, n)
        events += new
    return {
        "seats": seats,
        "variant": variant,
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
