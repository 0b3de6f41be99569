"""Abuse limits: requests per client address and per token, counted in Redis (the ``limits``
library, Flask-Limiter's core, with its Redis storage) so every gateway process shares them.
A request over its limit gets a 429 ``request/rate_limited`` problem with ``Retry-After``.

Limits are per rule: ``create`` and ``join`` per client address, ``command`` per seat token
(a hash of it, never the token) or address, and ``command_addr`` per client address whatever
the token (so a game's many seats, or many games, cannot multiply ``command``). The address is
the request's ``remote_addr``, the socket's peer, for every rule. Organizer and auditor keys
are not limited.

A rule with a burst (``<rule>_burst``, e.g. ``command_burst``) is a token bucket instead of a
moving window: it holds up to the burst, each request takes one, and it refills at the rule's
rate. A bot playing fast over REST sends its moves in bursts well above a steady rate (its
turns come together), which a moving window of 20 a second cut mid-game; the bucket still
holds a flood to the rate once the burst is spent.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, current_app, request
from limits import RateLimitItem, parse, storage, strategies

from services.gateway import auth
from services.gateway.problems import Problem
from shared.config import Settings

BURST_SUFFIX = "_burst"  # a rule's burst setting: ``command_burst`` for ``command``

# A token bucket in one Redis hash (tokens, last refill in ms), refilled by Redis's own clock so
# every gateway process agrees; one key, so it stays in one slot on a cluster. Returns
# {1, 0} when a token was taken, else {0, ms until one is back}.
BUCKET_SCRIPT = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or burst
local at = tonumber(held[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local taken, wait = 0, 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate) + 1000)
return {taken, wait}
"""


@dataclass(slots=True)
class Bucket:
    """A rule's token bucket: ``burst`` tokens at most, refilled at ``per_ms`` a millisecond."""

    per_ms: float
    burst: int
    script: Any  # redis-py's registered Script

    def take(self, key: str) -> int:
        """0 when a token was taken, else the milliseconds until one is back."""
        taken, wait = self.script(keys=[key], args=[repr(self.per_ms), self.burst])
        return 0 if int(taken) else max(1, int(wait))


@dataclass(slots=True)
class Guard:
    """One gateway's limiter: the rules and the shared counters."""

    rules: dict[str, RateLimitItem]
    limiter: strategies.RateLimiter | None
    buckets: dict[str, Bucket] | None = None

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
        bucket = (self.buckets or {}).get(rule)
        if bucket is not None:
            wait_ms = bucket.take(f"tabletop:bucket:{rule}:{who}")
            if not wait_ms:
                return
            wait = max(1, math.ceil(wait_ms / 1000))
            what = f"{item}, bursts of {bucket.burst}"
        else:
            if self.limiter.hit(item, "tabletop", rule, who):
                return
            reset, _ = self.limiter.get_window_stats(item, "tabletop", rule, who)
            wait = max(1, math.ceil(reset - time.time()))
            what = str(item)
        raise Problem(
            429, "request/rate_limited",
            f"too many requests ({what}); retry in {wait} s",
            title="Too Many Requests",
            headers={"Retry-After": str(wait)},
        )  # fmt: skip


def install(app: Flask, settings: Settings, client: Any = None) -> None:
    """Attach the guard for ``settings`` (none when limits are off). ``client``: the service's
    Redis client, which keeps the token buckets (rules with a burst); without one every rule
    is a moving window."""
    limits = settings.rate_limits
    rules = {
        name: parse(text)
        for name, text in limits.items()
        if text and not name.endswith(BURST_SUFFIX)
    }
    limiter = None
    buckets: dict[str, Bucket] = {}
    if rules:
        uri, options = storage_uri(settings)
        limiter = strategies.MovingWindowRateLimiter(storage.storage_from_string(uri, **options))
    if rules and client is not None:
        script = client.register_script(BUCKET_SCRIPT)
        for name, item in rules.items():
            burst = int(limits.get(name + BURST_SUFFIX) or 0)
            if burst > 0:
                per_ms = item.amount / (item.get_expiry() * 1000)
                buckets[name] = Bucket(per_ms=per_ms, burst=burst, script=script)
    app.extensions["tabletop-guard"] = Guard(rules=rules, limiter=limiter, buckets=buckets)


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
