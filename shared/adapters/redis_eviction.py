"""Removing a finished game from Redis once it is archived (``shared.app.archiving.Evictor``).

A game's own keys share its hash tag, so one transaction removes them all, watched on its head:
if a command appended to the game after the mover read it, nothing is removed. Its entries in
the global indexes (each its own slot on a cluster) go next, in one pipeline; a kill between
the two leaves an index entry without keys, which the next sweep drops (``forget``).
"""

from __future__ import annotations

from typing import Any

import redis

from shared import keys
from shared.adapters.redis import Client, _text


class RedisEvictor:
    """``Evictor`` on a Redis client."""

    def __init__(self, client: Client) -> None:
        self._r = client

    def finished_before(self, epoch: float, *, after: float, limit: int) -> list[tuple[str, float]]:
        """See ``Evictor.finished_before``."""
        low = "-inf" if after == float("-inf") else f"({after!r}"
        found: list[tuple[Any, float]] = self._r.zrangebyscore(  # type: ignore[assignment]
            keys.GAMES_FINISHED, low, repr(epoch), start=0, num=limit, withscores=True
        )
        return [(_text(gid), float(score)) for gid, score in found]

    def evict(self, game_id: str, *, game: str, seats: int, version: int) -> bool:
        """See ``Evictor.evict``."""
        head = keys.head(game_id)
        own = [
            keys.log(game_id),
            keys.events(game_id),
            head,
            keys.commands(game_id),
            keys.meta(game_id),
            keys.public(game_id),
            *(keys.view(game_id, s) for s in range(max(seats, 0))),
        ]
        with self._r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(head)
                found = pipe.hget(head, "version")
                if int(found or 0) != version:
                    pipe.unwatch()
                    return False
                pipe.multi()
                pipe.delete(*own)
                pipe.execute()
            except redis.WatchError:
                return False
        self.forget(game_id, game=game)
        return True

    def forget(self, game_id: str, *, game: str | None) -> None:
        """See ``Evictor.forget``."""
        pipe = self._r.pipeline(transaction=False)
        pipe.zrem(keys.GAMES, game_id)
        pipe.zrem(keys.GAMES_LOBBY, game_id)
        pipe.hdel(keys.RESULTS, game_id)
        if game is not None:
            pipe.srem(keys.rated(game), game_id)
        # Last: while a game is listed finished a sweep will find it again.
        pipe.zrem(keys.GAMES_FINISHED, game_id)
        pipe.execute()
