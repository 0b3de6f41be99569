"""Standings folded game by game: a small JSON document per tournament (``Tally``), updated
once per finished game whatever the tournament's size, and rendered with 95% intervals and
openskill ratings (Plackett-Luce) for ``GET /v1/tournaments/{id}`` and the CLI.

The tally keeps sums, not games: per entrant the games, wins (a win shared by ``k`` seats
counts ``1/k``), the sum and sum of squares of its scores, the sum of its ranks and its
rating; per ordered pair of entrants the games they met in and how often the first finished
ahead (a tie counts half). ``fold`` rates each game as it folds it, which is game order when
games are folded in order (a local run). A service's batches finish in any order: they fold
with ``rate=False`` and ``rate_next`` rates the games in game order as far as their results
are in (``rated``: how many), so that the ratings shown while it runs and its final ratings
depend on its seed alone, not on which worker finished first (and equal a local run's).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from shared.app.ports import FAILURE_COUNTS, SERVICE_FAILURE, bot_stats_doc

Z95 = 1.959963984540054

_players = threading.local()


@functools.cache
def _model() -> Any:
    """The rating model, made on first use: ``tabletop simulate``, which reads only
    ``wilson`` here, starts without importing openskill."""
    from openskill.models import PlackettLuce

    return PlackettLuce()


@functools.cache
def _start() -> tuple[float, float]:
    """The model's starting ``(mu, sigma)``."""
    start = _model().rating()
    return start.mu, start.sigma


def _player(seat: int, mu: float, sigma: float) -> Any:
    """An openskill rating of ``mu``, ``sigma`` to pass to ``rate`` (which copies what it is
    given): one kept per seat and thread, since each new one draws a uuid4 from the OS."""
    kept: list[Any] | None = getattr(_players, "kept", None)
    if kept is None:
        kept = _players.kept = []
    while len(kept) <= seat:
        kept.append(_model().rating())
    player = kept[seat]
    player.mu, player.sigma = mu, sigma
    return player


def empty(entrants: int) -> dict[str, Any]:
    """The tally before any game."""
    mu, sigma = _start()
    return {
        "done": 0,
        "draws": 0,
        "entrants": [
            {
                "games": 0,
                "wins": 0.0,
                "score_sum": 0.0,
                "score_sq": 0.0,
                "rank_sum": 0,
                "mu": mu,
                "sigma": sigma,
            }
            for _ in range(entrants)
        ],
        "met": [[0] * entrants for _ in range(entrants)],
        "ahead": [[0.0] * entrants for _ in range(entrants)],
        "rated": 0,
    }


def fold(
    tally: dict[str, Any],
    seating: Sequence[int | None],
    outcome: Mapping[str, Any],
    *,
    rate: bool = True,
) -> None:
    """Add one finished game to ``tally`` (in place): ``seating[s]`` is the entrant at seat
    ``s`` (None: a field bot of a gauntlet or sprt match, in no standings); ``outcome`` is
    the engine's (``scores``, ``winners``, ``ranks``). ``rate``: rate it now too (games
    folded in game order); without it ``rate_next`` rates it in turn."""
    scores, winners, ranks = outcome["scores"], outcome["winners"], outcome["ranks"]
    rows = tally["entrants"]
    for seat, e in enumerate(seating):
        if e is None:
            continue
        row = rows[e]
        row["games"] += 1
        if seat in winners:
            row["wins"] += 1 / len(winners)
        row["score_sum"] += scores[seat]
        row["score_sq"] += scores[seat] * scores[seat]
        row["rank_sum"] += ranks[seat]
    met, ahead = tally["met"], tally["ahead"]
    for s, a in enumerate(seating):
        for t, b in enumerate(seating):
            if s != t and a is not None and b is not None:
                met[a][b] += 1
                ahead[a][b] += 1.0 if ranks[s] < ranks[t] else 0.5 if ranks[s] == ranks[t] else 0.0
    if rate:
        _rate(rows, seating, ranks)
        tally["rated"] = tally.get("rated", 0) + 1
    tally["done"] += 1
    tally["draws"] += int(bool(outcome.get("draw")))


