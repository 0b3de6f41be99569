"""Who is calling: a seat of a game (seat token), an organizer or an auditor (keys from the
environment), or an anonymous spectator."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from flask import current_app, request

from services.gateway.problems import Problem
from shared import keys
from shared.service import GameService, key_matches, seat_for_token

SEAT = "seat"
AUDITOR = "auditor"
ORGANIZER = "organizer"
SPECTATOR = "spectator"


@dataclass(frozen=True, slots=True)
class Caller:
    """The role of the caller for one game, and its seat when it is a player."""

    role: str
    seat: int | None = None


def bearer() -> str | None:
    """The bearer token of the request, if any; a malformed header is a 401."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem(401, "auth/malformed", "use 'Authorization: Bearer <token>'",
                      title="Unauthorized")
    return token.strip()


def is_organizer(token: str | None) -> bool:
    """Whether ``token`` is an organizer key."""
    return token is not None and key_matches(current_app.config["SETTINGS"].organizer_keys, token)


def is_auditor(token: str | None) -> bool:
    """Whether ``token`` is an auditor key."""
    return token is not None and key_matches(current_app.config["SETTINGS"].auditor_keys, token)


def caller_for(service: GameService, game_id: str) -> Caller:
    """The caller's role in ``game_id``; an unknown token is a 401."""
    token = bearer()
    if token is None:
        return Caller(SPECTATOR)
    if is_auditor(token):
        return Caller(AUDITOR)
    seat = seat_for_token(_token_hashes(service, game_id), token)
    if seat is not None:
        return Caller(SEAT, seat)
    if is_organizer(token):
        return Caller(ORGANIZER)
    raise Problem(401, "auth/invalid_token", "this token is not valid for this game",
                  title="Unauthorized")


def _token_hashes(service: GameService, game_id: str) -> tuple[str | None, ...]:
    return _cached_hashes(service, game_id)


@lru_cache(maxsize=50_000)
def _cached_hashes(service: GameService, game_id: str) -> tuple[str | None, ...]:
    # Token hashes never change once a game exists, so a process may keep them.
    raw = service.r.hget(keys.meta(game_id), "tokens")
    if raw is None:
        raise Problem(404, "game/not_found", f"no game {game_id}")
    return tuple(json.loads(raw))
