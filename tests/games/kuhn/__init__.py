"""Kuhn poker: the smallest complete game package, written for the tests (issue 26).

Two seats, a deck of J < Q < K. Each hand both ante 1 and get one card (the rest stays hidden);
the first seat checks or bets 1, then a bet is called or folded to, and check-check or a call
goes to a showdown: the higher card takes the pot. ``hands`` hands (default 3) are played, the
first seat alternating; scores are chips won or lost. A seat sees its own card; the other's
only when a showdown reveals it.

Everything the service needs is here: the rules once, in ``KERNEL`` (the pure face is derived
from it), the engine contract, ``SPEC`` and the ``HEURISTIC`` bot.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any, ClassVar

from shared.games import base, errors, kernel
from shared.games.rng import Rng
from shared.games.spec import INT, SEAT_NUMBER, GameSpec, ints, nullable

NAME, MIN_SEATS, MAX_SEATS, TRAITS = "kuhn", 2, 2, base.Traits()
DECK = ("J", "Q", "K")  # in rank order
PHASES = ("betting", "game_over")


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """Pass the action on without betting."""

    TYPE: ClassVar[str] = "check"


@dataclass(frozen=True, slots=True, kw_only=True)
class Bet:
    """Put one more chip in."""

    TYPE: ClassVar[str] = "bet"


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """Match the bet: the cards decide."""

    TYPE: ClassVar[str] = "call"


@dataclass(frozen=True, slots=True, kw_only=True)
class Fold:
    """Give the pot up to the bet."""

    TYPE: ClassVar[str] = "fold"


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSetUp:
    TYPE: ClassVar[str] = "game_set_up"
    hands: int


@dataclass(frozen=True, slots=True, kw_only=True)
class HandDealt:
    TYPE: ClassVar[str] = "hand_dealt"
    hand: int
    first: int
    cards: tuple[str | None, ...]  # per seat (a redacted copy has None for hidden cards)


@dataclass(frozen=True, slots=True, kw_only=True)
class Acted:
    TYPE: ClassVar[str] = "acted"
    seat: int
    action: str  # the command's type: check, bet, call or fold


@dataclass(frozen=True, slots=True, kw_only=True)
class Showdown:
    TYPE: ClassVar[str] = "showdown"
    hand: int
    cards: tuple[str, ...]
    winner: int


COMMANDS = base.registry(Check, Bet, Call, Fold)
EVENTS = base.registry(GameSetUp, HandDealt, Acted, Showdown)
OPENING, FACING = [Check(), Bet()], [Call(), Fold()]  # shared: commands are values


@dataclass(frozen=True, slots=True, kw_only=True)
class State:
    """The frozen state the service stores (``KuhnKernel.freeze``)."""

    hands: int
    hand: int = 0
    first: int = 0
    cards: tuple[str | None, ...] = ()
    stakes: tuple[int, ...] = (0, 0)  # chips each seat put in this hand
    actions: tuple[str, ...] = ()  # this hand's command types, in order
    turn: int | None = None
    scores: tuple[int, ...] = (0, 0)
    last_showdown: Showdown | None = None
    over: bool = False


FIELDS = tuple(f.name for f in dataclasses.fields(State))


class KuhnKernel(kernel.Kernel):
    """The rules, once: ``apply`` checks a command and emits its events; each ``_on_<event>``
    is the only statement of what that event does to the table."""

    __slots__ = FIELDS
    EVENTS = EVENTS
    # The fields of ``State``, with lists for its tuples.
    hands: int
    hand: int
    first: int
    cards: list[str | None]
    stakes: list[int]
    actions: list[str]
    turn: int | None
    scores: list[int]
    last_showdown: Showdown | None
    over: bool

    @classmethod
    def thaw(cls, state: State) -> KuhnKernel:
        k = cls.__new__(cls)
        for name in FIELDS:  # tuples become lists: the kernel changes them in place
            value = getattr(state, name)
            setattr(k, name, list(value) if isinstance(value, tuple) else value)
        return k

    @classmethod
    def start(cls, event: Any) -> KuhnKernel:
        k = cls.__new__(cls)
        k.on(event)
        return k

    def freeze(self) -> State:
        fields: dict[str, Any] = {}
        for name in FIELDS:
            value = getattr(self, name)
            fields[name] = tuple(value) if isinstance(value, list) else value
        return State(**fields)

    def copy(self) -> KuhnKernel:
        return self.thaw(self.freeze())  # a toy's copy: cheap enough, and shares nothing

    def apply(self, seat: int, command: Any, rng: Rng, emit: kernel.Emit) -> None:
        if self.over:
            raise errors.GameError(errors.GAME_OVER, "the game is over")
        if seat != self.turn:
            raise errors.GameError(errors.NOT_YOUR_TURN, f"it is seat {self.turn}'s turn")
        legal = self.legal_commands(seat)
        if command not in legal:
            wanted = " or ".join(c.TYPE for c in legal)
            raise errors.illegal("betting", f"no {command.TYPE} now: {wanted}")
        emit(Acted(seat=seat, action=command.TYPE))
        if self.turn is not None:
            return  # the other seat answers
        if not isinstance(command, Fold):  # check-check or a call: the higher card wins
            high = max(range(2), key=lambda s: DECK.index(str(self.cards[s])))
            emit(Showdown(hand=self.hand, cards=tuple(map(str, self.cards)), winner=high))
        if not self.over:
            emit(deal(self.hand + 1, rng))

    def _on_game_set_up(self, e: GameSetUp) -> None:
        self.hands, self.hand, self.first, self.cards = e.hands, 0, 0, []
        self.stakes, self.actions, self.turn = [0, 0], [], None
        self.scores, self.last_showdown, self.over = [0, 0], None, False

    def _on_hand_dealt(self, e: HandDealt) -> None:
        self.hand, self.first, self.cards = e.hand, e.first, list(e.cards)
        self.stakes, self.actions, self.turn = [1, 1], [], e.first  # the antes

    def _on_acted(self, e: Acted) -> None:
        self.actions.append(e.action)
        if e.action in ("bet", "call"):
            self.stakes[e.seat] += 1
        if e.action == "fold":
            self._award(1 - e.seat)
        elif e.action == "call" or self.actions == ["check", "check"]:
            self.turn = None  # betting is over: the showdown comes next
        else:
            self.turn = 1 - e.seat

    def _on_showdown(self, e: Showdown) -> None:
        self.last_showdown = e
        self._award(e.winner)

    def _award(self, winner: int) -> None:
        won = self.stakes[1 - winner]
        self.scores[winner] += won
        self.scores[1 - winner] -= won
        self.turn, self.over = None, self.hand == self.hands

    def to_act(self) -> tuple[int, ...]:
        return () if self.turn is None else (self.turn,)

    def legal_commands(self, seat: int) -> list[Any]:
        if seat != self.turn:
            return []
        return list(FACING if self.actions and self.actions[-1] == "bet" else OPENING)

    def outcome(self) -> dict[str, Any] | None:
        if not self.over:
            return None
        scores = list(self.scores)
        winners = [s for s in range(2) if scores[s] == max(scores)]
        return {"scores": scores, "winners": winners, "draw": len(winners) > 1,
                "ranks": base.ranks_from_scores(scores)}  # fmt: skip


def deal(hand: int, rng: Rng) -> HandDealt:
    """Hand ``hand``'s deal: two cards of a fresh shuffled deck; seats take turns to open."""
    return HandDealt(hand=hand, first=(hand - 1) % 2, cards=rng.shuffle(DECK)[:2])


