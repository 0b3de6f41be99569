"""Skull's vocabulary: its constants, the frozen ``State`` the service stores, its commands
and events, and their JSON (commands as clients send them, events as stored).

``State`` and ``Player`` are the engine contract's frozen types, unchanged by the kernel
(``kernel.py`` thaws and freezes them): views, projections, redaction, the audit and the golden
logs read exactly these.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from shared.games import base
from shared.games.errors import invalid_command

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


# --- JSON -------------------------------------------------------------------------------------


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
