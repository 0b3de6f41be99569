"""Tournament handlers on the memory adapters: a tournament plays to its end, a game run twice
is stored and counted once, a cancel drops the games not started, and a tournament game is a
normal game (view, events, audit, ratings) that equals the live game with the same seed."""

from __future__ import annotations

from typing import Any

from shared.adapters.memory import FixedClock, MemoryCommandBus
from shared.app import commands, creation, queries, results, tournament_views, tournaments
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.tournaments.plan import Plan, game_id

FOX = {
    "game": "fox",
    "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
    "games": 8,
    "format": "duplicate",
    "seed": "handler-test",
    "options": {"target": 1},
}


def memory_app(*, inline: bool) -> App:
    dispatcher = (lambda a: InlineDispatcher().bind(a)) if inline else None
    return bootstrap(Settings(), backend="memory", dispatcher=dispatcher, clock=FixedClock())


def doc(app: App, tid: str) -> dict[str, Any]:
    return tournament_views.tournament_doc(app, tid)


def test_a_tournament_plays_every_game_and_folds_each_once() -> None:
    app = memory_app(inline=True)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    d = doc(app, tid)
    assert d["status"] == "finished" and d["progress"] == {"done": 8, "total": 8}
    assert sum(r["games"] for r in d["standings"]) == 16  # two seats a game
    assert sum(r["wins"] for r in d["standings"]) == 8
    assert all(item["finished"] for item in d["games"]["items"])
    for i in range(8):
        gid = game_id(tid, i)
        view = queries.view(app, gid, None)
        assert view is not None and view["outcome"] is not None
        assert view["tournament"] == {"id": tid, "index": i}
        assert app.ports.directory.result(gid) is not None
        assert [s["name"] for s in view["seats"]] == [
            plan.entrants[e].name for e in plan.seating(i)
        ]
    board = tournament_views.ratings_doc(app, "fox")["ratings"]
    assert {r["bot"]: r["games"] for r in board if r["games"]} == {"heuristic": 8, "random": 8}


def test_a_game_run_twice_is_stored_once_and_counted_once() -> None:
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    assert tournaments.play_games(app, tid, range(8)) == 8
    heads = [app.ports.store.head(game_id(tid, i)) for i in range(8)]
    # A redelivered batch, and a second worker racing through the same games.
    assert tournaments.play_games(app, tid, range(8)) == 0
    assert all(tournaments.play_games(app, tid, [i]) == 0 for i in range(8))
    assert [app.ports.store.head(game_id(tid, i)) for i in range(8)] == heads
    d = doc(app, tid)
    assert d["progress"]["done"] == 8 and sum(r["games"] for r in d["standings"]) == 16
    board = tournament_views.ratings_doc(app, "fox")["ratings"]
    assert {r["bot"]: r["games"] for r in board if r["games"]} == {"heuristic": 8, "random": 8}


def test_a_game_stored_before_a_crash_is_folded_from_the_store() -> None:
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    # A worker stored game 3 and died before folding it...
    record = tournaments.store_game(app, tid, plan, 3)
    head = app.ports.store.head(record.id)
    created = app.ports.directory.get(record.id)
    assert created is not None
    assert doc(app, tid)["progress"]["done"] == 0
    # ...the redelivered task, a minute later, folds the stored game without playing it
    # again, and the game keeps the time it was stored at.
    app.ports.clock.advance(60)  # type: ignore[attr-defined]
    assert tournaments.play_games(app, tid, [3]) == 1
    assert app.ports.store.head(record.id) == head
    assert app.ports.directory.get(record.id) == created
    assert doc(app, tid)["progress"]["done"] == 1


def test_cancel_drops_the_games_not_started() -> None:
    app = memory_app(inline=False)
    tid, _ = tournaments.create_tournament(app, FOX, max_games=100)
    assert doc(app, tid)["status"] == "queued"
    tournaments.play_games(app, tid, range(4))
    assert doc(app, tid)["status"] == "running"
    cancelled = tournament_views.cancel_tournament(app, tid)
    assert cancelled["status"] == "cancelled"
    assert tournaments.play_games(app, tid, range(4, 8)) == 0
    d = doc(app, tid)
    assert d["status"] == "cancelled" and d["progress"] == {"done": 4, "total": 8}
    assert sum(r["games"] for r in d["standings"]) == 8
    assert app.ports.store.head(game_id(tid, 5))[0] == 0  # never played


def test_a_finished_tournament_stays_finished_when_cancelled() -> None:
    app = memory_app(inline=True)
    tid, _ = tournaments.create_tournament(app, FOX, max_games=100)
    assert tournament_views.cancel_tournament(app, tid)["status"] == "finished"


