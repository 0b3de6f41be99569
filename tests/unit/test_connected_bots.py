"""Connected bots on the in-memory adapters (issue 24): the service issues each turn to the
bot's stream and waits for its answer; a bot thread plays it through ``remote.answer_turn`` as
the gateway would. Answers, expiry, ownership and an illegal answer's recorded failure."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from shared.app import bot_registration, queries, remote
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.errors import AppError
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from tests.unit.test_registered_bots import drain, log_of, registered_moves

if TYPE_CHECKING:
    from shared.app.ports import TurnSubscription

Decide = Callable[[dict[str, Any]], Any]  # a turn -> the command to answer (None: no answer)


def make_app() -> App:
    return bootstrap(
        Settings(bot_secret="s3cret"), backend="memory",
        dispatcher=lambda a: InlineDispatcher().bind(a),
    )  # fmt: skip


def register(app: App, **extra: Any) -> dict[str, Any]:
    body = {"name": "natbot", "games": ["fox"], "transport": "connected", **extra}
    return bot_registration.register_bot(app, body)


class BotThread:
    """A connected bot on the app's turn channel: each turn it hears is kept (raw bytes) and
    answered with ``decide(turn)`` through ``remote.answer_turn``; refusals are kept."""

    def __init__(self, app: App, bot: dict[str, Any], decide: Decide) -> None:
        self.app, self.bot, self.decide = app, bot, decide
        self.got: list[bytes] = []
        self.refused: list[AppError] = []
        self.stop = threading.Event()
        self.sub: TurnSubscription = app.ports.turns.subscribe(bot["id"])
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            raw = self.sub.next(0.05)
            if raw is None:
                continue
            self.got.append(raw)
            doc = json.loads(raw)
            if doc["type"] != "turn":
                continue
            command = self.decide(doc)
            if command is None:
                continue
            try:
                remote.answer_turn(self.app, self.bot["key"], doc["turn_id"], command)
            except AppError as exc:
                self.refused.append(exc)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sub.close()


@pytest.fixture
def bots() -> Iterator[Callable[[App, dict[str, Any], Decide], BotThread]]:
    made: list[BotThread] = []

    def make(app: App, bot: dict[str, Any], decide: Decide) -> BotThread:
        made.append(BotThread(app, bot, decide))
        return made[-1]

    yield make
    for b in made:
        b.close()


def play_fox(app: App, bot_id: str) -> str:
    seats = [{"bot_id": bot_id}, {"bot": "random"}]
    from shared.app import creation

    created = creation.create_game(app, "fox", seats, {"target": 1}, seed="fixed-seed")
    drain(app, "fox")
    return created.game_id


def first_legal(doc: dict[str, Any]) -> Any:
    return doc["legal_commands"][0]


def test_a_connected_bot_plays_a_whole_game_from_the_turns_it_is_sent(bots: Any) -> None:
    app = make_app()
    bot = register(app)
    player = bots(app, bot, first_legal)
    gid = play_fox(app, bot["id"])
    public = queries.view(app, gid, None)
    assert public is not None and public["outcome"] is not None
    docs = log_of(app, gid)
    moves = registered_moves(docs)
    turns = [raw for raw in player.got if json.loads(raw)["type"] == "turn"]
    assert moves and len(moves) == len(turns) and player.refused == []
    # The bytes the bot got are the ones hashed into the log, and they hold its seat's view.
    assert [m["command"]["bot_turn"]["sent_sha256"] for m in moves] == [
        hashlib.sha256(raw).hexdigest() for raw in turns
    ]
    assert all(m["command"]["bot_turn"]["failure"] is None for m in moves)
    for raw, move in zip(turns, moves, strict=True):
        sent = json.loads(raw)
        assert (
            sent["view"]["seat"] == 0 and sent["turn_id"] == move["command"]["bot_turn"]["turn_id"]
        )
        played = {k: v for k, v in move["command"].items() if k != "bot_turn"}
        assert played == sent["legal_commands"][0]
    deadline = time.monotonic() + 10
    while json.loads(player.got[-1])["type"] != "game_over":
        assert time.monotonic() < deadline, "no game_over on the bot's channel"
        time.sleep(0.02)
    assert json.loads(player.got[-1])["game_id"] == gid
    assert audit(gid, docs).status == "passed", audit(gid, docs).checks
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["decisions"] == len(moves) and stats["fallbacks"] == 0


def test_a_turn_not_answered_in_time_times_out_and_a_late_answer_is_409(bots: Any) -> None:
    app = make_app()
    bot = register(app, budget_ms=50)
    player = bots(app, bot, lambda doc: None)  # hears every turn, answers none
    gid = play_fox(app, bot["id"])
    moves = registered_moves(log_of(app, gid))
    assert moves and all(m["command"]["bot_turn"]["failure"] == "timeout" for m in moves)
    assert all(m["command"]["bot_turn"]["latency_ms"] >= 50 for m in moves)
    late = json.loads(next(r for r in player.got if json.loads(r)["type"] == "turn"))
    with pytest.raises(AppError) as caught:
        remote.answer_turn(app, bot["key"], late["turn_id"], late["legal_commands"][0])
    assert caught.value.status == 409 and caught.value.code == "turn/expired"
    assert app.ports.turns.pending(bot["id"]) == []
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["timeouts"] == stats["decisions"] == len(moves)
    assert audit(gid, log_of(app, gid)).status == "passed"


def test_an_illegal_answer_is_422_and_recorded_and_the_fallback_plays(bots: Any) -> None:
    app = make_app()
    bot = register(app)
    player = bots(app, bot, lambda doc: {"type": "play", "card": "XX"})
    gid = play_fox(app, bot["id"])
    moves = registered_moves(log_of(app, gid))
    assert moves and all(m["command"]["bot_turn"]["failure"] == "illegal" for m in moves)
    assert len(player.refused) == len(moves)
    assert all(e.status == 422 and "command" in e.errors for e in player.refused)
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["illegal"] == stats["fallbacks"] == len(moves)
    assert audit(gid, log_of(app, gid)).status == "passed"


def test_a_turn_is_answered_once_by_its_own_bot_only() -> None:
    app = make_app()
    bot, other = register(app), register(app, name="other")
    hook = bot_registration.register_bot(app, {"name": "hook", "games": ["fox"], "transport": "webhook",
                                     "url": "http://127.0.0.1:9/x"})  # fmt: skip
    turns = app.ports.turns
    # A turn issued by hand (no game): what the task stores for the bot.
    body = json.dumps({"type": "turn", "turn_id": "g-0-3"}).encode()
    assert turns.issue(bot["id"], "g-0-3", body, 5000, 60) == 5000
    assert turns.issue(bot["id"], "g-0-3", body, 5000, 60) is None  # issued once
    assert turns.pending(bot["id"]) == [body] and turns.pending(other["id"]) == []

    def refused(key: str | None, turn: str) -> AppError:
        with pytest.raises(AppError) as caught:
            remote.answer_turn(app, key, turn, {"type": "play"})
        return caught.value

    assert refused(None, "g-0-3").status == 401
    assert refused("tbk_" + "0" * 64, "g-0-3").status == 401
    assert refused(hook["key"], "g-0-3").status == 403
    # Another bot's key: not found, as a turn that does not exist (nothing says it does).
    theirs, nowhere = refused(other["key"], "g-0-3"), refused(other["key"], "g-0-9")
    assert (theirs.status, theirs.code, nowhere.status) == (404, "turn/not_found", 404)
    assert turns.get(bot["id"], "g-0-3") is not None and turns.get(bot["id"], "g-0-3").open  # type: ignore[union-attr]
    # Answered by the store directly (the legality check needs a game): once only.
    assert turns.answer(bot["id"], "g-0-3", b'{"command":{}}') == "ok"
    assert turns.answer(bot["id"], "g-0-3", b'{"command":{}}') == "expired"
    assert refused(bot["key"], "g-0-3").code == "turn/expired"
    assert turns.pending(bot["id"]) == []
    assert turns.wait(bot["id"], "g-0-3", 1) == b'{"command":{}}'
    bot_registration.retire_bot(app, bot["id"], bot["key"])
    assert refused(bot["key"], "g-0-3").status == 401  # a retired bot's key opens nothing


def test_a_bot_that_reconnects_is_sent_its_open_turns_again(bots: Any) -> None:
    app = make_app()
    bot = register(app, budget_ms=3000)
    answered = threading.Event()
    pending_seen: list[list[bytes]] = []

    def later(doc: dict[str, Any]) -> Any:
        # "Reconnecting": the open turns read again while the service waits on this one.
        pending_seen.append(app.ports.turns.pending(bot["id"]))
        answered.set()
        return doc["legal_commands"][0]

    player = bots(app, bot, later)
    gid = play_fox(app, bot["id"])
    assert answered.is_set() and player.refused == []
    turns = [r for r in player.got if json.loads(r)["type"] == "turn"]
    assert [seen for seen in pending_seen] == [[raw] for raw in turns]
    moves = registered_moves(log_of(app, gid))
    assert all(m["command"]["bot_turn"]["failure"] is None for m in moves)
