"""The application layer: create games, decide commands, append, project, reply.

Entry points (the Flask gateway, the stream worker, Celery tasks, the CLI) are thin wrappers
around ``GameService``; it holds the ports it is given and no global state.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import redis

from shared import games, keys
from shared.events import (
    GAME_CREATED,
    GENESIS_HASH,
    SEED_REVEALED,
    NewEvent,
    canonical_json,
    seal,
)
from shared.games import errors
from shared.games.errors import GameError
from shared.games.rng import Rng, seed_hash
from shared.projections import all_views
from shared.record import GameRecord, fold
from shared.store import DuplicateCommand, EventStore, StaleVersion

log = logging.getLogger(__name__)

RESULT_TTL = 86_400  # seconds a command's outcome stays readable
REPLY_TTL = 60


class BotDispatcher(Protocol):
    """Where the service hands work it does not do itself."""

    def move(self, game_id: str, seat: int, version: int) -> None:
        """Ask a bot to act for ``seat`` at ``version``."""
        ...

    def finalize(self, game_id: str) -> None:
        """Post-game scoring for a finished game."""
        ...


class NullDispatcher:
    """Drops bot and scoring work (for tools that drive every seat themselves)."""

    def move(self, game_id: str, seat: int, version: int) -> None:
        """Ignore."""

    def finalize(self, game_id: str) -> None:
        """Ignore."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Created:
    """A new game: its id, one secret token per human seat (None for bots), its first view."""

    game_id: str
    tokens: list[str | None]
    record: GameRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandMessage:
    """A command as it travels on a command stream."""

    command_id: str
    game_id: str
    seat: int
    body: Mapping[str, Any]
    expected_version: int | None = None

    def to_fields(self) -> dict[str, str]:
        """Stream entry fields."""
        return {
            "id": self.command_id,
            "game": self.game_id,
            "seat": str(self.seat),
            "body": json.dumps(self.body, separators=(",", ":")),
            "ev": "" if self.expected_version is None else str(self.expected_version),
        }

    @classmethod
    def from_fields(cls, fields: Mapping[bytes | str, bytes | str]) -> CommandMessage:
        """The message ``to_fields`` wrote."""
        f = {_s(k): _s(v) for k, v in fields.items()}
        return cls(
            command_id=f["id"],
            game_id=f["game"],
            seat=int(f["seat"]),
            body=json.loads(f["body"]),
            expected_version=int(f["ev"]) if f.get("ev") else None,
        )


def utc_now() -> str:
    """ISO-8601 UTC time with milliseconds: the ``at`` of new envelopes."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def token_hash(token: str) -> str:
    """What is stored of a seat token."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_command_id() -> str:
    """A fresh command id."""
    return secrets.token_hex(12)


