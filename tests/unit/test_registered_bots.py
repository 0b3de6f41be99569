"""Registered bots on the in-memory adapters, their webhook replaced by a scripted one: what a
bot is sent (signed, exactly its seat's view), each failure's fallback recorded in the log,
the stats, and the audit of their moves (issue 24)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from shared.adapters.memory import MemoryCommandBus
from shared.app import bot_registration, bot_turns, bots, commands, creation, queries, remote
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.errors import AppError
from shared.app.messages import CommandMessage
from shared.app.ports import WebhookAnswer
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.games.rng import bot_random
from tests.unit.test_audit_redecide import rehash

URL = "http://127.0.0.1:9/bot"
Answer = Callable[[dict[str, Any]], WebhookAnswer]


class ScriptedWebhooks:
    """``WebhookSender`` whose bot is a function of the turn; keeps every request, and the
    seat's own stored view at the moment each turn was sent."""

    def __init__(self, app: App, answer: Answer) -> None:
        self.app = app
        self.answer = answer
        self.sent: list[tuple[str, bytes, dict[str, str], dict[str, Any] | None]] = []

    def refusal(self, url: str) -> str | None:
        return None

    def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> WebhookAnswer:
        doc = json.loads(body)
        own = None
        if doc["type"] == "turn":
            own = queries.view(self.app, doc["game_id"], doc["seat"])
        self.sent.append((url, body, dict(headers), own))
        if doc["type"] != "turn":
            return WebhookAnswer(200, b"", None, 1)
        return self.answer(doc)


def first_legal(doc: dict[str, Any]) -> WebhookAnswer:
    return WebhookAnswer(200, json.dumps({"command": doc["legal_commands"][0]}).encode(), None, 7)


def failing(kind: str) -> Answer:
    """A bot that fails every turn the way ``kind`` says."""

    def answer(doc: dict[str, Any]) -> WebhookAnswer:
        if kind == "illegal":
            return WebhookAnswer(200, b'{"command": {"type": "play", "card": "XX"}}', None, 3)
        if kind == "malformed":
            return WebhookAnswer(200, b"not json", None, 3)
        if kind == "status":
            return WebhookAnswer(500, b'{"command": null}', None, 3)
        if kind == "redirect":
            return WebhookAnswer(302, b"", None, 3)
        return WebhookAnswer(None, b"", kind, 500 if kind == "timeout" else 1)

    return answer


def app_with(answer: Answer) -> tuple[App, ScriptedWebhooks]:
    app = bootstrap(
        Settings(bot_secret="s3cret"),
        backend="memory",
        dispatcher=lambda a: InlineDispatcher().bind(a),
    )
    hooks = ScriptedWebhooks(app, answer)
    app.ports.webhooks = hooks
    return app, hooks


def drain(app: App, game: str) -> None:
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    while queued := bus.take(game):
        for fields in queued:
            commands.decide_command(app, CommandMessage.from_fields(dict(fields)))  # type: ignore[arg-type]


def register(app: App, **extra: Any) -> dict[str, Any]:
    body = {"name": "mybot", "games": ["fox"], "transport": "webhook", "url": URL, **extra}
    return bot_registration.register_bot(app, body)


def play_fox(app: App, bot_id: str, other: dict[str, Any] | None = None) -> str:
    seats = [{"bot_id": bot_id}, other or {"bot": "random"}]
    created = creation.create_game(app, "fox", seats, {"target": 1}, seed="fixed-seed")
    drain(app, "fox")
    return created.game_id


def log_of(app: App, gid: str) -> list[dict[str, Any]]:
    return [e.to_dict() for e in app.ports.store.read(gid)]


def registered_moves(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d.get("command") and d["command_id"].startswith("bot-0-")]


