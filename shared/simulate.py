"""In-process bot games (no Redis): the engine contract driven in a loop, for simulation and
benchmarks."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shared import games
from shared.games.base import Engine
from shared.games.rng import Rng
from shared.projections import game_view


@dataclass(slots=True)
class SimulationResult:
    """What a batch of games produced."""

    game: str
    games: int = 0
    actions: int = 0
    seconds: float = 0.0
    wins: list[float] = field(default_factory=list)  # per seat; a shared win counts 1/k
    score_sums: list[float] = field(default_factory=list)
    draws: int = 0

    @property
    def games_per_second(self) -> float:
        """Games finished per wall-clock second."""
        return self.games / self.seconds if self.seconds else 0.0

    @property
    def actions_per_second(self) -> float:
        """Commands applied per wall-clock second."""
        return self.actions / self.seconds if self.seconds else 0.0


def play_one(
    engine: Engine,
    seats: int,
    options: Mapping[str, Any],
    seed: str,
    bot_rng: random.Random,
    max_actions: int = 100_000,
) -> tuple[Any, int]:
    """Play one game with random bots; returns (final state, actions)."""
    state = None
    for event in engine.setup(seats, options, Rng(seed, "setup")):
        state = engine.evolve(state, event)
    special = getattr(engine, "random_command", None)
    to_act, legal, decide, evolve, outcome = (
        engine.to_act, engine.legal_commands, engine.decide, engine.evolve, engine.outcome)
    actions = 0
    choice = bot_rng.choice
    while outcome(state) is None:
        if actions >= max_actions:
            raise RuntimeError(f"game did not end within {max_actions} actions")
        seat = to_act(state)[0]
        if special is not None:
            command = engine.parse_command(special(game_view(engine, state, seat), bot_rng))
        else:
            command = choice(legal(state, seat))
        for event in decide(state, seat, command, Rng(seed, f"a{actions}")):
            state = evolve(state, event)
        actions += 1
    return state, actions


def simulate(
    game: str,
    *,
    games_count: int,
    seed: str,
    seats: int | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> SimulationResult:
    """Play ``games_count`` random-bot games of ``game`` in-process."""
    engine = games.get(game)
    n = seats or engine.MIN_SEATS
    opts = engine.parse_options(n, dict(options or {}))
    result = SimulationResult(game=game, wins=[0.0] * n, score_sums=[0.0] * n)
    bot_rng = random.Random(seed)
    start = time.perf_counter()
    for i in range(games_count):
        state, actions = play_one(engine, n, opts, f"{seed}:{i}", bot_rng)
        final = engine.outcome(state)
        assert final is not None
        winners = final["winners"]
        for w in winners:
            result.wins[w] += 1 / len(winners)
        for s, score in enumerate(final["scores"]):
            result.score_sums[s] += score
        result.draws += bool(final.get("draw"))
        result.games += 1
        result.actions += actions
        if progress:
            progress(i + 1)
    result.seconds = time.perf_counter() - start
    return result
