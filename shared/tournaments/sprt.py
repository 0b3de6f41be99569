"""The sequential probability ratio test of an ``sprt`` match: "is the candidate better than
the baseline?" with the fewest games, as chess engine testing answers it.

Games are played in duplicate pairs (both seatings of one deal). The candidate scores 1 in a
game it finishes ahead of the baseline, 1/2 when they tie and 0 otherwise (in games of more
seats the field's places do not count: only the two entrants' order), so a pair scores 0,
1/2, 1, 3/2 or 2 and the match is a pentanomial: ``counts[i]`` pairs scored ``i / 2``.

The statistic is fishtest's generalized SPRT on the pentanomial with logistic Elo bounds
(official-stockfish/fishtest, server/fishtest/stats/LLRcalc.py: ``LLR_logistic``,
``results_to_pdf``, ``regularize``, ``MLE_expected``, ``secular``; the bounds as in
server/fishtest/stats/sprt.py): with ``s = 1 / (1 + 10 ** (-elo / 400))`` the expected
score of a game under each hypothesis, and ``p`` the empirical distribution of the pair
scores (halved, so on 0, 1/4 ... 1; an empty cell counts 1e-3 pairs), the LLR is
``N * sum_i p_i * log(p1_i / p0_i)`` where ``p0``, ``p1`` are the distributions closest to
``p`` (maximum likelihood) whose means are ``s0`` and ``s1``:
``p_s_i = p_i / (1 + x (a_i - s))`` with ``x`` the root of ``sum_i p_i (a_i - s) /
(1 + x (a_i - s)) = 0`` (fishtest finds it with scipy's brentq; here bisection, the
function being decreasing, to the same precision). The match stops at the first pair after
which the LLR is at most ``log(beta / (1 - alpha))`` (H0: not ``elo1`` better) or at least
``log((1 - beta) / alpha)`` (H1: not only ``elo0``).

Pure: no I/O, the state is a small JSON document kept in the tournament's tally.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from shared.tournaments import standings

DEFAULTS: dict[str, float] = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05}
REGULARIZE = 1e-3  # fishtest's epsilon for an empty pentanomial cell
_EDGE = 1e-9  # fishtest keeps the root this far inside its interval
# The LLR history (``history``) a plot draws: at most this many ``[pairs, llr]`` points.
HISTORY_POINTS = 500


def score_of_elo(elo: float) -> float:
    """The expected score of a game between players ``elo`` apart (logistic Elo)."""
    return 1 / (1 + 10 ** (-elo / 400))


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """``(lower, upper)``: the LLR at or below ``lower`` accepts H0, at or above ``upper``
    H1 (Wald's bounds, as fishtest's ``sprt``)."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def _secular(pdf: Sequence[tuple[float, float]]) -> float:
    """The root of ``sum p a / (1 + x a) = 0`` (the ``a`` of both signs)."""
    values = [a for a, _ in pdf]
    low, high = -1 / max(values) + _EDGE, -1 / min(values) - _EDGE

    def f(x: float) -> float:
        return sum(p * a / (1 + x * a) for a, p in pdf)

    # f decreases over the interval (each term's derivative is -p a^2 / (1 + x a)^2), so the
    # root is bracketed; 200 halvings reach the spacing of floats.
    for _ in range(200):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if f(mid) > 0:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _mle(pdf: Sequence[tuple[float, float]], s: float) -> list[float]:
    """The probabilities of the distribution on ``pdf``'s values closest to ``pdf`` whose
    mean is ``s`` (fishtest's ``MLE_expected``)."""
    x = _secular([(a - s, p) for a, p in pdf])
    return [p / (1 + x * (a - s)) for a, p in pdf]


