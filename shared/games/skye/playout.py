"""Random play-outs through the public engine API (for property tests and benchmarks).

A play-out does what the service and its random bot do: pick a seat that must act, build that
seat's view, let ``random_command`` choose a legal client command from the view alone, parse
it, decide it and fold the events in. Pure: all randomness comes from the given generators.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.games.rng import Rng
from shared.games.skye import engine
from shared.games.skye.messages import parse_command
from shared.games.skye.state import State, evolve


@dataclass(slots=True)
class Playout:
    """The end of a play-out: final state, every event, and the number of commands sent."""

    state: State
    events: list[Any] = field(default_factory=list)
    actions: int = 0


def random_game(
    seats: int,
    seed: int | str,
    options: Mapping[str, Any] | None = None,
    *,
    via_view: bool = True,
    on_step: Callable[[State, int, Any, list[Any]], None] | None = None,
) -> Playout:
    """Play one game with uniformly random legal commands.

    ``via_view`` chooses commands with ``random_command(view(state, seat))`` as a client
    would; without it, from ``legal_commands`` directly (prices still via ``random_prices``).
    ``on_step(state_before, seat, command, events)`` is called after every command.
    """
    rnd = random.Random(seed)
    events = engine.setup(seats, options or {}, Rng(str(seed), "setup"))
    state: Any = None
    for e in events:
        state = evolve(state, e)
    actions = 0
    while state.phase != "game_over":
        seat = rnd.choice(engine.to_act(state))
        if via_view:
            cmd = parse_command(engine.random_command(engine.view(state, seat), rnd))
        else:
            legal = engine.legal_commands(state, seat)
            if state.phase == "prices":
                p = state.players[seat]
                cmd = parse_command(engine.random_prices(list(p.drawn), p.gold, rnd))
            else:
                cmd = rnd.choice(legal)
        new = engine.decide(state, seat, cmd, Rng(str(seed), f"v{len(events)}"))
        if on_step is not None:
            on_step(state, seat, cmd, new)
        for e in new:
            state = evolve(state, e)
        events += new
        actions += 1
    return Playout(state=state, events=events, actions=actions)
