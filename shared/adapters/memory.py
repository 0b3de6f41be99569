"""In-memory adapters of every port: the reference for the contract suites and for handler
tests that need no Redis. Thread-safe, so tests may race them."""

from __future__ import annotations

import bisect
import copy
import dataclasses
import json
import queue
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from shared.adapters.webhook import HttpWebhooks
from shared.app.ports import (
    FAILURE_COUNTS,
    SERVICE_FAILURE,
    STATS_WINDOW,
    GameEntry,
    NullDispatcher,
    PendingTurn,
    Ports,
    RegisteredBot,
    TournamentEntry,
    TurnReads,
    bot_stats_doc,
    no_batch,
)
from shared.store.memory import MemoryEventStore


class MemoryDirectory:
    """``GameDirectory`` in dicts."""

    def __init__(self) -> None:
        self._entries: dict[str, GameEntry] = {}
        self._created: list[tuple[float, str]] = []
        self._lobby: list[tuple[float, str]] = []  # the games of no tournament
        self._finished: dict[str, float] = {}
        self._results: dict[str, str] = {}
        self._lock = threading.Lock()

    def register(self, entry: GameEntry, created_epoch: float) -> None:
        """See ``GameDirectory.register``."""
        with self._lock:
            self._entries[entry.game_id] = entry
            bisect.insort(self._created, (created_epoch, entry.game_id))
            if not entry.tournament:
                bisect.insort(self._lobby, (created_epoch, entry.game_id))

    def get(self, game_id: str) -> GameEntry | None:
        """See ``GameDirectory.get``."""
        return self._entries.get(game_id)

    def register_all(self, entries: Sequence[tuple[GameEntry, float]]) -> None:
        """See ``GameDirectory.register_all``."""
        for entry, created_epoch in entries:
            self.register(entry, created_epoch)

    def set_token_hashes(self, game_id: str, token_hashes: Sequence[str | None]) -> None:
        """See ``GameDirectory.set_token_hashes``."""
        with self._lock:
            old = self._entries[game_id]
            self._entries[game_id] = dataclasses.replace(old, token_hashes=tuple(token_hashes))

    def mark_finished(self, game_id: str, epoch: float) -> None:
        """See ``GameDirectory.mark_finished``."""
        with self._lock:
            self._finished.setdefault(game_id, epoch)

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
        with self._lock:
            if finished:
                ids = [g for g, _ in sorted(self._finished.items(), key=lambda kv: (kv[1], kv[0]))]
            else:
                ids = [g for _, g in (self._lobby if lobby else self._created)]
        if newest:
            ids.reverse()
        return ids[offset : offset + limit]

    def record_result(self, game_id: str, result: Mapping[str, Any]) -> bool:
        """See ``GameDirectory.record_result``."""
        with self._lock:
            if game_id in self._results:
                return False
            self._results[game_id] = json.dumps(result, sort_keys=True)
            return True

    def record_results(self, results: Mapping[str, Mapping[str, Any]]) -> None:
        """See ``GameDirectory.record_results``."""
        for game_id, result in results.items():
            self.record_result(game_id, result)

    def result(self, game_id: str) -> dict[str, Any] | None:
        """See ``GameDirectory.result``."""
        raw = self._results.get(game_id)
        return json.loads(raw) if raw is not None else None

    def results(self, game_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """See ``GameDirectory.results``."""
        return [self.result(g) for g in game_ids]


class MemoryReadModels:
    """``ReadModels`` in a dict."""

    def __init__(self) -> None:
        self._docs: dict[tuple[str, int | None], bytes] = {}

    def write(self, game_id: str, seat_views: Sequence[str], public: str) -> None:
        """See ``ReadModels.write``."""
        for seat, text in enumerate(seat_views):
            self._docs[(game_id, seat)] = text.encode()
        self._docs[(game_id, None)] = public.encode()

    def read(self, game_id: str, seat: int | None) -> bytes | None:
        """See ``ReadModels.read``."""
        return self._docs.get((game_id, seat))


class MemoryCommandBus:
    """``CommandBus`` with one list per stream; a worker in the same process drains them."""

    def __init__(self) -> None:
        self.streams: dict[str, list[dict[str, str]]] = {}
        self._outcomes: dict[tuple[str, str], str] = {}
        self._replies: dict[tuple[str, str], queue.Queue[bytes]] = {}
        self._once: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

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
        """See ``CommandBus.put``."""
        with self._lock:
            self._outcomes.setdefault((game_id, command_id), pending)
            self.streams.setdefault(f"{game_type}:{shard}", []).append(dict(message))

    def take(self, game_type: str, shard: int = 0) -> list[dict[str, str]]:
        """Every message queued on a stream since the last take (for in-process workers)."""
        with self._lock:
            return self.streams.pop(f"{game_type}:{shard}", [])

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
        """See ``CommandBus.put_and_wait``."""
        self.put(game_type, shard, message, game_id=game_id, command_id=command_id,
                 pending=pending)  # fmt: skip
        return self.wait_reply(game_id, command_id, timeout)

    def outcome(self, game_id: str, command_id: str) -> str | None:
        """See ``CommandBus.outcome``."""
        return self._outcomes.get((game_id, command_id))

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
        """See ``CommandBus.complete`` (in memory nothing expires: ``refused`` changes
        nothing)."""
        with self._lock:
            if not keep:
                self._outcomes[(game_id, command_id)] = outcome
            box = self._replies.setdefault((game_id, command_id), queue.Queue())
        box.put(reply.encode())

    def wait_reply(self, game_id: str, command_id: str, timeout: float) -> bytes | None:
        """See ``CommandBus.wait_reply``."""
        with self._lock:
            box = self._replies.setdefault((game_id, command_id), queue.Queue())
        try:
            return box.get(timeout=timeout)
        except queue.Empty:
            return None

    def send_once(self, game_id: str, command_id: str, ttl: int) -> bool:
        """See ``CommandBus.send_once``."""
        now = time.monotonic()
        with self._lock:
            until = self._once.get((game_id, command_id))
            if until is not None and until > now:
                return False
            self._once[(game_id, command_id)] = now + ttl
            return True

    def was_sent(self, game_id: str, command_id: str) -> bool:
        """See ``CommandBus.was_sent``."""
        with self._lock:
            until = self._once.get((game_id, command_id))
        return until is not None and until > time.monotonic()


class MemoryNotifier:
    """``Notifier`` with one queue per subscription."""

    def __init__(self) -> None:
        self._subs: dict[str, list[queue.Queue[int]]] = {}
        self._all: list[queue.Queue[tuple[str, int]]] = []
        self._lock = threading.Lock()

    def announce(self, game_id: str, version: int) -> None:
        """See ``Notifier.announce``."""
        with self._lock:
            subs = list(self._subs.get(game_id, []))
            everyone = list(self._all)
        for q in subs:
            q.put(version)
        for a in everyone:
            a.put((game_id, version))

    def subscribe_all(self) -> MemoryAllSubscription:
        """See ``Notifier.subscribe_all``."""
        q: queue.Queue[tuple[str, int]] = queue.Queue()
        with self._lock:
            self._all.append(q)
        return MemoryAllSubscription(self, q)

    def _drop_all(self, q: queue.Queue[tuple[str, int]]) -> None:
        with self._lock:
            if q in self._all:
                self._all.remove(q)

    def subscribe(self, game_id: str) -> MemorySubscription:
        """See ``Notifier.subscribe``."""
        q: queue.Queue[int] = queue.Queue()
        with self._lock:
            self._subs.setdefault(game_id, []).append(q)
        return MemorySubscription(self, game_id, q)

    def _drop(self, game_id: str, q: queue.Queue[int]) -> None:
        with self._lock:
            subs = self._subs.get(game_id, [])
            if q in subs:
                subs.remove(q)


class MemoryAllSubscription:
    """One listener of every game's announcements."""

    def __init__(self, notifier: MemoryNotifier, q: queue.Queue[tuple[str, int]]) -> None:
        self._notifier, self._q = notifier, q

    def next(self, timeout: float) -> tuple[str, int] | None:
        """See ``AllSubscription.next``."""
        try:
            return self._q.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """See ``AllSubscription.close``."""
        self._notifier._drop_all(self._q)


class MemorySubscription:
    """One listener of ``MemoryNotifier``."""

    def __init__(self, notifier: MemoryNotifier, game_id: str, q: queue.Queue[int]) -> None:
        self._notifier, self._game_id, self._q = notifier, game_id, q

    def next(self, timeout: float) -> int | None:
        """See ``Subscription.next``."""
        try:
            return self._q.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """See ``Subscription.close``."""
        self._notifier._drop(self._game_id, self._q)


class SystemClock:
    """``Clock`` on the system time, deadlines in memory (used by both backends' tests)."""

    def __init__(self) -> None:
        self._deadlines: dict[str, float] = {}
        self._lock = threading.Lock()

    def now(self) -> str:
        """See ``Clock.now``."""
        return utc_iso(datetime.now(UTC))

    def epoch(self) -> float:
        """See ``Clock.epoch``."""
        return time.time()

    def set_deadline(self, key: str, epoch: float) -> None:
        """See ``Clock.set_deadline``."""
        with self._lock:
            self._deadlines[key] = epoch

    def cancel_deadline(self, key: str) -> None:
        """See ``Clock.cancel_deadline``."""
        with self._lock:
            self._deadlines.pop(key, None)

    def due(self, epoch: float, limit: int = 100) -> list[str]:
        """See ``Clock.due``."""
        with self._lock:
            items = sorted((t, k) for k, t in self._deadlines.items() if t <= epoch)
        return [k for _, k in items[:limit]]

    def claim_due(self, retry_s: float, limit: int = 100) -> list[str]:
        """See ``Clock.claim_due``."""
        now = self.epoch()
        with self._lock:
            items = sorted((t, k) for k, t in self._deadlines.items() if t <= now)[:limit]
            for _, k in items:
                self._deadlines[k] = now + retry_s
        return [k for _, k in items]


class FixedClock(SystemClock):
    """A clock that only moves when told (tests, and play-outs that must be reproducible)."""

    def __init__(self, start: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        super().__init__()
        self.t = start

    def now(self) -> str:
        """The fixed time as ISO-8601."""
        return utc_iso(datetime.fromtimestamp(self.t, UTC))

    def epoch(self) -> float:
        """The fixed time."""
        return self.t

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self.t += seconds


class MemoryTournaments:
    """``TournamentStore`` in dicts; a lock makes ``fold`` atomic (re-entrant: a fold's
    ``finish`` reads which games are folded)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._entries: dict[str, TournamentEntry] = {}
        self._order: list[tuple[float, str]] = []
        self._folded: dict[str, set[int]] = {}

    def create(
        self, tournament_id: str, plan: Mapping[str, Any], tally: Mapping[str, Any], at: str,
        epoch: float,
    ) -> None:  # fmt: skip
        """See ``TournamentStore.create``."""
        with self._lock:
            self._entries[tournament_id] = TournamentEntry(
                tournament_id=tournament_id,
                plan=json.loads(json.dumps(plan)),
                created_at=at,
                started=False,
                cancelled=False,
                tally=json.loads(json.dumps(tally)),
            )
            bisect.insort(self._order, (epoch, tournament_id))
            self._folded[tournament_id] = set()

    def get(self, tournament_id: str) -> TournamentEntry | None:
        """See ``TournamentStore.get``."""
        with self._lock:
            entry = self._entries.get(tournament_id)
            return copy.deepcopy(entry)

    def list_ids(self, *, offset: int = 0, limit: int = 100) -> list[str]:
        """See ``TournamentStore.list_ids``."""
        with self._lock:
            return [t for _, t in self._order[offset : offset + limit]]

    def _flag(self, tournament_id: str, **flags: bool) -> None:
        with self._lock:
            entry = self._entries.get(tournament_id)
            if entry is not None:
                self._entries[tournament_id] = TournamentEntry(
                    tournament_id=entry.tournament_id,
                    plan=entry.plan,
                    created_at=entry.created_at,
                    started=flags.get("started", entry.started),
                    cancelled=flags.get("cancelled", entry.cancelled),
                    tally=entry.tally,
                )

    def mark_started(self, tournament_id: str) -> None:
        """See ``TournamentStore.mark_started``."""
        self._flag(tournament_id, started=True)

    def cancel(self, tournament_id: str) -> None:
        """See ``TournamentStore.cancel``."""
        self._flag(tournament_id, cancelled=True)

    def cancelled(self, tournament_id: str) -> bool:
        """See ``TournamentStore.cancelled``."""
        with self._lock:
            entry = self._entries.get(tournament_id)
            return bool(entry and entry.cancelled)

    def folded(self, tournament_id: str, indexes: Sequence[int]) -> list[bool]:
        """See ``TournamentStore.folded``."""
        with self._lock:
            done = self._folded.get(tournament_id, set())
            return [i in done for i in indexes]

    def fold(
        self,
        tournament_id: str,
        updates: Mapping[int, Callable[[dict[str, Any]], None]],
        finish: Callable[[dict[str, Any]], None] | None = None,
    ) -> list[int]:
        """See ``TournamentStore.fold``."""
        with self._lock:
            done = self._folded.setdefault(tournament_id, set())
            entry = self._entries.get(tournament_id)
            if entry is None:
                return []
            fresh = [i for i in updates if i not in done]
            if not fresh:
                return []
            tally = copy.deepcopy(entry.tally)  # all or nothing, as the Redis transaction
            for i in fresh:
                updates[i](tally)
            if finish is not None:
                finish(tally)
            entry.tally.clear()
            entry.tally.update(tally)
            done.update(fresh)
            return fresh


class MemoryRatings:
    """``RatingBoard`` in dicts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._boards: dict[str, dict[str, Any]] = {}
        self._rated: set[tuple[str, str]] = set()

    def rate(
        self, game_type: str, updates: Mapping[str, Callable[[dict[str, Any]], None]]
    ) -> list[str]:
        """See ``RatingBoard.rate``."""
        with self._lock:
            board = self._boards.setdefault(game_type, {})
            fresh = [g for g in updates if (game_type, g) not in self._rated]
            for g in fresh:
                updates[g](board)
                self._rated.add((game_type, g))
            return fresh

    def board(self, game_type: str) -> dict[str, Any]:
        """See ``RatingBoard.board``."""
        with self._lock:
            return copy.deepcopy(self._boards.get(game_type, {}))


class MemorySearchShares:
    """``SearchShares`` in dicts, on this process's monotonic clock."""

    def __init__(self) -> None:
        self._tickets: dict[str, dict[str, float]] = {}  # owner -> ticket -> expiry
        self._slots: dict[str, tuple[str, float]] = {}  # slot -> (holder, expiry)
        self._lock = threading.Lock()

    def enter(self, owner: str, ticket: str, ttl: float) -> int:
        """See ``SearchShares.enter``."""
        now = time.monotonic()
        with self._lock:
            held = self._tickets.setdefault(owner, {})
            for old in [t for t, expiry in held.items() if expiry <= now]:
                del held[old]
            held[ticket] = now + ttl
            return len(held) - 1

    def leave(self, owner: str, ticket: str) -> None:
        """See ``SearchShares.leave``."""
        with self._lock:
            self._tickets.get(owner, {}).pop(ticket, None)

    def hold(self, slot: str, holder: str, ttl: float) -> float:
        """See ``SearchShares.hold``."""
        now = time.monotonic()
        with self._lock:
            present = self._slots.get(slot)
            if present is not None and present[1] > now:
                return present[1] - now
            self._slots[slot] = (holder, now + ttl)
            return 0.0

    def release(self, slot: str, holder: str) -> None:
        """See ``SearchShares.release``."""
        with self._lock:
            if self._slots.get(slot, ("", 0.0))[0] == holder:
                del self._slots[slot]


class MemoryIdempotency:
    """``IdempotencyStore`` in a dict (no expiry: tests are short)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, dict[str, Any]] = {}

    def claim(self, key: str, fingerprint: str, ttl: int) -> dict[str, Any] | None:
        """See ``IdempotencyStore.claim``."""
        with self._lock:
            if key in self._kept:
                return copy.deepcopy(self._kept[key])
            self._kept[key] = {"fingerprint": fingerprint, "response": None}
            return None

    def finish(self, key: str, fingerprint: str, response: Mapping[str, Any], ttl: int) -> None:
        """See ``IdempotencyStore.finish``."""
        with self._lock:
            self._kept[key] = {"fingerprint": fingerprint, "response": dict(response)}


class MemoryBotRegistry:
    """``BotRegistry`` in dicts; its secret is ``secret`` or one made per instance. A turn's
    reads (``turn_reads``) look in ``read_models`` and ``bus``, the ports' own."""

    def __init__(
        self,
        secret: str = "",
        *,
        read_models: MemoryReadModels | None = None,
        bus: MemoryCommandBus | None = None,
    ) -> None:
        self._read_models = read_models or MemoryReadModels()
        self._bus = bus or MemoryCommandBus()
        self._secret = secret or secrets.token_hex(32)
        self._lock = threading.Lock()
        self._bots: dict[str, RegisteredBot] = {}
        self._order: list[tuple[float, str]] = []
        self._counts: dict[str, dict[str, int]] = {}
        self._latencies: dict[str, list[int]] = {}

    def secret(self) -> str:
        """See ``BotRegistry.secret``."""
        return self._secret

    def add(self, bot: RegisteredBot, epoch: float) -> None:
        """See ``BotRegistry.add``."""
        with self._lock:
            if bot.bot_id not in self._bots:
                bisect.insort(self._order, (epoch, bot.bot_id))
            self._bots[bot.bot_id] = bot

    def get(self, bot_id: str) -> RegisteredBot | None:
        """See ``BotRegistry.get``."""
        with self._lock:
            return self._bots.get(bot_id)

    def list_ids(self, *, offset: int = 0, limit: int = 100) -> list[str]:
        """See ``BotRegistry.list_ids``."""
        with self._lock:
            return [b for _, b in self._order[offset : offset + limit]]

    def retire(self, bot_id: str) -> bool:
        """See ``BotRegistry.retire``."""
        with self._lock:
            bot = self._bots.get(bot_id)
            if bot is None:
                return False
            self._bots[bot_id] = dataclasses.replace(bot, retired=True)
            return True

    def rekey(self, bot_id: str, key_sha256: str) -> bool:
        """See ``BotRegistry.rekey``."""
        with self._lock:
            bot = self._bots.get(bot_id)
            if bot is None:
                return False
            self._bots[bot_id] = dataclasses.replace(bot, key_sha256=key_sha256)
            return True

    def record(self, bot_id: str, latency_ms: int, failure: str | None) -> None:
        """See ``BotRegistry.record``."""
        with self._lock:
            counts = self._counts.setdefault(bot_id, {})
            if failure == SERVICE_FAILURE:
                counts["service_faults"] = counts.get("service_faults", 0) + 1
                return
            counts["decisions"] = counts.get("decisions", 0) + 1
            if failure is not None:
                name = FAILURE_COUNTS.get(failure, "errors")
                counts[name] = counts.get(name, 0) + 1
                counts["fallbacks"] = counts.get("fallbacks", 0) + 1
            kept = self._latencies.setdefault(bot_id, [])
            kept.append(latency_ms)
            del kept[:-STATS_WINDOW]

    def stats(self, bot_id: str) -> dict[str, Any]:
        """See ``BotRegistry.stats``."""
        with self._lock:
            return bot_stats_doc(self._counts.get(bot_id, {}), self._latencies.get(bot_id, []))

    def by_key(self, key_sha256: str) -> str | None:
        """See ``BotRegistry.by_key``."""
        with self._lock:
            found = [b.bot_id for b in self._bots.values() if b.key_sha256 == key_sha256]
        return found[0] if found else None

    def turn_reads(self, game_id: str, seat: int, command_id: str, bot_id: str | None) -> TurnReads:
        """See ``BotRegistry.turn_reads``."""
        return TurnReads(
            self._read_models.read(game_id, seat),
            self._bus.was_sent(game_id, command_id),
            self.get(bot_id) if bot_id is not None else None,
        )


class MemoryConnectedTurns:
    """``ConnectedTurns`` in dicts, on this machine's clock; expired turns are dropped when
    met."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        # (bot, turn) -> [body, deadline (monotonic s), state, forget at (monotonic s)]
        self._turns: dict[tuple[str, str], list[Any]] = {}
        self._answers: dict[tuple[str, str], bytes] = {}
        self._subs: dict[str, list[queue.Queue[bytes]]] = {}

    def _find(self, bot_id: str, turn_id: str) -> list[Any] | None:
        found = self._turns.get((bot_id, turn_id))
        if found is not None and time.monotonic() > found[3]:
            del self._turns[(bot_id, turn_id)]
            self._answers.pop((bot_id, turn_id), None)
            return None
        return found

    def issue(
        self, bot_id: str, turn_id: str, body: bytes, budget_ms: int, keep_s: int
    ) -> int | None:
        """See ``ConnectedTurns.issue``."""
        with self._cond:
            if self._find(bot_id, turn_id) is not None:
                return None
            deadline = time.monotonic() + budget_ms / 1000
            self._turns[(bot_id, turn_id)] = [body, deadline, "open", deadline + keep_s]
        self.publish(bot_id, body)
        return budget_ms

    def get(self, bot_id: str, turn_id: str) -> PendingTurn | None:
        """See ``ConnectedTurns.get``."""
        with self._cond:
            found = self._find(bot_id, turn_id)
            if found is None:
                return None
            left = round((found[1] - time.monotonic()) * 1000)
            return PendingTurn(found[0], left, found[2] == "open" and left >= 0)

    def pending(self, bot_id: str) -> list[bytes]:
        """See ``ConnectedTurns.pending``."""
        now = time.monotonic()
        with self._cond:
            mine = [t for (b, _), t in self._turns.items() if b == bot_id]
            mine.sort(key=lambda t: t[1])
            return [t[0] for t in mine if t[2] == "open" and t[1] >= now]

    def answer(self, bot_id: str, turn_id: str, payload: bytes) -> str:
        """See ``ConnectedTurns.answer``."""
        with self._cond:
            found = self._find(bot_id, turn_id)
            if found is None:
                return "unknown"
            if found[2] != "open" or time.monotonic() > found[1]:
                return "expired"
            found[2] = "answered"
            self._answers[(bot_id, turn_id)] = payload
            self._cond.notify_all()
            return "ok"

    def wait(self, bot_id: str, turn_id: str, timeout_s: float) -> bytes | None:
        """See ``ConnectedTurns.wait``."""
        with self._cond:
            self._cond.wait_for(lambda: (bot_id, turn_id) in self._answers, max(timeout_s, 0))
            return self._answers.pop((bot_id, turn_id), None)

    def close(self, bot_id: str, turn_id: str) -> bytes | None:
        """See ``ConnectedTurns.close``."""
        with self._cond:
            found = self._find(bot_id, turn_id)
            if found is not None and found[2] == "open":
                found[2] = "closed"
            return self._answers.pop((bot_id, turn_id), None)

    def publish(self, bot_id: str, message: bytes) -> None:
        """See ``ConnectedTurns.publish``."""
        with self._cond:
            subs = list(self._subs.get(bot_id, []))
        for q in subs:
            q.put(message)

    def subscribe(self, bot_id: str) -> MemoryTurnSubscription:
        """See ``ConnectedTurns.subscribe``."""
        q: queue.Queue[bytes] = queue.Queue()
        with self._cond:
            self._subs.setdefault(bot_id, []).append(q)
        return MemoryTurnSubscription(self, bot_id, q)

    def _drop(self, bot_id: str, q: queue.Queue[bytes]) -> None:
        with self._cond:
            subs = self._subs.get(bot_id, [])
            if q in subs:
                subs.remove(q)


class MemoryTurnSubscription:
    """One listener of a connected bot's messages."""

    def __init__(self, turns: MemoryConnectedTurns, bot_id: str, q: queue.Queue[bytes]) -> None:
        self._turns, self._bot_id, self._q = turns, bot_id, q

    def next(self, timeout: float) -> bytes | None:
        """See ``TurnSubscription.next``."""
        try:
            return self._q.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """See ``TurnSubscription.close``."""
        self._turns._drop(self._bot_id, self._q)


def utc_iso(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a ``Z``."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def memory_ports(
    *, dispatcher: Any = None, clock: Any = None, shards: int = 1, bot_secret: str = ""
) -> Ports:
    """Every port in memory (``bot_secret``: what registered bots' keys derive from)."""
    read_models, bus = MemoryReadModels(), MemoryCommandBus()
    return Ports(
        store=MemoryEventStore(),
        directory=MemoryDirectory(),
        read_models=read_models,
        bus=bus,
        notifier=MemoryNotifier(),
        clock=clock or SystemClock(),
        dispatcher=dispatcher or NullDispatcher(),
        tournaments=MemoryTournaments(),
        ratings=MemoryRatings(),
        idempotency=MemoryIdempotency(),
        searches=MemorySearchShares(),
        bots=MemoryBotRegistry(bot_secret, read_models=read_models, bus=bus),
        webhooks=HttpWebhooks(),
        turns=MemoryConnectedTurns(),
        batch=no_batch,
        shards=shards,
    )
