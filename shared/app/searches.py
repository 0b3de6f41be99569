"""Search time is shared: the moves of searching bots and the hints of searching bots run on
the search workers, queued fairly between the clients asking, and a game created without an
organizer key asks for a bounded share.

**A fair queue.** Every search queued (a searching bot's move, a hint) is a *ticket* of its
owner: the client that created the game, or the client that asks for the hint (its address or
key, hashed: ``client_owner``). ``SearchShares`` counts an owner's tickets until their tasks end
(or expire, should a worker die). A search is queued with its owner's count at that moment as
its priority (Celery priorities on the Redis broker, 0 first, ``MAX_PRIORITY`` last): every
client's first search goes ahead of any client's second, and so on. A client that floods the
workers with long searches then queues behind everyone else, and holds up another client's bot
by the searches already running at most. (A game's bot moves are sequential; seats that act at
once, in a simultaneous phase, are several tickets.)

**Hints.** A hint from a searching bot (``ismcts``) is queued like a bot move and answered by a
search worker (``answer_hint``) through a reply the gateway waits for with a deadline: a Redis
BLPOP, which a gevent worker suspends like any socket read, so the gateway goes on answering
while the search runs elsewhere. The quick bots' hints (``random``, ``heuristic``: a
millisecond or so) are answered in the request. A seat has one hint search at a time (a
second is a 429 ``request/rate_limited`` with ``Retry-After``); no answer within the hint's
budget plus ``HINT_MARGIN_S`` is a 503 ``service/unavailable``, and a search taken up after
its deadline is dropped (nobody waits for it).

**Caps.** ``check_caps``: a game created without an organizer key may give a search seat at most
``SearchCaps.budget_ms`` or ``iterations``, and have at most ``SearchCaps.seats`` of them.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import math
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from shared.app import bots, queries
from shared.app.context import App
from shared.app.errors import AppError, ErrorCode
from shared.config import SearchCaps

__all__ = [
    "SearchCaps",
    "RetryLater",
    "check_caps",
    "claim_search",
    "client_owner",
    "dispatch_move",
    "moved",
    "release_search",
]

log = logging.getLogger(__name__)

# A hint's answer may take its budget, plus this for its turn in the queue and the view's round
# trips; past it the caller hears a 503 rather than waiting on.
HINT_MARGIN_S = 8.0
# The budget a hint of ``iterations`` (at most 1000) is given: 1000 iterations took 0.7 s
# median, 2.3 s at most for a 12-seat game on a busy 2-core machine.
HINT_ITERATIONS_S = 3.0
# A seat's hint slot outlives its wait by the search's own time, so that a search taken up just
# before its deadline still ends before another one of the seat's may start.
HINT_GRACE_S = 2.0
# A ticket whose task died with its worker stops counting after this (the stall sweep queues the
# move again, as a new ticket).
TICKET_TTL_S = 300.0
# The Celery priorities the search queue uses (the broker's ``priority_steps``: 0..9).
MAX_PRIORITY = 9


class RetryLater(AppError):
    """A request refused for now: the caller may try again in ``retry_after`` seconds."""

    def __init__(self, code: ErrorCode, detail: str, retry_after: float) -> None:
        super().__init__(code, detail)
        self.retry_after = max(1, math.ceil(retry_after))


def client_owner(*, address: str | None, key: str | None = None) -> str:
    """The owner a client's searches are counted under: its key if it sent one (an organizer's),
    else its address; hashed, since it is stored."""
    if key:
        return "k:" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return "a:" + hashlib.sha256((address or "unknown").encode()).hexdigest()[:16]


# ---- bot moves ----------------------------------------------------------------------------------


def dispatch_move(app: App, game_id: str, seat: int, version: int, *, slow: bool) -> None:
    """Ask the bot at ``seat`` to act: a quick bot at once, a searching one as a ticket of its
    game's owner, queued behind the searches of owners holding fewer."""
    dispatcher = app.ports.dispatcher
    if not slow:
        dispatcher.move(game_id, seat, version, slow=False)
        return
    rank = app.ports.searches.enter(
        _game_owner(app, game_id), _move_ticket(game_id, seat, version), TICKET_TTL_S
    )
    dispatcher.move(game_id, seat, version, slow=True, priority=min(rank, MAX_PRIORITY))


def moved(app: App, game_id: str, seat: int, version: int) -> None:
    """A searching bot's task for ``(seat, version)`` ended (moved, found nothing to do, or
    failed): its ticket stops counting."""
    app.ports.searches.leave(_game_owner(app, game_id), _move_ticket(game_id, seat, version))


