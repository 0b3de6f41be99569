"""All-bot games through a real worker and the bots' own path (``play_bot_move``)."""

from __future__ import annotations

import json
import time
from typing import Any

import redis

from services.worker.consumer import StreamConsumer
from shared import keys
from shared.app import creation
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.bootstrap import bootstrap
from shared.config import Settings


def bot_app(client: redis.Redis) -> App:
    """The application on ``client`` with bot turns run at once, in this process."""
    return bootstrap(Settings(), client=client, dispatcher=lambda a: InlineDispatcher().bind(a))


def worker_for(client: redis.Redis, app: App, game: str) -> StreamConsumer:
    """A stream consumer of ``game``'s commands, its group created."""
    worker = StreamConsumer(client, app, game, name="w")
    worker.ensure_groups()
    return worker


def play_to_the_end(
    client: redis.Redis,
    app: App,
    worker: StreamConsumer,
    game: str,
    seats: int | list[dict[str, Any]],
    options: dict[str, Any],
    seconds: float = 120,
) -> str:
    """Create an all-bot game (``seats`` random bots, or these seat specs) and let the worker
    decide until it is over; then answer the bot commands still queued (sent just before the
    last move). Returns the game id."""
    specs = [{"bot": "random"}] * seats if isinstance(seats, int) else seats
    gid = creation.create_game(app, game, specs, options).game_id
    deadline = time.monotonic() + seconds
    while json.loads(client.get(keys.public(gid)))["outcome"] is None:
        assert time.monotonic() < deadline, "the bots stalled"
        worker.poll_once(block_ms=100)
    while worker.poll_once(block_ms=20):
        pass
    return gid
