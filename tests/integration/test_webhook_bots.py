"""Registered webhook bots against real sockets: the sender's deadline, size cap, redirects and
allow-list against tiny loopback servers; the bot endpoints; whole Fox games through the
gateway and the workers with a webhook bot, and on a real Celery worker's gevent pool with a
bot that hangs (issue 24)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import redis

from services.celery_client import CeleryDispatcher
from services.gateway.app import create_app
from shared.adapters.webhook import HttpWebhooks
from shared.app import finalize, queries
from shared.app.context import App
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.redis_server import free_port
from tests.integration.api import bearer, problem
from tests.integration.conftest import AUDITOR, Stack, consuming

ROOT = Path(__file__).resolve().parents[2]
Handler = Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]


class Hook:
    """A loopback HTTP server whose every POST is kept and answered by ``handle``."""

    def __init__(self, handle: Handler) -> None:
        self.handle = handle
        self.got: list[tuple[bytes, dict[str, str]]] = []
        self.release = threading.Event()  # ends a hanging answer
        hook = self

        class _H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's spelling
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.got.append((body, dict(self.headers)))
                hook.handle(self, json.loads(body))

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/turn"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def reply(h: BaseHTTPRequestHandler, status: int, body: bytes, **headers: str) -> None:
    h.send_response(status)
    h.send_header("Content-Length", str(len(body)))
    for k, v in headers.items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(body)


def first_legal(h: BaseHTTPRequestHandler, doc: dict[str, Any]) -> None:
    command = doc["legal_commands"][0] if doc["type"] == "turn" else None
    reply(h, 200, json.dumps({"command": command}).encode())


@pytest.fixture
def hooks() -> Iterator[Callable[[Handler], Hook]]:
    made: list[Hook] = []

    def make(handle: Handler) -> Hook:
        made.append(Hook(handle))
        return made[-1]

    yield make
    for hook in made:
        hook.close()


TURN = json.dumps({"type": "turn"}).encode()


def test_the_sender_gives_up_at_the_deadline_on_a_bot_that_hangs(hooks: Any) -> None:
    release = threading.Event()
    hook = hooks(lambda h, _: release.wait(30))
    started = time.monotonic()
    answer = HttpWebhooks().post(hook.url, TURN, {}, 0.3)
    assert answer.failure == "timeout" and answer.status is None
    assert time.monotonic() - started < 3 and 250 <= answer.latency_ms < 3000
    release.set()


def test_the_sender_gives_up_on_an_answer_dripped_past_the_deadline(hooks: Any) -> None:
    stop = threading.Event()

    def drip(h: BaseHTTPRequestHandler, _: dict[str, Any]) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for _i in range(40):  # a header line every 0.1 s: each read is quick, the whole is not
            h.wfile.write(b"X-Slow: 1\r\n")
            h.wfile.flush()
            if stop.wait(0.1):
                return

    hook = hooks(drip)
    answer = HttpWebhooks().post(hook.url, TURN, {}, 0.5)
    stop.set()
    assert answer.failure == "timeout" and answer.latency_ms < 2000


def test_a_redirect_is_not_followed_and_a_huge_answer_not_read(hooks: Any) -> None:
    elsewhere = hooks(first_legal)
    moved = hooks(lambda h, _: reply(h, 302, b"", Location=elsewhere.url))
    answer = HttpWebhooks().post(moved.url, TURN, {}, 2)
    assert answer.status == 302 and answer.failure is None
    assert elsewhere.got == []
    huge = hooks(lambda h, _: reply(h, 200, b"{" + b" " * (1 << 20) + b"}"))
    assert HttpWebhooks().post(huge.url, TURN, {}, 5).failure == "error"
    port = free_port()  # nothing listens there
    closed = HttpWebhooks().post(f"http://127.0.0.1:{port}/", TURN, {}, 2)
    assert closed.failure == "unreachable"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/turn",
        "http://user:pw@127.0.0.1/turn",
        "http://localhost/turn",  # localhost is not listed here
        "http://10.0.0.8/turn",
        "http://bots.example/turn",  # listed, but resolves to an address that is not
        "http://[::1]/turn",
    ],
)
def test_the_allow_list_refuses_and_nothing_is_sent(hooks: Any, url: str) -> None:
    hook = hooks(first_legal)
    names = {"bots.example": ["127.0.0.1", "169.254.169.254"]}
    sender = HttpWebhooks(["127.0.0.1", "bots.example"], lambda host, _: names.get(host, []))
    target = url.replace("/turn", f":{hook.port}/turn") if "[" not in url else url
    assert sender.refusal(target) is not None
    assert sender.post(target, TURN, {}, 1).failure == "error"
    assert hook.got == []
    assert sender.refusal(hook.url) is None


def test_a_turn_connects_to_the_checked_address_without_resolving_it_again(
    hooks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The socket is opened on the literal address the allow-list check gave: no
    ``getaddrinfo`` per turn (under gevent it goes through a thread pool), and a listed name
    is still checked at every turn (re-pointed outside the list, nothing is sent)."""
    hook = hooks(lambda h, _: reply(h, 200, b'{"command": {"type": "pass"}}'))
    names = {"bots.example": ["127.0.0.1"]}
    sender = HttpWebhooks(["127.0.0.1", "bots.example"], lambda host, _: names.get(host, []))
    looked_up: list[Any] = []

    def no_lookup(*args: Any, **kwargs: Any) -> Any:
        looked_up.append(args)
        raise OSError("getaddrinfo called")

    monkeypatch.setattr("socket.getaddrinfo", no_lookup)
    for url in (hook.url, hook.url.replace("127.0.0.1", "bots.example")):
        answer = sender.post(url, TURN, {}, 5)
        assert (answer.status, answer.failure) == (200, None), answer
    assert looked_up == []
    assert [h["Host"] for _, h in hook.got] == [
        f"127.0.0.1:{hook.port}",
        f"bots.example:{hook.port}",
    ]
    names["bots.example"] = ["169.254.169.254"]  # rebound outside the list since
    refused = sender.post(hook.url.replace("127.0.0.1", "bots.example"), TURN, {}, 5)
    assert refused.failure == "error" and len(hook.got) == 2


