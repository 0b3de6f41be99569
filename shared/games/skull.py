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
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from shared.games import base
from shared.games.errors import (
    GAME_OVER,
    NOT_YOUR_TURN,
    GameError,
    illegal,
    invalid_command,
    invalid_options,
)
from shared.games.rng import Rng

NAME = "skull"
MIN_SEATS = 3
MAX_SEATS = 12
TRAITS = base.Traits(
    secret_command_fields={"place": ("disc",), "discard": ("disc",)},
)

FLOWER = "flower"
SKULL = "skull"
DISCS = (FLOWER, SKULL)
FLOWERS_PER_PLAYER = 3
SKULLS_PER_PLAYER = 1
WINS_NEEDED = 2

PLACING = "placing"
BIDDING = "bidding"
FLIPPING = "flipping"
PENALTY = "penalty"
CHOOSING_STARTER = "choosing_starter"
GAME_OVER_PHASE = "game_over"

CZECH = "czech"
ENGLISH = "english"
NEXT_STARTER_RULES = (CZECH, ENGLISH)

REASON_CHALLENGES = "challenges"
REASON_LAST_STANDING = "last_standing"


# --- state -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Player:
    """One seat: the discs it still owns (in hand or on its stack), its stack and record."""

    flowers: int = FLOWERS_PER_PLAYER
    skulls: int = SKULLS_PER_PLAYER
    stack: tuple[str, ...] = ()  # faces, bottom first
    wins: int = 0
    passed: bool = False
    lost: tuple[str, ...] = ()  # discs that left the game, oldest first (secret to the owner)
    # Public: True/False when every seat can deduce whether the player owns a skull, None when
    # it cannot. Derived from public events only, so a redacted replay derives it too.
    known_skull: bool | None = True

    @property
    def discs(self) -> int:
        """Discs still owned, in hand and on the stack."""
        return self.flowers + self.skulls

    @property
    def eliminated(self) -> bool:
        """True once the player has no disc left."""
        return self.flowers + self.skulls == 0

    def in_hand(self, disc: str) -> int:
        """How many discs of this face are in hand (owned, not on the stack)."""
        owned = self.owned(disc)
        return owned - self.stack.count(disc) if owned else 0

    def owned(self, disc: str) -> int:
        """How many discs of this face the player still owns (0 for an unknown face)."""
        return self.flowers if disc == FLOWER else self.skulls if disc == SKULL else 0

    @property
    def hand_size(self) -> int:
        """Discs in hand."""
        return self.discs - len(self.stack)


@dataclass(frozen=True, slots=True, kw_only=True)
class State:
    """The whole game; only ``evolve`` makes new ones."""

    seats: int
    next_starter: str = CZECH
    players: tuple[Player, ...] = ()
    phase: str = PLACING
    round: int = 0
    starter: int | None = None
    turn: int | None = None  # the one seat that must act now (None when the game is over)
    bid: int = 0
    bidder: int | None = None
    challenger: int | None = None
    flipped: tuple[tuple[int, str], ...] = ()  # (owner seat, face) in flip order, this round
    skull_owner: int | None = None
    shuffled: tuple[str, ...] = ()  # the challenger's discs face down, for the blind pick
    winners: tuple[int, ...] = ()


_replace_player: Callable[..., Player] = base.replacer(Player)
_replace_state: Callable[..., State] = base.replacer(State)


# --- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """Put a disc from hand face down on top of your own stack."""

    TYPE: ClassVar[str] = "place"
    disc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Bid:
    """Open the bidding or raise: flip ``count`` discs without meeting a skull."""

    TYPE: ClassVar[str] = "bid"
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Pass:
    """Leave this bidding."""

    TYPE: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True, kw_only=True)
class Flip:
    """As challenger, flip ``seat``'s top face-down disc (your own seat: your whole stack)."""

    TYPE: ClassVar[str] = "flip"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PickDisc:
    """As the revealed skull's owner, take the challenger's face-down disc at ``index``."""

    TYPE: ClassVar[str] = "pick_disc"
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Discard:
    """As a challenger who met their own skull, choose the disc to lose."""

    TYPE: ClassVar[str] = "discard"
    disc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChooseStarter:
    """English rule, own skull: name the seat that starts the next round."""

    TYPE: ClassVar[str] = "choose_starter"
    seat: int


