"""Errors raised by game engines, with stable codes that clients can rely on.

The gateway turns a ``GameError`` into an ``application/problem+json`` body carrying the same
``code`` (and ``rule``, when a rule of the game forbade the command).
"""

from __future__ import annotations

from typing import Any

# The codes the rules raise (the service's own live in shared/app/errors.py, the catalogue of
# every code). Add new ones; never rename.
ILLEGAL = "move/illegal"
NOT_YOUR_TURN = "move/not_your_turn"
GAME_OVER = "game/over"
INVALID_COMMAND = "command/invalid"
INVALID_OPTIONS = "options/invalid"


class GameError(Exception):
    """A command or option that the rules forbid; ``rule`` names the rule that forbade it."""

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        rule: str | None = None,
        errors: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.rule = rule
        self.errors = {k: _messages(v, detail) for k, v in (errors or {}).items()}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description, as put in a problem body or a worker reply."""
        out: dict[str, Any] = {"code": self.code, "detail": self.detail}
        if self.rule:
            out["rule"] = self.rule
        if self.errors:
            out["errors"] = self.errors
        return out


def _messages(value: Any, detail: str) -> list[str]:
    """Field errors as clients get them everywhere: a list of messages per field (an engine may
    hand over one message, or the offending value, which says less than ``detail``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    return [detail]


def illegal(rule: str, detail: str) -> GameError:
    """A move the rules forbid now; ``rule`` is a short stable slug such as ``follow_suit``."""
    return GameError(ILLEGAL, detail, rule=rule)


def invalid_command(detail: str, **errors: Any) -> GameError:
    """A command whose shape is wrong (unknown type, missing or malformed field)."""
    return GameError(INVALID_COMMAND, detail, errors=errors)


def invalid_options(detail: str, **errors: Any) -> GameError:
    """Game options that cannot start a game."""
    return GameError(INVALID_OPTIONS, detail, errors=errors)
