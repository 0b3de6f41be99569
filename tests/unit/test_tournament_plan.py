"""Tournament plans: seat balance of both formats, derived seeds, and the 422s that name a
field."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from shared.tournaments.plan import Plan, PlanError, cycle_length, game_id, parse


def body(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "game": "skull",
        "entrants": [
            {"bot": "random"},
            {"bot": "heuristic"},
            {"bot": "random", "name": "r2"},
            {"bot": "ismcts", "iterations": 10},
        ],  # fmt: skip
        "players": 3,
        "games": 24,
        "format": "round_robin",
        "seed": "plan-test",
    }
    base.update(changes)
    return base


def refused(**changes: Any) -> PlanError:
    with pytest.raises(PlanError) as info:
        parse(body(**changes))
    return info.value


@pytest.mark.parametrize("fmt", ["round_robin", "duplicate"])
@pytest.mark.parametrize(("entrants", "players"), [(2, 2), (3, 2), (4, 3), (5, 3), (4, 4)])
def test_every_entrant_sits_in_every_seat_equally_often(
    fmt: str, entrants: int, players: int
) -> None:
    game = "fox" if players == 2 else "skull"
    unit = cycle_length(entrants, players)
    plan = parse(
        {
            "game": game,
            "entrants": [{"bot": "random", "name": f"e{i}"} for i in range(entrants)],
            "players": players,
            "games": 2 * unit,
            "format": fmt,
        }
    )
    seats = Counter()
    groups = Counter()
    for i in range(plan.games):
        seating = plan.seating(i)
        assert len(set(seating)) == players  # nobody plays itself
        seats.update((e, s) for s, e in enumerate(seating))
        groups[frozenset(seating)] += 1
    # Each entrant in each seat equally often; every group of `players` met equally often.
    assert len(set(seats.values())) == 1 and len(seats) == entrants * players
    assert len(set(groups.values())) == 1 and len(groups) == len(plan.groups)


def test_two_entrants_in_fox_alternate_seats() -> None:
    plan = parse({"game": "fox", "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
                  "games": 6})  # fmt: skip
    assert [plan.seating(i) for i in range(6)] == [(0, 1), (1, 0)] * 3


def test_duplicate_replays_each_deal_once_per_seating_of_one_group() -> None:
    plan = parse(body(format="duplicate"))
    by_deal: dict[int, list[int]] = {}
    for i in range(plan.games):
        by_deal.setdefault(plan.deal(i), []).append(i)
    assert len(by_deal) == plan.games // plan.players
    for indexes in by_deal.values():
        seatings = [plan.seating(i) for i in indexes]
        assert len(indexes) == plan.players
        assert len({frozenset(s) for s in seatings}) == 1  # the same entrants...
        assert len(set(seatings)) == plan.players  # ...in every rotation
        assert len({plan.game_seed(i) for i in indexes}) == 1  # ...on the same deal
    # Round robin gives every game its own deal.
    rr = parse(body())
    assert len({rr.game_seed(i) for i in range(rr.games)}) == rr.games


def test_seeds_and_ids_derive_from_the_request_alone() -> None:
    a, b = parse(body()), Plan.from_doc(parse(body()).to_doc())
    assert [a.game_seed(i) for i in range(a.games)] == [b.game_seed(i) for i in range(b.games)]
    assert a.game_seed(0) != parse(body(seed="other")).game_seed(0)
    assert game_id("t1", 7) == game_id("t1", 7) != game_id("t1", 8)


def test_entrant_names_default_to_their_spec_and_stay_unique() -> None:
    plan = parse(body(entrants=[{"bot": "random"}, {"bot": "random"}, {"bot": "ismcts",
                                                                        "iterations": 10}]))  # fmt: skip
    assert [e.name for e in plan.entrants] == ["random", "random #2", "ismcts:iterations=10"]


def test_an_unknown_bot_names_its_entrant() -> None:
    exc = refused(entrants=[{"bot": "random"}, {"bot": "deep-blue"}, {"bot": "random"}])
    assert "entrants[1].bot" in exc.errors


def test_a_bad_bot_setting_names_it() -> None:
    exc = refused(entrants=[{"bot": "ismcts", "iterations": 0}] * 3)
    assert "entrants[0].iterations" in exc.errors


def test_too_few_entrants_for_the_seats() -> None:
    exc = refused(entrants=[{"bot": "random"}, {"bot": "random"}], players=3)
    assert "entrants" in exc.errors and "at least 3" in exc.errors["entrants"]


def test_players_outside_the_games_limits() -> None:
    assert "players" in refused(players=2).errors
    assert "players" in refused(game="fox", players=3).errors


def test_a_game_count_the_format_cannot_divide_says_which_it_can() -> None:
    exc = refused(games=25)  # C(4, 3) * 3 = 12 games a cycle
    assert exc.errors == {"games": "a multiple of 12"}
    assert "try 24 or 36" in exc.detail


def test_games_beyond_the_cap() -> None:
    with pytest.raises(PlanError) as info:
        parse(body(games=36), max_games=24)
    assert "games" in info.value.errors
    assert "games" in refused(games=0).errors


def test_bad_format_seed_and_options() -> None:
    assert "format" in refused(format="swiss").errors
    assert "seed" in refused(seed="").errors
    assert "options.rules" in refused(options={"rules": 1}).errors
    assert "options.deal" in refused(game="fox", players=2, options={"deal": {}}).errors
    # The options a tournament answers with (parsed, with nulls) can be sent back.
    fox = parse(body(game="fox", players=2, entrants=[{"bot": "random"}] * 2, games=2))
    assert parse(body(game="fox", players=2, entrants=[{"bot": "random"}] * 2, games=2,
                      options=dict(fox.options))).options == fox.options  # fmt: skip
    assert "game" in refused(game="chess").errors
