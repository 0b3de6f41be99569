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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson
import redis

from shared import games, keys
from shared.events import (
    GAME_CREATED,
    GENESIS_HASH,
    SEED_REVEALED,
    NewEvent,
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
        _check_json_safe(options or {})
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
        self._publish(record)
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
        self._publish(record)
        return record

    # ---- submitting ------------------------------------------------------------------------

    def submit(self, message: CommandMessage, game_type: str, shard: int | None = None) -> str:
        """Put a command on its game type's command stream (the gateway's and bots' path)."""
        if shard is None:
            shard = keys.shard_of(message.game_id, self.shards)
        pipe = self.r.pipeline(transaction=False)
        # A pending result first, so the command is known (not a 404) until its outcome
        # replaces it; NX keeps the outcome of a command id sent before.
        pending = {"command_id": message.command_id, "status": "pending", "seat": message.seat}
        pipe.set(keys.result(message.game_id, message.command_id),
                 json.dumps(pending, separators=(",", ":")), ex=RESULT_TTL, nx=True)
        pipe.xadd(keys.command_stream(game_type, shard), message.to_fields())
        pipe.execute()
        return message.command_id

    # ---- applying --------------------------------------------------------------------------

    def handle(
        self,
        message: CommandMessage,
        ack: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        """Apply one command and return its outcome (also stored and pushed to a waiter).

        ``ack(pipeline)`` may add the stream acknowledgement to the same round trip that writes
        the projections and the reply, after the events are safely appended. Safe to call twice
        with the same message: a command already applied is answered as accepted without
        appending again.
        """
        gid, cid = message.game_id, message.command_id
        record: GameRecord | None = None
        waiting: frozenset[int] | None = None
        try:
            outcome, record, waiting = self._apply(message)
        except LookupError:
            outcome = _rejected(cid, GameError(errors.NOT_FOUND, f"no game {gid}"), None)
        except GameError as exc:
            cached = self._cache.get(gid)
            outcome = _rejected(cid, exc, cached.version if cached else None)
        outcome["seat"] = message.seat  # only this seat (and auditors) may read it back
        pipe = self.r.pipeline(transaction=False)
        views = self._project(pipe, record) if record is not None else None
        self._queue_outcome(pipe, message, outcome, views, ack)
        pipe.execute()
        if record is not None:
            self._hand_off(record, waiting, message.seat)
        elif outcome["status"] == "rejected":
            self._retry_bot(message)
        return outcome

    def report_failure(
        self, message: CommandMessage, ack: Callable[[Any], None] | None = None
    ) -> None:
        """Tell a waiting client that its command hit a server fault."""
        err = GameError(errors.SERVER_ERROR, "the command could not be processed")
        outcome = _rejected(message.command_id, err, None) | {"status": "error",
                                                               "seat": message.seat}
        pipe = self.r.pipeline(transaction=False)
        self._queue_outcome(pipe, message, outcome, None, ack)
        pipe.execute()

    def _queue_outcome(
        self,
        pipe: Any,
        message: CommandMessage,
        outcome: dict[str, Any],
        views: list[str] | None,
        ack: Callable[[Any], None] | None,
    ) -> None:
        """Queue the stored result, the reply for a waiting gateway and the acknowledgement."""
        gid, cid = message.game_id, message.command_id
        body = json.dumps(outcome, separators=(",", ":"))
        pipe.set(keys.result(gid, cid), body, ex=RESULT_TTL)
        reply = body
        if views is not None and outcome["status"] == "accepted" and message.seat < len(views):
            # The waiting client gets its new view after a newline (compact JSON has none):
            # one round trip less, and the gateway never parses the view.
            reply = body + "\n" + views[message.seat]
        pipe.lpush(keys.reply(gid, cid), reply)
        pipe.expire(keys.reply(gid, cid), REPLY_TTL)
        if ack is not None:
            ack(pipe)

    def _apply(
        self, message: CommandMessage
    ) -> tuple[dict[str, Any], GameRecord, frozenset[int] | None]:
        """(outcome, record to publish, seats that were to act before it — None when unknown)
        or GameError."""
        gid, cid, seat = message.game_id, message.command_id, message.seat
        fresh = gid not in self._cache
        record = self.load(gid, fresh=False)
        for _attempt in range(6):
            try:
                events, new, state = self._decide(record, message)
            except GameError:
                if not fresh:  # the cache may be behind another worker: look again
                    record, fresh = self.load(gid), True
                    continue
                seen = self.store.applied(gid, cid)
                if seen is None:
                    raise
                # Applied before (a redelivery after a crash): answer as it was answered.
                return _accepted(cid, record, seen), record, None
            envs = seal(new, after_version=record.version, prev_hash=record.head_hash,
                        command_id=cid, seat=seat, at=self.clock())
            try:
                result = self.store.append(gid, envs, expected_version=record.version,
                                           command_id=cid)
            except StaleVersion:
                record, fresh = self.load(gid), True  # another worker got there first
                continue
            except DuplicateCommand as dup:
                record = self.load(gid)
                return _accepted(cid, record, (dup.first, dup.last)), record, None
            waiting = frozenset(record.engine.to_act(record.state))
            changes: dict[str, Any] = {}
            if new[-1].type == SEED_REVEALED:
                changes["seed"] = new[-1].data["seed"]
            record = replace(record, state=state, version=envs[-1].version,
                             head_hash=envs[-1].hash, **changes)
            self._remember(record)
            return _accepted(cid, record, (result.first, result.last)), record, waiting
        raise GameError(errors.STALE_VERSION, "the game kept changing; try again")

    def _decide(
        self, record: GameRecord, message: CommandMessage
    ) -> tuple[list[Any], list[NewEvent], Any]:
        """(engine events, envelopes to append, state after them) or GameError."""
        if message.expected_version is not None and message.expected_version != record.version:
            raise GameError(
                errors.STALE_VERSION,
                f"expected version {message.expected_version}, game is at {record.version}",
            )
        engine = record.engine
        if engine.outcome(record.state) is not None:
            raise GameError(errors.GAME_OVER, "the game is over")
        seat = message.seat
        if not 0 <= seat < len(record.seats):
            raise GameError(errors.NOT_YOUR_TURN, f"no seat {seat} in this game")
        command = engine.parse_command(message.body)
        seed = self._seed(record.id)
        events = engine.decide(record.state, seat, command, Rng(seed, f"v{record.version}"))
        if not events:
            raise GameError(errors.ILLEGAL, "the command changes nothing", rule="no_effect")
        new = []
        state = record.state
        for e in events:
            doc = engine.event_to_json(e)
            new.append(NewEvent(type=doc["type"], data=doc["data"]))
            state = engine.evolve(state, e)
        if engine.outcome(state) is not None:
            new.append(NewEvent(type=SEED_REVEALED, data={"seed": seed}))
        return events, new, state

    # ---- projections -----------------------------------------------------------------------

    def _publish(self, record: GameRecord) -> None:
        """Write every projection, announce the version, and hand off bot and scoring work."""
        pipe = self.r.pipeline(transaction=False)
        self._project(pipe, record)
        pipe.execute()
        self._hand_off(record)

    def _project(self, pipe: Any, record: GameRecord) -> list[str]:
        """Queue the projection writes on ``pipe``; returns the seat views' JSON."""
        seat_views, public = all_views(record)
        texts = [projection_json(doc) for doc in seat_views]
        for i, text in enumerate(texts):
            pipe.set(keys.view(record.id, i), text)
        pipe.set(keys.public(record.id), projection_json(public))
        pipe.publish(keys.notify(record.id), str(record.version))
        if public["outcome"] is not None:
            pipe.zadd(keys.GAMES_FINISHED, {record.id: _epoch()}, nx=True)
        return texts

    def _hand_off(
        self,
        record: GameRecord,
        waiting: frozenset[int] | None = None,
        actor: int | None = None,
    ) -> None:
        """Wake the bots whose turn it is, or score a finished game.

        When several seats act at once (``waiting``: who was to act before this change), a
        bot already asked keeps its pending move instead of being asked again at every other
        seat's move; only seats new to act, and the seat that just acted, are woken.
        """
        engine = record.engine
        if engine.outcome(record.state) is not None:
            self.dispatcher.finalize(record.id)
            return
        bots = record.bot_seats
        to_act = engine.to_act(record.state)
        for seat in to_act:
            if seat not in bots:
                continue
            if waiting is None or len(to_act) == 1 or seat not in waiting or seat == actor:
                self.dispatcher.move(record.id, seat, record.version)

    def _retry_bot(self, message: CommandMessage) -> None:
        """A bot's refused move (the game moved on under it): ask it again if it still has
        to act, once per newer version, so a simultaneous phase cannot stall on it."""
        prefix, _, decided = message.command_id.rpartition("-")
        record = self._cache.get(message.game_id)
        if (
            record is None
            or not prefix.startswith("bot-")
            or not decided.isdigit()
            or record.version <= int(decided)
            or message.seat not in record.engine.to_act(record.state)
        ):
            return
        self.dispatcher.move(record.id, message.seat, record.version)

    def secret_seed(self, game_id: str) -> str:
        """The game's secret seed (for the service's own bots); LookupError for no game."""
        return self._seed(game_id)

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


def projection_json(doc: Mapping[str, Any]) -> str:
    """The bytes of a projection: compact JSON in the (deterministic) order the code built it,
    so a rebuild from the events writes the same bytes. (orjson: the same text as
    ``json.dumps(separators=(",", ":"), ensure_ascii=False)``, several times faster.)"""
    return orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS).decode()


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


JSON_SAFE_INT = 2**53 - 1  # beyond it JSON numbers lose precision in many clients


def _check_json_safe(options: Mapping[str, Any]) -> None:
    """Raise ``options/invalid`` for a number no client or store can carry exactly, naming
    the option it sits in."""
    for name, value in options.items():
        if not _json_safe(value):
            raise errors.invalid_options(f"option {name!r} holds a number out of range",
                                         **{str(name): "number out of range"})


def _json_safe(value: Any) -> bool:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return -JSON_SAFE_INT <= value <= JSON_SAFE_INT  # also false for NaN
    if isinstance(value, Mapping):
        return all(_json_safe(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_json_safe(v) for v in value)
    return True


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
