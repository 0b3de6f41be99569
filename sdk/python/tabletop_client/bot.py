"""Bring your own bot: subclass ``Bot``, then either serve it as a webhook the service calls
(``serve_webhook``) or connect it to the service from anywhere (``play_connected``: a bot
behind NAT, a notebook).

Both transports hand ``act`` exactly what the service sent: the seat's own ``view`` at that
version and its ``legal_commands``. The webhook checks every request's
``Tabletop-Signature`` (HMAC-SHA256 of the raw body keyed with the bot's key) before reading
it, so nobody but the service can make the bot move or learn what it would play.

Both answer many turns at once (``concurrency``, 16 by default): ``act`` is called from
several threads at once, for several games. A turn may arrive twice (the service sends a
turn again when it lost track of it, and again to a connected bot that reconnects): the kit
keeps the last turns' ids and calls ``act`` once per ``turn_id``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from tabletop_client.client import Client
from tabletop_client.errors import ProblemError, TransportError

log = logging.getLogger("tabletop_client")

SIGNATURE_HEADER = "Tabletop-Signature"
# The largest turn body the webhook reads: a view is kilobytes; anything far bigger is not
# the service's, and reading it whole would let anyone fill the bot's memory.
MAX_BODY = 4 * 1024 * 1024
# How many turns a bot decides at once, by default: a bot in 32 games at a time, each turn's
# act taking a few ms, waits for no other game's turn; an act of many ms (a search) that is
# CPU-bound gains nothing past the cores the GIL lets it use.
DEFAULT_CONCURRENCY = 16
# How many turn ids the kit remembers to recognise a turn sent again: far more than a bot has
# turns open at once.
RECENT_TURNS = 10_000
# How long a turn waits for a free slot (or for its first copy's answer) when its body names
# no budget_ms.
DEFAULT_WAIT_S = 10.0


class Bot:
    """A bot: ``act`` picks the command to send from the seat's view. Subclass it.

    ``act`` is called from several threads at once (``concurrency`` of ``serve_webhook`` and
    ``play_connected``), for several games at once: keep state per game (``view["id"]``) or
    guard it with a lock. It is called once per turn: a turn the service sends twice is
    recognised by its ``turn_id``."""

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        """The command to send (a JSON object, such as one of ``legal_commands``)."""
        raise NotImplementedError("a Bot subclass decides in act(view, legal_commands)")

    def game_over(self, message: Mapping[str, Any]) -> None:
        """Called with ``{"type": "game_over", "game_id", "seat", "outcome", "bot_id"}`` at
        each game's end (optional: a bot that keeps no record need not define it)."""


Bots = Any  # a Bot, or a mapping of bot ids to Bots (several registered bots behind one kit)
Keys = str | Mapping[str, str]  # a bot's key, or a mapping of bot ids to their keys


def sign(key: str, body: bytes) -> str:
    """The ``Tabletop-Signature`` of ``body``: ``sha256=<hex HMAC-SHA256 keyed with key>``
    (the key is the whole ``tbk_...`` text, as UTF-8; the message the raw body bytes)."""
    return "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def verify(key: str, body: bytes, signature: str | None) -> bool:
    """Whether ``signature`` is the service's for ``body`` (compared in constant time)."""
    if not signature:
        return False
    return hmac.compare_digest(sign(key, body).encode(), signature.strip().encode())


def _signer(keys: Keys, body: bytes, signature: str | None) -> tuple[bool, str | None]:
    """Whether one of ``keys`` signed ``body``, and the bot id of the one that did (None for
    a single key)."""
    if isinstance(keys, str):
        return verify(keys, body, signature), None
    for bot_id, key in keys.items():
        if verify(key, body, signature):
            return True, bot_id
    return False, None


