"""The Fox in the Forest's hand-written ``heuristic`` bot (the engine's ``HEURISTIC``).

Policy, in brief: with two players my t tricks leave the opponent 13 - t, so a round is worth
(my points - theirs) 6 for 0-3 tricks, 3/4/5 for 7/8/9, -5/-4/-3 for 4/5/6 and -6 for 10+.
Each decision estimates, from the cards still unseen (less the opponent's known cards and the
suits it is known to lack), how likely each card in hand wins when led against the trump:
their sum ``E`` is the hand's strength. From ``E``, the tricks won and the tricks left it
projects where dodging and where taking would end, and aims low (0-3: dodge) or high (7-9:
take) by which band is worth more there; it revises that at every decision. Taking, it wins
with the cheapest winning card and throws its least useful card otherwise; dodging, it plays
the highest card that still loses (shedding danger) and, when it must win, wins with its
most dangerous card. It stops taking at 7 tricks (6 when far ahead) so as not to reach 10.
Fox and Woodcutter choices (which decree, which card to the deck) pick the option whose
resulting hand (and, for a following Fox, this trick) fits a band best; 7s are kept out of
the opponent's tricks and won when cheap. ``rng`` only breaks exact ties.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from shared.games.fox.cards import SUITS, _trick_winner, cards_of

_SUIT_INDEX = {name: i for i, name in enumerate(SUITS)}
_ALL = (1 << 33) - 1
_SUIT_MASK = tuple(0x7FF << (11 * s) for s in range(3))
_FOX, _TREASURE, _WITCH, _MONARCH = 2, 6, 8, 10  # rank - 1

# Round value for me (my points minus the opponent's) by the tricks I take (index 0..13).
_VALUE = (6, 6, 6, 6, -5, -4, -3, 3, 4, 5, -6, -6, -6, -6)
# The estimates are rough: a projected count T stands for a spread of final counts.
_SPREAD = ((-3, 0.05), (-2, 0.1), (-1, 0.2), (0, 0.3), (1, 0.2), (2, 0.1), (3, 0.05))
# Projections of the final count from the hand's strength E and the tricks left, fitted to
# play against random (dodging ends near won + 0.65 E + 0.19 left, taking near won + 0.8 E +
# 0.39 left: the opponent gives tricks away) and then tuned: a slightly pessimistic dodge
# projection, so that only clearly weak hands aim low, scored best.
LOW_E, LOW_LEFT, HIGH_E, HIGH_LEFT = 0.8, 0.25, 0.8, 0.39


# _BEATS[trump][lead]: the mask of every card that takes a trick led with ``lead`` (by the
# engine's own trick rule, Witch included).
_BEATS = tuple(
    tuple(
        sum(1 << s for s in range(33) if s != lead and _trick_winner(trump, lead, s))
        for lead in range(33)
    )
    for trump in range(3)
)


def _card(doc: Mapping[str, Any]) -> int:
    return _SUIT_INDEX[doc["suit"]] * 11 + doc["rank"] - 1


def _mask(docs: Sequence[Mapping[str, Any]] | None) -> int:
    out = 0
    for doc in docs or ():
        if doc is not None:
            out |= 1 << _card(doc)
    return out


_cards = cards_of  # the engine's own bitmask reader


class _Table:
    """What the seat knows of the opponent's hand: certain cards, possible cards and odds."""

    __slots__ = ("known", "pool", "q")

    def __init__(self, view: Mapping[str, Any], seat: int, hand: int) -> None:
        other = 1 - seat
        decree = view["decree"]
        seen = hand | _mask(view["played"]) | _mask(view.get("deck_known"))
        if decree is not None:
            seen |= 1 << _card(decree)
        unseen = _ALL & ~seen
        self.known = _mask(view.get("opponent_known_cards")) & unseen
        lacking = 0
        for name in view["voids"][other]:
            lacking |= _SUIT_MASK[_SUIT_INDEX[name]]
        # Besides its known cards the opponent holds none of the suits it failed to follow.
        self.pool = unseen & ~self.known & ~lacking
        need = view["hand_sizes"][other] - self.known.bit_count()
        size = self.pool.bit_count()
        p = min(1.0, max(0.0, need / size)) if size else 0.0
        self.q = 1.0 - p  # the chance that one pool card is NOT in the opponent's hand

    def lacks(self, mask: int) -> float:
        """The chance that the opponent holds none of ``mask``."""
        if self.known & mask:
            return 0.0
        return self.q ** (self.pool & mask).bit_count()

    def win_led(self, card: int, trump: int) -> float:
        """The chance that ``card`` led takes the trick against an opponent who wants it."""
        suit = _SUIT_MASK[card // 11]
        beats = _BEATS[trump][card]
        if card % 11 == _MONARCH:
            # Under a led Monarch the follower must give its 1 or its highest card of the suit:
            # only a Witch of a plain suit can still beat it, when it is that highest card.
            beats &= ~suit | (1 << (card - 2) if self.lacks(1 << (card - 1)) == 1.0 else 0)
        beat_in_suit = 1.0 - self.lacks(suit & beats)
        beat_off_suit = (1.0 - self.lacks(~suit & beats)) * self.lacks(suit)
        return max(0.0, 1.0 - beat_in_suit - beat_off_suit)


def _band(total: float, low: int, high: int) -> float:
    """The expected round value when the projection is ``total`` tricks (final in low..high)."""
    base = int(total)
    frac = total - base
    out = 0.0
    for offset, weight in _SPREAD:
        for t, w in ((base + offset, 1.0 - frac), (base + offset + 1, frac)):
            out += weight * w * _VALUE[min(high, max(low, t))]
    return out


def _plan(won: int, left: int, take: float) -> tuple[float, bool]:
    """(the best band's value, whether to aim low) for a hand whose cards' winning chances
    sum to ``take``: each band's value at the count that trying for it is projected to end at
    (the high one capped where the bot turns to dodging)."""
    lo, hi = won, won + left
    low_total = won + LOW_E * take + LOW_LEFT * left
    high_total = won + HIGH_E * take + HIGH_LEFT * left
    low = _band(low_total, lo, hi) if won <= 3 else -99.0
    # Past 8 the bot dodges: then only what dodging cannot avoid counts.
    high = _band(min(high_total, max(8.0, low_total)), lo, hi)
    return (low, True) if low > high else (high, False)


def _near(chance: float) -> float:
    """``chance`` to two places: cards this close are equal, and the rank decides."""
    return round(chance, 2)


def _best(options: list[tuple[Any, ...]], rng: random.Random) -> Any:
    """The payload (last item) of the highest key (the other items); rng breaks exact ties."""
    top = max(o[:-1] for o in options)
    tied = [o[-1] for o in options if o[:-1] == top]
    return tied[0] if len(tied) == 1 else rng.choice(tied)


def choose(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """The heuristic's command for ``view`` (one of its ``legal_commands``), or None."""
    seat = view.get("seat")
    legal = view.get("legal_commands") or []
    if not isinstance(seat, int) or seat not in view.get("to_act", ()):
        return None
    if view.get("outcome") is not None or not legal:
        return None
    hand = _mask(view["hand"])
    trump = _SUIT_INDEX[view["trump"]]
    table = _Table(view, seat, hand)
    wins = {c: table.win_led(c, trump) for c in _cards(hand)}
    trick = [_card(t["card"]) for t in view["trick"]]
    won = view["tricks_won"][seat]
    left = 13 - sum(view["tricks_won"])
    phase = view["phase"]
    by_card = {_card(c["card"]): c for c in legal if "card" in c}

    if phase == "fox_exchange":
        return dict(_fox(view, legal, hand, trump, table, trick, won, left, rng))
    take = sum(wins.values())
    if phase == "woodcutter_return":
        # Only the kept hand matters now (this trick is decided by what is on the table).
        def keep_value(card: int) -> tuple[float, float]:
            value, low = _plan(won, left, take - wins[card])
            # Among equal plans, a dodger gets rid of danger, a taker of dead weight.
            return round(value, 9), wins[card] if low else -wins[card]

        return dict(by_card[_best([(*keep_value(c), c) for c in by_card], rng)])

    mode = _mode(view, seat, won, left, take)
    if trick:
        card = _follow(trick[0], list(by_card), trump, hand, wins, mode, rng)
    else:
        card = _lead(list(by_card), wins, mode, rng)
    return dict(by_card[card])


def _mode(view: Mapping[str, Any], seat: int, won: int, left: int, take: float) -> str:
    """``take``, ``dodge`` or ``treasure`` (10+ tricks: only 7s still score)."""
    if won >= 10:
        return "treasure"
    _, low = _plan(won, left, take)
    if low:
        return "dodge"
    if won + left < 7:
        return "take"  # 7 is out of reach: 6 tricks score more than 5 or 4
    scores = view["scores"]
    ahead = scores[seat] - scores[1 - seat] >= max(6, view["target"] // 3)
    # 8 and 9 add little over 7 and risk the 10th: far ahead, 7 is enough.
    return "dodge" if won >= (6 if ahead else 7) else "take"


def _follow(
    lead: int,
    legal: list[int],
    trump: int,
    hand: int,
    wins: Mapping[int, float],
    mode: str,
    rng: random.Random,
) -> int:
    beats = _BEATS[trump][lead]
    treasure_led = lead % 11 == _TREASURE

    def takes(card: int) -> bool:
        if beats >> card & 1:
            return True
        if mode != "dodge" and card % 11 == _FOX:
            # A following Fox may make its own suit trump (with a card of it left in hand).
            rest = hand & ~(1 << card)
            suit = card // 11
            return bool(rest & _SUIT_MASK[suit]) and _BEATS[suit][lead] >> card & 1 == 1
        return False

    winners = [c for c in legal if takes(c)]
    losers = [c for c in legal if not takes(c)]
    if mode == "treasure":
        # Round points are gone; a trick with a 7 still scores.
        with7 = [c for c in winners if c % 11 == _TREASURE or treasure_led]
        if with7:
            return _best([(-_near(wins[c]), -(c % 11), c) for c in with7], rng)
        mode = "dodge"
    if mode == "take":
        if winners:
            # The cheapest winner; a 7 wins a point too.
            return _best(
                [(c % 11 == _TREASURE, -_near(wins[c]), -(c % 11), c) for c in winners], rng
            )
        # Cannot win: throw the least useful card, never a 7 into the opponent's trick.
        return _best([(c % 11 != _TREASURE, -_near(wins[c]), -(c % 11), c) for c in losers], rng)
    if losers:
        # The highest card that still loses sheds danger; a 7 would score for the opponent.
        return _best([(c % 11 != _TREASURE, _near(wins[c]), c % 11, c) for c in losers], rng)
    # Forced to win: win with the most dangerous card (and a 7 scores for me).
    return _best([(_near(wins[c]), c % 11 == _TREASURE, c % 11, c) for c in winners], rng)


def _lead(legal: list[int], wins: Mapping[int, float], mode: str, rng: random.Random) -> int:
    if mode == "take":
        best = max(wins[c] for c in legal)
        if best >= 0.6:
            # Of the near-best winners, the lowest rank (a 7 first: it wins a point).
            good = [c for c in legal if wins[c] >= best - 0.15]
            return _best([(c % 11 == _TREASURE, -(c % 11), wins[c], c) for c in good], rng)
        # Nothing sure: give away the weakest card and keep the strength for later.
        return _best([(c % 11 != _TREASURE, -_near(wins[c]), -(c % 11), c) for c in legal], rng)
    # Dodging (or only 7s matter): the card least likely to win; of those, the highest.
    low = min(wins[c] for c in legal)
    safe = [c for c in legal if wins[c] <= low + 0.05]
    return _best([(c % 11 != _TREASURE, c % 11, -wins[c], c) for c in safe], rng)


def _fox(
    view: Mapping[str, Any],
    legal: list[dict[str, Any]],
    hand: int,
    trump: int,
    table: _Table,
    trick: list[int],
    won: int,
    left: int,
    rng: random.Random,
) -> dict[str, Any]:
    """Keep or exchange the decree: the option whose hand (and this trick) fits a band best."""
    old = _card(view["decree"])
    seat = view["seat"]
    leading = view["leader"] == seat
    options = []
    for command in legal:
        if command["type"] == "keep_decree":
            new_trump, new_hand = trump, hand
        else:
            card = _card(command["card"])
            new_trump, new_hand = card // 11, hand & ~(1 << card) | 1 << old
        wins = [table.win_led(c, new_trump) for c in _cards(new_hand)]
        take = sum(wins)
        tricks, rest = won, left
        if len(trick) == 2:
            # The Fox followed: the new trump decides this trick now.
            lead, fox = trick
            tricks += _BEATS[new_trump][lead] >> fox & 1
            rest -= 1
        elif leading:
            # The Fox was led: its chance under the new trump counts with the hand.
            take += table.win_led(trick[0], new_trump)
        value, _ = _plan(tricks, rest, take)
        # Among equal plans keep the decree (fewer public cards).
        options.append((round(value, 9), command["type"] == "keep_decree", command))
    chosen: dict[str, Any] = _best(options, rng)
    return chosen