def unrated() -> dict[str, Any]:
    """The board row of a label no game has rated yet: the model's start, no games."""
    mu, sigma = _start()
    return {"mu": mu, "sigma": sigma, "games": 0}


def interval(mu: float, sigma: float) -> list[float]:
    """The 95% interval of a skill, ``mu`` ± 1.96 ``sigma`` (the API's ``mu_ci``)."""
    return [mu - Z95 * sigma, mu + Z95 * sigma]


def unrate(tally: dict[str, Any]) -> None:
    """Every rating back to the start (in place), no game rated."""
    start = _start()
    for row in tally["entrants"]:
        row["mu"], row["sigma"] = start
    tally["rated"] = 0


def rate_next(
    tally: dict[str, Any], games: Iterable[tuple[Sequence[int | None], Sequence[int]] | None]
) -> int:
    """Rate (in place) the games that follow the ``rated`` first ones, (seating, ranks) each
    in game order, up to the first None (a game whose result is not in yet); returns how
    many it rated."""
    rows = tally["entrants"]
    count = 0
    for game in games:
        if game is None:
            break
        _rate(rows, *game)
        count += 1
    tally["rated"] = tally.get("rated", 0) + count
    return count


def _rate(rows: list[dict[str, Any]], seating: Sequence[int | None], ranks: Sequence[int]) -> None:
    # Field bots are not rated: the entrants are rated on their order among themselves
    # (a Plackett-Luce ranking of a subset of a table is a ranking of its own).
    seats = [(s, e) for s, e in enumerate(seating) if e is not None]
    teams = [[_player(s, rows[e]["mu"], rows[e]["sigma"])] for s, e in seats]
    rated = _model().rate(teams, ranks=[ranks[s] for s, _ in seats])
    for (rating,), (_, e) in zip(rated, seats, strict=True):
        rows[e]["mu"], rows[e]["sigma"] = rating.mu, rating.sigma


def wilson(wins: float, games: int, z: float = Z95) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate (shared wins count as fractions)."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(total: float, squares: float, n: int, z: float = Z95) -> list[float] | None:
    """The normal 95% interval of a mean from its sum and sum of squares (None below 2)."""
    if n < 2:
        return None
    mean = total / n
    variance = max(0.0, (squares - n * mean * mean) / (n - 1))
    half = z * math.sqrt(variance / n)
    return [mean - half, mean + half]


def ordinal(mu: float, sigma: float) -> float:
    """openskill's conservative rating: ``mu - 3 sigma``."""
    return mu - 3 * sigma


