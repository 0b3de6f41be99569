"""The registry of bots from outside (``POST/GET/DELETE /v1/bots``): registering one (its key
shown once, see ``shared/app/remote.py`` for how keys are made and kept), showing, listing
and retiring them, seating them in a new game (``{"bot_id"}`` seat specs) as far as their
``seatable_by`` lets the caller, and issuing every key again under a new secret. Their turns
are ``shared/app/remote.py``'s.

**Who sees what.** A bot's document is public but for its webhook ``url``, shown only to a
caller bearing that bot's own key or an organizer key (``BotCaller``).

**Who may seat it** (``seatable_by``): ``anyone`` (the default, and what a bot registered
before it could be said reads as), ``owner`` (only a request bearing the bot's own key) or
``organizers`` (an organizer key, or the owner). Refused: 403 ``bot/not_seatable``, nothing
created. Tournaments are started with an organizer key alone, so an ``owner`` bot never
enters one.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared import games
from shared.app import names
from shared.app.bot_turns import (
    CONNECTED,
    KEY_PREFIX,
    REGISTERED,
    WEBHOOK,
    bot_key,
    key_hash,
    seat_spec,
)
from shared.app.context import App
from shared.app.errors import AppError, ErrorCode
from shared.app.ports import RegisteredBot
from shared.games import errors as rules
from shared.games.errors import GameError
from shared.match.aggregate import Seat

TRANSPORTS = (WEBHOOK, CONNECTED)
ON_FAILURE = ("random", "forfeit")
# A registered bot's budget_ms bounds: under the stall sweep's BOT_STALL_S, so a turn still
# waiting on its bot is never sent a second time by the sweep.
BUDGET_MS = (50, 10_000)
DEFAULT_BUDGET_MS = 500
ANYONE, OWNER, ORGANIZERS = "anyone", "owner", "organizers"
SEATABLE_BY = (ANYONE, OWNER, ORGANIZERS)
# "anyone": the flows a bot's owner follows seat it without its key (a game created with curl
# or the kit, a tournament's organizer), and a seat gives a stranger nothing of the bot's but
# the moves every opponent sees; an owner who would rather no stranger made it play (its
# compute, its ladder games) registers it "owner" or "organizers".
DEFAULT_SEATABLE_BY = ANYONE


@dataclass(frozen=True, slots=True)
class BotCaller:
    """Who asks, as far as registered bots go: the bearer ``key`` the request sent (None:
    none) and whether it is an organizer key."""

    key: str | None = None
    organizer: bool = False

    def owns(self, bot: RegisteredBot) -> bool:
        """Whether the request bears this bot's own key."""
        return self.key is not None and hmac.compare_digest(key_hash(self.key), bot.key_sha256)

    def sees_url(self, bot: RegisteredBot) -> bool:
        """Whether the bot's webhook ``url`` is shown to this caller."""
        return self.organizer or self.owns(bot)

    def may_seat(self, bot: RegisteredBot) -> bool:
        """Whether this caller may seat the bot (its ``seatable_by``)."""
        if bot.seatable_by == OWNER:
            return self.owns(bot)
        if bot.seatable_by == ORGANIZERS:
            return self.organizer or self.owns(bot)
        return True


ANONYMOUS = BotCaller()

# ---- the registry -------------------------------------------------------------------------------


