"""The bot registry: every bot the seat schema, the CLI, the play-out driver and the
suggestion endpoint accept, with the settings each takes.

A bot is a pure function of one seat's view, a random source (derived from the game's secret
seed by the caller: ``rng.bot_random``) and its settings, returning a client command or None.
It never gets the game state, so it cannot cheat.

Seat specs: ``{"bot": "random"}``, ``{"bot": "heuristic"}``, ``{"bot": "ismcts",
"budget_ms": 200}`` or ``{"bot": "ismcts", "iterations": 2000}`` (one of the two).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shared import games

Play = Callable[[Mapping[str, Any], random.Random, Mapping[str, Any]], dict[str, Any] | None]


class BotSpecError(ValueError):
    """A seat spec the registry refuses; ``field`` names the offending key."""

    def __init__(self, field_: str, message: str) -> None:
        super().__init__(f"{field_}: {message}")
        self.field = field_
        self.message = message


@dataclass(frozen=True, slots=True, kw_only=True)
class BotKind:
    """One bot: how it plays, and the integer settings it takes (name -> (low, high))."""

    name: str
    play: Play
    settings: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    one_of: tuple[str, ...] = ()  # at most one of these settings may be given
    description: str = ""
    slow: bool = False  # it searches: its moves run on their own workers


def random_bot(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """A uniformly random legal command, or None when the seat has nothing to do.

    Games whose ``legal_commands`` cannot list every command (``TRAITS.lists_all_commands``
    false: prices in Isle of Skye) provide ``random_command(view, rng)``; for the rest any
    listed command is sendable as it is.
    """
    if view.get("seat") not in view.get("to_act", []):
        return None
    engine: Any = games.get(str(view["game"]))
    if not engine.TRAITS.lists_all_commands:
        command: dict[str, Any] = engine.random_command(view, rng)
        return command
    legal = view.get("legal_commands") or []
    return dict(rng.choice(legal)) if legal else None


def _random(view: Mapping[str, Any], rng: random.Random, _spec: Mapping[str, Any]) -> Any:
    return random_bot(view, rng)


def _heuristic(view: Mapping[str, Any], rng: random.Random, _spec: Mapping[str, Any]) -> Any:
    """The game's own hand-written policy (``shared/bots/<game>.py``)."""
    if view.get("seat") not in view.get("to_act", []) or view.get("outcome"):
        return None
    module: Any = importlib.import_module(f"shared.bots.{view['game']}")
    return module.choose(view, rng)


def _ismcts(view: Mapping[str, Any], rng: random.Random, spec: Mapping[str, Any]) -> Any:
    """Information-set MCTS over the engine's ``determinize`` (``shared/bots/ismcts.py``)."""
    from shared.bots import ismcts

    budget = spec.get("budget_ms")
    iterations = spec.get("iterations")
    if budget is None and iterations is None:
        iterations = ISMCTS_DEFAULT_ITERATIONS
    return ismcts.choose(
        view, rng, iterations=iterations, budget_ms=float(budget) if budget is not None else None
    )


ISMCTS_DEFAULT_ITERATIONS = 1000

BOTS: dict[str, BotKind] = {
    b.name: b
    for b in (
        BotKind(name="random", play=_random, description="a uniformly random legal command"),
        BotKind(name="heuristic", play=_heuristic, description="a hand-written policy per game"),
        BotKind(
            name="ismcts",
            play=_ismcts,
            settings={"budget_ms": (10, 10_000), "iterations": (1, 100_000)},
            one_of=("budget_ms", "iterations"),
            slow=True,
            description=f"information-set MCTS; budget_ms or iterations (default "
            f"{ISMCTS_DEFAULT_ITERATIONS} iterations)",
        ),
    )
}


def names() -> list[str]:
    """The bot names, as the seat schema lists them."""
    return list(BOTS)


def get(name: str) -> BotKind:
    """The bot called ``name``; KeyError if there is none."""
    return BOTS[name]


def parse_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The bot settings of a seat spec (``{"bot": ..., setting: value}``), checked against the
    bot's bounds: ``{setting: value}`` without ``bot`` and ``name``. Raises BotSpecError."""
    name = spec.get("bot")
    if name not in BOTS:
        raise BotSpecError("bot", f"one of {', '.join(BOTS)}")
    kind = BOTS[str(name)]
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key in ("bot", "name"):
            continue
        if key not in kind.settings:
            allowed = ", ".join(kind.settings) or "no settings"
            raise BotSpecError(key, f"the {name} bot takes {allowed}")
        low, high = kind.settings[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BotSpecError(key, f"an integer from {low} to {high}")
        out[key] = value
    given = [k for k in out if k in kind.one_of]  # in the order the spec gives them
    if len(given) > 1:
        raise BotSpecError(given[1], f"give only one of {' or '.join(kind.one_of)}")
    return out


def play(spec: Mapping[str, Any], view: Mapping[str, Any], rng: random.Random) -> Any:
    """The command the bot of ``spec`` sends from ``view`` (None: nothing to do)."""
    settings = parse_spec(spec)
    return BOTS[str(spec["bot"])].play(view, rng, settings)
