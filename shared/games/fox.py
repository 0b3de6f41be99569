"""The Fox in the Forest ("Liška podšitá"): two players, 33 cards, 13 tricks a round.

Rules (the Czech rule book is the authority): three suits (bells, keys, moons) of ranks 1-11.
Each round the dealer deals 13 cards each; of the 7 left the top one is the face-up decree card,
whose suit is trump, and 6 form the draw deck. The non-dealer leads the first trick, the winner
of a trick leads the next; the follower must follow the led suit if able. The highest trump
wins, else the highest card of the led suit. Odd ranks have effects: 1 Swan (lose it and you
lead next), 3 Fox (swap the decree card with a card from your hand), 5 Woodcutter (draw the top
card of the deck, then put any card from your hand at its bottom), 7 Treasure (the trick's
winner scores 1 per 7), 9 Witch (a lone 9 counts as trump when the winner is decided), 11
Monarch (when led, the follower holding its suit must play the 1 or the highest of it). A round
scores by tricks won (0-3: 6, 4: 1, 5: 2, 6: 3, 7-9: 6, 10-13: 0) plus Treasure. The game ends
after the round in which someone reaches the target; ties go to the better last round, then
it is a draw.

Decisions where the rules are silent: a Fox or Woodcutter always asks its owner (on the 13th
trick the only answers are ``keep_decree`` and returning the card just drawn); an old decree
card taken by a Fox stays publicly known in that hand until played, or until that seat's next
Woodcutter (which may have put it under the deck unseen). A seat that does not follow the led
suit is publicly known to lack that suit (a "void") until it draws with a Woodcutter or the
next deal; a card it takes with a Fox is known anyway and leaves the void in place. Search
bots' ``determinize`` keeps to both.

Representation, chosen for speed (random play-outs for search bots) without giving up purity:

* A card is an int ``suit * 11 + rank - 1`` (0..32, suits in ``SUITS`` order); JSON spells it
  ``{"suit": "keys", "rank": 7}``. A hand, or any set of cards, is an int bitmask (bit ``card``).
* ``State`` is a plain tuple (laid out as ``StateFields``, which names the fields): CPython's
  cheapest immutable record. ``evolve`` builds a new one per event and never mutates. The
  engine reads one field as ``state[_TALLY]`` (an index constant per field, as cheap as a
  literal index) or unpacks them all into named locals. The round's tricks and Treasure are
  packed in one small int (``tally``).
* Every command and every per-(seat, card) event is created once at import and shared (they are
  frozen); trick results are a precomputed table, so the trick's last card resolves it at once.
* Commands and events keep cards as ints in memory; ``command_to_json``/``event_to_json`` write
  them as ``{"suit", "rank"}`` objects, which is what clients and auditors read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, NamedTuple, TypeAlias

from shared.games import base, errors
from shared.games.errors import GameError, illegal, invalid_command, invalid_options
from shared.games.rng import Rng

NAME = "fox"
MIN_SEATS = 2
MAX_SEATS = 2
TRAITS = base.Traits(
    secret_options=("deal",),  # a fixed deal names every card in both hands
    secret_command_fields={"return_card": ("card",)},  # the Woodcutter's card to the deck
)

SUITS = ("bells", "keys", "moons")
RANKS = tuple(range(1, 12))
CARD_COUNT = 33
HAND_SIZE = 13
DECK_SIZE = 6
TRICKS_PER_ROUND = 13
MAX_TARGET = 1000  # each round adds 6+ points between the two: at most ~330 rounds
DEFAULT_TARGET = 21

SWAN, FOX, WOODCUTTER, TREASURE, WITCH, MONARCH = 1, 3, 5, 7, 9, 11

# Round score by tricks won (index = tricks, 0..13).
SCORE_BY_TRICKS = (6, 6, 6, 6, 1, 2, 3, 6, 6, 6, 0, 0, 0, 0)

# Phases (StateFields.phase) and their names in views.
PHASE_PLAY, PHASE_FOX, PHASE_WOODCUTTER, PHASE_OVER = 0, 1, 2, 3
PHASE_NAMES = ("play", "fox_exchange", "woodcutter_return", "game_over")

# StateFields.turn when nobody is to act (between rounds, game over).
NOBODY = 2

ALL_CARDS = (1 << CARD_COUNT) - 1


# --- state -----------------------------------------------------------------------------------


class Game(NamedTuple):
    """What outlives a round: totals and history (changes only when a round ends or starts)."""

    target: int
    first_dealer: int
    dealer: int  # this round's dealer
    round: int  # 1-based; 0 before the first deal
    scores: tuple[int, int]  # totals at the start of this round (its Treasure is in the tally)
    history: tuple[tuple[tuple[int, int], ...], ...]  # per round: (tricks, points, treasure, total)


class StateFields(NamedTuple):
    """The layout of a ``State``, with names: ``state_fields(state)`` reads one this way.

    Cards are ints (``card_code``), sets of cards bitmasks (bit ``card``).
    """

    phase: int  # PHASE_*
    turn: int  # the seat to act, or NOBODY
    hand0: int  # seat 0's hand
    hand1: int  # seat 1's hand
    leader: int  # the seat that leads (or led) this trick
    lead: int  # the card led to this trick, or -1
    second: int  # the follower's card in this trick, or -1
    played: int  # every card put on the table this round
    decree: int  # the decree card, whose suit is trump (-1 before the first deal)
    deck: tuple[int, ...]  # the draw deck, top first
    tally: int  # this round's tricks and Treasure, packed: see pack_tally
    known: tuple[int, int]  # per seat, the cards publicly known to be in that hand
    returned: tuple[int, int]  # per seat, the cards it put under the deck this round
    # What the public events tell of the hands, packed (see "Deductions" below): per seat the
    # suits it lacks (voids), the ranks it holds none at or above (a Monarch answer), and the
    # cards that are in its hand or at one deck slot (known cards put through a Woodcutter).
    voids: int
    last: tuple[int, int, int, int] | None  # the last trick: (leader, lead, second, winner)
    game: Game

    @property
    def tricks(self) -> tuple[int, int]:
        """Tricks won this round, per seat."""
        return (self.tally >> 4 & 15, self.tally >> 8 & 15)

    @property
    def treasure(self) -> tuple[int, int]:
        """Treasure points won this round, per seat (already in ``view``'s scores)."""
        return (self.tally >> 12 & 15, self.tally >> 16 & 15)


# The whole game: a plain tuple laid out as StateFields. A plain tuple, not a NamedTuple or
# another subclass, because CPython builds and unpacks exact tuples several times faster, and
# evolve builds one per event: that alone is about a tenth of a random play-out's time.
State: TypeAlias = tuple

# Each field's index in a State, so that the engine's single-field reads name the field: an
# index constant costs about what a literal does, while a NamedTuple attribute or an accessor
# function would cost several times more on the play-out's hot path. StateFields' order; the
# unpacking fails at import if a field is added without its constant.
(_PHASE, _TURN, _HAND0, _HAND1, _LEADER, _LEAD, _SECOND, _PLAYED, _DECREE, _DECK, _TALLY, _KNOWN,
 _RETURNED, _VOIDS, _LAST, _GAME) = range(len(StateFields._fields))  # fmt: skip


def state_fields(state: State) -> StateFields:
    """``state`` with named fields (for reading; the engine itself indexes and unpacks)."""
    return StateFields._make(state)


def replace_state(state: State, **changes: Any) -> State:
    """A copy of ``state`` with some fields changed; ``tricks``/``treasure`` re-pack the tally."""
    named = StateFields._make(state)
    if "tricks" in changes or "treasure" in changes:
        changes["tally"] = pack_tally(
            changes.pop("tricks", named.tricks), changes.pop("treasure", named.treasure)
        )
    return tuple(named._replace(**changes))


def pack_tally(tricks: Sequence[int], treasure: Sequence[int]) -> int:
    """The state's ``tally`` (see StateFields) for tricks won and Treasure points per seat."""
    return (
        (tricks[0] + tricks[1]) | tricks[0] << 4 | tricks[1] << 8 | treasure[0] << 12
        | treasure[1] << 16
    )  # fmt: skip


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

    The record of what the rules decided: ``evolve`` takes the trick already with the event
    that completed it (by the same table), so this event changes no state.
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


# --- cards -----------------------------------------------------------------------------------


def card_code(suit: str, rank: int) -> int:
    """The int of the card ``rank`` (1..11) of ``suit`` (a name in ``SUITS``)."""
    return SUITS.index(suit) * 11 + rank - 1


def card_json(card: int) -> dict[str, Any]:
    """``{"suit": ..., "rank": ...}`` for a card int."""
    return {"suit": SUITS[card // 11], "rank": card % 11 + 1}


def parse_card(value: Any) -> int:
    """The card int of ``{"suit", "rank"}`` JSON, or of its code (``card_code``: 0..32, as the
    API documents it); raises ValueError naming what is wrong. A code is taken as sent: a
    bool, a float or a string is refused, never converted."""
    if type(value) is int:
        if not 0 <= value < 3 * 11:
            raise ValueError("a card code is an integer 0..32 (suit index * 11 + rank - 1)")
        return value
    if not isinstance(value, Mapping):
        raise ValueError('a card is an object {"suit": ..., "rank": ...} or its code 0..32')
    suit, rank = value.get("suit"), value.get("rank")
    if suit not in SUITS:
        raise ValueError(f"suit must be one of {', '.join(SUITS)}")
    if type(rank) is not int or not 1 <= rank <= 11:
        raise ValueError("rank must be an integer 1..11")
    return SUITS.index(suit) * 11 + rank - 1


def cards_of(mask: int) -> list[int]:
    """The card ints in a bitmask, ascending (suit by suit, rank by rank)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(cards: Sequence[int]) -> int:
    """The bitmask of card ints."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


# --- setup -----------------------------------------------------------------------------------


def parse_options(seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """``{"target", "first_dealer", "deal"}`` validated, with defaults (21, drawn, dealt).

    ``deal`` fixes the first round: ``{"dealer"?, "hands": [[13 cards], [13 cards]], "decree":
    card, "deck": [6 cards, top first]}`` using exactly the 33 cards; its ``dealer`` becomes
    ``first_dealer``. Raises ``GameError(options/invalid)``.
    """
    if seats != 2:
        raise invalid_options("The Fox in the Forest is for exactly 2 players", seats="must be 2")
    if not isinstance(options, Mapping):
        raise invalid_options("options must be an object")
    unknown = sorted(set(options) - {"target", "first_dealer", "deal"})
    if unknown:
        raise invalid_options(
            f"unknown option(s): {', '.join(map(str, unknown))}",
            **{str(k): "unknown option" for k in unknown},
        )
    target = options.get("target", DEFAULT_TARGET)
    if type(target) is not int or not 1 <= target <= MAX_TARGET:
        raise invalid_options(
            f"target must be an integer from 1 to {MAX_TARGET}",
            target=f"integer from 1 to {MAX_TARGET}",
        )
    first_dealer = options.get("first_dealer")
    if first_dealer is not None and (type(first_dealer) is not int or first_dealer not in (0, 1)):
        raise invalid_options("first_dealer must be 0 or 1", first_dealer="0 or 1")
    deal = options.get("deal")
    if deal is not None:
        deal, dealer = _parse_deal(deal)
        if dealer is not None:
            if first_dealer is not None and first_dealer != dealer:
                raise invalid_options(
                    "deal.dealer and first_dealer disagree", first_dealer="must equal deal.dealer"
                )
            first_dealer = dealer
    return {"target": target, "first_dealer": first_dealer, "deal": deal}


def setup(seats: int, options: Mapping[str, Any], rng: Rng) -> list[Any]:
    """``game_started`` and the first ``round_dealt``.

    Draws, in this order: the first dealer (``rng.below(2)``) unless the options fix it, then
    the deal (one ``rng.below(33! / 13!)``, see ``_shuffle``) unless ``deal`` fixes it.
    """
    opts = parse_options(seats, options)
    dealer = opts["first_dealer"]
    if dealer is None:
        dealer = rng.below(2)
    deal = opts["deal"]
    if deal is None:
        first = _deal_event(1, dealer, _shuffle(rng))
    else:
        first = RoundDealt(
            round=1,
            dealer=dealer,
            hands=(_sorted_cards(deal["hands"][0]), _sorted_cards(deal["hands"][1])),
            decree=parse_card(deal["decree"]),
            deck=tuple(parse_card(c) for c in deal["deck"]),
        )
    return [GameStarted(target=opts["target"], first_dealer=dealer), first]


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


# --- decide ----------------------------------------------------------------------------------


def decide(state: State, seat: int, command: Any, rng: Rng) -> list[Any]:
    """The events ``command`` by ``seat`` causes; raises ``GameError`` naming the rule.

    ``rng`` is used only when the command ends a round that the game outlives (the next deal).
    """
    if seat != state[_TURN]:
        raise _not_to_act(state, seat)
    if state[_PHASE]:  # a Fox or Woodcutter waits for its owner
        return _decide_effect(state, seat, command, rng)
    # Playing a card is the hot path of search bots' play-outs: literals, tables, no calls.
    if type(command) is not Play:
        raise _wrong_command(PHASE_PLAY, command)
    card = command.card  # an int 0..32: Play checks it when built
    hand = state[_HAND1] if seat else state[_HAND0]
    if not hand >> card & 1:
        raise illegal("card_not_in_hand", f"{_card_name(card)} is not in your hand")
    lead = state[_LEAD]
    if lead >= 0:
        held = hand & _SUIT_MASK_OF[lead]
        if held:
            if not held >> card & 1:
                raise illegal("follow_suit", f"you must follow {SUITS[lead // 11]}")
            if lead % 11 == 10 and not _monarch_answers(held) >> card & 1:
                raise illegal(
                    "monarch",
                    f"the Monarch was led: play the 1 or your highest {SUITS[lead // 11]}",
                )
    rank0 = card % 11  # rank - 1
    if rank0 == 4:  # Woodcutter: the draw is the deck's top card; the return comes next
        return [_CARD_PLAYED[seat][card], _CARD_DRAWN[seat][state[_DECK][0]]]
    if lead < 0 or rank0 == 2:  # a lead, or a Fox whose owner decides before the trick ends
        return [_CARD_PLAYED[seat][card]]
    won = _TRICK_RESULT[state[_LEADER] * 33 + state[_DECREE]][lead * 33 + card][0]
    if state[_TALLY] & 15 != 12:  # the low 4 bits count the tricks taken: not the 13th yet
        return [_CARD_PLAYED[seat][card], won]
    return _end_round(state, [_CARD_PLAYED[seat][card], won], won, rng)


def _decide_effect(state: State, seat: int, command: Any, rng: Rng) -> list[Any]:
    """The owner's answer to a Fox (exchange or keep) or a Woodcutter (return a card)."""
    phase = state[_PHASE]
    kind = type(command)
    decree = state[_DECREE]
    if phase == PHASE_FOX and kind is KeepDecree:
        events: list[Any] = [_DECREE_KEPT[seat]]
    elif phase == PHASE_FOX and kind is ExchangeDecree:
        new = command.card
        if not (state[_HAND1] if seat else state[_HAND0]) >> new & 1:
            raise illegal("card_not_in_hand", f"{_card_name(new)} is not in your hand")
        events = [_DECREE_EXCHANGED[seat][new * 33 + decree]]
        decree = new  # already trump for this trick
    elif phase == PHASE_WOODCUTTER and kind is ReturnCard:
        card = command.card
        if not (state[_HAND1] if seat else state[_HAND0]) >> card & 1:
            raise illegal("card_not_in_hand", f"{_card_name(card)} is not in your hand")
        events = [_CARD_RETURNED[seat][card]]
    else:
        raise _wrong_command(phase, command)
    second = state[_SECOND]
    if second < 0:  # the effect came with the lead: the follower plays next
        return events
    # The effect came with the trick's second card: the trick is decided now.
    won = _TRICK_RESULT[state[_LEADER] * 33 + decree][state[_LEAD] * 33 + second][0]
    events.append(won)
    if state[_TALLY] & 15 == TRICKS_PER_ROUND - 1:
        return _end_round(state, events, won, rng)
    return events


# --- evolve ----------------------------------------------------------------------------------


def evolve(state: State | None, event: Any) -> State:
    """The state after ``event``; ``evolve(None, GameStarted)`` creates it. Never fails.

    The event that completes a trick (its second ``card_played``, or the Fox or Woodcutter
    decision that came with the second card) also takes the trick, by the same rules table
    that ``decide`` used to write ``trick_won``; ``trick_won`` itself then changes nothing.
    That saves building one state per trick, which is a good share of a play-out's time.
    """
    kind = type(event)
    if kind is not CardPlayed:
        if kind is TrickWon:
            return state  # type: ignore[return-value]  # taken with the trick's last card
        return _EVOLVERS[kind](state, event)
    # fmt: off
    (phase, turn, h0, h1, leader, lead, second, played, decree, deck, tally, known, returned,
     voids, last, game) = state  # type: ignore[misc]
    seat = event.seat
    card = event.card
    bit = 1 << card
    if seat:
        h1 ^= bit
    else:
        h0 ^= bit
    played |= bit
    if known[seat] & bit:
        known = (known[0] & ~bit, known[1] & ~bit)
    if voids >> _UNDER_SHIFT[seat] & bit:  # it was in the hand, not under the deck
        voids = _drop_under(voids, seat, bit)
    phase, turn = _AFTER_PLAY[seat][card]
    if lead < 0:
        return (phase, turn, h0, h1, leader, card, -1, played, decree, deck, tally, known,
                returned, voids, last, game)
    pair = lead * 33 + card
    # A follower off the led suit has none of it; one answering a Monarch with a card of its
    # suit other than the 1 has none higher.
    voids |= _VOID_IF_PLAYED[seat][pair]
    if phase:  # a Fox or Woodcutter as the second card: the trick waits for its owner
        return (phase, turn, h0, h1, leader, lead, card, played, decree, deck, tally, known,
                returned, voids, last, game)
    won, delta = _TRICK_RESULT[leader * 33 + decree][pair]
    nxt = won.next_leader
    return (0, nxt, h0, h1, nxt, -1, -1, played, decree, deck, tally + delta, known, returned,
            voids, (leader, lead, card, won.winner), game)
    # fmt: on


_new_game = tuple.__new__  # Game from a tuple, in C (NamedTuple's own __new__ is Python)

# fmt: off
# Each handler unpacks the state and builds the next one in one go (no field-by-field
# ``replace``, which costs several times more); the field order is StateFields'.


def _on_game_started(state: State | None, e: GameStarted) -> State:
    game = Game(e.target, e.first_dealer, e.first_dealer, 0, (0, 0), ())
    return (PHASE_PLAY, NOBODY, 0, 0, 1 - e.first_dealer, -1, -1, 0, -1, (), 0, (0, 0), (0, 0),
            0, None, game)


def _on_round_dealt(s: State, e: RoundDealt) -> State:
    target, first_dealer, _, _, scores, history = s[_GAME]
    game = _new_game(Game, (target, first_dealer, e.dealer, e.round, scores, history))
    first = 1 - e.dealer  # the non-dealer leads the first trick
    return (PHASE_PLAY, first, _mask(e.hands[0]), _mask(e.hands[1]), first, -1, -1, 0, e.decree,
            tuple(e.deck), 0, (0, 0), (0, 0), 0, None, game)


def _on_decree_exchanged(s: State, e: DecreeExchanged) -> State:
    (_, _, h0, h1, leader, lead, second, played, _, deck, tally, known, returned, voids, last,
     game) = s
    seat, new, old = e.seat, e.card, e.old
    swap = (1 << new) | (1 << old)
    # The old decree card is now publicly known to be in this hand. The seat's voids stay: the
    # hand holds no other card of those suits than its known cards.
    if seat:
        h1 ^= swap
        known = (known[0], known[1] & ~(1 << new) | 1 << old)
    else:
        h0 ^= swap
        known = (known[0] & ~(1 << new) | 1 << old, known[1])
    if voids >> _UNDER_SHIFT[seat] & 1 << new:  # it was in the hand, not under the deck
        voids = _drop_under(voids, seat, 1 << new)
    if second < 0:
        return (PHASE_PLAY, 1 - seat, h0, h1, leader, lead, second, played, new, deck, tally,
                known, returned, voids, last, game)
    return _take_trick(h0, h1, leader, lead, second, played, new, deck, tally, known, returned,
                       voids, game)


def _on_decree_kept(s: State, e: DecreeKept) -> State:
    (_, _, h0, h1, leader, lead, second, played, decree, deck, tally, known, returned, voids,
     last, game) = s
    if second < 0:
        return (PHASE_PLAY, 1 - e.seat, h0, h1, leader, lead, second, played, decree, deck, tally,
                known, returned, voids, last, game)
    return _take_trick(h0, h1, leader, lead, second, played, decree, deck, tally, known,
                       returned, voids, game)


def _on_card_drawn(s: State, e: CardDrawn) -> State:
    (phase, turn, h0, h1, leader, lead, second, played, decree, deck, tally, known, returned,
     voids, last, game) = s
    if e.seat:
        h1 |= 1 << e.card
    else:
        h0 |= 1 << e.card
    # The drawn card is hidden from the other seat: it may be of a suit this seat lacked, or
    # higher than a Monarch answer showed. A deck slot known to hold a card of a "hand or
    # deck" set moves up one; drawn, it ends that set (the drawer took the card, unseen).
    voids &= _KEEP_VOIDS_OF_OTHER[e.seat]
    if voids >> _UNDER_SHIFT[0]:
        voids = _under_drawn(voids)
    return (phase, turn, h0, h1, leader, lead, second, played, decree, deck[1:], tally, known,
            returned, voids, last, game)


def _on_card_returned(s: State, e: CardReturned) -> State:
    (_, _, h0, h1, leader, lead, second, played, decree, deck, tally, known, returned, voids,
     last, game) = s
    seat, card = e.seat, e.card
    bit = 1 << card
    # The other seat cannot see which card went under the deck, so a card it knew to be in
    # this hand may be at the deck's bottom now: this hand's known cards become a "hand or
    # deck" set (all in the hand but at most one, which is in that slot).
    voids = _set_under(voids, seat, known[seat], len(deck))
    if seat:
        h1 ^= bit
        known = (known[0], 0)
        returned = (returned[0], returned[1] | bit)
    else:
        h0 ^= bit
        known = (0, known[1])
        returned = (returned[0] | bit, returned[1])
    deck += (card,)
    if second < 0:
        return (PHASE_PLAY, 1 - seat, h0, h1, leader, lead, second, played, decree, deck, tally,
                known, returned, voids, last, game)
    return _take_trick(h0, h1, leader, lead, second, played, decree, deck, tally, known,
                       returned, voids, game)


def _on_round_scored(s: State, e: RoundScored) -> State:
    (phase, _, h0, h1, leader, lead, second, played, decree, deck, tally, known, returned,
     voids, last, game) = s
    target, first_dealer, dealer, round_, _, history = game
    history += ((e.tricks, e.points, e.treasure, e.total),)
    game = _new_game(Game, (target, first_dealer, dealer, round_, e.scores, history))
    # The round's Treasure is in the new totals now; its tricks stay visible until the deal.
    tally &= 0xFFF
    return (phase, NOBODY, h0, h1, leader, lead, second, played, decree, deck, tally, known,
            returned, voids, last, game)


def _on_game_ended(s: State, e: GameEnded) -> State:
    return (PHASE_OVER, NOBODY, *s[_HAND0:])  # every field after phase and turn unchanged


def _take_trick(h0: int, h1: int, leader: int, lead: int, second: int, played: int,
                decree: int, deck: tuple[int, ...], tally: int, known: tuple[int, int],
                returned: tuple[int, int], voids: int, game: Game) -> State:
    """The state after the trick (lead, second) is decided, as ``trick_won`` tells."""
    won, delta = _TRICK_RESULT[leader * 33 + decree][lead * 33 + second]
    nxt = won.next_leader
    return (PHASE_PLAY, nxt, h0, h1, nxt, -1, -1, played, decree, deck, tally + delta, known,
            returned, voids, (leader, lead, second, won.winner), game)


# fmt: on


# --- deductions (StateFields.voids) ------------------------------------------------------------
# One int holds what the public events tell of the hands, so that the hot path of a play-out
# carries one small int (zero above bit 5 in most states) rather than three more fields:
#   bits 0-5     voids: bit 3 * seat + suit (see _VOID_IF_PLAYED)
#   bits 8-31    rank caps: 4 bits at 8 + 4 * (3 * seat + suit) hold r (2..11) when the seat
#                answered a led Monarch of that suit with its rank r (not the 1): besides its
#                known cards it holds none of that suit ranked r or higher (0: nothing known)
#   bits 32-71   seat 0's "hand or deck" set: 33 card bits, then at bit 65 a 4-bit deck index
#   bits 72-111  seat 1's, the same way
# A "hand or deck" set: cards that were publicly known to be in the hand when that seat's
# Woodcutter put one card under the deck; all are still in the hand but at most one, which is
# then the card at that deck index (top first). Cleared by the next deal like the rest.
_CAP_SHIFT = 8
_UNDER_SHIFT = (32, 72)
_UNDER_CARDS = ALL_CARDS
_SLOT_BITS = 33
_UNDER_FIELD = (1 << 40) - 1


def _cap_shift(seat: int, suit: int) -> int:
    return _CAP_SHIFT + 4 * (3 * seat + suit)


def _drop_under(voids: int, seat: int, bit: int) -> int:
    """``voids`` with ``bit`` out of ``seat``'s "hand or deck" set (cleared when empty)."""
    shift = _UNDER_SHIFT[seat]
    field = voids >> shift & _UNDER_FIELD
    field &= ~bit
    if not field & _UNDER_CARDS:
        field = 0
    return voids & ~(_UNDER_FIELD << shift) | field << shift


def _set_under(voids: int, seat: int, cards: int, slot: int) -> int:
    """``voids`` with ``seat``'s "hand or deck" set replaced by ``cards`` at deck index
    ``slot`` (none if ``cards`` is empty: an older set is forgotten, which stays true)."""
    shift = _UNDER_SHIFT[seat]
    field = cards | slot << _SLOT_BITS if cards else 0
    return voids & ~(_UNDER_FIELD << shift) | field << shift


def _under_drawn(voids: int) -> int:
    """``voids`` after the deck's top card is drawn: each set's slot moves up one, and a set
    whose slot was the top ends."""
    for shift in _UNDER_SHIFT:
        field = voids >> shift & _UNDER_FIELD
        if field:
            slot = field >> _SLOT_BITS
            field = 0 if slot == 0 else (field & _UNDER_CARDS) | (slot - 1) << _SLOT_BITS
            voids = voids & ~(_UNDER_FIELD << shift) | field << shift
    return voids


def _under_of(voids: int, seat: int) -> tuple[int, int]:
    """``seat``'s "hand or deck" set: (cards, deck index), cards 0 when there is none."""
    field = voids >> _UNDER_SHIFT[seat] & _UNDER_FIELD
    return field & _UNDER_CARDS, field >> _SLOT_BITS


def _caps_of(voids: int, seat: int) -> dict[str, int]:
    """``seat``'s rank caps by suit name (see above)."""
    out = {}
    for suit, name in enumerate(SUITS):
        cap = voids >> _cap_shift(seat, suit) & 15
        if cap:
            out[name] = cap
    return out


def _lacking(voids: int, seat: int) -> int:
    """Every card that ``seat``'s hand cannot hold besides its known cards (voids and caps)."""
    mask = _SUITS_MASK[voids >> 3 * seat & 7]
    for suit in range(3):
        cap = voids >> _cap_shift(seat, suit) & 15
        if cap:
            mask |= (0x7FF >> (cap - 1) << (cap - 1)) << 11 * suit
    return mask


# --- view ------------------------------------------------------------------------------------


def view(state: State, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may know, JSON-ready; cards as ``{"suit", "rank"}``.

    Public: phase, to_act, hand sizes, decree and trump, the trick, the last trick, tricks won,
    scores (with this round's Treasure) and their history, the cards played this round, the
    cards publicly known to be in each hand (``known_cards``: old decree cards taken by a Fox)
    and per seat the suits it is known to lack (``voids``, suit names in ``SUITS`` order: it
    did not follow that suit this round and has drawn no card since; besides its
    ``known_cards`` the hand holds no card of them), the ranks it is known to hold none at or
    above (``ranks_below``, suit name -> rank: it answered a led Monarch with that rank and
    has drawn no card since) and its "hand or deck" set (``hand_or_deck``: null, or
    ``{"cards", "deck_index"}``: cards known to be in the hand when its Woodcutter put a card
    under the deck; all are in the hand but at most one, which is then the deck's card at
    ``deck_index``, top first).
    Private to ``seat``: ``hand``, ``opponent_known_cards``, ``deck_known`` (the deck, top
    first: the cards this seat put under it, None for the others) and ``legal_commands``.
    """
    (phase, turn, h0, h1, leader, lead, second, played, decree, deck, tally, known, returned,
     voids, last, game) = state  # fmt: skip
    trick = []
    if lead >= 0:
        trick.append({"seat": leader, "card": card_json(lead)})
    if second >= 0:
        trick.append({"seat": 1 - leader, "card": card_json(second)})
    last_trick = None
    if last is not None:
        last_leader, last_lead, last_second, last_winner = last
        cards = [
            {"seat": last_leader, "card": card_json(last_lead)},
            {"seat": 1 - last_leader, "card": card_json(last_second)},
        ]
        last_trick = {"cards": cards, "winner": last_winner}
    treasure = (tally >> 12 & 15, tally >> 16 & 15)
    own = seat == 0 or seat == 1
    out: dict[str, Any] = {
        "phase": PHASE_NAMES[phase],
        "seat": seat if own else None,
        "to_act": list(_TO_ACT[turn]),
        "hand": _cards_json(h1 if seat else h0) if own else None,
        "hand_sizes": [h0.bit_count(), h1.bit_count()],
        "decree": card_json(decree) if decree >= 0 else None,
        "trump": SUITS[decree // 11] if decree >= 0 else None,
        "trick": trick,
        "leader": leader,
        "last_trick": last_trick,
        "dealer": game.dealer,
        "first_dealer": game.first_dealer,
        "round": game.round,
        "target": game.target,
        "tricks_won": [tally >> 4 & 15, tally >> 8 & 15],
        "treasure": list(treasure),
        "scores": [game.scores[0] + treasure[0], game.scores[1] + treasure[1]],
        "round_scores": [
            {
                "round": i + 1,
                "tricks": list(t),
                "points": list(p),
                "treasure": list(tr),
                "total": list(tot),
            }
            for i, (t, p, tr, tot) in enumerate(game.history)
        ],
        "deck_size": len(deck),
        "played": _cards_json(played),
        "known_cards": [_cards_json(known[0]), _cards_json(known[1])],
        "voids": [list(_VOID_SUITS[voids & 7]), list(_VOID_SUITS[voids >> 3 & 7])],
        "ranks_below": [_caps_of(voids, 0), _caps_of(voids, 1)],
        "hand_or_deck": [_under_json(voids, 0), _under_json(voids, 1)],
        "opponent_known_cards": None,
        "deck_known": None,
        "legal_commands": [],
        "outcome": outcome(state),
    }
    if own and seat is not None:
        mine = returned[seat]
        out["opponent_known_cards"] = _cards_json(known[1 - seat])
        out["deck_known"] = [card_json(c) if mine >> c & 1 else None for c in deck]
        out["legal_commands"] = [command_to_json(c) for c in legal_commands(state, seat)]
    return out


# --- legal_commands --------------------------------------------------------------------------


def legal_commands(state: State, seat: int) -> list[Any]:
    """Every command ``seat`` may send now; empty when it is not theirs to act."""
    if seat != state[_TURN]:
        return []
    hand = state[_HAND1] if seat else state[_HAND0]
    phase = state[_PHASE]
    # Tables by suit: [suit][the suit's 11 bits of the hand] -> that suit's commands.
    if not phase:
        lead = state[_LEAD]
        if lead >= 0:
            held = hand >> _FOLLOW_SHIFT[lead] & 0x7FF
            if held:
                if lead % 11 == 10:  # Monarch led: the 1 or the highest of the suit
                    held = (held & 1) | (1 << (held.bit_length() - 1))
                return list(_FOLLOW_PLAYS[lead][held])
        return [*_PLAYS0[hand & 0x7FF], *_PLAYS1[hand >> 11 & 0x7FF], *_PLAYS2[hand >> 22]]
    if phase == PHASE_FOX:
        e0, e1, e2 = _EXCHANGES
        return [KEEP_DECREE, *e0[hand & 0x7FF], *e1[hand >> 11 & 0x7FF], *e2[hand >> 22]]
    r0, r1, r2 = _RETURNS
    return [*r0[hand & 0x7FF], *r1[hand >> 11 & 0x7FF], *r2[hand >> 22]]


def to_act(state: State) -> tuple[int, ...]:
    """The seat that must send a command now (empty between rounds and after the game)."""
    return _TO_ACT[state[_TURN]]


# --- outcome ---------------------------------------------------------------------------------


def outcome(state: State) -> dict[str, Any] | None:
    """None while the game runs; then scores, winners, ranks and whether it is a draw.

    Most points wins; a tie goes to more points in the last round; still tied, both win.
    """
    if state[_PHASE] != PHASE_OVER:
        return None
    game = state[_GAME]
    scores = list(game.scores)
    last = [0, 0]
    if game.history:
        _, _, _, last_total = game.history[-1]
        last = list(last_total)
    ranks = base.ranks_from_scores(scores, last)
    winners = [s for s in (0, 1) if ranks[s] == 1]
    return {"scores": scores, "winners": winners, "ranks": ranks, "draw": len(winners) == 2}


# --- redact, determinize, JSON ---------------------------------------------------------------


def redact(event: Any, seat: int | None) -> dict[str, Any] | None:
    """``event`` as JSON that ``seat`` (None: a spectator) may see.

    The deal shows only the seat's own hand (``null`` for the other, and for both to a
    spectator) and no deck order; a Woodcutter's drawn and returned card show as ``null`` to
    everyone but the Woodcutter's owner. Nothing is hidden entirely.
    """
    doc = event_to_json(event)
    kind = type(event)
    if kind is RoundDealt:
        data = doc["data"]
        data["hands"] = [h if s == seat else None for s, h in enumerate(data["hands"])]
        data["deck"] = None
        data["deck_size"] = len(event.deck)
    elif (kind is CardDrawn or kind is CardReturned) and event.seat != seat:
        doc["data"]["card"] = None
    return doc


def determinize(view: Mapping[str, Any], seat: int, rng: Rng) -> State:
    """A full state that ``seat``, seeing ``view``, cannot tell from the real one.

    The cards it cannot place (33 minus its hand, the decree, the played cards, its own cards
    under the deck and the opponent's publicly known cards) are shuffled with ``rng``. The
    opponent's hand gets, besides its known cards, the first ones it has room for among those it
    is not known to lack (``voids``, and ``ranks_below`` from a Monarch answer); the deck slots
    this seat does not know get the rest, shuffled again if a deduction held some back (so that
    every deal consistent with the view is equally likely).
    The opponent's "hand or deck" set (``hand_or_deck``) goes to its hand, but for at most one
    card which takes the set's deck slot: the one its deductions keep out of the hand if there
    is one, else each card with probability ``1 / (h + 1)`` (``h`` the hand's unknown cards), as
    often as among all the deals consistent with the view.
    Raises ValueError if the view does not account for the 33 cards or its deductions cannot
    hold.
    """
    return determinizer(view, seat)(rng)


def determinizer(view: Mapping[str, Any], seat: int) -> Callable[[Rng], State]:
    """``determinize`` in two steps, for searches that deal many states from one view: the
    view is read and checked once (ValueError here), and each call of the answer deals one
    state with the draws ``determinize`` makes, in the same order."""
    other = 1 - seat
    own = mask_of([parse_card(c) for c in view["hand"]])
    decree = parse_card(view["decree"]) if view.get("decree") is not None else -1
    played = mask_of([parse_card(c) for c in view["played"]])
    known = tuple(mask_of([parse_card(c) for c in k]) for k in view["known_cards"])
    slots = [None if c is None else parse_card(c) for c in view["deck_known"]]
    own_returns = mask_of([c for c in slots if c is not None])
    # The deductions as the state holds them (StateFields.voids).
    voids = 0
    for who, names in enumerate(view.get("voids") or ((), ())):
        for name in names:
            voids |= 1 << (3 * who + SUITS.index(name))
    for who, caps in enumerate(view.get("ranks_below") or ({}, {})):
        for name, rank in caps.items():
            voids |= int(rank) << _cap_shift(who, SUITS.index(name))
    unders = [(0, 0), (0, 0)]
    for who, under in enumerate(view.get("hand_or_deck") or (None, None)):
        if under:
            cards = mask_of([parse_card(c) for c in under["cards"]])
            slot = int(under["deck_index"])
            if not 0 <= slot < len(slots):
                raise ValueError("a hand_or_deck slot outside the deck")
            unders[who] = (cards, slot)
            voids = _set_under(voids, who, cards, slot)
    lacking = [_lacking(voids, 0), _lacking(voids, 1)]
    if own & ~known[seat] & lacking[seat]:
        raise ValueError("the view's hand holds a card its deductions rule out")
    maybe, maybe_slot = unders[other]
    placed = own | played | own_returns | known[other] | maybe
    placed |= 1 << decree if decree >= 0 else 0
    if decree < 0:  # before the first deal there are no cards to place
        placed = ALL_CARDS
    hand_size = view["hand_sizes"][other]
    forced = 0
    if maybe:
        if maybe & placed & ~maybe or slots[maybe_slot] is not None:
            raise ValueError("the hand_or_deck set overlaps placed cards")
        forced = maybe & lacking[other]
        if forced.bit_count() > 1:
            raise ValueError("more than one hand_or_deck card cannot be in the hand")
    free = ALL_CARDS & ~placed
    banned = free & lacking[other]
    free_cards = cards_of(free & ~banned)
    banned_cards = cards_of(banned)
    maybe_cards = cards_of(maybe)
    trick = view["trick"]
    lead = parse_card(trick[0]["card"]) if trick else -1
    second = parse_card(trick[1]["card"]) if len(trick) > 1 else -1
    last = view["last_trick"]
    last_tuple = None
    if last is not None:
        first, follow = last["cards"]
        last_tuple = (first["seat"], parse_card(first["card"]), parse_card(follow["card"]),
                      last["winner"])  # fmt: skip
    treasure = view["treasure"]
    history = tuple(
        (tuple(r["tricks"]), tuple(r["points"]), tuple(r["treasure"]), tuple(r["total"]))
        for r in view["round_scores"]
    )
    scores = (view["scores"][0] - treasure[0], view["scores"][1] - treasure[1])
    game = Game(view["target"], view["first_dealer"], view["dealer"], view["round"], scores,
                history)  # fmt: skip
    returned = [0, 0]
    returned[seat] = own_returns
    acting = view["to_act"]
    phase = PHASE_NAMES.index(view["phase"])
    turn = acting[0] if acting else NOBODY
    tally = pack_tally(view["tricks_won"], treasure)
    leader = view["leader"]
    known_pair = (known[0], known[1])
    returned_pair = (returned[0], returned[1])
    unknown_slots = slots.count(None)

    def deal(rng: Rng) -> State:
        opponent = known[other]
        deck_slots = slots
        if maybe:
            under = forced
            if not forced:
                pick = rng.below(hand_size - opponent.bit_count() + 1)
                if pick < len(maybe_cards):
                    under = 1 << maybe_cards[pick]
            if under:
                deck_slots = list(slots)
                deck_slots[maybe_slot] = under.bit_length() - 1
            opponent |= maybe & ~under
        pool = rng.shuffle(free_cards)
        need = hand_size - opponent.bit_count()
        open_slots = unknown_slots - (deck_slots is not slots)
        if need < 0 or len(pool) + len(banned_cards) != need + open_slots:
            raise ValueError("the view does not account for the 33 cards")
        if len(pool) < need:
            raise ValueError("the opponent's deductions leave too few cards for its hand")
        opponent |= mask_of(pool[:need])
        left = pool[need:]
        if banned_cards:
            left = rng.shuffle([*left, *banned_cards])
        rest = iter(left)
        deck = tuple(next(rest) if c is None else c for c in deck_slots)
        h0, h1 = (own, opponent) if seat == 0 else (opponent, own)
        return (phase, turn, h0, h1, leader, lead, second, played, decree, deck,
                tally, known_pair, returned_pair, voids, last_tuple, game)  # fmt: skip

    return deal


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


# --- private helpers -------------------------------------------------------------------------


def _end_round(state: State, events: list[Any], won: TrickWon, rng: Rng) -> list[Any]:
    """``events`` (ending with the 13th trick's ``won``) plus ``round_scored`` and the next
    deal, or ``game_ended``."""
    tally = state[_TALLY] + _tally_delta(won.winner, won.points)
    tricks = (tally >> 4 & 15, tally >> 8 & 15)
    treasure = (tally >> 12 & 15, tally >> 16 & 15)
    points = (SCORE_BY_TRICKS[tricks[0]], SCORE_BY_TRICKS[tricks[1]])
    total = (points[0] + treasure[0], points[1] + treasure[1])
    game = state[_GAME]
    scores = (game.scores[0] + total[0], game.scores[1] + total[1])
    events.append(
        RoundScored(
            round=game.round,
            tricks=tricks,
            points=points,
            treasure=treasure,
            total=total,
            scores=scores,
        )
    )
    if max(scores) >= game.target:
        ranks = base.ranks_from_scores(scores, total)
        winners = tuple(s for s in (0, 1) if ranks[s] == 1)
        events.append(
            GameEnded(
                scores=scores, winners=winners, ranks=(ranks[0], ranks[1]), draw=len(winners) == 2
            )
        )
    else:
        events.append(_deal_event(game.round + 1, 1 - game.dealer, _shuffle(rng)))
    return events


def _shuffle(rng: Rng) -> list[int]:
    """Cards 0..32 arranged for a deal (see ``_deal_event``) from ONE draw of ``rng``.

    ``k = rng.below(33! / 13!)``, then a partial Fisher-Yates shuffle from the end that takes
    its indices from ``k``: for ``i`` from 32 down to 13, ``k, j = divmod(k, i + 1)`` and swap
    positions ``i`` and ``j`` (starting from cards 0..32 in order). Positions 13..32 are then a
    uniformly random arrangement of 20 of the cards, and positions 0..12 the other 13, a hand,
    whose order does not matter. One HMAC block instead of ``rng.shuffle``'s 32.
    """
    k = rng.below(_DEAL_CHOICES)
    out = list(range(CARD_COUNT))
    # The same digits as dividing k by 33, 32, ... in turn, but on small ints: take a group's
    # worth of digits (a product below 2**30) off k, then split that.
    for radices, product in _RADIX_GROUPS:
        chunk = k % product
        k //= product
        for r in radices:
            j = chunk % r
            chunk //= r
            i = r - 1
            out[i], out[j] = out[j], out[i]
    return out


def _deal_event(round_: int, dealer: int, shuffled: Sequence[int]) -> RoundDealt:
    """The deal from a shuffled 0..32: seat 0 gets positions 0-12, seat 1 positions 13-25,
    position 26 is the decree card, 27-32 the deck (top first)."""
    return RoundDealt(
        round=round_,
        dealer=dealer,
        hands=(tuple(sorted(shuffled[:13])), tuple(sorted(shuffled[13:26]))),
        decree=shuffled[26],
        deck=tuple(shuffled[27:]),
    )


def _parse_deal(deal: Any) -> tuple[dict[str, Any], int | None]:
    """The ``deal`` option normalized (cards as JSON) and its dealer, or invalid_options."""
    if not isinstance(deal, Mapping):
        raise invalid_options("deal must be an object", deal="object")
    unknown = sorted(set(deal) - {"dealer", "hands", "decree", "deck"})
    if unknown:
        raise invalid_options(
            f"unknown deal key(s): {', '.join(map(str, unknown))}", deal=f"unknown keys {unknown}"
        )
    dealer = deal.get("dealer")
    if dealer is not None and (type(dealer) is not int or dealer not in (0, 1)):
        raise invalid_options("deal.dealer must be 0 or 1", deal="dealer must be 0 or 1")
    hands, decree, deck = deal.get("hands"), deal.get("decree"), deal.get("deck")
    if (
        not isinstance(hands, Sequence)
        or isinstance(hands, str)
        or len(hands) != 2
        or any(not isinstance(h, Sequence) or isinstance(h, str) or len(h) != 13 for h in hands)
    ):
        raise invalid_options(
            "deal.hands must be two lists of 13 cards", deal="hands: two lists of 13 cards"
        )
    if not isinstance(deck, Sequence) or isinstance(deck, str) or len(deck) != DECK_SIZE:
        raise invalid_options("deal.deck must be a list of 6 cards", deal="deck: 6 cards")
    try:
        h0 = [parse_card(c) for c in hands[0]]
        h1 = [parse_card(c) for c in hands[1]]
        dc = parse_card(decree)
        dk = [parse_card(c) for c in deck]
    except ValueError as exc:
        raise invalid_options(f"deal: {exc}", deal=str(exc)) from None
    if len(set(h0 + h1 + [dc] + dk)) != CARD_COUNT:
        raise invalid_options(
            "deal must use each of the 33 cards exactly once", deal="33 distinct cards"
        )
    normalized = {
        "hands": [[card_json(c) for c in h0], [card_json(c) for c in h1]],
        "decree": card_json(dc),
        "deck": [card_json(c) for c in dk],
    }
    return normalized, dealer


def _check_card_int(card: Any) -> None:
    """Commands hold a valid card int, so ``decide`` need not check it on every call."""
    if type(card) is not int or not 0 <= card < CARD_COUNT:
        raise invalid_command("malformed card", card="an int 0..32 (suit * 11 + rank - 1)")


def _not_to_act(state: State, seat: int) -> GameError:
    if state[_PHASE] == PHASE_OVER:
        return GameError(errors.GAME_OVER, "the game is over")
    return GameError(errors.NOT_YOUR_TURN, f"it is not seat {seat!r}'s turn")


def _wrong_command(phase: int, command: Any) -> GameError:
    if type(command) not in COMMANDS.values():
        return invalid_command(f"not a {NAME} command: {command!r}", type="a fox command")
    name = _type_name(command)
    if phase == PHASE_FOX:
        return illegal(
            "pending_fox_decision",
            f"{name}: your Fox is waiting for exchange_decree or keep_decree",
        )
    if phase == PHASE_WOODCUTTER:
        return illegal(
            "pending_woodcutter_return", f"{name}: your Woodcutter is waiting for return_card"
        )
    return illegal("wrong_phase", f"{name} is not possible now: play a card")


def _monarch_answers(held: int) -> int:
    """Of ``held`` (cards of the Monarch's suit), the 1 and the highest."""
    return (held & -held & _ONES) | (1 << (held.bit_length() - 1))


def _sorted_cards(cards: Sequence[Any]) -> tuple[int, ...]:
    return tuple(sorted(parse_card(c) for c in cards))


def _mask(cards: Sequence[int]) -> int:
    """``mask_of`` for a deal's hands, looped in C (the cards are distinct)."""
    return sum(map(_BITS.__getitem__, cards))


def _under_json(voids: int, seat: int) -> dict[str, Any] | None:
    """``seat``'s "hand or deck" set for views: its cards and the deck index (top first)."""
    cards, slot = _under_of(voids, seat)
    if not cards:
        return None
    return {"cards": _cards_json(cards), "deck_index": slot}


def _cards_json(mask: int) -> list[dict[str, Any]]:
    return [card_json(c) for c in cards_of(mask)]


def _card_name(card: int) -> str:
    return f"{card % 11 + 1} of {SUITS[card // 11]}"


def _type_name(command: Any) -> str:
    return getattr(command, "TYPE", type(command).__name__)


def _trick_winner(trump: int, lead: int, second: int) -> int:
    """0 if the leader's card wins, 1 if the follower's (rules, not speed: builds the table)."""
    lead_suit, lead_rank = divmod(lead, 11)
    second_suit, second_rank = divmod(second, 11)
    lone_witch = (lead_rank == WITCH - 1) != (second_rank == WITCH - 1)
    # A lone Witch counts as trump; two 9s cancel and are plain cards.
    lead_trump = lead_suit == trump or (lone_witch and lead_rank == WITCH - 1)
    second_trump = second_suit == trump or (lone_witch and second_rank == WITCH - 1)
    if lead_trump or second_trump:
        if lead_trump and second_trump:
            return 1 if second_rank > lead_rank else 0
        return 1 if second_trump else 0
    return 1 if second_suit == lead_suit and second_rank > lead_rank else 0


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
                    loser_card = lead if follower_wins else second
                    # A Swan's owner who loses the trick leads the next one (also with 2 Swans).
                    nxt = 1 - winner if loser_card % 11 == SWAN - 1 else winner
                    points = (lead % 11 == TREASURE - 1) + (second % 11 == TREASURE - 1)
                    key = (winner, points, nxt)
                    if key not in cache:
                        won = TrickWon(winner=winner, points=points, next_leader=nxt)
                        cache[key] = (won, _tally_delta(winner, points))
                    row.append(cache[key])
            by_trump.append(tuple(row))
        rows.extend(by_trump[decree // 11] for decree in range(CARD_COUNT))
    return tuple(rows)


def _tally_delta(winner: int, points: int) -> int:
    """What a trick adds to the state's ``tally``: one trick played, one won, its Treasure."""
    return 1 | 1 << (4 + 4 * winner) | points << (12 + 4 * winner)


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


def _after_play(seat: int, card: int) -> tuple[int, int]:
    """(phase, seat to act) right after ``seat`` plays ``card``: its owner resolves a Fox or a
    Woodcutter; otherwise the other seat (a completed trick then sets the next leader)."""
    rank = card % 11 + 1
    if rank == FOX:
        return PHASE_FOX, seat
    if rank == WOODCUTTER:
        return PHASE_WOODCUTTER, seat
    return PHASE_PLAY, 1 - seat


# Shared command objects (frozen): parse_command and legal_commands hand these out.
KEEP_DECREE = KeepDecree()
PLAY = tuple(Play(card=c) for c in range(CARD_COUNT))
EXCHANGE = tuple(ExchangeDecree(card=c) for c in range(CARD_COUNT))
RETURN = tuple(ReturnCard(card=c) for c in range(CARD_COUNT))

# The deal's one draw: the choices of a partial Fisher-Yates over 33 cards down to position 13.
_DEAL_CHOICES = math.perm(CARD_COUNT, CARD_COUNT - HAND_SIZE)
_RADIX_GROUPS = tuple(
    (tuple(group), math.prod(group))
    for group in (range(33, 27, -1), range(27, 21, -1), range(21, 14, -1), range(14, 13, -1))
)
_BITS = tuple(1 << c for c in range(CARD_COUNT))
_SUIT_MASK_OF = tuple(0x7FF << (11 * (c // 11)) for c in range(CARD_COUNT))
_ONES = 1 | 1 << 11 | 1 << 22  # the Swans (rank 1) of every suit
_TO_ACT: tuple[tuple[int, ...], ...] = ((0,), (1,), ())


def _deduced_if_played(seat: int, lead: int, second: int) -> int:
    """The deduction bits (StateFields.voids) that ``seat`` following ``lead`` with ``second``
    sets: a void when off suit; a rank cap when it answers a led Monarch in suit, not with
    the 1 (it must play the 1 or its highest of the suit)."""
    suit = lead // 11
    if second // 11 != suit:
        return 1 << (3 * seat + suit)
    rank = second % 11 + 1
    if lead % 11 + 1 == MONARCH and rank != SWAN:
        return rank << _cap_shift(seat, suit)
    return 0


# [seat][lead * 33 + second] -> the deduction bits that ``seat`` playing ``second`` to ``lead``
# sets; [seat] -> the mask that keeps every deduction but that seat's voids and caps (a draw).
_VOID_IF_PLAYED = tuple(
    tuple(
        _deduced_if_played(seat, lead, second)
        for lead in range(CARD_COUNT)
        for second in range(CARD_COUNT)
    )
    for seat in (0, 1)
)
_KEEP_VOIDS_OF_OTHER = tuple(
    ~(0b111 << 3 * seat | sum(15 << _cap_shift(seat, suit) for suit in range(3))) for seat in (0, 1)
)
# [3 bits of one seat's voids] -> its suit names
_VOID_SUITS = tuple(tuple(SUITS[i] for i in range(3) if m >> i & 1) for m in range(8))
# [3 bits of one seat's voids] -> the bitmask of every card of those suits
_SUITS_MASK = tuple(sum(0x7FF << 11 * i for i in range(3) if m >> i & 1) for m in range(8))
_PLAYS = _by_suit(PLAY)
_PLAYS0, _PLAYS1, _PLAYS2 = _PLAYS
_EXCHANGES = _by_suit(EXCHANGE)
_RETURNS = _by_suit(RETURN)
# For a led card: the Play table of its suit, and the shift that brings its suit to bits 0-10.
_FOLLOW_PLAYS = tuple(_PLAYS[c // 11] for c in range(CARD_COUNT))
_FOLLOW_SHIFT = tuple(11 * (c // 11) for c in range(CARD_COUNT))
_AFTER_PLAY = tuple(tuple(_after_play(s, c) for c in range(CARD_COUNT)) for s in (0, 1))
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
_EVOLVERS: dict[type, Any] = {
    GameStarted: _on_game_started,
    RoundDealt: _on_round_dealt,
    DecreeExchanged: _on_decree_exchanged,
    DecreeKept: _on_decree_kept,
    CardDrawn: _on_card_drawn,
    CardReturned: _on_card_returned,
    RoundScored: _on_round_scored,
    GameEnded: _on_game_ended,
}
