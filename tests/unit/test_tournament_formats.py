"""The ``gauntlet`` and ``sprt`` formats: who meets whom, the 422s that name the field, an
sprt match that stops at its decision (on the memory adapters, as the Celery batches play
it), a decision that depends on the seed alone, and a local run equal to the service's."""

from __future__ import annotations

import concurrent.futures
from collections import Counter
from typing import Any

import pytest

from services import tournament_local
from shared.adapters.memory import FixedClock
from shared.app import tournament_views, tournaments
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.tournaments import plan as plans
from shared.tournaments.plan import PlanError, game_id, parse

SPRT = {
    "game": "fox",
    "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
    "games": 1000,
    "format": "sprt",
    "seed": "sprt-test",
    "options": {"target": 1},
}


def memory_app(*, inline: bool) -> App:
    dispatcher = (lambda a: InlineDispatcher().bind(a)) if inline else None
    return bootstrap(Settings(), backend="memory", dispatcher=dispatcher, clock=FixedClock())


def test_a_gauntlet_plays_the_candidate_against_each_other_entrant_in_duplicate_pairs() -> None:
    entrants = [{"bot": "random", "name": f"e{i}"} for i in range(4)]
    plan = parse(
        {"game": "fox", "entrants": entrants, "games": 12, "format": "gauntlet", "candidate": 2}
    )
    meetings: Counter[frozenset[int]] = Counter()
    seats: Counter[tuple[int, int]] = Counter()
    for i in range(plan.games):
        seating = plan.seating(i)
        assert 2 in seating and None not in seating
        meetings[frozenset(e for e in seating if e is not None)] += 1
        seats.update((e, s) for s, e in enumerate(seating) if e is not None)
        if i % 2:  # the pair's second game: same deal and seed, seats swapped
            assert seating == plan.seating(i - 1)[::-1]
            assert plan.game_seed(i) == plan.game_seed(i - 1)
    # Two cycles: two pairs against each of the three others, who never meet each other.
    assert meetings == {frozenset({2, o}): 4 for o in (0, 1, 3)}
    assert all(seats[(e, s)] == (6 if e == 2 else 2) for e in range(4) for s in (0, 1))
    assert len({plan.deal(i) for i in range(12)}) == 6


def test_duels_in_a_game_of_more_seats_fill_the_others_with_the_field() -> None:
    plan = parse(
        {**SPRT, "game": "skull", "games": 6, "options": {}, "field": {"bot": "heuristic"}}
    )
    assert plan.players == 3  # Skull's smallest table, not one seat per entrant
    for i in range(plan.games):
        seating = plan.seating(i)
        assert sorted(e for e in seating if e is not None) == [0, 1]
        specs = plan.seat_specs(i)
        assert [s["bot"] for s, e in zip(specs, seating, strict=True) if e is None] == ["heuristic"]
    # The pair's two entrants move round the table.
    assert {plan.seating(i).index(None) for i in range(6)} == {0, 1, 2}
    assert plans.Plan.from_doc(plan.to_doc()) == plan


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"format": "gauntlet", "candidate": 2}, "candidate"),
        ({"format": "gauntlet", "candidate": -1}, "candidate"),
        ({"format": "gauntlet", "candidate": "0"}, "candidate"),
        ({"format": "round_robin", "candidate": 0}, "candidate"),
        ({"entrants": [{"bot": "random"}] * 3}, "entrants"),
        ({"sprt": {"elo0": 5, "elo1": 5}}, "sprt.elo1"),
        ({"sprt": {"alpha": 0}}, "sprt.alpha"),
        ({"sprt": {"gamma": 1}}, "sprt.gamma"),
        ({"games": 7}, "games"),
        ({"field": {"bot": "nosuch"}}, "field.bot"),
    ],
)
def test_bad_duel_requests_name_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(PlanError) as info:
        parse({**SPRT, **changes})
    assert field in info.value.errors, info.value.errors


def test_an_sprt_match_stops_at_its_decision_and_drops_the_queued_games() -> None:
    app = memory_app(inline=True)
    tid, plan = tournaments.create_tournament(app, SPRT, max_games=10_000)
    doc = tournament_views.tournament_doc(app, tid, limit=1000)
    test = doc["sprt"]
    # Heuristic against random in one-hand Fox: far more than 10 Elo, H1 long before the cap.
    assert doc["status"] == "finished" and test["result"] == "H1"
    assert test["llr"] >= test["upper"] and test["pairs"] < 200
    assert doc["progress"] == {"done": 2 * test["pairs"], "total": 1000}
    assert sum(test["pentanomial"]) == test["pairs"]
    assert [r["games"] for r in doc["standings"]] == [2 * test["pairs"]] * 2
    assert doc["rated_games"] == 2 * test["pairs"]
    # The batches queued behind the decision were dropped: most games were never played.
    played = sum(item["finished"] for item in doc["games"]["items"])
    assert 2 * test["pairs"] <= played < 1000
    assert app.ports.directory.get(game_id(tid, 999)) is None


