"""Fox's commands and events, their JSON, and the shared objects the kernel hands out.

Commands and events keep cards as ints in memory; ``command_to_json``/``event_to_json`` write
them as ``{"suit", "rank"}`` objects, which is what clients and auditors read. Every command
and every per-(seat, card) event is created once at import and shared (they are frozen), so
that ``apply`` and ``legal_commands`` build no object on a play-out's hot path; the trick's
result is a table of shared ``TrickWon`` events, so the trick's last card resolves it at once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from shared.games import base
from shared.games.errors import invalid_command
from shared.games.fox.cards import (
    CARD_COUNT,
    _next_leader,
    _tally_delta,
    _trick_points,
    _trick_winner,
    card_json,
    parse_card,
)

# --- commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Play:
    """Play ``card`` from your hand to the trick."""

    TYPE: ClassVar[str] = "play"
    card: int

    def __post_init__(self) -> None:
        _check_card_int(self.card)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExchangeDecree:
    """After your Fox: put ``card`` from your hand as the decree card, take the old one."""

    TYPE: ClassVar[str] = "exchange_decree"
    card: int

    def __post_init__(self) -> None:
        _check_card_int(self.card)


@dataclass(frozen=True, slots=True, kw_only=True)
class KeepDecree:
    """After your Fox: leave the decree card as it is."""

    TYPE: ClassVar[str] = "keep_decree"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReturnCard:
    """After your Woodcutter's draw: put ``card`` from your hand face down under the deck."""

    TYPE: ClassVar[str] = "return_card"
    card: int

    def __post_init__(self) -> None:
        _check_card_int(self.card)


