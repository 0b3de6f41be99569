"""Registered bots: bots that come from outside (``POST /v1/bots``) and play over a webhook or
a connection of their own (the turn's body, key and fallback: ``shared/app/bot_turns.py``).

**Keys.** A bot's key is ``tbk_`` + hex ``HMAC-SHA256(server secret, "bot-key:" + bot id)``.
The service keeps only its SHA-256 (to authenticate ``DELETE /v1/bots/{id}``), yet signs each
turn with the key itself: it derives the key again from the server secret whenever it signs.
So a copy of the bot records alone gives no key away, and no key is stored in any form that
can be read back; whoever holds the server secret (``TABLETOP_BOT_SECRET``; without it, one
the service makes once and keeps in the file ``<data dir>/bot-secret``, mode 0600, never in
Redis: ``RedisBotRegistry``) can derive every key, which signing needs anyway. So a copy of
Redis (an RDB or AOF file, a replica, a backup) derives no key; a new secret changes every
key (``tabletop bots rotate-secret`` issues them again).
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from shared.app import bots, steps
from shared.app.bot_moves import BOT_SUBMIT_TTL
from shared.app.bot_turns import (
    BOT_TURN,
    CONNECTED,
    REGISTERED,
    SIGNATURE_HEADER,
    WEBHOOK,
    bot_key,
    fallback,
    key_hash,
    listed_command,
    signature,
    turn_body,
    turn_id,
)
from shared.app.commands import secret_seed, submit_command
from shared.app.context import App
from shared.app.errors import AppError, ErrorCode
from shared.app.messages import BOT_COMMAND_PREFIX, CommandMessage
from shared.app.ports import SERVICE_FAILURE, RegisteredBot
from shared.events import canonical_json
from shared.games import errors as rules
from shared.games.errors import GameError
from shared.match import fairness

log = logging.getLogger(__name__)

# Deepest nesting of lists and objects a bot's command may have (a command is a flat object of
# strings, numbers and short lists: any real one is far shallower).
MAX_COMMAND_DEPTH = 8
# Seconds a game-over notice waits for the bot (its answer is ignored).
GAME_OVER_TIMEOUT_S = 2.0
# Seconds a connected bot's turn is kept past its deadline: an answer that comes later is told
# 409 turn/expired (after that, 404 turn/not_found).
TURN_KEEP_S = 300
# A connected bot's turn found issued already is settled by the task that meets it only this
# long past its deadline: before, the task that issued it is still waiting on it (the stall
# sweep's wake after a crash comes BOT_STALL_S later, well past it).
TAKEOVER_GRACE_MS = 5000


def answer_command(
    app: App, game_id: str, seat: int, view: Mapping[str, Any], status: int | None, raw: bytes
) -> dict[str, Any] | None:
    """The bot's command from its answer, as the engine spells it, or None when the answer
    is not a 200 ``{"command": {...}}`` holding a legal command for the seat now. An answer is
    untrusted input: whatever it holds ends here in a command or None, never an exception
    (which would end the turn unrecorded, to be sent again and again)."""
    if status != 200:
        return None
    command = untrusted_command(raw)
    if command is None:
        return None
    listed = listed_command(view, seat, command)
    if listed is not None:
        return listed
    try:
        return check_command(app, game_id, seat, view, command)
    except GameError:
        return None


def untrusted_command(raw: bytes) -> dict[str, Any] | None:
    """The ``command`` object of a bot's answer, when the answer is a JSON object holding one
    that the game's parser could read: None for anything else. Bounded: orjson refuses
    nesting past 1,024 levels, integers past 64 bits, NaN and invalid UTF-8 (a ValueError,
    where the standard decoder would raise RecursionError or build a huge integer), and a
    command nested deeper than ``MAX_COMMAND_DEPTH`` is refused before anything walks it."""
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    command = doc.get("command") if isinstance(doc, dict) else None
    if not isinstance(command, dict) or _deeper_than(command, MAX_COMMAND_DEPTH):
        return None
    return command


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects deeper than ``limit`` (no recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth >= limit:
                return True
            stack.extend((x, depth + 1) for x in item)
    return False


def check_command(
    app: App, game_id: str, seat: int, view: Mapping[str, Any], command: Any
) -> dict[str, Any]:
    """``command`` as the engine spells it, if the seat may play it now (a dry run of the
    worker's decision: refused here, it would be refused there). Raises GameError: the
    rules' refusal, ``command/invalid`` for what is no command, or ``game/stale_version``
    when the game moved on from ``view`` (its command is for a state that is gone)."""
    if not isinstance(command, dict):
        raise GameError(rules.INVALID_COMMAND, "the answer holds no command object")
    record = app.load(game_id)
    engine = record.engine
    try:
        parsed = engine.parse_command(command)
    except GameError:
        raise
    except Exception as exc:  # an untrusted command: whatever breaks its parsing is its fault
        raise GameError(rules.INVALID_COMMAND, f"not a command: {type(exc).__name__}") from exc
    if record.version != view["version"] or record.state is None:
        raise GameError(ErrorCode.GAME_STALE_VERSION, "the game moved on from this turn")
    seed = fairness.play_seed(record.match, secret_seed(app, game_id))
    try:
        steps.decide(engine, record.state, seat, parsed, seed, record.version)
    except (ValueError, TypeError, KeyError) as exc:
        raise GameError(rules.INVALID_COMMAND, f"not a command: {exc}") from exc
    out: dict[str, Any] = engine.command_to_json(parsed)
    return out


class RemoteMoved(enum.Enum):
    """What came of a registered bot's turn (its value is the words its log line gives)."""

    SUBMITTED = "submitted"  # its command is on the stream (now, or by a turn before)
    PENDING = "pending"  # a connected bot's turn issued before: the task that issued it waits
    STALE = "stale"  # the seat is not to act at that version any more
    MISSING = "no such game"
    NOT_REGISTERED = "not a registered bot"
    GAME_OVER = "game over"  # its bot was told so, or not (``told``)


class Told(enum.Enum):
    """What came of telling a registered bot its game is over (``notify_game_over``)."""

    TOLD = "told"
    TOLD_ALREADY = "told already"  # by a turn before
    NOTHING_TO_TELL = "nothing to tell"  # no such bot, or none that can be told


@dataclass(frozen=True, slots=True)
class RemoteMove:
    """A registered bot's turn, answered: ``moved``, the command id when it submitted one,
    and whether its bot was told when the game was over."""

    moved: RemoteMoved
    command_id: str | None = None
    told: Told | None = None

    @property
    def label(self) -> str:
        """In a word, as the log gives it: the command id, else what the bot was told, else
        ``moved``'s value."""
        return self.command_id or (self.told or self.moved).value


def play_remote_move(app: App, game_id: str, seat: int, version: int) -> RemoteMove:
    """A registered bot's turn: send it the seat's view, take its command or its failure's
    fallback, submit it like any bot's (``bot-<seat>-<version>``) with ``bot_turn``. Once the
    game is over, a webhook bot is told so instead (``game_over``, best effort)."""
    # The view, the sent mark and the bot in one round trip: the bot's id is the one this
    # process met at this seat before (checked against the view below; a miss reads again).
    guess = _SEAT_BOTS.get(game_id, seat)
    asked = f"{BOT_COMMAND_PREFIX}{seat}-{version}"
    reads = app.ports.bots.turn_reads(game_id, seat, asked, guess)
    if reads.view is None:
        return RemoteMove(RemoteMoved.MISSING)
    view: dict[str, Any] = json.loads(reads.view)
    spec = bots.bot_spec(view, seat)
    if spec.get("bot") != REGISTERED:
        return RemoteMove(RemoteMoved.NOT_REGISTERED)
    bot_id = str(spec["bot_id"])
    bot = reads.bot if guess == bot_id else app.ports.bots.get(bot_id)
    if view.get("outcome"):
        _SEAT_BOTS.forget(game_id, seat)
        told = notify_game_over(app, game_id, seat, view, spec, bot)
        return RemoteMove(RemoteMoved.GAME_OVER, told=told)
    _SEAT_BOTS.put(game_id, seat, bot_id)
    if seat not in view["to_act"]:
        return RemoteMove(RemoteMoved.STALE)
    simultaneous = len(view["to_act"]) > 1
    if view["version"] != version and not simultaneous:
        return RemoteMove(RemoteMoved.STALE)
    version = int(view["version"])
    cid = f"{BOT_COMMAND_PREFIX}{seat}-{version}"
    if reads.sent if cid == asked else app.ports.bus.was_sent(game_id, cid):
        return RemoteMove(RemoteMoved.SUBMITTED, cid)
    turn = turn_id(game_id, seat, version)
    seed = secret_seed(app, game_id)
    body = turn_body(turn=turn, spec=spec, game_id=game_id, seat=seat, view=view, seed=seed)
    command: dict[str, Any] | None = None
    failure: str | None
    if bot is not None and not bot.retired and bot.transport == CONNECTED:
        settled = connected_turn(app, bot, turn, body)
        if settled is None:
            return RemoteMove(RemoteMoved.PENDING)  # the task that issued this turn waits on it
        command, failure, latency = settled
    elif bot is None or bot.retired or bot.transport != WEBHOOK or bot.url is None:
        failure, latency = "unreachable", 0  # nothing to send to
    else:
        key = bot_key(app.ports.bots.secret(), bot.bot_id)
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: signature(key, body)}
        budget_s = int(spec["budget_ms"]) / 1000
        answer = app.ports.webhooks.post(bot.url, body, headers, budget_s)
        if answer.failure == SERVICE_FAILURE:
            # This process spent the budget, not the bot: once more with a whole budget (the
            # same turn: a bot that got it already answers it again, by its turn_id).
            log.warning("turn %s: the service spent its budget; sent again", turn)
            answer = app.ports.webhooks.post(bot.url, body, headers, budget_s)
        latency = answer.latency_ms
        failure = answer.failure
        if failure is None:
            command = answer_command(app, game_id, seat, view, answer.status, answer.body)
            if command is None:
                failure = "illegal" if answer.status == 200 else "error"
    if command is None:
        command = fallback(spec, view, fairness.play_seed_of_view(view, seed), seat, version)
    command[BOT_TURN] = {
        "turn_id": turn,
        "sent_sha256": hashlib.sha256(body).hexdigest(),
        "latency_ms": int(latency),
        "failure": failure,
    }
    # Counted into the bot's stats when the game ends (``finalize.count_bot_turns``).
    # No second sent check (``bot_moves.play_bot_move`` makes one): it was this turn's first
    # read, and a wake repeated meanwhile that sends it too is applied once by the store.
    message = CommandMessage(
        command_id=cid,
        game_id=game_id,
        seat=seat,
        body=command,
        expected_version=None if simultaneous else version,
    )
    submit_command(app, message, str(view["game"]))
    app.ports.bus.send_once(game_id, cid, BOT_SUBMIT_TTL)
    return RemoteMove(RemoteMoved.SUBMITTED, cid)


