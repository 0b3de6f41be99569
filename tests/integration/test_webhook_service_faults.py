"""A turn whose budget the service spent is not charged to the bot (issue 35): against real
loopback sockets, a sender that began late calls its timeout ``service``, an answer that
came while the sender was busy is still read, and a ``service`` turn is sent again with a
whole budget, or recorded as ``service``, which the bot's stats keep apart."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from shared.adapters import webhook
from shared.adapters.webhook import HttpWebhooks
from shared.app import bot_registration, queries
from shared.app.ports import WebhookAnswer
from shared.audit import audit
from tests.integration.test_webhook_bots import TURN, Handler, Hook, reply
from tests.unit.test_registered_bots import app_with, log_of, play_fox, register, registered_moves


@pytest.fixture
def hooks() -> Iterator[Callable[[Handler], Hook]]:
    made: list[Hook] = []

    def make(handle: Handler) -> Hook:
        made.append(Hook(handle))
        return made[-1]

    yield make
    for hook in made:
        hook.close()


def _slow_resolver(seconds: float) -> Any:
    def resolve(host: str, port: int) -> list[str]:
        time.sleep(seconds)  # this process busy before it connects: the bot is not yet asked
        return ["127.0.0.1"]

    return resolve


def test_a_timeout_the_sender_caused_is_the_services_and_the_bots_own_is_the_bots(
    hooks: Any,
) -> None:
    def slow_bot(h: Any, doc: dict[str, Any]) -> None:
        time.sleep(0.4)
        reply(h, 200, b'{"command": null}')

    hook = hooks(slow_bot)
    url = f"http://localhost:{hook.port}/turn"
    late = HttpWebhooks(["localhost", "127.0.0.1"], _slow_resolver(0.35))
    assert late.post(url, TURN, {}, 0.5).failure == "service"
    prompt = HttpWebhooks(["localhost", "127.0.0.1"], _slow_resolver(0))
    assert prompt.post(url, TURN, {}, 0.2).failure == "timeout"


def test_an_answer_that_came_while_the_sender_was_busy_is_read(
    hooks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    answered = threading.Event()

    def quick_bot(h: Any, doc: dict[str, Any]) -> None:
        reply(h, 200, b'{"command": {"type": "pass"}}')
        answered.set()

    hook = hooks(quick_bot)
    real = webhook._read_answer

    def starved(sock: Any, deadline: float) -> Any:
        assert answered.wait(10)
        time.sleep(max(0.0, deadline - time.monotonic()) + 0.05)  # busy past the deadline
        return real(sock, deadline)

    monkeypatch.setattr(webhook, "_read_answer", starved)
    answer = HttpWebhooks().post(hook.url, TURN, {}, 0.3)
    assert answer.failure is None and answer.status == 200, answer
    assert json.loads(answer.body) == {"command": {"type": "pass"}}


def _service_then(answers: list[str | None]) -> Any:
    """A bot whose sender reports ``answers`` in turn (``service``, or None: the first legal
    command), then answers every later turn with its first legal command."""
    left = list(answers)

    def answer(doc: dict[str, Any]) -> WebhookAnswer:
        kind = left.pop(0) if left else None
        if kind is None:
            body = json.dumps({"command": doc["legal_commands"][0]}).encode()
            return WebhookAnswer(200, body, None, 5)
        return WebhookAnswer(None, b"", kind, 500)

    return answer


def test_a_service_fault_is_sent_again_with_a_whole_budget() -> None:
    app, hooks_ = app_with(_service_then(["service", None]))
    bot = register(app)
    gid = play_fox(app, bot["id"])
    turns = [json.loads(b) for _, b, _, _ in hooks_.sent if json.loads(b)["type"] == "turn"]
    assert turns[0]["turn_id"] == turns[1]["turn_id"]  # the first turn, sent twice
    first = registered_moves(log_of(app, gid))[0]
    assert first["command"]["bot_turn"]["failure"] is None
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["fallbacks"] == 0 and stats["service_faults"] == 0
    assert stats["decisions"] == len(registered_moves(log_of(app, gid)))


def test_a_service_fault_twice_is_recorded_as_the_services_and_not_counted_against_the_bot() -> (
    None
):
    app, _ = app_with(_service_then(["service", "service"]))
    bot = register(app)
    gid = play_fox(app, bot["id"])
    moves = registered_moves(log_of(app, gid))
    assert moves[0]["command"]["bot_turn"]["failure"] == "service"
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["service_faults"] == 1
    assert stats["decisions"] == len(moves) - 1 and stats["fallbacks"] == 0
    assert stats["timeouts"] == 0
    assert audit(gid, log_of(app, gid)).status == "passed"
    assert queries.view(app, gid, None)["outcome"] is not None  # type: ignore[index]
