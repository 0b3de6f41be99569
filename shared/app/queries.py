"""Queries: every read the entry points make (roles, views, events, command status, games).

Routes and bots read through here, never through a store or a key of their own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from shared import games
from shared.app import bots
from shared.app.context import App
from shared.app.errors import AppError, ErrorCode
from shared.app.messages import key_matches, seat_for_token
from shared.archive.port import GameRow
from shared.archive.rows import result_of
from shared.games.base import Engine
from shared.games.rng import bot_random
from shared.match import fairness
from shared.match.projections import AUDITOR, projection_json, visible_events
from shared.match.projections import view as projected_view
from shared.tournaments.plan import game_id as tournament_game_id

SEAT = "seat"
ORGANIZER = "organizer"
SPECTATOR = "spectator"
AUDITOR_ROLE = AUDITOR


@dataclass(frozen=True, slots=True)
class Caller:
    """The role of the caller for one game, and its seat when it is a player."""

    role: str
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Keys:
    """The organizer and auditor keys this process accepts."""

    organizers: frozenset[str]
    auditors: frozenset[str]

    def is_organizer(self, token: str | None) -> bool:
        """Whether ``token`` is an organizer key."""
        return token is not None and key_matches(self.organizers, token)

    def is_auditor(self, token: str | None) -> bool:
        """Whether ``token`` is an auditor key."""
        return token is not None and key_matches(self.auditors, token)


def game_type(app: App, game_id: str) -> str:
    """The game's type; AppError ``game/not_found``."""
    entry = app.entry(game_id)
    if entry is None:
        raise AppError(ErrorCode.GAME_NOT_FOUND, f"no game {game_id}")
    return entry.game


def caller(
    app: App, game_id: str, token: str | None, keys: Keys, *, refresh: bool = False
) -> Caller:
    """The caller's role in ``game_id``: a seat (its token), an auditor, an organizer, or a
    spectator (no token). A token that is not valid here is ``auth/invalid_token``.
    ``refresh`` reads the roster from the directory whatever the game: a take-over changes the
    roster of a game that is no lobby, and a live feed re-checks its token against it."""
    if token is None:
        return Caller(SPECTATOR)
    if keys.is_auditor(token):
        return Caller(AUDITOR_ROLE)
    entry = app.entry(game_id, refresh=refresh)
    if entry is not None and entry.lobby and not refresh:
        # Players join and leave: a token given up must stop working at once, in every process.
        entry = app.entry(game_id, refresh=True)
    if entry is None:
        raise AppError(ErrorCode.GAME_NOT_FOUND, f"no game {game_id}")
    seat = seat_for_token(entry.token_hashes, token)
    if seat is None and not refresh:  # the roster may have changed since this process read it
        fresh = app.entry(game_id, refresh=True)
        seat = seat_for_token(fresh.token_hashes, token) if fresh else None
    if seat is not None:
        return Caller(SEAT, seat)
    if keys.is_organizer(token):
        return Caller(ORGANIZER)
    raise AppError(ErrorCode.AUTH_INVALID_TOKEN, "this token is not valid for this game")


def view_json(app: App, game_id: str, seat: int | None) -> bytes:
    """The view of ``seat`` (None: the public view); AppError ``game/not_found``."""
    raw = _stored_view(app, game_id, seat)
    if raw is None:
        detail = f"no game {game_id}" if seat is None else f"no seat {seat} in game {game_id}"
        raise AppError(ErrorCode.GAME_NOT_FOUND, detail)
    return raw


def view(app: App, game_id: str, seat: int | None) -> dict[str, Any] | None:
    """The view document (a bot's input), or None when there is none."""
    raw = _stored_view(app, game_id, seat)
    return json.loads(raw) if raw is not None else None


