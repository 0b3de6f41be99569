"""Redis adapters of every port (one server, or a cluster: a game's keys share a hash tag).

Writes made inside ``RedisBatch`` go on one pipeline per thread and reach the server in one
round trip when the block ends, so a worker's projections, outcome, reply, announcement and
acknowledgement cost one round trip, as they did before the ports.

On a Redis Cluster (``connect(url, cluster=True)``: redis-py's ``RedisCluster``) every port
works the same; what differs is said where it happens: a pipeline is split by node and is not
atomic, so the batch sends the announcements and the worker's acknowledgement after the
writes (``RedisBatch``); a transaction (the tournament and rating folds) names keys of one
slot only; pub/sub uses plain channels, which a cluster broadcasts to every node (the wheel's
Redis 6.2 has no sharded pub/sub), so one pattern subscription on any node hears every game.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, cast

import orjson
import redis
from redis.cluster import RedisCluster
from redis.exceptions import RedisClusterException
from redis.typing import EncodableT, FieldT

from shared import keys
from shared.adapters.memory import SystemClock, utc_iso
from shared.adapters.webhook import HttpWebhooks
from shared.app.ports import (
    FAILURE_COUNTS,
    SERVICE_FAILURE,
    STATS_WINDOW,
    BotDispatcher,
    GameEntry,
    NullDispatcher,
    PendingTurn,
    Ports,
    RegisteredBot,
    TournamentEntry,
    TurnReads,
    bot_stats_doc,
)
from shared.config import DEFAULT_REJECTED_TTL, SettingsError, bot_secret_path
from shared.store.redis_log import RedisEventStore

RESULT_TTL = 86_400  # seconds an accepted (or pending) command's outcome stays readable
REPLY_TTL = 60
# A waiting client's BLPOP: its socket read outlives the server-side timeout by this much;
# without a pool (a cluster client) the wait is cut into BLPOPs under the 5 s socket timeout.
WAIT_READ_MARGIN_S = 5.0
WAIT_STEP_S = 4.0


# Faults of Redis: the cluster client also raises RedisClusterException, which is not a
# RedisError (no node reachable for a slot, the slot map unreadable while nodes restart).
REDIS_ERRORS: tuple[type[Exception], ...] = (redis.RedisError, RedisClusterException)

# What the adapters run on: one server's client or the cluster's (``connect`` gives either).
Client = redis.Redis | RedisCluster


def is_cluster(client: object) -> bool:
    """Whether ``client`` is redis-py's cluster client."""
    return isinstance(client, RedisCluster)


