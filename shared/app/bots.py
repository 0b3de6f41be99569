"""The bot registry: every bot the seat schema, the CLI and the play-out driver accept.

A bot is a pure function of one seat's view and a random source (derived from the game's
secret seed by the caller: ``rng.bot_random``), returning a client command or None. It never
gets the game state, so it cannot cheat.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from shared import games

Bot = Callable[[Mapping[str, Any], random.Random], dict[str, Any] | None]


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


BOTS: dict[str, Bot] = {"random": random_bot}


def names() -> list[str]:
    """The bot names, as the seat schema lists them."""
    return list(BOTS)


def get(name: str) -> Bot:
    """The bot called ``name``; KeyError if there is none."""
    return BOTS[name]
