"""Bots through the worker: every bot command is sent once, and simultaneous phases neither
stall nor re-ask every waiting bot at each other seat's move."""

from __future__ import annotations

import json
import time

import pytest
import redis

from services.worker.consumer import StreamConsumer
from shared import keys
from shared.app import creation
from shared.app.bot_moves import play_bot_move
from shared.app.context import App
from shared.bootstrap import bootstrap
from shared.config import Settings
from tests.integration.bot_games import bot_app, play_to_the_end, worker_for


def _app(client: redis.Redis, dispatcher: object = None) -> App:
    return bootstrap(Settings(), client=client, dispatcher=dispatcher)  # type: ignore[arg-type]


@pytest.mark.parametrize(("game", "seats"), [("skye", 4), ("skull", 5), ("fox", 2)])
def test_a_bots_only_game_ends_with_each_bot_command_sent_once(
    redis_client: redis.Redis, game: str, seats: int
) -> None:
    app = bot_app(redis_client)
    options = {"target": 7} if game == "fox" else {}
    gid = play_to_the_end(
        redis_client, app, worker_for(redis_client, app, game), game, seats, options
    )
    ids = [f[b"id"] for _, f in redis_client.xrange(keys.command_stream(game, 0))]
    assert len(ids) == len(set(ids)), "a bot command was sent twice"
    results = [json.loads(redis_client.get(keys.result(gid, i.decode()))) for i in ids]
    refused = [r for r in results if r["status"] != "accepted"]
    assert len(refused) <= 0.2 * len(results), refused[:5]


def test_a_repeated_bot_task_does_not_send_again(redis_client: redis.Redis) -> None:
    service = _app(redis_client)
    gid = creation.create_game(service, "skye", [{"bot": "random"}, {"bot": "random"}]).game_id
    public = json.loads(redis_client.get(keys.public(gid)))
    seat, version = public["to_act"][0], public["version"]
    first = play_bot_move(service, gid, seat, version)
    again = play_bot_move(service, gid, seat, version)
    assert first == again
    assert redis_client.xlen(keys.command_stream("skye", 0)) == 1


class LateDispatcher:
    """Bot tasks that run late and out of order, as Celery's may."""

    def __init__(self, service: App, seed: int) -> None:
        import random

        self.service = service
        self.pending: list[tuple[str, int, int]] = []
        self.rng = random.Random(seed)

    def move(self, game_id: str, seat: int, version: int, *, slow: bool = False) -> None:
        self.pending.append((game_id, seat, version))

    def finalize(self, game_id: str) -> None:
        pass

    def run_some(self) -> None:
        self.rng.shuffle(self.pending)
        keep = self.pending[: len(self.pending) // 2]
        for task in self.pending[len(self.pending) // 2 :]:
            play_bot_move(self.service, *task)
        self.pending = keep


@pytest.mark.parametrize(
    ("game", "seats", "seed"), [("skye", 4, 1), ("skye", 3, 2), ("skull", 4, 3), ("fox", 2, 4)]
)
def test_late_out_of_order_bot_tasks_never_stall_a_game(
    redis_client: redis.Redis, game: str, seats: int, seed: int
) -> None:
    service = _app(redis_client)
    late = LateDispatcher(service, seed)
    service.ports.dispatcher = late
    worker = StreamConsumer(redis_client, service, game, name="w")
    worker.ensure_groups()
    gid = creation.create_game(
        service, game, [{"bot": "random"}] * seats, {"target": 7} if game == "fox" else {}
    ).game_id
    deadline = time.monotonic() + 90
    while json.loads(redis_client.get(keys.public(gid)))["outcome"] is None:
        assert time.monotonic() < deadline, "the bots stalled"
        assert (
            late.pending
            or redis_client.xpending(keys.command_stream(game, 0), "workers")["pending"]
            or worker.poll_once(50)
        ), "nothing queued, nothing to process, and the game is not over: a stall"
        worker.poll_once(block_ms=20)
        late.run_some()