def _bot_for(bot: Bots, message: Mapping[str, Any], signer: str | None = None) -> Any | None:
    """The bot a message is for: ``bot`` itself, or, for a mapping of bots, the one its
    ``bot_id`` names (a turn's always; a game-over's once the service sends it), else the one
    whose key signed it. None when the mapping holds no such bot."""
    if not isinstance(bot, Mapping):
        return bot
    bot_id = message.get("bot_id") or signer
    return bot.get(bot_id) if isinstance(bot_id, str) else None


def _answer_message(bot: Any, message: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the bot answers a turn (``{"command": ...}``) or a game-over (``{}``); None for a
    message of another type."""
    kind = message.get("type")
    if kind == "turn":
        command = bot.act(message.get("view") or {}, message.get("legal_commands") or [])
        if command is None:
            raise ValueError("act returned no command")
        return {"command": command}
    if kind == "game_over":
        hook = getattr(bot, "game_over", None)
        if callable(hook):
            hook(message)
        return {}
    return None


def _wait_s(message: Mapping[str, Any]) -> float:
    """How long a turn may wait for a slot: its budget (after it, no answer counts)."""
    budget = message.get("budget_ms")
    if isinstance(budget, int | float) and not isinstance(budget, bool) and budget > 0:
        return float(budget) / 1000
    return DEFAULT_WAIT_S


class _RecentTurns:
    """The last ``size`` turns by ``turn_id`` (thread-safe): ``claim`` answers whether a turn
    is new, and the future its first copy's outcome goes to, which a copy sent again waits
    for. ``forget`` lets a turn whose first copy came to nothing be played when sent again."""

    def __init__(self, size: int = RECENT_TURNS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._turns: OrderedDict[str, Future[Any]] = OrderedDict()  # oldest first

    def claim(self, turn_id: str) -> tuple[Future[Any], bool]:
        """The turn's future, and True when this is its first copy (the caller plays it)."""
        with self._lock:
            known = self._turns.get(turn_id)
            if known is not None:
                self._turns.move_to_end(turn_id)
                return known, False
            future: Future[Any] = Future()
            self._turns[turn_id] = future
            while len(self._turns) > self.size:
                self._turns.popitem(last=False)
            return future, True

    def forget(self, turn_id: str, future: Future[Any]) -> None:
        """Drop the turn (if ``future`` is still its own): a copy sent again is played."""
        with self._lock:
            if self._turns.get(turn_id) is future:
                del self._turns[turn_id]


class _Busy(Exception):
    """No slot came free within the turn's budget."""


class _Server(ThreadingHTTPServer):
    # The standard library's accept queue holds 5 connections: many games' turns arriving at
    # once overflowed it, and the kernel's retry a second later missed the turn's budget.
    request_queue_size = 128


def make_webhook_server(
    bot: Bots,
    key: Keys,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> ThreadingHTTPServer:
    """The webhook server of ``bot``, bound but not serving (``serve_forever`` runs it; port 0
    takes a free one: ``server.server_port``). Each connection has a thread; at most
    ``concurrency`` messages are handed to the bot at once (a turn that finds no slot within
    its ``budget_ms`` is a 503). ``bot`` and ``key`` may be mappings of bot ids to several
    registered bots and their keys (one URL for them all): a message goes to the bot its
    ``bot_id`` names, else to the one whose key signed it."""
    if concurrency < 1:
        raise ValueError("concurrency is at least 1")
    slots = threading.BoundedSemaphore(concurrency)
    recent = _RecentTurns()

    def decide(target: Any, message: Mapping[str, Any]) -> dict[str, Any] | None:
        if not slots.acquire(timeout=_wait_s(message)):
            raise _Busy
        try:
            return _answer_message(target, message)
        finally:
            slots.release()

    def answer_turn(target: Any, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """The turn's answer: decided by the bot for its first copy, the first copy's for
        one sent again (waiting for it while it is decided)."""
        turn_id = message.get("turn_id")
        if not isinstance(turn_id, str):
            return decide(target, message)
        future, first = recent.claim(turn_id)
        if not first:
            try:
                answer: dict[str, Any] | None = future.result(timeout=_wait_s(message))
            except TimeoutError:
                raise _Busy from None
            return answer
        try:
            answer = decide(target, message)
        except BaseException as exc:
            recent.forget(turn_id, future)  # sent again, it is played again
            future.set_exception(exc)
            raise
        future.set_result(answer)
        return answer

    class Handler(BaseHTTPRequestHandler):
        # Keep-alive: the service sends a game's turns one after another to the same URL.
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: with Nagle's algorithm on, the second waits
        # for the client's delayed ACK (about 40 ms a keep-alive answer).
        disable_nagle_algorithm = True

        def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit():
                self._reply(411, {"detail": "a Content-Length is needed"}, close=True)
                return
            if int(length) > MAX_BODY:
                self._reply(413, {"detail": f"a body is at most {MAX_BODY} bytes"}, close=True)
                return
            body = self.rfile.read(int(length))
            # The signature first: nothing unsigned is parsed, let alone played.
            signed, signer = _signer(key, body, self.headers.get(SIGNATURE_HEADER))
            if not signed:
                self._reply(401, {"detail": f"bad or missing {SIGNATURE_HEADER}"})
                return
            try:
                message = json.loads(body)
            except ValueError:
                self._reply(400, {"detail": "the body is not JSON"})
                return
            if not isinstance(message, dict):
                self._reply(400, {"detail": "the body is not a JSON object"})
                return
            named = message.get("bot_id")
            if signer is not None and named is not None and named != signer:
                self._reply(401, {"detail": f"signed with another bot's key than {named}'s"})
                return
            target = _bot_for(bot, message, signer)
            if target is None:
                self._reply(404, {"detail": f"no bot {named or signer!r} is served here"})
                return
            try:
                if message.get("type") == "turn":
                    answer = answer_turn(target, message)
                else:
                    answer = decide(target, message)
            except _Busy:
                self._reply(503, {"detail": f"busy: {concurrency} turns are being decided"})
                return
            except Exception as exc:  # the bot's own failure: the service falls back
                log.exception("the bot failed on a %s message", message.get("type"))
                self._reply(500, {"detail": f"the bot failed: {type(exc).__name__}"})
                return
            if answer is None:
                self._reply(400, {"detail": f"unknown message type {message.get('type')!r}"})
                return
            self._reply(200, answer)

        def _reply(self, status: int, doc: Mapping[str, Any], *, close: bool = False) -> None:
            raw = json.dumps(doc, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            if close:  # the unread body would be taken for the next request
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("webhook: " + format, *args)

    server = _Server((host, port), Handler)
    server.daemon_threads = True
    return server


def serve_webhook(
    bot: Bots,
    key: Keys,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> None:
    """Serve ``bot`` at ``http://host:port/`` (any path) until interrupted: each signed
    ``turn`` is answered 200 ``{"command": bot.act(view, legal_commands)}``, each
    ``game_over`` 200 after ``bot.game_over(message)``; a bad signature 401. Up to
    ``concurrency`` turns are decided at once; a turn sent again gets its first answer."""
    server = make_webhook_server(bot, key, host, port, concurrency=concurrency)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def play_connected(
    bot: Bots,
    api: str,
    key: str,
    max_games: int | None = None,
    *,
    retry_delay: float = 0.5,
    max_retry_delay: float = 10.0,
    transport: httpx.BaseTransport | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> int:
    """Play as a connected bot: read ``GET /v1/bots/me/turns`` with the bot's ``key`` and
    answer each turn at ``POST /v1/bots/me/turns/{turn_id}``, up to ``concurrency`` turns at
    once (on as many threads; 1: one at a time, on the reading thread). A dropped stream is
    opened again (waiting ``retry_delay``, doubling to ``max_retry_delay`` while it keeps
    failing); the service then sends the turns still pending, and a turn being answered or
    answered already is not played twice. Returns after ``max_games`` game-over messages
    (never, without it) with the number of games seen ending, once the turns being answered
    are. A refused key (401, 403) raises ``ProblemError``."""
    if concurrency < 1:
        raise ValueError("concurrency is at least 1")
    ended: set[tuple[Any, Any, Any]] = set()
    recent = _RecentTurns()
    refused: list[ProblemError] = []  # a refused key met answering a turn on the pool

    def play(client: Client, target: Any, doc: Mapping[str, Any], claim: Future[Any]) -> None:
        try:
            _play_turn(target, client, key, doc, recent, claim)
        except ProblemError as exc:  # a refused key: the reading thread raises it
            refused.append(exc)
        except BaseException:
            log.exception("turn %s failed", doc.get("turn_id"))

    def read(client: Client, pool: ThreadPoolExecutor | None) -> int:
        delay = retry_delay
        while True:
            try:
                for message in client.bot_turns(key):
                    if refused:
                        raise refused[0]
                    delay = retry_delay  # it answered: the next drop starts waiting short
                    doc = message.data
                    if not isinstance(doc, dict):
                        continue
                    target = _bot_for(bot, doc)
                    if target is None:
                        kind, named = doc.get("type"), doc.get("bot_id")
                        log.warning("a %s for bot %r, which is not served here", kind, named)
                    elif doc.get("type") == "game_over":
                        _game_over(target, doc)
                        ended.add((doc.get("bot_id"), doc.get("game_id"), doc.get("seat")))
                        if max_games is not None and len(ended) >= max_games:
                            return len(ended)
                    elif doc.get("type") == "turn":
                        claim, first = recent.claim(str(doc.get("turn_id")))
                        if not first:
                            continue  # sent again (a reconnect): being or been answered
                        if pool is None:
                            _play_turn(target, client, key, doc, recent, claim)
                        else:
                            pool.submit(play, client, target, doc, claim)
            except ProblemError as exc:
                if exc.status in (401, 403):
                    raise  # another connection would be refused the same way
                log.warning("the turn stream was refused (%s); connecting again", exc)
            except TransportError as exc:
                log.warning("the turn stream dropped (%s); connecting again", exc)
            if refused:
                raise refused[0]
            time.sleep(delay)
            delay = min(delay * 2, max_retry_delay)

    with Client(api, transport=transport) as client:
        if concurrency == 1:
            return read(client, None)
        pool = ThreadPoolExecutor(concurrency, thread_name_prefix="tabletop-turn")
        try:
            games = read(client, pool)
        finally:
            pool.shutdown(wait=True)  # the turns being answered are, before the client closes
        if refused:
            raise refused[0]
        return games


def _game_over(bot: Any, doc: Mapping[str, Any]) -> None:
    hook = getattr(bot, "game_over", None)
    if callable(hook):
        try:
            hook(doc)
        except Exception:
            log.exception("the bot's game_over failed")


def _play_turn(
    bot: Any,
    client: Client,
    key: str,
    doc: Mapping[str, Any],
    recent: _RecentTurns,
    claim: Future[Any],
) -> None:
    """Decide the turn and post the answer. It stays known (a copy sent again is not played)
    unless the bot failed or the answer was not delivered: a copy sent again is then played
    again. A refused key (401, 403) raises."""
    turn_id = str(doc.get("turn_id"))
    played = False
    try:
        try:
            command = bot.act(doc.get("view") or {}, doc.get("legal_commands") or [])
        except Exception:
            # The service plays the seat's on_failure policy when no answer comes in time.
            log.exception("the bot failed on turn %s", turn_id)
            return
        try:
            client.answer_turn(key, turn_id, command)
        except ProblemError as exc:
            if exc.status in (401, 403):
                raise
            # 409 turn/expired (too late, or answered already) and 422 (illegal: the service
            # records the failure and plays the fallback) leave nothing to do.
            log.warning("turn %s: %s", turn_id, exc)
        except TransportError as exc:
            log.warning("turn %s: the answer was not delivered (%s)", turn_id, exc)
            return
        played = True
    finally:
        if not played:
            recent.forget(turn_id, claim)
        claim.set_result(played)
