"""The ports: what the application needs from the world, as ``typing.Protocol`` s (those a
game's commands and news travel through in ``game_ports``, those kept per client in
``client_ports``), and the ``Ports`` bundle of them all.

Each port has an in-memory adapter (``shared/adapters/memory.py``) and a Redis adapter
(``shared/adapters/redis.py``), and both pass one contract suite
(``tests/integration/test_port_contracts.py``). Writes made inside ``Ports.batch()`` reach the
backend together (one round trip on Redis) when the block ends without an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from shared.app.client_ports import IdempotencyStore, SearchShares
from shared.app.game_ports import Clock, CommandBus, Notifier, ReadModels
from shared.archive.port import Archive
from shared.store.port import EventStore


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEntry:
    """A game as the directory knows it: what routing and authentication need, and the secret."""

    game_id: str
    game: str  # the game type
    seed: str  # secret until the game ends
    shard: int
    created_at: str
    token_hashes: tuple[str | None, ...]  # per seat; None for a bot (or an open seat)
    lobby: bool = False  # its roster may change (open seats): read it fresh to authenticate
    # Who created it (a client's address or key, hashed; "" unknown): its bots' searches take
    # their turn on the search workers among that client's (``shared/app/searches.py``).
    owner: str = ""
    # The tournament whose game it is ("" for none): listed through that tournament, never in
    # the lobby's list, which a tournament's hundreds of games would otherwise flood.
    tournament: str = ""


class GameDirectory(Protocol):
    """Where games are found: type, seed, roster, shard, and the lists a lobby shows."""

    def register(self, entry: GameEntry, created_epoch: float) -> None:
        """Record a new game (before its first event is appended) and list it as created."""
        ...

    def register_all(self, entries: Sequence[tuple[GameEntry, float]]) -> None:
        """``register`` of each (entry, created epoch), in one round trip where the directory
        can (a tournament's batch of games)."""
        ...

    def get(self, game_id: str) -> GameEntry | None:
        """The game's entry, or None when there is no such game."""
        ...

    def set_token_hashes(self, game_id: str, token_hashes: Sequence[str | None]) -> None:
        """Replace the roster's token hashes after a seat change (from the match aggregate)."""
        ...

    def mark_finished(self, game_id: str, epoch: float) -> None:
        """List the game as finished (the first call's time is kept)."""
        ...

    def list_games(
        self,
        *,
        finished: bool = False,
        offset: int = 0,
        limit: int = 100,
        newest: bool = False,
        lobby: bool = False,
    ) -> list[str]:
        """Game ids by creation time (or finishing time), oldest first (``newest``: newest
        first); ``lobby``: by creation time, only the games of no tournament."""
        ...

    def record_result(self, game_id: str, result: Mapping[str, Any]) -> bool:
        """Store a finished game's result once; False when one was already stored."""
        ...

    def record_results(self, results: Mapping[str, Mapping[str, Any]]) -> None:
        """``record_result`` of each game id's result, with the open unit's writes when one
        is open (so without its answer; the first writer still wins)."""
        ...

    def result(self, game_id: str) -> dict[str, Any] | None:
        """The stored result of a finished game."""
        ...

    def results(self, game_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """``result`` of each, in order, read in a few round trips."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TournamentEntry:
    """A stored tournament: its plan (JSON, with the secret seed), state flags and tally."""

    tournament_id: str
    plan: Mapping[str, Any]
    created_at: str
    started: bool
    cancelled: bool
    tally: dict[str, Any]


class TournamentStore(Protocol):
    """Tournaments: the plan, whether it runs or was cancelled, and standings folded once per
    game (``fold`` is idempotent per game index)."""

    def create(
        self, tournament_id: str, plan: Mapping[str, Any], tally: Mapping[str, Any], at: str,
        epoch: float,
    ) -> None:  # fmt: skip
        """Store a new tournament and list it."""
        ...

    def get(self, tournament_id: str) -> TournamentEntry | None:
        """The tournament, or None."""
        ...

    def list_ids(self, *, offset: int = 0, limit: int = 100) -> list[str]:
        """Tournament ids, oldest first."""
        ...

    def mark_started(self, tournament_id: str) -> None:
        """Record that its first game started."""
        ...

    def cancel(self, tournament_id: str) -> None:
        """Stop it: games not yet started are dropped."""
        ...

    def cancelled(self, tournament_id: str) -> bool:
        """Whether it was cancelled."""
        ...

    def folded(self, tournament_id: str, indexes: Sequence[int]) -> list[bool]:
        """For each game index, whether it is in the standings already."""
        ...

    def fold(
        self,
        tournament_id: str,
        updates: Mapping[int, Callable[[dict[str, Any]], None]],
        finish: Callable[[dict[str, Any]], None] | None = None,
    ) -> list[int]:
        """Apply to the tally, in one atomic step, the update of each game index not folded
        yet, marking those folded, then ``finish`` if any was; returns the indexes folded now
        (none folds twice)."""
        ...


class RatingBoard(Protocol):
    """Ratings of bot specs per game type over every finished all-bot game."""

    def rate(
        self, game_type: str, updates: Mapping[str, Callable[[dict[str, Any]], None]]
    ) -> list[str]:
        """Apply to the game type's board, in one atomic step, the update of each game id not
        rated yet, marking those rated; returns the game ids rated now."""
        ...

    def board(self, game_type: str) -> dict[str, Any]:
        """label -> ``{"mu", "sigma", "games"}``."""
        ...


# A registered bot's latency figures cover its last this many decisions.
STATS_WINDOW = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredBot:
    """A bot registered from outside (``POST /v1/bots``): how to reach it and what it plays.
    Its key is never kept, only ``key_sha256`` (``shared/app/registry.py``)."""

    bot_id: str
    name: str
    games: tuple[str, ...]
    transport: str  # "webhook" or "connected"
    url: str | None  # a webhook's
    budget_ms: int
    on_failure: str  # "random" or "forfeit"
    key_sha256: str
    created_at: str
    retired: bool = False
    # Opted in to the public ladder (``GET /v1/ratings``): its all-bot games are rated there.
    ladder: bool = False
    # Who may seat it (``bot_registration.SEATABLE_BY``); a bot registered before it could be
    # said has none stored and reads as "anyone", as it was.
    seatable_by: str = "anyone"


@dataclass(frozen=True, slots=True)
class TurnReads:
    """What a registered bot's turn starts from (``BotRegistry.turn_reads``): the seat's view
    as stored (None: no such game), whether the bot's command was sent already
    (``CommandBus.was_sent``), and the bot (None: no such bot, or none was asked for)."""

    view: bytes | None
    sent: bool
    bot: RegisteredBot | None


class BotRegistry(Protocol):
    """Registered bots, their decisions' statistics, and the server secret their keys are
    derived from."""

    def secret(self) -> str:
        """The server secret bot keys are derived from: the configured one, or one made on
        first use and kept by the backend (the same in every process; on Redis, in a file of
        the data directory, never in Redis itself)."""
        ...

    def add(self, bot: RegisteredBot, epoch: float) -> None:
        """Store a new bot and list it."""
        ...

    def get(self, bot_id: str) -> RegisteredBot | None:
        """The bot, or None (retired bots too, marked ``retired``)."""
        ...

    def list_ids(self, *, offset: int = 0, limit: int = 100) -> list[str]:
        """Bot ids by registration time, oldest first."""
        ...

    def retire(self, bot_id: str) -> bool:
        """Mark the bot retired; False when there is no such bot."""
        ...

    def rekey(self, bot_id: str, key_sha256: str) -> bool:
        """Replace the bot's key hash (its key derived from a new secret; ``by_key`` finds it
        by the new hash only); False when there is no such bot."""
        ...

    def record(self, bot_id: str, latency_ms: int, failure: str | None) -> None:
        """Count one decision: its latency (the last ``STATS_WINDOW`` are kept) and its
        failure, if any (``timeout``, ``illegal``, ``error``, ``unreachable``); a
        ``SERVICE_FAILURE`` counts only ``service_faults`` (it is no decision of the bot's)."""
        ...

    def stats(self, bot_id: str) -> dict[str, Any]:
        """``{"decisions", "latency_ms": {"p50", "p95", "max"}, "timeouts", "illegal",
        "errors", "fallbacks", "service_faults"}``; latencies over the last ``STATS_WINDOW``
        decisions."""
        ...

    def by_key(self, key_sha256: str) -> str | None:
        """The id of the bot whose key hashes to ``key_sha256`` (a connected bot names
        itself by its key alone), or None."""
        ...

    def turn_reads(self, game_id: str, seat: int, command_id: str, bot_id: str | None) -> TurnReads:
        """``ReadModels.read(game_id, seat)``, ``CommandBus.was_sent(game_id, command_id)``
        and ``get(bot_id)`` (unless None) together: one round trip on Redis, since a turn
        waits on each of them before its bot is sent anything."""
        ...


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """A connected bot's turn as stored: the exact ``body`` it is sent, the milliseconds
    ``left_ms`` until its deadline by the backend's clock (negative once past), and whether
    it is still ``open`` (unanswered and not past its deadline)."""

    body: bytes
    left_ms: int
    open: bool


class TurnSubscription(Protocol):
    """An open subscription to one connected bot's messages (turns, game-over notes)."""

    def next(self, timeout: float) -> bytes | None:
        """The next message published, or None after ``timeout`` seconds."""
        ...

    def close(self) -> None:
        """Stop listening."""
        ...


class ConnectedTurns(Protocol):
    """The turns of connected bots (``GET /v1/bots/me/turns``): each waits in a per-bot
    structure that expires, is published on the bot's channel, and is answered at most once
    before its deadline; the task that issued it waits for the answer without a thread."""

    def issue(
        self, bot_id: str, turn_id: str, body: bytes, budget_ms: int, keep_s: int
    ) -> int | None:
        """Store the turn as open with its deadline ``budget_ms`` from now (kept ``keep_s``
        seconds past it, so a late answer is told ``expired``, not ``unknown``) and publish
        ``body`` to the bot: the milliseconds left (``budget_ms``), or None when this turn
        was issued already (nothing is stored or published again)."""
        ...

    def get(self, bot_id: str, turn_id: str) -> PendingTurn | None:
        """The bot's turn, or None when this bot has no such turn (another bot's turn is
        not found either: a bot cannot tell that it exists)."""
        ...

    def pending(self, bot_id: str) -> list[bytes]:
        """The bodies of the bot's open turns, oldest deadline first (what a bot that
        reconnects is sent again)."""
        ...

    def answer(self, bot_id: str, turn_id: str, payload: bytes) -> str:
        """Answer an open turn, atomically: ``ok`` (``payload`` is handed to its waiter and
        the turn closes), ``expired`` (past its deadline, or answered already) or
        ``unknown``."""
        ...

    def wait(self, bot_id: str, turn_id: str, timeout_s: float) -> bytes | None:
        """The payload of the turn's answer, waiting at most ``timeout_s``; None if none."""
        ...

    def close(self, bot_id: str, turn_id: str) -> bytes | None:
        """Close the turn (no answer is taken after this): the payload of an answer that
        was accepted but not yet taken by ``wait``, else None."""
        ...

    def publish(self, bot_id: str, message: bytes) -> None:
        """Send ``message`` to the bot's subscribers (a game-over note)."""
        ...

    def subscribe(self, bot_id: str) -> TurnSubscription:
        """Listen to the bot's messages; every message published after this returns is
        received."""
        ...


FAILURE_COUNTS = {"timeout": "timeouts", "illegal": "illegal", "error": "errors",
                  "unreachable": "errors"}  # fmt: skip
# A turn's failure that is the service's, not the bot's (its budget spent before the bot could
# answer: the process that sends turns was down or starved). Counted apart (``service_faults``),
# never as the bot's decision, fallback or latency.
SERVICE_FAILURE = "service"


def bot_stats_doc(counts: Mapping[str, int], latencies: Sequence[int]) -> dict[str, Any]:
    """``BotRegistry.stats`` from the counters (``decisions``, ``timeouts``, ``illegal``,
    ``errors``, ``fallbacks``) and the latencies of the last decisions (nearest-rank
    percentiles, in milliseconds; null before any decision)."""
    ordered = sorted(latencies)

    def rank(p: float) -> int | None:
        if not ordered:
            return None
        return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))]

    return {
        "decisions": int(counts.get("decisions", 0)),
        "latency_ms": {
            "p50": rank(0.5),
            "p95": rank(0.95),
            "max": ordered[-1] if ordered else None,
        },
        **{k: int(counts.get(k, 0)) for k in ("timeouts", "illegal", "errors", "fallbacks")},
        "service_faults": int(counts.get("service_faults", 0)),
    }