def _stored_view(app: App, game_id: str, seat: int | None) -> bytes | None:
    """The stored view; one that is not stored is folded from the game's log: a seat's view
    of a tournament's game (it stores its public view alone: no one plays its seats, and an
    auditor who asks for one gets it from here), and any view of a game that has moved to
    the archive (``shared.app.archiving``: the same projection of the same final record)."""
    raw = app.ports.read_models.read(game_id, seat)
    if raw is not None:
        return raw
    entry = app.entry(game_id)
    if entry is None or (seat is not None and not 0 <= seat < len(entry.token_hashes)):
        return None
    try:
        record = app.load(game_id, archived=True)
    except LookupError:
        return None
    return projection_json(projected_view(record, seat)).encode()


def events(
    app: App, game_id: str, caller_: Caller, after: int = 0, limit: int | None = None
) -> dict[str, Any]:
    """Events after ``after`` as the caller may read them (everything for auditors; hidden
    facts redacted for seats and spectators, commands too)."""
    engine: Engine = games.get(game_type(app, game_id))
    store = app.ports.store
    version, _ = store.head(game_id)
    # An archived game's pages come from the archive (``read`` after a version asks Redis
    # alone: the hot path of every command).
    read = getattr(store, "read_any", store.read)
    envs = read(game_id, after=after, limit=limit)
    reader: int | str | None = AUDITOR if caller_.role == AUDITOR_ROLE else caller_.seat
    return {"game": game_id, "version": version, "events": visible_events(engine, envs, reader)}


def export_lines(app: App, game_id: str, caller_: Caller) -> list[bytes]:
    """The whole log as JSONL lines (one envelope each, every field): auditors at any time,
    anyone once the game is over (its seed is public then). AppError otherwise."""
    _check_open_log(app, game_id, caller_, "export")
    return [orjson.dumps(env.to_dict()) for env in app.ports.store.read(game_id)]


def audit_report(app: App, game_id: str, caller_: Caller) -> dict[str, Any]:
    """``shared.audit`` of the stored log, as JSON: auditors at any time (a running game is
    re-decided with the secret seed the service holds, which the report never shows), anyone
    once the game is over."""
    from shared.audit import audit

    _check_open_log(app, game_id, caller_, "audit")
    store = app.ports.store
    head, _ = store.head(game_id)
    seed = None
    if caller_.role == AUDITOR_ROLE:
        entry = app.entry(game_id)
        seed = entry.seed if entry is not None else None
    report = audit(game_id, (e.to_dict() for e in store.read(game_id)), seed=seed,
                   head_version=head)  # fmt: skip
    return report.to_doc()


def _check_open_log(app: App, game_id: str, caller_: Caller, what: str) -> None:
    if app.entry(game_id) is None:
        raise AppError(ErrorCode.GAME_NOT_FOUND, f"no game {game_id}")
    if caller_.role == AUDITOR_ROLE:
        return
    record = app.load(game_id, archived=True)
    if record.seed is None:
        raise AppError(
            ErrorCode.AUTH_FORBIDDEN,
            f"the {what} of a running game needs an auditor key (anyone may, once it is over)",
        )


STATUSES = ("waiting", "active", "finished")
LIST_SCAN = 500  # games looked at per page at most, so a rare filter cannot scan everything
# A lobby cursor past the games Redis holds pages on through the archive's: ``a`` and the
# archive's own cursor.
ARCHIVED_CURSOR = "a"