# A seat's move is searched by one wake at a time. In a simultaneous phase (prices set at once) a
# searching bot asked at the phase's start is asked again once the others are done
# (``projecting.hand_off`` wakes a seat left alone to act); the two wakes read views of
# different versions (two command ids) and searched the same decision at once, on both search
# workers, each on a share of the CPU, the later command refused (issue 38). The slot outlives
# its search by this much past the budget (the set-up, a busy machine); a wake whose worker
# died holds it that long.
SEARCH_SLOT_MARGIN_S = 10.0


def claim_search(
    app: App, game_id: str, seat: int, command_id: str, spec: Mapping[str, Any]
) -> bool:
    """Take the seat's search slot for the wake that would send ``command_id`` (True), or
    find another wake of the seat searching (False: its command comes from that one)."""
    ttl = _budget_s(spec) + SEARCH_SLOT_MARGIN_S
    return not app.ports.searches.hold(_search_slot(game_id, seat), command_id, ttl)


def release_search(app: App, game_id: str, seat: int, command_id: str) -> None:
    """The wake of ``command_id`` is done searching: the seat's slot is free."""
    app.ports.searches.release(_search_slot(game_id, seat), command_id)


def _search_slot(game_id: str, seat: int) -> str:
    return f"move:{game_id}:{seat}"


def _game_owner(app: App, game_id: str) -> str:
    entry = app.entry(game_id)
    # A game from before owners were kept counts alone.
    return entry.owner if entry is not None and entry.owner else f"g:{game_id}"


def _move_ticket(game_id: str, seat: int, version: int) -> str:
    # The same wake (a redelivery, the stall sweep) is the same ticket: counted once.
    return f"move:{game_id}:{seat}:{version}"


# ---- hints --------------------------------------------------------------------------------------


def suggest(
    app: App, game_id: str, seat: int, spec: Mapping[str, Any], *, owner: str
) -> dict[str, Any]:
    """``queries.suggestion`` for the caller's seat: a searching bot's on the search workers
    (the caller, ``owner``, waits for the answer), a quick bot's here. Raises ``AppError`` as
    ``queries.suggestion`` does, and ``RetryLater`` when the seat already has a hint search in
    flight (429) or no search worker answered in time (503)."""
    if not bots.get(str(spec["bot"])).slow:
        return queries.suggestion(app, game_id, seat, spec)
    queries.hint_view(app, game_id, seat)  # what is refused anyway is refused before queueing
    p = app.ports
    budget = _budget_s(spec)
    wait = budget + HINT_MARGIN_S
    hint_id = secrets.token_hex(8)
    slot, ticket = _hint_slot(game_id, seat), _hint_ticket(hint_id)
    held = p.searches.hold(slot, hint_id, wait + budget + HINT_GRACE_S)
    if held:
        raise RetryLater(
            ErrorCode.REQUEST_RATE_LIMITED,
            f"this seat's last hint is still being searched; one at a time (retry in "
            f"{math.ceil(held)} s)",
            held,
        )
    try:
        rank = p.searches.enter(owner, ticket, wait + budget + HINT_GRACE_S)
        request = {
            "game_id": game_id,
            "seat": seat,
            "spec": dict(spec),
            "hint_id": hint_id,
            "owner": owner,
            "deadline": p.clock.epoch() + wait,
        }
        p.dispatcher.hint(request, priority=min(rank, MAX_PRIORITY))
    except BaseException:
        p.searches.release(slot, hint_id)
        p.searches.leave(owner, ticket)
        raise
    raw = p.bus.wait_reply(game_id, _reply_id(hint_id), wait)
    if raw is None:
        # The slot stays held until a worker drops the search (its deadline has passed) or the
        # hold runs out: the seat cannot pile searches up behind one nobody answered.
        raise RetryLater(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"no search worker answered within {wait:g} s; try again later",
            budget + HINT_GRACE_S,
        )
    answer: dict[str, Any] = json.loads(raw)
    if answer["status"] == 200:
        body: dict[str, Any] = answer["body"]
        return body
    raise AppError(
        ErrorCode(answer["code"]), answer["detail"], status=answer["status"],
        errors=answer.get("errors"),
    )  # fmt: skip


class Hinted(enum.Enum):
    """What came of a hint's search (its value is what the Celery task returns)."""

    ANSWERED = "answered"
    LATE = "late"  # its deadline had passed: nobody waits any more, nothing was searched


