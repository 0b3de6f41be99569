"""The event store contract: every adapter passes the same suite."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import redis

from shared import keys
from shared.events import (
    GENESIS_HASH,
    ChainWriter,
    EncodedLog,
    NewEvent,
    json_bytes,
    seal,
    verify_chain,
)
from shared.store import AppendResult, DuplicateCommand, EventStore, StaleVersion
from shared.store.memory import MemoryEventStore
from shared.store.redis_log import TAIL_BYTES, RedisEventStore


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> Iterator[EventStore]:
    if request.param == "memory":
        yield MemoryEventStore()
    else:
        yield RedisEventStore(request.getfixturevalue("redis_client"))


def _append(store: EventStore, gid: str, n: int, *, cid: str | None = None, at: int | None = None):
    version, prev = store.head(gid)
    if at is not None:
        version = at
    envs = seal(
        [NewEvent(type="thing_happened", data={"i": i, "s": "é"}) for i in range(n)],
        after_version=version,
        prev_hash=prev,
        command_id=cid,
        seat=0,
        at="2026-11-30T00:00:00Z",
        seed="contract",
    )
    return store.append(gid, envs, expected_version=version, command_id=cid)


def test_empty_stream_has_genesis_head(store: EventStore) -> None:
    assert store.head("g1") == (0, GENESIS_HASH)
    assert store.read("g1") == []


def test_append_then_read_all_and_from_a_version(store: EventStore) -> None:
    assert _append(store, "g1", 3, cid="c1").last == 3
    assert _append(store, "g1", 2, cid="c2").first == 4
    envs = store.read("g1")
    assert [e.version for e in envs] == [1, 2, 3, 4, 5]
    assert [e.version for e in store.read("g1", after=3)] == [4, 5]
    assert [e.version for e in store.read("g1", after=1, limit=2)] == [2, 3]
    assert envs[0].data == {"i": 0, "s": "é"}
    assert verify_chain(envs, "contract") == 5
    assert store.head("g1") == (5, envs[-1].hash)


def test_stale_expected_version_is_refused_and_nothing_is_written(store: EventStore) -> None:
    _append(store, "g1", 2)
    version, prev = store.head("g1")
    envs = seal(
        [NewEvent(type="x", data={})],
        after_version=1,
        prev_hash=prev,
        command_id=None,
        seat=None,
        at="t",
        seed="contract",
    )
    with pytest.raises(StaleVersion):
        store.append("g1", envs, expected_version=1)
    assert len(store.read("g1")) == 2


def test_wrong_prev_hash_is_refused(store: EventStore) -> None:
    _append(store, "g1", 1)
    envs = seal(
        [NewEvent(type="x", data={})],
        after_version=1,
        prev_hash=GENESIS_HASH,
        command_id=None,
        seat=None,
        at="t",
        seed="contract",
    )
    with pytest.raises(StaleVersion):
        store.append("g1", envs, expected_version=1)
    assert store.head("g1")[0] == 1


def test_duplicate_command_id_is_refused_with_its_versions(store: EventStore) -> None:
    _append(store, "g1", 2, cid="c1")
    with pytest.raises(DuplicateCommand) as info:
        _append(store, "g1", 1, cid="c1")
    assert (info.value.first, info.value.last) == (1, 2)
    assert store.applied("g1", "c1") == (1, 2)
    assert store.applied("g1", "nope") is None
    assert store.head("g1")[0] == 2


def test_games_are_independent(store: EventStore) -> None:
    _append(store, "a", 2)
    _append(store, "b", 1)
    assert store.head("a")[0] == 2 and store.head("b")[0] == 1


def test_concurrent_appends_at_one_version_only_one_wins(store: EventStore) -> None:
    _append(store, "g1", 1)
    wins: list[int] = []
    stale: list[int] = []

    def attempt(i: int) -> None:
        try:
            _append(store, "g1", 1, cid=f"c{i}", at=1)
            wins.append(i)
        except StaleVersion:
            stale.append(i)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(stale) == 7
    assert verify_chain(store.read("g1"), "contract") == 2


def test_tampered_event_breaks_the_chain(store: EventStore) -> None:
    _append(store, "g1", 3)
    envs = store.read("g1")
    forged = envs[1].__class__(**{**envs[1].to_dict(), "data": {"i": 99}})
    with pytest.raises(ValueError, match="version 2"):
        verify_chain([envs[0], forged, envs[2]], "contract")


def _whole(n: int, *, seed: str = "contract", tag: str = "") -> EncodedLog:
    """A whole log of ``n`` envelopes from version 1, as a tournament game writes it."""
    writer = ChainWriter(seed, version=0, prev_hash=GENESIS_HASH)
    writer.begin(command_id="create", seat=None, at="2026-11-30T00:00:00Z")
    for i in range(n):
        writer.add("thing_happened", json_bytes({"i": i, "s": f"é\n{tag}"}))
    return writer.log


def test_whole_logs_are_appended_at_once_and_read_like_any_stream(store: EventStore) -> None:
    results = store.append_logs([("w1", _whole(5)), ("w2", _whole(3, tag="b"))],
                                command_id="create")  # fmt: skip
    assert [(r.first, r.last) for r in results] == [(1, 5), (1, 3)]  # type: ignore[union-attr]
    envs = store.read("w1")
    assert [e.version for e in envs] == [1, 2, 3, 4, 5]
    assert envs[2].data == {"i": 2, "s": "é\n"}  # an escaped newline is kept
    assert verify_chain(envs, "contract") == 5
    assert store.read("w1", after=3) == envs[3:]
    assert store.read("w1", after=1, limit=2) == envs[1:3]
    assert store.read("w1", after=5) == []
    assert store.head("w1") == (5, envs[-1].hash)
    assert store.applied("w1", "create") == (1, 5)
    assert store.read("w2")[-1].data == {"i": 2, "s": "é\nb"}


def test_a_whole_log_is_refused_where_a_game_is_stored(store: EventStore) -> None:
    _append(store, "g1", 2)
    store.append_logs([("w1", _whole(2))], command_id="create")
    stale, dup, fresh = store.append_logs(
        [("g1", _whole(4)), ("w1", _whole(4)), ("w3", _whole(1))], command_id="create"
    )
    assert isinstance(stale, StaleVersion) and stale.actual == 2
    assert isinstance(dup, DuplicateCommand) and (dup.first, dup.last) == (1, 2)
    assert isinstance(fresh, AppendResult) and fresh.last == 1
    assert [e.version for e in store.read("g1")] == [1, 2]  # nothing of the refused ones
    assert len(store.read("w1")) == 2


def test_envelopes_appended_after_a_whole_log_are_read_with_it(store: EventStore) -> None:
    store.append_logs([("w1", _whole(3))], command_id="create")
    assert _append(store, "w1", 2, cid="later").first == 4
    envs = store.read("w1")
    assert [e.version for e in envs] == [1, 2, 3, 4, 5]
    assert verify_chain(envs, "contract") == 5
    assert store.read("w1", after=2, limit=2) == envs[2:4]  # across the two
    assert store.read("w1", after=3) == envs[3:]
    assert store.read("w1", after=4) == envs[4:]


def test_a_redis_whole_log_is_one_value(redis_client) -> None:  # type: ignore[no-untyped-def]
    store = RedisEventStore(redis_client)
    store.append_logs([("w1", _whole(40)), ("w2", _whole(2))], command_id="create")
    assert redis_client.type(keys.log("w1")) == b"string"
    assert not redis_client.exists(keys.events("w1"))
    # A server that lost its script cache (a restart) gets the script again.
    redis_client.script_flush()
    assert store.append_logs([("w3", _whole(2)), ("w4", _whole(2))])[1].last == 2  # type: ignore[union-attr]
    assert len(store.read("w4")) == 2


def test_a_batch_refuses_what_one_append_refuses(store: EventStore) -> None:
    writer = ChainWriter("contract", version=1, prev_hash=GENESIS_HASH)  # not from version 1
    writer.add("thing_happened", json_bytes({"i": 0}))
    late = writer.log
    stale, fresh = store.append_logs([("w1", late), ("w2", _whole(2))], command_id="create")
    assert isinstance(stale, StaleVersion) and stale.actual == 1
    assert isinstance(fresh, AppendResult) and fresh.last == 2
    empty = _whole(0)
    with pytest.raises(ValueError, match="nothing to append"):
        store.append_logs([("w3", _whole(1)), ("w4", empty)], command_id="create")
    assert store.head("w1") == (0, GENESIS_HASH) and store.head("w3") == (0, GENESIS_HASH)


def _live(store: EventStore, gid: str, commands: int) -> None:
    """A live game's log: one append per command, of one to three envelopes, some of them
    longer than a read's first ask of the Redis store (``TAIL_BYTES``)."""
    for i in range(commands):
        version, prev = store.head(gid)
        pad = "x" * (TAIL_BYTES + 10 if i % 17 == 5 else i * 37 % 300)
        envs = seal(
            [NewEvent(type="thing_happened", data={"i": i, "k": k, "pad": pad})
             for k in range(1 + i % 3)],
            after_version=version,
            prev_hash=prev,
            command_id=f"c{i}",
            seat=i % 2,
            at="2026-11-30T00:00:00Z",
            seed="contract",
        )  # fmt: skip
        store.append(gid, envs, expected_version=version, command_id=f"c{i}")


