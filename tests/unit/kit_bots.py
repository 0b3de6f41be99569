"""Bot-kit classes for ``tabletop tournament run --local --entrants tests.unit.kit_bots:...``
(tests/unit/test_tournament_cli.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from tabletop_client import Bot


class FirstLegal(Bot):
    """Plays its first legal command; records, per process, what each game showed it."""

    views: ClassVar[list[dict[str, Any]]] = []
    endings: ClassVar[list[Mapping[str, Any]]] = []

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        self.views.append(dict(view))
        return legal_commands[0]

    def game_over(self, message: Mapping[str, Any]) -> None:
        self.endings.append(message)


class Cheater(Bot):
    """Sends a card it does not hold."""

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        return {"type": "play", "card": {"suit": "bells", "rank": 99}}
