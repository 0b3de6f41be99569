"""``application/problem+json`` bodies (RFC 9457) for every error the gateway returns."""

from __future__ import annotations

from typing import Any

from flask import Response, has_request_context, json, request
from werkzeug.exceptions import HTTPException

from shared.app.errors import AppError, ErrorCode, status_of, title_of
from shared.games import errors

PROBLEM_TYPE = "application/problem+json"


class Problem(Exception):
    """An error answered as a problem body; raise it anywhere in a view."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        title: str | None = None,
        rule: str | None = None,
        errors_: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.headers = headers or {}
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title or title_of(code) or code
        self.rule = rule
        self.errors = as_field_errors(errors_)
        self.extra = extra or {}

    @classmethod
    def from_game_error(cls, error: dict[str, Any] | errors.GameError) -> Problem:
        """The problem for an engine error (object or its ``to_dict``)."""
        doc = error.to_dict() if isinstance(error, errors.GameError) else error
        code = doc.get("code", ErrorCode.SERVER_ERROR)
        return cls(
            status_of(code),
            code,
            doc.get("detail", ""),
            rule=doc.get("rule"),
            errors_=doc.get("errors"),
        )

    @classmethod
    def from_app_error(cls, error: AppError) -> Problem:
        """The problem for an error of the application (its code, status and field errors)."""
        same = status_of(error.code) == error.status
        return cls(
            error.status,
            error.code,
            error.detail,
            errors_=error.errors,
            title=None if same else _PHRASES.get(error.status),
        )

    def body(self) -> dict[str, Any]:
        """The JSON body."""
        out: dict[str, Any] = {
            "type": f"/problems/{self.code}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }
        if self.rule:
            out["rule"] = self.rule
        out["errors"] = self.errors
        out.update(self.extra)
        return out

    def response(self, headers: dict[str, str] | None = None) -> Response:
        """A Flask response (its ``detail`` with a hint to send JSON when the request's body
        came as another content type and could not be read or used)."""
        body = self.body()
        hint = json_hint(self.code)
        if hint:
            body["detail"] = f"{body['detail']}; {hint}" if body["detail"] else hint
        return Response(
            json.dumps(body),
            status=self.status,
            mimetype=PROBLEM_TYPE,
            headers={**self.headers, **(headers or {})},
        )


def as_field_errors(errors: Any) -> dict[str, list[str]]:
    """Field errors in the one shape clients get: a list of messages per field (a bare message,
    or a list of them without a field, is the whole body's)."""
    if not errors:
        return {}
    if not isinstance(errors, dict):
        errors = {"body": errors}
    out: dict[str, list[str]] = {}
    for key, value in errors.items():
        values = value if isinstance(value, list | tuple) else [value]
        out[str(key)] = [v if isinstance(v, str) else str(v) for v in values]
    return out


JSON_HINT = "send JSON with the header Content-Type: application/json"
# The codes of a body that could not be read or used as sent, where the content type may be why.
_BODY_CODES = {"request/malformed", "request/invalid", "request/unsupported_media_type"}


def json_hint(code: str) -> str | None:
    """A hint to send JSON, for a refused request whose body came as another content type
    (``curl -d`` sends a form by default); None otherwise."""
    if code not in _BODY_CODES or not has_request_context():
        return None
    if not request.content_length and not request.headers.get("Transfer-Encoding"):
        return None
    mimetype = request.mimetype
    if mimetype == "application/json" or mimetype.endswith("+json"):
        return None
    sent = f"it came as {mimetype}" if mimetype else "it came with no Content-Type"
    return f"{JSON_HINT} ({sent})"


_PHRASES = {401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}

# Seconds a client is asked to wait when Redis refuses writes for want of memory: it takes an
# operator (or finished games leaving it) to free some, not a moment.
STORE_FULL_RETRY_AFTER_S = 30


def store_full() -> Problem:
    """The 503 for a write Redis refused because it is full (maxmemory, policy noeviction):
    nothing of the request was stored past the refused write, which was its first (a full Redis
    refuses every write that adds); the same request may be sent again later."""
    return Problem(
        503,
        ErrorCode.SERVICE_STORE_FULL,
        "the game store is full and takes no writes now; nothing was changed: send the same "
        f"request again later (Retry-After: {STORE_FULL_RETRY_AFTER_S} s)",
        headers={"Retry-After": str(STORE_FULL_RETRY_AFTER_S)},
    )


def from_http_exception(error: HTTPException) -> Problem:
    """A problem for a werkzeug/webargs HTTP error (404 route, 405, validation errors...)."""
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    field_errors = data.get("errors") or data.get("messages") or {}
    # webargs nests errors by location ({"json": {...}}); clients want the fields.
    where, root = "request body", "body"
    if isinstance(field_errors, dict) and set(field_errors) <= {"json", "query", "headers"}:
        if set(field_errors) == {"query"}:
            where, root = "query string", "query"
        merged: dict[str, Any] = {}
        for part in field_errors.values():
            merged.update(part if isinstance(part, dict) else {SCHEMA_KEY: part})
        field_errors = merged
    if isinstance(field_errors, dict):
        field_errors = flat_field_errors(field_errors, root=root)
    code = {
        400: "request/malformed",
        401: "auth/required",
        403: "auth/forbidden",
        404: "http/not_found",
        405: "http/method_not_allowed",
        413: "request/too_large",
        415: "request/unsupported_media_type",
        422: "request/invalid",
    }.get(status, "http/error")
    detail = data.get("message") or error.description or error.name
    if status == 422 and field_errors:
        detail = f"the {where} has invalid fields: " + ", ".join(sorted(field_errors))
        if list(field_errors) == [root]:  # the whole body (or query) is wrong, not a field
            detail = f"the {where} " + "; ".join(field_errors[root])
    return Problem(status, code, detail, title=error.name, errors_=field_errors)


SCHEMA_KEY = "_schema"  # marshmallow's key for an error of a whole object, not a field
# marshmallow's words for a body that is no object (a JSON list, a string...)
_NOT_AN_OBJECT = {"Invalid input type.": "must be a JSON object"}


def flat_field_errors(
    nested: dict[str, Any], prefix: str = "", *, root: str = "body"
) -> dict[str, list[str]]:
    """marshmallow nests errors of nested fields (``{"seats": {"0": {"name": [...]}}}``);
    clients get one list of messages per field path instead (``{"seats[0].name": [...]}``).
    An error of a whole object (marshmallow's ``_schema``) is keyed by that object's path
    (``seats[0]``), or ``root`` (``body``, ``query``) for the whole request: a path a client
    can find in what it sent."""
    flat: dict[str, list[str]] = {}
    for key, value in nested.items():
        key = str(key)
        if key == SCHEMA_KEY:
            path = prefix or root
        else:
            path = (
                f"{prefix}[{key}]"
                if key.isdigit() and prefix
                else (f"{prefix}.{key}" if prefix else key)
            )
        if key == SCHEMA_KEY and isinstance(value, list):
            value = [_NOT_AN_OBJECT.get(v, v) if isinstance(v, str) else v for v in value]
        if isinstance(value, dict):
            flat.update(flat_field_errors(value, path, root=root))
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            flat[path] = value
        else:
            flat[path] = [str(value)]
    return flat