def answer_hint(app: App, request: Mapping[str, Any]) -> Hinted:
    """Search a hint (on a search worker) and hand the answer to the gateway waiting for it:
    ``ANSWERED``, or ``LATE`` when its deadline has passed (nobody waits any more). Either
    way the seat's slot and the owner's ticket are given back."""
    p = app.ports
    game_id, seat, hint_id = str(request["game_id"]), int(request["seat"]), str(request["hint_id"])
    try:
        if p.clock.epoch() > float(request["deadline"]):
            return Hinted.LATE
        answer: dict[str, Any]
        try:
            body = queries.suggestion(app, game_id, seat, request["spec"])
            answer = {"status": 200, "body": body}
        except AppError as exc:
            answer = {"status": exc.status, "code": str(exc.code), "detail": exc.detail,
                      "errors": exc.errors}  # fmt: skip
        except Exception:
            # The caller hears a 503 now rather than at its deadline; the fault is logged.
            log.exception("hint search failed", extra={"game_id": game_id, "seat": seat})
            answer = {"status": 503, "code": str(ErrorCode.SERVICE_UNAVAILABLE),
                      "detail": "the search failed; try again"}  # fmt: skip
        # The seat's slot is given back before the answer goes out: a client that asks again
        # as soon as it has its answer must not find its last hint still holding the slot.
        _give_back(app, request)
        p.bus.complete(game_id, _reply_id(hint_id), "", json.dumps(answer), keep=True)
        return Hinted.ANSWERED
    finally:
        _give_back(app, request)


def _give_back(app: App, request: Mapping[str, Any]) -> None:
    """The hint's seat slot and its owner's ticket, released (twice is harmless)."""
    game_id, seat, hint_id = str(request["game_id"]), int(request["seat"]), str(request["hint_id"])
    app.ports.searches.release(_hint_slot(game_id, seat), hint_id)
    app.ports.searches.leave(str(request["owner"]), _hint_ticket(hint_id))


def _budget_s(spec: Mapping[str, Any]) -> float:
    budget = spec.get("budget_ms")
    return float(budget) / 1000 if budget is not None else HINT_ITERATIONS_S


def _hint_slot(game_id: str, seat: int) -> str:
    return f"hint:{game_id}:{seat}"


def _hint_ticket(hint_id: str) -> str:
    return f"hint:{hint_id}"


def _reply_id(hint_id: str) -> str:
    # A reply key among the game's commands': a client's own command id cannot guess it.
    return f"hint-{hint_id}"


# ---- caps ---------------------------------------------------------------------------------------


def check_caps(
    seat_specs: Sequence[Mapping[str, Any]], clock_spec: Mapping[str, Any] | None, caps: SearchCaps
) -> None:
    """Refuse (422 ``request/invalid``, naming each field) a game that asks the search
    workers for more than ``caps``: for callers without an organizer key."""
    errors: dict[str, list[str]] = {}
    searching = sum(
        _check_bot(spec, f"seats[{i}]", caps, errors) for i, spec in enumerate(seat_specs)
    )
    timeout_bot = (clock_spec or {}).get("timeout_bot")
    if isinstance(timeout_bot, Mapping):
        _check_bot(timeout_bot, "clock.timeout_bot", caps, errors)
    if searching > caps.seats:
        errors["seats"] = [f"at most {caps.seats} searching bots without an organizer key"]
    if errors:
        raise AppError(
            ErrorCode.REQUEST_INVALID,
            "without an organizer key a game may ask less of the search workers: "
            + "; ".join(f"{k}: {v[0]}" for k, v in errors.items()),
            errors=errors,
        )


def _check_bot(
    spec: Mapping[str, Any], path: str, caps: SearchCaps, errors: dict[str, list[str]]
) -> bool:
    """Whether ``spec`` is a searching bot; its settings over ``caps`` go into ``errors``."""
    name = spec.get("bot")
    if not isinstance(name, str) or name not in bots.BOTS or not bots.BOTS[name].slow:
        return False
    budget, iterations = spec.get("budget_ms"), spec.get("iterations")
    if budget is None and iterations is None:
        iterations = bots.ISMCTS_DEFAULT_ITERATIONS  # what it searches when given neither
    for field, value, cap in (("budget_ms", budget, caps.budget_ms),
                              ("iterations", iterations, caps.iterations)):  # fmt: skip
        if isinstance(value, int) and value > cap:
            errors[f"{path}.{field}"] = [f"at most {cap} without an organizer key"]
    return True