def list_lobby(
    app: App,
    *,
    game: str | None = None,
    status: str | None = None,
    limit: int = 20,
    cursor: str | int | None = 0,
    tournament: str | None = None,
    bot: str | None = None,
) -> dict[str, Any]:
    """``GET /v1/games``: listed games, newest first, with their status (``waiting`` for
    players or client seeds, ``active``, ``finished``), seats (name, bot, open), version and
    creation time; ``next_cursor`` continues the list (None at its end). The games Redis
    holds come first, then the finished games moved to the archive, newest first. A
    tournament's games are not in it: ``tournament`` lists that tournament's games instead, in
    game order (each with its ``tournament`` {id, index}), wherever they are kept; AppError
    ``tournament/not_found``. ``bot``: a registered bot's games, the lobby's it sits in, then
    every finished one archived (its tournament games too: the archive's per-bot index).
    ValueError for a cursor this list did not give."""
    text = "0" if cursor is None else str(cursor)
    if tournament is None and text.startswith(ARCHIVED_CURSOR):
        after = text[len(ARCHIVED_CURSOR) :] or None
        return _list_archived(app, game, status, limit, after, bot)
    if not text.isdigit():
        raise ValueError(f"not a cursor of this list: {text!r}")
    if tournament is not None:
        entry = app.ports.tournaments.get(tournament)
        if entry is None:
            raise AppError(ErrorCode.TOURNAMENT_NOT_FOUND, f"no tournament {tournament}")
        total = int(entry.plan["games"])

        def page(offset: int, size: int) -> list[str]:
            ends = min(total, offset + size)
            return [tournament_game_id(tournament, i) for i in range(offset, ends)]
    else:

        def page(offset: int, size: int) -> list[str]:
            directory = app.ports.directory
            return directory.list_games(offset=offset, limit=size, newest=True, lobby=True)

    items: list[dict[str, Any]] = []
    offset = int(text)
    scanned = 0
    ids: list[str] = ["start"]
    while len(items) < limit and scanned < LIST_SCAN and ids:
        ids = page(offset, limit)
        for gid in ids:
            offset += 1
            scanned += 1
            item = _listed(app, gid, game, status)
            if item is not None and bot is not None and not _seats_bot(item, bot):
                item = None
            if item is not None:
                items.append(item)
                if len(items) >= limit:
                    break
    if page(offset, 1):
        return {"games": items, "next_cursor": str(offset)}
    if tournament is not None or app.ports.archive is None or status not in (None, "finished"):
        return {"games": items, "next_cursor": None}
    # Redis's games are all listed: the archived ones follow.
    if len(items) >= limit:
        return {"games": items, "next_cursor": ARCHIVED_CURSOR}
    more = _list_archived(app, game, status, limit - len(items), None, bot)
    return {"games": items + more["games"], "next_cursor": more["next_cursor"]}


def _seats_bot(item: Mapping[str, Any], bot: str) -> bool:
    return any(s.get("bot_id") == bot for s in item.get("seats") or [])


def _list_archived(
    app: App,
    game: str | None,
    status: str | None,
    limit: int,
    cursor: str | None,
    bot: str | None = None,
) -> dict[str, Any]:
    """A page of the lobby's games that moved to the archive (all finished), newest first; a
    registered ``bot``'s games (every one, tournaments' included) by the per-bot index."""
    archive = app.ports.archive
    if archive is None or status not in (None, "finished"):
        return {"games": [], "next_cursor": None}
    found = archive.list_games(game=game, lobby=bot is None, bot_id=bot, cursor=cursor, limit=limit)
    items = [_archived_item(row) for row in found.items if row.finished]
    after = found.next_cursor
    return {"games": items, "next_cursor": None if after is None else ARCHIVED_CURSOR + after}


def _archived_item(row: GameRow) -> dict[str, Any]:
    """The list's item of an archived game: what ``_listed`` gives from its public view (its
    seats as views show them: ``Seat.public``)."""
    seats = [{"seat": i, **s} for i, s in enumerate(result_of(row)["seats"])]
    item: dict[str, Any] = {
        "id": row.game_id,
        "game": row.game,
        "status": "finished",
        "seats": seats,
        "version": row.version,
        "created_at": row.created_at,
    }
    if row.tournament_id is not None:
        item["tournament"] = {"id": row.tournament_id, "index": row.tournament_index}
    return item