# --- events ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GameStarted:
    """The game's settings; creates the state."""

    TYPE: ClassVar[str] = "game_started"
    target: int
    first_dealer: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundDealt:
    """A round's deal: ``hands[seat]``, the decree card, the deck (top first). Recorded so that
    replay never needs the seed; ``redact`` hides the other hand and the deck."""

    TYPE: ClassVar[str] = "round_dealt"
    round: int
    dealer: int
    hands: tuple[tuple[int, ...], tuple[int, ...]]
    decree: int
    deck: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CardPlayed:
    """``seat`` put ``card`` on the trick."""

    TYPE: ClassVar[str] = "card_played"
    seat: int
    card: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DecreeExchanged:
    """``seat`` (Fox) made ``card`` the decree card and took ``old`` into the hand."""

    TYPE: ClassVar[str] = "decree_exchanged"
    seat: int
    card: int
    old: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DecreeKept:
    """``seat`` (Fox) left the decree card as it was."""

    TYPE: ClassVar[str] = "decree_kept"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CardDrawn:
    """``seat`` (Woodcutter) drew the top card of the deck (hidden from the other seat)."""

    TYPE: ClassVar[str] = "card_drawn"
    seat: int
    card: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CardReturned:
    """``seat`` (Woodcutter) put ``card`` under the deck (hidden from the other seat)."""

    TYPE: ClassVar[str] = "card_returned"
    seat: int
    card: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TrickWon:
    """``winner`` took the trick and ``points`` (one per Treasure in it); ``next_leader``
    leads the next trick (the winner, unless the loser played a Swan).

    The record of what the rules decided: the kernel takes the trick already with the event
    that completed it (by the same table), so this event's mutator is a no-op (``INERT``).
    """

    TYPE: ClassVar[str] = "trick_won"
    winner: int
    points: int
    next_leader: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundScored:
    """The end of a round: tricks won, their ``points`` by the table, the round's
    ``treasure``, the round ``total`` (points + treasure) and the game ``scores`` after it."""

    TYPE: ClassVar[str] = "round_scored"
    round: int
    tricks: tuple[int, int]
    points: tuple[int, int]
    treasure: tuple[int, int]
    total: tuple[int, int]
    scores: tuple[int, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEnded:
    """Someone reached the target: final scores, winners and ranks (1 = best)."""

    TYPE: ClassVar[str] = "game_ended"
    scores: tuple[int, int]
    winners: tuple[int, ...]
    ranks: tuple[int, int]
    draw: bool


COMMANDS = base.registry(Play, ExchangeDecree, KeepDecree, ReturnCard)
EVENTS = base.registry(
    GameStarted,
    RoundDealt,
    CardPlayed,
    DecreeExchanged,
    DecreeKept,
    CardDrawn,
    CardReturned,
    TrickWon,
    RoundScored,
    GameEnded,
)


def parse_command(data: Mapping[str, Any]) -> Any:
    """A command from client JSON; extra keys (``expected_version``, ``id``) are ignored.

    Raises ``GameError(command/invalid)`` with field errors for an unknown type or a missing
    or malformed ``card``.
    """
    if not isinstance(data, Mapping):
        raise invalid_command("a command is a JSON object", body="must be an object")
    kind = data.get("type")
    if kind == "keep_decree":
        return KEEP_DECREE
    table = _CARD_COMMANDS.get(kind) if isinstance(kind, str) else None
    if table is None:
        raise invalid_command(
            f"unknown command type {kind!r}", type=f"one of {', '.join(sorted(COMMANDS))}"
        )
    if "card" not in data:
        raise invalid_command(f"{kind} needs a card", card="required")
    try:
        card = parse_card(data["card"])
    except ValueError as exc:
        raise invalid_command(f"malformed card: {exc}", card=str(exc)) from None
    return table[card]


def command_to_json(command: Any) -> dict[str, Any]:
    """Flat client JSON ``{"type": ..., "card": {"suit", "rank"}}`` (no card for keep)."""
    if type(command) is KeepDecree:
        return {"type": KeepDecree.TYPE}
    return {"type": command.TYPE, "card": card_json(command.card)}


def event_to_json(event: Any) -> dict[str, Any]:
    """``{"type": ..., "data": {...}}`` with every card as ``{"suit", "rank"}``."""
    data: dict[str, Any] = {}
    for name in _field_names(event.__class__):
        value = getattr(event, name)
        depth = _CARD_FIELDS.get(name, 0)
        if depth == 1:
            value = card_json(value)
        elif depth == 2:
            value = [card_json(c) for c in value]
        elif depth == 3:
            value = [[card_json(c) for c in h] for h in value]
        elif isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        data[name] = value
    return {"type": event.TYPE, "data": data}


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    # dataclasses.fields() builds its tuple anew at every call: a third of this function's
    # time in a tournament's play-outs.
    return tuple(f.name for f in fields(cls))


def event_from_json(doc: Mapping[str, Any]) -> Any:
    """The event ``event_to_json`` wrote. Raises KeyError/TypeError/ValueError if malformed."""
    cls = EVENTS[doc["type"]]
    values: dict[str, Any] = {}
    for name, value in (doc.get("data") or {}).items():
        depth = _CARD_FIELDS.get(name, 0)
        if depth == 1:
            value = parse_card(value)
        elif depth == 2:
            value = tuple(parse_card(c) for c in value)
        elif depth == 3:
            value = tuple(tuple(parse_card(c) for c in h) for h in value)
        elif isinstance(value, list):
            value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
        values[name] = value
    return cls(**values)


def _check_card_int(card: Any) -> None:
    """Commands hold a valid card int, so ``apply`` need not check it on every call."""
    if type(card) is not int or not 0 <= card < CARD_COUNT:
        raise invalid_command("malformed card", card="an int 0..32 (suit * 11 + rank - 1)")


def _type_name(command: Any) -> str:
    return getattr(command, "TYPE", type(command).__name__)


def _trick_table() -> tuple[tuple[tuple[TrickWon, int], ...], ...]:
    """``[leader * 33 + decree][lead * 33 + second]`` -> (the shared TrickWon event, what it
    adds to the state's ``tally``)."""
    cache: dict[tuple[int, int, int], tuple[TrickWon, int]] = {}
    rows: list[tuple[tuple[TrickWon, int], ...]] = []
    for leader in (0, 1):
        by_trump = []
        for trump in range(3):
            row = []
            for lead in range(CARD_COUNT):
                for second in range(CARD_COUNT):
                    follower_wins = _trick_winner(trump, lead, second)
                    winner = 1 - leader if follower_wins else leader
                    nxt = _next_leader(winner, lead, second, follower_wins)
                    points = _trick_points(lead, second)
                    key = (winner, points, nxt)
                    if key not in cache:
                        won = TrickWon(winner=winner, points=points, next_leader=nxt)
                        cache[key] = (won, _tally_delta(winner, points))
                    row.append(cache[key])
            by_trump.append(tuple(row))
        rows.extend(by_trump[decree // 11] for decree in range(CARD_COUNT))
    return tuple(rows)


def _by_suit(commands: Sequence[Any]) -> tuple[tuple[tuple[Any, ...], ...], ...]:
    """``[suit][11-bit mask of ranks]`` -> the commands (one per card) of those cards, by rank."""
    out = []
    for suit in range(3):
        table: list[tuple[Any, ...]] = [()]
        for m in range(1, 2048):
            high = m.bit_length() - 1  # the mask without its highest rank is already built
            table.append(table[m ^ 1 << high] + (commands[suit * 11 + high],))
        out.append(tuple(table))
    return tuple(out)


# Shared command objects (frozen): parse_command and legal_commands hand these out.
KEEP_DECREE = KeepDecree()
PLAY = tuple(Play(card=c) for c in range(CARD_COUNT))
EXCHANGE = tuple(ExchangeDecree(card=c) for c in range(CARD_COUNT))
RETURN = tuple(ReturnCard(card=c) for c in range(CARD_COUNT))
_PLAYS = _by_suit(PLAY)
_PLAYS0, _PLAYS1, _PLAYS2 = _PLAYS
_EXCHANGES = _by_suit(EXCHANGE)
_RETURNS = _by_suit(RETURN)
# For a led card: the Play table of its suit.
_FOLLOW_PLAYS = tuple(_PLAYS[c // 11] for c in range(CARD_COUNT))
_TRICK_RESULT = _trick_table()
_CARD_PLAYED = tuple(tuple(CardPlayed(seat=s, card=c) for c in range(CARD_COUNT)) for s in (0, 1))
_CARD_DRAWN = tuple(tuple(CardDrawn(seat=s, card=c) for c in range(CARD_COUNT)) for s in (0, 1))
_CARD_RETURNED = tuple(
    tuple(CardReturned(seat=s, card=c) for c in range(CARD_COUNT)) for s in (0, 1)
)
_DECREE_KEPT = (DecreeKept(seat=0), DecreeKept(seat=1))
# [seat][new * 33 + old]
_DECREE_EXCHANGED = tuple(
    tuple(
        DecreeExchanged(seat=s, card=new, old=old)
        for new in range(CARD_COUNT)
        for old in range(CARD_COUNT)
    )
    for s in (0, 1)
)
_CARD_COMMANDS: dict[str, tuple[Any, ...]] = {
    Play.TYPE: PLAY,
    ExchangeDecree.TYPE: EXCHANGE,
    ReturnCard.TYPE: RETURN,
}
# Event fields holding cards: 1 = a card, 2 = a list of cards, 3 = a list of lists of cards.
_CARD_FIELDS = {"card": 1, "old": 1, "decree": 1, "deck": 2, "hands": 3}
