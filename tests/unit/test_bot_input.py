"""A bot's input is only its own seat's view (handlers on the in-memory adapters alone)."""

from __future__ import annotations

import json

from shared.adapters.memory import MemoryReadModels
from shared.app import bot_moves, creation
from shared.bootstrap import bootstrap
from shared.config import Settings


class SpyReadModels(MemoryReadModels):
    """Records every projection read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, int | None]] = []

    def read(self, game_id: str, seat: int | None) -> bytes | None:
        self.reads.append((game_id, seat))
        return super().read(game_id, seat)


def test_bot_reads_only_its_own_view_and_submits_through_the_bus() -> None:
    app = bootstrap(Settings(), backend="memory")
    spy = app.ports.read_models = SpyReadModels()
    for seed in range(20):  # a seed whose first trick the bot (seat 1) leads
        gid = creation.create_game(
            app, "fox", [{"name": "a"}, {"bot": "random"}], seed=f"s{seed}"
        ).game_id
        public = json.loads(spy.read(gid, None) or b"{}")
        if public["to_act"] == [1]:
            break
    assert public["to_act"] == [1]
    spy.reads.clear()
    version = public["version"]
    cid = bot_moves.play_bot_move(app, gid, 1, version).command_id
    assert spy.reads == [(gid, 1)]
    queued = app.ports.bus.take("fox")  # type: ignore[attr-defined]
    assert [m["id"] for m in queued] == [cid]
    # The same task again names the same command id and does not send it twice.
    assert bot_moves.play_bot_move(app, gid, 1, version) == bot_moves.BotMove.sent(str(cid))
    assert app.ports.bus.take("fox") == []  # type: ignore[attr-defined]


def test_bot_task_for_an_old_version_does_nothing() -> None:
    app = bootstrap(Settings(), backend="memory")
    gid = creation.create_game(app, "fox", [{"bot": "random"}, {"bot": "random"}]).game_id
    assert bot_moves.play_bot_move(app, gid, 0, 0).moved is bot_moves.Moved.STALE
    assert app.ports.bus.take("fox") == []  # type: ignore[attr-defined]
