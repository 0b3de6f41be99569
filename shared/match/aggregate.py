"""The match aggregate: who sits where, folded from the service's own events in the game stream.

Pure and event-sourced like an engine: ``evolve(match, type, data)`` folds one service event
(``game_created``, ``seat_changed``, ``seat_resigned``, ``seat_taken_over``, the clock's
events...); the engines never see these events. Roles are resolved from it (its token hashes), so seats may change during a game.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from shared.events import (
    CLOCK_SET,
    CLOCK_STOPPED,
    DEADLINE_ARMED,
    ENTROPY_CONTRIBUTED,
    GAME_CREATED,
    SEAT_CHANGED,
    SEAT_RESIGNED,
    SEAT_TAKEN_OVER,
    TURN_TIMED_OUT,
)
from shared.match.clock import SeatClock, evolve_clocks, start_clocks


@dataclass(frozen=True, slots=True, kw_only=True)
class Seat:
    """One seat: a human (with the hash of its secret token), a bot with its spec, or open."""

    name: str
    bot: str | None = None  # the bot's name in the registry, when a bot plays the seat
    bot_spec: Mapping[str, Any] | None = None  # the bot's settings beyond its name
    token_sha256: str | None = None
    resigned: bool = False
    open: bool = False  # waiting for a player to join (the lobby)
    taken_over: str | None = None  # why a bot plays a player's seat: "timeouts", "resigned"

    def public(self) -> dict[str, Any]:
        """The seat as views show it: its name, and for a bot its name and settings (no token
        hash); ``open: true`` for a seat waiting for a player."""
        out: dict[str, Any] = {"name": self.name}
        if self.open:
            out["open"] = True
        if self.bot:
            out["bot"] = self.bot
            out.update(self.bot_spec or {})
        if self.resigned:
            out["resigned"] = True
        if self.taken_over:
            out["taken_over"] = self.taken_over
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Match:
    """Everything the service knows of a game beyond the engine's state."""

    game: str
    seats: tuple[Seat, ...]
    options: Mapping[str, Any]
    seed_sha256: str
    clock: Mapping[str, Any] | None = None  # the clock's spec (shared/match/clock.py)
    clocks: tuple[SeatClock, ...] = ()  # per seat, when the game has a clock
    tournament: Mapping[str, Any] | None = None  # {"id", "index"} of a tournament's game
    fairness: str = "standard"  # or "contributed" (shared/match/fairness.py)
    contributions: tuple[str | None, ...] = ()  # per seat, its client seed once sent
    listed: bool = True  # shown in the lobby's list (false: invite by id)

    @property
    def token_hashes(self) -> tuple[str | None, ...]:
        """Per seat, the hash of the token that plays it (None for a bot)."""
        return tuple(None if s.bot else s.token_sha256 for s in self.seats)

    @property
    def open_seats(self) -> list[int]:
        """Seats waiting for a player to join."""
        return [i for i, s in enumerate(self.seats) if s.open]

    @property
    def bot_seats(self) -> frozenset[int]:
        """Seats a bot plays."""
        return frozenset(i for i, s in enumerate(self.seats) if s.bot)

    @property
    def resigned(self) -> tuple[bool, ...]:
        """Per seat, whether it resigned."""
        return tuple(s.resigned for s in self.seats)


def seat_doc(seat: Seat) -> dict[str, Any]:
    """A seat as ``game_created`` records it (hashed into the chain)."""
    doc: dict[str, Any] = {"name": seat.name}
    if seat.bot:
        doc["bot"] = seat.bot
    if seat.bot_spec:
        doc["bot_spec"] = dict(seat.bot_spec)
    if seat.token_sha256:
        doc["token_sha256"] = seat.token_sha256
    if seat.open:
        doc["open"] = True
    return doc


def _seat(doc: Mapping[str, Any]) -> Seat:
    return Seat(
        name=doc["name"],
        bot=doc.get("bot"),
        bot_spec=doc.get("bot_spec"),
        token_sha256=doc.get("token_sha256"),
        open=bool(doc.get("open", False)),
    )


def evolve(match: Match | None, type_: str, data: Mapping[str, Any]) -> Match | None:
    """The match after one service event (other event types leave it as it is)."""
    if type_ == GAME_CREATED:
        clock = data.get("clock")
        return Match(
            clock=clock,
            clocks=start_clocks(clock, len(data["seats"])),
            game=data["game"],
            seats=tuple(_seat(s) for s in data["seats"]),
            options=data["options"],
            seed_sha256=data["seed_sha256"],
            tournament=data.get("tournament"),
            fairness=data.get("fairness", "standard"),
            contributions=tuple(None for _ in data["seats"]),
            listed=data.get("listed", True),
        )
    if match is None:
        return None
    if type_ == SEAT_CHANGED:
        seats = list(match.seats)
        seats[data["seat"]] = _seat(data["occupant"])
        # A new occupant brings its own client seed (a contributed game's), if any.
        contributions = list(match.contributions) or [None] * len(seats)
        contributions[data["seat"]] = None
        return replace(match, seats=tuple(seats), contributions=tuple(contributions))
    if type_ == SEAT_RESIGNED:
        seats = list(match.seats)
        seats[data["seat"]] = replace(seats[data["seat"]], resigned=True)
        return replace(match, seats=tuple(seats))
    if type_ == SEAT_TAKEN_OVER:
        seats = list(match.seats)
        seats[data["seat"]] = replace(
            seats[data["seat"]],
            bot=data["bot"],
            bot_spec=data.get("bot_spec"),
            taken_over=data["reason"],
        )
        return replace(match, seats=tuple(seats))
    if type_ in (DEADLINE_ARMED, CLOCK_STOPPED, TURN_TIMED_OUT):
        return replace(match, clocks=evolve_clocks(match.clocks, type_, data))
    if type_ == CLOCK_SET:
        return replace(match, clock=data)
    if type_ == ENTROPY_CONTRIBUTED:
        contributions = list(match.contributions)
        contributions[data["seat"]] = str(data["client_seed"])
        return replace(match, contributions=tuple(contributions))
    return match


def public_data(type_: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """A service event as players and spectators may read it: without token hashes."""
    return _strip(dict(data))


def _strip(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k != "token_sha256"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
