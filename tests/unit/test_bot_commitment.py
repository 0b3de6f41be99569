"""A registered bot's commitment (``bot_turn.sent_sha256``) hides what it commits to, as an
attacker reading the events of a running game would try it (issue 35): the seat's own view,
the best guess an attacker could ever make, cannot be tested against it before the seed is
revealed; the turn's latency and failure are not shown to other seats or spectators; the
audit checks the nonce once the seed is out, and reports seats from before nonces as such."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from shared.adapters.memory import MemoryCommandBus
from shared.app import bot_registration, bot_turns, commands, creation, queries
from shared.app.messages import CommandMessage
from shared.app.ports import WebhookAnswer
from shared.app.queries import Caller
from shared.audit import audit
from shared.events import canonical_json
from tests.unit.test_registered_bots import (
    app_with,
    drain,
    first_legal,
    log_of,
    play_fox,
    register,
    registered_moves,
)


def _plain_hash(body: bytes) -> str:
    """What an attacker can hash for a guessed view: the body without a nonce it cannot know."""
    doc = json.loads(body)
    doc.pop("nonce", None)
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()


def _readers() -> list[Caller]:
    return [Caller(role="player", seat=1), Caller(role="spectator", seat=None)]


def test_the_seats_own_view_cannot_be_tested_against_its_commitment() -> None:
    app, hooks = app_with(first_legal)
    gid = play_fox(app, register(app)["id"])
    turns = [body for _, body, _, _ in hooks.sent if json.loads(body)["type"] == "turn"]
    moves = registered_moves(log_of(app, gid))
    assert len(turns) == len(moves) > 5
    for body, move in zip(turns, moves, strict=True):
        recorded = move["command"]["bot_turn"]
        # The bot can check what it was sent: the hash of the very bytes it got.
        assert hashlib.sha256(body).hexdigest() == recorded["sent_sha256"]
        # An attacker guessing the exact view (every other field is public) cannot confirm it.
        assert _plain_hash(body) != recorded["sent_sha256"]
        nonce = json.loads(body)["nonce"]
        assert len(nonce) == 64 and nonce not in json.dumps(queries.view(app, gid, None))


def test_other_seats_and_spectators_read_no_latency_or_failure_while_it_runs() -> None:
    app, _ = app_with(first_legal)
    gid = play_fox(app, register(app)["id"])
    for reader in _readers():
        seen = queries.events(app, gid, reader)["events"]
        turns = [e["command"]["bot_turn"] for e in registered_moves(seen)]
        assert turns and all(set(t) == {"turn_id", "sent_sha256"} for t in turns), turns[0]
        assert all(e["command"]["redacted"] is True for e in registered_moves(seen))
    # The seat itself (its bot) reads its own turns whole, and so does the export.
    own = queries.events(app, gid, Caller(role="player", seat=0))["events"]
    assert all("latency_ms" in e["command"]["bot_turn"] for e in registered_moves(own))
    assert all("latency_ms" in e["command"]["bot_turn"] for e in registered_moves(log_of(app, gid)))


def test_the_audit_recomputes_the_nonce_from_the_revealed_seed() -> None:
    app, hooks = app_with(first_legal)
    gid = play_fox(app, register(app)["id"])
    docs = log_of(app, gid)
    report = audit(gid, docs)
    assert report.status == "passed", report.checks
    assert "plain hash" not in report.checks["bot moves"]
    body = next(b for _, b, _, _ in hooks.sent if json.loads(b)["type"] == "turn")
    doc = json.loads(body)
    seed = commands.secret_seed(app, gid)
    assert doc["nonce"] == bot_turns.turn_nonce(seed, doc["turn_id"])
    assert docs[-1]["data"]["seed"] == seed  # so anyone recomputes it after the game


def test_a_seat_from_before_nonces_is_audited_as_it_was_and_said_to_be_plain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def old_spec(bot: Any) -> dict[str, Any]:
        spec = bot_turns.seat_spec(bot)
        del spec[bot_turns.COMMITMENT]
        return spec

    monkeypatch.setattr(bot_registration, "seat_spec", old_spec)
    app, hooks = app_with(first_legal)
    gid = play_fox(app, register(app)["id"])
    body = next(b for _, b, _, _ in hooks.sent if json.loads(b)["type"] == "turn")
    assert "nonce" not in json.loads(body)
    report = audit(gid, log_of(app, gid))
    assert report.status == "passed", report.checks
    assert "plain hash" in report.checks["bot moves"]


def test_a_bots_stats_count_a_game_only_once_it_is_over() -> None:
    """Stats anyone can poll between two moves would tell each turn's latency and failure."""
    app, _ = app_with(failing_half)
    bot = register(app)
    created = creation.create_game(app, "fox", [{"bot_id": bot["id"]}, {"bot": "random"}],
                                   {"target": 1}, seed="fixed-seed")  # fmt: skip
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    for _ in range(4):  # a few commands in: the bot has decided some turns
        for fields in bus.take("fox") or []:
            commands.decide_command(app, CommandMessage.from_fields(dict(fields)))  # type: ignore[arg-type]
    running = registered_moves(log_of(app, created.game_id))
    assert running and queries.view(app, created.game_id, None)["outcome"] is None  # type: ignore[index]
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["decisions"] == 0 and stats["timeouts"] == 0
    drain(app, "fox")
    moves = registered_moves(log_of(app, created.game_id))
    stats = bot_registration.show_bot(app, bot["id"])["stats"]
    assert stats["decisions"] == len(moves) > len(running)
    failed = sum(1 for m in moves if m["command"]["bot_turn"]["failure"] == "timeout")
    assert failed and stats["timeouts"] == failed


def failing_half(doc: dict[str, Any]) -> WebhookAnswer:
    if doc["version"] % 2:
        return WebhookAnswer(None, b"", "timeout", 500)
    return first_legal(doc)
