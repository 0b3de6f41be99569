"""Full Fox states that a seat, seeing its view, cannot tell from the real one (for search)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from shared.games.fox.cards import (
    ALL_CARDS,
    CARD_COUNT,
    NOBODY,
    PHASE_NAMES,
    SUITS,
    cards_of,
    mask_of,
    parse_card,
)
from shared.games.fox.deductions import _cap_shift, _lacking, _set_under
from shared.games.fox.state import Game, State, pack_tally
from shared.games.rng import Rng

# A card's bit (``1 << card``), by card.
_BIT = tuple(1 << card for card in range(CARD_COUNT))


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
    # No deck slot known to this seat (the common case): the deck is the cards left, in order.
    blind_deck = unknown_slots == len(slots)

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
        # The cards' bits are distinct: their sum is their union (``mask_of``), summed in C.
        opponent |= sum(map(_BIT.__getitem__, pool[:need]))
        left = pool[need:]
        if banned_cards:
            left = rng.shuffle([*left, *banned_cards])
        if blind_deck and deck_slots is slots:
            deck = tuple(left)  # every slot takes the next card left: all of them, in order
        else:
            rest = iter(left)
            deck = tuple(next(rest) if c is None else c for c in deck_slots)
        h0, h1 = (own, opponent) if seat == 0 else (opponent, own)
        return (phase, turn, h0, h1, leader, lead, second, played, decree, deck,
                tally, known_pair, returned_pair, voids, last_tuple, game)  # fmt: skip

    return deal