class GameService:
    """Creates games and applies commands; the one place that appends events."""

    def __init__(
        self,
        store: EventStore,
        client: redis.Redis,
        *,
        dispatcher: BotDispatcher | None = None,
        shards: int = 1,
        clock: Callable[[], str] = utc_now,
        cache_size: int = 10_000,
    ) -> None:
        self.store = store
        self.r = client
        self.dispatcher = dispatcher or NullDispatcher()
        self.shards = shards
        self.clock = clock
        self._cache: OrderedDict[str, GameRecord] = OrderedDict()
        self._cache_size = cache_size
        self._seeds: dict[str, str] = {}

    # ---- creating --------------------------------------------------------------------------

    def create(
        self,
        game: str,
        seats: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any] | None = None,
        seed: str | None = None,
    ) -> Created:
        """Start a game: validate, run the engine's setup, append, project, wake bots.

        Raises KeyError for an unknown game and GameError for bad seats or options.
        """
        engine = games.get(game)
        n = len(seats)
        if not engine.MIN_SEATS <= n <= engine.MAX_SEATS:
            raise errors.invalid_options(
                f"{game} needs {engine.MIN_SEATS}-{engine.MAX_SEATS} seats, got {n}",
                seats=[f"between {engine.MIN_SEATS} and {engine.MAX_SEATS} seats"],
            )
        opts = engine.parse_options(n, dict(options or {}))
        seed = seed or secrets.token_hex(32)
        game_id = secrets.token_hex(8)
        tokens: list[str | None] = []
        public_seats: list[dict[str, Any]] = []
        for i, seat in enumerate(seats):
            bot = seat.get("bot")
            name = seat.get("name") or (f"{bot} bot {i}" if bot else f"seat {i}")
            public_seats.append({"name": name, "bot": bot} if bot else {"name": name})
            tokens.append(None if bot else secrets.token_urlsafe(24))
        created = NewEvent(
            type=GAME_CREATED,
            data={
                "game": game,
                "seats": public_seats,
                "options": opts,
                "seed_sha256": seed_hash(seed),
                "rng": "HMAC-SHA256 counter stream, Fisher-Yates (shared/games/rng.py)",
            },
        )
        setup = [engine.event_to_json(e) for e in engine.setup(n, opts, Rng(seed, "setup"))]
        new = [created, *(NewEvent(type=d["type"], data=d["data"]) for d in setup)]
        envs = seal(new, after_version=0, prev_hash=GENESIS_HASH, command_id="create",
                    seat=None, at=self.clock())
        # Meta first: a game whose events exist must always have its seed and tokens.
        self.r.hset(
            keys.meta(game_id),
            mapping={
                "game": game,
                "seed": seed,
                "tokens": json.dumps([token_hash(t) if t else None for t in tokens]),
                "shard": str(keys.shard_of(game_id, self.shards)),
                "created_at": envs[0].at,
            },
        )
        self.store.append(game_id, envs, expected_version=0, command_id="create")
        record = fold(game_id, envs)
        self.r.zadd(keys.GAMES, {game_id: _epoch()})
        self._remember(record)
        self._publish(record, after=None)
        return Created(game_id=game_id, tokens=tokens, record=record)

    # ---- reading ---------------------------------------------------------------------------

    def load(self, game_id: str, *, fresh: bool = True) -> GameRecord:
        """The record at the store's head (from cache plus newer events); LookupError if none."""
        record = self._cache.get(game_id)
        if record is not None:
            self._cache.move_to_end(game_id)
            if not fresh:
                return record
        after = record.version if record else 0
        newer = self.store.read(game_id, after=after)
        if record is None and not newer:
            raise LookupError(game_id)
        if newer:
            record = fold(game_id, newer, record)
            self._remember(record)
        assert record is not None
        return record

    def rebuild(self, game_id: str) -> GameRecord:
        """Fold every event afresh and rewrite the projections (they are disposable)."""
        self._cache.pop(game_id, None)
        record = fold(game_id, self.store.read(game_id))
        self._remember(record)
        self._publish(record, after=None)
        return record

    def meta(self, game_id: str) -> dict[str, str]:
        """The game's meta hash (empty if the game does not exist)."""
        raw = self.r.hgetall(keys.meta(game_id))
        return {_s(k): _s(v) for k, v in raw.items()}

    # ---- submitting ------------------------------------------------------------------------

    def submit(self, message: CommandMessage, game_type: str, shard: int | None = None) -> str:
        """Put a command on its game type's command stream (the gateway's and bots' path)."""
        if shard is None:
            shard = keys.shard_of(message.game_id, self.shards)
        self.r.xadd(keys.command_stream(game_type, shard), message.to_fields())
        return message.command_id

    # ---- applying --------------------------------------------------------------------------

    def handle(self, message: CommandMessage) -> dict[str, Any]:
        """Apply one command and return its outcome (also stored and pushed to a waiter).

        Safe to call twice with the same message: a command already applied is answered as
        accepted without appending again.
        """
        gid, cid = message.game_id, message.command_id
        try:
            outcome = self._apply(message)
        except LookupError:
            outcome = _rejected(cid, GameError(errors.NOT_FOUND, f"no game {gid}"), None)
        except GameError as exc:
            record = self._cache.get(gid)
            outcome = _rejected(cid, exc, record.version if record else None)
        self._reply(message, outcome)
        return outcome

    def report_failure(self, message: CommandMessage) -> None:
        """Tell a waiting client that its command hit a server fault (nothing was appended
        unless the store says so)."""
        err = GameError("server/error", "the command could not be processed")
        self._reply(message, _rejected(message.command_id, err, None) | {"status": "error"})

    def _reply(self, message: CommandMessage, outcome: dict[str, Any]) -> None:
        gid, cid = message.game_id, message.command_id
        pipe = self.r.pipeline(transaction=False)
        body = canonical_json(outcome)
        pipe.set(keys.result(gid, cid), body, ex=RESULT_TTL)
        pipe.lpush(keys.reply(gid, cid), body)
        pipe.expire(keys.reply(gid, cid), REPLY_TTL)
        pipe.execute()

    def _apply(self, message: CommandMessage) -> dict[str, Any]:
        gid, cid, seat = message.game_id, message.command_id, message.seat
        record = self.load(gid, fresh=False)
        seen = self.store.applied(gid, cid)
        if seen is not None:
            record = self.load(gid)
            # Re-publish: a crash may have come between the append and the projections.
            self._publish(record, after=None)
            return _accepted(cid, record, seen)
        for _attempt in range(5):
            if message.expected_version is not None and message.expected_version != record.version:
                record = self.load(gid)
                if message.expected_version != record.version:
                    raise GameError(
                        errors.STALE_VERSION,
                        f"expected version {message.expected_version}, game is at {record.version}",
                    )
            engine = record.engine
            if engine.outcome(record.state) is not None:
                raise GameError(errors.GAME_OVER, "the game is over")
            if not 0 <= seat < len(record.seats):
                raise GameError(errors.NOT_YOUR_TURN, f"no seat {seat} in this game")
            command = engine.parse_command(message.body)
            seed = self._seed(gid)
            events = engine.decide(record.state, seat, command, Rng(seed, f"v{record.version}"))
            docs = [engine.event_to_json(e) for e in events]
            new = [NewEvent(type=d["type"], data=d["data"]) for d in docs]
            state = record.state
            for e in events:
                state = engine.evolve(state, e)
            if engine.outcome(state) is not None:
                new.append(NewEvent(type=SEED_REVEALED, data={"seed": seed}))
            if not new:
                raise GameError(errors.ILLEGAL, "the command changes nothing", rule="no_effect")
            envs = seal(new, after_version=record.version, prev_hash=record.head_hash,
                        command_id=cid, seat=seat, at=self.clock())
            try:
                result = self.store.append(gid, envs, expected_version=record.version,
                                           command_id=cid)
            except StaleVersion:
                record = self.load(gid)  # another worker got there first: decide again
                continue
            except DuplicateCommand as dup:
                record = self.load(gid)
                self._publish(record, after=None)
                return _accepted(cid, record, (dup.first, dup.last))
            before = record.version
            record = fold(gid, envs, record)
            self._remember(record)
            self._publish(record, after=before)
            return _accepted(cid, record, (result.first, result.last))
        raise GameError(errors.STALE_VERSION, "the game kept changing; try again")

    # ---- projections -----------------------------------------------------------------------

    def _publish(self, record: GameRecord, after: int | None) -> None:
        """Write every projection, announce the version, and hand off bot and scoring work."""
        seat_views, public = all_views(record)
        pipe = self.r.pipeline(transaction=False)
        for i, doc in enumerate(seat_views):
            pipe.set(keys.view(record.id, i), canonical_json(doc))
        pipe.set(keys.public(record.id), canonical_json(public))
        pipe.publish(keys.notify(record.id), str(record.version))
        finished = public["outcome"] is not None
        if finished:
            pipe.zadd(keys.GAMES_FINISHED, {record.id: _epoch()})
        pipe.execute()
        if finished:
            self.dispatcher.finalize(record.id)
            return
        for seat in public["to_act"]:
            if seat in record.bot_seats:
                self.dispatcher.move(record.id, seat, record.version)

    def _seed(self, game_id: str) -> str:
        seed = self._seeds.get(game_id)
        if seed is None:
            raw = self.r.hget(keys.meta(game_id), "seed")
            if raw is None:
                raise LookupError(game_id)
            seed = self._seeds[game_id] = _s(raw)
        return seed

    def _remember(self, record: GameRecord) -> None:
        self._cache[record.id] = record
        self._cache.move_to_end(record.id)
        while len(self._cache) > self._cache_size:
            old, _ = self._cache.popitem(last=False)
            self._seeds.pop(old, None)


def seat_for_token(token_hashes: Sequence[str | None], token: str) -> int | None:
    """The seat whose token this is, comparing every stored hash in constant time."""
    presented = token_hash(token)
    found: int | None = None
    for i, stored in enumerate(token_hashes):
        if stored is not None and hmac.compare_digest(stored, presented):
            found = i
    return found


def key_matches(keys_: frozenset[str], presented: str) -> bool:
    """Whether ``presented`` is one of ``keys_`` (constant time per key)."""
    ok = False
    for k in keys_:
        ok |= hmac.compare_digest(k.encode(), presented.encode())
    return ok


def _accepted(cid: str, record: GameRecord, versions: tuple[int, int]) -> dict[str, Any]:
    return {
        "command_id": cid,
        "status": "accepted",
        "version": record.version,
        "events": {"first": versions[0], "last": versions[1]},
    }


def _rejected(cid: str, exc: GameError, version: int | None) -> dict[str, Any]:
    return {"command_id": cid, "status": "rejected", "version": version, "error": exc.to_dict()}


def _epoch() -> float:
    return datetime.now(UTC).timestamp()


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
