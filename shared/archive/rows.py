"""A game's index row, built from its envelopes alone (pure): the seats, bots and outcome of
its final record, as ``shared.app.results`` reads them for a result, and what ``game_created``
recorded (options, tournament, rules and policy versions)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.archive.port import LOG_FORMAT, GameRow
from shared.events import GAME_CREATED, RULES_VERSION, Envelope, verify_links
from shared.match.aggregate import Seat
from shared.match.record import GameRecord, fold

# ``game_created``'s key of the bots' policy versions (``shared.app.bots.BOT_POLICIES``).
BOT_POLICIES = "bot_policies"
# A registered bot's seat (``shared.app.bots.REGISTERED``) names its bot in its spec's
# ``bot_id``.
BOT_ID = "bot_id"


def game_row(
    game_id: str, envelopes: Sequence[Envelope], record: GameRecord | None = None
) -> GameRow:
    """The index row of ``game_id`` whose whole log is ``envelopes`` (its versions from 1 and
    links checked: ValueError when broken or empty). ``record``: the log's final record when
    the caller holds it (ValueError unless it is at the log's head), else the log is folded."""
    if not envelopes:
        raise ValueError(f"game {game_id}: an empty log")
    verify_links(envelopes)
    first, last = envelopes[0], envelopes[-1]
    if first.type != GAME_CREATED:
        raise ValueError(f"game {game_id}: the log does not begin with {GAME_CREATED}")
    if record is None:
        record = fold(game_id, envelopes)
    elif (record.version, record.head_hash) != (last.version, last.hash):
        raise ValueError(f"game {game_id}: the record is not at the log's head")
    created = first.data
    tournament = created.get("tournament") or None
    outcome = record.outcome
    seats = tuple(_seat(s) for s in record.match.seats)
    rules = created.get(RULES_VERSION)  # as recorded: a number or a name
    return GameRow(
        game_id=game_id,
        game=record.game,
        options=dict(record.options),
        seats=seats,
        bot_ids=tuple(dict.fromkeys(s[BOT_ID] for s in seats if s[BOT_ID] is not None)),
        tournament_id=None if tournament is None else str(tournament["id"]),
        tournament_index=None if tournament is None else int(tournament["index"]),
        listed=bool(record.match.listed),
        created_at=first.at,
        finished_at=None if outcome is None else last.at,
        outcome=outcome,
        version=last.version,
        head_hash=last.hash,
        store_format=LOG_FORMAT,
        rules_version=rules,
        bot_policies={str(k): int(v) for k, v in (created.get(BOT_POLICIES) or {}).items()},
    )


def _seat(seat: Seat) -> dict[str, Any]:
    spec: Mapping[str, Any] = seat.bot_spec or {}
    bot_id = spec.get(BOT_ID)
    return {
        "name": seat.name,
        "bot": seat.bot,
        "bot_spec": dict(spec) if seat.bot_spec else None,
        "bot_id": None if bot_id is None else str(bot_id),
        "resigned": seat.resigned,
        "taken_over": seat.taken_over,
    }


def result_of(row: GameRow) -> dict[str, Any]:
    """The stored result of an archived game (``shared.app.results.result_doc``), from its row:
    the seats as views show them (``Seat.public``), its outcome and version."""
    seats = [
        Seat(
            name=s["name"],
            bot=s["bot"],
            bot_spec=s["bot_spec"],
            resigned=bool(s["resigned"]),
            taken_over=s["taken_over"],
        ).public()
        for s in row.seats
    ]
    return {"game": row.game, "seats": seats, "outcome": row.outcome, "version": row.version}
