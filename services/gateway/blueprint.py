"""What the v1 endpoints share: their blueprint (one, so the OpenAPI document keeps its one
``games`` tag), the JSON body parser and its checks, the caller's seat and token, the
``Prefer: wait`` and ``Idempotency-Key`` headers. The endpoints themselves are in the
``*_routes`` modules ``routes`` gathers."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from flask import Response, current_app, request
from flask_smorest import Blueprint
from webargs import core as webargs_core
from webargs.flaskparser import FlaskParser

from services.gateway import auth, schemas
from services.gateway.problems import PROBLEM_TYPE, Problem
from shared.app import searches
from shared.app.context import App
from shared.app.errors import AppError
from shared.app.messages import token_hash


class JsonBodyParser(FlaskParser):
    """Reads the body as JSON whatever its Content-Type: ``curl -d`` sends
    ``application/x-www-form-urlencoded`` by default, and "missing field" would mislead."""

    def _raw_load_json(self, req: Any) -> Any:
        data = req.get_data(cache=True)
        if not data:
            return webargs_core.missing
        try:
            value = webargs_core.parse_json(data)
        except RecursionError:  # nested deeper than the parser's stack: not a game command
            raise Problem(
                400, "request/malformed", "the JSON body is nested too deeply", title="Bad Request"
            ) from None
        except ValueError as exc:  # e.g. an integer of more digits than Python will read
            raise Problem(
                400, "request/malformed", f"the body is not JSON this service reads: {exc}",
                title="Bad Request",
            ) from None  # fmt: skip
        _check_body(value)
        return value


MAX_DEPTH = 32  # no command, seat or option of any game nests deeper


def _check_body(value: Any) -> None:
    """422 for a body no game can use and whose handling could fail deep down: nesting beyond
    ``MAX_DEPTH`` or text that cannot be encoded (a lone surrogate such as ``"\\ud800"``).
    Iterative, so that no depth of nesting can exhaust the stack here."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Problem(
                422, "request/invalid", f"the body nests deeper than {MAX_DEPTH} levels",
                title="Unprocessable Entity",
            )  # fmt: skip
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, dict):
            for k, v in item.items():
                _check_text(k)
                stack.append((v, depth + 1))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Problem(
            422, "request/invalid", "the body holds text that cannot be encoded as UTF-8 "
            "(a lone surrogate)", title="Unprocessable Entity",
        ) from None  # fmt: skip


class GamesBlueprint(Blueprint):
    """flask-smorest Blueprint with the lenient JSON body parser."""

    ARGUMENTS_PARSER = JsonBodyParser()


blp = GamesBlueprint("games", __name__, description="Games, commands, views and events")
SECURITY: list[dict[str, list[str]]] = [{"bearer": []}]
# Where an anonymous call works too (a spectator's view, a finished game's export...).
SECURITY_OPTIONAL: list[dict[str, list[str]]] = [{}, {"bearer": []}]

F = TypeVar("F", bound=Callable[..., Any])


def problems(described: Mapping[int, str]) -> Callable[[F], F]:
    """Document an endpoint's own problem responses: for each status, its description and a
    problem body (``ProblemSchema`` as ``application/problem+json``), listed in the order
    the document gives them."""

    def decorate(view: F) -> F:
        # Decorators apply from the innermost: the last status first, as a stack written out
        # one by one would.
        for status, description in reversed(list(described.items())):
            view = blp.alt_response(status, schema=schemas.ProblemSchema,
                                    content_type=PROBLEM_TYPE, description=description)(view)  # fmt: skip
        return view

    return decorate


def application() -> App:
    """The application this gateway serves."""
    app: App = current_app.extensions["tabletop"]
    return app


