"""The bot kit's ``Client`` (sdk/python) against fakes: problems raised with their body, SSE
parsed as the standard says, the bots endpoints spoken to the issue's contract, and an
unreachable service in one line. (Against the real gateway: tests/integration/test_sdk.py.)"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from tabletop_client import Client, InvalidResponse, ProblemError, TransportError, sse

API = "http://tabletop.test"


def fake(handler: Callable[[httpx.Request], httpx.Response]) -> Client:
    return Client(API, token="tok", transport=httpx.MockTransport(handler))


def test_a_problem_is_raised_with_every_field_of_its_body() -> None:
    problem = {
        "type": "https://tabletop.dev/problems/move/illegal",
        "title": "Illegal move",
        "status": 422,
        "detail": "you must follow suit (bells)",
        "code": "move/illegal",
        "errors": {"card": ["follow bells"]},
        "rule": "follow_suit",
    }
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            422, json=problem, headers={"Content-Type": "application/problem+json"}
        )

    with fake(handler) as client, pytest.raises(ProblemError) as caught:
        client.submit("g/1", {"type": "play", "card": {"suit": "bells", "rank": 1}}, wait=5)
    exc = caught.value
    assert (exc.status, exc.type, exc.title, exc.detail, exc.code, exc.errors) == (
        422,
        problem["type"],
        "Illegal move",
        "you must follow suit (bells)",
        "move/illegal",
        {"card": ["follow bells"]},
    )
    assert exc.body == problem and "move/illegal" in str(exc)
    request = seen[0]
    # The id is one path segment; the wait and the token travel as the API says.
    assert request.url.raw_path == b"/v1/games/g%2F1/commands"
    assert request.headers["Prefer"] == "wait=5"
    assert request.headers["Authorization"] == "Bearer tok"
    assert json.loads(request.content) == {"type": "play", "card": {"suit": "bells", "rank": 1}}


def test_an_error_without_a_problem_body_keeps_its_status() -> None:
    reply = httpx.Response(502, text="<html>bad gateway</html>")
    with fake(lambda r: reply) as client, pytest.raises(ProblemError) as caught:
        client.game("g")
    assert caught.value.status == 502 and caught.value.code is None
    assert caught.value.title == "Bad Gateway" and caught.value.errors == {}


def test_a_success_that_is_not_json_is_refused() -> None:
    reply = httpx.Response(200, text="hello")
    with fake(lambda r: reply) as client, pytest.raises(InvalidResponse, match="g with JSON"):
        client.game("g")


def test_a_redirect_is_not_followed() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://elsewhere.test/steal"})

    with fake(handler) as client, pytest.raises(InvalidResponse, match="redirect"):
        client.game("g")
    assert seen == [f"{API}/v1/games/g"]  # the token never went elsewhere


def test_an_unreachable_service_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with Client(f"http://127.0.0.1:{port}") as client, pytest.raises(TransportError) as caught:
        client.games()
    assert str(caught.value).startswith(f"cannot reach the service at http://127.0.0.1:{port}: ")
    assert "Connection refused" in caught.value.reason and "\n" not in str(caught.value)


def test_sse_comments_ids_events_and_multiline_data() -> None:
    stream = [
        ": hello\n",
        "retry: 1000\n",
        "id: 3\n",
        "event: update\n",
        'data: {"version": 3,\n',
        'data:  "view": {}}\n',
        "\n",
        ": heartbeat\n",
        "\n",  # a blank line after only a comment dispatches nothing
        "data: plain text\n",
        "\r\n",
        "id: 9\n",
        "event: update\n",
        "data: {}",  # no closing blank line: the stream was cut, the message is dropped
    ]
    messages = list(sse.parse(stream))
    assert messages == [
        sse.SseMessage("update", "3", '{"version": 3,\n "view": {}}', {"version": 3, "view": {}}),
        sse.SseMessage("message", "3", "plain text", None),
    ]


def test_the_feed_is_an_iterator_of_updates_resuming_after_a_version() -> None:
    body = (
        b": welcome\n\n"
        b'id: 5\nevent: update\ndata: {"version": 5, "events": [], "view": {"version": 5}}\n\n'
        b": heartbeat\n\n"
        b'id: 7\nevent: update\ndata: {"version": 7, "events": [{"type": "x"}], '
        b'"view": {"outcome": {"winners": [0]}}}\n\n'
    )
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=iter([body[:30], body[30:]]),
                              headers={"Content-Type": "text/event-stream"})  # fmt: skip

    with fake(handler) as client:
        updates = list(client.feed("g", after=4))
    assert [(m.event, m.id, m.data["version"]) for m in updates] == [
        ("update", "5", 5),
        ("update", "7", 7),
    ]
    assert seen[0].headers["Last-Event-ID"] == "4"
    assert seen[0].headers["Accept"] == "text/event-stream"
    assert seen[0].url.path == "/v1/games/g/feed"


def test_a_refused_feed_raises_its_problem() -> None:
    problem = {"status": 401, "detail": "unknown token", "code": "auth/invalid_token"}
    reply = httpx.Response(401, json=problem)
    with fake(lambda r: reply) as client, pytest.raises(ProblemError) as caught:
        next(client.feed("g"))
    assert caught.value.code == "auth/invalid_token"


def test_the_bots_endpoints_follow_the_issues_contract() -> None:
    seen: list[tuple[str, str, str | None, Any]] = []
    registered = {
        "id": "b1",
        "key": "bot-key",
        "name": "mine",
        "games": ["fox"],
        "transport": "webhook",
        "url": "http://127.0.0.1:9/",
        "budget_ms": 500,
        "on_failure": "random",
    }

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        path = request.url.raw_path.decode()  # as sent: ids quoted
        seen.append((request.method, path, request.headers.get("Authorization"), body))
        if request.method == "POST" and path == "/v1/bots":
            return httpx.Response(201, json=registered)
        if request.method == "GET" and path == "/v1/bots":
            return httpx.Response(200, json={"bots": [{"id": "b1", "name": "mine"}]})
        if request.method == "GET" and path == "/v1/bots/b1":
            return httpx.Response(200, json={"id": "b1", "stats": {"decisions": 0}})
        if request.method == "DELETE" and path == "/v1/bots/b1":
            if request.headers.get("Authorization") != "Bearer bot-key":
                return httpx.Response(403, json={"status": 403, "code": "auth/forbidden",
                                                 "detail": "a key of another bot"})  # fmt: skip
            return httpx.Response(204)
        if request.method == "POST" and path == "/v1/bots/me/turns/t%201":
            return httpx.Response(409, json={"status": 409, "code": "turn/expired"})
        return httpx.Response(404, json={"status": 404, "code": "bot/not_found"})

    with fake(handler) as client:
        made = client.create_bot(
            "mine",
            ["fox"],
            "webhook",
            url="http://127.0.0.1:9/",
            budget_ms=500,
            on_failure="random",
            ladder=True,
        )
        assert made == registered
        connected = client.create_bot("notebook", ["fox", "skull"], "connected")
        assert connected["id"] == "b1"
        assert client.bots()["bots"][0]["id"] == "b1"
        assert client.bot("b1")["stats"] == {"decisions": 0}
        with pytest.raises(ProblemError) as other:
            client.delete_bot("b1", "not-its-key")
        assert other.value.code == "auth/forbidden"
        assert client.delete_bot("b1", "bot-key") is None
        with pytest.raises(ProblemError) as late:
            client.answer_turn("bot-key", "t 1", {"type": "keep_decree"})
        assert late.value.code == "turn/expired"
    assert seen[0] == (
        "POST",
        "/v1/bots",
        None,  # registering needs no key: the client's token is not sent
        {
            "name": "mine",
            "games": ["fox"],
            "transport": "webhook",
            "url": "http://127.0.0.1:9/",
            "budget_ms": 500,
            "on_failure": "random",
            "ladder": True,
        },
    )
    assert seen[1][3] == {"name": "notebook", "games": ["fox", "skull"], "transport": "connected"}
    assert [s[2] for s in seen[2:4]] == ["Bearer tok", "Bearer tok"]
    assert seen[-1] == ("POST", "/v1/bots/me/turns/t%201", "Bearer bot-key",
                        {"command": {"type": "keep_decree"}})  # fmt: skip


def test_tournaments_with_a_key() -> None:
    seen: list[tuple[str, str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, str(request.url), request.headers.get("Authorization", "")))
        if request.method == "POST":
            return httpx.Response(201, json={"id": "t1", "progress": {"done": 0, "total": 2}})
        if request.method == "DELETE":
            return httpx.Response(200, json={"id": "t1", "status": "cancelled"})
        return httpx.Response(200, json={"id": "t1", "tournaments": []})

    with Client(API, "org", transport=httpx.MockTransport(handler)) as client:
        body = {"game": "fox", "entrants": [{"bot": "random"}] * 2, "games": 2}
        assert client.create_tournament(body)["id"] == "t1"
        client.tournament("t1", limit=1)
        client.tournaments()
        assert client.cancel_tournament("t1")["status"] == "cancelled"
    assert seen == [
        ("POST", f"{API}/v1/tournaments", "Bearer org"),
        ("GET", f"{API}/v1/tournaments/t1?limit=1", "Bearer org"),
        ("GET", f"{API}/v1/tournaments", "Bearer org"),
        ("DELETE", f"{API}/v1/tournaments/t1", "Bearer org"),
    ]


def test_readiness_answers_the_report_and_raises_the_503_with_what_is_missing() -> None:
    replies = [
        httpx.Response(503, json={"status": "unready", "missing": ["skye: no worker"]}),
        httpx.Response(200, json={"status": "ready", "redis": "ok", "missing": []}),
    ]
    seen: list[tuple[str, str, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path, request.headers.get("Authorization")))
        return replies.pop(0)

    with Client(API, transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(ProblemError) as caught:
            client.readiness()
        assert caught.value.status == 503
        assert caught.value.body["missing"] == ["skye: no worker"]
        assert client.readiness()["status"] == "ready"
    assert seen == [("GET", "/readyz", None)] * 2  # a probe carries no key
