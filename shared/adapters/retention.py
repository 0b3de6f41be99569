"""Retention of the command streams: an entry every worker has acknowledged is trimmed.

The events are the record (each envelope carries the command that caused it); a command
stream entry only carries a command to its worker. Kept: every entry not yet delivered to the
consumer group and every one delivered but not acknowledged (a crashed worker's, to be claimed),
so trimming never loses a command. Dead letters keep their own stream.
"""

from __future__ import annotations

from typing import Any

import redis

from shared import keys

GROUP = "workers"
Client = redis.Redis | redis.RedisCluster  # every call here names one key


def trim_acknowledged(client: Client, stream: str, *, exact: bool = False) -> int:
    """Trim ``stream`` below its oldest entry still needed by group ``workers``; returns how
    many entries were removed. ``exact``: trim to the entry (else by whole radix-tree nodes,
    as Redis prefers: cheaper, and the rest goes at a later trim)."""
    try:
        groups = client.xinfo_groups(stream)
    except redis.ResponseError:
        return 0  # no such stream yet
    group = next((g for g in groups if _text(g.get("name")) == GROUP), None)
    if group is None:
        return 0  # no consumer group: nothing has been read, keep everything
    keep_from = _next_id(_text(group["last-delivered-id"]))
    if int(group.get("pending", 0)):
        summary = client.xpending(stream, GROUP)
        oldest = summary.get("min") if summary else None
        if oldest is None:
            # XINFO saw pending entries and XPENDING names none: the two replies disagree
            # (entries acknowledged in between, or a Redis restarted in between from an older
            # snapshot, where what XINFO called delivered may be undelivered again). Which
            # entries are still needed is unknown, so this pass trims nothing; the next reads
            # both again.
            return 0
        keep_from = min(keep_from, _text(oldest), key=_id_key)
    if keep_from == "0-1":
        return 0
    return int(client.xtrim(stream, minid=keep_from, approximate=not exact))


def trim_game_type(client: Client, game_type: str, shards: int) -> int:
    """``trim_acknowledged`` on every shard of a game type's command streams."""
    return sum(trim_acknowledged(client, keys.command_stream(game_type, s)) for s in range(shards))


def _next_id(entry_id: str) -> str:
    ms, _, seq = entry_id.partition("-")
    return f"{ms}-{int(seq or 0) + 1}"


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
