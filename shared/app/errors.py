"""The service's error catalogue: every stable ``code`` a client can get, with its HTTP status
and title. Add codes; never rename one. Engines raise only the rule codes (``move/*``,
``command/invalid``, ``options/invalid``, ``game/over``) with a ``rule`` slug; the rest belong
to the service. The OpenAPI document lists this catalogue."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from shared.games.errors import GameError


class ErrorCode(StrEnum):
    """Stable error codes."""

    # Raised by the rules (engines).
    MOVE_ILLEGAL = "move/illegal"
    MOVE_NOT_YOUR_TURN = "move/not_your_turn"
    GAME_OVER = "game/over"
    COMMAND_INVALID = "command/invalid"
    OPTIONS_INVALID = "options/invalid"
    # Raised by the service.
    GAME_NOT_FOUND = "game/not_found"
    GAME_STALE_VERSION = "game/stale_version"
    GAME_WAITING = "game/waiting"
    SEAT_TAKEN = "seat/taken"
    SEAT_NOT_FOUND = "seat/not_found"
    FAIRNESS_SEED_ALREADY_SENT = "fairness/seed_already_sent"
    COMMAND_NOT_FOUND = "command/not_found"
    TOURNAMENT_NOT_FOUND = "tournament/not_found"
    TOURNAMENT_INVALID = "tournament/invalid"
    AUTH_REQUIRED = "auth/required"
    AUTH_MALFORMED = "auth/malformed"
    AUTH_INVALID_TOKEN = "auth/invalid_token"
    AUTH_SEAT_REQUIRED = "auth/seat_required"
    AUTH_FORBIDDEN = "auth/forbidden"
    AUTH_ORGANIZER_REQUIRED = "auth/organizer_required"
    REQUEST_INVALID = "request/invalid"
    REQUEST_IDEMPOTENCY_KEY_REUSED = "request/idempotency_key_reused"
    REQUEST_IN_PROGRESS = "request/in_progress"
    REQUEST_RATE_LIMITED = "request/rate_limited"
    REQUEST_MALFORMED = "request/malformed"
    REQUEST_TOO_LARGE = "request/too_large"
    REQUEST_UNSUPPORTED_MEDIA_TYPE = "request/unsupported_media_type"
    HTTP_NOT_FOUND = "http/not_found"
    HTTP_METHOD_NOT_ALLOWED = "http/method_not_allowed"
    HTTP_ERROR = "http/error"
    SERVICE_UNAVAILABLE = "service/unavailable"
    SERVICE_STORE_FULL = "service/store_full"
    SERVER_ERROR = "server/error"
    BOT_NOT_FOUND = "bot/not_found"
    BOT_WEBHOOK_NOT_ALLOWED = "bot/webhook_not_allowed"
    BOT_NOT_SEATABLE = "bot/not_seatable"
    TURN_NOT_FOUND = "turn/not_found"
    TURN_EXPIRED = "turn/expired"


# code -> (HTTP status, title)
CATALOGUE: dict[ErrorCode, tuple[int, str]] = {
    ErrorCode.MOVE_ILLEGAL: (422, "The rules forbid this move"),
    ErrorCode.MOVE_NOT_YOUR_TURN: (422, "It is not this seat's turn"),
    ErrorCode.GAME_OVER: (409, "The game is over"),
    ErrorCode.COMMAND_INVALID: (422, "The command is malformed"),
    ErrorCode.OPTIONS_INVALID: (422, "The game cannot be created with these options"),
    ErrorCode.GAME_NOT_FOUND: (404, "No such game"),
    ErrorCode.GAME_STALE_VERSION: (409, "The game has moved on"),
    ErrorCode.GAME_WAITING: (409, "The game is not dealt yet"),
    ErrorCode.SEAT_TAKEN: (409, "The seat is taken"),
    ErrorCode.SEAT_NOT_FOUND: (404, "No such seat in this game"),
    ErrorCode.FAIRNESS_SEED_ALREADY_SENT: (422, "This seat's client seed was sent already"),
    ErrorCode.COMMAND_NOT_FOUND: (404, "No such command"),
    ErrorCode.TOURNAMENT_NOT_FOUND: (404, "No such tournament"),
    ErrorCode.TOURNAMENT_INVALID: (422, "The tournament cannot be run as asked"),
    ErrorCode.AUTH_REQUIRED: (401, "Unauthorized"),
    ErrorCode.AUTH_MALFORMED: (401, "Unauthorized"),
    ErrorCode.AUTH_INVALID_TOKEN: (401, "Unauthorized"),
    ErrorCode.AUTH_SEAT_REQUIRED: (401, "Unauthorized"),
    ErrorCode.AUTH_FORBIDDEN: (403, "Forbidden"),
    ErrorCode.AUTH_ORGANIZER_REQUIRED: (403, "Forbidden"),
    ErrorCode.REQUEST_INVALID: (422, "Unprocessable Entity"),
    ErrorCode.REQUEST_IDEMPOTENCY_KEY_REUSED: (422, "The key was used for another request"),
    ErrorCode.REQUEST_IN_PROGRESS: (409, "Conflict"),
    ErrorCode.REQUEST_RATE_LIMITED: (429, "Too Many Requests"),
    ErrorCode.REQUEST_MALFORMED: (400, "Bad Request"),
    ErrorCode.REQUEST_TOO_LARGE: (413, "Request Entity Too Large"),
    ErrorCode.REQUEST_UNSUPPORTED_MEDIA_TYPE: (415, "Unsupported Media Type"),
    ErrorCode.HTTP_NOT_FOUND: (404, "Not Found"),
    ErrorCode.HTTP_METHOD_NOT_ALLOWED: (405, "Method Not Allowed"),
    ErrorCode.HTTP_ERROR: (400, "Bad Request"),
    ErrorCode.SERVICE_UNAVAILABLE: (503, "Service Unavailable"),
    ErrorCode.SERVICE_STORE_FULL: (503, "The game store is full"),
    ErrorCode.SERVER_ERROR: (500, "Internal Server Error"),
    ErrorCode.BOT_NOT_FOUND: (404, "No such bot"),
    ErrorCode.BOT_WEBHOOK_NOT_ALLOWED: (422, "This webhook URL is not allowed"),
    ErrorCode.BOT_NOT_SEATABLE: (403, "This bot's owner does not let the caller seat it"),
    ErrorCode.TURN_NOT_FOUND: (404, "No such turn of this bot"),
    ErrorCode.TURN_EXPIRED: (409, "The turn is over"),
}


def status_of(code: str) -> int:
    """The HTTP status of a code (500 for one not in the catalogue)."""
    try:
        return CATALOGUE[ErrorCode(code)][0]
    except ValueError:
        return 500


def title_of(code: str) -> str | None:
    """The title of a code, or None for one not in the catalogue."""
    try:
        return CATALOGUE[ErrorCode(code)][1]
    except ValueError:
        return None


class AppError(Exception):
    """A request the application refuses (no such game, a token that is not valid here...)."""

    def __init__(
        self,
        code: ErrorCode,
        detail: str,
        *,
        status: int | None = None,
        errors: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = status or CATALOGUE[code][0]
        self.errors = errors or {}


def not_found(game_id: str) -> GameError:
    """The game does not exist (as a command's outcome)."""
    return GameError(ErrorCode.GAME_NOT_FOUND, f"no game {game_id}")


def stale(detail: str) -> GameError:
    """The command expected another version (as a command's outcome)."""
    return GameError(ErrorCode.GAME_STALE_VERSION, detail)


def server_error() -> GameError:
    """The service failed to process the command (as a command's outcome)."""
    return GameError(ErrorCode.SERVER_ERROR, "the command could not be processed")
