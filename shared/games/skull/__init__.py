"""Skull: the bluffing game of flowers and skulls (3-6 players; 7-12 with two boxes combined).

Rules follow the Czech rule book (``rules/skull.cs.txt``); where it is silent, the defaults of
``rules/README.md``. The variant for more than six players only combines two boxes: every player
still has 4 discs (3 flowers, 1 skull), and nothing else changes.

A round, as this engine runs it:

* ``placing``: from the starter, clockwise, each player places one disc face down. After that,
  in turn, each player either places another disc on their own stack or opens the bidding with a
  ``bid``; a player with no disc in hand must bid.
* ``bidding``: clockwise, each player still in raises (``bid``, at most the number of discs on the
  table) or ``pass``es and is out of this bidding. A bid equal to the discs on the table, or every
  other player having passed, makes the highest bidder the challenger.
* ``flipping``: the challenger first sends ``flip`` for their own seat, which turns their whole
  stack top down (one ``disc_flipped`` event per disc; all of it even past the bid, stopping
  only at a skull, so an own skull always fails), then ``flip``s the top face-down disc of any
  other stack, one at a time, until a skull or the bid.
* Success: the challenger gets a win marker (two win the game); everyone takes their discs back.
  Failure: everyone takes their discs back, then ``penalty``: if the skull was another player's,
  the challenger's discs are shuffled face down (``discs_shuffled``, whose order no seat ever
  sees) and the skull's owner blindly takes one (``pick_disc`` by index); if it was the
  challenger's own skull, the challenger chooses which disc to lose (``discard``). Only the
  challenger learns which disc left the game. A player with no disc left is eliminated; the last
  player with discs wins.
* The next round starts with the challenger, or, if the challenger was eliminated, with the next
  player still in on their left. With option ``next_starter="english"`` the owner of the revealed
  skull starts instead; when it was the challenger's own skull the challenger names the starter
  with ``choose_starter`` (phase ``choosing_starter``; an eliminated challenger still chooses,
  among the players still in). After a success the challenger starts under both rules.

What every seat can deduce across rounds is kept as each player's public ``known_skull``:
everyone starts with a skull (the box holds 3 flowers and 1 skull each), a turned-up skull
proves it is still there, and as many flowers turned up in one round as the player owns prove
it is gone; a disc lost unseen (a blind pick, or a secret discard after one's own skull) makes
a known skull unknown again. ``determinize`` deals only hands and stacks that agree with it.

The package (issue 26: the rules written once, as both the truth and the search's fast path):
``messages`` (constants, the frozen ``State``, commands, events, their JSON), ``options``
(the table's options and setup events), ``kernel`` (the
mutable ``SkullKernel``: one mutator per event, ``apply`` for the command rules; ``decide``,
``evolve`` and ``evolve_all`` below are derived from it), ``view`` (views and redaction),
``determinize``, ``search`` (the search hooks, ``SEARCH``) and ``bots`` (the heuristic,
``HEURISTIC``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.games.kernel import decide_with, evolve_all_with, evolve_with
from shared.games.skull import bots as _bots
from shared.games.skull import search as SEARCH  # noqa: N812 - the engine contract's name
from shared.games.skull.determinize import determinize
from shared.games.skull.kernel import SkullKernel, legal_commands, outcome, to_act
from shared.games.skull.messages import (
    BIDDING,
    CHOOSING_STARTER,
    COMMANDS,
    CZECH,
    DISCS,
    ENGLISH,
    EVENTS,
    FLIPPING,
    FLOWER,
    FLOWERS_PER_PLAYER,
    GAME_OVER_PHASE,
    MAX_SEATS,
    MIN_SEATS,
    NAME,
    NEXT_STARTER_RULES,
    PENALTY,
    PLACING,
    REASON_CHALLENGES,
    REASON_LAST_STANDING,
    SKULL,
    SKULLS_PER_PLAYER,
    TRAITS,
    WINS_NEEDED,
    Bid,
    BidMade,
    BidPassed,
    ChallengeFailed,
    ChallengeStarted,
    ChallengeWon,
    ChooseStarter,
    Discard,
    DiscFlipped,
    DiscLost,
    DiscPlaced,
    DiscsShuffled,
    Flip,
    GameSetUp,
    GameWon,
    Pass,
    PickDisc,
    Place,
    Player,
    PlayerEliminated,
    RoundStarted,
    StarterChoiceOffered,
    State,
    TurnStarted,
    _replace_player,
    _replace_state,
    command_to_json,
    event_from_json,
    event_to_json,
    parse_command,
)
from shared.games.skull.options import parse_options, setup
from shared.games.skull.spec import SPEC
from shared.games.skull.view import redact, view

KERNEL = SkullKernel
decide = decide_with(KERNEL)
evolve = evolve_with(KERNEL)
evolve_all = evolve_all_with(KERNEL)
HEURISTIC: Callable[..., Any] = _bots.choose

__all__ = [
    "BIDDING", "CHOOSING_STARTER", "COMMANDS", "CZECH", "DISCS", "ENGLISH", "EVENTS",
    "FLIPPING", "FLOWER", "FLOWERS_PER_PLAYER", "GAME_OVER_PHASE", "HEURISTIC", "KERNEL",
    "MAX_SEATS", "MIN_SEATS", "NAME", "NEXT_STARTER_RULES", "PENALTY", "PLACING",
    "REASON_CHALLENGES", "REASON_LAST_STANDING", "SEARCH", "SPEC", "SKULL", "SKULLS_PER_PLAYER",
    "TRAITS", "WINS_NEEDED", "Bid", "BidMade", "BidPassed", "ChallengeFailed",
    "ChallengeStarted", "ChallengeWon", "ChooseStarter", "Discard", "DiscFlipped", "DiscLost",
    "DiscPlaced", "DiscsShuffled", "Flip", "GameSetUp", "GameWon", "Pass", "PickDisc", "Place",
    "Player", "PlayerEliminated", "RoundStarted", "SkullKernel", "StarterChoiceOffered",
    "State", "TurnStarted", "_replace_player", "_replace_state", "command_to_json", "decide",
    "determinize", "event_from_json", "event_to_json", "evolve", "evolve_all",
    "legal_commands", "outcome", "parse_command", "parse_options", "redact", "setup",
    "to_act", "view",
]  # fmt: skip