def test_each_turn_is_signed_with_the_key_and_holds_exactly_the_seats_view() -> None:
    app, hooks = app_with(first_legal)
    bot = register(app)
    gid = play_fox(app, bot["id"])
    turns = [s for s in hooks.sent if json.loads(s[1])["type"] == "turn"]
    assert turns, "the bot was sent no turn"
    for url, body, headers, own in turns:
        assert url == URL
        assert headers["Content-Type"] == "application/json"
        mac = hmac.new(bot["key"].encode(), body, hashlib.sha256).hexdigest()
        assert headers["Tabletop-Signature"] == f"sha256={mac}"
        doc = json.loads(body)
        assert own is not None
        assert doc["view"] == own  # every field of the seat's own view, nothing else
        assert doc["legal_commands"] == own["legal_commands"]
        assert (doc["game"], doc["game_id"], doc["seat"], doc["version"]) == (
            "fox",
            gid,
            0,
            own["version"],
        )
        assert (doc["bot_id"], doc["budget_ms"]) == (bot["id"], 500)
        assert body == remote.turn_body(
            turn=doc["turn_id"], spec=bot_turns.seat_spec(app.ports.bots.get(bot["id"])),  # type: ignore[arg-type]
            game_id=gid, seat=0, view=own, seed=commands.secret_seed(app, gid),
        )  # fmt: skip
        assert doc["nonce"] == bot_turns.turn_nonce(commands.secret_seed(app, gid), doc["turn_id"])
    over = json.loads(hooks.sent[-1][1])
    assert over["type"] == "game_over" and over["seat"] == 0 and over["game_id"] == gid
    assert over["bot_id"] == bot["id"]
    moves = registered_moves(log_of(app, gid))
    assert len(moves) == len(turns)
    sent = {hashlib.sha256(b).hexdigest() for _, b, _, _ in turns}
    assert {m["command"]["bot_turn"]["sent_sha256"] for m in moves} == sent
    assert all(m["command"]["bot_turn"]["failure"] is None for m in moves)
    assert all(m["command"]["bot_turn"]["latency_ms"] == 7 for m in moves)
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["decisions"] == len(turns) and stats["fallbacks"] == 0
    assert stats["latency_ms"] == {"p50": 7, "p95": 7, "max": 7}


def test_a_turn_answers_with_what_came_of_it() -> None:
    """``play_remote_move`` answers in a typed ``RemoteMove``, not a word to parse: no such
    game, a seat whose bot is not registered, an old version, the command id of a turn
    submitted (the same again for a repeated turn), and once the game is over, the notice."""
    app, hooks = app_with(first_legal)
    bot = register(app)
    move, moved = remote.RemoteMove, remote.RemoteMoved
    assert remote.play_remote_move(app, "nope", 0, 1) == move(moved.MISSING)
    seats = [{"bot_id": bot["id"]}, {"bot": "random"}]
    gid = creation.create_game(app, "fox", seats, {"target": 1}, seed="fixed-seed").game_id
    assert remote.play_remote_move(app, gid, 1, 1) == move(moved.NOT_REGISTERED)
    view = queries.view(app, gid, None)  # the registered bot leads: its turn submitted
    assert isinstance(view, dict) and view["to_act"] == [0]
    version = view["version"]
    cid = f"bot-0-{version}"
    assert remote.play_remote_move(app, gid, 0, version) == move(moved.SUBMITTED, cid)
    assert remote.play_remote_move(app, gid, 0, version - 1) == move(moved.STALE)
    assert remote.play_remote_move(app, gid, 0, version).label == cid
    drain(app, "fox")
    view = queries.view(app, gid, None)
    assert isinstance(view, dict) and view["outcome"] is not None
    over = remote.play_remote_move(app, gid, 0, view["version"])
    assert over == move(moved.GAME_OVER, told=remote.Told.TOLD_ALREADY)  # told as it ended
    assert over.label == "told already"


