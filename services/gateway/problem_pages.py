"""``GET /problems/<code>``: the page each problem body's ``type`` names (``/problems/request/
invalid``...), saying what the problem means and what to do about it; HTML for a browser, JSON
for ``Accept: application/json``. ``GET /problems`` lists them all.

The codes, statuses and titles are the service's error catalogue (``shared/app/errors.py``);
the words for people are here, one ``Page`` per code (``PAGES``), with an example of the
problem body, which the OpenAPI document shows for each error response.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, json, request

from services.gateway.problems import PROBLEM_TYPE, Problem
from shared.app.errors import CATALOGUE, ErrorCode

pages = Blueprint("problem_pages", __name__)

PREFIX = "/problems/"


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """What a client reads at a problem's ``type``: what it means, what to do, and an example
    of the body (its ``detail`` and its field ``errors``)."""

    means: str
    todo: str
    detail: str
    errors: dict[str, list[str]] = field(default_factory=dict)


_TOKEN = (
    "send the seat token the game's creation (or your join) answered, as "
    "`Authorization: Bearer <token>`"
)

PAGES: dict[ErrorCode, Page] = {
    ErrorCode.MOVE_ILLEGAL: Page(
        means="The rules of the game forbid this command now (`rule` names the rule).",
        todo="Read the view again (GET /v1/games/{id} with your token): its `legal_commands` "
        "lists what you may send now.",
        detail="you must follow suit: bells",
    ),
    ErrorCode.MOVE_NOT_YOUR_TURN: Page(
        means="Another seat is to act; your seat may not send this command now.",
        todo="Wait for your turn: follow the game (GET /v1/games/{id}/feed) or read the view's "
        "`to_act` again.",
        detail="seat 1 is to act, not seat 0",
    ),
    ErrorCode.GAME_OVER: Page(
        means="The game has ended; it takes no more commands.",
        todo="Read its outcome in the view, its events or its export.",
        detail="the game is over",
    ),
    ErrorCode.COMMAND_INVALID: Page(
        means="The command is not one of the game's commands, or a field of it is missing or "
        "malformed.",
        todo="Compare it with the game's command schemas (GET /v1/game-types/{name}) or send one "
        "of the view's `legal_commands` as it is.",
        detail="unknown command type 'plya'",
        errors={"type": ["one of play, keep_decree, exchange_decree"]},
    ),
    ErrorCode.OPTIONS_INVALID: Page(
        means="The game cannot be created this way: its seat count or its options do not fit "
        "the game.",
        todo="See the game's seat limits and options in GET /v1/game-types/{name}; `errors` "
        "names each one at fault.",
        detail="fox needs exactly 2 seats, got 3",
        errors={"seats": ["exactly 2 seats"], "targett": ["unknown option"]},
    ),
    ErrorCode.GAME_NOT_FOUND: Page(
        means="No game has this id (or it is no longer kept).",
        todo="Check the id the creation answered; GET /v1/games lists the listed games.",
        detail="no game 83d4d01830630ba9",
    ),
    ErrorCode.GAME_STALE_VERSION: Page(
        means="The command's `expected_version` is not the game's version: it moved on since "
        "you read it.",
        todo="Read the view again and decide on its `version`.",
        detail="expected version 4, the game is at version 5",
    ),
    ErrorCode.GAME_WAITING: Page(
        means="The game is not dealt yet: it waits for open seats to be joined or client seeds "
        "to be sent.",
        todo="Join its open seats or send your seat's client seed, then play.",
        detail="the game waits for its open seats",
    ),
    ErrorCode.SEAT_TAKEN: Page(
        means="Someone else holds this seat.",
        todo="Join another open seat (the view's `seats` say which are open).",
        detail="seat 1 is taken",
    ),
    ErrorCode.SEAT_NOT_FOUND: Page(
        means="The game has no seat of this number.",
        todo="Seats count from 0 up to the number of seats less one.",
        detail="no seat 9: the game has 2 seats",
    ),
    ErrorCode.FAIRNESS_SEED_ALREADY_SENT: Page(
        means="Your seat's client seed was sent already; the first one counts.",
        todo="Nothing: the game uses the seed you sent first.",
        detail="this seat's client seed was sent already; the first one counts",
    ),
    ErrorCode.COMMAND_NOT_FOUND: Page(
        means="No command of this id was sent to this game by your seat.",
        todo="Use the `command_id` the command's answer gave, with the same token.",
        detail="no command s0-a1b2 in this game",
    ),
    ErrorCode.TOURNAMENT_NOT_FOUND: Page(
        means="No tournament has this id.",
        todo="GET /v1/tournaments lists the tournaments.",
        detail="no tournament tccd5eb660f7e",
    ),
    ErrorCode.TOURNAMENT_INVALID: Page(
        means="The tournament cannot be run as asked (its entrants, games or format).",
        todo="`errors` names each field at fault.",
        detail="entrants: at least 2",
        errors={"entrants": ["at least 2"]},
    ),
    ErrorCode.AUTH_REQUIRED: Page(
        means="This request needs a token or key and none was sent.",
        todo=_TOKEN + " (or an organizer, auditor or bot key where the operation says so).",
        detail="this needs a token (Authorization: Bearer <token>)",
    ),
    ErrorCode.AUTH_MALFORMED: Page(
        means="The Authorization header is not of the form `Bearer <token>`.",
        todo="Send `Authorization: Bearer <token>`.",
        detail="use 'Authorization: Bearer <token>'",
    ),
    ErrorCode.AUTH_INVALID_TOKEN: Page(
        means="The token or key sent is not valid here.",
        todo=_TOKEN + "; check that it is this game's.",
        detail="the token is not valid for this game",
    ),
    ErrorCode.AUTH_SEAT_REQUIRED: Page(
        means="Only a seat of the game may do this; no seat token was sent.",
        todo=_TOKEN + ".",
        detail="sending a command needs a seat token",
    ),
    ErrorCode.AUTH_FORBIDDEN: Page(
        means="The token is valid but may not do this (another seat's view, another bot...).",
        todo="Use the token of the seat (or the key) the operation needs.",
        detail="only auditors may read another seat's view",
    ),
    ErrorCode.AUTH_ORGANIZER_REQUIRED: Page(
        means="Only an organizer key may do this (a fixed seed or deal, a tournament...).",
        todo="Send an organizer key as `Authorization: Bearer <key>`, or leave out what needs one.",
        detail="a fixed seed or deal needs an organizer key",
    ),
    ErrorCode.REQUEST_INVALID: Page(
        means="The request's body or query has invalid fields; `errors` lists every one at "
        "once, each with its messages, by its path in what you sent (`seats[2].bot`).",
        todo="Fix every field `errors` names and send the request again. Send bodies as JSON "
        "with `Content-Type: application/json`.",
        detail="the request body has invalid fields: seats, seats[2].bot, targett",
        errors={
            "seats[2].bot": ["Must be one of: random, heuristic, ismcts."],
            "seats": ["exactly 2 seats"],
            "targett": ["unknown option"],
        },
    ),
    ErrorCode.REQUEST_IDEMPOTENCY_KEY_REUSED: Page(
        means="This `Idempotency-Key` was used with another request body.",
        todo="Use a new key for a new request; resend the same body to get the first answer.",
        detail="this Idempotency-Key was used for another request",
    ),
    ErrorCode.REQUEST_IN_PROGRESS: Page(
        means="The first request with this `Idempotency-Key` is still running.",
        todo="Send it again in a moment: you then get its answer.",
        detail="the first request with this key is still running",
    ),
    ErrorCode.REQUEST_RATE_LIMITED: Page(
        means="Too many requests of this kind from you in a short time.",
        todo="Wait the seconds `Retry-After` says, then send it again.",
        detail="too many requests; retry in 2 s",
    ),
    ErrorCode.REQUEST_MALFORMED: Page(
        means="The request cannot be read: its body is not JSON, or a header (`Prefer`, "
        "`Idempotency-Key`, `Last-Event-ID`) is malformed.",
        todo="Send the body as JSON with `Content-Type: application/json` (`curl -d` sends a "
        "form by default: add `-H 'Content-Type: application/json'`), and headers as "
        "documented.",
        detail="the body is not JSON this service reads: Expecting value: line 1 column 1 "
        "(char 0); send JSON with the header Content-Type: application/json",
    ),
    ErrorCode.REQUEST_TOO_LARGE: Page(
        means="The request body is larger than the service takes (64 KiB).",
        todo="Send a smaller body; no game needs a larger one.",
        detail="the body is larger than 65536 bytes",
    ),
    ErrorCode.REQUEST_UNSUPPORTED_MEDIA_TYPE: Page(
        means="The body's content type is not one this operation reads.",
        todo="Send JSON with `Content-Type: application/json`.",
        detail="send JSON with the header Content-Type: application/json",
    ),
    ErrorCode.HTTP_NOT_FOUND: Page(
        means="Nothing is at this path (or no such game type).",
        todo="See the operations in /docs (or /openapi.json).",
        detail="The requested URL was not found on the server.",
    ),
    ErrorCode.HTTP_METHOD_NOT_ALLOWED: Page(
        means="The path exists but not with this method; the `Allow` header lists those it takes.",
        todo="Use one of the methods in `Allow`.",
        detail="The method is not allowed for the requested URL.",
    ),
    ErrorCode.HTTP_ERROR: Page(
        means="The request failed at the HTTP level (`status` says how).",
        todo="Read `detail`; see the operation in /docs.",
        detail="The browser (or proxy) sent a request that this server could not understand.",
    ),
    ErrorCode.SERVICE_UNAVAILABLE: Page(
        means="The service cannot answer now (its store or its workers are unreachable or "
        "busy); nothing was changed.",
        todo="Send the same request again after `Retry-After` seconds.",
        detail="the game store is unavailable; retry later",
    ),
    ErrorCode.SERVICE_STORE_FULL: Page(
        means="The game store is full and takes no writes now; nothing was changed.",
        todo="Send the same request again later (`Retry-After`); reads still work.",
        detail="the game store is full and takes no writes now; nothing was changed: send "
        "the same request again later (Retry-After: 30 s)",
    ),
    ErrorCode.SERVER_ERROR: Page(
        means="The service failed on its side.",
        todo="Send the request again; if it keeps failing, report it with the time it happened.",
        detail="the command could not be processed",
    ),
    ErrorCode.BOT_NOT_FOUND: Page(
        means="No registered bot has this id.",
        todo="GET /v1/bots lists the registered bots.",
        detail="no bot 'b-3f9a'",
    ),
    ErrorCode.BOT_WEBHOOK_NOT_ALLOWED: Page(
        means="The bot's webhook URL is not one the service may call (a private address, a "
        "scheme or port it refuses).",
        todo="Give a public https URL.",
        detail="url: a private address",
        errors={"url": ["a private address"]},
    ),
    ErrorCode.BOT_NOT_SEATABLE: Page(
        means="The bot's owner lets only some keys seat it (`seatable_by`), and this request "
        "bears none of them.",
        todo="Seat it with its own key (or an organizer key, where it allows that).",
        detail="seat 1: bot b-3f9a is seatable by owner: it needs a request bearing its own key",
        errors={"seats[1].bot_id": ["bot b-3f9a is seatable by owner"]},
    ),
    ErrorCode.TURN_NOT_FOUND: Page(
        means="This bot has no turn of this id.",
        todo="Answer the turns GET /v1/bots/me/turns sends, with their ids.",
        detail="no turn t-1 of this bot",
    ),
    ErrorCode.TURN_EXPIRED: Page(
        means="The turn's time is up (its `on_failure` policy moved), or it was answered already.",
        todo="Answer the next turn sooner.",
        detail="the turn is over",
    ),
}


def problem_type(code: str) -> str:
    """The ``type`` URI of a code's problem bodies (as ``Problem.body`` writes it)."""
    return PREFIX + code