class _SeatBots:
    """The registered bot's id at each (game, seat) this process served: a seat's bot is
    fixed at the game's creation, so a turn can read its bot with its view. Only a guess
    (checked against the view), bounded, least recently used out first."""

    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._ids: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str, seat: int) -> str | None:
        with self._lock:
            return self._ids.get((game_id, seat))

    def put(self, game_id: str, seat: int, bot_id: str) -> None:
        with self._lock:
            self._ids[(game_id, seat)] = bot_id
            self._ids.move_to_end((game_id, seat))
            while len(self._ids) > self._size:
                self._ids.popitem(last=False)

    def forget(self, game_id: str, seat: int) -> None:
        with self._lock:
            self._ids.pop((game_id, seat), None)


_SEAT_BOTS = _SeatBots()


def connected_turn(
    app: App, bot: RegisteredBot, turn: str, body: bytes
) -> tuple[dict[str, Any] | None, str | None, int] | None:
    """A connected bot's turn: issue it (stored for the bot, published on its stream), wait
    for its answer until the deadline, close it. (command, failure, latency ms): the command
    the gateway accepted (checked legal there), or None with the failure (``illegal``: the
    gateway refused the answer; ``timeout``: none came in time). None when the turn was
    issued already and its waiter may still be on it (nothing to do here)."""
    turns = app.ports.turns
    started = time.monotonic()
    left = turns.issue(bot.bot_id, turn, body, bot.budget_ms, TURN_KEEP_S)
    if left is None:
        found = turns.get(bot.bot_id, turn)
        if found is not None and found.left_ms > -TAKEOVER_GRACE_MS:
            return None
        raw = turns.close(bot.bot_id, turn)  # its waiter is gone (a crash): settle it here
    else:
        raw = turns.wait(bot.bot_id, turn, left / 1000)
        if raw is None:
            # Closed by the backend's clock: an answer accepted at the last moment is taken.
            raw = turns.close(bot.bot_id, turn)
    latency = round((time.monotonic() - started) * 1000)
    if raw is None:
        return None, "timeout", latency
    answer = json.loads(raw)
    command = answer.get("command")
    if isinstance(command, dict):
        return dict(command), None, latency
    return None, str(answer.get("failure") or "error"), latency


