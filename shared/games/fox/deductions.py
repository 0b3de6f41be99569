"""What the public events tell of the hands, packed in one int (``StateFields.voids``).

One int holds it, so that the hot path of a play-out carries one small int (zero above bit 5
in most states) rather than three more fields:

* bits 0-5: voids, bit ``3 * seat + suit`` (see ``_VOID_IF_PLAYED``);
* bits 8-31: rank caps, 4 bits at ``8 + 4 * (3 * seat + suit)`` hold r (2..11) when the seat
  answered a led Monarch of that suit with its rank r (not the 1): besides its known cards
  it holds none of that suit ranked r or higher (0: nothing known);
* bits 32-71: seat 0's "hand or deck" set: 33 card bits, then at bit 65 a 4-bit deck index;
* bits 72-111: seat 1's, the same way.

A "hand or deck" set: cards that were publicly known to be in the hand when that seat's
Woodcutter put one card under the deck; all are still in the hand but at most one, which is
then the card at that deck index (top first). Cleared by the next deal like the rest.
"""

from __future__ import annotations

from shared.games.fox.cards import ALL_CARDS, CARD_COUNT, MONARCH, SUITS, SWAN

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
