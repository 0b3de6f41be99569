"""Settings read from the environment, once, in the factories (never at import time)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def _keys(raw: str | None) -> frozenset[str]:
    return frozenset(k.strip() for k in (raw or "").split(",") if k.strip())


DEFAULT_RATE_LIMITS = {
    "create": "30/minute",  # games created per client address
    "join": "60/minute",  # seats joined per client address
    "command": "20/second",  # commands per seat token
    "suggest": "20/minute",  # hints per seat token (a search holds a gateway thread)
}


def _rate_limits(env: Mapping[str, str]) -> dict[str, str]:
    if env.get("TABLETOP_RATE_LIMITS", "on").lower() in ("off", "0", "false", "no"):
        return {}
    return {
        name: env.get(f"TABLETOP_RATE_{name.upper()}", default)
        for name, default in DEFAULT_RATE_LIMITS.items()
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Everything a process needs to know about its surroundings."""

    redis_url: str = DEFAULT_REDIS_URL
    organizer_keys: frozenset[str] = field(default_factory=frozenset)
    auditor_keys: frozenset[str] = field(default_factory=frozenset)
    shards: int = 1
    max_wait: float = 30.0
    bot_dispatch: str = "celery"  # "celery", or "none" to drop bot and scoring work
    max_tournament_games: int = 10_000
    cors_origins: frozenset[str] = field(default_factory=frozenset)
    # Abuse limits per rule (``limits`` syntax, e.g. "30/minute"); empty: none.
    rate_limits: Mapping[str, str] = field(default_factory=dict)
    feed_heartbeat: float = 15.0  # seconds between the live feed's keep-alive comments

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``REDIS_URL``, ``TABLETOP_ORGANIZER_KEYS``, ``TABLETOP_AUDITOR_KEYS``,
        ``TABLETOP_SHARDS``, ``TABLETOP_MAX_WAIT``, ``TABLETOP_BOT_DISPATCH`` and
        ``TABLETOP_MAX_TOURNAMENT_GAMES``, ``TABLETOP_CORS_ORIGINS`` (comma-separated origins
        browsers may call from; ``*`` for any) and the abuse limits ``TABLETOP_RATE_CREATE``,
        ``TABLETOP_RATE_JOIN``, ``TABLETOP_RATE_COMMAND``, ``TABLETOP_RATE_SUGGEST`` (``TABLETOP_RATE_LIMITS=off`` for
        none)."""
        env = os.environ if env is None else env
        return cls(
            redis_url=env.get("REDIS_URL", DEFAULT_REDIS_URL),
            organizer_keys=_keys(env.get("TABLETOP_ORGANIZER_KEYS")),
            auditor_keys=_keys(env.get("TABLETOP_AUDITOR_KEYS")),
            shards=max(1, int(env.get("TABLETOP_SHARDS", "1"))),
            max_wait=float(env.get("TABLETOP_MAX_WAIT", "30")),
            bot_dispatch=env.get("TABLETOP_BOT_DISPATCH", "celery"),
            max_tournament_games=max(1, int(env.get("TABLETOP_MAX_TOURNAMENT_GAMES", "10000"))),
            cors_origins=_keys(env.get("TABLETOP_CORS_ORIGINS")),
            rate_limits=_rate_limits(env),
        )
