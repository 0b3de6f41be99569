"""Fox's cards and the tables built from its rules: what a card is, who takes a trick.

A card is an int ``suit * 11 + rank - 1`` (0..32, suits in ``SUITS`` order); JSON spells it
``{"suit": "keys", "rank": 7}``. A hand, or any set of cards, is an int bitmask (bit ``card``).
The kernel's hot path reads the tables here (built once at import, from the rules written
out in ``_trick_winner`` and ``_after_play``) instead of working a trick out card by card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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


def _mask(cards: Sequence[int]) -> int:
    """``mask_of`` for a deal's hands, looped in C (the cards are distinct)."""
    return sum(map(_BITS.__getitem__, cards))


def _sorted_cards(cards: Sequence[Any]) -> tuple[int, ...]:
    return tuple(sorted(parse_card(c) for c in cards))


def _cards_json(mask: int) -> list[dict[str, Any]]:
    return [card_json(c) for c in cards_of(mask)]


def _card_name(card: int) -> str:
    return f"{card % 11 + 1} of {SUITS[card // 11]}"


def _trick_winner(trump: int, lead: int, second: int) -> int:
    """0 if the leader's card wins, 1 if the follower's: the trick rule, written once (the
    trick table and the heuristic's odds are built from it)."""
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


def _next_leader(winner: int, lead: int, second: int, follower_wins: int) -> int:
    """Who leads after the trick: the winner, unless the loser played a Swan (its owner who
    loses the trick leads the next one; also with two Swans)."""
    loser_card = lead if follower_wins else second
    return 1 - winner if loser_card % 11 == SWAN - 1 else winner


def _trick_points(lead: int, second: int) -> int:
    """The Treasure a trick is worth: one per 7 in it."""
    return (lead % 11 == TREASURE - 1) + (second % 11 == TREASURE - 1)


def _tally_delta(winner: int, points: int) -> int:
    """What a trick adds to the state's ``tally``: one trick played, one won, its Treasure."""
    return 1 | 1 << (4 + 4 * winner) | points << (12 + 4 * winner)


def _monarch_answers(held: int) -> int:
    """Of ``held`` (cards of the Monarch's suit), the 1 and the highest."""
    return (held & -held & _ONES) | (1 << (held.bit_length() - 1))


def _after_play(seat: int, card: int) -> tuple[int, int]:
    """(phase, seat to act) right after ``seat`` plays ``card``: its owner resolves a Fox or a
    Woodcutter; otherwise the other seat (a completed trick then sets the next leader)."""
    rank = card % 11 + 1
    if rank == FOX:
        return PHASE_FOX, seat
    if rank == WOODCUTTER:
        return PHASE_WOODCUTTER, seat
    return PHASE_PLAY, 1 - seat


_BITS = tuple(1 << c for c in range(CARD_COUNT))
_SUIT_MASK_OF = tuple(0x7FF << (11 * (c // 11)) for c in range(CARD_COUNT))
_ONES = 1 | 1 << 11 | 1 << 22  # the Swans (rank 1) of every suit
_TO_ACT: tuple[tuple[int, ...], ...] = ((0,), (1,), ())
_AFTER_PLAY = tuple(tuple(_after_play(s, c) for c in range(CARD_COUNT)) for s in (0, 1))
# For a led card: the shift that brings its suit to bits 0-10.
_FOLLOW_SHIFT = tuple(11 * (c // 11) for c in range(CARD_COUNT))
