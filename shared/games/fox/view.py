"""What a seat may know of a Fox game: its view of the state, and each event redacted for it."""

from __future__ import annotations

from typing import Any

from shared.games.fox.cards import _TO_ACT, PHASE_NAMES, SUITS, _cards_json, card_json
from shared.games.fox.deductions import _VOID_SUITS, _caps_of, _under_of
from shared.games.fox.kernel import legal_commands, outcome
from shared.games.fox.messages import (
    CardDrawn,
    CardReturned,
    RoundDealt,
    command_to_json,
    event_to_json,
)
from shared.games.fox.state import State


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


def _under_json(voids: int, seat: int) -> dict[str, Any] | None:
    """``seat``'s "hand or deck" set for views: its cards and the deck index (top first)."""
    cards, slot = _under_of(voids, seat)
    if not cards:
        return None
    return {"cards": _cards_json(cards), "deck_index": slot}
