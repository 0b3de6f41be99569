"""After a change: the projections (every seat's view and the public one), the announcement,
the scheduler's deadlines and the hand-off (wake the bots to act, or score a finished game);
and rebuilding the projections from the events.
"""

from __future__ import annotations

from shared.app import bots, searches
from shared.app.context import App
from shared.match.projections import all_views, projection_json
from shared.match.record import GameRecord, fold

BOT_STALL_S = 20  # a game whose bot is to act and that has not moved for this long is woken


def publish(app: App, record: GameRecord) -> None:
    """Write every projection, announce the version, and hand off bot and scoring work."""
    with app.ports.unit():
        project(app, record)
    hand_off(app, record)


def project(app: App, record: GameRecord) -> list[str]:
    """Write (in the open batch) the projections and the announcement; returns the seat views'
    JSON."""
    seat_views, public = all_views(record)
    texts = [projection_json(doc) for doc in seat_views]
    p = app.ports
    p.read_models.write(record.id, texts, projection_json(public))
    p.notifier.announce(record.id, record.version)
    if public["outcome"] is not None:
        p.directory.mark_finished(record.id, p.clock.epoch())
    sync_deadlines(app, record)
    return texts


def sync_deadlines(app: App, record: GameRecord) -> None:
    """Make the scheduler's deadlines those the record has, in the open batch: per seat with a
    running turn clock ``<game>:<seat>`` at its deadline; and while a bot is to act,
    ``<game>:bot`` ``BOT_STALL_S`` from now, moved on at every change, so a game whose bot's
    wake was lost (a crash between the append and the hand-off, a Celery worker killed with the
    task, Redis restarted) is found and woken. Written from the record, not from the new
    events, so a command redelivered after a crash writes them again."""
    match = record.match
    p = app.ports
    over = record.outcome is not None
    if match.clock is not None:
        for seat, c in enumerate(match.clocks):
            key = deadline_key(record.id, seat)
            if c.armed and not over:
                assert c.deadline_ms is not None
                p.clock.set_deadline(key, c.deadline_ms / 1000)
            else:
                p.clock.cancel_deadline(key)
    bots_ = match.bot_seats
    if not bots_:
        return
    key = deadline_key(record.id, BOT_KEY)
    if not over and record.state is not None and bots_ & set(record.engine.to_act(record.state)):
        p.clock.set_deadline(key, p.clock.epoch() + BOT_STALL_S)
    else:
        p.clock.cancel_deadline(key)


BOT_KEY = "bot"  # the deadline of a game whose bot is to act: <game>:bot


def deadline_key(game_id: str, seat: int | str) -> str:
    """A seat's deadline in the scheduler's sorted set (``BOT_KEY``: the bot-stall sweep's)."""
    return f"{game_id}:{seat}"


def hand_off(
    app: App,
    record: GameRecord,
    waiting: frozenset[int] | None = None,
    actor: int | None = None,
) -> None:
    """Wake the bots whose turn it is, or score a finished game.

    When several seats act at once (``waiting``: who was to act before this change), a bot
    already asked keeps its pending move instead of being asked again at every other seat's
    move; only seats new to act, and the seat that just acted, are woken.
    """
    engine = record.engine
    dispatcher = app.ports.dispatcher
    if record.state is None:  # waiting for client seeds: nothing dealt, nobody to act
        return
    seats = record.match.seats
    if record.outcome is not None:
        dispatcher.finalize(record.id)
        for seat, occupant in enumerate(seats):  # registered bots hear that it is over
            if occupant.bot == bots.REGISTERED:
                dispatcher.remote(record.id, seat, record.version)
        return
    bot_seats = record.bot_seats
    to_act = engine.to_act(record.state)
    for seat in to_act:
        if seat not in bot_seats:
            continue
        if waiting is None or len(to_act) == 1 or seat not in waiting or seat == actor:
            wake(app, record.id, seat, record.version, seats[seat].bot, slow_bot(record, seat))


def wake(app: App, game_id: str, seat: int, version: int, bot: str | None, slow: bool) -> None:
    """Ask the seat's bot to act: a registered bot through its own workers (they wait on
    many bots at once), a built-in one as ``searches.dispatch_move`` queues it."""
    if bot == bots.REGISTERED:
        app.ports.dispatcher.remote(game_id, seat, version)
    else:
        searches.dispatch_move(app, game_id, seat, version, slow=slow)


def slow_bot(record: GameRecord, seat: int) -> bool:
    """Whether the seat's bot searches (it gets its own queue)."""
    name = record.match.seats[seat].bot
    return name is not None and name in bots.BOTS and bots.BOTS[name].slow


def rebuild_projections(app: App, game_id: str) -> GameRecord:
    """Fold every event afresh and rewrite the projections (they are disposable)."""
    app.forget(game_id)
    record = fold(game_id, app.ports.store.read(game_id))
    app.remember(record)
    publish(app, record)
    return record
