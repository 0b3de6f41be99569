"""Event store on Redis streams; one Lua script appends atomically.

The script checks, in one step on the server: the command id was never applied, the stream is
at the expected version with the expected head hash; then it XADDs every envelope with the
entry id ``0-<version>`` (so reading from a version is one XRANGE), moves the head and records
the command id.

A log written whole from version 1 (``append_log`` at version 0: a tournament game) is kept
instead as one string, its entries joined by newlines (``keys.log``): one SET where the stream
costs an XADD and a stream entry per envelope, about half of Redis's CPU for a tournament
game. Envelopes appended after it go to the stream, and ``read`` joins the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import orjson
import redis
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError

from shared import keys
from shared.events import GENESIS_HASH, EncodedLog, Envelope, stored_json
from shared.store.port import AppendResult, DuplicateCommand, StaleVersion, append_each

# Both scripts first refuse a command id applied before (KEYS[3]: the game's command ids).
_REFUSE_SEEN_LUA = """
if cid ~= '' then
  local seen = redis.call('HGET', KEYS[3], cid)
  if seen then return {'dup', seen} end
end
"""

APPEND_LUA = (
    "local cid = ARGV[3]"
    + _REFUSE_SEEN_LUA
    + """
local head = redis.call('HMGET', KEYS[2], 'version', 'hash')
local version = tonumber(head[1] or '0')
local hash = head[2] or ARGV[6]
if version ~= tonumber(ARGV[1]) or hash ~= ARGV[2] then
  return {'stale', tostring(version)}
end
local n = tonumber(ARGV[5])
for i = 1, n do
  redis.call('XADD', KEYS[1], '0-' .. ARGV[5 + 2 * i], 'env', ARGV[6 + 2 * i])
end
local last = version + n
redis.call('HSET', KEYS[2], 'version', last, 'hash', ARGV[4])
if cid ~= '' then
  redis.call('HSET', KEYS[3], cid, (version + 1) .. '-' .. last)
end
return {'ok', tostring(last)}
"""
)


APPEND_WHOLE_LUA = (
    "local cid = ARGV[1]"
    + _REFUSE_SEEN_LUA
    + """
local version = redis.call('HGET', KEYS[2], 'version')
if version then return {'stale', version} end
redis.call('SET', KEYS[4], ARGV[4])
redis.call('HSET', KEYS[2], 'version', ARGV[2], 'hash', ARGV[3])
if cid ~= '' then
  redis.call('HSET', KEYS[3], cid, '1-' .. ARGV[2])
