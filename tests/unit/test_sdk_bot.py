"""The bot kit's two transports (sdk/python): the webhook server on a real socket checks the
``Tabletop-Signature`` before anything else and answers turns and game-overs; the connected
loop reads the turn stream, answers each turn once across reconnects and stops after
``max_games``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx
import pytest
from tabletop_client import (
    SIGNATURE_HEADER,
    Bot,
    ProblemError,
    make_webhook_server,
    play_connected,
    sign,
    verify,
)

KEY = "bot-secret-key"


class FirstBot(Bot):
    """Plays the first legal command; remembers what it was shown."""

    def __init__(self) -> None:
        self.turns: list[tuple[Any, Any]] = []
        self.ended: list[Mapping[str, Any]] = []

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        self.turns.append((dict(view), list(legal_commands)))
        return legal_commands[0]

    def game_over(self, message: Mapping[str, Any]) -> None:
        self.ended.append(message)


def turn(turn_id: str, game_id: str = "g1", legal: Any = None) -> dict[str, Any]:
    return {
        "type": "turn",
        "turn_id": turn_id,
        "bot_id": "b1",
        "game": "fox",
        "game_id": game_id,
        "seat": 1,
        "version": 7,
        "view": {"id": game_id, "seat": 1, "hand": [{"suit": "keys", "rank": 3}]},
        "legal_commands": [{"type": "play", "card": {"suit": "keys", "rank": 3}}]
        if legal is None
        else legal,
        "budget_ms": 500,
    }


def test_signatures() -> None:
    body = b'{"type":"turn"}'
    good = sign(KEY, body)
    # The documented recipe, spelt out: sha256=<hex HMAC-SHA256 of the raw body>.
    import hashlib
    import hmac

    assert good == "sha256=" + hmac.new(KEY.encode(), body, hashlib.sha256).hexdigest()
    assert verify(KEY, body, good)
    assert not verify(KEY, body + b" ", good)  # another body
    assert not verify("another-key", body, good)  # another bot's key
    assert not verify(KEY, body, good.replace("sha256=", "sha1="))
    assert not verify(KEY, body, good[:-1])
    assert not verify(KEY, body, None) and not verify(KEY, body, "")


@pytest.fixture
def webhook() -> Iterator[tuple[str, FirstBot]]:
    bot = FirstBot()
    server = make_webhook_server(bot, KEY, "127.0.0.1", 0)
    # A short poll: shutdown() waits for it.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", bot
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def post(url: str, body: bytes, signature: str | None) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers[SIGNATURE_HEADER] = signature
    return httpx.post(url, content=body, headers=headers, timeout=10)


def test_the_webhook_answers_a_signed_turn_with_the_bots_command(
    webhook: tuple[str, FirstBot],
) -> None:
    url, bot = webhook
    message = turn("t1")
    body = json.dumps(message).encode()
    resp = post(url, body, sign(KEY, body))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"command": message["legal_commands"][0]}
    assert bot.turns == [(message["view"], message["legal_commands"])]
    # The game's end reaches the hook; its answer is a 200 the service ignores.
    over = json.dumps({"type": "game_over", "game_id": "g1", "seat": 1,
                       "outcome": {"winners": [1]}}).encode()  # fmt: skip
    assert post(url, over, sign(KEY, over)).status_code == 200
    assert bot.ended == [json.loads(over)]


@pytest.mark.parametrize(
    "signature",
    [None, "", "sha256=" + "0" * 64, "signed-by-someone"],
    ids=["missing", "empty", "wrong", "malformed"],
)
def test_a_bad_signature_is_a_401_and_the_bot_never_sees_it(
    webhook: tuple[str, FirstBot], signature: str | None
) -> None:
    url, bot = webhook
    body = json.dumps(turn("t1")).encode()
    assert post(url, body, signature).status_code == 401
    # Signed with the key, but for another body (a replayed signature on a changed view).
    assert post(url, body, sign(KEY, body.replace(b"keys", b"moons"))).status_code == 401
    assert bot.turns == []


def test_the_webhook_refuses_what_is_not_a_turn(webhook: tuple[str, FirstBot]) -> None:
    url, bot = webhook
    for body, status in [
        (b"not json", 400),
        (b"[1, 2]", 400),
        (b'{"type": "something_else"}', 400),
    ]:
        assert post(url, body, sign(KEY, body)).status_code == status, body
    huge = b" " * (4 * 1024 * 1024 + 1)
    assert post(url, huge, sign(KEY, huge)).status_code == 413
    assert bot.turns == []


def test_a_bot_that_fails_is_a_500_not_a_dead_server(webhook: tuple[str, FirstBot]) -> None:
    url, bot = webhook
    body = json.dumps(turn("t1", legal=[])).encode()  # legal_commands[0] raises IndexError
    assert post(url, body, sign(KEY, body)).status_code == 500
    ok = json.dumps(turn("t2")).encode()
    assert post(url, ok, sign(KEY, ok)).status_code == 200


# --- the connected loop against a fake service ---------------------------------------------------


def sse_body(*messages: Mapping[str, Any]) -> bytes:
    out = b": connected\n\n"
    for m in messages:
        out += f"event: {m['type']}\ndata: {json.dumps(m)}\n\n".encode()
        out += b": heartbeat\n\n"
    return out


def test_the_connected_loop_answers_each_turn_once_across_drops() -> None:
    over1 = {"type": "game_over", "game_id": "g1", "seat": 1, "outcome": {"winners": [0]}}
    over2 = {"type": "game_over", "game_id": "g2", "seat": 0, "outcome": {"winners": [0]}}
    t1, t2 = turn("t1"), turn("t2", "g2")
    # Each connection's stream, in order: a drop after t1; a refused connection; t1 again
    # (pending on the reconnect, answered already) with the end of g1; then g2.
    streams: list[Any] = [
        sse_body(t1),
        httpx.ConnectError("connection refused"),
        sse_body(t1, over1),
        sse_body(t2, over2, turn("never-played", "g3")),
    ]
    answers: list[tuple[str, str | None, Any]] = []
    streams_opened: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        auth = request.headers.get("Authorization")
        if request.method == "GET" and request.url.path == "/v1/bots/me/turns":
            streams_opened.append(auth)
            step = streams.pop(0)
            if isinstance(step, Exception):
                raise step
            return httpx.Response(200, content=iter([step]),
                                  headers={"Content-Type": "text/event-stream"})  # fmt: skip
        answers.append((request.url.path, auth, json.loads(request.content)))
        return httpx.Response(200, json={})

    bot = FirstBot()
    done = play_connected(
        bot,
        "http://tabletop.test",
        KEY,
        max_games=2,
        retry_delay=0.01,
        transport=httpx.MockTransport(handler),
    )
    assert done == 2
    assert streams_opened == [f"Bearer {KEY}"] * 4
    command = t1["legal_commands"][0]
    assert answers == [
        ("/v1/bots/me/turns/t1", f"Bearer {KEY}", {"command": command}),
        ("/v1/bots/me/turns/t2", f"Bearer {KEY}", {"command": command}),
    ]
    assert [v["id"] for v, _ in bot.turns] == ["g1", "g2"]  # t1 played once, g3 never
    assert [m["game_id"] for m in bot.ended] == ["g1", "g2"]


def test_an_expired_or_illegal_answer_does_not_stop_the_loop() -> None:
    refusals = iter([(409, "turn/expired"), (422, "move/illegal")])

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            over = {"type": "game_over", "game_id": "g1", "seat": 1, "outcome": None}
            body = sse_body(turn("t1"), turn("t2"), over)
            return httpx.Response(200, content=body)
        status, code = next(refusals)
        return httpx.Response(status, json={"status": status, "code": code})

    bot = FirstBot()
    transport = httpx.MockTransport(handler)
    assert play_connected(bot, "http://x.test", KEY, max_games=1, transport=transport) == 1
    assert len(bot.turns) == 2


def test_a_refused_key_raises_instead_of_reconnecting_forever() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(401, json={"status": 401, "code": "auth/invalid_token",
                                         "detail": "unknown bot key"})  # fmt: skip

    with pytest.raises(ProblemError) as caught:
        play_connected(FirstBot(), "http://x.test", "nope", transport=httpx.MockTransport(handler))
    assert caught.value.code == "auth/invalid_token" and calls == [1]


def test_the_example_random_bot_answers_a_turn_with_a_legal_command() -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "sdk" / "python" / "examples" / "random_bot.py"
    spec = importlib.util.spec_from_file_location("random_bot_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    legal = [{"type": "play", "card": {"suit": "keys", "rank": r}} for r in (1, 2, 3)]
    server = make_webhook_server(module.RandomBot(), KEY, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        body = json.dumps(turn("t1", legal=legal)).encode()
        resp = post(f"http://127.0.0.1:{server.server_port}/", body, sign(KEY, body))
        assert resp.status_code == 200 and resp.json()["command"] in legal
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
