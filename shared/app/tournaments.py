"""Tournament handlers: create one and play its games (the Celery tasks call these); its
standings, the list and cancelling one are read in ``tournament_views``.

A tournament game is a normal game. The task plays it whole, in process, through the one
play-out driver with the service's randomness labels, then appends its sealed, hash-chained log
(commands recorded) in one append, writes its projections and result, rates it and folds it
into the standings. Its id is derived from the tournament and the game's index and its seed from
the tournament's seed, so a task run twice (a redelivery, a killed worker) finds the game
stored, or stores the same game, and folds it at most once.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from shared import games
from shared.app import bots, playout
from shared.app.bot_registration import BotCaller, not_seatable
from shared.app.bot_turns import seat_spec
from shared.app.context import App
from shared.app.creation import open_game
from shared.app.errors import AppError, ErrorCode
from shared.app.messages import shard_of
from shared.app.opening import creation_events, seats_from_specs
from shared.app.ports import GameEntry
from shared.app.results import rating_update, result_doc
from shared.events import EncodedLog, Envelope
from shared.match.aggregate import Seat
from shared.match.clock import ms_of
from shared.match.projections import projection_json, view
from shared.match.record import GameRecord, fold
from shared.store import DuplicateCommand, StaleVersion
from shared.tournaments import sprt, standings
from shared.tournaments.plan import Plan, PlanError, game_id, parse

# Games per Celery task: fewer broker round trips and batch folds, each game still stored alone.
# Games of quick bots (a few milliseconds each) go up to 64 to a task; a search bot's game can
# take minutes, so those go one to a task, inside its time limit (services/bots/tasks.py).
# Batches shrink towards the end of a tournament (``chunks``).
CHUNK = 64
MIN_CHUNK = 8
SEARCH_CHUNK = 1
QUICK_BOTS = frozenset({"random", "heuristic"})
MIN_TASKS = 8


# Who seats a tournament's registered entrants: the route admits organizer keys alone, so a
# bot ``seatable_by`` "owner" (its own key) never enters one.
ORGANIZER = BotCaller(organizer=True)


def create_tournament(app: App, body: Mapping[str, Any], *, max_games: int) -> tuple[str, Plan]:
    """Check and store a tournament, and hand its games to the dispatcher. AppError (422)
    names the fields at fault; 403 ``bot/not_seatable`` a registered entrant whose owner
    lets only its own key seat it."""
    try:
        plan = parse(body, max_games=max_games, registered=app.ports.bots.get)
    except PlanError as exc:
        # Field errors as lists of messages, the shape of every other 422.
        errors = {field: [message] for field, message in exc.errors.items()}
        raise AppError(ErrorCode.TOURNAMENT_INVALID, exc.detail, errors=errors) from None
    for i, doc in enumerate(body["entrants"]):
        bot = app.ports.bots.get(str(doc["bot_id"])) if "bot_id" in doc else None
        if bot is not None and not ORGANIZER.may_seat(bot):
            refused = not_seatable(i, bot, f"entrants[{i}].bot_id")
            raise AppError(ErrorCode.BOT_NOT_SEATABLE, refused.detail, errors=refused.errors)
    tournament_id = "t" + secrets.token_hex(6)
    p = app.ports
    p.tournaments.create(
        tournament_id,
        plan.to_doc(),
        empty_tally(plan),
        p.clock.now(),
        p.clock.epoch(),
    )
    p.dispatcher.tournament(tournament_id)
    return tournament_id, plan


def empty_tally(plan: Plan) -> dict[str, Any]:
    """A tournament's tally before any game (an sprt match's with its test's state)."""
    tally = standings.empty(len(plan.entrants))
    if plan.format == "sprt":
        tally["sprt"] = sprt.empty()
    return tally