# --- the engine contract ----------------------------------------------------------------------

KERNEL = KuhnKernel
decide = kernel.decide_with(KERNEL)
evolve = kernel.evolve_with(KERNEL)
evolve_all = kernel.evolve_all_with(KERNEL)


def parse_options(seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """``hands``: how many hands are played (1..20, default 3)."""
    if seats != 2:
        raise errors.invalid_options("kuhn is for 2 players", seats="must be 2")
    wrong = {str(k): "unknown option" for k in options if k != "hands"}
    hands = options.get("hands", 3)
    if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= 20:
        wrong["hands"] = "must be an integer from 1 to 20"
    if wrong:
        raise errors.invalid_options("invalid kuhn options", **wrong)
    return {"hands": hands}


def setup(seats: int, options: Mapping[str, Any], rng: Rng) -> list[Any]:
    """The table, then the first hand dealt with ``rng``."""
    return [GameSetUp(hands=parse_options(seats, options)["hands"]), deal(1, rng)]


def parse_command(data: Mapping[str, Any]) -> Any:
    """``{"type": "check" | "bet" | "call" | "fold"}``."""
    kind = data.get("type") if isinstance(data, Mapping) else None
    if kind not in COMMANDS:
        raise errors.invalid_command(
            f"unknown command {kind!r}", type=f"one of {', '.join(COMMANDS)}"
        )
    return COMMANDS[str(kind)]()


def legal_commands(state: State, seat: int) -> list[Any]:
    return KERNEL.thaw(state).legal_commands(seat)


def to_act(state: State) -> tuple[int, ...]:
    return KERNEL.thaw(state).to_act()


def outcome(state: State) -> dict[str, Any] | None:
    return KERNEL.thaw(state).outcome()


def view(state: State, seat: int | None) -> dict[str, Any]:
    """Public facts, ``your_card`` for a seat; the other card only in ``last_showdown``."""
    shown = state.last_showdown
    return {
        "phase": "game_over" if state.over else "betting",
        "hands": state.hands,
        "hand": state.hand,
        "first": state.first,
        "your_card": None if seat is None else state.cards[seat],
        "actions": list(state.actions),
        "stakes": list(state.stakes),
        "pot": sum(state.stakes),
        "turn": state.turn,
        "scores": list(state.scores),
        "last_showdown": None if shown is None else base.to_json(shown)["data"],
    }


def redact(event: Any, seat: int | None) -> dict[str, Any] | None:
    """A deal shows a seat its own card only (a spectator none); the rest is public."""
    if isinstance(event, HandDealt):
        hidden = tuple(c if s == seat else None for s, c in enumerate(event.cards))
        event = dataclasses.replace(event, cards=hidden)
    return base.to_json(event)


def determinize(view: Mapping[str, Any], seat: int, rng: Rng) -> State:
    """A state ``seat`` cannot tell from the real one: the other card drawn from the two left
    (the revealed one, if this hand went to a showdown)."""
    shown = view["last_showdown"]
    cards = [view["your_card"]] * 2
    cards[1 - seat] = rng.choice([c for c in DECK if c != view["your_card"]])
    if shown is not None and shown["hand"] == view["hand"]:
        cards = list(shown["cards"])
    last = None if shown is None else Showdown(**{**shown, "cards": tuple(shown["cards"])})
    return State(hands=view["hands"], hand=view["hand"], first=view["first"],
                 cards=tuple(cards), stakes=tuple(view["stakes"]), actions=tuple(view["actions"]),
                 turn=view["turn"], scores=tuple(view["scores"]), last_showdown=last,
                 over=view["phase"] == "game_over")  # fmt: skip


command_to_json = base.command_json
event_to_json = base.to_json
event_from_json = partial(base.from_json, EVENTS)


def heuristic(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """Bet or call with a K; with a Q check, and call a third of the time; with a J fold to a
    bet, and bluff a third of the time."""
    legal = [c["type"] for c in view.get("legal_commands") or []]
    if not legal:
        return None
    card, bluff = view["your_card"], rng.random() < 1 / 3
    if "call" in legal:
        return {"type": "call" if card == "K" or (card == "Q" and bluff) else "fold"}
    return {"type": "bet" if card == "K" or (card == "J" and bluff) else "check"}


HEURISTIC = heuristic

CARD = {"type": "string", "enum": list(DECK)}
SPEC = GameSpec(
    name=NAME,
    title="Kuhn poker",
    min_seats=MIN_SEATS,
    max_seats=MAX_SEATS,
    traits=TRAITS,
    options=MappingProxyType({"hands": {"type": "integer", "minimum": 1, "maximum": 20,
                                        "default": 3, "description": "hands played"}}),
    phases=PHASES,
    view_fields=MappingProxyType({
        "hands": {**INT, "description": "hands in the game"},
        "hand": {**INT, "minimum": 1, "description": "the hand being played (or the last)"},
        "first": {**SEAT_NUMBER, "description": "who opened this hand"},
        "your_card": nullable({**CARD, "description": "your card (null in the public view)"}),
        "actions": {"type": "array", "items": {"type": "string", "enum": list(COMMANDS)}},
        "stakes": ints("chips each seat put in this hand", minimum=1),
        "pot": {**INT, "minimum": 2},
        "turn": nullable(SEAT_NUMBER),
        "scores": ints("chips won (or lost) per seat"),
        "last_showdown": nullable({
            "type": "object", "required": ["hand", "cards", "winner"],
            "description": "the last hand that went to a showdown, both cards shown",
            "properties": {"hand": INT, "cards": {"type": "array", "items": CARD},
                           "winner": SEAT_NUMBER},
        }),
    }),
    create_examples=MappingProxyType({"kuhn": {
        "summary": "Kuhn poker: you against the heuristic bot, 5 hands",
        "value": {"game": "kuhn", "seats": [{"name": "ana"}, {"bot": "heuristic"}],
                  "options": {"hands": 5}},
    }}),
    kernel=KERNEL,
    heuristic=HEURISTIC,
)  # fmt: skip