def bot_of_key(app: App, key: str | None) -> RegisteredBot:
    """The connected bot whose key this is (``GET /v1/bots/me/turns``). AppError 401
    without a key or with one of no bot (or of a retired bot), 403 for a webhook bot's key
    (its turns go to its URL)."""
    if key is None:
        raise AppError(ErrorCode.AUTH_REQUIRED, "a connected bot's key is needed (Bearer)")
    found = app.ports.bots.by_key(key_hash(key))
    bot = app.ports.bots.get(found) if found is not None else None
    if bot is None or bot.retired:
        raise AppError(ErrorCode.AUTH_INVALID_TOKEN, "this is not the key of a registered bot")
    if bot.transport != CONNECTED:
        raise AppError(ErrorCode.AUTH_FORBIDDEN, "a webhook bot is sent its turns at its url")
    return bot


def answer_turn(app: App, key: str | None, turn: str, command: Any) -> dict[str, Any]:
    """A connected bot's answer (``POST /v1/bots/me/turns/{turn_id}``): ``{"turn_id",
    "command"}`` (the command as the engine spells it), handed to the turn's waiter. AppError
    401/403 (``bot_of_key``), 404 ``turn/not_found`` for a turn that is not this bot's
    (another bot's is not found either), 409 ``turn/expired`` past its deadline or once
    answered, 422 with the rules' code for an illegal command, which is recorded as the
    turn's failure ``illegal`` (the seat plays its ``on_failure`` policy at once)."""
    bot = bot_of_key(app, key)
    turns = app.ports.turns
    found = turns.get(bot.bot_id, turn)
    if found is None:
        raise AppError(ErrorCode.TURN_NOT_FOUND, f"this bot has no turn {turn!r}")
    if not found.open:
        raise AppError(ErrorCode.TURN_EXPIRED, "this turn is past its deadline or answered")
    sent = json.loads(found.body)
    refused: GameError | None = None
    try:
        accepted = check_command(app, sent["game_id"], sent["seat"], sent["view"], command)
    except GameError as exc:
        if exc.code == ErrorCode.GAME_STALE_VERSION:
            raise AppError(ErrorCode.TURN_EXPIRED, str(exc)) from exc
        refused = exc
    payload = {"failure": "illegal"} if refused is not None else {"command": accepted}
    outcome = turns.answer(bot.bot_id, turn, canonical_json(payload).encode())
    if outcome == "unknown":
        raise AppError(ErrorCode.TURN_NOT_FOUND, f"this bot has no turn {turn!r}")
    if outcome != "ok":
        raise AppError(ErrorCode.TURN_EXPIRED, "this turn is past its deadline or answered")
    if refused is not None:
        try:
            code = ErrorCode(refused.code)
        except ValueError:
            code = ErrorCode.COMMAND_INVALID
        raise AppError(
            code,
            f"{refused}; recorded as this turn's failure (illegal), the seat plays "
            "its on_failure policy",
            status=422,
            errors={"command": [str(refused)]},
        )
    return {"turn_id": turn, "command": accepted}


