"""Bot dispatchers that run in this process (tests, tools); Celery's lives with the services."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.app import bot_moves, finalize, remote, searches, tournaments
from shared.app.context import App


class InlineDispatcher:
    """``BotDispatcher`` that runs bot turns and scoring at once, in this process."""

    def __init__(self) -> None:
        self.app: App | None = None
        self.moves: list[tuple[str, int, int]] = []
        self.finalized: list[str] = []
        self.tournaments: list[str] = []

    def bind(self, app: App) -> InlineDispatcher:
        """Attach the application the bot turns go through."""
        self.app = app
        return self

    def move(
        self, game_id: str, seat: int, version: int, *, slow: bool = False, priority: int = 0
    ) -> None:
        """Play the bot's turn now."""
        self.moves.append((game_id, seat, version))
        if self.app is not None:
            bot_moves.play_bot_move(self.app, game_id, seat, version)
            if slow:
                searches.moved(self.app, game_id, seat, version)

    def remote(self, game_id: str, seat: int, version: int) -> None:
        """Play the registered bot's turn now (this thread waits for its webhook)."""
        self.moves.append((game_id, seat, version))
        if self.app is not None:
            remote.play_remote_move(self.app, game_id, seat, version)

    def hint(self, request: Mapping[str, Any], *, priority: int = 0) -> None:
        """Search the hint now."""
        if self.app is not None:
            searches.answer_hint(self.app, request)

    def finalize(self, game_id: str) -> None:
        """Score the game now."""
        self.finalized.append(game_id)
        if self.app is not None:
            finalize.finalize_game(self.app, game_id)

    def tournament(self, tournament_id: str) -> None:
        """Play the whole tournament now, batch by batch as the Celery tasks would."""
        self.tournaments.append(tournament_id)
        if self.app is None:
            return
        entry = self.app.ports.tournaments.get(tournament_id)
        if entry is None:
            return
        for batch in tournaments.chunks(entry.plan):
            tournaments.play_games(self.app, tournament_id, batch)
