"""No bot game stalls after a crash: a lost wake is found by the deadline scheduler's sweep and
the bot is woken again; the bot's "sent once" mark never stands for a command not sent."""

from __future__ import annotations

import json
from typing import Any

from shared.adapters.memory import FixedClock, MemoryCommandBus
from shared.app import (
    bot_moves,
    bot_registration,
    clocks,
    commands,
    creation,
    projecting,
    queries,
    remote,
)
from shared.app.context import App
from shared.app.messages import CommandMessage
from shared.app.ports import WebhookAnswer
from shared.bootstrap import bootstrap
from shared.config import Settings


class LosingDispatcher:
    """Drops every wake while ``lose`` is set (a crash between the append and the hand-off,
    a Celery worker killed with the task); otherwise plays it at once."""

    def __init__(self) -> None:
        self.app: App | None = None
        self.lose = True
        self.woken: list[tuple[str, int, int]] = []

    def move(self, game_id: str, seat: int, version: int, *, slow: bool = False) -> None:
        self.woken.append((game_id, seat, version))
        if not self.lose and self.app is not None:
            bot_moves.play_bot_move(self.app, game_id, seat, version)

    def remote(self, game_id: str, seat: int, version: int) -> None:
        self.woken.append((game_id, seat, version))
        if not self.lose and self.app is not None:
            remote.play_remote_move(self.app, game_id, seat, version)

    def finalize(self, game_id: str) -> None:
        pass

    def tournament(self, tournament_id: str) -> None:
        pass


def setup() -> tuple[App, FixedClock, LosingDispatcher]:
    moment = FixedClock()
    dispatcher = LosingDispatcher()
    app = bootstrap(Settings(), backend="memory", dispatcher=dispatcher, clock=moment)
    dispatcher.app = app
    return app, moment, dispatcher


def drain(app: App, game: str) -> None:
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    while queued := bus.take(game):
        for fields in queued:
            commands.decide_command(app, CommandMessage.from_fields(fields))


def version(app: App, gid: str) -> int:
    doc: Any = queries.view(app, gid, None)
    return int(doc["version"])


def test_a_bot_game_whose_wake_was_lost_is_woken_by_the_sweep() -> None:
    app, moment, dispatcher = setup()
    gid = creation.create_game(app, "fox", [{"bot": "random"}, {"bot": "random"}]).game_id
    stuck = version(app, gid)
    assert dispatcher.woken  # woken once, and the wake was lost
    moment.advance(projecting.BOT_STALL_S - 1)
    assert clocks.fire_due_deadlines(app) == clocks.Fired()  # not stalled long enough yet
    moment.advance(2)
    dispatcher.lose = False
    woken = clocks.fire_due_deadlines(app).woken
    assert woken and all(w.game_id == gid for w in woken)
    drain(app, "fox")
    assert version(app, gid) > stuck  # the bot moved, and the game goes on


def test_a_bot_whose_view_a_full_redis_left_behind_is_woken_with_a_fresh_one() -> None:
    app, moment, dispatcher = setup()
    dispatcher.lose = False
    gid = creation.create_game(app, "fox", [{"name": "ana"}, {"bot": "random"}]).game_id
    public: Any = queries.view(app, gid, None)
    while 0 not in public["to_act"]:  # the bot's first moves, until ana is to act
        drain(app, "fox")
        public = queries.view(app, gid, None)
    old_view = queries.view_json(app, gid, 1)
    dispatcher.lose = True  # the bot's wake after ana's moves is lost...
    for n in range(20):  # ana plays until the bot is to act
        mine: Any = queries.view(app, gid, 0)
        command = CommandMessage(command_id=f"c{n}", game_id=gid, seat=0,
                                 body=mine["legal_commands"][0])  # fmt: skip
        assert commands.decide_command(app, command)["status"] == "accepted"
        if 1 in queries.view(app, gid, None)["to_act"]:  # type: ignore[index]
            break
    # ...and the bot's view was not written (Redis refused it, full, mid-pipeline).
    head = version(app, gid)
    app.ports.read_models.write(gid, [queries.view_json(app, gid, 0).decode(),
                                      old_view.decode()], queries.view_json(app, gid, None).decode())  # fmt: skip
    assert json.loads(queries.view_json(app, gid, 1))["version"] < head
    moment.advance(projecting.BOT_STALL_S + 1)
    dispatcher.lose = False
    assert clocks.fire_due_deadlines(app).woken
    assert json.loads(queries.view_json(app, gid, 1))["version"] >= head
    drain(app, "fox")
    assert version(app, gid) > head  # the bot moved from its fresh view


