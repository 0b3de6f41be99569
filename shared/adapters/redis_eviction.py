"""Moving finished games out of Redis (``shared.app.archiving.Evictor``), a page at a time.

``load`` reads a page of games (entry, log, head) in one pipeline. ``evict`` removes each game's
own keys by a script that first checks its head is still at the version the mover read (a game
that moved on in between keeps everything), all the page's scripts in one pipeline; a game's
keys share its hash tag, so each script touches one slot. Its entries in the global indexes
(each its own slot on a cluster) go next, in one pipeline; a kill between the two leaves an
index entry without keys, which the next sweep drops (``forget``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared import keys
from shared.adapters.redis import META_FIELDS, Client, _text, entry_of
from shared.app.archiving import Evicting, Loaded
from shared.events import GENESIS_HASH
from shared.store.redis_log import envelopes_of_entries

# KEYS: the game's head first, then every other key of its own. ARGV: the version it must be at.
EVICT_LUA = """
local version = redis.call('HGET', KEYS[1], 'version')
if tonumber(version or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', unpack(KEYS))
return 1
"""


class RedisEvictor:
    """``Evictor`` on a Redis client."""

    def __init__(self, client: Client) -> None:
        self._r = client
        self._evict = client.register_script(EVICT_LUA)

    def finished_before(self, epoch: float, *, after: float, limit: int) -> list[tuple[str, float]]:
        """See ``Evictor.finished_before``."""
        low = "-inf" if after == float("-inf") else f"({after!r}"
        found: list[tuple[Any, float]] = self._r.zrangebyscore(  # type: ignore[assignment]
            keys.GAMES_FINISHED, low, repr(epoch), start=0, num=limit, withscores=True
        )
        return [(_text(gid), float(score)) for gid, score in found]

    def load(self, game_ids: Sequence[str]) -> list[Loaded | None]:
        """See ``Evictor.load``: one pipeline for the page."""
        pipe = self._r.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hmget(keys.meta(gid), *META_FIELDS)
            pipe.get(keys.log(gid))
            pipe.hmget(keys.head(gid), "version", "hash")
        replies = pipe.execute()
        out: list[Loaded | None] = []
        for i, gid in enumerate(game_ids):
            meta, log, (version, hash_) = replies[3 * i : 3 * i + 3]
            entry = entry_of(gid, meta)
            if entry is None:
                out.append(None)
                continue
            envelopes = envelopes_of_entries(log.split(b"\n")) if log else []
            head = (0, GENESIS_HASH) if version is None else (int(version), _text(hash_))
            out.append(Loaded(entry=entry, envelopes=envelopes, head=head))
        return out

    def evict(self, games: Sequence[Evicting]) -> list[bool]:
        """See ``Evictor.evict``: the page's scripts in one pipeline, then ``forget``."""
        if not games:
            return []
        pipe = self._r.pipeline(transaction=False)
        for g in games:
            own = [
                keys.head(g.game_id),
                keys.log(g.game_id),
                keys.events(g.game_id),
                keys.commands(g.game_id),
                keys.meta(g.game_id),
                keys.public(g.game_id),
                *(keys.view(g.game_id, s) for s in range(max(g.seats, 0))),
            ]
            self._evict(keys=own, args=[g.version], client=pipe)
        done = [bool(r) for r in pipe.execute()]
        self.forget([(g.game_id, g.game) for g, ok in zip(games, done, strict=True) if ok])
        return done

    def forget(self, games: Sequence[tuple[str, str | None]]) -> None:
        """See ``Evictor.forget``."""
        if not games:
            return
        ids = [gid for gid, _ in games]
        pipe = self._r.pipeline(transaction=False)
        pipe.zrem(keys.GAMES, *ids)
        pipe.zrem(keys.GAMES_LOBBY, *ids)
        pipe.hdel(keys.RESULTS, *ids)
        for gid, game in games:
            if game is not None:
                pipe.srem(keys.rated(game), gid)
        # Last: while a game is listed finished a sweep will find it again.
        pipe.zrem(keys.GAMES_FINISHED, *ids)
        pipe.execute()
