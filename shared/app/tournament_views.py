"""A tournament as clients read it: its status, standings, games and sprt verdict
(``GET /v1/tournaments/{id}``), the list, cancelling one, and a game type's bot ratings.

A full store (issue 36): a queued or running tournament whose games cannot be written waits
(its batches try again once the store takes writes: ``services/bots/tasks.py``), and says so
while it does: ``paused`` and ``paused_reason``, from the store check an entry point installs
(``install_store_check``: the gateway asks Redis's memory figures). Nothing is written for it: a
full store could not take it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from shared import games
from shared.app import bots
from shared.app.context import App
from shared.app.errors import AppError, ErrorCode
from shared.app.ports import TournamentEntry
from shared.tournaments import sprt, standings
from shared.tournaments.plan import Plan, game_id, spec_label

QUEUED, RUNNING, FINISHED, CANCELLED = "queued", "running", "finished", "cancelled"

# Why the store refuses writes now (None: it takes them) for an application; installed by the
# entry point that can tell (the gateway: Redis's memory figures). None installed: never paused.
StoreCheck = Callable[[App], str | None]
_store_check: list[StoreCheck] = []


def install_store_check(check: StoreCheck | None) -> None:
    """Use ``check`` to tell whether unfinished tournaments are paused (None: stop)."""
    _store_check[:] = [] if check is None else [check]


def paused_reason(app: App, status: str) -> str | None:
    """Why a tournament of ``status`` is not playing its games now: the store refuses writes
    (its games wait and go on once it takes them again), or None."""
    if status not in (QUEUED, RUNNING) or not _store_check:
        return None
    refusal = _store_check[0](app)
    if refusal is None:
        return None
    return (
        f"paused: {refusal}; its games wait and go on by themselves once memory is freed "
        "(finished games archived, or a larger maxmemory)"
    )


def status_of(entry: TournamentEntry) -> str:
    """``queued``, ``running``, ``finished`` or ``cancelled``."""
    total = int(entry.plan["games"])
    if entry.tally["done"] >= total or (entry.tally.get("sprt") or {}).get("result"):
        return FINISHED  # every game played, or an sprt match decided
    if entry.cancelled:
        return CANCELLED
    return RUNNING if entry.started else QUEUED


def tournament_doc(
    app: App, tournament_id: str, *, offset: int = 0, limit: int = 100
) -> dict[str, Any]:
    """What ``GET /v1/tournaments/{id}`` answers; AppError 404 for an unknown id."""
    entry = app.ports.tournaments.get(tournament_id)
    if entry is None:
        raise AppError(ErrorCode.TOURNAMENT_NOT_FOUND, f"no tournament {tournament_id}")
    plan = Plan.from_doc(entry.plan)
    total = plan.games
    entrants = [{"name": e.name, **e.spec} for e in plan.entrants]
    tally = entry.tally
    status = status_of(entry)
    if status == CANCELLED and tally.get("rated", 0) < tally["done"]:
        tally = _rated_as_folded(app, tournament_id, plan, tally)
    # How many games the ratings cover: the first ones in game order as they are folded (a
    # tally from before counted none in order until it finished).
    rated = tally.get("rated", tally["done"] if tally.get("rated_in_order") else 0)
    rendered = standings.render(tally, entrants)
    for row in rendered["standings"]:  # a registered bot's decisions over these games
        if row["entrant"] in plan.registered:
            row["bot_stats"] = standings.bot_stats(tally, row["entrant"])
    offset = max(0, offset)
    limit = max(1, min(limit, 1000))
    page = range(offset, min(total, offset + limit))
    listed = [
        {
            "index": i,
            "id": game_id(tournament_id, i),
            "seats": plan.seat_names(i),
            "deal": plan.deal(i),
            "finished": done,
        }
        for i, done in zip(
            page, app.ports.tournaments.folded(tournament_id, list(page)), strict=True
        )  # fmt: skip
    ]
    head_to_head = rendered["head_to_head"] if plan.players == 2 else None
    paused = paused_reason(app, status)
    return {
        "id": tournament_id,
        "game": plan.game,
        "format": plan.format,
        "players": plan.players,
        "options": dict(plan.options),
        "entrants": [
            {"entrant": i, "name": e.name, "spec": dict(e.spec), "label": spec_label(e.spec)}
            for i, e in enumerate(plan.entrants)
        ],
        "created_at": entry.created_at,
        # When its last game was folded (None before): a finished tournament's run time.
        "finished_at": tally.get("finished_at"),
        "status": status,
        "progress": {"done": tally["done"], "total": total},
        # Queued or running, but its games cannot be written now (the store is full): they
        # wait, and the tournament goes on once it takes writes again.
        "paused": paused is not None,
        "paused_reason": paused,
        "rated_games": rated,
        "standings": rendered["standings"],
        "ratings": rendered["ratings"],
        "head_to_head": head_to_head,
        "pairwise": rendered["head_to_head"],
        "draws": rendered["draws"],
        "games": {"offset": offset, "limit": limit, "total": total, "items": listed},
        "candidate": plan.candidate if plan.duel else None,
        "field": dict(plan.field) if plan.duel else None,
        "sprt": sprt_doc(plan, tally),
    }


def sprt_doc(plan: Plan, tally: Mapping[str, Any]) -> dict[str, Any] | None:
    """``sprt`` of a tournament's document: the test's state (None but in an sprt match)."""
    if plan.format != "sprt":
        return None
    return sprt.render(tally.get("sprt") or sprt.empty(), plan.sprt or sprt.params(None))


# Cancelled tournaments' ratings replayed over their folded games, by (id, games folded):
# computed once per process and change, not at every read (10,000 games: some 0.3 s).
_REPLAYED: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
_REPLAYED_KEEP = 16
_replayed_lock = threading.Lock()


def _rated_as_folded(
    app: App, tournament_id: str, plan: Plan, tally: Mapping[str, Any]
) -> dict[str, Any]:
    """A cancelled tournament's tally with its ratings replayed over every folded game in
    game order: a cancel leaves gaps that ``_finisher``'s ratings stop at."""
    key = (tournament_id, int(tally["done"]))
    with _replayed_lock:
        replayed = _REPLAYED.get(key)
    if replayed is not None:
        return {**tally, "entrants": replayed["entrants"], "rated": replayed["rated"]}
    out = {**tally, "entrants": [dict(row) for row in tally["entrants"]]}
    indexes = list(range(plan.games))
    done = app.ports.tournaments.folded(tournament_id, indexes)
    ids = [game_id(tournament_id, i) for i, d in zip(indexes, done, strict=True) if d]
    kept = [i for i, d in zip(indexes, done, strict=True) if d]
    results = app.ports.directory.results(ids)
    standings.unrate(out)
    standings.rate_next(
        out,
        [(plan.seating(i), r["outcome"]["ranks"]) for i, r in zip(kept, results, strict=True)
         if r is not None],
    )  # fmt: skip
    with _replayed_lock:
        _REPLAYED[key] = {"entrants": out["entrants"], "rated": out["rated"]}
        while len(_REPLAYED) > _REPLAYED_KEEP:
            _REPLAYED.popitem(last=False)
    return out


