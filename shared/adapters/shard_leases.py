"""Shard leases: each command stream of a game type is read by one worker at a time.

A lease is a Redis key ``lease:{<type>}:<shard>`` holding its owner's name with a time to live;
its owner renews it every ``RENEW_S`` and gives it up when it stops. A game's commands are then
decided in stream order by one process with a warm cache, and a shard whose owner died is
taken by another worker once its lease runs out (``TTL_MS``): that worker first claims the
shard's pending messages (read by the dead owner, never acknowledged) and handles them in
order, before any newer one.

Workers share the shards evenly: each holds at most ``ceil(shards / live workers)``, live
workers being those whose heartbeat (``workers:seen:<type>``) is recent; one with more gives
the extra back, so a worker that joins gets its share within a renewal or two.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from shared.adapters.redis import Client

TTL_MS = 5_000  # a dead owner's shards are taken over this long after its last renewal
RENEW_S = 1.0
LIVE_S = 5.0  # a worker whose heartbeat is older counts as gone when sharing the shards

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""


def lease_key(game_type: str, shard: int) -> str:
    """The lease on one command stream (its game type is the hash tag, as the stream's)."""
    return f"lease:{{{game_type}}}:{shard}"


class ShardLeases:
    """The leases one worker holds on its game type's shards."""

    def __init__(
        self, client: Client, game_type: str, shards: int, owner: str, *, ttl_ms: int = TTL_MS
    ) -> None:
        self.r = client
        self.game_type = game_type
        self.shards = shards
        self.owner = owner
        self.ttl_ms = ttl_ms
        self.owned: set[int] = set()
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    def share(self, live_workers: int) -> int:
        """How many shards one worker may hold."""
        return math.ceil(self.shards / max(1, live_workers))

    def balance(self, live_workers: int) -> tuple[list[int], list[int]]:
        """Renew the leases held (dropping any lost), take free shards up to this worker's
        share, give back any beyond it. Returns (shards gained, shards given up or lost)."""
        lost = [s for s in sorted(self.owned) if not self._renew(
            keys=[lease_key(self.game_type, s)], args=[self.owner, self.ttl_ms])]  # fmt: skip
        self.owned -= set(lost)
        share = self.share(live_workers)
        gained = []
        # Start the search at a place of the owner's own, so workers starting at once do not
        # all race for shard 0 first.
        start = sum(self.owner.encode()) % self.shards
        for i in range(self.shards):
            if len(self.owned) >= share:
                break
            shard = (start + i) % self.shards
            if shard in self.owned:
                continue
            key = lease_key(self.game_type, shard)
            # A lease still held under this name is this worker's own from before a restart
            # (the supervisor gives a restarted worker its name back): take it up at once.
            if self.r.set(key, self.owner, nx=True, px=self.ttl_ms) or self._renew(
                keys=[key], args=[self.owner, self.ttl_ms]
            ):
                self.owned.add(shard)
                gained.append(shard)
        while len(self.owned) > share:
            extra = max(self.owned)
            self.release([extra])
            lost.append(extra)
        return gained, lost

    def release(self, shards: Sequence[int] | None = None) -> None:
        """Give leases back at once (all by default: a worker stopping)."""
        for shard in list(self.owned if shards is None else shards):
            self._release(keys=[lease_key(self.game_type, shard)], args=[self.owner])
            self.owned.discard(shard)


def live_workers(client: Client, heartbeat_key: str, now: float | None = None) -> int:
    """Workers whose heartbeat is at most ``LIVE_S`` old (at least this one)."""
    now = time.time() if now is None else now
    return max(1, int(client.zcount(heartbeat_key, now - LIVE_S, "+inf")))
