"""What ``tabletop`` and its subcommands' modules share on the command line: the service's
default address and a bot spec's spelling. Its own module so that ``services.cli`` (which adds
every subcommand) and those modules (``services.tournament_cli``...) import it, not each other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

API_HELP = (
    "the service (default: TABLETOP_API, else http://127.0.0.1:$PORT, PORT defaulting to 8000)"
)


def default_api(env: Mapping[str, str] | None = None) -> str:
    """The service the client commands talk to unless given ``--api``: ``TABLETOP_API``, else
    the gateway ``make run`` starts in the same shell (``http://127.0.0.1:$PORT``, 8000)."""
    env = os.environ if env is None else env
    api = env.get("TABLETOP_API") or f"http://127.0.0.1:{env.get('PORT') or 8000}"
    return api.rstrip("/")


def plain(doc: str | None) -> str | None:
    """A docstring as help text, without its reStructuredText markup: a literal in double
    backticks reads as the bare word in a terminal."""
    return doc.replace("``", "") if doc else doc


def parse_bot(text: str) -> dict[str, Any]:
    """``ismcts:iterations=500`` -> ``{"bot": "ismcts", "iterations": 500}``."""
    name, *settings = text.strip().split(":")
    spec: dict[str, Any] = {"bot": name}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"{item!r} is not KEY=N")
        spec[key.strip()] = int(value)
    return spec


def stack_redis_url(data: Path) -> str | None:
    """The URL ``make run`` wrote for the Redis it started on data directory ``data``, if it
    runs."""
    path = data / "redis.url"
    if not path.exists():
        return None
    url = path.read_text().strip()
    # Through shared/: this command reaches Redis only by the application and its adapters.
    from shared.adapters.redis_health import answers

    return url if answers(url, timeout=1.0) else None
