"""Event store on Redis: a game's log is one string, appended by one Lua script.

The log (``keys.log``) holds the stored entries of versions 1..n (``stored_json``: compact
JSON, never a raw newline) joined by newlines, beside the head (``keys.head``) and the command
ids (``keys.commands``). The script checks, in one step on the server: the command id was never
applied, the log is at the expected version with the expected head hash; then it writes the
new entries (SET for the first, APPEND after them: amortized O(1), Redis doubles the room of a
growing string), moves the head and records the command id. A live game appends command by
command, a tournament game its whole log at once (``append_logs``: the same script, pipelined).

``read`` from version 0 GETs the log and splits it. A read from a later version is mostly of
the newest entries (a feed's next message, a cached game's reload): it asks for the log's last
``TAIL_BYTES`` first, and GETs the whole log only when that tail begins after the version.

Before issue 27 a live game's envelopes were a stream (one XADD each, ``keys.events``) and only
a log written whole was a string. Against that layout (BENCHMARKS.md, "A game's log stored one
way"): a live game's appends cost Redis about a seventh less CPU, a cold load a third of it, a
whole log the same; a live game's log takes about a fifth more memory (the room APPEND leaves).
Logs written in the old layout are not read, and no tool converts them: a store from before
this change starts afresh.
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

# KEYS: the log, the head, the command ids. ARGV: expected version, the first new entry's
# prev_hash, command id ('' for none), the last new entry's hash, how many entries, the genesis
# hash, the entries (joined by newlines, after a newline unless the log is empty).
APPEND_LUA = """
local cid = ARGV[3]
if cid ~= '' then
  local seen = redis.call('HGET', KEYS[3], cid)
  if seen then return {'dup', seen} end
end
local head = redis.call('HMGET', KEYS[2], 'version', 'hash')
local version = tonumber(head[1] or '0')
local hash = head[2] or ARGV[6]
if version ~= tonumber(ARGV[1]) or hash ~= ARGV[2] then
  return {'stale', tostring(version)}
end
if version == 0 then
  redis.call('SET', KEYS[1], ARGV[7])
else
  redis.call('APPEND', KEYS[1], ARGV[7])
end
local last = version + tonumber(ARGV[5])
redis.call('HSET', KEYS[2], 'version', last, 'hash', ARGV[4])
if cid ~= '' then
  redis.call('HSET', KEYS[3], cid, (version + 1) .. '-' .. last)
end
return {'ok', tostring(last)}
"""


# What a read from a version asks for first: the log's last bytes (some 15 Fox entries).
TAIL_BYTES = 4096


class RedisEventStore:
    """``EventStore`` on a Redis server, or a cluster: the script's three keys share the
    game's hash tag ``{id}``, so it runs on the one node of that slot (redis-py routes EVALSHA
    by its first key and loads the script on every node when one lacks it)."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self._r = client
        self._append = client.register_script(APPEND_LUA)

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
        raws = [stored_json(env) for env in envelopes]
        call_keys, args = _call(game_id, raws, first.prev_hash, envelopes[-1].hash,
                                expected_version, command_id)  # fmt: skip
        status, value = self._append(keys=call_keys, args=args)
        return _result(status, value, expected_version, command_id)

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
        call_keys, args = _call(game_id, log.raws, log.prev_hash, log.hash, expected_version,
                                command_id)  # fmt: skip
        status, value = self._append(keys=call_keys, args=args)
        return _result(status, value, expected_version, command_id)

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
        calls = [_call(game_id, log.raws, log.prev_hash, log.hash, 0, command_id)
                 for (game_id, log), known in zip(logs, out, strict=True) if known is None]  # fmt: skip
        if not calls:
            return [r for r in out if r is not None]
        for attempt in range(2):
            # EVALSHA on redis-py's pipeline, one round trip, each error in its reply's place
            # (the pipeline's ``Script`` support would first ask SCRIPT EXISTS: a round trip).
            pipe = self._r.pipeline(transaction=False)
            for call_keys, args in calls:
                pipe.evalsha(self._append.sha, len(call_keys), *call_keys, *args)
            replies = pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, NoScriptError) for r in replies):
                # A server restarted without its script cache: load it, send them again (a
                # script that ran is refused the second time as a duplicate or stale).
                self._r.script_load(APPEND_LUA)
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
                out[i] = _result(reply[0], reply[1], 0, command_id)
            except (StaleVersion, DuplicateCommand) as refused:
                out[i] = refused
        return [r for r in out if r is not None]

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """See ``EventStore.read``."""
        # Start one entry early: its hash is the first envelope's prev_hash.
        start = max(after, 1)
        raws = self._entries(game_id, start, None if limit is None else after + limit)
        return envelopes_of_entries(raws, after)

    def _entries(self, game_id: str, first: int, last: int | None) -> list[bytes]:
        """The stored entries of versions ``first`` to ``last`` (None: to the newest)."""
        key = keys.log(game_id)
        if first > 1:
            # A read from a version is mostly of the newest entries (a feed's next message, a
            # cached game's reload): the log's tail is asked first, the whole log only when the
            # tail begins after ``first``.
            tail = cast("bytes", self._r.getrange(key, -TAIL_BYTES, -1))
            if not tail:
                return []
            lines = tail.split(b"\n")
            if len(tail) == TAIL_BYTES:
                del lines[0]  # the tail may begin within an entry
            if lines:
                oldest = int(orjson.loads(lines[0])["version"])
                if oldest <= first:
                    return lines[first - oldest : None if last is None else last - oldest + 1]
        log = cast("bytes | None", self._r.get(key))
        return log.split(b"\n")[first - 1 : last] if log else []

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


def envelopes_of_entries(raws: Sequence[bytes], after: int = 0) -> list[Envelope]:
    """The envelopes of stored entries (a log's lines from version ``max(after, 1)``: from
    ``after``, whose entry gives the first envelope's prev_hash, and is not returned)."""
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


def _call(
    game_id: str,
    raws: Sequence[bytes],
    prev_hash: str,
    last_hash: str,
    expected_version: int,
    command_id: str | None,
) -> tuple[list[str], list[Any]]:
    """The keys and arguments of ``APPEND_LUA`` for entries after ``expected_version``."""
    # Entries are compact JSON, which escapes every newline: one per line. Past the first
    # append the log is not empty, and the new entries start on a line of their own.
    joined = b"\n".join([b"", *raws] if expected_version else raws)
    call_keys = [keys.log(game_id), keys.head(game_id), keys.commands(game_id)]
    args: list[Any] = [expected_version, prev_hash, command_id or "", last_hash, len(raws),
                       GENESIS_HASH, joined]  # fmt: skip
    return call_keys, args


def _result(status: Any, value: Any, expected_version: int, command_id: str | None) -> AppendResult:
    """The script's reply as the port says: an AppendResult, or the refusal raised."""
    status = _text(status)
    value = _text(value)
    if status == "dup":
        lo, hi = value.split("-")
        raise DuplicateCommand(command_id or "", int(lo), int(hi))
    if status == "stale":
        raise StaleVersion(expected_version, int(value))
    return AppendResult(expected_version + 1, int(value))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