@pytest.mark.parametrize(
    ("kind", "failure", "counter"),
    [
        ("timeout", "timeout", "timeouts"),
        ("illegal", "illegal", "illegal"),
        ("malformed", "illegal", "illegal"),
        ("status", "error", "errors"),
        ("redirect", "error", "errors"),
        ("error", "error", "errors"),
        ("unreachable", "unreachable", "errors"),
    ],
)
def test_each_failure_plays_the_random_fallback_and_is_recorded(
    kind: str, failure: str, counter: str
) -> None:
    app, hooks = app_with(failing(kind))
    bot = register(app)
    gid = play_fox(app, bot["id"])
    assert queries.view(app, gid, None)["outcome"] is not None  # type: ignore[index]
    docs = log_of(app, gid)
    moves = registered_moves(docs)
    assert moves
    seed = docs[-1]["data"]["seed"]
    for move in moves:
        turn = move["command"]["bot_turn"]
        assert turn["failure"] == failure
        at = int(move["command_id"].rsplit("-", 1)[1])
        seen = next(json.loads(b)["view"] for _, b, _, _ in hooks.sent
                    if json.loads(b).get("version") == at)  # fmt: skip
        again = bots.random_bot(seen, bot_random(seed, 0, at))
        assert {k: v for k, v in move["command"].items() if k != "bot_turn"} == again
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["decisions"] == len(moves) == stats["fallbacks"] == stats[counter]
    assert audit(gid, docs).status == "passed", audit(gid, docs).checks


def test_a_forfeit_bot_resigns_when_it_fails() -> None:
    app, _ = app_with(failing("timeout"))
    bot = register(app, on_failure="forfeit")
    gid = play_fox(app, bot["id"])
    docs = log_of(app, gid)
    [move] = registered_moves(docs)
    assert move["command"]["type"] == "resign"
    assert move["command"]["bot_turn"]["failure"] == "timeout"
    public = queries.view(app, gid, None)
    assert public is not None and public["outcome"] is not None
    assert public["seats"][0].get("resigned") is True
    assert audit(gid, docs).status == "passed"


def test_the_audit_fails_a_tampered_sent_sha256_and_a_forged_fallback() -> None:
    app, _ = app_with(first_legal)
    gid = play_fox(app, register(app)["id"])
    docs = log_of(app, gid)
    assert audit(gid, docs).status == "passed", audit(gid, docs).checks
    tampered = json.loads(json.dumps(docs))
    first = registered_moves(tampered)[0]
    first["command"]["bot_turn"]["sent_sha256"] = "0" * 64
    report = audit(gid, rehash(tampered))
    assert report.status == "failed"
    assert report.first_failure is not None
    assert report.first_failure["check"] == "bot moves"
    assert report.first_failure["version"] == first["version"]

    app, _ = app_with(failing("timeout"))
    gid = play_fox(app, register(app)["id"])
    forged = json.loads(json.dumps(log_of(app, gid)))
    earlier, last = registered_moves(forged)[0], registered_moves(forged)[-1]
    # Every body holds the view's head_hash, so an edit of any earlier envelope breaks the
    # sent_sha256 of every turn after it, even one that only relabels a failure.
    earlier["command"]["bot_turn"]["failure"] = None
    report = audit(gid, rehash(json.loads(json.dumps(forged))))
    assert report.first_failure is not None and report.first_failure["check"] == "bot moves"
    earlier["command"]["bot_turn"]["failure"] = "timeout"
    # The last turn's record is its own: a random move claimed as the bot's is still legal
    # (what the bot answered is not in the log), but an unknown failure is refused.
    last["command"]["bot_turn"]["failure"] = None
    assert audit(gid, rehash(json.loads(json.dumps(forged)))).status == "passed"
    last["command"]["bot_turn"]["failure"] = "bogus"
    assert audit(gid, rehash(forged)).status == "failed"


def test_a_seat_spec_names_a_registered_bot_for_that_game() -> None:
    app, _ = app_with(first_legal)
    bot = register(app)
    with pytest.raises(Exception) as unknown:
        creation.create_game(app, "fox", [{"bot_id": "nope"}, {"bot": "random"}])
    assert "seats[0].bot_id" in unknown.value.errors  # type: ignore[attr-defined]
    with pytest.raises(Exception) as other_game:
        creation.create_game(app, "skull", [{"bot_id": bot["id"]}] + [{"bot": "random"}] * 2)
    assert "seats[0].bot_id" in other_game.value.errors  # type: ignore[attr-defined]
    created = creation.create_game(app, "fox", [{"bot_id": bot["id"], "name": "x"}, {"name": "a"}])
    seat = queries.view(app, created.game_id, None)["seats"][0]  # type: ignore[index]
    assert seat["bot"] == "registered" and seat["bot_id"] == bot["id"] and seat["name"] == "x"