# --- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSetUp:
    """The table: seats, discs per player and the next-starter rule. Creates the state."""

    TYPE: ClassVar[str] = "game_set_up"
    seats: int
    next_starter: str = CZECH
    flowers: int = FLOWERS_PER_PLAYER
    skulls: int = SKULLS_PER_PLAYER


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundStarted:
    """A round began with an empty table; ``starter`` places first."""

    TYPE: ClassVar[str] = "round_started"
    round: int
    starter: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscPlaced:
    """``seat`` put a disc on its stack; ``disc`` is None in every other seat's copy."""

    TYPE: ClassVar[str] = "disc_placed"
    seat: int
    disc: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    """It is now ``seat``'s turn to place or bid."""

    TYPE: ClassVar[str] = "turn_started"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BidMade:
    """``seat`` bid ``count``; the first bid of a round opens the bidding."""

    TYPE: ClassVar[str] = "bid_made"
    seat: int
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BidPassed:
    """``seat`` passed and is out of this bidding."""

    TYPE: ClassVar[str] = "bid_passed"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ChallengeStarted:
    """The bidding ended: ``seat`` must flip ``bid`` discs."""

    TYPE: ClassVar[str] = "challenge_started"
    seat: int
    bid: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscFlipped:
    """The top face-down disc of ``seat``'s stack was turned up: ``disc``."""

    TYPE: ClassVar[str] = "disc_flipped"
    seat: int
    disc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChallengeWon:
    """``seat`` flipped its bid in flowers and now has ``wins`` markers; discs go back."""

    TYPE: ClassVar[str] = "challenge_won"
    seat: int
    wins: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ChallengeFailed:
    """``seat`` met ``skull_owner``'s skull; discs go back and the penalty begins."""

    TYPE: ClassVar[str] = "challenge_failed"
    seat: int
    skull_owner: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscsShuffled:
    """``seat``'s ``count`` discs were shuffled face down; ``order`` is None in every copy."""

    TYPE: ClassVar[str] = "discs_shuffled"
    seat: int
    count: int
    order: tuple[str, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscLost:
    """``seat`` lost a disc (picked by ``picked_by``, at ``index`` when picked blind); ``disc``
    is None in every copy but the owner's."""

    TYPE: ClassVar[str] = "disc_lost"
    seat: int
    disc: str | None
    picked_by: int
    index: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerEliminated:
    """``seat`` has no disc left and is out of the game."""

    TYPE: ClassVar[str] = "player_eliminated"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StarterChoiceOffered:
    """English rule, own skull: ``seat`` (the challenger) names the next starter."""

    TYPE: ClassVar[str] = "starter_choice_offered"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GameWon:
    """The game ended: ``reason`` is ``challenges`` (two wins) or ``last_standing``."""

    TYPE: ClassVar[str] = "game_won"
    winners: tuple[int, ...]
    reason: str


COMMANDS: dict[str, type] = base.registry(Place, Bid, Pass, Flip, PickDisc, Discard, ChooseStarter)
EVENTS: dict[str, type] = base.registry(
    GameSetUp,
    RoundStarted,
    DiscPlaced,
    TurnStarted,
    BidMade,
    BidPassed,
    ChallengeStarted,
    DiscFlipped,
    ChallengeWon,
    ChallengeFailed,
    DiscsShuffled,
    DiscLost,
    PlayerEliminated,
    StarterChoiceOffered,
    GameWon,
)


# Each command type's field names, read once: ``dataclasses.fields`` per command was most of
# the cost of the ``legal_commands`` JSON in every view.
_COMMAND_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in COMMANDS.values()
}


# --- setup -------------------------------------------------------------------------------------


