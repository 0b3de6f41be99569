"""The problems in the OpenAPI document: each operation's own error responses, and an example
problem body on every error response, true to its status and shape (``problem_pages``'
catalogue); ``openapi_contract.install`` calls ``own_problems`` and ``problem_examples``."""

from __future__ import annotations

import http
import re
from typing import Any

from apispec import APISpec

from services.gateway import problem_pages, view_schemas
from services.gateway.problems import PROBLEM_TYPE
from shared.app.errors import CATALOGUE, ErrorCode

REF = view_schemas.REF

# The problem a status answers most often, for the example of a response that names no code.
STATUS_CODES = {
    400: ErrorCode.REQUEST_MALFORMED,
    401: ErrorCode.AUTH_REQUIRED,
    403: ErrorCode.AUTH_FORBIDDEN,
    404: ErrorCode.HTTP_NOT_FOUND,
    405: ErrorCode.HTTP_METHOD_NOT_ALLOWED,
    409: ErrorCode.REQUEST_IN_PROGRESS,
    413: ErrorCode.REQUEST_TOO_LARGE,
    415: ErrorCode.REQUEST_UNSUPPORTED_MEDIA_TYPE,
    422: ErrorCode.REQUEST_INVALID,
    429: ErrorCode.REQUEST_RATE_LIMITED,
    500: ErrorCode.SERVER_ERROR,
    503: ErrorCode.SERVICE_UNAVAILABLE,
}

# (method, path) -> status -> description: problems an operation answers that its route does
# not document itself (the generic responses say less). A route's own description wins.
PROBLEMS: dict[tuple[str, str], dict[str, str]] = {
    ("get", "/v1/bots/{bot_id}"): {
        "401": "the Authorization header is not `Bearer <token>` (`auth/malformed`)",
        "404": "no such bot (`bot/not_found`)",
    },
    ("delete", "/v1/bots/{bot_id}"): {
        "401": "no key sent (`auth/required`), or a malformed Authorization header "
        "(`auth/malformed`)",
        "403": "the key is not this bot's (`auth/forbidden`)",
        "404": "no such bot (`bot/not_found`)",
    },
}


def own_problems(spec: APISpec) -> None:
    """The problems of ``PROBLEMS``, each with its own description, in place of a generic
    response (never of a route's own)."""
    for (method, path), described in PROBLEMS.items():
        op = spec._paths.get(path, {}).get(method)
        if op is None:
            continue
        responses = op.setdefault("responses", {})
        for status, description in described.items():
            if status not in responses or "$ref" in responses[status]:
                responses[status] = {
                    "description": description,
                    "content": {PROBLEM_TYPE: {"schema": {"$ref": REF + "Problem"}}},
                }
        op["responses"] = dict(sorted(responses.items(), key=lambda kv: kv[0] == "default"))


# (method, path, status) -> the codes of a route's own response whose description says them in
# words, not by code: its examples.
EXAMPLE_CODES: dict[tuple[str, str, str], list[ErrorCode]] = {
    ("post", "/v1/games/{game_id}/commands", "422"): [
        ErrorCode.MOVE_ILLEGAL, ErrorCode.MOVE_NOT_YOUR_TURN, ErrorCode.COMMAND_INVALID],
    ("post", "/v1/games/{game_id}/commands", "409"): [
        ErrorCode.GAME_STALE_VERSION, ErrorCode.GAME_OVER],
    ("get", "/v1/games/{game_id}/commands/{command_id}", "404"): [ErrorCode.COMMAND_NOT_FOUND],
    ("post", "/v1/games/{game_id}/seats/{seat}/entropy", "422"): [
        ErrorCode.MOVE_ILLEGAL, ErrorCode.FAIRNESS_SEED_ALREADY_SENT],
    ("get", "/v1/games/{game_id}/suggestion", "422"): [
        ErrorCode.MOVE_NOT_YOUR_TURN, ErrorCode.REQUEST_INVALID],
}  # fmt: skip

_CODE = re.compile(r"`([a-z_]+/[a-z_]+)`")  # a code named in a description
_CODES = {c.value for c in ErrorCode}


def problem_examples(spec: APISpec) -> None:
    """An example problem body on every error response: of its status, with the field errors'
    shape (the shared responses: the status's most frequent code; an operation's own: each
    code its description names)."""
    for name, response in spec.components.responses.items():
        content = response.get("content", {}).get(PROBLEM_TYPE)
        if content is not None:
            status = 500 if name == "DEFAULT_ERROR" else http.HTTPStatus[name].value
            content["example"] = problem_example(status)
    for path, operations in spec._paths.items():
        for method, op in operations.items():
            if not isinstance(op, dict):
                continue
            for status, response in op.get("responses", {}).items():
                content = response.get("content", {}).get(PROBLEM_TYPE)
                if content is None or "example" in content or "examples" in content:
                    continue
                named = [*EXAMPLE_CODES.get((method, path, status), []),
                         *_CODE.findall(response.get("description", ""))]  # fmt: skip
                found = [ErrorCode(c) for c in dict.fromkeys(named) if c in _CODES
                         and status.isdigit() and CATALOGUE[ErrorCode(c)][0] == int(status)]  # fmt: skip
                if len(found) > 1:
                    content["examples"] = {
                        code.value: {"summary": code.value,
                                     "value": problem_example(int(status), code)}
                        for code in found
                    }  # fmt: skip
                elif status.isdigit():
                    content["example"] = problem_example(int(status), *found[:1])


def problem_example(status: int, code: ErrorCode | None = None) -> dict[str, Any]:
    """An example problem body answered with ``status``: ``code``'s, else the code the status
    answers most often (the service's own shape, from ``problem_pages``)."""
    if code is None:
        code = STATUS_CODES.get(status) or next(
            (c for c in ErrorCode if CATALOGUE[c][0] == status), ErrorCode.HTTP_ERROR
        )
    body = problem_pages.example(code)
    if body["status"] != status:  # a code answered with another status (http/error's)
        body["status"] = status
        body["title"] = http.HTTPStatus(status).phrase
    return body
