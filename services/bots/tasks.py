"""Celery tasks: a bot's move and a finished game's scoring. Both take ids and are idempotent."""

from __future__ import annotations

from functools import cache

import redis

from services.bots.celery_app import app
from shared.bot_turns import finalize_game, play_bot_move
from shared.config import Settings
from shared.service import GameService
from shared.store.redis_streams import RedisEventStore


@cache
def _service() -> GameService:
    settings = Settings.from_env()
    client = redis.Redis.from_url(settings.redis_url)
    return GameService(RedisEventStore(client), client, shards=settings.shards)


@app.task(name="bots.move", acks_late=True, ignore_result=True)
def move(game_id: str, seat: int, version: int) -> str:
    """Let the bot at ``seat`` act if the game is still at ``version``."""
    return play_bot_move(_service(), game_id, seat, version)


@app.task(name="scoring.finalize", acks_late=True, ignore_result=True)
def finalize(game_id: str) -> str:
    """Record a finished game's result once."""
    return finalize_game(_service(), game_id)