end
return {'ok', ARGV[2]}
"""
)


class RedisEventStore:
    """``EventStore`` on a Redis server, or a cluster: the script's three keys share the
    game's hash tag ``{id}``, so it runs on the one node of that slot (redis-py routes EVALSHA
    by its first key and loads the script on every node when one lacks it)."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self._r = client
        self._append = client.register_script(APPEND_LUA)
        self._whole = client.register_script(APPEND_WHOLE_LUA)

    def append(
        self,
        game_id: str,
        envelopes: Sequence[Envelope],
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """See ``EventStore.append``."""
        if not envelopes:
            raise ValueError("nothing to append")
        first = envelopes[0]
        if first.version != expected_version + 1:
            raise StaleVersion(expected_version, first.version - 1)
        entries = [(env.version, stored_json(env)) for env in envelopes]
        return self._append_entries(
            game_id, entries, first.prev_hash, envelopes[-1].hash, expected_version, command_id
        )

    def append_log(
        self,
        game_id: str,
        log: EncodedLog,
        *,
        expected_version: int,
        command_id: str | None = None,
    ) -> AppendResult:
        """See ``EventStore.append_log``."""
        if not log.raws:
            raise ValueError("nothing to append")
        if log.first != expected_version + 1:
            raise StaleVersion(expected_version, log.first - 1)
        if expected_version == 0:
            return self._append_whole(game_id, log, command_id)
        return self._append_entries(
            game_id, log.entries, log.prev_hash, log.hash, expected_version, command_id
        )

    def _append_entries(
        self,
        game_id: str,
        entries: Sequence[tuple[int, bytes]],
        prev_hash: str,
        last_hash: str,
        expected_version: int,
        command_id: str | None,
    ) -> AppendResult:
        args: list[Any] = [
            expected_version,
            prev_hash,
            command_id or "",
            last_hash,
            len(entries),
            GENESIS_HASH,
        ]
        for version, raw in entries:
            args += (version, raw)
        status, value = self._append(
            keys=[keys.events(game_id), keys.head(game_id), keys.commands(game_id)], args=args
        )
        return self._result(status, value, expected_version, command_id)

    @staticmethod
    def _result(
        status: Any, value: Any, expected_version: int, command_id: str | None
    ) -> AppendResult:
        status = _text(status)
        value = _text(value)
        if status == "dup":
            lo, hi = value.split("-")
            raise DuplicateCommand(command_id or "", int(lo), int(hi))
        if status == "stale":
            raise StaleVersion(expected_version, int(value))
        return AppendResult(expected_version + 1, int(value))

    def append_logs(
        self, logs: Sequence[tuple[str, EncodedLog]], *, command_id: str | None = None
    ) -> list[AppendResult | StaleVersion | DuplicateCommand]:
        """See ``EventStore.append_logs``: on one server, one pipeline of scripts. A cluster
        client appends one log after the other (its pipelines route by key, one per node)."""
        if isinstance(self._r, RedisCluster) or len(logs) < 2:
            return append_each(self, logs, command_id)
        # Refused as ``append_log`` refuses them, before anything is sent.
        if any(not log.raws for _game_id, log in logs):
            raise ValueError("nothing to append")
        out: list[AppendResult | StaleVersion | DuplicateCommand | None] = [
            None if log.first == 1 else StaleVersion(0, log.first - 1) for _game_id, log in logs
        ]
        calls = [_whole_call(game_id, log, command_id)
                 for (game_id, log), known in zip(logs, out, strict=True) if known is None]  # fmt: skip
        if not calls:
            return [r for r in out if r is not None]
        for attempt in range(2):
            # EVALSHA on redis-py's pipeline, one round trip, each error in its reply's place
            # (the pipeline's ``Script`` support would first ask SCRIPT EXISTS: a round trip).
            pipe = self._r.pipeline(transaction=False)
            for call_keys, args in calls:
                pipe.evalsha(self._whole.sha, len(call_keys), *call_keys, *args)
            replies = pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, NoScriptError) for r in replies):
                # A server restarted without its script cache: load it, send them again (a
                # script that ran is refused the second time as a duplicate or stale).
                self._r.script_load(APPEND_WHOLE_LUA)
                continue
            break
        answers = iter(replies)
        for i, known in enumerate(out):
            if known is not None:
                continue
            reply = next(answers)
            if isinstance(reply, Exception):
                raise reply
            try:
                out[i] = self._result(reply[0], reply[1], 0, command_id)
            except (StaleVersion, DuplicateCommand) as refused:
                out[i] = refused
        return [r for r in out if r is not None]

    def _append_whole(self, game_id: str, log: EncodedLog, command_id: str | None) -> AppendResult:
        call_keys, args = _whole_call(game_id, log, command_id)
        status, value = self._whole(keys=call_keys, args=args)
        return self._result(status, value, 0, command_id)

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """See ``EventStore.read``."""
        # Start one entry early: its hash is the first envelope's prev_hash.
        start = max(after, 1)
        count = None if limit is None else limit + (after >= 1)
        # The client has decode_responses off: field names and values are bytes.
        rows = cast(
            "list[tuple[bytes, dict[bytes, bytes]]]",
            self._r.xrange(keys.events(game_id), min=f"0-{start}", max="+", count=count),
        )
        raws = [fields[b"env"] for _id, fields in rows]
        first = int(rows[0][0].split(b"-")[1]) if rows else None
        if first is None or first > start:
            # Versions before the stream's first may be in a log written whole.
            whole = cast("bytes | None", self._r.get(keys.log(game_id)))
            if whole:
                parts = whole.split(b"\n")
                raws = parts[start - 1 : len(parts) if first is None else first - 1] + raws
                if count is not None:
                    del raws[count:]
        docs = [orjson.loads(raw) for raw in raws]
        prev = GENESIS_HASH
        if after >= 1:
            if not docs or docs[0]["version"] != after:
                return []
            prev = docs.pop(0)["hash"]
        out = []
        for doc in docs:
            doc["prev_hash"] = prev
            prev = doc["hash"]
            out.append(Envelope.from_dict(doc))
        return out

    def head(self, game_id: str) -> tuple[int, str]:
        """See ``EventStore.head``."""
        version, hash_ = self._r.hmget(keys.head(game_id), "version", "hash")
        if version is None:
            return 0, GENESIS_HASH
        return int(version), _text(hash_)

    def applied(self, game_id: str, command_id: str) -> tuple[int, int] | None:
        """See ``EventStore.applied``."""
        seen = self._r.hget(keys.commands(game_id), command_id)
        if seen is None:
            return None
        lo, hi = _text(seen).split("-")
        return int(lo), int(hi)


def _whole_call(
    game_id: str, log: EncodedLog, command_id: str | None
) -> tuple[list[str], list[Any]]:
    """The keys and arguments of ``APPEND_WHOLE_LUA`` for a whole log."""
    if log.first != 1:
        raise ValueError("a log written whole holds versions 1 to n")
    # Entries are compact JSON, which escapes every newline (``EncodedLog``): one per line.
    whole = b"\n".join(log.raws)
    last = len(log.raws)
    call_keys = [keys.events(game_id), keys.head(game_id), keys.commands(game_id),
                 keys.log(game_id)]  # fmt: skip
    return call_keys, [command_id or "", last, log.hash, whole]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