def chunks(plan_doc: Mapping[str, Any]) -> list[list[int]]:
    """Game indexes in the tasks' batches for a stored plan. A batch holds at most an eighth
    (``1 / MIN_TASKS``) of the games left when it starts, and no fewer than ``MIN_CHUNK``: a
    tournament starts with large batches (few round trips and folds a game) and ends with
    small ones, so the pool's processes finish together instead of one playing a last large
    batch alone; and a small tournament is still spread over ``MIN_TASKS`` tasks."""
    seated = [*plan_doc["entrants"], plan_doc.get("field")]
    if not any("bot_id" in e for e in plan_doc["entrants"]):
        return _batches(list(range(int(plan_doc["games"]))), seated)
    plan = Plan.from_doc(plan_doc)  # a stored plan: registered entrants, so live games
    live = live_indexes(plan)
    if live:
        # Games seating a registered bot: the first LIVE_WINDOW are created by one batch (a
        # game's finish creates the next one, ``game_finished``); the others played whole.
        taken = set(live)
        played = [i for i in range(plan.games) if i not in taken]
        builtin = [e for i, e in enumerate(plan_doc["entrants"]) if i not in plan.registered]
        return [live[:LIVE_WINDOW], *_batches(played, [*builtin, plan_doc.get("field")])]
    return _batches(list(range(plan.games)), seated)


