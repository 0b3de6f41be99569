"""Bring your own bot: subclass ``Bot``, then either serve it as a webhook the service calls
(``serve_webhook``) or connect it to the service from anywhere (``play_connected``: a bot
behind NAT, a notebook).

Both transports hand ``act`` exactly what the service sent: the seat's own ``view`` at that
version and its ``legal_commands``. The webhook checks every request's
``Tabletop-Signature`` (HMAC-SHA256 of the raw body keyed with the bot's key) before reading
it, so nobody but the service can make the bot move or learn what it would play.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
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


class Bot:
    """A bot: ``act`` picks the command to send from the seat's view. Subclass it.

    Under ``serve_webhook`` ``act`` runs on the server's threads, several games at once:
    keep state per game (``view["id"]``) or guard it with a lock."""

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        """The command to send (a JSON object, such as one of ``legal_commands``)."""
        raise NotImplementedError("a Bot subclass decides in act(view, legal_commands)")

    def game_over(self, message: Mapping[str, Any]) -> None:
        """Called with ``{"type": "game_over", "game_id", "seat", "outcome"}`` at each game's
        end (optional: a bot that keeps no record need not define it)."""


def sign(key: str, body: bytes) -> str:
    """The ``Tabletop-Signature`` of ``body``: ``sha256=<hex HMAC-SHA256 keyed with key>``."""
    return "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def verify(key: str, body: bytes, signature: str | None) -> bool:
    """Whether ``signature`` is the service's for ``body`` (compared in constant time)."""
    if not signature:
        return False
    return hmac.compare_digest(sign(key, body).encode(), signature.strip().encode())


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


class _Server(ThreadingHTTPServer):
    # The standard library's accept queue holds 5 connections: many games' turns arriving at
    # once overflowed it, and the kernel's retry a second later missed the turn's budget.
    request_queue_size = 128


def make_webhook_server(
    bot: Any, key: str, host: str = "127.0.0.1", port: int = 8080
) -> ThreadingHTTPServer:
    """The webhook server of ``bot``, bound but not serving (``serve_forever`` runs it; port 0
    takes a free one: ``server.server_port``)."""

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
            if not verify(key, body, self.headers.get(SIGNATURE_HEADER)):
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
            try:
                answer = _answer_message(bot, message)
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


def serve_webhook(bot: Any, key: str, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Serve ``bot`` at ``http://host:port/`` (any path) until interrupted: each signed
    ``turn`` is answered 200 ``{"command": bot.act(view, legal_commands)}``, each
    ``game_over`` 200 after ``bot.game_over(message)``; a bad signature 401."""
    server = make_webhook_server(bot, key, host, port)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def play_connected(
    bot: Any,
    api: str,
    key: str,
    max_games: int | None = None,
    *,
    retry_delay: float = 0.5,
    max_retry_delay: float = 10.0,
    transport: httpx.BaseTransport | None = None,
) -> int:
    """Play as a connected bot: read ``GET /v1/bots/me/turns`` with the bot's ``key`` and
    answer each turn at ``POST /v1/bots/me/turns/{turn_id}``. A dropped stream is opened
    again (waiting ``retry_delay``, doubling to ``max_retry_delay`` while it keeps failing);
    the service then sends the turns still pending, and a turn already answered is not
    played twice. Returns after ``max_games`` game-over messages (never, without it) with the
    number of games seen ending. A refused key (401, 403) raises ``ProblemError``."""
    ended: set[tuple[Any, Any]] = set()
    answered: OrderedDict[str, None] = OrderedDict()  # the last turns answered, oldest first
    delay = retry_delay
    with Client(api, transport=transport) as client:
        while True:
            try:
                for message in client.bot_turns(key):
                    delay = retry_delay  # it answered: the next drop starts waiting short
                    doc = message.data
                    if not isinstance(doc, dict):
                        continue
                    if doc.get("type") == "game_over":
                        _game_over(bot, doc)
                        ended.add((doc.get("game_id"), doc.get("seat")))
                        if max_games is not None and len(ended) >= max_games:
                            return len(ended)
                    elif doc.get("type") == "turn":
                        _play_turn(bot, client, key, doc, answered)
            except ProblemError as exc:
                if exc.status in (401, 403):
                    raise  # another connection would be refused the same way
                log.warning("the turn stream was refused (%s); connecting again", exc)
            except TransportError as exc:
                log.warning("the turn stream dropped (%s); connecting again", exc)
            time.sleep(delay)
            delay = min(delay * 2, max_retry_delay)


def _game_over(bot: Any, doc: Mapping[str, Any]) -> None:
    hook = getattr(bot, "game_over", None)
    if callable(hook):
        try:
            hook(doc)
        except Exception:
            log.exception("the bot's game_over failed")


def _play_turn(
    bot: Any, client: Client, key: str, doc: Mapping[str, Any], answered: OrderedDict[str, None]
) -> None:
    turn_id = str(doc.get("turn_id"))
    if turn_id in answered:
        return  # sent again on a reconnect, but this bot answered it already
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
        return  # not marked: if the turn comes again, it is played again
    answered[turn_id] = None
    if len(answered) > 10_000:
        answered.popitem(last=False)