def register(stack: Stack, **body: Any) -> Any:
    doc = {"name": "hookbot", "games": ["fox"], "transport": "webhook", **body}
    return stack.http.post("/v1/bots", json=doc)


def test_the_bot_endpoints(stack: Stack, hooks: Any) -> None:
    hook = hooks(first_legal)
    for url in ("http://example.com/x", "ftp://127.0.0.1/x", "http://a:b@127.0.0.1/x"):
        refused = problem(register(stack, url=url), 422, "bot/webhook_not_allowed")
        assert "url" in refused["errors"]
    assert hook.got == []
    problem(register(stack, url=hook.url, games=["chess"]), 422)
    problem(register(stack, url=hook.url, budget_ms=5), 422)
    resp = register(stack, url=hook.url, budget_ms=800, on_failure="forfeit")
    assert resp.status_code == 201, resp.get_json()
    bot = resp.get_json()
    assert bot["key"].startswith("tbk_") and resp.headers["Location"] == f"/v1/bots/{bot['id']}"
    assert (bot["budget_ms"], bot["on_failure"], bot["url"]) == (800, "forfeit", hook.url)
    connected = register(stack, name="nat", transport="connected").get_json()
    listed = stack.http.get("/v1/bots").get_json()["bots"]
    assert [b["id"] for b in listed][-2:] == [bot["id"], connected["id"]]
    assert all("key" not in b for b in listed)
    shown = stack.http.get(f"/v1/bots/{bot['id']}").get_json()
    assert "key" not in shown and shown["stats"]["decisions"] == 0
    problem(stack.http.get("/v1/bots/nope"), 404, "bot/not_found")
    seats = [{"bot_id": "nope"}, {"bot": "random"}]
    bad = stack.http.post("/v1/games", json={"game": "fox", "seats": seats})
    assert "seats[0].bot_id" in problem(bad, 422)["errors"]
    seats = [{"bot_id": bot["id"], "bot": "random"}, {"bot": "random"}]
    problem(stack.http.post("/v1/games", json={"game": "fox", "seats": seats}), 422)
    problem(stack.http.delete(f"/v1/bots/{bot['id']}"), 401)
    wrong = stack.http.delete(f"/v1/bots/{bot['id']}", headers=bearer(connected["key"]))
    problem(wrong, 403)
    gone = stack.http.delete(f"/v1/bots/{bot['id']}", headers=bearer(bot["key"]))
    assert gone.status_code == 204
    assert stack.http.get(f"/v1/bots/{bot['id']}").get_json()["retired"] is True


