"""Bot turns and post-game scoring as plain functions over a ``GameService``.

The Celery tasks wrap these; ``InlineDispatcher`` calls them in-process (tests, tools).
"""

from __future__ import annotations

import json
import random
from typing import Any

from shared import games, keys, policies
from shared.service import CommandMessage, GameService


def play_bot_move(service: GameService, game_id: str, seat: int, version: int) -> str:
    """Read only the seat's view, choose with its policy, submit like any client.

    The command id is derived from (game, seat, version), so a repeated task submits the same
    command and the store applies it at most once; a task for an old version does nothing.
    """
    raw = service.r.get(keys.view(game_id, seat))
    if raw is None:
        return "no such game"
    view: dict[str, Any] = json.loads(raw)
    if view["version"] != version or seat not in view["to_act"] or view.get("outcome"):
        return "stale"
    policy = policies.get(view["seats"][seat].get("bot") or "random")
    command = policy(view, random.Random(f"{game_id}:{seat}:{version}"))
    if command is None:
        return "nothing to do"
    message = CommandMessage(
        command_id=f"bot-{seat}-{version}",
        game_id=game_id,
        seat=seat,
        body=command,
        expected_version=version,
    )
    service.submit(message, str(view["game"]))
    return message.command_id


def finalize_game(service: GameService, game_id: str) -> str:
    """Write the game's result to ``results:games`` once (the first writer wins)."""
    record = service.load(game_id)
    outcome = games.get(record.game).outcome(record.state)
    if outcome is None:
        return "not over"
    doc = {
        "game": record.game,
        "seats": [dict(s) for s in record.seats],
        "outcome": outcome,
        "version": record.version,
    }
    service.r.hsetnx(keys.RESULTS, game_id, json.dumps(doc, sort_keys=True))
    return "ok"


class InlineDispatcher:
    """``BotDispatcher`` that runs bot turns at once in this process (tests and tools)."""

    def __init__(self) -> None:
        self.service: GameService | None = None
        self.moves: list[tuple[str, int, int]] = []
        self.finalized: list[str] = []

    def bind(self, service: GameService) -> InlineDispatcher:
        """Attach the service the bot turns go through."""
        self.service = service
        return self

    def move(self, game_id: str, seat: int, version: int) -> None:
        """Play the bot's turn now."""
        self.moves.append((game_id, seat, version))
        if self.service is not None:
            play_bot_move(self.service, game_id, seat, version)

    def finalize(self, game_id: str) -> None:
        """Score the game now."""
        self.finalized.append(game_id)
        if self.service is not None:
            finalize_game(self.service, game_id)
