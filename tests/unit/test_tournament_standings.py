"""Standings against a hand computation: wins with shared wins, Wilson intervals, score
intervals, mean ranks, the pairwise matrix and ratings."""

from __future__ import annotations

import math

import pytest

from shared.tournaments import standings

ENTRANTS = [{"name": "a", "bot": "heuristic"}, {"name": "b", "bot": "random"},
            {"name": "c", "bot": "random"}]  # fmt: skip


def game(scores: list[int], ranks: list[int]) -> dict[str, object]:
    winners = [s for s, r in enumerate(ranks) if r == 1]
    return {"scores": scores, "ranks": ranks, "winners": winners, "draw": len(winners) > 1}


def folded() -> dict[str, object]:
    tally = standings.empty(3)
    # Three games of two seats: a beats b; c beats a; a and b tie (a shared win).
    standings.fold(tally, (0, 1), game([10, 4], [1, 2]))
    standings.fold(tally, (2, 0), game([8, 6], [1, 2]))
    standings.fold(tally, (1, 0), game([5, 5], [1, 1]))
    return tally


def row(doc: dict[str, object], name: str) -> dict[str, object]:
    return next(r for r in doc["standings"] if r["name"] == name)  # type: ignore[attr-defined,index]


def test_wins_count_a_shared_win_as_a_fraction() -> None:
    doc = standings.render(folded(), ENTRANTS)
    a, b, c = row(doc, "a"), row(doc, "b"), row(doc, "c")
    assert (a["games"], a["wins"], a["win_rate"]) == (3, 1.5, 0.5)
    assert (b["games"], b["wins"]) == (2, 0.5)
    assert (c["games"], c["wins"], c["win_rate"]) == (1, 1.0, 1.0)
    assert a["mean_rank"] == pytest.approx((1 + 2 + 1) / 3)
    assert doc["draws"] == 1
    # Best win rate first.
    assert [r["name"] for r in doc["standings"]] == ["c", "a", "b"]  # type: ignore[attr-defined]


def test_win_rate_interval_is_wilsons() -> None:
    # By hand for p = 0.5, n = 3, z = 1.96: centre 0.5, half-width
    # z * sqrt(p(1-p)/n + z^2/(4n^2)) / (1 + z^2/n) = 1.96 * sqrt(0.08333 + 0.10671) / 2.28053
    # = 0.37467.
    low, high = row(standings.render(folded(), ENTRANTS), "a")["win_rate_ci"]  # type: ignore[misc]
    assert (low, high) == pytest.approx((0.12533, 0.87467), abs=1e-4)
    assert standings.wilson(0, 10)[0] == 0.0
    assert standings.wilson(10, 10)[1] == pytest.approx(1.0)
    assert standings.wilson(7, 10) == pytest.approx((0.3968, 0.8922), abs=1e-4)  # textbook


def test_mean_score_interval_is_the_normal_one() -> None:
    a = row(standings.render(folded(), ENTRANTS), "a")
    scores = [10, 6, 5]
    mean = sum(scores) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in scores) / 2)
    assert a["mean_score"] == pytest.approx(mean)
    assert a["mean_score_ci"] == pytest.approx([mean - 1.96 * sd / math.sqrt(3),
                                                mean + 1.96 * sd / math.sqrt(3)], rel=1e-4)  # fmt: skip
    assert row(standings.render(folded(), ENTRANTS), "c")["mean_score_ci"] is None  # one game


def test_pairwise_matrix_counts_who_finished_ahead() -> None:
    matrix = standings.render(folded(), ENTRANTS)["head_to_head"]["matrix"]  # type: ignore[index]
    assert matrix[0][1]["games"] == 2 and matrix[0][1]["ahead"] == 1.5  # a beat b, then tied
    assert matrix[1][0]["ahead"] == 0.5
    assert matrix[0][2]["ahead"] == 0.0 and matrix[2][0]["rate"] == 1.0
    assert matrix[1][2] is None and matrix[0][0] is None  # never met; nobody meets itself


def test_ratings_move_winners_up() -> None:
    doc = standings.render(folded(), ENTRANTS)
    by_name = {r["name"]: r for r in doc["ratings"]}  # type: ignore[attr-defined]
    assert by_name["c"]["mu"] > 25 > by_name["b"]["mu"]
    for r in by_name.values():
        assert r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"])
        assert r["sigma"] < 25 / 3  # every entrant played, so every one is surer now


def test_a_leaderboard_rates_a_spec_at_two_seats_once_per_game() -> None:
    board: dict[str, object] = {}
    standings.rate_labels(board, ["random", "random", "heuristic"], [2, 3, 1])
    assert board["random"]["games"] == 1 and board["heuristic"]["games"] == 1  # type: ignore[index]
    assert board["heuristic"]["mu"] > board["random"]["mu"]  # type: ignore[index]


GAMES = [  # (seating, outcome): the three of ``folded`` and a game of three seats
    ((0, 1), game([10, 4], [1, 2])),
    ((2, 0), game([8, 6], [1, 2])),
    ((1, 0), game([5, 5], [1, 1])),
    ((2, 1, 0), game([3, 9, 1], [2, 1, 3])),
]


def ratings(tally: dict[str, object]) -> list[tuple[float, float]]:
    return [(r["mu"], r["sigma"]) for r in tally["entrants"]]  # type: ignore[attr-defined,index]


def rated_one_by_one(count: int) -> dict[str, object]:
    tally = standings.empty(3)
    for seating, outcome in GAMES[:count]:
        standings.fold(tally, seating, outcome)
    return tally


def test_rate_next_stops_at_the_first_game_not_in_and_counts_what_it_rated() -> None:
    tally = standings.empty(3)
    ranked = [(seating, outcome["ranks"]) for seating, outcome in GAMES]
    assert standings.rate_next(tally, [ranked[0], ranked[1], None, ranked[2]]) == 2
    assert tally["rated"] == 2 and ratings(tally) == ratings(rated_one_by_one(2))
    assert standings.rate_next(tally, [None, ranked[3]]) == 0
    assert standings.rate_next(tally, []) == 0
    assert tally["rated"] == 2 and ratings(tally) == ratings(rated_one_by_one(2))
    assert standings.rate_next(tally, iter(ranked[2:])) == 2
    assert tally["rated"] == 4 and ratings(tally) == ratings(rated_one_by_one(4))


def test_folding_unrated_then_rating_next_is_folding_rated_one_by_one() -> None:
    tally = standings.empty(3)
    for seating, outcome in GAMES:
        standings.fold(tally, seating, outcome, rate=False)
    assert tally["rated"] == 0 and ratings(tally) == ratings(standings.empty(3))
    assert tally["done"] == 4 and tally["draws"] == 1
    assert standings.rate_next(tally, [(s, o["ranks"]) for s, o in GAMES]) == 4
    assert tally == rated_one_by_one(4)
