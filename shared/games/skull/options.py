"""A Skull table's options and the events that set it up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.errors import invalid_options
from shared.games.rng import Rng
from shared.games.skull.messages import (
    CZECH,
    MAX_SEATS,
    MIN_SEATS,
    NEXT_STARTER_RULES,
    GameSetUp,
    RoundStarted,
)


def parse_options(seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """Validated options: ``next_starter`` (``"czech"``, default, or ``"english"``) and
    ``first_player`` (a seat, or None to draw one). Unknown options are rejected."""
    if (
        isinstance(seats, bool)
        or not isinstance(seats, int)
        or not (MIN_SEATS <= seats <= MAX_SEATS)
    ):
        raise invalid_options(
            f"skull takes {MIN_SEATS} to {MAX_SEATS} players",
            seats=f"must be an integer from {MIN_SEATS} to {MAX_SEATS}",
        )
    errors: dict[str, str] = {}
    for key in options:
        if key not in ("next_starter", "first_player"):
            errors[str(key)] = "unknown option"
    next_starter = options.get("next_starter", CZECH)
    if next_starter not in NEXT_STARTER_RULES:
        errors["next_starter"] = f"must be one of {', '.join(NEXT_STARTER_RULES)}"
    first = options.get("first_player")
    if first is not None and (
        isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < seats
    ):
        errors["first_player"] = f"must be a seat from 0 to {seats - 1}"
    if errors:
        raise invalid_options("invalid skull options", **errors)
    return {"next_starter": next_starter, "first_player": first}


def setup(seats: int, options: Mapping[str, Any], rng: Rng) -> list[Any]:
    """The table, then round 1 started by ``first_player`` (drawn with ``rng`` if not set)."""
    opts = parse_options(seats, options)
    first = opts["first_player"]
    if first is None:
        first = rng.below(seats)
    return [
        GameSetUp(seats=seats, next_starter=opts["next_starter"]),
        RoundStarted(round=1, starter=first),
    ]