def list_tournaments(app: App, *, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
    """Summaries (id, game, format, status, progress, paused and its reason), oldest
    first."""
    out = []
    refusal: list[str | None] = []  # the store asked once for the page, if any is unfinished
    for tid in app.ports.tournaments.list_ids(offset=offset, limit=limit):
        entry = app.ports.tournaments.get(tid)
        if entry is None:
            continue
        status = status_of(entry)
        if status in (QUEUED, RUNNING) and not refusal:
            refusal.append(paused_reason(app, status))
        paused = refusal[0] if status in (QUEUED, RUNNING) else None
        out.append(
            {
                "id": tid,
                "game": entry.plan["game"],
                "format": entry.plan["format"],
                "entrants": [e.get("name") for e in entry.plan["entrants"]],
                "created_at": entry.created_at,
                "status": status,
                "progress": {"done": entry.tally["done"], "total": int(entry.plan["games"])},
                "paused": paused is not None,
                "paused_reason": paused,
            }
        )
    return out


def cancel_tournament(app: App, tournament_id: str) -> dict[str, Any]:
    """Cancel (a finished tournament stays finished); answers the tournament's document."""
    entry = app.ports.tournaments.get(tournament_id)
    if entry is None:
        raise AppError(ErrorCode.TOURNAMENT_NOT_FOUND, f"no tournament {tournament_id}")
    if status_of(entry) != FINISHED:
        app.ports.tournaments.cancel(tournament_id)
    return tournament_doc(app, tournament_id, limit=1)


# A registered bot's rating label (``spec_label``): ``bot_id=<id>``.
_REGISTERED_LABEL = "bot_id="


def _built_in_bots(game: str) -> list[str]:
    """The built-in bots a game seats: ``random`` always, ``heuristic`` with the game's
    heuristic, ``ismcts`` with its kernel (the search plays on it)."""
    spec = games.spec(game)
    have = {
        "random": True,
        "heuristic": spec.heuristic is not None,
        "ismcts": spec.kernel is not None,
    }
    return [name for name in bots.names() if have.get(name, False)]


def ratings_doc(app: App, game: str) -> dict[str, Any]:
    """``GET /v1/ratings?game=``: the game type's public ladder, best ordinal first. Each row
    is a bot spec (``bot``: its label) with ``mu``, ``sigma``, the 95% interval of its skill
    ``mu_ci`` (``mu`` ± 1.96 ``sigma``, the intervals' confidence everywhere else in the
    API), ``ordinal``, ``games`` and ``rank``; a registered bot's row names it (``bot_id``,
    ``name``), and one that did not opt in (``ladder``) is left out. Every built-in bot the
    game can seat is on it, at its default settings: one no game rated yet with the model's
    start (``games`` 0), so the ladder lists what can be measured before it is."""
    if game not in games.names():
        raise AppError(
            ErrorCode.REQUEST_INVALID,
            f"unknown game {game!r}",
            errors={"game": [f"one of {', '.join(games.names())}"]},
        )
    board = app.ports.ratings.board(game)
    for built_in in _built_in_bots(game):
        board.setdefault(built_in, standings.unrated())
    rows = []
    for label, r in board.items():
        bot_id, name = None, None
        if label.startswith(_REGISTERED_LABEL):
            bot = app.ports.bots.get(label.removeprefix(_REGISTERED_LABEL))
            # Rated before it could opt out (every all-bot game was), or no longer known.
            if bot is None or not bot.ladder:
                continue
            bot_id, name = bot.bot_id, bot.name
        mu, sigma = r["mu"], r["sigma"]
        rows.append(
            {
                "bot": label,
                "mu": mu,
                "sigma": sigma,
                "mu_ci": standings.interval(mu, sigma),
                "ordinal": standings.ordinal(mu, sigma),
                "games": r["games"],
                "bot_id": bot_id,
                "name": name,
            }
        )
    rows.sort(key=lambda r: (-r["ordinal"], r["bot"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return {"game": game, "ratings": rows}
