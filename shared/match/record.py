"""A game as the service folds it: the match aggregate, the engine's state, and the chain head."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from shared import games
from shared.events import GENESIS_HASH, SEED_REVEALED, SERVICE_EVENTS, Envelope
from shared.games.base import Engine
from shared.match import aggregate as match_
from shared.match.aggregate import Match
from shared.match.clock import with_resignations


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRecord:
    """Everything the service knows after folding a game's envelopes up to ``version``."""

    id: str
    match: Match
    version: int
    head_hash: str
    state: Any
    seed: str | None = None  # only once revealed by the last event

    @property
    def game(self) -> str:
        """The game type."""
        return self.match.game

    @property
    def engine(self) -> Engine:
        """The game's engine module."""
        return games.get(self.match.game)

    @property
    def seats(self) -> tuple[Mapping[str, Any], ...]:
        """The seats as views show them (``name``, and ``bot`` for a bot)."""
        return tuple(s.public() for s in self.match.seats)

    @property
    def options(self) -> Mapping[str, Any]:
        """The game's options as parsed at creation."""
        return self.match.options

    @property
    def seed_sha256(self) -> str:
        """The seed commitment."""
        return self.match.seed_sha256

    @property
    def bot_seats(self) -> frozenset[int]:
        """Seats a bot plays."""
        return self.match.bot_seats

    @property
    def outcome(self) -> dict[str, Any] | None:
        """The game's outcome: the engine's, with resigned seats ranked last (and a game won
        at once by the one seat left un-resigned); None while it runs."""
        return final_outcome(self.match, self.engine, self.state)


def final_outcome(match: Match, engine: Engine, state: Any) -> dict[str, Any] | None:
    """``GameRecord.outcome`` for a match and an engine state (None before the deal)."""
    engine_outcome = engine.outcome(state) if state is not None else None
    if not any(match.resigned):
        return engine_outcome
    return with_resignations(engine_outcome, match.resigned)


def fold(
    game_id: str, envelopes: Iterable[Envelope], record: GameRecord | None = None
) -> GameRecord:
    """The record after ``envelopes`` (continuing from ``record`` if given)."""
    match = record.match if record else None
    engine: Engine | None = record.engine if record else None
    state = record.state if record else None
    seed = record.seed if record else None
    version, head = (record.version, record.head_hash) if record else (0, GENESIS_HASH)
    for env in envelopes:
        if env.type in SERVICE_EVENTS:
            if env.type == SEED_REVEALED:
                seed = env.data["seed"]
            else:
                match = match_.evolve(match, env.type, env.data)
                if engine is None and match is not None:
                    engine = games.get(match.game)
        else:
            assert engine is not None, "game_created must come first"
            state = engine.evolve(
                state, engine.event_from_json({"type": env.type, "data": env.data})
            )
        version, head = env.version, env.hash
    if match is None:
        raise LookupError(f"game {game_id} has no events")
    if record is None:
        return GameRecord(
            id=game_id, match=match, version=version, head_hash=head, state=state, seed=seed
        )
    return replace(record, match=match, state=state, version=version, head_hash=head, seed=seed)
