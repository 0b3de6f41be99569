"""A Celery task meets Redis restarting: it waits and tries again within its wait, instead of
failing and dropping its work (a tournament's batch lost stalled its tournament for good)."""

from __future__ import annotations

import pytest
import redis

from services.bots import tasks


def test_a_task_waits_for_a_redis_that_restarts() -> None:
    calls: list[int] = []

    def batch() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise redis.ConnectionError("Error 111 connecting. Connection refused.")
        if len(calls) == 2:
            raise redis.ResponseError("LOADING Redis is loading the dataset in memory")
        return 7

    assert tasks.Patience("tournaments.play").run(batch) == 7
    assert len(calls) == 3


def test_a_redis_away_past_the_wait_gives_the_task_back(monkeypatch: pytest.MonkeyPatch) -> None:
    patience = tasks.Patience("tournaments.play")
    patience.deadline = patience.started + 0.2  # as if most of the wait were spent

    def away() -> int:
        raise redis.ConnectionError("Connection refused")

    with pytest.raises(tasks.StillFull):
        patience.run(away)
    # The task is then given back to the broker (tournaments.play is kept), not dropped.
    assert "tournaments.play" in tasks.KEPT_WHEN_FULL


def test_other_errors_are_not_retried() -> None:
    def broken() -> int:
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        tasks.Patience("tournaments.play").run(broken)
