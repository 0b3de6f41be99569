"""Who is calling: a seat of a game (seat token), an organizer or an auditor (keys from the
environment), or an anonymous spectator. Roles are resolved by ``shared.app.queries``."""

from __future__ import annotations

from flask import current_app, request

from services.gateway.problems import Problem
from shared.app import queries
from shared.app.context import App
from shared.app.errors import AppError
from shared.app.queries import AUDITOR_ROLE as AUDITOR
from shared.app.queries import ORGANIZER, SEAT, SPECTATOR, Caller, Keys

__all__ = [
    "AUDITOR",
    "ORGANIZER",
    "SEAT",
    "SPECTATOR",
    "Caller",
    "bearer",
    "caller_for",
    "is_auditor",
    "is_organizer",
]


def bearer() -> str | None:
    """The bearer token of the request, if any; a malformed header is a 401."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem(
            401, "auth/malformed", "use 'Authorization: Bearer <token>'", title="Unauthorized"
        )
    return token.strip()


def keys() -> Keys:
    """The organizer and auditor keys this gateway accepts."""
    return _keys()


def _keys() -> Keys:
    settings = current_app.config["SETTINGS"]
    return Keys(organizers=settings.organizer_keys, auditors=settings.auditor_keys)


def is_organizer(token: str | None) -> bool:
    """Whether ``token`` is an organizer key."""
    return _keys().is_organizer(token)


def is_auditor(token: str | None) -> bool:
    """Whether ``token`` is an auditor key."""
    return _keys().is_auditor(token)


def caller_for(app: App, game_id: str) -> Caller:
    """The caller's role in ``game_id``; an unknown token is a 401."""
    try:
        return queries.caller(app, game_id, bearer(), _keys())
    except AppError as exc:
        raise Problem.from_app_error(exc) from exc
