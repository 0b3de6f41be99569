"""The bot kit answers many turns at once (issue 35): the webhook server and the connected loop
hand ``act`` several turns at the same time, at most ``concurrency``; a turn sent twice is
played once (the kit keeps the recent ``turn_id``s); several registered bots behind one
webhook are told apart by ``bot_id`` (a game-over's too), else by the key that signed it.

Concurrency is asserted by counting the ``act`` calls under way at once, not by timing."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx
import pytest
from tabletop_client import Bot, ProblemError, make_webhook_server, play_connected, sign

from tests.unit.test_sdk_bot import KEY, post, turn

ACT_S = 0.3  # what each act takes: long enough that turns sent at once overlap


class SlowBot(Bot):
    """Sleeps ``ACT_S`` a turn, then plays the first legal command; counts the act calls
    under way at once (``most``) and each turn's calls, by the game it was for."""

    def __init__(self, delay: float = ACT_S) -> None:
        self.delay = delay
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.calls: Counter[str] = Counter()
        self.ended: list[Mapping[str, Any]] = []

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.calls[str(view["id"])] += 1
        try:
            time.sleep(self.delay)
        finally:
            with self.lock:
                self.now -= 1
        return legal_commands[0]

    def game_over(self, message: Mapping[str, Any]) -> None:
        with self.lock:
            self.ended.append(message)


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start ``make_webhook_server(bot, key, **kw)`` on a free port: its URL."""
    servers: list[tuple[Any, threading.Thread]] = []

    def start(bot: Any, key: Any = KEY, **kw: Any) -> str:
        server = make_webhook_server(bot, key, "127.0.0.1", 0, **kw)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        servers.append((server, thread))
        return f"http://127.0.0.1:{server.server_port}/"

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(10)


def post_at_once(url: str, bodies: Sequence[bytes], key: str = KEY) -> list[httpx.Response]:
    """POST every body signed, each from its own thread (its own connection), all at once."""
    answers: list[Any] = [None] * len(bodies)
    start = threading.Barrier(len(bodies))

    def send(i: int) -> None:
        start.wait(10)
        answers[i] = post(url, bodies[i], sign(key, bodies[i]))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return answers


def turns(n: int, *, same_turn: bool = False) -> list[bytes]:
    """``n`` turns of ``n`` games (or one turn ``n`` times), each with a budget long enough
    that none waits past it on a busy machine."""
    docs = [turn("t0" if same_turn else f"t{i}", game_id=f"g{i}") for i in range(n)]
    return [json.dumps({**doc, "budget_ms": 30_000}).encode() for doc in docs]


# --- the webhook ----------------------------------------------------------------------------


def test_the_webhook_decides_turns_sent_at_once_at_the_same_time(serve: Any) -> None:
    bot = SlowBot()
    url = serve(bot)
    answers = post_at_once(url, turns(8))
    assert [a.status_code for a in answers] == [200] * 8, [a.text for a in answers]
    assert sum(bot.calls.values()) == 8
    assert bot.most >= 2, "the turns were decided one at a time"


def test_the_webhook_decides_at_most_concurrency_turns_at_once(serve: Any) -> None:
    bot = SlowBot()
    url = serve(bot, concurrency=2)
    answers = post_at_once(url, turns(6))
    assert [a.status_code for a in answers] == [200] * 6
    assert bot.most == 2


def test_a_turn_that_finds_no_slot_within_its_budget_is_a_503(serve: Any) -> None:
    bot = SlowBot(1.0)
    url = serve(bot, concurrency=1)
    slow = json.dumps(turn("slow")).encode()
    hurried = turn("hurried")
    hurried["budget_ms"] = 50
    quick = json.dumps(hurried).encode()
    first = threading.Thread(target=post, args=(url, slow, sign(KEY, slow)))
    first.start()
    while bot.now == 0:  # the slow turn holds the one slot
        time.sleep(0.01)
    busy = post(url, quick, sign(KEY, quick))
    first.join(30)
    assert busy.status_code == 503 and "busy" in busy.json()["detail"]
    assert bot.calls == Counter({"g1": 1})  # the hurried turn was never handed to act
    # Not remembered as played: sent again with a slot free, it is played.
    bot.delay = 0
    assert post(url, quick, sign(KEY, quick)).status_code == 200


def test_a_turn_sent_twice_is_decided_once_and_answered_alike(serve: Any) -> None:
    bot = SlowBot()
    url = serve(bot)
    # Both copies at once: the second waits for the first's answer.
    answers = post_at_once(url, turns(2, same_turn=True))
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].json() == answers[1].json()
    # And again later (the service sends a turn again when it lost track of its answer).
    body = turns(1, same_turn=True)[0]
    again = post(url, body, sign(KEY, body))
    assert again.status_code == 200 and again.json() == answers[0].json()
    assert sum(bot.calls.values()) == 1


def test_a_turn_the_bot_failed_is_played_again_when_sent_again(serve: Any) -> None:
    class FailsOnce(SlowBot):
        def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
            command = super().act(view, legal_commands)
            if sum(self.calls.values()) == 1:
                raise RuntimeError("the first try fails")
            return command

    bot = FailsOnce(0)
    url = serve(bot)
    body = turns(1)[0]
    assert post(url, body, sign(KEY, body)).status_code == 500
    assert post(url, body, sign(KEY, body)).status_code == 200
    assert sum(bot.calls.values()) == 2


def test_several_bots_behind_one_webhook_are_told_apart(serve: Any) -> None:
    first, second = SlowBot(0), SlowBot(0)
    keys = {"b1": "tbk_first", "b2": "tbk_second"}
    url = serve({"b1": first, "b2": second}, keys)

    def send(doc: dict[str, Any], key: str) -> httpx.Response:
        body = json.dumps(doc).encode()
        return post(url, body, sign(key, body))

    for_second = {**turn("t1", "g2"), "bot_id": "b2"}
    assert send(for_second, keys["b2"]).status_code == 200
    assert first.calls == Counter() and second.calls == Counter({"g2": 1})
    # A body naming one bot signed with another's key: refused, no bot sees it.
    assert send({**turn("t2", "g3"), "bot_id": "b1"}, keys["b2"]).status_code == 401
    assert send({**turn("t2", "g3"), "bot_id": "b3"}, "tbk_unknown").status_code == 401
    # A game-over goes by its bot_id; one from a server that does not send it yet goes to
    # the bot whose key signed it.
    over = {"type": "game_over", "game_id": "g2", "seat": 1, "outcome": None}
    assert send({**over, "bot_id": "b2"}, keys["b2"]).status_code == 200
    assert send(over, keys["b1"]).status_code == 200
    assert [m.get("bot_id") for m in second.ended] == ["b2"]
    assert [m.get("bot_id") for m in first.ended] == [None]
    # One key, several bots: a game-over is routed by bot_id alone.
    single = serve({"b1": first, "b2": second}, "tbk_shared")
    body = json.dumps({**over, "game_id": "g9", "bot_id": "b1"}).encode()
    assert post(single, body, sign("tbk_shared", body)).status_code == 200
    assert first.ended[-1]["game_id"] == "g9"
    body = json.dumps({**over, "bot_id": "nobody"}).encode()
    assert post(single, body, sign("tbk_shared", body)).status_code == 404


def test_concurrency_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        make_webhook_server(SlowBot(), KEY, "127.0.0.1", 0, concurrency=0)
    with pytest.raises(ValueError, match="at least 1"):
        play_connected(SlowBot(), "http://x.test", KEY, concurrency=0)


# --- the connected loop against a fake service ---------------------------------------------------


def sse(doc: Mapping[str, Any]) -> bytes:
    return f"event: {doc['type']}\ndata: {json.dumps(doc)}\n\n".encode()


class FakeService:
    """``GET /v1/bots/me/turns`` streams each connection's script: messages, and waits for
    the answers posted so far to reach a count (``("wait", n)``); ``POST`` keeps answers."""

    def __init__(self, *scripts: list[Any], refuse_answers: int | None = None) -> None:
        self.scripts = list(scripts)
        self.refuse_answers = refuse_answers
        self.answers: list[tuple[str, Any]] = []
        self.answered = threading.Condition()

    def handler(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            script = self.scripts.pop(0)
            return httpx.Response(200, content=self._stream(script),
                                  headers={"Content-Type": "text/event-stream"})  # fmt: skip
        with self.answered:
            self.answers.append((request.url.path.rsplit("/", 1)[1], json.loads(request.content)))
            self.answered.notify_all()
        if self.refuse_answers is not None:
            status = self.refuse_answers
            return httpx.Response(status, json={"status": status, "code": "auth/invalid_token"})
        return httpx.Response(200, json={})

    def _stream(self, script: list[Any]) -> Iterator[bytes]:
        yield b": connected\n\n"
        for step in script:
            if isinstance(step, tuple):
                self._wait_for_answers(step[1])
            else:
                yield sse(step)

    def _wait_for_answers(self, count: int) -> None:
        with self.answered:
            assert self.answered.wait_for(lambda: len(self.answers) >= count, 30)

    def play(self, bot: Any, **kw: Any) -> int:
        transport = httpx.MockTransport(self.handler)
        return play_connected(bot, "http://tabletop.test", KEY, retry_delay=0.01,
                              transport=transport, **kw)  # fmt: skip


def over(game_id: str) -> dict[str, Any]:
    return {"type": "game_over", "game_id": game_id, "seat": 1, "outcome": None, "bot_id": "b1"}


def test_the_connected_loop_answers_turns_at_the_same_time() -> None:
    n = 8
    service = FakeService([*(turn(f"t{i}", f"g{i}") for i in range(n)), ("wait", n), over("g0")])
    bot = SlowBot()
    assert service.play(bot, max_games=1) == 1
    assert sorted(t for t, _ in service.answers) == sorted(f"t{i}" for i in range(n))
    assert sum(bot.calls.values()) == n
    assert bot.most >= 2, "the turns were answered one at a time"


def test_the_connected_loop_answers_at_most_concurrency_turns_at_once() -> None:
    service = FakeService([*(turn(f"t{i}", f"g{i}") for i in range(6)), ("wait", 6), over("g0")])
    bot = SlowBot()
    assert service.play(bot, max_games=1, concurrency=3) == 1
    assert len(service.answers) == 6 and bot.most == 3
    # concurrency=1: one at a time, as the kit always did.
    service = FakeService([*(turn(f"t{i}", f"g{i}") for i in range(4)), ("wait", 4), over("g0")])
    bot = SlowBot(0.05)
    assert service.play(bot, max_games=1, concurrency=1) == 1
    assert len(service.answers) == 4 and bot.most == 1


def test_the_connected_loop_plays_a_turn_sent_twice_once() -> None:
    t1 = turn("t1", "g1")
    # The turn twice on one stream while it is being decided, then again after a reconnect.
    service = FakeService([t1, t1, ("wait", 1)], [t1, over("g1")])
    bot = SlowBot()
    assert service.play(bot, max_games=1) == 1
    assert [t for t, _ in service.answers] == ["t1"] and bot.calls == Counter({"g1": 1})


def test_the_connected_loop_returns_once_the_turns_under_way_are_answered() -> None:
    # The game-over comes while a turn of another game is still being decided.
    service = FakeService([turn("t1", "g1"), over("g2")])
    bot = SlowBot()
    assert service.play(bot, max_games=1) == 1
    assert [t for t, _ in service.answers] == ["t1"]


def test_a_key_refused_while_answering_on_the_pool_raises() -> None:
    service = FakeService([turn("t1", "g1"), ("wait", 1), turn("t2", "g2")],
                          refuse_answers=401)  # fmt: skip
    with pytest.raises(ProblemError) as caught:
        service.play(SlowBot(0))
    assert caught.value.status == 401


def test_the_connected_loop_routes_by_bot_id_to_a_mapping_of_bots() -> None:
    mine, other = SlowBot(0), SlowBot(0)
    t1 = {**turn("t1", "g1"), "bot_id": "b1"}
    service = FakeService([t1, ("wait", 1), over("g1")])
    assert service.play({"b1": mine, "b9": other}, max_games=1) == 1
    assert mine.calls == Counter({"g1": 1}) and other.calls == Counter()
    assert [m["game_id"] for m in mine.ended] == ["g1"] and other.ended == []


def test_the_example_prints_progress_now_and_then_not_each_turn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "sdk" / "python" / "examples" / "random_bot.py"
    spec = importlib.util.spec_from_file_location("random_bot_progress", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    bot = module.RandomBot(every=100)
    legal = [{"type": "play"}]
    threads = [
        threading.Thread(target=lambda: [bot.act({}, legal) for _ in range(50)]) for _ in range(5)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    bot.game_over({"type": "game_over"})
    bot.act({}, legal)
    assert capsys.readouterr().out.splitlines() == [
        "100 turns answered, 0 games over",
        "200 turns answered, 0 games over",
    ]
    assert (bot.turns, bot.games) == (251, 1)