def wait_over(app: App, gid: str, seconds: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        public = queries.view(app, gid, None)
        if public is not None and public["outcome"] is not None:
            return public
        assert time.monotonic() < deadline, public
        time.sleep(0.05)


def test_a_webhook_bot_plays_a_whole_fox_game_seeing_only_its_seat(
    stack: Stack, hooks: Any
) -> None:
    seen: list[tuple[dict[str, Any], Any]] = []

    def bot(h: BaseHTTPRequestHandler, doc: dict[str, Any]) -> None:
        if doc["type"] == "turn":  # the seat's own stored view, while the game waits on us
            seen.append((doc, queries.view(stack.worker_app, doc["game_id"], doc["seat"])))
        first_legal(h, doc)

    hook = hooks(bot)
    bot_doc = register(stack, url=hook.url).get_json()
    seats = [{"bot_id": bot_doc["id"]}, {"bot": "random"}]
    body = {"game": "fox", "seats": seats, "options": {"target": 1}}
    gid = stack.http.post("/v1/games", json=body).get_json()["id"]
    wait_over(stack.worker_app, gid)
    assert seen
    turns = 0
    for raw, headers in hook.got:
        mac = hmac.new(bot_doc["key"].encode(), raw, hashlib.sha256).hexdigest()
        assert headers["Tabletop-Signature"] == f"sha256={mac}"
        assert headers["Content-Type"] == "application/json"
        turns += json.loads(raw)["type"] == "turn"
    for doc, own in seen:
        assert doc["view"] == own and doc["legal_commands"] == own["legal_commands"]
        assert (doc["game_id"], doc["seat"], doc["version"]) == (gid, 0, own["version"])
    deadline = time.monotonic() + 30
    while json.loads(hook.got[-1][0])["type"] != "game_over":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert json.loads(hook.got[-1][0])["seat"] == 0
    report = stack.http.get(f"/v1/games/{gid}/audit", headers=bearer(AUDITOR)).get_json()
    assert report["status"] == "passed", report
    stats = stack.http.get(f"/v1/bots/{bot_doc['id']}").get_json()["stats"]
    assert stats["decisions"] == turns and stats["fallbacks"] == 0


def remote_worker(env: dict[str, str], out: Any, concurrency: int = 50) -> subprocess.Popen[bytes]:
    """The remote bots' worker (``services/bots/remote_worker.py``) as the stack runs it."""
    argv = [sys.executable, "-m", "services.bots.remote_worker", "--concurrency", str(concurrency)]
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def test_on_a_gevent_pool_a_bot_that_hangs_stalls_no_game(
    redis_url: str, redis_client: redis.Redis, hooks: Any, tmp_path: Path
) -> None:
    """Webhook bots on the real remote worker (greenlets, turns handed over on a Redis list
    by the dispatcher, no Celery): a bot that never answers plays each turn by its fallback
    once its budget is out, and a quick one's games run beside it."""
    release = threading.Event()

    def never(h: BaseHTTPRequestHandler, doc: dict[str, Any]) -> None:
        if doc["type"] == "turn":
            release.wait(30)  # until the test ends
        else:
            first_legal(h, doc)

    hang = hooks(never)
    quick = hooks(first_legal)
    settings = Settings(redis_url=redis_url, auditor_keys=frozenset({AUDITOR}), max_wait=10)
    worker_client = redis.Redis.from_url(redis_url)
    worker_app = bootstrap(settings, client=worker_client, dispatcher=CeleryDispatcher(settings))
    gateway = create_app(settings, client=redis.Redis.from_url(redis_url),
                         dispatcher=CeleryDispatcher(settings)).test_client()  # fmt: skip
    env = {**os.environ, "REDIS_URL": redis_url, "TABLETOP_SHARDS": "1",
           "TABLETOP_CELERY_METRICS_DIR": str(tmp_path / "metrics")}  # fmt: skip
    log = tmp_path / "remote.log"
    with log.open("wb") as out:
        proc = remote_worker(env, out)
    try:
        with consuming(worker_client, worker_app, name="gevent-test"):
            hanging = gateway.post("/v1/bots", json={"name": "hangs", "games": ["fox"],
                "transport": "webhook", "url": hang.url, "budget_ms": 200}).get_json()  # fmt: skip
            fast = gateway.post("/v1/bots", json={"name": "quick", "games": ["fox"],
                "transport": "webhook", "url": quick.url}).get_json()  # fmt: skip
            games = []
            for seats in ([hanging, fast], [fast, fast], [hanging, hanging]):
                body = {"game": "fox", "seats": [{"bot_id": b["id"]} for b in seats],
                        "options": {"target": 1}}  # fmt: skip
                resp = gateway.post("/v1/games", json=body)
                assert resp.status_code == 201, resp.get_json()
                games.append(resp.get_json()["id"])
            for gid in games:
                assert proc.poll() is None, log.read_text()
                wait_over(worker_app, gid, 120)
                # The scoring task's work (no Celery worker here): it counts the bots' turns.
                finalize.finalize_game(worker_app, gid)
            for gid in games:
                audited = gateway.get(f"/v1/games/{gid}/audit", headers=bearer(AUDITOR))
                assert audited.get_json()["status"] == "passed", audited.get_json()
            slow = gateway.get(f"/v1/bots/{hanging['id']}").get_json()["stats"]
            assert slow["decisions"] > 0 and slow["timeouts"] == slow["decisions"]
            assert 200 <= slow["latency_ms"]["max"] < 2000
            assert gateway.get(f"/v1/bots/{fast['id']}").get_json()["stats"]["fallbacks"] == 0
    finally:
        release.set()
        proc.terminate()
        proc.wait(30)
        worker_client.close()
