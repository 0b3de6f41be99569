"""What the kit raises: one base class, so a caller catches every failure of a call at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class TabletopError(Exception):
    """Any failure of a call to the service (its message is one line)."""


class ProblemError(TabletopError):
    """A 4xx or 5xx answer. The service answers ``application/problem+json``; its fields are
    kept as attributes and whole in ``body`` (a game's refusal also names the ``rule``)."""

    def __init__(self, status: int, body: Mapping[str, Any], *, reason: str = "") -> None:
        self.status = status
        self.body: dict[str, Any] = dict(body)
        self.type: str = str(body.get("type") or "about:blank")
        self.title: str = str(body.get("title") or reason or f"HTTP {status}")
        self.detail: str = str(body.get("detail") or body.get("title") or reason or "")
        self.code: str | None = body.get("code") if isinstance(body.get("code"), str) else None
        errors = body.get("errors")
        self.errors: Any = errors if errors is not None else {}
        code = f" {self.code}" if self.code else ""
        super().__init__(f"{status}{code}: {self.detail or self.title}")


class TransportError(TabletopError):
    """The service could not be reached, or the connection failed before an answer."""

    def __init__(self, api: str, reason: str) -> None:
        self.api = api
        self.reason = reason
        super().__init__(f"cannot reach the service at {api}: {reason}")


class InvalidResponse(TabletopError):
    """A successful status whose body is not what the endpoint answers (not JSON, say)."""