@dataclass(frozen=True, slots=True)
class WebhookAnswer:
    """What came of one POST to a bot: the status and body (None and b"" when no answer
    came), the failure (``timeout``, ``unreachable``, ``error``: too large, not HTTP, a
    refused address; ``service``: a timeout that the sender's own delays caused, see
    ``HttpWebhooks.post``; None when an answer came whole) and the round trip in
    milliseconds."""

    status: int | None
    body: bytes
    failure: str | None
    latency_ms: int


class WebhookSender(Protocol):
    """Sends a signed JSON body to a bot's webhook and reads its answer, within a deadline."""

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be a webhook (None: it may): a scheme other than http/https,
        credentials, a host not allowed, or a name resolving outside the allowed addresses."""
        ...

    def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> WebhookAnswer:
        """POST ``body`` to ``url`` (never following a redirect, reading at most 64 KiB of
        the answer, giving up ``timeout_s`` after starting); a URL whose host is not allowed
        or resolves outside the allowed addresses is never contacted (``error``)."""
        ...


class BotDispatcher(Protocol):
    """Where the application hands work it does not do itself."""

    def move(
        self, game_id: str, seat: int, version: int, *, slow: bool = False, priority: int = 0
    ) -> None:
        """Ask a bot to act for ``seat`` at ``version``; ``slow`` for a bot that searches (it
        runs apart, so that it cannot hold up the quick bots of other games), queued ahead of
        searches of a higher ``priority`` (0 first)."""
        ...

    def hint(self, request: Mapping[str, Any], *, priority: int = 0) -> None:
        """Run a hint's search apart from the caller (``searches.answer_hint(app, request)``
        on the search workers), queued as ``move`` queues a slow bot's."""
        ...

    def finalize(self, game_id: str) -> None:
        """Post-game scoring for a finished game."""
        ...

    def remote(self, game_id: str, seat: int, version: int) -> None:
        """Ask a registered bot (``shared/app/remote.py``) to act for ``seat`` at ``version``
        (or, once the game is over, tell it so): on workers that wait on many bots at once."""
        ...

    def tournament(self, tournament_id: str) -> None:
        """Start playing a tournament's games."""
        ...