def example(code: ErrorCode) -> dict[str, Any]:
    """An example problem body of ``code``: the shape and status the service answers."""
    status, title = CATALOGUE[code]
    page = PAGES[code]
    return Problem(status, code.value, page.detail, title=title, errors_=page.errors).body()


def describe(code: ErrorCode) -> dict[str, Any]:
    """The page of a code as JSON."""
    status, title = CATALOGUE[code]
    page = PAGES[code]
    return {
        "type": problem_type(code.value),
        "code": code.value,
        "status": status,
        "title": title,
        "means": page.means,
        "todo": page.todo,
        "example": example(code),
    }


def _wants_json() -> bool:
    best = request.accept_mimetypes.best_match(["text/html", "application/json", PROBLEM_TYPE])
    return best in ("application/json", PROBLEM_TYPE)


@pages.get("/problems")
def index() -> Response:
    """Every problem type, with what it means."""
    docs = [describe(code) for code in ErrorCode]
    if _wants_json():
        return Response(json.dumps({"problems": docs}), mimetype="application/json")
    rows = "\n".join(
        f'<li><a href="{html.escape(d["type"])}"><code>{html.escape(d["code"])}</code></a> '
        f"({d['status']}): {_text(d['means'])}</li>"
        for d in docs
    )
    return _html("Problems this service answers", f"<ul>\n{rows}\n</ul>")


@pages.get("/problems/<path:code>")
def page(code: str) -> Response:
    """The page of one problem type (404 ``http/not_found`` for a code the service has not)."""
    try:
        known = ErrorCode(code)
    except ValueError:
        raise Problem(404, ErrorCode.HTTP_NOT_FOUND, f"no problem type {code!r}") from None
    doc = describe(known)
    if _wants_json():
        return Response(json.dumps(doc), mimetype="application/json")
    body = (
        f"<p>HTTP status {doc['status']}: {html.escape(doc['title'])}.</p>\n"
        f"<h2>What it means</h2>\n<p>{_text(doc['means'])}</p>\n"
        f"<h2>What to do</h2>\n<p>{_text(doc['todo'])}</p>\n"
        "<h2>An example</h2>\n"
        f"<pre>{html.escape(json.dumps(doc['example'], indent=2))}</pre>\n"
        '<p><a href="/problems">Every problem type</a> · <a href="/docs">the API</a></p>'
    )
    return _html(f"Problem {doc['code']}", body)


def _text(words: str) -> str:
    """Words as HTML, a `quoted` name as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(words))


def _html(title: str, body: str) -> Response:
    text = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)} · tabletop</title>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )
    return Response(text, mimetype="text/html")