def test_a_tournament_game_is_the_live_game_with_its_seed_and_passes_the_audit() -> None:
    # The tournament's game 1...
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    tournaments.play_games(app, tid, [1])
    stored = app.ports.store.read(game_id(tid, 1))
    # ...and the same seats and seed played live: bots woken by the service, commands through
    # the command bus and the worker's handler.
    live = memory_app(inline=True)
    created = creation.create_game(live, "fox", plan.seat_specs(1), plan.options,
                                   seed=plan.game_seed(1))  # fmt: skip
    bus = live.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    while queued := bus.take("fox"):
        for fields in queued:
            commands.decide_command(live, CommandMessage.from_fields(fields))
    played = live.ports.store.read(created.game_id)
    assert played[-1].type == "seed_revealed"

    def moves(envs: list[Any]) -> list[tuple[Any, ...]]:
        return [(e.version, e.type, e.data, e.command_id, e.seat, e.command) for e in envs[1:]]

    assert moves(stored) == moves(played)
    assert stored[0].data["tournament"] == {"id": tid, "index": 1}
    for envs, gid in ((stored, game_id(tid, 1)), (played, created.game_id)):
        report = audit(gid, [e.to_dict() for e in envs])
        assert report.ok, report.checks
        assert report.status == "passed", report.checks


def test_a_bad_request_names_the_field() -> None:
    app = memory_app(inline=False)
    try:
        tournaments.create_tournament(app, {**FOX, "games": 7}, max_games=100)
    except Exception as exc:
        assert getattr(exc, "status", None) == 422
        assert getattr(exc, "errors", {}) == {"games": ["a multiple of 2"]}
    else:
        raise AssertionError("7 games of 2 seatings was accepted")
    assert app.ports.tournaments.list_ids() == []


def test_plan_round_trips_through_the_store() -> None:
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    entry = app.ports.tournaments.get(tid)
    assert entry is not None and Plan.from_doc(entry.plan) == plan


def test_batches_cover_every_game_once_quick_bots_many_to_a_task_search_bots_one() -> None:
    quick = {**FOX, "games": 1000}
    search = {**FOX, "entrants": [{"bot": "ismcts", "iterations": 50}, {"bot": "random"}]}
    for body, size in ((quick, tournaments.CHUNK), ({**search, "games": 40}, 1)):
        batches = tournaments.chunks(body)
        assert [i for b in batches for i in b] == list(range(body["games"]))
        assert max(len(b) for b in batches) == size
    # A small tournament is still spread over several tasks, for every core.
    small = tournaments.chunks({**FOX, "games": 20})
    assert len(small) >= tournaments.MIN_TASKS // 2 and max(len(b) for b in small) < 20
    for games in range(tournaments.MIN_TASKS, 200):
        assert len(tournaments.chunks({**FOX, "games": games})) >= tournaments.MIN_TASKS
    # Batches shrink towards the end, so the pool's processes finish together.
    sizes = [len(b) for b in tournaments.chunks(quick)]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] <= tournaments.MIN_CHUNK


def test_final_ratings_follow_game_order_whatever_order_the_batches_finish_in() -> None:
    from shared.tournaments import standings

    body = {**FOX, "entrants": [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "random"}]}
    body["format"], body["games"] = "round_robin", 12
    ratings = {}
    for name, order in (("forward", range(12)), ("backward", reversed(range(12)))):
        app = memory_app(inline=False)
        tid, plan = tournaments.create_tournament(app, body, max_games=100)
        played = [tournaments.play_games(app, tid, [i]) for i in order]
        assert played == [1] * 12
        d = doc(app, tid)
        assert d["status"] == "finished"
        ratings[name] = {r["entrant"]: (r["mu"], r["sigma"]) for r in d["ratings"]}
        # A sequential fold in game order: what `tabletop tournament run --local` computes.
        tally = standings.empty(3)
        for i in range(12):
            result = app.ports.directory.result(game_id(tid, i))
            assert result is not None
            standings.fold(tally, plan.seating(i), result["outcome"])
        local = standings.render(tally, [{"name": str(e)} for e in range(3)])["ratings"]
        assert ratings[name] == {r["entrant"]: (r["mu"], r["sigma"]) for r in local}
        # Folding the end again (a batch redelivered) changes nothing.
        assert tournaments.play_games(app, tid, [11]) == 0
        assert {r["entrant"]: (r["mu"], r["sigma"]) for r in doc(app, tid)["ratings"]} == (
            ratings[name]
        )
    assert ratings["forward"] == ratings["backward"]


def test_a_tournament_tells_when_its_last_game_was_folded() -> None:
    app = memory_app(inline=False)
    tid, _plan = tournaments.create_tournament(app, FOX, max_games=100)
    tournaments.play_games(app, tid, range(7))
    assert doc(app, tid)["finished_at"] is None
    tournaments.play_games(app, tid, [7])
    d = doc(app, tid)
    assert d["status"] == "finished"
    assert d["created_at"] <= d["finished_at"] <= app.ports.clock.now()