class NullDispatcher:
    """Drops bot and scoring work (for tools that drive every seat themselves)."""

    def move(
        self, game_id: str, seat: int, version: int, *, slow: bool = False, priority: int = 0
    ) -> None:
        """Ignore."""

    def hint(self, request: Mapping[str, Any], *, priority: int = 0) -> None:
        """Ignore (no search worker: the caller hears a 503 once the hint's time is up)."""

    def finalize(self, game_id: str) -> None:
        """Ignore."""

    def remote(self, game_id: str, seat: int, version: int) -> None:
        """Ignore."""

    def tournament(self, tournament_id: str) -> None:
        """Ignore."""


@dataclass(slots=True, kw_only=True)
class Ports:
    """Every port one process uses; built by ``shared.bootstrap.bootstrap``."""

    store: EventStore
    directory: GameDirectory
    read_models: ReadModels
    bus: CommandBus
    notifier: Notifier
    clock: Clock
    dispatcher: BotDispatcher
    tournaments: TournamentStore
    ratings: RatingBoard
    idempotency: IdempotencyStore
    searches: SearchShares
    bots: BotRegistry
    webhooks: WebhookSender
    turns: ConnectedTurns
    batch: Callable[[Callable[[Any], None] | None], AbstractContextManager[None]]
    shards: int = 1
    ping: Callable[[], bool] = lambda: True
    client: Any = None  # the backend's client, for entry points that read it (stream consumers)
    # Where finished games move from Redis (``shared.archive``; None: they stay): the store and
    # the directory read through to it (``shared.adapters.archived``).
    archive: Archive | None = None

    def unit(self, extra: Callable[[Any], None] | None = None) -> AbstractContextManager[None]:
        """Group the writes in the block; ``extra(pipeline)`` may add one of the caller's own
        (the worker's acknowledgement) to the same round trip."""
        return self.batch(extra)


@contextmanager
def no_batch(extra: Callable[[Any], None] | None = None) -> Iterator[None]:
    """A batch whose writes happen at once (in-memory adapters); ``extra`` gets no pipeline."""
    yield
    if extra is not None:
        extra(None)
