"""The layout of the Redis store, its version, and the migration from older layouts (issue 36).

Redis records the layout its keys are in (``store:format``):

1. before issue 27 a live game's envelopes were a stream (``game:{id}:events``: entry ``0-<v>``,
   field ``env``, the stored entry), after a log written whole as one string (``game:{id}:log``,
   entries joined by newlines) for its first versions, if any;
2. now every game's log is one string (``shared.store.redis_log``).

A build migrates an older store (``tabletop migrate``, and every stream worker on start): each
game still in streams gets its log rewritten as one string, in one transaction watched on its
keys (a game is converted whole or not at all, and twice is once), then the version is
written. It can be stopped and run again at any point. A store of a newer layout than this
build's is refused (``StoreFormatError``, one line naming the versions): an older build would
read it wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis

from shared import keys
from shared.adapters.redis_health import store_full

log = logging.getLogger(__name__)

FORMAT_KEY = "store:format"
CURRENT = 2
STREAMS = 1  # the layout before issue 27
STREAM_PATTERN = "game:{*}:events"


@dataclass(slots=True)
class Migrated:
    """What a migration did."""

    found: int = 0  # games whose log was (still) in a stream
    converted: int = 0  # converted now
    version_before: int | None = None


class StoreFormatError(RuntimeError):
    """The store is in a layout this build cannot use; the message is one line for a person."""


class StoreUnreachable(RuntimeError):
    """Redis did not answer; the message is one line for a person."""


def migrate_at(url: str) -> Migrated:
    """``migrate`` on the Redis at ``url`` (for the command line, which holds no client);
    StoreFormatError, or StoreUnreachable when it does not answer."""
    try:
        return migrate(redis.Redis.from_url(url))
    except redis.RedisError as exc:
        raise StoreUnreachable(f"cannot reach Redis at {url}: {exc}") from None


def stored_version(client: Any) -> int | None:
    """The layout version Redis records (None: none recorded: an empty store, or one from
    before versions were recorded)."""
    raw = client.get(FORMAT_KEY)
    return None if raw is None else int(raw)


def check(client: Any) -> int | None:
    """The recorded version; StoreFormatError when it is newer than this build's."""
    found = stored_version(client)
    if found is not None and found > CURRENT:
        raise StoreFormatError(
            f"the Redis store is in layout version {found}, newer than this build's {CURRENT}: "
            "run the newer tabletop that wrote it (an older one would misread its games)"
        )
    return found


def migrate(client: Any, *, progress: Callable[[int], None] | None = None) -> Migrated:
    """Bring the store to ``CURRENT``: convert every game whose log is in a stream, then record
    the version. Idempotent and resumable; StoreFormatError for a newer store."""
    done = Migrated(version_before=check(client))
    if done.version_before == CURRENT:
        return done
    for raw_key in client.scan_iter(match=STREAM_PATTERN, count=1000, _type="stream"):
        key = raw_key.decode() if isinstance(raw_key, bytes) else str(raw_key)
        game_id = key[len("game:{") : -len("}:events")]
        done.found += 1
        if convert(client, game_id):
            done.converted += 1
        if progress is not None:
            progress(done.found)
    try:
        client.set(FORMAT_KEY, str(CURRENT))
    except redis.ResponseError as exc:
        if not store_full(exc):
            raise
        # A full Redis takes no new key: the layout is this build's all the same (nothing is
        # left to convert), and the next start records it. A process must not stop on it.
        log.info(
            "store layout %s not recorded yet (no room for the key); the next start does", CURRENT
        )
    if done.found:
        log.info("store migrated to layout %s: %s games' logs converted", CURRENT, done.converted)
    return done


def convert(client: Any, game_id: str) -> bool:
    """Rewrite one game's streamed log as one string (with the part written whole first, if
    any); False when there was nothing to convert (done by a run before)."""
    stream, whole = keys.events(game_id), keys.log(game_id)
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(stream, whole)
                rows = pipe.xrange(stream, "-", "+")
                if not rows:
                    pipe.unwatch()
                    return False
                prefix = pipe.get(whole)
                first = int(rows[0][0].split(b"-")[1])
                entries = prefix.split(b"\n")[: first - 1] if prefix else []
                if len(entries) != first - 1:
                    raise StoreFormatError(
                        f"game {game_id}: its stream starts at version {first} and no log holds "
                        "the versions before it"
                    )
                entries += [fields[b"env"] for _id, fields in rows]
                pipe.multi()
                pipe.set(whole, b"\n".join(entries))
                pipe.delete(stream)
                pipe.execute()
                return True
            except redis.WatchError:
                continue  # written to meanwhile: read it again
