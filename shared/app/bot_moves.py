"""A built-in bot's move (the Celery task's work): read only the seat's view, choose with the
seat's bot and the game's secret seed, submit like any client, once.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any

from shared.app import bots, searches
from shared.app.commands import secret_seed, submit_command
from shared.app.context import App
from shared.app.messages import BOT_COMMAND_PREFIX, CommandMessage
from shared.games.rng import bot_random
from shared.match import fairness

# Seconds a sent bot command blocks an identical resend: shorter than the sweep's wait
# (BOT_STALL_S), so a game whose bot's command was lost (a crash) gets it sent again.
BOT_SUBMIT_TTL = 15


class Moved(enum.Enum):
    """What came of a bot's wake (its value is the bots' metric label)."""

    SUBMITTED = "submitted"  # its command is on the stream (now, or by a wake before)
    STALE = "stale"  # the seat is not to act at that version any more
    IDLE = "idle"  # its bot found nothing to do
    BUSY = "busy"  # another wake of the seat is searching its move (its command comes from it)
    MISSING = "missing"  # no such game


@dataclass(frozen=True, slots=True)
class BotMove:
    """A bot's wake, answered: ``moved``, and the command id when it submitted one."""

    moved: Moved
    command_id: str | None = None

    @classmethod
    def sent(cls, command_id: str) -> BotMove:
        """A submitted command."""
        return cls(Moved.SUBMITTED, command_id)


def play_bot_move(app: App, game_id: str, seat: int, version: int) -> BotMove:
    """Read only the seat's view, choose with its bot, submit like any client.

    The command id is derived from (seat, version), so a repeated task submits the same
    command and the store applies it at most once. On a turn of its own, a task for an old
    version does nothing (a newer task was queued with the newer version). When several seats
    act at once the service does not re-ask a waiting bot at each other seat's move, so a task
    that finds the game moved on still acts, on the view it reads now. A searching bot's seat
    is searched by one wake at a time (``searches.claim_search``): a wake that finds another
    one searching leaves the move to it (``BUSY``).
    """
    raw = app.ports.read_models.read(game_id, seat)
    if raw is None:
        return BotMove(Moved.MISSING)
    view: dict[str, Any] = json.loads(raw)
    if seat not in view["to_act"] or view.get("outcome"):
        return BotMove(Moved.STALE)
    simultaneous = len(view["to_act"]) > 1
    if view["version"] != version and not simultaneous:
        return BotMove(Moved.STALE)
    version = view["version"]
    cid = f"{BOT_COMMAND_PREFIX}{seat}-{version}"
    # A repeated wake (a redelivery, the stall sweep while the first task still waits in a
    # queue) must not search again: a searching bot's minutes would pile up behind it.
    if app.ports.bus.was_sent(game_id, cid):
        return BotMove.sent(cid)
    spec = bots.bot_spec(view, seat)
    kind = bots.BOTS.get(str(spec["bot"]))
    # One search of the seat's move at a time: in a simultaneous phase the seat is woken again
    # when the others are done, and that wake would search the same decision beside this one.
    # The slot is given back before the command goes out, so that a wake after its refusal
    # searches again.
    slow = kind is not None and kind.slow
    if slow and not searches.claim_search(app, game_id, seat, cid, spec):
        return BotMove(Moved.BUSY)
    try:
        # The bot's randomness comes from the game's secret seed: a source anyone could
        # recompute (game id, seat, version are all public) would let them test every hand
        # the bot might hold against what it did.
        seed = fairness.play_seed_of_view(view, secret_seed(app, game_id))
        decision = bots.decide(spec, view, bot_random(seed, seat, version))
    finally:
        if slow:
            searches.release_search(app, game_id, seat, cid)
    if decision.command is None:
        return BotMove(Moved.IDLE)
    command = dict(decision.command)
    if decision.iterations is not None:
        # A search on a time budget says how far it got, so the audit can replay it.
        command[bots.BOT_ITERATIONS] = decision.iterations
    # On its own turn a bot pins the version it decided at. When several seats act at once
    # (a simultaneous phase) another seat's move does not spoil its choice;
    # the engine still checks the command.
    message = CommandMessage(
        command_id=cid,
        game_id=game_id,
        seat=seat,
        body=command,
        expected_version=None if simultaneous else version,
    )
    # Wakes may repeat (redeliveries, retries, Celery's at-least-once, the sweep): send each
    # command once. Marked only once submitted, so a crash between the two leaves no mark of
    # a command never sent (two wakes at once may both send it: the store applies it once).
    if app.ports.bus.was_sent(game_id, message.command_id):
        return BotMove.sent(message.command_id)
    submit_command(app, message, str(view["game"]))
    app.ports.bus.send_once(game_id, message.command_id, BOT_SUBMIT_TTL)
    return BotMove.sent(message.command_id)