def parse_options(seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """Validated options: ``next_starter`` (``"czech"``, default, or ``"english"``) and
    ``first_player`` (a seat, or None to draw one). Unknown options are rejected."""
    if (
        isinstance(seats, bool)
        or not isinstance(seats, int)
        or not (MIN_SEATS <= seats <= MAX_SEATS)
    ):
        raise invalid_options(
            f"skull takes {MIN_SEATS} to {MAX_SEATS} players",
            seats=f"must be an integer from {MIN_SEATS} to {MAX_SEATS}",
        )
    errors: dict[str, str] = {}
    for key in options:
        if key not in ("next_starter", "first_player"):
            errors[str(key)] = "unknown option"
    next_starter = options.get("next_starter", CZECH)
    if next_starter not in NEXT_STARTER_RULES:
        errors["next_starter"] = f"must be one of {', '.join(NEXT_STARTER_RULES)}"
    first = options.get("first_player")
    if first is not None and (
        isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < seats
    ):
        errors["first_player"] = f"must be a seat from 0 to {seats - 1}"
    if errors:
        raise invalid_options("invalid skull options", **errors)
    return {"next_starter": next_starter, "first_player": first}


def setup(seats: int, options: Mapping[str, Any], rng: Rng) -> list[Any]:
    """The table, then round 1 started by ``first_player`` (drawn with ``rng`` if not set)."""
    opts = parse_options(seats, options)
    first = opts["first_player"]
    if first is None:
        first = rng.below(seats)
    return [
        GameSetUp(seats=seats, next_starter=opts["next_starter"]),
        RoundStarted(round=1, starter=first),
    ]


def parse_command(data: Mapping[str, Any]) -> Any:
    """The command in client JSON ``{"type": ..., field: ...}``; extra keys are ignored."""
    if not isinstance(data, Mapping):
        raise invalid_command("a command is a JSON object", body="must be an object")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in COMMANDS:
        raise invalid_command(
            f"unknown command type {kind!r}", type=f"must be one of {', '.join(COMMANDS)}"
        )
    cls = COMMANDS[kind]
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            errors[f.name] = "required"
            continue
        value = data[f.name]
        if f.name == "disc":
            if value not in DISCS:
                errors[f.name] = "must be 'flower' or 'skull'"
        elif isinstance(value, bool) or not isinstance(value, int):
            errors[f.name] = "must be an integer"
        elif f.name == "count" and value < 1:
            errors[f.name] = "must be at least 1"
        elif value < 0:
            errors[f.name] = "must not be negative"
        values[f.name] = value
    if errors:
        raise invalid_command(f"malformed {kind} command", **errors)
    return cls(**values)


# --- decide ------------------------------------------------------------------------------------


def decide(state: State, seat: int, command: Any, rng: Rng) -> list[Any]:
    """The events ``command`` by ``seat`` causes; raises ``GameError`` naming the broken rule."""
    if state.phase == GAME_OVER_PHASE:
        raise GameError(GAME_OVER, "the game is over")
    _check_actor(state, seat, command)
    player = state.players[seat]
    match command:
        case Place(disc=disc):
            _require_phase(state, command, PLACING)
            if player.hand_size == 0:
                raise illegal("must_bid_empty_hand", "you have no disc in hand: you must bid")
            if player.in_hand(disc) == 0:
                raise illegal("no_such_disc", f"you have no {disc} in hand")
            next_seat = _next_seat(state, seat)
            return [_shared(DiscPlaced, seat=seat, disc=disc), _shared(TurnStarted, seat=next_seat)]
        case Bid(count=count):
            _require_phase(state, command, PLACING, BIDDING)
            if state.phase == PLACING and any(
                not p.stack and not p.eliminated for p in state.players
            ):
                raise illegal(
                    "place_first_disc", "everyone places a first disc before the bidding opens"
                )
            cap = _table_size(state)
            if count > cap:
                raise illegal("bid_above_cap", f"there are only {cap} discs on the table")
            if count <= state.bid:
                raise illegal("bid_not_higher", f"the bid must be higher than {state.bid}")
            if count == cap:
                return [
                    _shared(BidMade, seat=seat, count=count),
                    ChallengeStarted(seat=seat, bid=count),
                ]
            next_bidder = _next_seat(state, seat, skip_passed=True)
            return [
                _shared(BidMade, seat=seat, count=count),
                _shared(TurnStarted, seat=next_bidder),
            ]
        case Pass():
            _require_phase(state, command, BIDDING)
            still_in = [
                s
                for s, p in enumerate(state.players)
                if not p.eliminated and not p.passed and s != seat
            ]
            if still_in == [state.bidder]:
                assert state.bidder is not None
                return [
                    _shared(BidPassed, seat=seat),
                    ChallengeStarted(seat=state.bidder, bid=state.bid),
                ]
            next_bidder = _next_seat(state, seat, skip_passed=True)
            return [_shared(BidPassed, seat=seat), _shared(TurnStarted, seat=next_bidder)]
        case Flip(seat=target):
            _require_phase(state, command, FLIPPING)
            return _decide_flip(state, seat, target, rng)
        case PickDisc(index=index):
            _require_phase(state, command, PENALTY)
            if not state.shuffled:
                raise illegal(
                    "own_skull_discard", "it was your own skull: choose a disc with discard"
                )
            if not 0 <= index < len(state.shuffled):
                raise illegal("no_such_disc", f"pick an index from 0 to {len(state.shuffled) - 1}")
            return _lose_disc(state, state.shuffled[index], picked_by=seat, index=index)
        case Discard(disc=disc):
            _require_phase(state, command, PENALTY)
            if state.shuffled:
                raise illegal("not_own_skull", "the skull's owner picks one of your discs blindly")
            if player.owned(disc) == 0:
                raise illegal("no_such_disc", f"you have no {disc} left")
            return _lose_disc(state, disc, picked_by=seat, index=None)
        case ChooseStarter(seat=target):
            _require_phase(state, command, CHOOSING_STARTER)
            if not 0 <= target < state.seats:
                raise illegal("no_such_seat", f"there is no seat {target}")
            if state.players[target].eliminated:
                raise illegal("eliminated", f"seat {target} is out of the game")
            return [RoundStarted(round=state.round + 1, starter=target)]
        case _:
            raise _not_a_command(command)


# --- evolve ------------------------------------------------------------------------------------


def evolve(state: State | None, event: Any) -> State:
    """The state after ``event``; never fails, never draws."""
    if state is None:
        assert isinstance(event, GameSetUp), "the first skull event is game_set_up"
        player = Player(flowers=event.flowers, skulls=event.skulls, known_skull=event.skulls > 0)
        return State(
            seats=event.seats,
            next_starter=event.next_starter,
            players=(player,) * event.seats,
        )
    # Each case builds the new state once, and a new Player only for a seat whose record
    # changes: a player left as it was is the same value, so it is shared, not copied.
    match event:
        case GameSetUp():
            return evolve(None, event)
        case RoundStarted(round=number, starter=starter):
            players = tuple(
                _replace_player(p, stack=(), passed=False) if p.stack or p.passed else p
                for p in state.players
            )
            return _replace_state(
                state,
                players=players,
                phase=PLACING,
                round=number,
                starter=starter,
                turn=starter,
                bid=0,
                bidder=None,
                challenger=None,
                flipped=(),
                skull_owner=None,
                shuffled=(),
            )
        case DiscPlaced(seat=seat, disc=disc):
            p = state.players[seat]
            # A redacted copy (disc None) still shows the stack grew; a flower stands in.
            return _with_player(state, seat, _replace_player(p, stack=(*p.stack, disc or FLOWER)))
        case TurnStarted(seat=seat):
            return _replace_state(state, turn=seat)
        case BidMade(seat=seat, count=count):
            return _replace_state(state, phase=BIDDING, bid=count, bidder=seat)
        case BidPassed(seat=seat):
            return _with_player(state, seat, _replace_player(state.players[seat], passed=True))
        case ChallengeStarted(seat=seat, bid=bid):
            return _replace_state(
                state, phase=FLIPPING, challenger=seat, bidder=seat, bid=bid, turn=seat
            )
        case DiscFlipped(seat=seat, disc=disc):
            flipped = (*state.flipped, (seat, disc))
            p = state.players[seat]
            known = p.known_skull
            if disc == SKULL:
                known = True
            elif flipped.count((seat, FLOWER)) >= p.discs:  # every disc it owns is a flower
                known = False
            players = state.players
            if known is not p.known_skull:
                players = _players_with(state, seat, _replace_player(p, known_skull=known))
            return _replace_state(state, flipped=flipped, players=players)
        case ChallengeWon(seat=seat, wins=wins):
            winner = _replace_player(state.players[seat], wins=wins)
            players = _discs_back(_players_with(state, seat, winner))
            return _replace_state(state, players=players)
        case ChallengeFailed(skull_owner=owner):
            return _replace_state(
                state,
                phase=PENALTY,
                skull_owner=owner,
                turn=owner,
                players=_discs_back(state.players),
            )
        case DiscsShuffled(order=order, count=count):
            return _replace_state(state, shuffled=tuple(order or (FLOWER,) * count))
        case DiscLost(seat=seat, disc=disc):
            p = state.players[seat]
            # The others do not see which disc went (a skull known before may be gone now), so
            # only "no skull" survives a loss; with no disc left there is no skull either.
            known = False if p.discs <= 1 or p.known_skull is False else None
            disc = disc or FLOWER
            lost = (*p.lost, disc)
            if disc == FLOWER:
                p = _replace_player(p, known_skull=known, flowers=p.flowers - 1, lost=lost)
            else:
                p = _replace_player(p, known_skull=known, skulls=p.skulls - 1, lost=lost)
            return _replace_state(state, players=_players_with(state, seat, p), shuffled=())
        case PlayerEliminated():
            return state  # elimination is derived from the disc count; the event announces it
        case StarterChoiceOffered(seat=seat):
            return _replace_state(state, phase=CHOOSING_STARTER, turn=seat)
        case GameWon(winners=winners):
            return _replace_state(state, phase=GAME_OVER_PHASE, winners=tuple(winners), turn=None)
        case _:
            return state


# --- view --------------------------------------------------------------------------------------


def view(state: State, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may know, JSON-ready.

    Keys: ``phase``, ``round``, ``next_starter``, ``you``, ``starter``, ``turn``,
    ``to_act``, ``bid``, ``bidder``, ``challenger``, ``skull_owner``, ``table`` (discs on the
    table), ``flipped`` ([{seat, disc}] in flip order), ``pick_from`` (face-down discs to pick
    among), ``players`` ([{seat, stack_size, face_down, hand_size, discs, wins, passed,
    eliminated, known_skull}], ``known_skull`` true/false when every seat can deduce whether
    that player owns a skull, else null), ``scores``, ``winners``, and for a seat only:
    ``hand`` ({flower, skull}), ``stack`` (own faces, bottom first), ``lost`` (own lost
    discs), ``legal_commands``.
    """
    own = state.players[seat] if seat is not None else None
    flipped_by_seat = _flipped_counts(state)
    return {
        "phase": state.phase,
        "round": state.round,
        "next_starter": state.next_starter,
        "you": seat,
        "starter": state.starter,
        "turn": state.turn,
        "to_act": list(to_act(state)),
        "bid": state.bid,
        "bidder": state.bidder,
        "challenger": state.challenger,
        "skull_owner": state.skull_owner,
        "table": _table_size(state),
        "flipped": [{"seat": s, "disc": d} for s, d in state.flipped],
        "pick_from": len(state.shuffled),
        "players": [
            {
                "seat": s,
                "stack_size": len(p.stack),
                "face_down": len(p.stack) - flipped_by_seat[s] if p.stack else 0,
                "hand_size": p.hand_size,
                "discs": p.discs,
                "wins": p.wins,
                "passed": p.passed,
                "eliminated": p.eliminated,
                "known_skull": p.known_skull,
            }
            for s, p in enumerate(state.players)
        ],
        "scores": [p.wins for p in state.players],
        "winners": list(state.winners),
        "hand": None if own is None else {d: own.in_hand(d) for d in DISCS},
        "stack": None if own is None else list(own.stack),
        "lost": None if own is None else list(own.lost),
        "legal_commands": []
        if seat is None
        else [command_to_json(c) for c in legal_commands(state, seat)],
    }


# --- legal_commands ----------------------------------------------------------------------------


def legal_commands(state: State, seat: int) -> list[Any]:
    """Every command ``seat`` may send now (empty when it is not theirs to act)."""
    if seat not in to_act(state):
        return []
    player = state.players[seat]
    match state.phase:
        case "placing":
            out: list[Any] = [_shared(Place, disc=d) for d in DISCS if player.in_hand(d) > 0]
            if all(p.stack or p.eliminated for p in state.players):  # cheap test first
                out += _bids(state.bid + 1, _table_size(state) + 1)
            return out
        case "bidding":
            return [*_bids(state.bid + 1, _table_size(state) + 1), _PASS]
        case "flipping":
            counts = _flipped_counts(state)
            if counts[seat] < len(player.stack):
                return [_shared(Flip, seat=seat)]
            return [
                _shared(Flip, seat=s)
                for s, p in enumerate(state.players)
                if s != seat and counts[s] < len(p.stack)
            ]
        case "penalty":
            if state.shuffled:
                return list(_picks(len(state.shuffled)))
            return [_shared(Discard, disc=d) for d in DISCS if player.owned(d) > 0]
        case "choosing_starter":
            return [
                _shared(ChooseStarter, seat=s)
                for s, p in enumerate(state.players)
                if not p.eliminated
            ]
    return []


def to_act(state: State) -> tuple[int, ...]:
    """The one seat that must act now, or () when the game is over."""
    return () if state.turn is None or state.phase == GAME_OVER_PHASE else (state.turn,)


# --- outcome -----------------------------------------------------------------------------------


def outcome(state: State) -> dict[str, Any] | None:
    """None while the game runs; then scores (win markers), winners, ranks and ``draw``.

    Ranks: the winner first, then by win markers, then by discs still owned (ties share)."""
    if state.phase != GAME_OVER_PHASE:
        return None
    scores = [p.wins for p in state.players]
    won = [1 if s in state.winners else 0 for s in range(state.seats)]
    keys = [(p.wins, p.discs) for p in state.players]
    return {
        "scores": scores,
        "winners": list(state.winners),
        "ranks": base.ranks_from_scores(won, keys),
        "draw": False,
    }


# --- serialization, redaction, determinization -------------------------------------------------


def command_to_json(command: Any) -> dict[str, Any]:
    """Flat client JSON that ``parse_command`` reads back."""
    names = _COMMAND_FIELDS.get(type(command))
    if names is None:
        return base.command_json(command)
    out: dict[str, Any] = {"type": command.TYPE}
    for name in names:
        value = getattr(command, name)
        if isinstance(value, tuple | list | dict):  # built in code: let base convert it
            return base.command_json(command)
        out[name] = value
    return out


def event_to_json(event: Any) -> dict[str, Any]:
    """``{"type": ..., "data": {...}}`` as stored."""
    return base.to_json(event)


def event_from_json(doc: Mapping[str, Any]) -> Any:
    """The event ``event_to_json`` wrote (redacted copies read back too)."""
    return base.from_json(EVENTS, doc)


def redact(event: Any, seat: int | None) -> dict[str, Any] | None:
    """The event as ``seat`` may see it: a placed or lost disc's face only for its owner, a
    shuffle's order for no one."""
    match event:
        case DiscPlaced() if event.seat != seat:
            event = dataclasses.replace(event, disc=None)
        case DiscLost() if event.seat != seat:
            event = dataclasses.replace(event, disc=None)
        case DiscsShuffled():
            # Not even the challenger sees it: the order is the picker's blind choice.
            event = dataclasses.replace(event, order=None)
    return event_to_json(event)


def determinize(view: Mapping[str, Any], seat: int, rng: Rng) -> State:
    """A full state consistent with ``view`` (``seat``'s view): ``seat``'s own discs, stack and
    losses as it knows them; other seats' unknown discs dealt at random within what is public
    (disc counts, stack sizes, this round's flipped faces on top of their stacks, at most one
    skull each, and ``known_skull`` from earlier rounds); the blind-pick order shuffled.
    """
    phase = view["phase"]
    # Faces flipped this round still bind a seat's stack while flipping; in the penalty its
    # discs are back in hand, and after its loss the challenger may no longer own them.
    flips: dict[int, list[str]] = {}
    for f in view["flipped"]:
        flips.setdefault(f["seat"], []).append(f["disc"])
    players: list[Player] = []
    for info in view["players"]:
        s = info["seat"]
        if s == seat:
            hand, stack = view["hand"], tuple(view["stack"])
            flowers = hand[FLOWER] + stack.count(FLOWER)
            skulls = hand[SKULL] + stack.count(SKULL)
            lost = tuple(view["lost"])
        else:
            known = flips.get(s, [])
            if phase not in (FLIPPING, PENALTY) and s == view["challenger"]:
                known = []
            flowers, skulls, stack = _deal_hidden(info, known, phase == FLIPPING, rng)
            lost = (FLOWER,) * (FLOWERS_PER_PLAYER - flowers) + (SKULL,) * (
                SKULLS_PER_PLAYER - skulls
            )
        players.append(
            Player(
                flowers=flowers,
                skulls=skulls,
                stack=stack,
                wins=info["wins"],
                passed=info["passed"],
                lost=lost,
                # A view stored before this field existed lacks it: fall back to "unknown".
                known_skull=info.get("known_skull"),
            )
        )
    shuffled: tuple[str, ...] = ()
    if view["pick_from"]:
        c = players[view["challenger"]]
        shuffled = rng.shuffle((FLOWER,) * c.flowers + (SKULL,) * c.skulls)
    return State(
        seats=len(players),
        next_starter=view["next_starter"],
        players=tuple(players),
        phase=phase,
        round=view["round"],
        starter=view["starter"],
        turn=view["turn"],
        bid=view["bid"],
        bidder=view["bidder"],
        challenger=view["challenger"],
        flipped=tuple((f["seat"], f["disc"]) for f in view["flipped"]),
        skull_owner=view["skull_owner"],
        shuffled=shuffled,
        winners=tuple(view["winners"]),
    )


# --- private helpers ---------------------------------------------------------------------------

# Commands and events are frozen values, so the ones made on every turn are made once per
# distinct value and shared: a cache hit costs a fraction of a dataclass ``__init__``, and
# ``legal_commands`` lists a bid range as one cached tuple. ``typed`` keeps ``True`` apart
# from ``1``, so a message holds exactly the value it was asked for.
_MESSAGE_CACHE = 4096
_PASS = Pass()


@functools.lru_cache(maxsize=_MESSAGE_CACHE, typed=True)
def _shared(cls: type, **fields: Any) -> Any:
    """The one shared ``cls(**fields)``."""
    return cls(**fields)


@functools.lru_cache(maxsize=_MESSAGE_CACHE, typed=True)
def _bids(low: int, high: int) -> tuple[Bid, ...]:
    """``Bid`` commands for the counts ``low`` to ``high - 1``."""
    return tuple(Bid(count=c) for c in range(low, high))


@functools.lru_cache(maxsize=_MESSAGE_CACHE, typed=True)
def _picks(count: int) -> tuple[PickDisc, ...]:
    """``PickDisc`` commands for the indexes ``0`` to ``count - 1``."""
    return tuple(PickDisc(index=i) for i in range(count))


def _check_actor(state: State, seat: int, command: Any) -> None:
    """Raise unless ``seat`` is the one to act, naming the most helpful rule (an object that is
    no Skull command is ``command/invalid`` whoever sends it)."""
    if not isinstance(seat, int) or not 0 <= seat < state.seats:
        raise GameError(NOT_YOUR_TURN, f"there is no seat {seat}")
    if seat in to_act(state):
        return
    if not isinstance(command, _COMMAND_TYPES):
        raise _not_a_command(command)
    if isinstance(command, PickDisc) and state.phase == PENALTY:
        raise illegal("not_skull_owner", "only the revealed skull's owner picks the disc")
    if state.players[seat].eliminated:
        raise illegal("eliminated", "you are out of the game")
    if state.phase == BIDDING and state.players[seat].passed and isinstance(command, Bid | Pass):
        raise illegal("passed", "you passed and are out of this bidding")
    raise GameError(NOT_YOUR_TURN, f"it is seat {state.turn}'s turn")


_COMMAND_TYPES = tuple(COMMANDS.values())


def _not_a_command(command: Any) -> GameError:
    return invalid_command(f"not a {NAME} command: {command!r}", type="a skull command")


def _require_phase(state: State, command: Any, *phases: str) -> None:
    if state.phase not in phases:
        raise illegal("wrong_phase", f"{command.TYPE} is not allowed in the {state.phase} phase")


def _decide_flip(state: State, seat: int, target: int, rng: Rng) -> list[Any]:
    if not 0 <= target < state.seats:
        raise illegal("no_such_seat", f"there is no seat {target}")
    counts = _flipped_counts(state)
    own = state.players[seat]
    if target != seat and counts[seat] < len(own.stack):
        raise illegal("own_discs_first", "flip all your own discs first")
    stack = state.players[target].stack
    if counts[target] >= len(stack):
        raise illegal("empty_stack", f"seat {target} has no face-down disc left")
    # Your own stack turns over in one go, top down, and all of it even past the bid (the book:
    # "Nejprve odkryje všechny žetony, které sám vyložil" - first all the discs you placed), so a
    # skull of your own always fails you; another stack gives up one disc per command.
    take = len(stack) - counts[target] if target == seat else 1
    events: list[Any] = []
    done = len(state.flipped)
    for k in range(take):
        disc = stack[len(stack) - counts[target] - 1 - k]
        events.append(_shared(DiscFlipped, seat=target, disc=disc))
        done += 1
        if disc == SKULL:
            events.append(ChallengeFailed(seat=seat, skull_owner=target))
            if target != seat:
                discs = (FLOWER,) * own.flowers + (SKULL,) * own.skulls
                events.append(DiscsShuffled(seat=seat, count=len(discs), order=rng.shuffle(discs)))
            return events
        if done >= state.bid and (target != seat or k == take - 1):
            wins = own.wins + 1
            events.append(ChallengeWon(seat=seat, wins=wins))
            if wins >= WINS_NEEDED:
                events.append(GameWon(winners=(seat,), reason=REASON_CHALLENGES))
            else:
                events.append(RoundStarted(round=state.round + 1, starter=seat))
            return events
    return events


def _lose_disc(state: State, disc: str, *, picked_by: int, index: int | None) -> list[Any]:
    """The challenger loses ``disc``: elimination, game end or the next round's start."""
    challenger = state.challenger
    assert challenger is not None
    events: list[Any] = [DiscLost(seat=challenger, disc=disc, picked_by=picked_by, index=index)]
    out = state.players[challenger].discs == 1
    if out:
        events.append(PlayerEliminated(seat=challenger))
    alive = [
        s for s, p in enumerate(state.players) if not p.eliminated and not (out and s == challenger)
    ]
    if len(alive) == 1:
        events.append(GameWon(winners=(alive[0],), reason=REASON_LAST_STANDING))
        return events
    owner = state.skull_owner
    assert owner is not None
    if state.next_starter == ENGLISH:
        if owner == challenger:
            events.append(StarterChoiceOffered(seat=challenger))
            return events
        starter = owner
    else:
        # Czech book: the challenger starts; if out, the next player still in on their left.
        starter = _next_seat_after(state, challenger, exclude=challenger) if out else challenger
    events.append(RoundStarted(round=state.round + 1, starter=starter))
    return events


def _next_seat(state: State, seat: int, *, skip_passed: bool = False) -> int:
    """The next seat clockwise (to the left) still in the game (and the bidding)."""
    for step in range(1, state.seats + 1):
        s = (seat + step) % state.seats
        p = state.players[s]
        if p.eliminated or (skip_passed and p.passed):
            continue
        return s
    return seat


def _next_seat_after(state: State, seat: int, *, exclude: int) -> int:
    """The next seat clockwise still in, ``exclude`` (just eliminated) counting as out."""
    for step in range(1, state.seats + 1):
        s = (seat + step) % state.seats
        if s != exclude and not state.players[s].eliminated:
            return s
    return seat


def _table_size(state: State) -> int:
    return sum([len(p.stack) for p in state.players])  # a list sums faster than a generator


def _flipped_counts(state: State) -> list[int]:
    counts = [0] * state.seats
    for s, _ in state.flipped:
        counts[s] += 1
    return counts


def _players_with(state: State, seat: int, player: Player) -> tuple[Player, ...]:
    """``state``'s players with ``seat``'s replaced by ``player``."""
    players = list(state.players)
    players[seat] = player
    return tuple(players)


def _with_player(state: State, seat: int, player: Player) -> State:
    """``state`` with ``seat``'s player replaced by ``player``."""
    return _replace_state(state, players=_players_with(state, seat, player))


def _discs_back(players: tuple[Player, ...]) -> tuple[Player, ...]:
    """Everyone takes their discs back; the round's flips stay on record until the next round."""
    return tuple(_replace_player(p, stack=()) if p.stack else p for p in players)


def _deal_hidden(
    info: Mapping[str, Any], known: list[str], on_stack: bool, rng: Rng
) -> tuple[int, int, tuple[str, ...]]:
    """(flowers, skulls, stack) for another seat: a composition that holds the ``known`` faces
    (flipped this round) and fits ``info``'s counts, and a stack with those faces on top."""
    discs = info["discs"]
    need_skull = SKULL in known
    need_flowers = known.count(FLOWER)
    public = info.get("known_skull")  # None also for a view stored before the field existed
    options = [
        k
        for k in range(SKULLS_PER_PLAYER + 1)
        if 0 <= discs - k <= FLOWERS_PER_PLAYER
        and discs - k >= need_flowers
        and (k >= 1 or not need_skull)
        and (public is None or (k >= 1) == public)
    ]
    skulls = rng.choice(options) if options else min(discs, SKULLS_PER_PLAYER)
    flowers = discs - skulls
    size = info["stack_size"]
    if not size:
        return flowers, skulls, ()
    pool = [FLOWER] * flowers + [SKULL] * skulls
    top: list[str] = []
    if on_stack:
        for face in known:  # flipped first = top of the stack
            pool.remove(face)
            top.append(face)
    rest = list(rng.shuffle(pool))
    bottom = rest[: size - len(top)]
    return flowers, skulls, (*bottom, *reversed(top))
