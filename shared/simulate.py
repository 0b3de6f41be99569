"""In-process bot games (no Redis) through the one play-out driver, for simulation and
benchmarks: the same games the service would play from the same seeds."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared import games
from shared.app.playout import play


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


def simulate(
    game: str,
    *,
    games_count: int,
    seed: str,
    seats: int | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    bots: Sequence[Mapping[str, Any]] | None = None,
    rotate: bool = False,
) -> SimulationResult:
    """Play ``games_count`` bot games of ``game`` in-process; game ``i`` has seed
    ``f"{seed}:{i}"`` and the bots (seat specs, ``random`` unless given, one per entrant) draw
    from it as the service's bots would. With ``rotate`` entrant ``e`` sits at seat
    ``(e + i) % n`` in game ``i``, so that no entrant keeps the seat's advantage; wins and
    scores are counted per entrant."""
    engine = games.get(game)
    n = seats or (len(bots) if bots else engine.MIN_SEATS)
    entrants = [dict(b) for b in bots] if bots else [{"bot": "random"}] * n
    result = SimulationResult(game=game, wins=[0.0] * n, score_sums=[0.0] * n)
    start = time.perf_counter()
    for i in range(games_count):
        shift = i % n if rotate else 0
        # seat s is played by entrant (s - shift) % n
        at_seat = [(s - shift) % n for s in range(n)]
        specs = [entrants[e] for e in at_seat]
        played = play(game, specs, dict(options or {}), f"{seed}:{i}", keep_envelopes=False)
        state, actions = played.record.state, played.actions
        final = engine.outcome(state)
        assert final is not None
        winners = final["winners"]
        for w in winners:
            result.wins[at_seat[w]] += 1 / len(winners)
        for s, score in enumerate(final["scores"]):
            result.score_sums[at_seat[s]] += score
        result.draws += bool(final.get("draw"))
        result.games += 1
        result.actions += actions
        if progress:
            progress(i + 1)
    result.seconds = time.perf_counter() - start
    return result
