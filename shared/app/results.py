"""A finished game's result and what its bots' ratings learn from it (pure: the scoring task
and a tournament's batches both fold them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from shared.match.record import GameRecord


def result_doc(record: GameRecord) -> dict[str, Any]:
    """The stored result of a finished game (``GameDirectory.record_result``)."""
    return {
        "game": record.game,
        "seats": [dict(s) for s in record.seats],
        "outcome": record.outcome,
        "version": record.version,
    }


def rating_update(
    record: GameRecord, outcome: Mapping[str, Any], *, ladder: Collection[str] = ()
) -> Callable[[dict[str, Any]], None] | None:
    """The leaderboard update of one finished game, or None for a game not rated: one with a
    human seat, or seating a registered bot whose id is not in ``ladder`` (the bots that
    opted in to the public ladder). Each seat's bot spec (``ismcts:iterations=500``, a
    registered bot's ``bot_id=<id>``) is one rated player; a spec at several seats of one
    game plays as several players whose updates are averaged."""
    seats = record.match.seats
    # A seat a bot took over from a player (time-outs, resigning) was not a bot's game.
    if not seats or any(s.bot is None or s.taken_over for s in seats):
        return None
    # A registered bot that did not opt in keeps its games off the public board, and so do
    # the bots it played: rating them alone would publish what it did to them.
    if any(bot_id not in ladder for bot_id in registered_ids(record)):
        return None
    labels = [bot_label(s.bot, s.bot_spec) for s in seats]
    ranks = list(outcome["ranks"])

    def update(board: dict[str, Any]) -> None:
        from shared.tournaments.standings import rate_labels

        rate_labels(board, labels, ranks)

    return update


def registered_ids(record: GameRecord) -> list[str]:
    """The ids of the registered bots seated in the game, in seat order (each once)."""
    found: list[str] = []
    for seat in record.match.seats:
        bot_id = (seat.bot_spec or {}).get("bot_id")
        if bot_id is not None and str(bot_id) not in found:
            found.append(str(bot_id))
    return found


def bot_label(bot: str | None, spec: Mapping[str, Any] | None) -> str:
    """A bot spec's rating label, as the CLI spells it: ``ismcts:iterations=500``."""
    from shared.tournaments.plan import spec_label

    return spec_label({"bot": bot or "random", **(spec or {})})
