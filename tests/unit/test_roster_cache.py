"""A process's cached roster does not outlive a take-over: an old token stops working in every
process within ``ROSTER_TTL_S``, not only in the one that saw the change."""

from __future__ import annotations

import pytest

from shared.app import creation, queries
from shared.app.context import ROSTER_TTL_S
from shared.app.errors import AppError
from shared.bootstrap import bootstrap
from shared.config import Settings

KEYS = queries.Keys(organizers=frozenset(), auditors=frozenset())


def test_a_token_dropped_by_another_process_stops_working_once_the_cached_roster_is_old() -> None:
    app = bootstrap(Settings(), backend="memory")
    clock = [100.0]
    app.now = lambda: clock[0]
    created = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}], seed="roster")
    tokens = [t for t in created.tokens if t is not None]
    gid = created.game_id
    assert queries.caller(app, gid, tokens[0], KEYS) == queries.Caller(queries.SEAT, 0)
    # Another process lets a bot take seat 0 over: the directory drops its player's token,
    # and this process's cache never misses on it (the token is still in its copy).
    app.ports.directory.set_token_hashes(gid, [None, app.entry(gid).token_hashes[1]])
    clock[0] += ROSTER_TTL_S + 0.01
    with pytest.raises(AppError) as refused:
        queries.caller(app, gid, tokens[0], KEYS)
    assert str(refused.value.code) == "auth/invalid_token"
    assert queries.caller(app, gid, tokens[1], KEYS) == queries.Caller(queries.SEAT, 1)