def _text(value: object) -> str:
    """A reply of a client without ``decode_responses`` (bytes) as text."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, str):
        return value
    raise TypeError(f"expected bytes or str from Redis, got {type(value).__name__}")


class RedisBatch:
    """Collects the writes of one thread's block on a pipeline.

    On one server the block is one pipeline, in order: the writes, the announcements, then
    ``extra`` (the worker's acknowledgement). A cluster pipeline is split by node and refuses
    PUBLISH, so there the block runs in three steps that keep that order: the writes (one
    round trip per node), the announcements, then ``extra`` on a pipeline of its own. Were the
    acknowledgement in the first step, its node could apply it while a crash kept the
    projections' node from getting them: a command acknowledged, never redelivered, and its
    projections stale; and a feed woken before the projections land would read the old view.

    The block's pipeline is redis-py's own (``transaction=False``): any of its commands, one
    round trip on one server, its first error raised after every reply is read.
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        self.cluster = is_cluster(client)
        self._local = threading.local()

    def writer(self) -> Any:
        """The pipeline of the open block, else the client itself."""
        return getattr(self._local, "pipe", None) or self.client

    def publish(self, channel: str, message: str) -> None:
        """PUBLISH with the open block's writes (after them on a cluster), else at once."""
        pipe = getattr(self._local, "pipe", None)
        if pipe is None:
            self.client.publish(channel, message)
        elif self.cluster:
            self._local.published.append((channel, message))
        else:
            pipe.publish(channel, message)

    @contextmanager
    def __call__(self, extra: Callable[[Any], None] | None = None) -> Iterator[None]:
        """Open a block; on leaving it without an error, ``extra(pipe)`` and one execute."""
        if getattr(self._local, "pipe", None) is not None:  # nested: the outer block writes
            yield
            if extra is not None:
                self._add_extra(extra)
            return
        pipe: Any = self.client.pipeline(transaction=False)
        self._local.pipe = pipe
        self._local.published = []
        self._local.extras = []
        try:
            yield
            if extra is not None:
                self._add_extra(extra)
        finally:
            self._local.pipe = None
        published: list[tuple[str, str]] = self._local.published
        extras: list[Callable[[Any], None]] = self._local.extras
        self._local.published, self._local.extras = [], []
        pipe.execute()
        if not self.cluster:
            return
        for channel, message in published:
            self.client.publish(channel, message)
        if extras:
            last = self.client.pipeline(transaction=False)
            for add in extras:
                add(last)
            last.execute()

    def _add_extra(self, extra: Callable[[Any], None]) -> None:
        if self.cluster:
            self._local.extras.append(extra)  # after the writes and announcements: see above
        else:
            extra(self._local.pipe)


class RedisDirectory:
    """``GameDirectory`` on ``game:{id}:meta``, ``games:all``, ``games:lobby``,
    ``games:finished``, ``results:games``."""

    def __init__(self, client: Client, batch: RedisBatch) -> None:
        self._r, self._batch = client, batch
        self._lobby_filled = False

    def _fill_lobby(self) -> None:
        """Once per store: the games registered before ``games:lobby`` existed go into it (all
        but those whose meta names a tournament), so that an upgraded stack's lobby keeps
        them. Idempotent: a ZADD of what is there already changes nothing."""
        if self._lobby_filled or self._r.exists(keys.GAMES_LOBBY_FILLED):
            self._lobby_filled = True
            return
        start, page = 0, 1000
        while True:
            chunk: list[tuple[bytes, float]] = self._r.zrange(  # type: ignore[assignment]
                keys.GAMES, start, start + page - 1, withscores=True
            )
            if not chunk:
                break
            pipe = self._r.pipeline(transaction=False)
            for game_id, _ in chunk:
                pipe.hget(keys.meta(_text(game_id)), "tournament")
            tournaments = pipe.execute()
            lobby = {
                _text(g): float(s) for (g, s), t in zip(chunk, tournaments, strict=True) if not t
            }
            if lobby:
                self._r.zadd(keys.GAMES_LOBBY, lobby)
            start += page
        self._r.set(keys.GAMES_LOBBY_FILLED, "1")
        self._lobby_filled = True

    def register(self, entry: GameEntry, created_epoch: float) -> None:
        """See ``GameDirectory.register``."""
        self.register_all([(entry, created_epoch)])

    def register_all(self, entries: Sequence[tuple[GameEntry, float]]) -> None:
        """See ``GameDirectory.register_all``: one pipeline. On a cluster the meta hashes and
        the index are on several nodes, and a cluster pipeline keeps no order between nodes:
        the hashes are written first, so a listed game always has its entry."""
        pipe = self._r.pipeline(transaction=False)
        for entry, _epoch in entries:
            pipe.hset(
                keys.meta(entry.game_id),
                mapping={
                    "game": entry.game,
                    "seed": entry.seed,
                    "tokens": json.dumps(list(entry.token_hashes)),
                    "shard": str(entry.shard),
                    "created_at": entry.created_at,
                    "lobby": "1" if entry.lobby else "0",
                    "owner": entry.owner,
                    "tournament": entry.tournament,
                },
            )
        if self._batch.cluster:
            pipe.execute()
        pipe.zadd(keys.GAMES, {entry.game_id: epoch for entry, epoch in entries})
        lobby = {entry.game_id: epoch for entry, epoch in entries if not entry.tournament}
        if lobby:
            pipe.zadd(keys.GAMES_LOBBY, lobby)
        pipe.execute()

    def get(self, game_id: str) -> GameEntry | None:
        """See ``GameDirectory.get``."""
        return entry_of(game_id, self._r.hmget(keys.meta(game_id), *META_FIELDS))

    def set_token_hashes(self, game_id: str, token_hashes: Sequence[str | None]) -> None:
        """See ``GameDirectory.set_token_hashes``."""
        self._batch.writer().hset(keys.meta(game_id), "tokens", json.dumps(list(token_hashes)))

    def mark_finished(self, game_id: str, epoch: float) -> None:
        """See ``GameDirectory.mark_finished``."""
        self._batch.writer().zadd(keys.GAMES_FINISHED, {game_id: epoch}, nx=True)

    def list_games(
        self,
        *,
        finished: bool = False,
        offset: int = 0,
        limit: int = 100,
        newest: bool = False,
        lobby: bool = False,
    ) -> list[str]:
        """See ``GameDirectory.list_games``."""
        if lobby and not finished:
            self._fill_lobby()
        key = keys.GAMES_FINISHED if finished else keys.GAMES_LOBBY if lobby else keys.GAMES
        read = self._r.zrevrange if newest else self._r.zrange
        return [_text(g) for g in read(key, offset, offset + limit - 1)]

    def record_result(self, game_id: str, result: Mapping[str, Any]) -> bool:
        """See ``GameDirectory.record_result``."""
        return bool(self._r.hsetnx(keys.RESULTS, game_id, json.dumps(result, sort_keys=True)))

    def record_results(self, results: Mapping[str, Mapping[str, Any]]) -> None:
        """See ``GameDirectory.record_results``."""
        w = self._batch.writer()
        for game_id, result in results.items():
            w.hsetnx(keys.RESULTS, game_id, json.dumps(result, sort_keys=True))

    def result(self, game_id: str) -> dict[str, Any] | None:
        """See ``GameDirectory.result``."""
        raw = self._r.hget(keys.RESULTS, game_id)
        return json.loads(raw) if raw is not None else None

    def results(self, game_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """See ``GameDirectory.results``: an HMGET per thousand games."""
        out: list[dict[str, Any] | None] = []
        for i in range(0, len(game_ids), 1000):
            raws = self._r.hmget(keys.RESULTS, list(game_ids[i : i + 1000]))
            out += [orjson.loads(raw) if raw is not None else None for raw in raws]
        return out


# A game's meta hash fields, as ``entry_of`` reads them.
META_FIELDS = ("game", "seed", "tokens", "shard", "created_at", "lobby", "owner", "tournament")


def entry_of(game_id: str, values: Sequence[Any]) -> GameEntry | None:
    """The directory entry of a meta hash's ``META_FIELDS`` values (None: no such game)."""
    game, seed, tokens, shard, created, lobby, owner, tournament = values
    if game is None or seed is None:
        return None
    return GameEntry(
        game_id=game_id,
        game=_text(game),
        seed=_text(seed),
        shard=int(shard or 0),
        created_at=_text(created or b""),
        token_hashes=tuple(json.loads(tokens or b"[]")),
        lobby=lobby == b"1",
        owner=_text(owner or b""),
        tournament=_text(tournament or b""),
    )


class RedisReadModels:
    """``ReadModels`` on ``game:{id}:view:<seat>`` and ``game:{id}:public``."""

    def __init__(self, client: Client, batch: RedisBatch) -> None:
        self._r, self._batch = client, batch

    def write(self, game_id: str, seat_views: Sequence[str], public: str) -> None:
        """See ``ReadModels.write``."""
        w = self._batch.writer()
        for seat, text in enumerate(seat_views):
            w.set(keys.view(game_id, seat), text)
        w.set(keys.public(game_id), public)

    def read(self, game_id: str, seat: int | None) -> bytes | None:
        """See ``ReadModels.read``."""
        key = keys.public(game_id) if seat is None else keys.view(game_id, seat)
        # The client has decode_responses off: a value is bytes.
        return cast("bytes | None", self._r.get(key))


class RedisCommandBus:
    """``CommandBus`` on ``cmd:{<type>}:<shard>`` streams and per-command result/reply keys.
    A refused command's outcome lives ``rejected_ttl`` seconds, an accepted one's a day."""

    def __init__(
        self, client: Client, batch: RedisBatch, *, rejected_ttl: int = DEFAULT_REJECTED_TTL
    ) -> None:
        self._r, self._batch = client, batch
        self._rejected_ttl = rejected_ttl

    def put(
        self,
        game_type: str,
        shard: int,
        message: Mapping[str, str],
        *,
        game_id: str,
        command_id: str,
        pending: str,
    ) -> None:
        """See ``CommandBus.put``: the pending outcome and the entry in one round trip."""
        pipe = self._r.pipeline(transaction=False)
        # NX keeps the outcome of a command id sent before.
        pipe.set(keys.result(game_id, command_id), pending, ex=RESULT_TTL, nx=True)
        fields: dict[FieldT, EncodableT] = {k: v for k, v in message.items()}
        pipe.xadd(keys.command_stream(game_type, shard), fields)
        pipe.execute()

    def put_and_wait(
        self,
        game_type: str,
        shard: int,
        message: Mapping[str, str],
        *,
        game_id: str,
        command_id: str,
        pending: str,
        timeout: float,
    ) -> bytes | None:
        """See ``CommandBus.put_and_wait``: the pending outcome, the entry and the BLPOP for
        the reply in one round trip on one connection (Redis runs them in order, so the reply
        cannot come before its wait). The read of the BLPOP is given ``timeout +
        WAIT_READ_MARGIN_S``, as in ``wait_reply``."""
        pool = getattr(self._r, "connection_pool", None)
        if pool is None:  # a cluster client: the stream and the reply are on two nodes
            self.put(game_type, shard, message, game_id=game_id, command_id=command_id,
                     pending=pending)  # fmt: skip
            return self.wait_reply(game_id, command_id, timeout)
        fields: list[Any] = []
        for k, v in message.items():
            fields += [k, v]
        commands = [
            ("SET", keys.result(game_id, command_id), pending, "EX", RESULT_TTL, "NX"),
            ("XADD", keys.command_stream(game_type, shard), "*", *fields),
            ("BLPOP", keys.reply(game_id, command_id), repr(float(timeout))),
        ]
        conn = pool.get_connection()
        try:
            conn.send_packed_command(conn.pack_commands(commands))
            conn.read_response()
            conn.read_response()
            popped = conn.read_response(timeout=timeout + WAIT_READ_MARGIN_S)
        except BaseException:
            conn.disconnect()  # replies left unread must never reach the next user
            raise
        finally:
            pool.release(conn)
        return None if popped is None else cast(bytes, popped[1])

    def outcome(self, game_id: str, command_id: str) -> str | None:
        """See ``CommandBus.outcome``."""
        raw = self._r.get(keys.result(game_id, command_id))
        return _text(raw) if raw is not None else None

    def complete(
        self,
        game_id: str,
        command_id: str,
        outcome: str,
        reply: str,
        *,
        keep: bool = False,
        refused: bool = False,
    ) -> None:
        """See ``CommandBus.complete``. The SET replaces the pending outcome's day-long TTL,
        so a refusal's key goes after ``rejected_ttl`` seconds."""
        w = self._batch.writer()
        if not keep:
            ttl = self._rejected_ttl if refused else RESULT_TTL
            w.set(keys.result(game_id, command_id), outcome, ex=ttl)
        w.lpush(keys.reply(game_id, command_id), reply)
        w.expire(keys.reply(game_id, command_id), REPLY_TTL)

    def wait_reply(self, game_id: str, command_id: str, timeout: float) -> bytes | None:
        """See ``CommandBus.wait_reply``.

        The BLPOP's socket read is given ``timeout + WAIT_READ_MARGIN_S``: redis-py's default
        5 s socket timeout would otherwise end a longer wait with a TimeoutError while the
        command is still queued (the client heard a 503 and could play twice)."""
        key = keys.reply(game_id, command_id)
        pool = getattr(self._r, "connection_pool", None)
        if pool is None:  # a cluster client: no one pool; short BLPOPs until the deadline
            return self._wait_in_steps(key, timeout)
        conn = pool.get_connection()
        try:
            conn.send_command("BLPOP", key, timeout)
            # A failed read disconnects the connection (redis-py's default), so a late reply
            # never lands on the next command sent on it.
            popped = conn.read_response(timeout=timeout + WAIT_READ_MARGIN_S)
        finally:
            pool.release(conn)
        # The client has decode_responses off: the value is bytes.
        return None if popped is None else cast(bytes, popped[1])

    def _wait_in_steps(self, key: str, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            popped = self._r.blpop([key], timeout=min(left, WAIT_STEP_S))
            if popped is not None:
                return cast(bytes, popped[1])

    def send_once(self, game_id: str, command_id: str, ttl: int) -> bool:
        """See ``CommandBus.send_once``."""
        return bool(self._r.set(keys.bot_submitted(game_id, command_id), 1, nx=True, ex=ttl))

    def was_sent(self, game_id: str, command_id: str) -> bool:
        """See ``CommandBus.was_sent``."""
        return bool(self._r.exists(keys.bot_submitted(game_id, command_id)))


class RedisNotifier:
    """``Notifier`` on the pub/sub channel ``game:{id}:notify``."""

    def __init__(self, client: Client, batch: RedisBatch) -> None:
        self._r, self._batch = client, batch

    def announce(self, game_id: str, version: int) -> None:
        """See ``Notifier.announce``."""
        self._batch.publish(keys.notify(game_id), str(version))

    def subscribe_all(self) -> RedisAllSubscription:
        """See ``Notifier.subscribe_all``. On a cluster the connection is to the node of the
        pattern's slot; any node will do, since PUBLISH reaches every node."""
        pubsub = self._r.pubsub(ignore_subscribe_messages=True)
        pubsub.psubscribe(keys.NOTIFY_PATTERN)
        return RedisAllSubscription(pubsub)

    def subscribe(self, game_id: str) -> RedisSubscription:
        """See ``Notifier.subscribe``."""
        pubsub = self._r.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(keys.notify(game_id))
        return RedisSubscription(pubsub)


class RedisAllSubscription:
    """One pub/sub connection listening to every game (``PSUBSCRIBE game:*:notify``)."""

    def __init__(self, pubsub: Any) -> None:
        self._p = pubsub

    def next(self, timeout: float) -> tuple[str, int] | None:
        """See ``AllSubscription.next``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            msg = self._p.get_message(timeout=max(left, 0.0))
            if msg is not None and msg.get("type") == "pmessage":
                channel = _text(msg["channel"])
                return keys.game_of_notify(channel), int(msg["data"])
            if left <= 0:
                return None

    def close(self) -> None:
        """See ``AllSubscription.close``."""
        self._p.close()


class RedisSubscription:
    """One pub/sub connection listening to a game."""

    def __init__(self, pubsub: Any) -> None:
        self._p = pubsub

    def next(self, timeout: float) -> int | None:
        """See ``Subscription.next``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            msg = self._p.get_message(timeout=max(left, 0.0))
            if msg is not None and msg.get("type") == "message":
                return int(msg["data"])
            if left <= 0:
                return None

    def close(self) -> None:
        """See ``Subscription.close``."""
        self._p.close()


class RedisClock(SystemClock):
    """``Clock`` on Redis's own time (every process of the service agrees on what is due),
    with deadlines in the sorted set ``deadlines``; set and cancelled in the open batch.

    The time is this machine's plus an offset to Redis's ``TIME``, measured again every
    ``RESYNC_S`` seconds: a round trip per reading would double the worker's round trips."""

    RESYNC_S = 10.0

    # Take the due members and put them back ``retry`` seconds later, in one step, by the
    # server's clock.
    _CLAIM = """
    local t = redis.call('TIME')
    local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
    local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
    for _, k in ipairs(due) do
        redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), k)
    end
    return due
    """

    def __init__(self, client: Client, batch: RedisBatch | None = None) -> None:
        super().__init__()
        self._r = client
        self._batch = batch
        self._offset = 0.0
        self._synced = -float("inf")
        self._claim = client.register_script(self._CLAIM)

    def epoch(self) -> float:
        """See ``Clock.epoch``: Redis's time."""
        local = time.time()
        if time.monotonic() - self._synced > self.RESYNC_S:
            self._sync()
            local = time.time()
        return local + self._offset

    def now(self) -> str:
        """See ``Clock.now``: Redis's time, ISO-8601 with milliseconds."""
        return utc_iso(datetime.fromtimestamp(self.epoch(), UTC))

    def _sync(self) -> None:
        try:
            # On a cluster TIME goes to any node: ask the one whose clock the claim script
            # reads (looked up each time: a failover moves the slot).
            where = {}
            if isinstance(self._r, RedisCluster):
                where["target_nodes"] = self._r.get_node_from_key(keys.DEADLINES)
            before = time.time()
            seconds, micros = self._r.time(**where)
            after = time.time()
        except REDIS_ERRORS:
            return  # keep the last offset; the next reading tries again
        self._offset = seconds + micros / 1e6 - (before + after) / 2
        self._synced = time.monotonic()

    def _writer(self) -> Any:
        return self._batch.writer() if self._batch is not None else self._r

    def set_deadline(self, key: str, epoch: float) -> None:
        """See ``Clock.set_deadline``."""
        self._writer().zadd(keys.DEADLINES, {key: epoch})

    def cancel_deadline(self, key: str) -> None:
        """See ``Clock.cancel_deadline``."""
        self._writer().zrem(keys.DEADLINES, key)

    def due(self, epoch: float, limit: int = 100) -> list[str]:
        """See ``Clock.due``."""
        return [
            _text(k)
            for k in self._r.zrangebyscore(keys.DEADLINES, "-inf", epoch, start=0, num=limit)
        ]

    def claim_due(self, retry_s: float, limit: int = 100) -> list[str]:
        """See ``Clock.claim_due``: by Redis's clock, in one script."""
        return [_text(k) for k in self._claim(keys=[keys.DEADLINES], args=[retry_s, limit])]


class RedisTournaments:
    """``TournamentStore`` on ``tournament:{id}`` (hash), ``tournament:{id}:folded``
    (bitmap) and ``tournaments:all``; ``fold`` is an optimistic transaction (WATCH)."""

    def __init__(self, client: Client) -> None:
        self._r = client

    def create(
        self, tournament_id: str, plan: Mapping[str, Any], tally: Mapping[str, Any], at: str,
        epoch: float,
    ) -> None:  # fmt: skip
        """See ``TournamentStore.create``. On a cluster the hash and the index are in two
        slots, which no transaction spans: the hash is written first, so a listed id is
        always readable."""
        cluster = is_cluster(self._r)
        pipe = self._r.pipeline(transaction=not cluster)
        pipe.hset(
            keys.tournament(tournament_id),
            mapping={
                "plan": json.dumps(plan, separators=(",", ":")),
                "tally": json.dumps(tally, separators=(",", ":")),
                "created_at": at,
                "started": "0",
                "cancelled": "0",
            },
        )
        if cluster:
            pipe.execute()
        pipe.zadd(keys.TOURNAMENTS, {tournament_id: epoch})
        pipe.execute()

    def get(self, tournament_id: str) -> TournamentEntry | None:
        """See ``TournamentStore.get``."""
        raw = self._r.hgetall(keys.tournament(tournament_id))
        if not raw:
            return None
        doc = {_text(k): _text(v) for k, v in raw.items()}
        return TournamentEntry(
            tournament_id=tournament_id,
            plan=json.loads(doc["plan"]),
            created_at=doc.get("created_at", ""),
            started=doc.get("started") == "1",
            cancelled=doc.get("cancelled") == "1",
            tally=json.loads(doc["tally"]),
        )

    def list_ids(self, *, offset: int = 0, limit: int = 100) -> list[str]:
        """See ``TournamentStore.list_ids``."""
        return [_text(t) for t in self._r.zrange(keys.TOURNAMENTS, offset, offset + limit - 1)]

    def mark_started(self, tournament_id: str) -> None:
        """See ``TournamentStore.mark_started``."""
        self._r.hset(keys.tournament(tournament_id), "started", "1")

    def cancel(self, tournament_id: str) -> None:
        """See ``TournamentStore.cancel``."""
        self._r.hset(keys.tournament(tournament_id), "cancelled", "1")

    def cancelled(self, tournament_id: str) -> bool:
        """See ``TournamentStore.cancelled``."""
        return self._r.hget(keys.tournament(tournament_id), "cancelled") == b"1"

    def folded(self, tournament_id: str, indexes: Sequence[int]) -> list[bool]:
        """See ``TournamentStore.folded``."""
        if not indexes:
            return []
        bits = self._r.bitfield_ro(
            keys.tournament_folded(tournament_id),
            "u1",
            indexes[0],
            items=[("u1", i) for i in indexes[1:]],
        )
        return [bool(b) for b in bits]

    def fold(
        self,
        tournament_id: str,
        updates: Mapping[int, Callable[[dict[str, Any]], None]],
        finish: Callable[[dict[str, Any]], None] | None = None,
    ) -> list[int]:
        """See ``TournamentStore.fold``."""
        key, bits = keys.tournament(tournament_id), keys.tournament_folded(tournament_id)
        indexes = list(updates)
        if not indexes:
            return []
        # transaction=True: a cluster pipeline is not transactional unless asked, and refuses
        # WATCH then; both keys share the tag, so the transaction stays in one slot.
        with self._r.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key, bits)
                    raw = pipe.hget(key, "tally")
                    if raw is None:
                        pipe.reset()
                        return []
                    # One BITFIELD_RO reads every game's bit.
                    seen = pipe.bitfield_ro(
                        bits, "u1", indexes[0], items=[("u1", i) for i in indexes[1:]]
                    )
                    fresh = [i for i, bit in zip(indexes, seen, strict=True) if not bit]
                    if not fresh:
                        pipe.reset()
                        return []
                    tally = json.loads(raw)
                    for i in fresh:
                        updates[i](tally)
                    if finish is not None:
                        finish(tally)
                    pipe.multi()
                    pipe.hset(key, "tally", json.dumps(tally, separators=(",", ":")))
                    for i in fresh:
                        pipe.setbit(bits, i, 1)
                    pipe.execute()
                    return fresh
                except redis.WatchError:
                    continue  # another batch folded meanwhile: read the new tally


class RedisRatings:
    """``RatingBoard`` on ``ratings:{game}`` (hash) and ``ratings:{game}:rated`` (set)."""

    def __init__(self, client: Client) -> None:
        self._r = client

    def rate(
        self, game_type: str, updates: Mapping[str, Callable[[dict[str, Any]], None]]
    ) -> list[str]:
        """See ``RatingBoard.rate``."""
        key, rated = keys.ratings(game_type), keys.rated(game_type)
        ids = list(updates)
        if not ids:
            return []
        # transaction=True: a cluster pipeline is not transactional unless asked, and refuses
        # WATCH then; both keys share the tag, so the transaction stays in one slot.
        with self._r.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key, rated)
                    seen = pipe.smismember(rated, ids)
                    fresh = [g for g, s in zip(ids, seen, strict=True) if not s]
                    if not fresh:
                        pipe.reset()
                        return []
                    board = {_text(k): json.loads(v) for k, v in pipe.hgetall(key).items()}
                    for g in fresh:
                        updates[g](board)
                    pipe.multi()
                    if board:
                        pipe.hset(key, mapping={k: json.dumps(v) for k, v in board.items()})
                    pipe.sadd(rated, *fresh)
                    pipe.execute()
                    return fresh
                except redis.WatchError:
                    continue

    def board(self, game_type: str) -> dict[str, Any]:
        """See ``RatingBoard.board``."""
        return {
            _text(k): json.loads(v) for k, v in self._r.hgetall(keys.ratings(game_type)).items()
        }


class RedisIdempotency:
    """``IdempotencyStore`` on ``idem:<key>`` strings (JSON) that expire."""

    def __init__(self, client: Client) -> None:
        self._r = client

    def claim(self, key: str, fingerprint: str, ttl: int) -> dict[str, Any] | None:
        """See ``IdempotencyStore.claim``."""
        placeholder = json.dumps({"fingerprint": fingerprint, "response": None})
        if self._r.set(keys.idempotency(key), placeholder, nx=True, ex=ttl):
            return None
        raw = self._r.get(keys.idempotency(key))
        if raw is None:  # expired between the two commands: claim again
            return self.claim(key, fingerprint, ttl)
        kept: dict[str, Any] = json.loads(raw)
        return kept

    def finish(self, key: str, fingerprint: str, response: Mapping[str, Any], ttl: int) -> None:
        """See ``IdempotencyStore.finish``."""
        doc = json.dumps({"fingerprint": fingerprint, "response": dict(response)})
        self._r.set(keys.idempotency(key), doc, ex=ttl)


class RedisSearchShares:
    """``SearchShares`` on ``searches:{<owner>}`` sorted sets (ticket -> expiry, by Redis's
    own clock, so every process agrees) and ``searchslot:{<slot>}`` strings with a time to
    live. Each call is one script on one key (one slot on a cluster)."""

    # Drop expired tickets, count this one, keep the key as long as its last ticket.
    _ENTER = """
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    redis.call('PEXPIREAT', KEYS[1], last[2])
    return redis.call('ZCARD', KEYS[1]) - 1
    """
    _HOLD = """
    if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
        return 0
    end
    return math.max(redis.call('PTTL', KEYS[1]), 1)
    """
    _RELEASE = """
    if redis.call('GET', KEYS[1]) == ARGV[1] then
        return redis.call('DEL', KEYS[1])
    end
    return 0
    """

    def __init__(self, client: Client) -> None:
        self._r = client
        self._enter = client.register_script(self._ENTER)
        self._hold = client.register_script(self._HOLD)
        self._release = client.register_script(self._RELEASE)

    def enter(self, owner: str, ticket: str, ttl: float) -> int:
        """See ``SearchShares.enter``."""
        ms = max(1, round(ttl * 1000))
        return int(self._enter(keys=[keys.searches(owner)], args=[ticket, ms]))

    def leave(self, owner: str, ticket: str) -> None:
        """See ``SearchShares.leave``."""
        self._r.zrem(keys.searches(owner), ticket)

    def hold(self, slot: str, holder: str, ttl: float) -> float:
        """See ``SearchShares.hold``."""
        ms = max(1, round(ttl * 1000))
        return int(self._hold(keys=[keys.search_slot(slot)], args=[holder, ms])) / 1000

    def release(self, slot: str, holder: str) -> None:
        """See ``SearchShares.release``."""
        self._release(keys=[keys.search_slot(slot)], args=[holder])


# ---- the bot secret, kept outside Redis -------------------------------------------------------

# What Redis holds of the bot secret: a check value (``secret_check``: an HMAC of a fixed label
# under the secret) from which no key derives, so that a process whose secret is not the one
# the others use (its own data directory, another TABLETOP_BOT_SECRET) is refused at once
# instead of signing turns with keys no bot holds. A deployment from before issue 35 kept the
# secret itself at ``keys.BOT_SECRET``: it is moved into the file (``RedisBotRegistry``).
BOT_SECRET_CHECK = "bots:secret-check"
_CHECK_LABEL = b"tabletop bot secret check"
# A file being written by another process (an exclusive create without hard links) is read
# again for this long before its emptiness is an error.
SECRET_READ_PATIENCE_S = 2.0
ROTATE_HINT = "README, Your own bots, Keys: `tabletop bots rotate-secret`"
_FORGET_OLD = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


_SECRET_FIX = (
    f"restore it, or set TABLETOP_BOT_SECRET (a new secret changes every bot's key: {ROTATE_HINT})"
)


def secret_check(secret: str) -> str:
    """The check value Redis keeps of the bot secret (no key derives from it)."""
    return hmac.new(secret.encode(), _CHECK_LABEL, hashlib.sha256).hexdigest()


def read_secret_file(path: str) -> str | None:
    """The bot secret kept in ``path``, or None when there is no such file. SettingsError,
    naming the path, for a file that cannot be read, is no regular file, is open to group or
    others (any of mode 077), or holds nothing: never a silent new secret, which would change
    every bot's key."""
    deadline = time.monotonic() + SECRET_READ_PATIENCE_S
    while True:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SettingsError(f"the bot secret file {path} cannot be read: {exc.strerror}; "
                                f"{_SECRET_FIX}") from None  # fmt: skip
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise SettingsError(f"the bot secret file {path} is not a file; {_SECRET_FIX}")
            if info.st_mode & 0o077:
                raise SettingsError(
                    f"the bot secret file {path} is open to group or others (mode "
                    f"{stat.S_IMODE(info.st_mode):04o}): `chmod 600 {path}` (the owner alone "
                    "may read it: whoever reads it derives every bot's key)"
                )
            with os.fdopen(fd, "rb", closefd=False) as f:
                raw = f.read(1 << 16)
        except OSError as exc:
            raise SettingsError(f"the bot secret file {path} cannot be read: {exc.strerror}; "
                                f"{_SECRET_FIX}") from None  # fmt: skip
        finally:
            os.close(fd)
        try:
            text = raw.decode().strip()
        except UnicodeDecodeError:
            raise SettingsError(f"the bot secret file {path} is not text; {_SECRET_FIX}") from None
        if text:
            return text
        if time.monotonic() > deadline:
            raise SettingsError(f"the bot secret file {path} is empty; {_SECRET_FIX}")
        time.sleep(0.05)


def create_secret_file(path: str, secret: str) -> str:
    """Make ``path`` hold ``secret`` (mode 0600) unless it exists, and answer what it holds:
    the winner's secret when processes race. The secret is written whole to a temporary file
    of the directory (``mkstemp``: O_CREAT|O_EXCL, 0600) and published by a hard link, which
    fails when the name exists, so no process ever reads a half-written file; on a file system
    without hard links, an O_CREAT|O_EXCL create of ``path`` itself (a reader then waits for
    its content, ``read_secret_file``)."""
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".bot-secret-")
    except OSError as exc:
        raise SettingsError(f"the bot secret file {path} cannot be made: {exc.strerror}; "
                            "give TABLETOP_DATA_DIR (or TABLETOP_BOT_SECRET_FILE) a directory "
                            "this user may write, or set TABLETOP_BOT_SECRET") from None  # fmt: skip
    try:
        with os.fdopen(fd, "w") as out:
            out.write(secret + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: its secret is the one
        except OSError:
            _create_exclusive(path, secret)
        _sync_directory(directory)
    finally:
        os.unlink(tmp)
    found = read_secret_file(path)
    if found is None:
        raise SettingsError(f"the bot secret file {path} vanished as it was made")
    return found


def _create_exclusive(path: str, secret: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as out:
        out.write(secret + "\n")
        out.flush()
        os.fsync(out.fileno())


def replace_secret_file(path: str, staged: str) -> None:
    """Put the file ``staged`` (a rotation's new secret) in the place of ``path``, atomically."""
    os.replace(staged, path)
    _sync_directory(os.path.dirname(path) or ".")


def _sync_directory(directory: str) -> None:
    """Make a new name in ``directory`` survive a power loss (a lost secret file would mean a
    new secret, and every key changed)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class RedisBotRegistry:
    """``BotRegistry`` on ``bot:{<id>}`` hashes (the bot as JSON, ``retired``), its counters
    and latest latencies beside it (one hash slot per bot), ``bots:all`` listing them.

    The secret keys derive from is ``secret`` (TABLETOP_BOT_SECRET) or the one kept in the
    file ``secret_file`` (``<data dir>/bot-secret``, 0600), made on first use: never in Redis,
    so a copy of the Redis data derives no key. A deployment from before kept it at
    ``bots:secret``: found there while the file is missing, it is moved into the file and the
    key deleted, so the keys issued stay valid. Redis keeps only ``secret_check`` of it, and a
    process whose secret is another is refused (SettingsError) before it signs anything."""

    def __init__(self, client: Client, secret: str = "", secret_file: str = "") -> None:
        self._r = client
        self._configured = secret
        self._file = secret_file or bot_secret_path(os.environ)
        self._secret = ""
        self._lock = threading.Lock()
        self._forget = client.register_script(_FORGET_OLD)

    @property
    def secret_file(self) -> str:
        """The file the secret is kept in (unused with TABLETOP_BOT_SECRET)."""
        return self._file

    def secret(self) -> str:
        """See ``BotRegistry.secret``: read (or made, or moved from Redis) once per process.
        SettingsError for an unusable file or a secret not the deployment's."""
        if not self._secret:
            with self._lock:
                if not self._secret:
                    secret = self._configured or self._from_file()
                    self._check(secret)
                    self._secret = secret
        return self._secret

    def _source(self) -> str:
        return "TABLETOP_BOT_SECRET" if self._configured else f"the file {self._file}"

    def _from_file(self) -> str:
        found = read_secret_file(self._file)
        raw = self._r.get(keys.BOT_SECRET)
        old = None if raw is None else _text(raw)
        if found is None:
            found = create_secret_file(self._file, old or secrets.token_hex(32))
        if old is not None:
            if old != found:
                raise SettingsError(
                    f"Redis still holds a bot secret from before ({keys.BOT_SECRET}) and "
                    f"{self._file} holds another: the keys issued under one of them do not "
                    f"work. If the file's is the one in use, delete {keys.BOT_SECRET} "
                    f"(redis-cli DEL {keys.BOT_SECRET}); if Redis's is, move {self._file} "
                    "away and start again (it is then moved into the file)"
                )
            self._forget(keys=[keys.BOT_SECRET], args=[old])  # moved: gone from Redis
        return found

    def _check(self, secret: str) -> None:
        check = secret_check(secret)
        self._r.set(BOT_SECRET_CHECK, check, nx=True)
        kept = self._r.get(BOT_SECRET_CHECK)
        if kept is not None and _text(kept) != check:
            raise SettingsError(
                f"the bot secret of {self._source()} is not the one this deployment's bot keys "
                f"derive from (Redis's {BOT_SECRET_CHECK} says so): every process needs the "
                "same one (the same TABLETOP_BOT_SECRET, or one bot-secret file: the same "
                "TABLETOP_DATA_DIR or TABLETOP_BOT_SECRET_FILE, on storage they share). A "
                f"secret changed on purpose needs its keys issued again: {ROTATE_HINT}"
            )

    def stage_rotation(self) -> str:
        """Begin a rotation: the new secret, which ``secret()`` answers from now on in this
        process. The configured one (TABLETOP_BOT_SECRET, changed by the operator), or a new
        one staged in ``<file>.new`` (the one staged already, when a rotation was cut short:
        running it again finishes that one)."""
        with self._lock:
            if self._configured:
                self._secret = self._configured
            else:
                self._secret = create_secret_file(self._file + ".new", secrets.token_hex(32))
            return self._secret

    def finish_rotation(self) -> None:
        """End a rotation (every bot re-keyed under the staged secret): Redis's check value
        becomes the new secret's and the staged file replaces the old one."""
        with self._lock:
            self._r.set(BOT_SECRET_CHECK, secret_check(self._secret))
            self._r.delete(keys.BOT_SECRET)  # a leftover from before: never the secret now
            if not self._configured:
                replace_secret_file(self._file, self._file + ".new")

    def add(self, bot: RegisteredBot, epoch: float) -> None:
        """See ``BotRegistry.add``."""
        doc = dataclasses.asdict(bot)
        doc.pop("retired")
        self._r.hset(keys.bot(bot.bot_id), mapping={"doc": json.dumps(doc), "retired": "0"})
        self._r.hset(keys.BOT_KEYS, bot.key_sha256, bot.bot_id)
        self._r.zadd(keys.BOTS, {bot.bot_id: epoch}, nx=True)

    def get(self, bot_id: str) -> RegisteredBot | None:
        """See ``BotRegistry.get``."""
        return _registered_bot(*self._r.hmget(keys.bot(bot_id), ["doc", "retired"]))

    def list_ids(self, *, offset: int = 0, limit: int = 100) -> list[str]:
        """See ``BotRegistry.list_ids``."""
        return [_text(b) for b in self._r.zrange(keys.BOTS, offset, offset + limit - 1)]

    def retire(self, bot_id: str) -> bool:
        """See ``BotRegistry.retire``."""
        if not self._r.hexists(keys.bot(bot_id), "doc"):
            return False
        self._r.hset(keys.bot(bot_id), "retired", "1")
        return True

    def rekey(self, bot_id: str, key_sha256: str) -> bool:
        """See ``BotRegistry.rekey``: the new hash is findable before the old one goes (a
        cluster: the bot's hash and ``bots:keys`` are on two slots, so no transaction)."""
        raw = self._r.hget(keys.bot(bot_id), "doc")
        if raw is None:
            return False
        doc = json.loads(raw)
        old = doc.get("key_sha256")
        doc["key_sha256"] = key_sha256
        self._r.hset(keys.BOT_KEYS, key_sha256, bot_id)
        self._r.hset(keys.bot(bot_id), "doc", json.dumps(doc))
        if old and old != key_sha256:
            self._r.hdel(keys.BOT_KEYS, old)
        return True

    def record(self, bot_id: str, latency_ms: int, failure: str | None) -> None:
        """See ``BotRegistry.record``: one transaction on the bot's slot."""
        counts = keys.bot_counts(bot_id)
        if failure == SERVICE_FAILURE:
            self._r.hincrby(counts, "service_faults", 1)
            return
        pipe = self._r.pipeline(transaction=True)
        pipe.hincrby(counts, "decisions", 1)
        if failure is not None:
            pipe.hincrby(counts, FAILURE_COUNTS.get(failure, "errors"), 1)
            pipe.hincrby(counts, "fallbacks", 1)
        pipe.lpush(keys.bot_latencies(bot_id), latency_ms)
        pipe.ltrim(keys.bot_latencies(bot_id), 0, STATS_WINDOW - 1)
        pipe.execute()

    def stats(self, bot_id: str) -> dict[str, Any]:
        """See ``BotRegistry.stats``."""
        pipe = self._r.pipeline(transaction=False)
        pipe.hgetall(keys.bot_counts(bot_id))
        pipe.lrange(keys.bot_latencies(bot_id), 0, -1)
        counts, latencies = pipe.execute()
        return bot_stats_doc(
            {_text(k): int(v) for k, v in counts.items()}, [int(v) for v in latencies]
        )

    def by_key(self, key_sha256: str) -> str | None:
        """See ``BotRegistry.by_key``."""
        found = self._r.hget(keys.BOT_KEYS, key_sha256)
        return None if found is None else _text(found)

    def turn_reads(self, game_id: str, seat: int, command_id: str, bot_id: str | None) -> TurnReads:
        """See ``BotRegistry.turn_reads``: one pipeline (on a cluster, split by node)."""
        pipe = self._r.pipeline(transaction=False)
        pipe.get(keys.view(game_id, seat))
        pipe.exists(keys.bot_submitted(game_id, command_id))
        if bot_id is not None:
            pipe.hmget(keys.bot(bot_id), ["doc", "retired"])
        found = pipe.execute()
        bot = _registered_bot(*found[2]) if bot_id is not None else None
        return TurnReads(cast("bytes | None", found[0]), bool(found[1]), bot)


def _registered_bot(doc: Any, retired: Any) -> RegisteredBot | None:
    """A bot from its hash's ``doc`` and ``retired`` (None without a doc)."""
    if doc is None:
        return None
    fields = json.loads(doc)
    fields["games"] = tuple(fields["games"])
    return RegisteredBot(**fields, retired=retired is not None and _text(retired) == "1")


# Redis's clock in milliseconds, put before the scripts that read it (every gateway and worker
# judges a turn's deadline by the same clock).
_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""


class RedisConnectedTurns:
    """``ConnectedTurns`` on the bot's slot: a hash per turn (``keys.bot_turn``), the open
    turns by deadline (``keys.bot_pending``), the accepted answer in a list its waiter BLPOPs
    (``keys.bot_turn_answer``), the bot's messages on ``keys.bot_channel``. Every key
    expires ``keep_s`` after the turn's deadline; answering and closing are one script each,
    so an answer is either accepted before the deadline and handed over, or refused."""

    # KEYS: turn, pending. ARGV: body, budget ms, keep ms, turn id.
    _ISSUE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local deadline = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'body', ARGV[1], 'deadline', deadline, 'state', 'open')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], deadline, ARGV[4])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return tonumber(ARGV[2])
