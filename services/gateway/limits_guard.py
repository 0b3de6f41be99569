"""Abuse limits: requests per client address and per token, counted in Redis (the ``limits``
library, Flask-Limiter's core, with its Redis storage) so every gateway process shares them.
A request over its limit gets a 429 ``request/rate_limited`` problem with ``Retry-After``.

Limits are per rule: ``create`` and ``join`` per client address, ``command`` per seat token
(a hash of it, never the token) or address, and ``command_addr`` per client address whatever
the token (so a game's many seats, or many games, cannot multiply ``command``). The address is
the request's ``remote_addr``, the socket's peer, for every rule. Organizer and auditor keys
are not limited.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from flask import Flask, current_app, request
from limits import RateLimitItem, parse, storage, strategies

from services.gateway import auth
from services.gateway.problems import Problem
from shared.config import Settings


@dataclass(slots=True)
class Guard:
    """One gateway's limiter: the rules and the shared counters."""

    rules: dict[str, RateLimitItem]
    limiter: strategies.RateLimiter | None

    def check(self, rule: str, *, by_token: bool = False) -> None:
        """Count this request against ``rule``; raise a 429 problem when it is over."""
        if self.limiter is None or rule not in self.rules:
            return
        token = auth.bearer()
        if token is not None and (auth.is_organizer(token) or auth.is_auditor(token)):
            return
        who = (
            "t:" + hashlib.sha256(token.encode()).hexdigest()[:32]
            if by_token and token
            else "a:" + (request.remote_addr or "unknown")
        )
        item = self.rules[rule]
        if self.limiter.hit(item, "tabletop", rule, who):
            return
        reset, _ = self.limiter.get_window_stats(item, "tabletop", rule, who)
        wait = max(1, math.ceil(reset - time.time()))
        raise Problem(
            429, "request/rate_limited",
            f"too many requests ({item}); retry in {wait} s",
            title="Too Many Requests",
            headers={"Retry-After": str(wait)},
        )  # fmt: skip


def install(app: Flask, settings: Settings) -> None:
    """Attach the guard for ``settings`` (none when limits are off)."""
    rules = {name: parse(text) for name, text in settings.rate_limits.items() if text}
    limiter = None
    if rules:
        uri, options = storage_uri(settings)
        limiter = strategies.MovingWindowRateLimiter(storage.storage_from_string(uri, **options))
    app.extensions["tabletop-guard"] = Guard(rules=rules, limiter=limiter)


def storage_uri(settings: Settings) -> tuple[str, dict[str, bool]]:
    """The ``limits`` storage URI (and options) for the service's Redis. On a cluster it is
    ``redis+cluster://`` (limits' own ``RedisCluster`` storage; each counter is one key, so
    its scripts stay in one slot), with no database path (a cluster has only db 0) and TLS as
    an option, since that scheme has no ``rediss`` form."""
    uri = settings.redis_url
    if settings.redis_cluster:
        parsed = urlsplit(uri)
        options = {"ssl": True} if parsed.scheme == "rediss" else {}
        return f"redis+cluster://{parsed.netloc}", options
    if not uri.startswith(("redis://", "rediss://", "unix://")):
        uri = "redis://" + uri.split("://", 1)[-1]
    return uri, {}


def check(rule: str, *, by_token: bool = False) -> None:
    """Count the current request against ``rule`` (see ``Guard.check``)."""
    guard: Guard | None = current_app.extensions.get("tabletop-guard")
    if guard is not None:
        guard.check(rule, by_token=by_token)