def test_a_moving_game_is_not_woken_and_a_finished_one_is_forgotten() -> None:
    app, moment, dispatcher = setup()
    dispatcher.lose = False
    gid = creation.create_game(app, "skull", [{"bot": "random"}] * 3).game_id
    for _ in range(10_000):
        doc: Any = queries.view(app, gid, None)
        if doc["outcome"]:
            break
        drain(app, "skull")
        moment.advance(1)  # moving: each change moves the sweep's deadline on
        assert clocks.fire_due_deadlines(app) == clocks.Fired()
    assert queries.view(app, gid, None)["outcome"]  # type: ignore[index]
    moment.advance(projecting.BOT_STALL_S * 2)
    assert clocks.fire_due_deadlines(app) == clocks.Fired()
    assert app.ports.clock.due(moment.epoch() + 10**6) == []  # nothing left to look at


def test_the_sent_mark_comes_after_the_submit() -> None:
    app, _, _ = setup()  # the wake at creation is lost: this test plays the bot itself
    for n in range(20):  # a deal in which the bot leads
        gid = creation.create_game(
            app, "fox", [{"bot": "random"}, {"name": "h"}], seed=f"mark-{n}"
        ).game_id
        doc: Any = queries.view(app, gid, None)
        if 0 in doc["to_act"]:
            break
    assert 0 in doc["to_act"]
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    order: list[str] = []
    put, mark = bus.put, bus.send_once

    def spy_put(*a: Any, **k: Any) -> None:
        order.append("submit")
        put(*a, **k)

    def spy_mark(*a: Any, **k: Any) -> bool:
        order.append("mark")
        return mark(*a, **k)

    bus.put = spy_put  # type: ignore[method-assign]
    bus.send_once = spy_mark  # type: ignore[method-assign]
    assert str(bot_moves.play_bot_move(app, gid, 0, doc["version"]).command_id).startswith("bot-0-")
    assert order == ["submit", "mark"]
    order.clear()
    bot_moves.play_bot_move(app, gid, 0, doc["version"])  # a repeated wake sends nothing
    assert order == []


def test_a_registered_bots_turn_lost_on_its_way_is_sent_again_by_the_sweep() -> None:
    """A webhook bot's turn handed to the remote workers and lost there (taken from their
    list by a worker killed before it asked the bot) is sent again by the same sweep."""
    app, moment, dispatcher = setup()
    asked: list[int] = []

    class Hook:
        def refusal(self, url: str) -> str | None:
            return None

        def post(self, url: str, body: bytes, headers: Any, timeout_s: float) -> WebhookAnswer:
            doc = json.loads(body)
            if doc["type"] != "turn":
                return WebhookAnswer(200, b"", None, 1)
            asked.append(doc["version"])
            command = {"command": doc["legal_commands"][0]}
            return WebhookAnswer(200, json.dumps(command).encode(), None, 1)

    app.ports.webhooks = Hook()
    bot = bot_registration.register_bot(app, {"name": "hook", "games": ["fox"], "transport": "webhook",
                                    "url": "http://127.0.0.1:9/"})  # fmt: skip
    seats = [{"bot_id": bot["id"]}, {"bot_id": bot["id"]}]
    gid = creation.create_game(app, "fox", seats).game_id
    stuck = version(app, gid)
    assert dispatcher.woken and asked == []  # handed over, and lost
    moment.advance(projecting.BOT_STALL_S + 1)
    dispatcher.lose = False
    woken = clocks.fire_due_deadlines(app).woken
    assert woken and all(w.game_id == gid for w in woken)
    drain(app, "fox")
    assert asked[0] == stuck and version(app, gid) > stuck  # asked again, and it moved