def register_bot(app: App, body: Mapping[str, Any]) -> dict[str, Any]:
    """Register a bot (``POST /v1/bots``): its document with its ``key``, shown this once.
    Raises AppError 422 naming each field at fault (``bot/webhook_not_allowed`` for a URL
    outside the allow-list: nothing is ever sent to it)."""
    errors: dict[str, list[str]] = {}
    name = body.get("name")
    if (problem := names.name_error(name)) is not None:
        errors["name"] = [problem]
    wanted = body.get("games")
    if (
        not isinstance(wanted, list)
        or not wanted
        or any(g not in games.names() for g in wanted)
        or len(set(wanted)) != len(wanted)
    ):
        errors["games"] = [f"a list of distinct game names among {', '.join(games.names())}"]
    transport = body.get("transport")
    if transport not in TRANSPORTS:
        errors["transport"] = [f"one of {', '.join(TRANSPORTS)}"]
    budget = body.get("budget_ms", DEFAULT_BUDGET_MS)
    if (
        isinstance(budget, bool)
        or not isinstance(budget, int)
        or not (BUDGET_MS[0] <= budget <= BUDGET_MS[1])
    ):
        errors["budget_ms"] = [f"an integer from {BUDGET_MS[0]} to {BUDGET_MS[1]}"]
    on_failure = body.get("on_failure", "random")
    if on_failure not in ON_FAILURE:
        errors["on_failure"] = [f"one of {', '.join(ON_FAILURE)}"]
    ladder = body.get("ladder", False)
    if not isinstance(ladder, bool):
        errors["ladder"] = ["true or false"]
    seatable_by = body.get("seatable_by", DEFAULT_SEATABLE_BY)
    if seatable_by not in SEATABLE_BY:
        errors["seatable_by"] = [f"one of {', '.join(SEATABLE_BY)}"]
    url = body.get("url")
    if transport == WEBHOOK and not isinstance(url, str):
        errors["url"] = ["a webhook bot needs its url"]
    elif transport == CONNECTED and url is not None:
        errors["url"] = ["a connected bot has no url"]
    if errors:
        raise AppError(
            ErrorCode.REQUEST_INVALID,
            "; ".join(f"{k}: {v[0]}" for k, v in errors.items()),
            errors=errors,
        )
    if transport == WEBHOOK:
        assert isinstance(url, str)
        why = app.ports.webhooks.refusal(url)
        if why is not None:
            raise AppError(ErrorCode.BOT_WEBHOOK_NOT_ALLOWED, f"url: {why}", errors={"url": [why]})
    p = app.ports
    bot_id = secrets.token_hex(8)
    key = bot_key(p.bots.secret(), bot_id)
    bot = RegisteredBot(
        bot_id=bot_id,
        name=str(name),
        games=tuple(wanted),  # type: ignore[arg-type]
        transport=str(transport),
        url=url if transport == WEBHOOK else None,
        budget_ms=int(budget),
        on_failure=str(on_failure),
        key_sha256=key_hash(key),
        created_at=p.clock.now(),
        ladder=ladder,
        seatable_by=str(seatable_by),
    )
    p.bots.add(bot, p.clock.epoch())
    return {**bot_doc(bot, show_url=True), "key": key}


def key_of(app: App, bot_id: str) -> str:
    """The bot's key, derived again (a registration replayed by its ``Idempotency-Key``
    answers it without its response having kept it)."""
    return bot_key(app.ports.bots.secret(), bot_id)


def bot_doc(
    bot: RegisteredBot, stats: Mapping[str, Any] | None = None, *, show_url: bool = False
) -> dict[str, Any]:
    """A bot as ``GET /v1/bots`` shows it (never its key or the key's hash; its webhook
    ``url`` with ``show_url`` alone: ``BotCaller.sees_url``)."""
    doc: dict[str, Any] = {
        "id": bot.bot_id,
        "name": bot.name,
        "games": list(bot.games),
        "transport": bot.transport,
        "budget_ms": bot.budget_ms,
        "on_failure": bot.on_failure,
        "created_at": bot.created_at,
        "retired": bot.retired,
        "ladder": bot.ladder,
        "seatable_by": bot.seatable_by,
    }
    if bot.url is not None and show_url:
        doc["url"] = bot.url
    if stats is not None:
        doc["stats"] = dict(stats)
    return doc


def show_bot(app: App, bot_id: str, caller: BotCaller = ANONYMOUS) -> dict[str, Any]:
    """One bot with its ``stats`` (its ``url`` to its owner or an organizer); AppError 404."""
    bot = app.ports.bots.get(bot_id)
    if bot is None:
        raise AppError(ErrorCode.BOT_NOT_FOUND, f"no bot {bot_id!r}")
    return bot_doc(bot, app.ports.bots.stats(bot_id), show_url=caller.sees_url(bot))