def render(tally: Mapping[str, Any], entrants: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``standings`` (best win rate first), ``ratings`` (best ordinal first) and
    ``head_to_head`` for the tally; ``entrants`` are ``{"name", "bot"...}`` in entrant order."""
    standings = []
    ratings = []
    for i, (row, who) in enumerate(zip(tally["entrants"], entrants, strict=True)):
        n = row["games"]
        low, high = wilson(row["wins"], n)
        standings.append(
            {
                "entrant": i,
                "name": who["name"],
                "spec": {k: v for k, v in who.items() if k != "name"},
                "games": n,
                "wins": round(row["wins"], 6),
                "win_rate": row["wins"] / n if n else None,
                "win_rate_ci": [low, high] if n else None,
                "mean_score": row["score_sum"] / n if n else None,
                "mean_score_ci": mean_interval(row["score_sum"], row["score_sq"], n),
                "mean_rank": row["rank_sum"] / n if n else None,
            }
        )
        ratings.append(
            {
                "entrant": i,
                "name": who["name"],
                "mu": row["mu"],
                "sigma": row["sigma"],
                "mu_ci": interval(row["mu"], row["sigma"]),
                "ordinal": ordinal(row["mu"], row["sigma"]),
            }
        )
    standings.sort(key=lambda r: (-(r["win_rate"] or 0.0), r["entrant"]))
    ratings.sort(key=lambda r: (-r["ordinal"], r["entrant"]))
    met, ahead = tally["met"], tally["ahead"]
    size = len(entrants)
    matrix = [
        [
            None
            if a == b or not met[a][b]
            else {
                "games": met[a][b],
                "ahead": ahead[a][b],
                "rate": ahead[a][b] / met[a][b],
                "rate_ci": list(wilson(ahead[a][b], met[a][b])),
            }
            for b in range(size)
        ]
        for a in range(size)
    ]
    return {
        "standings": standings,
        "ratings": ratings,
        "head_to_head": {"names": [e["name"] for e in entrants], "matrix": matrix},
        "draws": tally["draws"],
    }


def rate_labels(board: dict[str, Any], labels: Sequence[str], ranks: Sequence[int]) -> None:
    """Fold one game into a leaderboard (label -> ``{"mu", "sigma", "games"}``, in place):
    ``labels[s]`` played seat ``s`` and finished at ``ranks[s]``. A label at several seats
    of one game is rated as several players; it keeps the mean of their new ratings."""
    teams = []
    for seat, label in enumerate(labels):
        row = board.get(label) or unrated()
        teams.append([_player(seat, row["mu"], row["sigma"])])
    rated = _model().rate(teams, ranks=list(ranks))
    new: dict[str, list[tuple[float, float]]] = {}
    for (rating,), label in zip(rated, labels, strict=True):
        new.setdefault(label, []).append((rating.mu, rating.sigma))
    for label, pairs in new.items():
        games = (board.get(label) or {}).get("games", 0)
        board[label] = {
            "mu": sum(m for m, _ in pairs) / len(pairs),
            "sigma": sum(s for _, s in pairs) / len(pairs),
            "games": games + 1,
        }


def fold_bot_turns(tally: dict[str, Any], turns: Iterable[tuple[int, Mapping[str, Any]]]) -> None:
    """Count a game's registered-bot decisions into ``tally["bot_stats"]`` (in place):
    ``(entrant, bot_turn)`` per decision, ``bot_turn`` as its log records it (``latency_ms``,
    ``failure``). Per entrant: the counters ``GET /v1/bots/{id}`` shows and a histogram of
    latencies by millisecond, so the percentiles cover every decision of the tournament in
    a bounded document (at most one bucket per millisecond of the bot's budget)."""
    kept = tally.setdefault("bot_stats", {})
    for entrant, turn in turns:
        row = kept.setdefault(str(entrant), {"counts": {}, "latency": {}})
        counts, latency = row["counts"], row["latency"]
        failure = turn.get("failure")
        if failure == SERVICE_FAILURE:
            counts["service_faults"] = counts.get("service_faults", 0) + 1
            continue
        counts["decisions"] = counts.get("decisions", 0) + 1
        if failure is not None:
            name = FAILURE_COUNTS.get(str(failure), "errors")
            counts[name] = counts.get(name, 0) + 1
            counts["fallbacks"] = counts.get("fallbacks", 0) + 1
        ms = str(int(turn.get("latency_ms") or 0))
        latency[ms] = latency.get(ms, 0) + 1


def bot_stats(tally: Mapping[str, Any], entrant: int) -> dict[str, Any]:
    """``bot_stats`` of a registered entrant over the tournament's folded games: the shape
    and nearest-rank percentiles of ``GET /v1/bots/{id}``'s ``stats`` (``bot_stats_doc``),
    read from the histogram of ``fold_bot_turns``."""
    row = (tally.get("bot_stats") or {}).get(str(entrant)) or {"counts": {}, "latency": {}}
    doc = bot_stats_doc(row["counts"], [])
    buckets = sorted((int(ms), n) for ms, n in row["latency"].items())
    total = sum(n for _, n in buckets)
    if total:

        def rank(p: float) -> int:
            wanted = min(total, max(1, math.ceil(total * p)))  # the wanted-th smallest
            seen = 0
            for ms, n in buckets:
                seen += n
                if seen >= wanted:
                    return ms
            return buckets[-1][0]

        doc["latency_ms"] = {"p50": rank(0.5), "p95": rank(0.95), "max": buckets[-1][0]}
    return doc