def _listed(app: App, gid: str, game: str | None, status: str | None) -> dict[str, Any] | None:
    """The list's item of game ``gid``, or None when it is unlisted, not created yet (a
    tournament's game to come) or not of the ``game`` and ``status`` asked for."""
    raw = app.ports.read_models.read(gid, None)
    if raw is None:
        return _listed_archived(app, gid, game, status)
    doc = json.loads(raw)
    if doc.get("listed") is False:
        return None
    state = (
        "finished" if doc.get("outcome") is not None
        else "waiting" if doc.get("phase") == "waiting"
        else "active"
    )  # fmt: skip
    if (game and doc.get("game") != game) or (status and state != status):
        return None
    entry = app.entry(gid)
    item = {
        "id": gid,
        "game": doc.get("game"),
        "status": state,
        "seats": doc.get("seats"),
        "version": doc.get("version"),
        "created_at": entry.created_at if entry else None,
    }
    if doc.get("tournament") is not None:
        item["tournament"] = doc["tournament"]
    return item


def _listed_archived(
    app: App, gid: str, game: str | None, status: str | None
) -> dict[str, Any] | None:
    """``_listed`` of a game that moved to the archive (None when it did not)."""
    archive = app.ports.archive
    if archive is None or status not in (None, "finished"):
        return None
    row = archive.game(gid)
    if row is None or not row.listed or (game and row.game != game):
        return None
    return _archived_item(row)


def command_status(
    app: App, game_id: str, command_ids: list[str], caller_: Caller
) -> dict[str, Any] | None:
    """The first stored outcome among ``command_ids`` that the caller may read: its own
    seat's (never another seat's: its rejection could name the card it tried), or any for an
    auditor."""
    for cid in command_ids:
        raw = app.ports.bus.outcome(game_id, cid)
        if raw is None:
            continue
        found: dict[str, Any] = json.loads(raw)
        if caller_.role == AUDITOR_ROLE or found.get("seat") == caller_.seat:
            found.setdefault("command_id", cid)  # a refusal's stored outcome leaves it out
            return found
    return None


def suggestion(app: App, game_id: str, seat: int, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The command the bot of ``spec`` would send now for ``seat``, from that seat's view only,
    with the randomness that seat's own bot would use (``bot_random``: derived from the secret
    seed, so it tells nothing the view does not)."""
    doc, seed = hint_view(app, game_id, seat)
    decision = bots.decide(spec, doc, bot_random(seed, seat, doc["version"]))
    out = {"command": decision.command, "bot": dict(spec), "version": doc["version"]}
    if decision.iterations is not None:
        out["iterations"] = decision.iterations  # a timed search's: the seat's own hint
    return out


def hint_view(app: App, game_id: str, seat: int) -> tuple[dict[str, Any], str]:
    """The seat's view and its bots' seed, for a hint: refused (404, 422
    ``move/not_your_turn``) when there is no game or the seat has nothing to do."""
    doc = view(app, game_id, seat)
    entry = app.entry(game_id)
    if doc is None or entry is None:
        raise AppError(ErrorCode.GAME_NOT_FOUND, f"no game {game_id}")
    if seat not in doc["to_act"] or doc.get("outcome"):
        raise AppError(ErrorCode.MOVE_NOT_YOUR_TURN, "this seat has nothing to do now")
    return doc, fairness.play_seed_of_view(doc, entry.seed)


def wait_reply(app: App, game_id: str, command_id: str, timeout: float) -> bytes | None:
    """The worker's reply to a command, waiting up to ``timeout`` seconds."""
    return app.ports.bus.wait_reply(game_id, command_id, timeout)


def list_games(app: App, *, finished: bool = False, offset: int = 0, limit: int = 100) -> list[str]:
    """Game ids, oldest first (all, or the finished ones)."""
    return app.ports.directory.list_games(finished=finished, offset=offset, limit=limit)


def healthy(app: App) -> bool:
    """Whether the backend answers."""
    return app.ports.ping()