def test_equal_bots_accept_h0() -> None:
    app = memory_app(inline=True)
    body = {**SPRT, "entrants": [{"bot": "random"}, {"bot": "random"}]}
    tid, _ = tournaments.create_tournament(app, body, max_games=10_000)
    doc = tournament_views.tournament_doc(app, tid)
    assert doc["status"] == "finished" and doc["sprt"]["result"] == "H0"
    assert doc["sprt"]["llr"] <= doc["sprt"]["lower"]


def test_at_the_cap_the_match_is_finished_undecided() -> None:
    app = memory_app(inline=True)
    tid, _ = tournaments.create_tournament(app, {**SPRT, "games": 8}, max_games=10_000)
    doc = tournament_views.tournament_doc(app, tid)
    assert doc["status"] == "finished" and doc["sprt"]["result"] is None
    assert doc["sprt"]["pairs"] == 4 and doc["progress"]["done"] == 8


def test_the_decision_depends_on_the_seed_not_on_the_order_batches_finish_in() -> None:
    inline = memory_app(inline=True)
    tid, plan = tournaments.create_tournament(inline, SPRT, max_games=10_000)
    expected = tournament_views.tournament_doc(inline, tid)
    app = memory_app(inline=False)
    tid, plan = tournaments.create_tournament(app, SPRT, max_games=10_000)
    batches = [list(range(i, i + 8)) for i in range(0, 1000, 8)]
    # Later games first, and a pair split across batches that arrive far apart: games past
    # the decision are played before the pairs that decide it.
    order = batches[1:40][::-1] + [batches[0]] + batches[40:]
    for batch in order:
        tournaments.play_games(app, tid, batch)
    doc = tournament_views.tournament_doc(app, tid)
    assert doc["sprt"] == expected["sprt"]
    assert doc["standings"] == expected["standings"]
    assert doc["ratings"] == expected["ratings"]
    assert doc["status"] == "finished"


def test_a_local_run_equals_the_service(monkeypatch: pytest.MonkeyPatch) -> None:
    app = memory_app(inline=True)
    for body in (SPRT, {**SPRT, "format": "gauntlet", "games": 8, "entrants": [
        {"bot": "heuristic"}, {"bot": "random"}, {"bot": "random", "name": "r2"}
    ]}):  # fmt: skip
        tid, plan = tournaments.create_tournament(app, body, max_games=10_000)
        service = tournament_views.tournament_doc(app, tid)
        # The worst order of arrival on two processes: the last batch first.
        monkeypatch.setattr(concurrent.futures, "as_completed", lambda fs: list(fs)[::-1])
        local = tournament_local.local_doc(plan, tournament_local.play_local(plan, jobs=2).tally)
        for key in ("status", "progress", "standings", "ratings", "pairwise", "sprt"):
            assert local[key] == service[key], key


def test_the_gateway_takes_both_formats_and_shows_the_test() -> None:
    from services.gateway.app import create_app

    settings = Settings(rate_limits={}, organizer_keys=frozenset({"org"}))
    application = bootstrap(
        settings, backend="memory", dispatcher=lambda a: InlineDispatcher().bind(a)
    )
    http = create_app(settings, application=application).test_client()
    auth = {"Authorization": "Bearer org"}
    body = {**SPRT, "sprt": {"elo1": 20}, "field": {"bot": "random"}}
    created = http.post("/v1/tournaments", json=body, headers=auth)
    assert created.status_code == 201, created.get_json()
    doc = http.get(created.headers["Location"], headers=auth).get_json()
    assert doc["status"] == "finished" and doc["sprt"]["result"] == "H1"
    assert doc["sprt"]["elo1"] == 20 and doc["candidate"] == 0
    gauntlet = {**SPRT, "format": "gauntlet", "games": 2, "candidate": 5}
    refused = http.post("/v1/tournaments", json=gauntlet, headers=auth)
    assert refused.status_code == 422 and refused.mimetype == "application/problem+json"
    assert "candidate" in refused.get_json()["errors"]
    bad = http.post("/v1/tournaments", json={**SPRT, "sprt": {"alpha": 2}}, headers=auth)
    assert bad.status_code == 422 and "sprt" in str(bad.get_json()["errors"])