def llr_of_pdf(pdf: Sequence[tuple[float, float]], s0: float, s1: float) -> float:
    """The generalized log-likelihood ratio per observation of mean ``s1`` against ``s0``
    for an empirical distribution ``pdf`` of ``(value, probability)`` (fishtest's ``LLR``
    with the ``expectation`` statistic)."""
    p0, p1 = _mle(pdf, s0), _mle(pdf, s1)
    return sum(
        p * (math.log(q1) - math.log(q0)) for (_, p), q0, q1 in zip(pdf, p0, p1, strict=True)
    )


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The LLR of a pentanomial (``counts[i]`` pairs scored ``i / 2``) for ``elo1`` against
    ``elo0`` (fishtest's ``LLR_logistic``); 0 before any pair."""
    if not any(counts):
        return 0.0
    regular = [c if c else REGULARIZE for c in counts]
    n = sum(regular)
    last = len(regular) - 1
    pdf = [(i / last, c / n) for i, c in enumerate(regular)]
    return n * llr_of_pdf(pdf, score_of_elo(elo0), score_of_elo(elo1))


def game_score(ranks: Sequence[int], candidate_seat: int, baseline_seat: int) -> float:
    """The candidate's score in one game: 1 ahead of the baseline, 1/2 level, 0 behind."""
    a, b = ranks[candidate_seat], ranks[baseline_seat]
    return 1.0 if a < b else 0.5 if a == b else 0.0


def params(raw: Mapping[str, Any] | None) -> dict[str, float]:
    """The test's parameters with fishtest's defaults filled in (checked by the plan)."""
    return {**DEFAULTS, **{k: float(v) for k, v in (raw or {}).items()}}


def empty() -> dict[str, Any]:
    """The state before any pair."""
    return {
        "counts": [0, 0, 0, 0, 0],
        "pairs": 0,
        "llr": 0.0,
        "result": None,
        "history": [],
        "stride": 1,
    }


def add_pair(state: dict[str, Any], pair_score: float, test: Mapping[str, float]) -> None:
    """Count one pair (scores of its two games summed) and decide if the LLR crosses a
    bound (in place). A decided state takes no more pairs: the caller stops there."""
    assert state["result"] is None, "a decided match counts no more pairs"
    state["counts"][round(pair_score * 2)] += 1
    state["pairs"] += 1
    value = llr(state["counts"], test["elo0"], test["elo1"])
    state["llr"] = value
    _remember(state)
    lower, upper = bounds(test["alpha"], test["beta"])
    if value <= lower:
        state["result"] = "H0"
    elif value >= upper:
        state["result"] = "H1"


def _remember(state: dict[str, Any]) -> None:
    """Keep the LLR after the pair just counted when the pair count is a multiple of the
    history's ``stride``; past ``HISTORY_POINTS - 1`` points the stride doubles and every
    other point goes. So a match of any length keeps evenly spaced points, a bounded JSON
    in its tally, and the same ones in the service and a local run (pairs count in order).
    The latest pair is added by ``history``, so a plot always ends at the current LLR."""
    kept: list[list[float]] = state.setdefault("history", [])
    stride = int(state.setdefault("stride", 1))  # a tally from before: from this pair on
    pairs = int(state["pairs"])
    if pairs % stride:
        return
    kept.append([pairs, state["llr"]])
    if len(kept) > HISTORY_POINTS - 1:
        stride *= 2
        state["stride"] = stride
        state["history"] = [point for point in kept if int(point[0]) % stride == 0]


def history(state: Mapping[str, Any]) -> list[list[float]]:
    """``[pairs, llr]`` after counted pairs, evenly thinned (``_remember``) and ending with
    the latest pair: at most ``HISTORY_POINTS`` points, empty before any pair."""
    points = [[int(p), float(llr)] for p, llr in state.get("history") or []]
    pairs = int(state["pairs"])
    if pairs and (not points or points[-1][0] != pairs):
        points.append([pairs, float(state["llr"])])
    return points


def fold_pair(
    tally: dict[str, Any],
    games: Sequence[tuple[Sequence[int | None], Mapping[str, Any]]],
    candidate: int,
    baseline: int,
    test: Mapping[str, float],
) -> None:
    """Fold one complete pair, ``(seating, outcome)`` of its two games in game order, into
    an sprt match's tally (in place): its standings, rated now, and its test
    (``tally["sprt"]``). The service and a local run fold pairs in pair order through this
    one function, so the same seed gives the same standings, ratings and decision."""
    score = 0.0
    for seating, outcome in games:
        standings.fold(tally, seating, outcome)
        score += game_score(outcome["ranks"], seating.index(candidate), seating.index(baseline))
    add_pair(tally["sprt"], score, test)


def render(state: Mapping[str, Any], test: Mapping[str, float]) -> dict[str, Any]:
    """``sprt`` of ``GET /v1/tournaments/{id}``."""
    lower, upper = bounds(test["alpha"], test["beta"])
    return {
        "llr": state["llr"],
        "lower": lower,
        "upper": upper,
        "pairs": state["pairs"],
        "result": state["result"],
        "pentanomial": list(state["counts"]),
        "history": history(state),
        **{k: test[k] for k in ("elo0", "elo1", "alpha", "beta")},
    }