def _batches(indexes: Sequence[int], seated: Sequence[Mapping[str, Any] | None]) -> list[list[int]]:
    """``chunks`` of ``indexes`` (games played whole) by the bots ``seated`` in them."""
    total = len(indexes)
    quick = all((e or {"bot": "random"}).get("bot") in QUICK_BOTS for e in seated)
    size = CHUNK if quick else SEARCH_CHUNK
    most = min(size, max(1, total // MIN_TASKS))  # a small tournament: at least MIN_TASKS tasks
    out: list[list[int]] = []
    start = 0
    while start < total:
        n = max(1, min(most, max(MIN_CHUNK, -(-(total - start) // MIN_TASKS))))
        out.append(list(indexes[start : start + n]))
        start += n
    return out


def play_games(app: App, tournament_id: str, indexes: Iterable[int]) -> int:
    """Play (or find stored), score and fold each game of ``indexes`` not folded yet, unless
    the tournament is cancelled. The batch's games are stored together, a few round trips for
    all of them (Redis's CPU for a round trip is most of what a quick bot's stored game costs
    it); its standings and ratings are folded in one atomic step each, game by game exactly
    once. Returns how many games this call folded."""
    p = app.ports
    entry = p.tournaments.get(tournament_id)
    if entry is None:
        return 0
    plan = Plan.from_doc(entry.plan)
    if not entry.started:
        p.tournaments.mark_started(tournament_id)
    wanted = list(indexes)
    todo = [i for i, done in zip(wanted, p.tournaments.folded(tournament_id, wanted),
                                 strict=True) if not done]  # fmt: skip
    # One check for the batch, whose games start together (a search bot's batch is one game):
    # a cancel drops the batches not started.
    if not todo or p.tournaments.cancelled(tournament_id):
        return 0
    live = [i for i in todo if plan.live(i)]
    if live:  # created here, played and folded as live games (``game_finished``)
        for index in live:
            create_live_game(app, tournament_id, plan, index)
        todo = [i for i in todo if not plan.live(i)]
        if not todo:
            return 0
    records = store_games(app, tournament_id, plan, todo)
    # The results are written when this unit closes, before the fold below that may read them
    # all (``_in_game_order``): this must not run inside an outer unit.
    with p.unit():
        for record in records:
            _project(app, record)
        p.directory.record_results({r.id: result_doc(r) for r in records})
    folds: dict[int, Callable[[dict[str, Any]], None]] = {}
    rates: dict[str, Callable[[dict[str, Any]], None]] = {}
    for index, record in zip(todo, records, strict=True):
        outcome = record.engine.outcome(record.state)
        assert outcome is not None, "a tournament game is stored finished"
        # An sprt match folds its games in pair order in its finisher: only marked here.
        folds[index] = _skip if plan.format == "sprt" else _folder(plan.seating(index), outcome)
        update = rating_update(record, outcome)
        if update is not None:
            rates[record.id] = update
    p.ratings.rate(plan.game, rates)
    if plan.format != "sprt":
        finish = _finisher(app, tournament_id, plan, set(todo))
        return len(p.tournaments.fold(tournament_id, folds, finish))
    decided: list[bool] = []
    finish = _sprt_finisher(app, tournament_id, plan, set(todo), decided)
    folded = p.tournaments.fold(tournament_id, folds, finish)
    if decided and decided[-1]:
        # Decided: the batches not started yet are dropped as a cancel drops them.
        p.tournaments.cancel(tournament_id)
    return len(folded)


def _skip(tally: dict[str, Any]) -> None:
    """An sprt game's fold: nothing until its pair is counted in order (``_sprt_finisher``)."""


def _project(app: App, record: GameRecord) -> None:
    """A finished tournament game's projections, in the open batch: its public view alone
    (no one plays its seats: a seat's view an auditor asks for is folded from the log by
    ``queries.view_json``), the announcement, and its place among the finished games."""
    p = app.ports
    p.read_models.write(record.id, [], projection_json(view(record, None)))
    p.notifier.announce(record.id, record.version)
    p.directory.mark_finished(record.id, p.clock.epoch())


def _folder(seating: Sequence[int | None], outcome: Mapping[str, Any]) -> Callable[[dict], None]:
    """Fold one game into a tally, unrated: ``_finisher`` rates the games in game order."""

    def fold_one(tally: dict[str, Any]) -> None:
        standings.fold(tally, seating, outcome, rate=False)

    return fold_one


# Results read a round trip at a time while the ratings catch up with the folded games.
RATE_WINDOW = 256


def _finisher(app: App, tournament_id: str, plan: Plan, batch: set[int]) -> Callable[[dict], None]:
    """After the folds of the games ``batch``, in the same atomic step: rate the games after
    the ``rated`` first ones in game order, as far as they are folded (in an earlier step or
    in this one: ``batch``), from their stored results (``standings.rate_next``). Batches
    finish in any order and openskill's updates depend on it, so the ratings depend on the
    tournament's seed alone, while it runs and once it is over, and cover only games in the
    standings. The work is spread over the batches' folds instead of waiting for the last
    one; every folded game's result is stored before its fold, so the fold of the last game
    rates every game."""

    def finish(tally: dict[str, Any]) -> None:
        if "rated" not in tally:  # a tally from before: its ratings start over in game order
            standings.unrate(tally)
        start = tally["rated"]
        while start < plan.games:
            stop = min(plan.games, start + RATE_WINDOW)
            window = range(start, stop)
            folded = app.ports.tournaments.folded(tournament_id, list(window))
            results = app.ports.directory.results([game_id(tournament_id, i) for i in window])
            games = [
                None
                if r is None or not (done or i in batch)
                else (plan.seating(i), r["outcome"]["ranks"])
                for i, r, done in zip(window, results, folded, strict=True)
            ]
            rated = standings.rate_next(tally, games)
            if start + rated < stop:
                break
            start = stop
        if tally["done"] >= plan.games:
            assert tally["rated"] >= plan.games, "a folded game's result is stored before it"
            tally["rated_in_order"] = True
            tally["finished_at"] = app.ports.clock.now()

    return finish


def _sprt_finisher(
    app: App, tournament_id: str, plan: Plan, batch: set[int], decided: list[bool]
) -> Callable[[dict], None]:
    """An sprt match's ``finish``: count the complete pairs after the ``done`` first games,
    in pair order, as far as both games of a pair are folded (before or in ``batch``), into
    the standings (rated) and the test (``sprt.fold_pair``), and stop at the first pair that
    decides. Batches finish in any order; this way the decision, the standings and the
    ratings depend on the seed alone, and equal a local run's. Appends to ``decided``
    whether the match is decided (the last call's answer is the one stored)."""
    test = plan.sprt or sprt.params(None)
    baseline = plan.opponents()[0]

    def finish(tally: dict[str, Any]) -> None:
        state = tally["sprt"]
        start = tally["done"]  # pairs are counted whole: always even
        while state["result"] is None and start < plan.games:
            stop = min(plan.games, start + RATE_WINDOW)
            window = range(start, stop)
            folded = app.ports.tournaments.folded(tournament_id, list(window))
            results = app.ports.directory.results([game_id(tournament_id, i) for i in window])
            ready = [
                r is not None and (done or i in batch)
                for i, r, done in zip(window, results, folded, strict=True)
            ]
            for first in range(0, len(ready) - 1, 2):
                if not (ready[first] and ready[first + 1]) or state["result"] is not None:
                    break
                games = []
                for j in (first, first + 1):
                    result = results[j]
                    assert result is not None, "a ready game has its result"
                    games.append((plan.seating(start + j), result["outcome"]))
                sprt.fold_pair(tally, games, plan.candidate, baseline, test)
            if tally["done"] < stop:
                break
            start = stop
        tally["rated_in_order"] = True
        over = state["result"] is not None or tally["done"] >= plan.games
        if over and tally.get("finished_at") is None:
            tally["finished_at"] = app.ports.clock.now()
        decided.append(state["result"] is not None)

    return finish


# ---- games seating a registered bot: live games --------------------------------------------------
#
# A registered bot decides over HTTP or a connected stream, in milliseconds to seconds a move,
# so its games are not played whole inside one task (a batch would wait on the slowest bot,
# a process held per game). Such a game is created as a live game, tournament-tagged, with the
# id and seed the plan derives for it, through the game path every game takes: its built-in
# bots on the bot workers, its registered bots on the gevent remote queue, where a greenlet
# waits on a bot (``remote.play_remote_move``), so many games wait at once and a slow bot
# slows its own games only. Its log is the live game's (each registered decision with its
# ``bot_turn``), which the audit checks. When it ends, its scoring (``finalize_record``) folds
# it into the standings (``game_finished``) as a batch folds its games: the same folds and
# finishers, ratings and SPRT pairs in game order. At most LIVE_WINDOW of a tournament's live
# games run at once: the end of the live game at position p creates the one at p + window.

LIVE_WINDOW = 32


def live_indexes(plan: Plan) -> list[int]:
    """The indexes of the games that seat a registered bot, in game order."""
    if not plan.registered:
        return []
    return [i for i in range(plan.games) if plan.live(i)]


def create_live_game(app: App, tournament_id: str, plan: Plan, index: int) -> bool:
    """Create game ``index`` as a live game (its bots woken as any game's); False when it
    exists already (a batch or a finish run twice) or the tournament is cancelled."""
    p = app.ports
    gid = game_id(tournament_id, index)
    if p.directory.get(gid) is not None or p.tournaments.cancelled(tournament_id):
        return False
    specs = plan.seat_specs(index)
    registered: dict[int, Seat] = {}
    for seat, spec in enumerate(specs):
        if "bot_id" in spec:
            bot = p.bots.get(str(spec["bot_id"]))
            if bot is None:
                raise LookupError(f"no registered bot {spec['bot_id']}")
            # A bot retired since the tournament began keeps its seats: its turns play its
            # on_failure policy (``remote.play_remote_move``), so the tournament still ends.
            registered[seat] = Seat(
                name=str(spec["name"]), bot=bots.REGISTERED, bot_spec=seat_spec(bot)
            )
    seats, _tokens = seats_from_specs(specs, registered)
    engine = games.get(plan.game)
    options = engine.parse_options(plan.players, dict(plan.options))
    seed = plan.game_seed(index)
    at = p.clock.now()
    events = creation_events(
        plan.game,
        seats,
        options,
        seed,
        tournament={"id": tournament_id, "index": index},
        now_ms=ms_of(at),
    )
    try:
        open_game(app, gid, plan.game, events, seed, at, tournament=tournament_id)
    except (StaleVersion, DuplicateCommand):
        return False  # a racing run created it: its bots are woken already
    return True


def game_finished(app: App, record: GameRecord) -> str:
    """Fold a finished live tournament game (called by its scoring, after its result is
    stored) into the standings, its registered bots' decisions into ``bot_stats``, and
    create the tournament's next live game. Safe to run twice: a game folds once, and a game
    is created once."""
    p = app.ports
    tag = record.match.tournament
    outcome = record.outcome
    if tag is None or outcome is None:
        return "not a finished tournament game"
    tournament_id, index = str(tag["id"]), int(tag["index"])
    entry = p.tournaments.get(tournament_id)
    if entry is None:
        return "no such tournament"
    plan = Plan.from_doc(entry.plan)
    if not (0 <= index < plan.games and plan.live(index)) or record.id != game_id(
        tournament_id, index
    ):
        return "not a live game"
    seating = plan.seating(index)
    turns = _bot_turns(p.store.read(record.id), seating, plan.registered)

    def fold_one(tally: dict[str, Any]) -> None:
        if plan.format != "sprt":  # an sprt match folds its games in pair order (finisher)
            standings.fold(tally, seating, outcome, rate=False)
        standings.fold_bot_turns(tally, turns)

    decided: list[bool] = []
    finish = (
        _sprt_finisher(app, tournament_id, plan, {index}, decided)
        if plan.format == "sprt"
        else _finisher(app, tournament_id, plan, {index})
    )
    folded = p.tournaments.fold(tournament_id, {index: fold_one}, finish)
    if decided and decided[-1]:
        p.tournaments.cancel(tournament_id)  # decided: no more games are started
    live = live_indexes(plan)
    position = live.index(index)
    if position + LIVE_WINDOW < len(live):
        create_live_game(app, tournament_id, plan, live[position + LIVE_WINDOW])
    return "folded" if folded else "folded before"


def _bot_turns(
    envelopes: Iterable[Envelope], seating: Sequence[int | None], registered: frozenset[int]
) -> list[tuple[int, dict[str, Any]]]:
    """``(entrant, bot_turn)`` of each decision a registered entrant's seat made in a log."""
    out = []
    for env in envelopes:
        turn = (env.command or {}).get(bots.BOT_TURN)
        if turn is None or env.seat is None or not 0 <= env.seat < len(seating):
            continue
        entrant = seating[env.seat]
        if entrant is not None and entrant in registered:
            out.append((entrant, dict(turn)))
    return out


def store_game(app: App, tournament_id: str, plan: Plan, index: int) -> GameRecord:
    """Game ``index`` as stored (``store_games`` of one)."""
    return store_games(app, tournament_id, plan, [index])[0]


def store_games(
    app: App, tournament_id: str, plan: Plan, indexes: Sequence[int]
) -> list[GameRecord]:
    """The games ``indexes`` as stored: played and appended now, or read back when a run
    before (or a racing one) stored one. Each append expects an empty stream, so of two runs
    one stores the game and the other reads it back."""
    p = app.ports
    entries: list[tuple[GameEntry, float]] = []
    played: list[playout.Played] = []
    logs: list[tuple[str, EncodedLog]] = []
    # One time for the batch's logs: they are appended at once (and the clock costs a tenth
    # of the play-out when read at every command).
    at = p.clock.now()
    created = ms_of(at) / 1000
    for index in indexes:
        gid = game_id(tournament_id, index)
        seed = plan.game_seed(index)
        game = playout.play(
            plan.game,
            plan.seat_specs(index),
            plan.options,
            seed,
            clock=_always(at),
            tournament={"id": tournament_id, "index": index},
            encoded=True,
        )
        assert game.log is not None
        played.append(game)
        logs.append((gid, game.log))
        entry = GameEntry(
            game_id=gid,
            game=plan.game,
            seed=seed,
            shard=shard_of(gid, p.shards),
            created_at=at,
            token_hashes=tuple(None for _ in range(plan.players)),
            tournament=tournament_id,
        )
        entries.append((entry, created))
    # The directory first, as for a live game: a game whose events exist has its seed.
    p.directory.register_all(entries)
    appended = p.store.append_logs(logs, command_id="create")
    records = []
    again: list[tuple[GameEntry, float]] = []
    for (entry, _), game, outcome in zip(entries, played, appended, strict=True):
        gid = entry.game_id
        if isinstance(outcome, StaleVersion | DuplicateCommand):
            stored = p.store.read(gid)  # stored before: that log counts, and its time
            at = stored[0].at
            again.append((replace(entry, created_at=at), ms_of(at) / 1000))
            records.append(fold(gid, stored))
        else:
            records.append(replace(game.record, id=gid))
    if again:
        p.directory.register_all(again)
    return records


def _always(at: str) -> Callable[[], str]:
    return lambda: at