def ratings_of(d: dict[str, Any]) -> dict[int, tuple[float, float]]:
    return {r["entrant"]: (r["mu"], r["sigma"]) for r in d["ratings"]}


def rated_in_order(
    app: App, tid: str, plan: Plan, indexes: list[int]
) -> dict[int, tuple[float, float]]:
    """The ratings of a sequential fold of the games ``indexes``, in that order."""
    from shared.tournaments import standings

    tally = standings.empty(len(plan.entrants))
    for i in indexes:
        result = app.ports.directory.result(game_id(tid, i))
        assert result is not None
        standings.fold(tally, plan.seating(i), result["outcome"])
    return {e: (row["mu"], row["sigma"]) for e, row in enumerate(tally["entrants"])}


def test_ratings_wait_for_the_games_before_them_then_follow_game_order() -> None:
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    initial = ratings_of(doc(app, tid))
    assert tournaments.play_games(app, tid, range(4, 8)) == 4
    d = doc(app, tid)
    assert d["progress"]["done"] == 4 and d["rated_games"] == 0
    assert ratings_of(d) == initial
    assert tournaments.play_games(app, tid, [1]) == 1  # game 0 still missing
    assert doc(app, tid)["rated_games"] == 0 and ratings_of(doc(app, tid)) == initial
    assert tournaments.play_games(app, tid, [0]) == 1
    d = doc(app, tid)
    assert d["rated_games"] == 2 and ratings_of(d) == rated_in_order(app, tid, plan, [0, 1])
    assert tournaments.play_games(app, tid, [2, 3]) == 2
    d = doc(app, tid)
    assert d["status"] == "finished" and d["rated_games"] == 8
    assert ratings_of(d) == rated_in_order(app, tid, plan, list(range(8)))
    # The order matters with these games: rated as the batches finished, they would differ.
    assert ratings_of(d) != rated_in_order(app, tid, plan, [4, 5, 6, 7, 1, 0, 2, 3])


def test_a_cancelled_tournament_rates_every_folded_game_in_game_order() -> None:
    from shared.tournaments import standings

    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    assert tournaments.play_games(app, tid, [0, 1]) == 2
    assert tournaments.play_games(app, tid, [4, 5]) == 2
    running = doc(app, tid)
    assert running["status"] == "running" and running["rated_games"] == 2  # up to the gap
    assert ratings_of(running) == rated_in_order(app, tid, plan, [0, 1])
    tournament_views.cancel_tournament(app, tid)
    d = doc(app, tid)
    assert d["status"] == "cancelled" and d["progress"]["done"] == 4
    assert d["rated_games"] == 4
    assert ratings_of(d) == rated_in_order(app, tid, plan, [0, 1, 4, 5])
    assert ratings_of(d) != ratings_of(running)
    # The replay is the answer's alone: the stored tally and the standings stay as folded.
    entry = app.ports.tournaments.get(tid)
    assert entry is not None and entry.tally["rated"] == 2
    entrants = [{"name": e.name, **e.spec} for e in plan.entrants]
    assert d["standings"] == standings.render(entry.tally, entrants)["standings"]


def test_a_tally_from_before_in_order_ratings_is_rated_again_from_the_start() -> None:
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    assert tournaments.play_games(app, tid, range(4)) == 4
    # As a tally stored before `rated` was kept: ratings moved in fold order, no count.
    tally = app.ports.tournaments._entries[tid].tally  # type: ignore[attr-defined]
    del tally["rated"]
    tally["entrants"][0]["mu"] = 99.0
    assert doc(app, tid)["rated_games"] == 0  # its ratings are not in game order
    assert tournaments.play_games(app, tid, range(4, 8)) == 4
    d = doc(app, tid)
    assert d["status"] == "finished" and d["rated_games"] == 8
    assert ratings_of(d) == rated_in_order(app, tid, plan, list(range(8)))


def test_a_game_whose_result_is_stored_but_not_folded_is_not_rated() -> None:
    # A batch that stored a game and its result, then died before its fold.
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, FOX, max_games=100)
    (record,) = tournaments.store_games(app, tid, plan, [0])
    with app.ports.unit():
        app.ports.directory.record_results({record.id: results.result_doc(record)})
    assert tournaments.play_games(app, tid, [1]) == 1
    running = doc(app, tid)
    assert running["rated_games"] == 0 and running["progress"]["done"] == 1
    assert ratings_of(running) == rated_in_order(app, tid, plan, [])
    # Cancelled before the batch runs again: the ratings cover the folded game alone.
    tournament_views.cancel_tournament(app, tid)
    assert tournaments.play_games(app, tid, [0]) == 0
    d = doc(app, tid)
    assert d["rated_games"] == 1 and ratings_of(d) == rated_in_order(app, tid, plan, [1])
    assert doc(app, tid) == d  # the replay, kept, answers the same