def test_the_key_is_shown_once_stored_as_a_hash_and_retires_its_bot_alone() -> None:
    app, _ = app_with(first_legal)
    bot = register(app)
    other = register(app)
    stored = app.ports.bots.get(bot["id"])
    assert stored is not None
    assert stored.key_sha256 == hashlib.sha256(bot["key"].encode()).hexdigest()
    assert bot["key"] not in repr(stored)
    shown = bot_registration.show_bot(app, bot["id"])
    assert "key" not in shown and "key_sha256" not in shown
    assert [b["id"] for b in bot_registration.list_bots(app)] == [bot["id"], other["id"]]
    with pytest.raises(AppError) as wrong:
        bot_registration.retire_bot(app, bot["id"], other["key"])
    assert wrong.value.status == 403
    bot_registration.retire_bot(app, bot["id"], bot["key"])
    assert bot_registration.show_bot(app, bot["id"])["retired"] is True
    with pytest.raises(Exception) as retired:
        creation.create_game(app, "fox", [{"bot_id": bot["id"]}, {"name": "a"}])
    assert "seats[0].bot_id" in retired.value.errors  # type: ignore[attr-defined]


def test_a_turn_reads_together_and_takes_a_listed_answer_without_loading_the_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A webhook turn reads the view, the sent mark and the bot in one ``turn_reads`` (the
    bot's id is remembered per seat: only a game's first turn looks the bot up alone), and a
    listed answer is checked against the view's ``legal_commands``, not by loading the game;
    an unlisted one still gets the full check (an illegal answer is refused as before)."""
    app, hooks = app_with(first_legal)
    bot = register(app)
    counts: dict[str, int] = {}
    inside = [False]

    def counting(name: str, fn: Callable[..., Any], pause: bool = False) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if inside[0]:
                counts[name] = counts.get(name, 0) + 1
            was, inside[0] = inside[0], inside[0] and not pause
            try:  # paused: what the batched read does inside, what the scripted hook reads
                return fn(*args, **kwargs)
            finally:
                inside[0] = was

        return wrapped

    p = app.ports
    monkeypatch.setattr(p.read_models, "read", counting("read", p.read_models.read))
    monkeypatch.setattr(p.bus, "was_sent", counting("was_sent", p.bus.was_sent))
    monkeypatch.setattr(p.bots, "get", counting("get", p.bots.get))
    monkeypatch.setattr(App, "load", counting("load", App.load))
    if hasattr(p.bots, "turn_reads"):
        monkeypatch.setattr(p.bots, "turn_reads", counting("turn_reads", p.bots.turn_reads, True))
    monkeypatch.setattr(hooks, "post", counting("post", hooks.post, True))
    turn = remote.play_remote_move

    def play(*args: Any) -> remote.RemoteMove:
        inside[0] = True
        try:
            return turn(*args)
        finally:
            inside[0] = False

    monkeypatch.setattr(remote, "play_remote_move", play)
    gid = play_fox(app, bot["id"])
    turns = sum(json.loads(s[1])["type"] == "turn" for s in hooks.sent)
    assert turns > 1 and queries.view(app, gid, None)["outcome"] is not None  # type: ignore[index]
    assert counts.get("load", 0) == 0, counts
    assert counts.get("read", 0) + counts.get("was_sent", 0) + counts.get("get", 0) <= 1, counts
    assert counts.get("turn_reads", 0) == turns + 1  # and the game-over notice's
    assert bot_registration.show_bot(app, bot["id"])["stats"]["fallbacks"] == 0

    hooks.answer = failing("illegal")
    counts.clear()
    gid = play_fox(app, bot["id"])
    assert counts.get("load", 0) > 0  # the full check of an unlisted answer
    moves = registered_moves(log_of(app, gid))
    assert moves and all(m["command"]["bot_turn"]["failure"] == "illegal" for m in moves)
