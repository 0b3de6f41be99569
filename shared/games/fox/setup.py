"""Fox's setup: the options a game is created with, and the deal (drawn or fixed).

The deal is part of the rules' randomness that auditors re-draw (``docs/fairness.md``): one
draw of ``rng.below(33! / 13!)`` arranges the 33 cards (``_shuffle``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from shared.games.errors import invalid_options
from shared.games.fox.cards import (
    CARD_COUNT,
    DECK_SIZE,
    DEFAULT_TARGET,
    HAND_SIZE,
    MAX_TARGET,
    _sorted_cards,
    card_json,
    parse_card,
)
from shared.games.fox.messages import GameStarted, RoundDealt
from shared.games.rng import Rng

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


def _shuffle(rng: Rng) -> list[int]:
    """Cards 0..32 arranged for a deal (see ``_deal_event``) from ONE draw of ``rng``.

    ``k = rng.below(33! / 13!)``, then a partial Fisher-Yates shuffle from the end that takes
    its indices from ``k``: for ``i`` from 32 down to 13, ``k, j = divmod(k, i + 1)`` and swap
    positions ``i`` and ``j`` (starting from cards 0..32 in order). Positions 13..32 are then a
    uniformly random arrangement of 20 of the cards, and positions 0..12 the other 13, a hand,
    whose order does not matter. One HMAC block instead of ``rng.shuffle``'s 32.
    """
    k = _draw_deal(rng)
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


def _draw_deal(rng: Rng) -> int:
    """The deal's one draw (``_shuffle``'s ``k``): all a lean kernel's round end draws."""
    return rng.below(_DEAL_CHOICES)


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


# The deal's one draw: the choices of a partial Fisher-Yates over 33 cards down to position 13.
_DEAL_CHOICES = math.perm(CARD_COUNT, CARD_COUNT - HAND_SIZE)
_RADIX_GROUPS = tuple(
    (tuple(group), math.prod(group))
    for group in (range(33, 27, -1), range(27, 21, -1), range(21, 14, -1), range(14, 13, -1))
)
