"""Play-outs for the engine property tests, through the one play-out driver
(``shared.app.playout.play``): the service's randomness labels (``setup``, then ``v<version>``)
and, unless a test's ``policy`` picks a command, the service's ``random`` bot drawing from the
game's seed.

What the tests check is gathered with the driver's ``on_step``: the state before every move,
the seat, the engine command, the engine's events and the state after them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

from shared import games
from shared.app.playout import Played, play
from shared.games.rng import Rng
from shared.match.record import GameRecord

# (engine state before the move, seat) -> an engine command, or None to let the seat's bot act
Policy = Callable[[Any, int], Any | None]


@dataclass(frozen=True, slots=True)
class Step:
    """One move: the state before, who moved, the engine command, its events, the state after."""

    state: Any
    seat: int
    command: Any
    events: list[Any]
    after: Any


@dataclass(slots=True)
class Playout:
    """A finished game: the engine's setup events, every move, the final state."""

    setup: list[Any]
    steps: list[Step]
    final: Any
    played: Played

    @property
    def states(self) -> list[Any]:
        """The state after setup, then after each move (the last one is ``final``)."""
        return [*(s.state for s in self.steps), self.final]

    @property
    def batches(self) -> list[list[Any]]:
        """The setup events, then each move's events."""
        return [self.setup, *(s.events for s in self.steps)]

    @property
    def events(self) -> list[Any]:
        """Every engine event, in order."""
        return [e for batch in self.batches for e in batch]


def playout(
    game: str,
    seats: int,
    options: Mapping[str, Any],
    seed: str,
    *,
    policy: Policy | None = None,
    max_actions: int = 100_000,
    on_step: Callable[[Step], None] | None = None,
) -> Playout:
    """``game`` for ``seats`` random bots played to its end by the driver from ``seed``;
    ``policy`` may pick a seat's command instead (sent as the client JSON of it), and
    ``on_step`` sees each move as it is made."""
    engine = games.get(game)
    steps: list[Step] = []

    def step(record: GameRecord, seat: int, command: Any, events: list[Any], after: Any) -> None:
        steps.append(Step(record.state, seat, command, list(events), after))
        if on_step is not None:
            on_step(steps[-1])

    def chooser(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]] | None:
        assert policy is not None
        command = policy(record.state, seat)
        if command is None:
            return None
        return f"test-{seat}-{record.version}", engine.command_to_json(command)

    played = play(
        game,
        [{"bot": "random"}] * seats,
        options,
        seed,
        chooser=chooser if policy is not None else None,
        keep_envelopes=False,  # states and engine events are all the tests need
        max_actions=max_actions,
        on_step=step,
    )
    record = played.record
    # The engine events the driver's game started from (``creation_events`` sends them as
    # JSON): the same setup, options and label.
    setup = engine.setup(seats, record.options, Rng(seed, "setup"))
    first = steps[0].state if steps else record.state
    assert reduce(engine.evolve, setup, None) == first, "setup events differ from the driver's"
    for a, b in zip(steps, [*steps[1:], None], strict=True):
        assert a.after == (b.state if b is not None else record.state)
    return Playout(setup=setup, steps=steps, final=record.state, played=played)
