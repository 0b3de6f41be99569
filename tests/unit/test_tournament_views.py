"""Views of a tournament game on the memory adapters: it stores its public view alone, a seat's
view is folded from its log (the bytes the general path stores for the same game), and a seat
or game that is not there is ``game/not_found``."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from shared.adapters.memory import FixedClock
from shared.app import playout, projecting, queries, tournaments
from shared.app.context import App
from shared.app.errors import AppError, ErrorCode
from shared.app.ports import GameEntry
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.match.projections import all_views, projection_json
from shared.match.record import GameRecord, fold
from shared.tournaments.plan import Plan, game_id

BODIES: dict[str, dict[str, Any]] = {
    "fox": {
        "game": "fox",
        "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
        "games": 2,
        "format": "duplicate",
        "seed": "view-test",
        "options": {"target": 1},
    },
    "skull": {
        "game": "skull",
        "entrants": [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "random"}],
        "players": 3,
        "games": 3,
        "seed": "view-test",
    },
    "skye": {
        "game": "skye",
        "entrants": [{"bot": "random"}, {"bot": "random"}],
        "games": 2,
        "seed": "view-test",
    },
}


def memory_app() -> App:
    return bootstrap(Settings(), backend="memory", clock=FixedClock())


def played(game: str) -> tuple[App, str, int]:
    """A memory app with the tournament's game 0 played: (app, game id, seats)."""
    app = memory_app()
    tid, plan = tournaments.create_tournament(app, BODIES[game], max_games=100)
    assert tournaments.play_games(app, tid, [0]) == 1
    return app, game_id(tid, 0), plan.players


def played_out(app: App, gid: str) -> GameRecord:
    """Game ``gid`` played again in process: the play-out's own record, states folded from
    the engine's events (not from the stored log), as the tournament's task had it."""
    tid = gid.rsplit("-", 1)[0]  # game_id: "<tournament>-<index>"
    entry = app.ports.tournaments.get(tid)
    assert entry is not None
    plan = Plan.from_doc(entry.plan)
    at = app.ports.clock.now()  # the fixed clock: the time the task sealed the log with
    game = playout.play(plan.game, plan.seat_specs(0), plan.options, plan.game_seed(0),
                        clock=lambda: at, tournament={"id": tid, "index": 0}, encoded=True)  # fmt: skip
    return replace(game.record, id=gid)


def record_of(app: App, gid: str) -> GameRecord:
    return fold(gid, app.ports.store.read(gid))


def not_found(app: App, gid: str, seat: int | None) -> None:
    with pytest.raises(AppError) as caught:
        queries.view_json(app, gid, seat)
    assert caught.value.code == ErrorCode.GAME_NOT_FOUND
    assert queries.view(app, gid, seat) is None


@pytest.mark.parametrize("game", list(BODIES))
def test_a_tournament_games_seat_views_are_folded_from_its_log(game: str) -> None:
    app, gid, seats = played(game)
    seat_views, _public = all_views(played_out(app, gid))
    assert len(seat_views) == seats
    for seat in range(seats):
        assert app.ports.read_models.read(gid, seat) is None  # not stored: folded
        folded = queries.view_json(app, gid, seat)
        assert folded == projection_json(seat_views[seat]).encode()
        assert queries.view(app, gid, seat) == json.loads(folded)
        assert json.loads(folded)["outcome"] is not None


# The stored view is built from the play-out's own state, a view folded from the log from
# the log's data: byte for byte the same only if the log keeps the engine's key order (Isle
# of Skye's final scrolls).
@pytest.mark.parametrize("game", list(BODIES))
def test_a_tournament_games_public_view_is_the_stored_one(game: str) -> None:
    app, gid, _seats = played(game)
    stored = app.ports.read_models.read(gid, None)
    assert stored is not None
    assert queries.view_json(app, gid, None) == stored
    assert stored == projection_json(all_views(record_of(app, gid))[1]).encode()
    assert stored == projection_json(all_views(played_out(app, gid))[1]).encode()


@pytest.mark.parametrize("game", list(BODIES))
def test_a_folded_seat_view_is_what_the_general_path_stores_for_the_game(game: str) -> None:
    app, gid, seats = played(game)
    # The same game projected as a live game is: every view written.
    live = memory_app()
    with live.ports.unit():
        texts = projecting.project(live, record_of(app, gid))
    assert len(texts) == seats
    for seat in range(seats):
        stored = live.ports.read_models.read(gid, seat)
        assert stored is not None and queries.view_json(app, gid, seat) == stored


def test_a_seat_out_of_range_is_not_found() -> None:
    app, gid, seats = played("fox")
    for seat in (seats, seats + 3, -1):
        not_found(app, gid, seat)


def test_an_unknown_game_is_not_found() -> None:
    app, _gid, _seats = played("fox")
    for seat in (None, 0):
        not_found(app, "nope", seat)


def test_a_game_registered_without_events_has_no_seat_view() -> None:
    app = memory_app()
    entry = GameEntry(
        game_id="g",
        game="fox",
        seed="s",
        shard=0,
        created_at="2026-01-01T00:00:00.000Z",
        token_hashes=(None, None),
    )
    app.ports.directory.register(entry, 1.0)
    not_found(app, "g", 0)
