"""A game as the service folds it: the engine's state plus who sits where and the chain head."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from shared import games
from shared.events import GAME_CREATED, GENESIS_HASH, SEED_REVEALED, Envelope
from shared.games.base import Engine


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRecord:
    """Everything the service knows after folding a game's envelopes up to ``version``."""

    id: str
    game: str
    seats: tuple[Mapping[str, Any], ...]
    options: Mapping[str, Any]
    seed_sha256: str
    version: int
    head_hash: str
    state: Any
    seed: str | None = None  # only once revealed by the last event

    @property
    def engine(self) -> Engine:
        """The game's engine module."""
        return games.get(self.game)

    @property
    def bot_seats(self) -> frozenset[int]:
        """Seats a bot plays."""
        return frozenset(i for i, s in enumerate(self.seats) if s.get("bot"))


def fold(game_id: str, envelopes: Iterable[Envelope], record: GameRecord | None = None) -> GameRecord:
    """The record after ``envelopes`` (continuing from ``record`` if given)."""
    engine: Engine | None = record.engine if record else None
    state = record.state if record else None
    changes: dict[str, Any] = {}
    version, head = (record.version, record.head_hash) if record else (0, GENESIS_HASH)
    for env in envelopes:
        if env.type == GAME_CREATED:
            data = env.data
            engine = games.get(data["game"])
            record = GameRecord(
                id=game_id,
                game=data["game"],
                seats=tuple(data["seats"]),
                options=data["options"],
                seed_sha256=data["seed_sha256"],
                version=0,
                head_hash=GENESIS_HASH,
                state=None,
            )
        elif env.type == SEED_REVEALED:
            changes["seed"] = env.data["seed"]
        else:
            assert engine is not None, "game_created must come first"
            state = engine.evolve(state, engine.event_from_json({"type": env.type, "data": env.data}))
        version, head = env.version, env.hash
    if record is None:
        raise LookupError(f"game {game_id} has no events")
    return replace(record, state=state, version=version, head_hash=head, **changes)
