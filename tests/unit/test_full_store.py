"""The pieces of a loud full Redis (issue 36) on their own: telling Redis's refusal from other
faults whoever wrapped it, reading its memory figures, saying it once per shortage, the
memory thresholds' settings, and a tournament's document saying it is paused."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import redis
from kombu.exceptions import OperationalError

from shared.adapters.redis_health import (
    FullStore,
    Memory,
    RedisUnreachable,
    memory,
    store_full,
    write_refusal,
)
from shared.app import tournament_views, tournaments
from shared.bootstrap import bootstrap
from shared.config import Settings, SettingsError

OOM = "command not allowed when used memory > 'maxmemory'."


def _wrapped(inner: BaseException) -> OperationalError:
    try:
        raise inner
    except BaseException as exc:
        try:
            raise OperationalError(str(exc)) from exc
        except OperationalError as outer:
            return outer


def test_a_refusal_is_told_from_other_faults_wrapped_or_not() -> None:
    assert store_full(redis.exceptions.OutOfMemoryError(OOM))
    # A script's refusal keeps the OOM code in its text; kombu wraps redis-py's error.
    script = "Error running script (call to f_1): @user_script:14: -OOM command not allowed"
    assert store_full(redis.exceptions.ResponseError(script))
    assert store_full(_wrapped(redis.exceptions.OutOfMemoryError(OOM)))
    for other in (
        redis.exceptions.ConnectionError("Connection refused"),
        redis.exceptions.ResponseError("WRONGTYPE Operation against a key"),
        _wrapped(redis.exceptions.ConnectionError("gone")),
        RuntimeError(OOM),  # the words alone, from no Redis
        None,
    ):
        assert not store_full(other), other


class Info:
    def __init__(self, doc: Any) -> None:
        self.doc = doc

    def info(self, section: str) -> Any:
        assert section == "memory"
        if isinstance(self.doc, Exception):
            raise self.doc
        return self.doc


def test_memory_figures_as_redis_counts_them() -> None:
    mb = 1024 * 1024
    doc = {"used_memory": 47 * mb, "maxmemory": 48 * mb, "mem_not_counted_for_evict": mb,
           "maxmemory_policy": "noeviction"}  # fmt: skip
    figures = memory(Info(doc))
    assert figures == Memory(47 * mb, 48 * mb, mb, "noeviction")
    assert figures.counted == 46 * mb and not figures.refusing
    assert figures.describe() == "used 46.0 MB of maxmemory 48.0 MB (95.8%)"
    over = memory(Info({**doc, "used_memory": 50 * mb}))
    assert over.refusing and write_refusal(Info({**doc, "used_memory": 50 * mb})) is not None
    assert write_refusal(Info(doc)) is None
    unlimited = memory(Info({"used_memory": mb, "maxmemory": 0}))
    assert unlimited.ratio is None and not unlimited.refusing
    assert unlimited.describe() == "used 1.0 MB, no maxmemory"
    # A cluster client's answer, a section per node: the fullest counts.
    nodes = {
        "a:1": {"used_memory": mb, "maxmemory": 48 * mb},
        "b:2": {**doc, "used_memory": 50 * mb},
    }
    assert memory(Info(nodes)).refusing
    with pytest.raises(RedisUnreachable):
        memory(Info(redis.exceptions.ConnectionError("gone")))
    assert write_refusal(Info(redis.exceptions.ConnectionError("gone"))) is None
    assert write_refusal(None) is None


def test_one_line_per_shortage_and_a_growing_back_off(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    full = FullStore("test", "the test loop", first=0.5, most=4.0, quiet=60.0,
                     clock=lambda: now[0])  # fmt: skip
    caplog.set_level(logging.INFO)
    error = redis.exceptions.OutOfMemoryError(OOM)
    assert [full.refused(error) for _ in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert full.full and full.refusals == 5
    now[0] += 30
    full.accepted()
    assert not full.full and full.delay == 0.5
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith("redis is full and refuses writes; the test loop: waiting")
    assert "OutOfMemoryError" in lines[0] and not any(r.exc_info for r in caplog.records)
    assert lines[1] == (
        "redis takes writes again; the test loop: going on after 30.0 s (5 writes refused)"
    )
    # At its limit Redis flaps: a shortage again soon after is counted, not said again.
    now[0] += 1
    full.refused(error)
    full.accepted()
    assert len(caplog.records) == 2
    now[0] += 120
    full.refused(error)
    assert len(caplog.records) == 3
    full.accepted()  # nothing said for a write taken when none was refused
    full.accepted()
    assert len(caplog.records) == 4


def test_the_memory_thresholds_are_settings() -> None:
    assert (Settings().redis_memory_warn, Settings().redis_memory_critical) == (0.8, 0.95)
    env = {"TABLETOP_REDIS_MEMORY_WARN": "70%", "TABLETOP_REDIS_MEMORY_CRITICAL": "0.9"}
    settings = Settings.from_env(env)
    assert (settings.redis_memory_warn, settings.redis_memory_critical) == (0.7, 0.9)
    assert Settings.from_env({"TABLETOP_REDIS_MEMORY_WARN": "85"}).redis_memory_warn == 0.85
    for wrong in (
        {"TABLETOP_REDIS_MEMORY_WARN": "lots"},
        {"TABLETOP_REDIS_MEMORY_CRITICAL": "0"},
        {"TABLETOP_REDIS_MEMORY_CRITICAL": "150%"},
        {"TABLETOP_REDIS_MEMORY_WARN": "0.9", "TABLETOP_REDIS_MEMORY_CRITICAL": "0.8"},
    ):
        with pytest.raises(SettingsError, match="TABLETOP_REDIS_MEMORY"):
            Settings.from_env(wrong)


def test_an_unfinished_tournament_is_paused_while_the_store_refuses_writes() -> None:
    app = bootstrap(Settings(), backend="memory")
    body = {"game": "fox", "entrants": [{"bot": "random"}, {"bot": "random"}], "games": 2,
            "options": {"target": 1}}  # fmt: skip
    tid, _plan = tournaments.create_tournament(app, body, max_games=10)
    refusal: list[str | None] = [None]
    tournament_views.install_store_check(lambda _app: refusal[0])
    try:
        doc = tournament_views.tournament_doc(app, tid)
        assert (doc["status"], doc["paused"], doc["paused_reason"]) == ("queued", False, None)
        refusal[0] = "the game store is full: Redis used 48.1 MB of maxmemory 48.0 MB"
        doc = tournament_views.tournament_doc(app, tid)
        assert doc["status"] == "queued" and doc["paused"] is True
        assert doc["paused_reason"].startswith("paused: the game store is full: Redis used")
        assert "go on by themselves once memory is freed" in doc["paused_reason"]
        (listed,) = tournament_views.list_tournaments(app)
        assert listed["paused"] is True and listed["paused_reason"] == doc["paused_reason"]
        tournaments.play_games(app, tid, [0, 1])  # finished: never paused
        doc = tournament_views.tournament_doc(app, tid)
        assert (doc["status"], doc["paused"], doc["paused_reason"]) == ("finished", False, None)
        queued, _plan = tournaments.create_tournament(app, body, max_games=10)
        assert tournament_views.tournament_doc(app, queued)["paused"] is True
    finally:
        tournament_views.install_store_check(None)
    assert tournament_views.tournament_doc(app, queued)["paused"] is False  # none installed
