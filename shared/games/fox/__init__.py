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

The package: ``cards`` (cards, constants, the trick rule and the tables built from it),
``deductions`` (what public events tell of the hands, packed in one int), ``state`` (the
frozen ``State``, a plain tuple), ``messages`` (commands, events, JSON, the shared objects),
``setup`` (options and the deal), ``kernel`` (the rules, written once: ``KERNEL``, from which
``decide``, ``evolve`` and ``evolve_all`` are derived), ``view`` (views and redaction),
``determinize`` (states a seat cannot tell apart, for search), ``bots`` (the heuristic:
``HEURISTIC``) and ``search`` (ISMCTS's hooks: ``SEARCH``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.games.fox import bots, search
from shared.games.fox.cards import (
    ALL_CARDS,
    CARD_COUNT,
    DECK_SIZE,
    DEFAULT_TARGET,
    FOX,
    HAND_SIZE,
    MAX_TARGET,
    MONARCH,
    NOBODY,
    PHASE_FOX,
    PHASE_NAMES,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_WOODCUTTER,
    RANKS,
    SCORE_BY_TRICKS,
    SUITS,
    SWAN,
    TREASURE,
    TRICKS_PER_ROUND,
    WITCH,
    WOODCUTTER,
    _cards_json,
    card_code,
    card_json,
    cards_of,
    mask_of,
    parse_card,
)
from shared.games.fox.deductions import _lacking, _under_of
from shared.games.fox.determinize import determinize, determinizer
from shared.games.fox.kernel import FoxKernel, legal_commands, outcome, to_act
from shared.games.fox.messages import (
    COMMANDS,
    EVENTS,
    EXCHANGE,
    KEEP_DECREE,
    PLAY,
    RETURN,
    CardDrawn,
    CardPlayed,
    CardReturned,
    DecreeExchanged,
    DecreeKept,
    ExchangeDecree,
    GameEnded,
    GameStarted,
    KeepDecree,
    Play,
    ReturnCard,
    RoundDealt,
    RoundScored,
    TrickWon,
    command_to_json,
    event_from_json,
    event_to_json,
    parse_command,
)
from shared.games.fox.setup import _DEAL_CHOICES, _deal_event, _shuffle, parse_options, setup
from shared.games.fox.spec import MAX_SEATS, MIN_SEATS, NAME, SPEC, TRAITS
from shared.games.fox.state import (
    _DECK,
    _DECREE,
    _GAME,
    _HAND0,
    _HAND1,
    _KNOWN,
    _LAST,
    _LEAD,
    _LEADER,
    _PHASE,
    _PLAYED,
    _RETURNED,
    _SECOND,
    _TALLY,
    _TURN,
    _VOIDS,
    Game,
    State,
    StateFields,
    pack_tally,
    replace_state,
    state_fields,
)
from shared.games.fox.view import redact, view
from shared.games.kernel import decide_with, evolve_all_with, evolve_with

KERNEL = FoxKernel
decide = decide_with(KERNEL)
evolve = evolve_with(KERNEL)
evolve_all = evolve_all_with(KERNEL)
SEARCH = search
HEURISTIC: Callable[..., Any] = bots.choose

__all__ = [
    "ALL_CARDS",
    "CARD_COUNT",
    "COMMANDS",
    "DECK_SIZE",
    "DEFAULT_TARGET",
    "EVENTS",
    "EXCHANGE",
    "FOX",
    "HAND_SIZE",
    "HEURISTIC",
    "KEEP_DECREE",
    "KERNEL",
    "MAX_SEATS",
    "MAX_TARGET",
    "MIN_SEATS",
    "MONARCH",
    "NAME",
    "NOBODY",
    "PHASE_FOX",
    "PHASE_NAMES",
    "PHASE_OVER",
    "PHASE_PLAY",
    "PHASE_WOODCUTTER",
    "PLAY",
    "RANKS",
    "RETURN",
    "SCORE_BY_TRICKS",
    "SEARCH",
    "SPEC",
    "SUITS",
    "SWAN",
    "TRAITS",
    "TREASURE",
    "TRICKS_PER_ROUND",
    "WITCH",
    "WOODCUTTER",
    "CardDrawn",
    "CardPlayed",
    "CardReturned",
    "DecreeExchanged",
    "DecreeKept",
    "ExchangeDecree",
    "FoxKernel",
    "Game",
    "GameEnded",
    "GameStarted",
    "KeepDecree",
    "Play",
    "ReturnCard",
    "RoundDealt",
    "RoundScored",
    "State",
    "StateFields",
    "TrickWon",
    "card_code",
    "card_json",
    "cards_of",
    "command_to_json",
    "decide",
    "determinize",
    "determinizer",
    "event_from_json",
    "event_to_json",
    "evolve",
    "evolve_all",
    "legal_commands",
    "mask_of",
    "outcome",
    "pack_tally",
    "parse_card",
    "parse_command",
    "parse_options",
    "redact",
    "replace_state",
    "setup",
    "state_fields",
    "to_act",
    "view",
    # Private names that the engine's own tests and the fairness-vector script read.
    "_DEAL_CHOICES",
    "_DECK",
    "_DECREE",
    "_GAME",
    "_HAND0",
    "_HAND1",
    "_KNOWN",
    "_LAST",
    "_LEAD",
    "_LEADER",
    "_PHASE",
    "_PLAYED",
    "_RETURNED",
    "_SECOND",
    "_TALLY",
    "_TURN",
    "_VOIDS",
    "_cards_json",
    "_deal_event",
    "_lacking",
    "_shuffle",
    "_under_of",
]
