"""The SPRT statistic against values worked out independently of its code: the closed form of
a two-point distribution, and reference values of fishtest's ``LLR_logistic``."""

from __future__ import annotations

import math

import pytest

from shared.tournaments import sprt


def test_the_llr_of_a_two_point_distribution_is_the_binomial_one() -> None:
    # On the values {0, 1} the only distribution of mean s is Bernoulli(s), so fishtest's MLE
    # is exact and the LLR per observation is by hand
    #   q log((1 - s1) / (1 - s0)) + (1 - q) log(s1 / s0)   (q: the share of zeros).
    s0, s1, q = sprt.score_of_elo(0), sprt.score_of_elo(50), 0.3
    by_hand = q * math.log((1 - s1) / (1 - s0)) + (1 - q) * math.log(s1 / s0)
    assert sprt.score_of_elo(0) == 0.5
    assert s1 == pytest.approx(1 / (1 + 10 ** (-50 / 400)))
    assert sprt.llr_of_pdf([(0.0, q), (1.0, 1 - q)], s0, s1) == pytest.approx(by_hand, rel=1e-9)


# fishtest (official-stockfish/fishtest, server/fishtest/stats/LLRcalc.py):
#   LLR_logistic(elo0, elo1, results) = N * LLR(pdf, L(elo0), L(elo1))
# with results_to_pdf's regularization (an empty cell counts 1e-3) and MLE_expected by the
# secular equation. The values below were computed by the dual form instead, which shares no
# code with the module: KL(p || p_s) = max_x sum_i p_i log(1 + x (a_i - s)) (a ternary search
# of that concave function), LLR = N (KL(p || p_s0) - KL(p || p_s1)).
REFERENCE = [
    ([1, 60, 500, 1200, 600], 0, 10, 66.86842316952853),
    ([10, 20, 40, 20, 10], 0, 10, -0.1378992217546424),
    ([0, 2, 5, 9, 4], 0, 10, 0.5671853050131171),
    ([3, 0, 0, 0, 7], 0, 50, 0.47254166919241575),
    ([5, 10, 20, 30, 15], -5, 5, 1.4412092785360053),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "expected"), REFERENCE)
def test_llr_matches_fishtests_logistic_gsprt(
    counts: list[int], elo0: float, elo1: float, expected: float
) -> None:
    assert sprt.llr(counts, elo0, elo1) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_a_symmetric_pentanomial_under_symmetric_bounds_is_no_evidence() -> None:
    assert sprt.llr([4, 7, 11, 7, 4], -10, 10) == pytest.approx(0.0, abs=1e-12)
    assert sprt.llr([0, 0, 0, 0, 0], 0, 10) == 0.0


def test_bounds_are_walds() -> None:
    lower, upper = sprt.bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944438979)
    assert upper == pytest.approx(2.944438979)


def test_the_state_decides_at_the_first_pair_that_crosses_and_takes_no_more() -> None:
    test = sprt.params({"elo1": 200})
    state = sprt.empty()
    pairs = 0
    while state["result"] is None:
        sprt.add_pair(state, 2.0, test)  # the candidate wins both games of every pair
        pairs += 1
        assert pairs < 100
    assert state["result"] == "H1" and state["pairs"] == pairs
    assert state["llr"] >= sprt.bounds(0.05, 0.05)[1]
    before = sprt.llr([0, 0, 0, 0, pairs - 1], 0, 200)
    assert before < sprt.bounds(0.05, 0.05)[1]  # it did not wait past the crossing
    with pytest.raises(AssertionError):
        sprt.add_pair(state, 2.0, test)
    doc = sprt.render(state, test)
    assert doc["result"] == "H1" and doc["pentanomial"] == [0, 0, 0, 0, pairs]
    assert set(doc) >= {"llr", "lower", "upper", "pairs", "result"}


def test_game_score_counts_only_the_two_entrants_order() -> None:
    # Three seats: the field's seat 2 won; the candidate (seat 1) finished ahead of seat 0.
    assert sprt.game_score([3, 2, 1], 1, 0) == 1.0
    assert sprt.game_score([3, 2, 1], 0, 1) == 0.0
    assert sprt.game_score([1, 1, 2], 0, 1) == 0.5


def test_the_history_has_the_llr_after_each_pair_of_a_short_match() -> None:
    test = sprt.params(None)
    state = sprt.empty()
    expected = []
    for n, score in enumerate([2.0, 1.0, 0.5, 1.5, 1.0, 2.0], start=1):
        sprt.add_pair(state, score, test)
        expected.append([n, sprt.llr(state["counts"], 0, 10)])
        assert sprt.history(state) == expected
    assert sprt.render(state, test)["history"] == expected
    assert sprt.render(sprt.empty(), test)["history"] == []


def test_a_long_matchs_history_is_thinned_evenly_to_at_most_500_points() -> None:
    # elo0/elo1 far apart and even pairs: the LLR drifts slowly and no bound is crossed.
    test = sprt.params({"elo0": -1000, "elo1": 1000, "alpha": 1e-9, "beta": 1e-9})
    state = sprt.empty()
    llrs = {}
    for n in range(1, 3001):
        sprt.add_pair(state, 1.0, test)
        llrs[n] = state["llr"]
        points = sprt.history(state)
        assert 1 <= len(points) <= sprt.HISTORY_POINTS
        assert points[-1] == [n, state["llr"]]  # the latest pair is always the last point
    assert state["result"] is None
    points = sprt.history(state)
    xs = [p for p, _ in points]
    assert xs == sorted(set(xs)) and len(points) > sprt.HISTORY_POINTS // 2
    steps = {b - a for a, b in zip(xs[:-2], xs[1:-1], strict=True)}
    assert len(steps) == 1  # evenly spaced (but for the latest pair)
    assert all(llr == llrs[int(p)] for p, llr in points)  # each point is the LLR after its pair


def test_a_tally_from_before_the_history_renders_its_latest_point() -> None:
    old = {"counts": [0, 1, 2, 0, 0], "pairs": 3, "llr": -0.5, "result": None}
    assert sprt.history(old) == [[3, -0.5]]
    sprt.add_pair(old, 1.0, sprt.params(None))
    assert [p for p, _ in sprt.history(old)] == [4]
