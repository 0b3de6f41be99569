"""Fox's frozen state: the engine contract's ``State`` (a plain tuple) and its field layout.

The kernel (``kernel.py``) thaws a ``State`` into a list of these same fields and freezes it
back, so handlers, projections, audits and golden logs see the very tuple they always did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, TypeAlias


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
# the kernel's freeze builds one (from its list of fields, in C) per command or replay.
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
