"""The ports the service keeps per client (``typing.Protocol`` s, bundled in
``shared.app.ports.Ports``): responses kept by ``Idempotency-Key``, and the search workers'
time shared out between clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class IdempotencyStore(Protocol):
    """Responses kept by ``Idempotency-Key`` (per caller), so a retried request is answered
    again instead of applied twice."""

    def claim(self, key: str, fingerprint: str, ttl: int) -> dict[str, Any] | None:
        """Claim ``key`` for a request with ``fingerprint`` (a hash of what it asks); None
        when the claim is new, else what is kept: ``{"fingerprint", "response"}`` (response
        None while the first request is still running)."""
        ...

    def finish(self, key: str, fingerprint: str, response: Mapping[str, Any], ttl: int) -> None:
        """Keep the response of the request that claimed ``key``."""
        ...


class SearchShares(Protocol):
    """The search workers' time, shared out (``shared/app/searches.py``): each owner's (a
    client's) searches queued or running, counted so that a new one queues behind only the
    searches of owners holding fewer; and slots with one holder at a time (a seat's hint)."""

    def enter(self, owner: str, ticket: str, ttl: float) -> int:
        """Count ``ticket`` as ``owner``'s until it leaves or ``ttl`` seconds pass (entering
        again renews it); answers how many other tickets the owner holds."""
        ...

    def leave(self, owner: str, ticket: str) -> None:
        """Stop counting ``ticket`` (nothing if it is not counted)."""
        ...

    def hold(self, slot: str, holder: str, ttl: float) -> float:
        """Take ``slot`` for ``holder`` for ``ttl`` seconds: 0 when taken, else the seconds
        until the present holder's hold runs out (it keeps the slot)."""
        ...

    def release(self, slot: str, holder: str) -> None:
        """Free ``slot`` if ``holder`` holds it."""
        ...