def notify_game_over(
    app: App,
    game_id: str,
    seat: int,
    view: Mapping[str, Any],
    spec: Mapping[str, Any],
    bot: RegisteredBot | None = None,
) -> Told:
    """Tell a webhook bot its game is over (once; its answer is ignored), or a connected
    bot, on its stream (best effort: a bot not connected then does not hear of it). ``bot``:
    the seat's bot when read already."""
    if bot is None:
        bot = app.ports.bots.get(str(spec["bot_id"]))
    webhook = bot is not None and bot.transport == WEBHOOK and bot.url is not None
    connected = bot is not None and bot.transport == CONNECTED
    if bot is None or not (webhook or connected):
        return Told.NOTHING_TO_TELL
    if not app.ports.bus.send_once(game_id, f"over-{seat}", 24 * 3600):
        return Told.TOLD_ALREADY
    doc = {
        "type": "game_over",
        "game_id": game_id,
        "seat": seat,
        "outcome": view["outcome"],
        "bot_id": bot.bot_id,  # a server hosting several bots routes it by this
    }
    body = canonical_json(doc).encode()
    if connected:
        app.ports.turns.publish(bot.bot_id, body)
        return Told.TOLD
    assert bot.url is not None
    key = bot_key(app.ports.bots.secret(), bot.bot_id)
    headers = {"Content-Type": "application/json", SIGNATURE_HEADER: signature(key, body)}
    app.ports.webhooks.post(bot.url, body, headers, GAME_OVER_TIMEOUT_S)
    return Told.TOLD


# ---- the audit ----------------------------------------------------------------------------------
