"""The application ring's shape (issue 27): service commands are typed messages dispatched by
type from one registry, results are typed values, and no module of ``shared/app`` is over 500
lines."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from shared.app import bot_moves, clocks, creation, service_commands
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import Reply
from shared.app.service_commands import (
    HANDLERS,
    Contribute,
    Decided,
    Join,
    Leave,
    Move,
    Resign,
    TimeOut,
)
from shared.bootstrap import bootstrap
from shared.config import Settings

ROOT = Path(__file__).resolve().parents[2]
KINDS = (Join, Leave, Contribute, Resign, TimeOut)
# The names a command's kind is spelt with on the wire, and the constants holding them.
KIND_STRINGS = {"join_seat", "leave_seat", "contribute_entropy", "resign", "time_out"}
KIND_CONSTANTS = {"JOIN", "LEAVE", "CONTRIBUTE", "RESIGN", "TIME_OUT"}


def test_every_command_kind_is_a_frozen_message_with_one_handler() -> None:
    assert set(HANDLERS) == {*KINDS, Move}
    for kind in KINDS:
        assert dataclasses.is_dataclass(kind)
        assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    bodies: list[dict[str, Any]] = [
        {"type": "join_seat", "name": "ann", "token_sha256": "0" * 64},
        {"type": "leave_seat"},
        {"type": "contribute_entropy", "client_seed": "abc"},
        {"type": "resign"},
        {"type": "time_out", "armed_version": 7},
    ]
    for body, kind in zip(bodies, KINDS, strict=True):
        message = service_commands.parse(body)
        assert type(message) is kind
        assert service_commands.parse(message.to_body()) == message  # the wire round trip
    assert service_commands.parse({"type": "play", "card": 3}) == Move({"type": "play", "card": 3})
    # A client sends a seed or a resignation among its moves; a join has its own endpoint.
    assert service_commands.client_command({"type": "resign"}) == Resign()
    assert service_commands.client_command({"type": "join_seat"}) is None


def test_a_command_is_decided_by_the_handler_registered_for_its_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = bootstrap(Settings(), backend="memory")
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}]).game_id
    record = app.load(gid)
    seen: list[Any] = []

    def spy(command: Any, turn: service_commands.Turn) -> Decided:
        seen.append((command, turn.seat, turn.version))
        return Decided([], turn.state, {"type": "resign"})

    monkeypatch.setitem(HANDLERS, Resign, spy)
    decided = service_commands.decide_any(
        record.engine, record.match, record.state, 1, {"type": "resign"}, "s", record.version
    )
    assert seen == [(Resign(), 1, record.version)]
    assert decided.recorded == {"type": "resign"} and decided.events == []


def test_the_reply_is_written_and_read_in_one_place() -> None:
    with_view = Reply('{"status":"accepted"}', '{"version":3}')
    assert with_view.to_wire() == '{"status":"accepted"}\n{"version":3}'
    assert Reply.from_wire(with_view.to_wire().encode()) == with_view
    refused = Reply('{"status":"rejected"}')
    assert Reply.from_wire(refused.to_wire().encode()) == refused
    assert refused.outcome_doc() == {"status": "rejected"}


def test_the_deadline_sweep_and_a_bot_move_answer_typed_values() -> None:
    app = bootstrap(Settings(), backend="memory", dispatcher=InlineDispatcher())
    assert isinstance(app, App)
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}]).game_id
    assert clocks.fire_due_deadlines(app) == clocks.Fired()  # no clock, nothing due
    moved = bot_moves.play_bot_move(app, gid, 0, 0)  # a human's seat: no bot to act
    assert moved == bot_moves.BotMove(bot_moves.Moved.STALE)
    assert bot_moves.play_bot_move(app, "nope", 0, 0).moved is bot_moves.Moved.MISSING


def _kind_switches(path: Path) -> list[int]:
    """Lines comparing a value with a command kind's name (a string switch)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        for side in [node.left, *node.comparators]:
            for leaf in ast.walk(side):
                name = getattr(leaf, "attr", None) or getattr(leaf, "id", None)
                value = leaf.value if isinstance(leaf, ast.Constant) else None
                if value in KIND_STRINGS or name in KIND_CONSTANTS:
                    found.append(node.lineno)
    return found


def test_no_module_switches_on_a_command_kind_by_string() -> None:
    own = ROOT / "shared" / "app" / "service_commands.py"
    # The application ring and the entry points (the match package, below them, redacts a
    # recorded time-out's move by its recorded type: a record, not a command to dispatch).
    paths = [
        *(ROOT / "shared" / "app").glob("*.py"),
        ROOT / "shared" / "audit.py",
        *(ROOT / "services").rglob("*.py"),
    ]
    switches = {
        str(p.relative_to(ROOT)): lines for p in paths if p != own and (lines := _kind_switches(p))
    }
    assert not switches, f"command kinds compared by name outside service_commands: {switches}"


def test_no_module_of_the_application_ring_is_over_500_lines() -> None:
    sizes = {
        p.name: len(p.read_text().splitlines()) for p in (ROOT / "shared" / "app").glob("*.py")
    }
    assert not (ROOT / "shared" / "app" / "handlers.py").exists()
    assert {name: n for name, n in sizes.items() if n > 500} == {}