def _read(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a query, answering its refusals as problem bodies."""
    try:
        return fn(*args, **kwargs)
    except AppError as exc:
        raise Problem.from_app_error(exc) from exc


def _json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    raw = body if isinstance(body, str | bytes) else json.dumps(body)
    return Response(raw, status=status, mimetype="application/json", headers=headers)


def _client_owner() -> str:
    """Whom this request's searches count against (``searches.client_owner``): the key it
    sent, if an organizer's or an auditor's, else its client address."""
    token = auth.bearer()
    keyed = token is not None and (auth.is_organizer(token) or auth.is_auditor(token))
    return searches.client_owner(address=request.remote_addr, key=token if keyed else None)


IDEMPOTENCY_TTL = 24 * 3600
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def _idempotency_key() -> str | None:
    """The request's ``Idempotency-Key`` (1 to 255 visible ASCII characters), or None."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not _KEY.match(key):
        raise Problem(
            400, "request/malformed", "Idempotency-Key must be 1 to 255 visible ASCII characters",
            title="Bad Request",
        )  # fmt: skip
    return key


def _idempotent(
    route: str,
    key: str,
    body: Any,
    run: Any,
    *,
    kept_of: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    replayed_of: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Any:
    """Run ``run`` once per (caller, route, key): a retry with the same body gets the kept
    response (``Idempotent-Replayed: true``; a refusal as a problem again), one with another
    body a 422, one while the first still runs a 409. ``kept_of``: what of a success's body is
    kept (a secret in it is not: the store is Redis), ``replayed_of``: the body a replay
    answers from what was kept."""
    caller = auth.bearer() or request.remote_addr or "anonymous"
    scope = hashlib.sha256(f"{caller}\n{route}\n{key}".encode()).hexdigest()
    fingerprint = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    store = application().ports.idempotency
    kept = store.claim(scope, fingerprint, IDEMPOTENCY_TTL)
    if kept is not None:
        if kept["fingerprint"] != fingerprint:
            raise Problem(
                422, "request/idempotency_key_reused",
                "this Idempotency-Key was used with another request body",
                title="The key was used for another request",
            )  # fmt: skip
        response = kept.get("response")
        if response is None:
            return Problem(
                409, "request/in_progress", "the first request with this key is still running",
                title="Conflict",
            ).response({"Retry-After": "1"})  # fmt: skip
        doc = response["body"]
        if replayed_of is not None and response["status"] < 400:
            doc = replayed_of(doc)
        headers = {**response.get("headers", {}), "Idempotent-Replayed": "true"}
        replayed = _json_response(doc, response["status"], headers)
        if response["status"] >= 400:
            replayed.mimetype = PROBLEM_TYPE  # a refusal again, as the first answer was
        return replayed
    try:
        doc, status, headers = run()
    except Problem as problem:
        store.finish(scope, fingerprint, {"status": problem.status, "body": problem.body(),
                                          "headers": {}}, IDEMPOTENCY_TTL)  # fmt: skip
        raise
    kept_doc = doc if kept_of is None else kept_of(doc)
    store.finish(scope, fingerprint, {"status": status, "body": kept_doc, "headers": headers},
                 IDEMPOTENCY_TTL)  # fmt: skip
    return doc, status, headers


def _no_token_or_a_key(what: str) -> str | None:
    """The bearer token of a call that needs none: None, or a key. Any other token is a 401: a
    seat token of another game, or a typo, would otherwise be ignored silently."""
    token = auth.bearer()
    if token is not None and not (auth.is_organizer(token) or auth.is_auditor(token)):
        raise Problem(
            401, "auth/invalid_token", f"{what} takes no token but an organizer key",
            title="Unauthorized",
        )  # fmt: skip
    return token


def _token_hash() -> str | None:
    """The hash of the caller's bearer token (the worker checks it against the roster)."""
    token = auth.bearer()
    return token_hash(token) if token else None


def _seat_of(app: App, game_id: str, detail: str) -> int:
    """The caller's seat; the caller must hold one: 401 without a token, 403 with a key."""
    caller = auth.caller_for(app, game_id)
    if caller.role != auth.SEAT or caller.seat is None:
        status = 401 if caller.role == auth.SPECTATOR else 403
        raise Problem(
            status,
            "auth/seat_required",
            detail,
            title="Unauthorized" if status == 401 else "Forbidden",
        )
    return caller.seat


_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*\"?(\d+(?:\.\d+)?)\"?", re.IGNORECASE)


def _client_command_id(seat: int | None, client_id: str) -> str:
    # Prefixed with the seat so that two seats' ids never collide (nor a seat forge a bot's).
    return f"s{seat}-{client_id}"


def _prefer_wait() -> float | None:
    header = request.headers.get("Prefer")
    if not header:
        return None
    match = _WAIT.search(header)
    if not match:
        if re.search(r"(?:^|[,;\s])wait\s*=", header, re.IGNORECASE):
            raise Problem(
                400, "request/malformed", "Prefer: wait=N needs a number of seconds",
                title="Bad Request",
            )  # fmt: skip
        return None
    limit = current_app.config["SETTINGS"].max_wait
    return max(0.001, min(float(match.group(1)), limit))


def _fmt(wait: float) -> str:
    return str(int(wait)) if wait == int(wait) else str(wait)


def paging(query: Mapping[str, Any]) -> tuple[int, int]:
    """(offset, limit) of a list's query: its ``cursor`` (a ``next_cursor`` it gave) when
    sent, else its ``offset``."""
    cursor = query.get("cursor")
    return (int(cursor) if cursor else int(query.get("offset", 0))), int(query["limit"])


def next_cursor(offset: int, limit: int, found: int) -> dict[str, str | None]:
    """``{"next_cursor": ...}`` of a page read with ``limit + 1``: the next page's cursor
    when ``found`` says there is one, else None."""
    return {"next_cursor": str(offset + limit) if found > limit else None}