"""
    # KEYS: turn. -> {body, ms left, state} or nil.
    _GET = """
local got = redis.call('HMGET', KEYS[1], 'body', 'deadline', 'state')
if not got[1] then return nil end
return {got[1], tonumber(got[2]) - now, got[3]}
"""
    # KEYS: turn, answer, pending. ARGV: payload, turn id, keep ms.
    _ANSWER = """
local got = redis.call('HMGET', KEYS[1], 'state', 'deadline')
if not got[1] then return 'unknown' end
if got[1] ~= 'open' or now > tonumber(got[2]) then return 'expired' end
redis.call('HSET', KEYS[1], 'state', 'answered')
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
redis.call('ZREM', KEYS[3], ARGV[2])
return 'ok'
"""
    # KEYS: turn, answer, pending. ARGV: turn id. -> the answer not taken yet, or nil.
    _CLOSE = """
redis.call('ZREM', KEYS[3], ARGV[1])
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'open' then
  redis.call('HSET', KEYS[1], 'state', 'closed')
  return nil
end
return redis.call('LPOP', KEYS[2])
"""

    def __init__(self, client: Client) -> None:
        self._r = client
        self._issue = client.register_script(_NOW_MS + self._ISSUE)
        self._get = client.register_script(_NOW_MS + self._GET)
        self._answer = client.register_script(_NOW_MS + self._ANSWER)
        self._close = client.register_script(self._CLOSE)

    def issue(
        self, bot_id: str, turn_id: str, body: bytes, budget_ms: int, keep_s: int
    ) -> int | None:
        """See ``ConnectedTurns.issue``: stored by one script, then published (after the
        store, so a bot that hears of it can answer it)."""
        left = int(
            self._issue(
                keys=[keys.bot_turn(bot_id, turn_id), keys.bot_pending(bot_id)],
                args=[body, budget_ms, keep_s * 1000, turn_id],
            )
        )
        if left < 0:
            return None
        self._r.publish(keys.bot_channel(bot_id), body)
        return left

    def get(self, bot_id: str, turn_id: str) -> PendingTurn | None:
        """See ``ConnectedTurns.get``."""
        got = self._get(keys=[keys.bot_turn(bot_id, turn_id)])
        if got is None:
            return None
        body, left, state = got
        return PendingTurn(bytes(body), int(left), _text(state) == "open" and int(left) >= 0)

    def pending(self, bot_id: str) -> list[bytes]:
        """See ``ConnectedTurns.pending``."""
        seconds, micros = self._r.time()
        now = int(seconds) * 1000 + int(micros) // 1000
        ids = self._r.zrangebyscore(keys.bot_pending(bot_id), now, "+inf")
        if not ids:
            return []
        pipe = self._r.pipeline(transaction=False)
        for tid in ids:
            pipe.hmget(keys.bot_turn(bot_id, _text(tid)), ["body", "state"])
        return [bytes(b) for b, st in pipe.execute() if b is not None and _text(st) == "open"]

    def answer(self, bot_id: str, turn_id: str, payload: bytes) -> str:
        """See ``ConnectedTurns.answer``."""
        got = self._answer(
            keys=[keys.bot_turn(bot_id, turn_id), keys.bot_turn_answer(bot_id, turn_id),
                  keys.bot_pending(bot_id)],
            args=[payload, turn_id, 60_000],
        )  # fmt: skip
        return _text(got)

    def wait(self, bot_id: str, turn_id: str, timeout_s: float) -> bytes | None:
        """See ``ConnectedTurns.wait``: BLPOPs of at most ``WAIT_STEP_S`` (each under the
        client's socket timeout), so a greenlet waits, not a thread."""
        key = keys.bot_turn_answer(bot_id, turn_id)
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            popped = self._r.blpop([key], timeout=max(0.01, min(left, WAIT_STEP_S)))
            if popped is not None:
                return cast(bytes, popped[1])

    def close(self, bot_id: str, turn_id: str) -> bytes | None:
        """See ``ConnectedTurns.close``."""
        got = self._close(
            keys=[keys.bot_turn(bot_id, turn_id), keys.bot_turn_answer(bot_id, turn_id),
                  keys.bot_pending(bot_id)],
            args=[turn_id],
        )  # fmt: skip
        return None if got is None else bytes(got)

    def publish(self, bot_id: str, message: bytes) -> None:
        """See ``ConnectedTurns.publish``."""
        self._r.publish(keys.bot_channel(bot_id), message)

    def subscribe(self, bot_id: str) -> RedisTurnSubscription:
        """See ``ConnectedTurns.subscribe``: returns once Redis has confirmed the
        subscription, so nothing published afterwards is missed."""
        pubsub = self._r.pubsub()
        pubsub.subscribe(keys.bot_channel(bot_id))
        deadline = time.monotonic() + 10
        while True:
            msg = pubsub.get_message(timeout=1.0)
            if msg is not None and msg.get("type") == "subscribe":
                return RedisTurnSubscription(pubsub)
            if time.monotonic() > deadline:
                pubsub.close()
                raise redis.TimeoutError("the subscription was not confirmed")


class RedisTurnSubscription:
    """One pub/sub connection listening to a connected bot's channel."""

    def __init__(self, pubsub: Any) -> None:
        self._p = pubsub

    def next(self, timeout: float) -> bytes | None:
        """See ``TurnSubscription.next``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            msg = self._p.get_message(timeout=max(left, 0.0))
            if msg is not None and msg.get("type") == "message":
                return cast(bytes, msg["data"])
            if left <= 0:
                return None

    def close(self) -> None:
        """See ``TurnSubscription.close``."""
        self._p.close()


MAX_CONNECTIONS = 1000  # per process; a request past it waits for one (it does not fail)


def connect(url: str, *, cluster: bool = False) -> Client:
    """A client for the Redis at ``url`` (no connection is made until the first command). Its
    pool blocks when all ``MAX_CONNECTIONS`` are busy (thousands of live feeds and waiting
    clients in one gevent worker) rather than failing: redis-py's own default refuses the
    101st concurrent command.

    ``cluster`` (``TABLETOP_REDIS_CLUSTER=1``): ``url`` names any node of a Redis Cluster and
    the client is redis-py's ``RedisCluster``, with the same blocking pool per node. It reads
    the slot map at once, so an unreachable cluster fails here (the supervisor restarts the
    process), and follows MOVED/ASK redirections after a resharding or a failover."""
    if cluster:
        return RedisCluster.from_url(
            url,
            connection_pool_class=redis.BlockingConnectionPool,
            max_connections=MAX_CONNECTIONS,
            timeout=30,
        )
    pool = redis.BlockingConnectionPool.from_url(url, max_connections=MAX_CONNECTIONS, timeout=30)
    return redis.Redis(connection_pool=pool)


def redis_ports(
    client: Client,
    *,
    dispatcher: BotDispatcher | None = None,
    shards: int = 1,
    rejected_ttl: int = DEFAULT_REJECTED_TTL,
    bot_secret: str = "",
    bot_secret_file: str = "",
) -> Ports:
    """Every port on one Redis client (``rejected_ttl``: seconds a refused command's outcome
    is kept; ``bot_secret``: what registered bots' keys derive from, else the secret kept in
    the file ``bot_secret_file``, by default the environment's (``config.bot_secret_path``);
    ``RedisBotRegistry``)."""
    batch = RedisBatch(client)
    return Ports(
        store=RedisEventStore(client),
        directory=RedisDirectory(client, batch),
        read_models=RedisReadModels(client, batch),
        bus=RedisCommandBus(client, batch, rejected_ttl=rejected_ttl),
        notifier=RedisNotifier(client, batch),
        clock=RedisClock(client, batch),
        dispatcher=dispatcher or NullDispatcher(),
        tournaments=RedisTournaments(client),
        ratings=RedisRatings(client),
        idempotency=RedisIdempotency(client),
        searches=RedisSearchShares(client),
        bots=RedisBotRegistry(client, bot_secret, bot_secret_file),
        webhooks=HttpWebhooks(),
        turns=RedisConnectedTurns(client),
        batch=batch,
        shards=shards,
        ping=lambda: bool(client.ping()),
        client=client,
    )
