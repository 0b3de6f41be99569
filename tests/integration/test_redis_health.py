"""``shared.adapters.redis_health.answers``: how ``tabletop rebuild`` tells a running stack's
Redis from the URL file a stopped one left behind (on a real redis-server)."""

from __future__ import annotations

import socket

from shared.adapters import redis_health


def test_answers_only_where_a_redis_listens(redis_url: str) -> None:
    assert redis_health.answers(redis_url) is True
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert redis_health.answers(f"redis://127.0.0.1:{free}/0", timeout=1.0) is False
