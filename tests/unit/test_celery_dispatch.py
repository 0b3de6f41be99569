"""Searching bots go to their own Celery queue, quick ones to the shared one."""

from __future__ import annotations

from typing import Any

from services.celery_client import QUEUE, SEARCH_QUEUE, CeleryDispatcher
from shared.app import creation
from shared.bootstrap import bootstrap
from shared.config import Settings


class Recording:
    """Stands for the Celery client: records what would be sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, list[Any], str]] = []

    def send_task(self, name: str, *, args: list[Any], queue: str, priority: int = 0) -> None:
        self.sent.append((name, args, queue))


def test_a_search_bot_move_goes_to_the_search_queue() -> None:
    dispatcher = CeleryDispatcher(Settings())
    client = Recording()
    dispatcher._app = client  # type: ignore[assignment]
    app = bootstrap(Settings(), backend="memory", dispatcher=dispatcher)
    seats = [{"bot": "ismcts", "iterations": 5}, {"bot": "heuristic"}]
    seen = set()
    for seed in range(40):  # either seat may lead: see both
        creation.create_game(app, "fox", seats, seed=f"q{seed}")
        (name, args, queue) = client.sent[-1]
        assert name == "bots.move"
        assert queue == (SEARCH_QUEUE if args[1] == 0 else QUEUE), args
        seen.add(queue)
    assert seen == {SEARCH_QUEUE, QUEUE}


def test_a_registered_bots_turn_is_handed_over_on_the_remote_list_not_as_a_task() -> None:
    """``remote`` LPUSHes ``[game_id, seat, version]`` on ``REMOTE_TURNS`` (what the remote
    bots' worker takes, oldest first); nothing goes through Celery."""
    import json

    import fakeredis

    from services.celery_client import REMOTE_TURNS

    dispatcher = CeleryDispatcher(Settings())
    celery = Recording()
    dispatcher._app = celery  # type: ignore[assignment]
    dispatcher._broker = fakeredis.FakeRedis()
    dispatcher.remote("g1", 0, 3)
    dispatcher.remote("g2", 1, 7)
    assert celery.sent == []
    taken = dispatcher._broker.rpop(REMOTE_TURNS, 5)
    assert [json.loads(t) for t in taken] == [["g1", 0, 3], ["g2", 1, 7]]  # type: ignore[union-attr]
