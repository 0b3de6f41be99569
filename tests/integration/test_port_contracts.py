"""One contract suite per port; the in-memory and the Redis adapters both pass it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
import redis

from shared.adapters.memory import memory_ports
from shared.adapters.redis import redis_ports
from shared.app.ports import GameEntry, Ports


@pytest.fixture(params=["memory", "redis"])
def ports(request: pytest.FixtureRequest) -> Iterator[Ports]:
    if request.param == "memory":
        yield memory_ports()
        return
    client: redis.Redis = request.getfixturevalue("redis_client")
    yield redis_ports(client)


def _entry(gid: str, tokens: tuple[str | None, ...] = ("h0", None)) -> GameEntry:
    return GameEntry(
        game_id=gid,
        game="fox",
        seed="s3cret",
        shard=0,
        created_at="2026-01-01T00:00:00.000Z",
        token_hashes=tokens,
    )


def test_directory_registers_finds_lists_and_updates_games(ports: Ports) -> None:
    d = ports.directory
    assert d.get("nope") is None
    d.register(_entry("g1"), 10.0)
    d.register(_entry("g2"), 20.0)
    assert d.get("g1") == _entry("g1")
    assert d.list_games() == ["g1", "g2"]
    assert d.list_games(offset=1, limit=5) == ["g2"]
    d.set_token_hashes("g1", ["h0", "h1"])
    assert d.get("g1").token_hashes == ("h0", "h1")  # type: ignore[union-attr]
    assert d.list_games(finished=True) == []
    d.mark_finished("g2", 30.0)
    d.mark_finished("g2", 40.0)
    d.mark_finished("g1", 35.0)
    assert d.list_games(finished=True) == ["g2", "g1"]  # the first time counts


def test_directory_lists_a_tournaments_games_apart_from_the_lobby(ports: Ports) -> None:
    d = ports.directory
    d.register(_entry("g1"), 10.0)
    d.register_all([(replace(_entry(f"t-{i}"), tournament="t"), 20.0 + i) for i in range(3)])
    d.register(_entry("g2"), 30.0)
    assert d.get("t-1") == replace(_entry("t-1"), tournament="t")
    assert d.get("g1").tournament == ""  # type: ignore[union-attr]
    assert d.list_games() == ["g1", "t-0", "t-1", "t-2", "g2"]  # every game, for the tools
    assert d.list_games(lobby=True) == ["g1", "g2"]
    assert d.list_games(lobby=True, newest=True, offset=1, limit=5) == ["g1"]


def test_an_upgraded_redis_directory_keeps_its_older_games_in_the_lobby(
    redis_client: redis.Redis,
) -> None:
    """Games registered before ``games:lobby`` existed (meta and ``games:all`` only) are in
    the lobby's list from its first read on; a tournament's games are not."""
    d = redis_ports(redis_client).directory
    d.register(_entry("old1"), 10.0)
    d.register_all([(replace(_entry("t-0"), tournament="t"), 15.0)])
    d.register(_entry("old2"), 20.0)
    redis_client.delete("games:lobby")  # what a store from before the lobby index holds
    fresh = redis_ports(redis_client).directory
    assert fresh.list_games(lobby=True) == ["old1", "old2"]
    fresh.register(_entry("new"), 30.0)
    assert fresh.list_games(lobby=True, newest=True) == ["new", "old2", "old1"]


def test_directory_keeps_the_first_result(ports: Ports) -> None:
    d = ports.directory
    assert d.result("g") is None
    assert d.record_result("g", {"winners": [0]}) is True
    assert d.record_result("g", {"winners": [1]}) is False
    assert d.result("g") == {"winners": [0]}


def test_directory_registers_a_batch_and_keeps_first_results_written_in_a_unit(
    ports: Ports,
) -> None:
    d = ports.directory
    d.register(_entry("g0"), 5.0)
    d.register_all([(_entry("g2"), 20.0), (_entry("g1"), 10.0)])
    assert d.get("g2") == _entry("g2")
    assert d.list_games() == ["g0", "g1", "g2"]  # by each one's own time
    d.record_result("g1", {"winners": [0]})
    with ports.unit():
        d.record_results({"g1": {"winners": [1]}, "g2": {"winners": [1]}})
    assert d.results(["g2", "nope", "g1"]) == [{"winners": [1]}, None, {"winners": [0]}]


def test_read_models_replace_every_projection(ports: Ports) -> None:
    rm = ports.read_models
    assert rm.read("g", None) is None and rm.read("g", 0) is None
    rm.write("g", ['{"seat":0}', '{"seat":1}'], '{"public":true}')
    assert rm.read("g", 1) == b'{"seat":1}'
    assert rm.read("g", None) == b'{"public":true}'
    with ports.unit():  # batched writes land when the block ends
        rm.write("g", ['{"v":2}', '{"v":2}'], '{"v":2}')
    assert rm.read("g", 0) == b'{"v":2}'


def test_a_failed_unit_writes_nothing_on_redis_and_at_once_in_memory(ports: Ports) -> None:
    with pytest.raises(RuntimeError), ports.unit():
        ports.read_models.write("g", ['{"v":1}'], '{"v":1}')
        raise RuntimeError("boom")
    # Memory applies writes as they come; Redis discards the pipeline of a failed block.
    expected = b'{"v":1}' if ports.client is None else None
    assert ports.read_models.read("g", None) == expected


def test_command_bus_keeps_the_first_pending_and_hands_over_the_reply(ports: Ports) -> None:
    bus = ports.bus
    fields = {"id": "c1", "game": "g", "seat": "0", "body": "{}", "ev": ""}
    bus.put("fox", 0, fields, game_id="g", command_id="c1", pending='{"status":"pending"}')
    assert bus.outcome("g", "c1") == '{"status":"pending"}'
    bus.complete("g", "c1", '{"status":"accepted"}', "reply\nview")
    # A resent id keeps its outcome.
    bus.put("fox", 0, fields, game_id="g", command_id="c1", pending='{"status":"pending"}')
    assert bus.outcome("g", "c1") == '{"status":"accepted"}'
    assert bus.wait_reply("g", "c1", 1.0) == b"reply\nview"
    assert bus.wait_reply("g", "c2", 0.05) is None


def test_a_waiting_client_gets_a_reply_sent_later(ports: Ports) -> None:
    got: list[bytes | None] = []
    waiter = threading.Thread(target=lambda: got.append(ports.bus.wait_reply("g", "c", 10)))
    waiter.start()
    ports.bus.complete("g", "c", "{}", "late")
    waiter.join(15)
    assert got == [b"late"]


def test_put_and_wait_queues_the_command_and_returns_its_reply(ports: Ports) -> None:
    bus = ports.bus
    fields = {"id": "c9", "game": "g", "seat": "0", "body": "{}", "ev": ""}
    worker = threading.Timer(0.2, lambda: bus.complete("g", "c9", '{"s":"a"}', "done"))
    worker.start()
    got = bus.put_and_wait(
        "fox", 0, fields, game_id="g", command_id="c9", pending='{"status":"pending"}',
        timeout=10,
    )  # fmt: skip
    worker.join(15)
    assert got == b"done"
    assert bus.outcome("g", "c9") == '{"s":"a"}'
    # Nobody answers: None once the wait is over, and the command stays queued and pending.
    assert bus.put_and_wait(
        "fox", 0, {**fields, "id": "c10"}, game_id="g", command_id="c10",
        pending='{"status":"pending"}', timeout=0.05,
    ) is None  # fmt: skip
    assert bus.outcome("g", "c10") == '{"status":"pending"}'
    if ports.client is not None:
        ids = [f[b"id"] for _, f in ports.client.xrange("cmd:{fox}:0")]
        assert ids[-2:] == [b"c9", b"c10"]
        assert ports.client.ping()  # the connection it used is clean for the next command


def test_send_once_is_true_only_the_first_time(ports: Ports) -> None:
    assert ports.bus.was_sent("g", "bot-1-5") is False
    assert ports.bus.send_once("g", "bot-1-5", 60) is True
    assert ports.bus.was_sent("g", "bot-1-5") is True
    assert ports.bus.send_once("g", "bot-1-5", 60) is False
    assert ports.bus.send_once("g", "bot-1-6", 60) is True


def test_notifier_delivers_announcements_to_subscribers(ports: Ports) -> None:
    sub = ports.notifier.subscribe("g")
    try:
        deadline = time.monotonic() + 10
        got = None
        while got is None and time.monotonic() < deadline:  # a subscription takes a moment
            ports.notifier.announce("g", 7)
            got = sub.next(0.2)
        assert got == 7
        ports.notifier.announce("other", 9)
        assert sub.next(0.1) in (None, 7)  # never another game's version
    finally:
        sub.close()


def test_clock_tells_time_and_due_deadlines(ports: Ports) -> None:
    c = ports.clock
    assert c.now().endswith("Z") and abs(c.epoch() - time.time()) < 60
    c.set_deadline("g:0", 100.0)
    c.set_deadline("g:1", 50.0)
    c.set_deadline("g:2", 500.0)
    assert c.due(200.0) == ["g:1", "g:0"]
    c.set_deadline("g:1", 300.0)  # moved
    c.cancel_deadline("g:0")
    assert c.due(200.0) == []
    assert c.due(1000.0, limit=1) == ["g:1"]


def test_tournaments_store_list_flag_and_fold_once(ports: Ports) -> None:
    t = ports.tournaments
    assert t.get("t0") is None and t.list_ids() == []
    t.create("t1", {"games": 3}, {"done": 0}, "2026-01-01T00:00:00.000Z", 1.0)
    t.create("t2", {"games": 1}, {"done": 0}, "2026-01-01T00:00:01.000Z", 2.0)
    assert t.list_ids() == ["t1", "t2"] and t.list_ids(offset=1) == ["t2"]
    entry = t.get("t1")
    assert entry is not None and entry.plan == {"games": 3} and not entry.started
    t.mark_started("t1")
    assert t.get("t1").started and not t.cancelled("t1")  # type: ignore[union-attr]

    def bump(tally: dict) -> None:
        tally["done"] += 1

    assert t.fold("t1", {2: bump}) == [2]
    assert t.fold("t1", {2: bump}) == []  # once per game
    assert t.fold("t1", {0: bump, 2: bump}) == [0]  # a batch folds only its new games
    assert t.folded("t1", [0, 1, 2]) == [True, False, True]
    assert t.get("t1").tally == {"done": 2}  # type: ignore[union-attr]
    assert t.fold("nope", {0: bump}) == []
    t.cancel("t1")
    assert t.cancelled("t1") and t.get("t1").cancelled  # type: ignore[union-attr]


def test_tournament_folds_racing_each_other_all_count_once(ports: Ports) -> None:
    t = ports.tournaments
    t.create("race", {"games": 200}, {"done": 0, "seen": []}, "2026-01-01T00:00:00.000Z", 1.0)
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        try:
            for i in range(0, 200, 4):  # every thread tries every game, in batches of 4
                batch = [(i + j + offset) % 200 for j in range(4)]

                def add(tally: dict, index: int) -> None:
                    tally["done"] += 1
                    tally["seen"].append(index)

                t.fold("race", {k: (lambda tally, k=k: add(tally, k)) for k in batch})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k * 50,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors
    tally = t.get("race").tally  # type: ignore[union-attr]
    assert tally["done"] == 200 and sorted(tally["seen"]) == list(range(200))


def _bump(tally: dict) -> None:
    tally["done"] += 1


def test_a_fold_finishes_once_after_the_batchs_updates_and_stores_what_finish_wrote(
    ports: Ports,
) -> None:
    t = ports.tournaments
    t.create("t", {"games": 4}, {"done": 0}, "2026-01-01T00:00:00.000Z", 1.0)
    seen: list[dict] = []

    def finish(tally: dict) -> None:
        seen.append(dict(tally))
        tally["finished"] = tally.get("finished", 0) + 1
        tally["last"] = tally["done"]

    assert t.fold("t", {0: _bump, 1: _bump}, finish) == [0, 1]
    assert seen == [{"done": 2}]  # once, after both games
    assert t.get("t").tally == {"done": 2, "finished": 1, "last": 2}  # type: ignore[union-attr]
    assert t.fold("t", {1: _bump, 3: _bump}, finish) == [3]
    assert seen[1:] == [{"done": 3, "finished": 1, "last": 2}]
    assert t.get("t").tally == {"done": 3, "finished": 2, "last": 3}  # type: ignore[union-attr]


def test_a_fold_with_no_fresh_game_does_not_finish(ports: Ports) -> None:
    t = ports.tournaments
    t.create("t", {"games": 2}, {"done": 0}, "2026-01-01T00:00:00.000Z", 1.0)
    assert t.fold("t", {0: _bump}) == [0]
    calls: list[dict] = []
    assert t.fold("t", {0: _bump}, calls.append) == []  # folded already
    assert t.fold("t", {}, calls.append) == []
    assert t.fold("nope", {0: _bump}, calls.append) == []
    assert calls == []
    assert t.get("t").tally == {"done": 1}  # type: ignore[union-attr]


@pytest.mark.parametrize("failing", ["update", "finish"])
def test_a_fold_that_raises_leaves_the_tally_and_the_folded_marks_as_they_were(
    ports: Ports, failing: str
) -> None:
    t = ports.tournaments
    t.create("t", {"games": 3}, {"done": 0, "seen": []}, "2026-01-01T00:00:00.000Z", 1.0)

    def add(tally: dict) -> None:
        tally["done"] += 1
        tally["seen"].append(tally["done"])

    assert t.fold("t", {0: add}) == [0]

    def boom(tally: dict) -> None:
        add(tally)  # a nested change first: nothing of it may stay
        raise RuntimeError("boom")

    updates = {1: add, 2: boom if failing == "update" else add}
    with pytest.raises(RuntimeError, match="boom"):
        t.fold("t", updates, boom if failing == "finish" else None)
    assert t.get("t").tally == {"done": 1, "seen": [1]}  # type: ignore[union-attr]
    assert t.folded("t", [0, 1, 2]) == [True, False, False]
    # Nothing half done is left either (on Redis no WATCH or MULTI left open on a connection):
    # the same games fold next time.
    assert t.fold("t", {1: add, 2: add}) == [1, 2]
    assert t.get("t").tally == {"done": 3, "seen": [1, 2, 3]}  # type: ignore[union-attr]


def test_ratings_rate_each_game_once(ports: Ports) -> None:
    r = ports.ratings
    assert r.board("fox") == {}

    def win(board: dict) -> None:
        row = board.setdefault("random", {"mu": 25.0, "sigma": 8.0, "games": 0})
        row["games"] += 1

    assert r.rate("fox", {"g1": win}) == ["g1"]
    assert r.rate("fox", {"g1": win}) == []
    assert r.rate("fox", {"g1": win, "g2": win}) == ["g2"]
    assert r.board("fox") == {"random": {"mu": 25.0, "sigma": 8.0, "games": 2}}
    assert r.board("skull") == {}


def test_idempotency_claims_once_and_keeps_the_response(ports: Ports) -> None:
    store = ports.idempotency
    assert store.claim("k1", "f1", 60) is None
    assert store.claim("k1", "f1", 60) == {"fingerprint": "f1", "response": None}  # running
    store.finish("k1", "f1", {"status": 201, "body": {"id": "g"}}, 60)
    assert store.claim("k1", "f2", 60) == {
        "fingerprint": "f1",
        "response": {"status": 201, "body": {"id": "g"}},
    }
    assert store.claim("k2", "f1", 60) is None


def test_a_notifier_announces_every_game_to_an_all_listener(ports: Ports) -> None:
    everyone = ports.notifier.subscribe_all()
    try:
        with ports.unit():
            ports.notifier.announce("gA", 3)
        with ports.unit():
            ports.notifier.announce("g{B}", 4)
        got = [everyone.next(5.0), everyone.next(5.0)]
        assert got == [("gA", 3), ("g{B}", 4)]
        assert everyone.next(0.05) is None
    finally:
        everyone.close()


def test_a_folds_finish_reads_the_games_folded_before_it(ports: Ports) -> None:
    t = ports.tournaments
    t.create("t", {"games": 3}, {"done": 0}, "2026-01-01T00:00:00.000Z", 1.0)
    assert t.fold("t", {0: _bump}) == [0]
    seen: list[list[bool]] = []
    # Inside the step (the memory store's lock is held): game 0 folded, the batch's own not yet.
    assert t.fold("t", {1: _bump}, lambda _tally: seen.append(t.folded("t", [0, 1, 2]))) == [1]
    assert seen == [[True, False, False]]
    assert t.folded("t", [0, 1, 2]) == [True, True, False]


def test_a_fold_that_loses_a_race_runs_its_finish_again_on_the_new_tally(
    redis_client: redis.Redis,
) -> None:
    t = redis_ports(redis_client).tournaments
    t.create("race2", {"games": 3}, {"done": 0}, "2026-01-01T00:00:00.000Z", 1.0)
    calls: list[int] = []

    def finish(tally: dict) -> None:
        calls.append(tally["done"])
        if len(calls) == 1:  # another batch's fold lands meanwhile: the transaction fails
            assert t.fold("race2", {2: _bump}) == [2]
        tally["finished"] = tally.get("finished", 0) + 1

    assert t.fold("race2", {0: _bump}, finish) == [0]
    assert calls == [1, 2]  # again, on the tally with the other fold in it
    assert t.get("race2").tally == {"done": 2, "finished": 1}  # type: ignore[union-attr]
    assert t.folded("race2", [0, 1, 2]) == [True, False, True]


def test_bot_registry_keeps_lists_retires_and_counts_bots(ports: Ports) -> None:
    from shared.app.ports import RegisteredBot

    def bot(bot_id: str) -> RegisteredBot:
        return RegisteredBot(bot_id=bot_id, name=f"n-{bot_id}", games=("fox", "skull"),
                             transport="webhook", url="http://127.0.0.1:1/", budget_ms=500,
                             on_failure="random", key_sha256="ab" * 32,
                             created_at="2026-01-01T00:00:00.000Z")  # fmt: skip

    registry = ports.bots
    assert registry.secret() and registry.secret() == registry.secret()
    assert registry.get("b1") is None and not registry.retire("b1")
    registry.add(bot("b2"), 2.0)
    registry.add(bot("b1"), 1.0)
    assert registry.list_ids() == ["b1", "b2"] and registry.list_ids(offset=1) == ["b2"]
    assert registry.get("b1") == bot("b1")
    assert registry.retire("b1") and registry.get("b1") == replace(bot("b1"), retired=True)
    assert registry.stats("b2") == {
        "decisions": 0, "latency_ms": {"p50": None, "p95": None, "max": None},
        "timeouts": 0, "illegal": 0, "errors": 0, "fallbacks": 0, "service_faults": 0,
    }  # fmt: skip
    for ms, failure in [(10, None), (30, "timeout"), (20, None), (40, "illegal"), (5, "error"),
                        (7, "unreachable"), (900, "service")]:  # fmt: skip
        registry.record("b2", ms, failure)
    assert registry.stats("b2") == {
        "decisions": 6, "latency_ms": {"p50": 10, "p95": 40, "max": 40},
        "timeouts": 1, "illegal": 1, "errors": 2, "fallbacks": 4, "service_faults": 1,
    }  # fmt: skip


def test_bot_registry_finds_a_bot_by_its_keys_hash(ports: Ports) -> None:
    from shared.app.ports import RegisteredBot

    bot = RegisteredBot(bot_id="k1", name="k", games=("fox",), transport="connected", url=None,
                        budget_ms=500, on_failure="random", key_sha256="cd" * 32,
                        created_at="2026-01-01T00:00:00.000Z")  # fmt: skip
    assert ports.bots.by_key("cd" * 32) is None
    ports.bots.add(bot, 1.0)
    assert ports.bots.by_key("cd" * 32) == "k1" and ports.bots.by_key("ef" * 32) is None


def test_bot_registry_reads_a_turns_view_sent_mark_and_bot_together(ports: Ports) -> None:
    """``turn_reads`` answers what ``ReadModels.read``, ``CommandBus.was_sent`` and
    ``BotRegistry.get`` answer one by one (a turn's reads in one round trip)."""
    from shared.app.ports import RegisteredBot, TurnReads

    bot = RegisteredBot(bot_id="t1", name="t", games=("fox",), transport="webhook",
                        url="http://127.0.0.1:1/", budget_ms=500, on_failure="random",
                        key_sha256="12" * 32, created_at="2026-01-01T00:00:00.000Z")  # fmt: skip
    reads = ports.bots.turn_reads
    assert reads("g1", 1, "bot-1-4", "t1") == TurnReads(None, False, None)
    ports.read_models.write("g1", ['{"seat":0}', '{"seat":1}'], '{"seat":null}')
    ports.bots.add(bot, 1.0)
    assert reads("g1", 1, "bot-1-4", "t1") == TurnReads(b'{"seat":1}', False, bot)
    assert ports.bus.send_once("g1", "bot-1-4", 60)
    assert reads("g1", 1, "bot-1-4", None) == TurnReads(b'{"seat":1}', True, None)
    assert reads("g1", 0, "bot-0-4", "nope") == TurnReads(b'{"seat":0}', False, None)
    ports.bots.retire("t1")
    assert reads("g1", 1, "bot-1-5", "t1") == TurnReads(
        b'{"seat":1}', False, replace(bot, retired=True)
    )


def test_connected_turns_are_issued_once_answered_once_and_close_at_their_deadline(
    ports: Ports,
) -> None:
    turns = ports.turns
    sub = turns.subscribe("b1")
    try:
        assert turns.issue("b1", "t1", b'{"n":1}', 5000, 60) == 5000
        assert turns.issue("b1", "t1", b'{"n":9}', 5000, 60) is None
        assert sub.next(5) == b'{"n":1}'  # published once
        assert turns.issue("b1", "t2", b'{"n":2}', 100, 60) == 100
        assert sub.next(5) == b'{"n":2}'
        assert turns.pending("b1") == [b'{"n":2}', b'{"n":1}']  # by deadline
        assert turns.pending("b2") == [] and turns.get("b2", "t1") is None
        found = turns.get("b1", "t1")
        assert found is not None and found.open and found.body == b'{"n":1}'
        assert 0 < found.left_ms <= 5000
        # Answered once; the waiter gets it, and later answers are refused.
        assert turns.answer("b1", "t1", b"A") == "ok"
        assert turns.answer("b1", "t1", b"B") == "expired"
        assert turns.answer("b1", "nope", b"A") == "unknown"
        assert turns.wait("b1", "t1", 5) == b"A"
        assert turns.get("b1", "t1").open is False  # type: ignore[union-attr]
        # Past its deadline a turn is no longer open, is not pending, and refuses answers.
        deadline = time.monotonic() + 10
        while (t2 := turns.get("b1", "t2")) is not None and t2.open:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert t2 is not None and t2.left_ms < 0
        assert turns.pending("b1") == [] and turns.answer("b1", "t2", b"A") == "expired"
        assert turns.wait("b1", "t2", 0.1) is None and turns.close("b1", "t2") is None
        # An answer accepted but not taken by a waiter is handed over by close.
        turns.issue("b1", "t3", b'{"n":3}', 5000, 60)
        assert turns.answer("b1", "t3", b"C") == "ok"
        assert turns.close("b1", "t3") == b"C"
        # A closed turn takes no answer.
        turns.issue("b1", "t4", b'{"n":4}', 5000, 60)
        assert turns.close("b1", "t4") is None
        assert turns.answer("b1", "t4", b"D") == "expired"
        turns.publish("b1", b"over")
        for _ in range(2):
            sub.next(5)  # t3, t4
        assert sub.next(5) == b"over"
    finally:
        sub.close()


def test_a_connected_turns_waiter_wakes_when_it_is_answered(ports: Ports) -> None:
    turns = ports.turns
    turns.issue("b1", "t1", b"{}", 5000, 60)
    threading.Timer(0.2, lambda: turns.answer("b1", "t1", b"late-ish")).start()
    started = time.monotonic()
    assert turns.wait("b1", "t1", 5) == b"late-ish"
    assert time.monotonic() - started < 4
