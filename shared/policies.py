"""Bot policies: from what one seat may see (its view) to the command it sends.

A policy never gets the game state, only the seat's view, so it cannot cheat.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from shared import games

Policy = Callable[[Mapping[str, Any], random.Random], dict[str, Any] | None]


def random_policy(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """A uniformly random legal command, or None when the seat has nothing to do.

    Games whose ``legal_commands`` cannot list every command (prices in Isle of Skye) provide
    ``random_command(view, rng)``; for the rest any listed command is sendable as it is.
    """
    if view.get("seat") not in view.get("to_act", []):
        return None
    engine = games.get(str(view["game"]))
    special = getattr(engine, "random_command", None)
    if special is not None:
        return special(view, rng)
    legal = view.get("legal_commands") or []
    return dict(rng.choice(legal)) if legal else None


POLICIES: dict[str, Policy] = {"random": random_policy}


def get(name: str) -> Policy:
    """The policy called ``name``; KeyError if there is none."""
    return POLICIES[name]