def list_bots(
    app: App, *, offset: int = 0, limit: int = 100, caller: BotCaller = ANONYMOUS
) -> list[dict[str, Any]]:
    """Registered bots, oldest first (each one's ``url`` to its owner or an organizer)."""
    found = (app.ports.bots.get(b) for b in app.ports.bots.list_ids(offset=offset, limit=limit))
    return [bot_doc(b, show_url=caller.sees_url(b)) for b in found if b is not None]


def registered_key(app: App, token: str | None) -> str | None:
    """``token`` when it is a registered bot's key (retired ones' too), else None."""
    if token is None or not token.startswith(KEY_PREFIX):
        return None
    return token if app.ports.bots.by_key(key_hash(token)) is not None else None


def not_seatable(index: int, bot: RegisteredBot, field: str) -> GameError:
    """The refusal of a bot the caller may not seat (403 ``bot/not_seatable``)."""
    who = {OWNER: "a request bearing its own key", ORGANIZERS: "an organizer key or its own key"}
    why = f"bot {bot.bot_id} is seatable by {bot.seatable_by}: it needs {who[bot.seatable_by]}"
    return GameError(ErrorCode.BOT_NOT_SEATABLE, f"seat {index}: {why}", errors={field: why})


def retire_bot(app: App, bot_id: str, key: str | None) -> None:
    """Retire a bot with its own key (``DELETE /v1/bots/{id}``): it takes no new seats, and
    the games it still plays go on with its ``on_failure`` policy. AppError 401/403/404."""
    bot = app.ports.bots.get(bot_id)
    if bot is None:
        raise AppError(ErrorCode.BOT_NOT_FOUND, f"no bot {bot_id!r}")
    if key is None:
        raise AppError(ErrorCode.AUTH_REQUIRED, "retiring a bot needs its key (Bearer)")
    if not hmac.compare_digest(key_hash(key), bot.key_sha256):
        raise AppError(ErrorCode.AUTH_FORBIDDEN, "this key is not this bot's")
    app.ports.bots.retire(bot_id)


def registered_seats(
    app: App,
    game: str,
    seat_specs: Sequence[Mapping[str, Any]],
    caller: BotCaller = ANONYMOUS,
) -> dict[int, Seat]:
    """The seats of the specs ``{"bot_id": ..., "name"?}``, by index. Raises GameError
    ``options/invalid`` naming ``seats[i].bot_id`` for an unknown or retired bot, or one not
    registered for ``game``, and ``bot/not_seatable`` (403) for one whose ``seatable_by``
    the ``caller`` does not meet."""
    seats: dict[int, Seat] = {}
    for i, spec in enumerate(seat_specs):
        if "bot_id" not in spec:
            continue
        bot_id = spec["bot_id"]
        bot = app.ports.bots.get(bot_id) if isinstance(bot_id, str) else None
        field = f"seats[{i}].bot_id"
        if bot is None or bot.retired:
            raise rules.invalid_options(f"seat {i}: no bot {bot_id!r}", **{field: "no such bot"})
        if game not in bot.games:
            why = f"bot {bot_id} is not registered for {game}"
            raise rules.invalid_options(f"seat {i}: {why}", **{field: why})
        if not caller.may_seat(bot):
            raise not_seatable(i, bot, field)
        given = spec.get("name")
        if given is not None and (problem := names.name_error(given)) is not None:
            raise rules.invalid_options(
                f"seat {i} name: {problem}", **{f"seats[{i}].name": problem}
            )
        seats[i] = Seat(name=str(given or bot.name), bot=REGISTERED, bot_spec=seat_spec(bot))
    return seats


def reissue_keys(app: App) -> list[dict[str, Any]]:
    """Every bot's key derived again from the registry's secret as it is now (a rotation's
    new one) and its hash stored in place of the old: ``[{"id", "name", "retired", "key"}]``,
    oldest first, for the operator to hand to each bot's owner (the old keys stop working)."""
    p = app.ports
    secret = p.bots.secret()
    issued = []
    for bot_id in p.bots.list_ids(limit=10**9):
        bot = p.bots.get(bot_id)
        if bot is None:
            continue
        key = bot_key(secret, bot_id)
        p.bots.rekey(bot_id, key_hash(key))
        issued.append({"id": bot_id, "name": bot.name, "retired": bot.retired, "key": key})
    return issued
