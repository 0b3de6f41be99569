"""Bot turns and post-game scoring as plain functions over a ``GameService``.

The Celery tasks wrap these; ``InlineDispatcher`` calls them in-process (tests, tools).
"""

from __future__ import annotations

import json
from typing import Any

from shared import games, keys, policies
from shared.games.rng import bot_random
from shared.service import CommandMessage, GameService

BOT_SUBMIT_TTL = 300  # seconds a sent bot command blocks an identical resend


def play_bot_move(service: GameService, game_id: str, seat: int, version: int) -> str:
    """Read only the seat's view, choose with its policy, submit like any client.

    The command id is derived from (game, seat, version), so a repeated task submits the same
    command and the store applies it at most once. On a turn of its own, a task for an old
    version does nothing (a newer task was queued with the newer version). When several seats
    act at once the service does not re-ask a waiting bot at each other seat's move, so a task
    that finds the game moved on still acts, on the view it reads now.
    """
    raw = service.r.get(keys.view(game_id, seat))
    if raw is None:
        return "no such game"
    view: dict[str, Any] = json.loads(raw)
    if seat not in view["to_act"] or view.get("outcome"):
        return "stale"
    simultaneous = len(view["to_act"]) > 1
    if view["version"] != version and not simultaneous:
        return "stale"
    version = view["version"]
    policy = policies.get(view["seats"][seat].get("bot") or "random")
    # The bot's randomness comes from the game's secret seed: a source anyone could recompute
    # (game id, seat, version are all public) would let them test every hand the bot might
    # hold against what it did.
    command = policy(view, bot_random(service.secret_seed(game_id), seat, version))
    if command is None:
        return "nothing to do"
    # On its own turn a bot pins the version it decided at. When several seats act at once
    # (Isle of Skye's prices and building) another seat's move does not spoil its choice;
    # the engine still checks the command.
    message = CommandMessage(
        command_id=f"bot-{seat}-{version}",
        game_id=game_id,
        seat=seat,
        body=command,
        expected_version=None if simultaneous else version,
    )
    # Wakes may repeat (redeliveries, retries, Celery's at-least-once): send each command once.
    if not service.r.set(keys.bot_submitted(game_id, message.command_id), 1, nx=True,
                         ex=BOT_SUBMIT_TTL):
        return message.command_id
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