def test_every_page_of_a_long_log_is_its_slice(store: EventStore) -> None:
    _live(store, "g1", 40)
    store.append_logs([("w1", _whole(120)), ("w2", _whole(1))], command_id="create")
    _append(store, "w1", 2, cid="later")
    for gid in ("g1", "w1"):
        full = store.read(gid)
        n = store.head(gid)[0]
        assert [e.version for e in full] == list(range(1, n + 1))
        assert verify_chain(full, "contract") == n
        for after in range(n + 2):
            for limit in (None, 0, 1, 2, 3, 8, n):
                end = None if limit is None else after + limit
                assert store.read(gid, after, limit) == full[after:end], (gid, after, limit)


def test_a_redis_log_is_one_string_appended_live_or_written_whole(
    redis_client: redis.Redis,
) -> None:
    """Issue 27: one storage form for every log. A game appended command by command and one
    written whole are each one string under ``keys.log``, beside the head and the command ids
    (no stream), and read page for page as the memory store reads them."""
    redis_store, memory = RedisEventStore(redis_client), MemoryEventStore()
    for store in (redis_store, memory):
        _live(store, "live", 30)
        store.append_logs([("whole", _whole(60)), ("w2", _whole(2))], command_id="create")
        _append(store, "whole", 3, cid="later")
    for gid in ("live", "whole"):
        assert set(redis_client.keys(f"game:{{{gid}}}:*")) == {
            k.encode() for k in (keys.log(gid), keys.head(gid), keys.commands(gid))
        }
        assert redis_client.type(keys.log(gid)) == b"string"
        assert not redis_client.exists(keys.events(gid))
        assert redis_store.head(gid) == memory.head(gid)
        n = memory.head(gid)[0]
        for after in range(n + 2):
            for limit in (None, 0, 1, 2, 5, n):
                assert redis_store.read(gid, after, limit) == memory.read(gid, after, limit)
