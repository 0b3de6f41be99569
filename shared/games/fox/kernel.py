"""Fox's rules, written once: the kernel (``shared/games/kernel.py``) and its read-only rules.

``FoxKernel`` holds the whole game as one list of the ``StateFields`` (``self.s``, indexed by
the field constants of ``state.py``): thawing a frozen ``State`` is ``list(state)`` and
freezing is ``tuple(self.s)``, both in C, and a copy for search is one list copy (every field
is an int or an immutable tuple). Its ``_on_<event>`` mutators are the only statement of how
each event changes the state; ``apply`` checks a command against the rules and hands each
event to ``emit`` as it goes. The engine's ``decide``/``evolve`` are derived from it
(``decide_with``/``evolve_with``), and search plays on it directly.

Speed is part of the rules' shape here: the hot path (a card played) reads tables built at
import (the trick's result, the deductions a follow sets, who acts next), hands out shared
event objects and takes the trick already with the card that completes it, so ``trick_won``
is the record of what the rules decided and changes nothing (``INERT``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from shared.games import base, errors
from shared.games.errors import GameError, illegal, invalid_command
from shared.games.fox.cards import (
    _AFTER_PLAY,
    _FOLLOW_SHIFT,
    _SUIT_MASK_OF,
    _TO_ACT,
    NOBODY,
    PHASE_FOX,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_WOODCUTTER,
    SCORE_BY_TRICKS,
    SUITS,
    TRICKS_PER_ROUND,
    _card_name,
    _mask,
    _monarch_answers,
)
from shared.games.fox.deductions import (
    _KEEP_VOIDS_OF_OTHER,
    _UNDER_SHIFT,
    _VOID_IF_PLAYED,
    _drop_under,
    _set_under,
    _under_drawn,
)
from shared.games.fox.messages import (
    _CARD_DRAWN,
    _CARD_PLAYED,
    _CARD_RETURNED,
    _DECREE_EXCHANGED,
    _DECREE_KEPT,
    _EXCHANGES,
    _FOLLOW_PLAYS,
    _PLAYS0,
    _PLAYS1,
    _PLAYS2,
    _RETURNS,
    _TRICK_RESULT,
    COMMANDS,
    EVENTS,
    KEEP_DECREE,
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
    _type_name,
)
from shared.games.fox.setup import _deal_event, _shuffle
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
)
from shared.games.kernel import Emit, Kernel
from shared.games.rng import Rng

_new = object.__new__
_new_game = tuple.__new__  # Game from a tuple, in C (NamedTuple's own __new__ is Python)
# The hand's field by seat: s[_HAND[seat]].
_HAND = (_HAND0, _HAND1)


class FoxKernel(Kernel):
    """The mutable Fox game: ``s`` is the list of ``StateFields`` (see ``state.py``)."""

    __slots__ = ("s",)

    EVENTS: ClassVar[dict[str, type]] = EVENTS
    INERT: ClassVar[tuple[str, ...]] = (
        "trick_won",
    )  # taken with the trick's last card: see module doc

    s: list[Any]

    # --- frozen state in and out ----------------------------------------------------------

    @classmethod
    def thaw(cls, state: State) -> FoxKernel:
        """A kernel holding ``state`` (any state: any phase, round, or determinization)."""
        kernel: FoxKernel = _new(cls)
        kernel.s = list(state)
        return kernel

    @classmethod
    def start(cls, event: GameStarted) -> FoxKernel:
        """The kernel ``game_started`` creates (``evolve(None, event)``)."""
        kernel: FoxKernel = _new(cls)
        kernel.s = [None] * 16
        kernel._on_game_started(event)
        return kernel

    def freeze(self) -> State:
        """The engine's frozen ``State`` (a plain tuple, ``==`` the pure engine's own)."""
        return tuple(self.s)

    def copy(self) -> FoxKernel:
        """An independent copy (every field is immutable: a list copy is a deep one)."""
        kernel: FoxKernel = _new(FoxKernel)
        kernel.s = self.s.copy()
        return kernel

    # --- read-only rules ------------------------------------------------------------------

    def to_act(self) -> tuple[int, ...]:
        """The seat that must send a command now (empty between rounds and after the game)."""
        return _TO_ACT[self.s[_TURN]]

    def legal_commands(self, seat: int) -> list[Any]:
        """Every command ``seat`` may send now; empty when it is not theirs to act."""
        s = self.s
        if seat != s[_TURN]:
            return []
        return _legal(s[_PHASE], s[_HAND1] if seat else s[_HAND0], s[_LEAD])

    def outcome(self) -> dict[str, Any] | None:
        """None while the game runs; then scores, winners, ranks and whether it is a draw."""
        s = self.s
        return _outcome(s[_PHASE], s[_GAME])

    # --- commands -------------------------------------------------------------------------

    def apply(self, seat: int, command: Any, rng: Rng, emit: Emit) -> None:
        """``command`` by ``seat`` checked against the rules (``GameError`` naming the rule,
        before any event), then its events handed to ``emit`` in order.

        ``rng`` is used only when the command ends a round that the game outlives (the next
        deal: one ``rng.below(33! / 13!)``, see ``setup._shuffle``).
        """
        s = self.s
        if seat != s[_TURN]:
            raise _not_to_act(s[_PHASE], seat)
        if s[_PHASE]:  # a Fox or Woodcutter waits for its owner
            self._apply_effect(seat, command, rng, emit)
            return
        # Playing a card is the hot path of search bots' play-outs: literals, tables, no calls.
        if type(command) is not Play:
            raise _wrong_command(PHASE_PLAY, command)
        card = command.card  # an int 0..32: Play checks it when built
        hand = s[_HAND1] if seat else s[_HAND0]
        if not hand >> card & 1:
            raise illegal("card_not_in_hand", f"{_card_name(card)} is not in your hand")
        lead = s[_LEAD]
        if lead >= 0:
            held = hand & _SUIT_MASK_OF[lead]
            if held:
                if not held >> card & 1:
                    raise illegal("follow_suit", f"you must follow {SUITS[lead // 11]}")
                if lead % 11 == 10 and not _monarch_answers(held) >> card & 1:
                    raise illegal(
                        "monarch",
                        f"the Monarch was led: play the 1 or your highest {SUITS[lead // 11]}",
                    )
        rank0 = card % 11  # rank - 1
        if rank0 == 4:  # Woodcutter: the draw is the deck's top card; the return comes next
            emit(_CARD_PLAYED[seat][card])
            emit(_CARD_DRAWN[seat][s[_DECK][0]])
            return
        if lead < 0 or rank0 == 2:  # a lead, or a Fox whose owner decides before the trick ends
            emit(_CARD_PLAYED[seat][card])
            return
        # The trick's second card: its mutator takes the trick (by this same table).
        won = _TRICK_RESULT[s[_LEADER] * 33 + s[_DECREE]][lead * 33 + card][0]
        emit(_CARD_PLAYED[seat][card])
        emit(won)
        if s[_TALLY] & 15 == TRICKS_PER_ROUND:  # the low 4 bits count the tricks taken
            self._end_round(rng, emit)

    def _apply_effect(self, seat: int, command: Any, rng: Rng, emit: Emit) -> None:
        """The owner's answer to a Fox (exchange or keep) or a Woodcutter (return a card)."""
        s = self.s
        phase = s[_PHASE]
        kind = type(command)
        decree = s[_DECREE]
        if phase == PHASE_FOX and kind is KeepDecree:
            event: Any = _DECREE_KEPT[seat]
        elif phase == PHASE_FOX and kind is ExchangeDecree:
            new = command.card
            if not (s[_HAND1] if seat else s[_HAND0]) >> new & 1:
                raise illegal("card_not_in_hand", f"{_card_name(new)} is not in your hand")
            event = _DECREE_EXCHANGED[seat][new * 33 + decree]
            decree = new  # already trump for this trick
        elif phase == PHASE_WOODCUTTER and kind is ReturnCard:
            card = command.card
            if not (s[_HAND1] if seat else s[_HAND0]) >> card & 1:
                raise illegal("card_not_in_hand", f"{_card_name(card)} is not in your hand")
            event = _CARD_RETURNED[seat][card]
        else:
            raise _wrong_command(phase, command)
        second = s[_SECOND]
        if second < 0:  # the effect came with the lead: the follower plays next
            emit(event)
            return
        # The effect came with the trick's second card: its mutator takes the trick now.
        won = _TRICK_RESULT[s[_LEADER] * 33 + decree][s[_LEAD] * 33 + second][0]
        emit(event)
        emit(won)
        if s[_TALLY] & 15 == TRICKS_PER_ROUND:
            self._end_round(rng, emit)

    def _end_round(self, rng: Rng, emit: Emit) -> None:
        """After the 13th trick: ``round_scored``, then the next deal or ``game_ended``."""
        s = self.s
        tally = s[_TALLY]
        tricks = (tally >> 4 & 15, tally >> 8 & 15)
        treasure = (tally >> 12 & 15, tally >> 16 & 15)
        points = (SCORE_BY_TRICKS[tricks[0]], SCORE_BY_TRICKS[tricks[1]])
        total = (points[0] + treasure[0], points[1] + treasure[1])
        game = s[_GAME]
        scores = (game.scores[0] + total[0], game.scores[1] + total[1])
        emit(
            RoundScored(
                round=game.round,
                tricks=tricks,
                points=points,
                treasure=treasure,
                total=total,
                scores=scores,
            )
        )
        if max(scores) >= game.target:
            ranks = base.ranks_from_scores(scores, total)
            winners = tuple(seat for seat in (0, 1) if ranks[seat] == 1)
            emit(
                GameEnded(
                    scores=scores,
                    winners=winners,
                    ranks=(ranks[0], ranks[1]),
                    draw=len(winners) == 2,
                )
            )
        else:
            emit(_deal_event(game.round + 1, 1 - game.dealer, _shuffle(rng)))

    # --- mutators: the only statement of how each event changes the state -----------------

    def _on_game_started(self, e: GameStarted) -> None:
        game = Game(e.target, e.first_dealer, e.first_dealer, 0, (0, 0), ())
        self.s[:] = (PHASE_PLAY, NOBODY, 0, 0, 1 - e.first_dealer, -1, -1, 0, -1, (), 0, (0, 0),
                     (0, 0), 0, None, game)  # fmt: skip

    def _on_round_dealt(self, e: RoundDealt) -> None:
        s = self.s
        target, first_dealer, _, _, scores, history = s[_GAME]
        game = _new_game(Game, (target, first_dealer, e.dealer, e.round, scores, history))
        first = 1 - e.dealer  # the non-dealer leads the first trick
        s[:] = (PHASE_PLAY, first, _mask(e.hands[0]), _mask(e.hands[1]), first, -1, -1, 0,
                e.decree, tuple(e.deck), 0, (0, 0), (0, 0), 0, None, game)  # fmt: skip

    def _on_card_played(self, e: CardPlayed) -> None:
        s = self.s
        seat = e.seat
        card = e.card
        bit = 1 << card
        s[_HAND[seat]] ^= bit
        s[_PLAYED] |= bit
        known = s[_KNOWN]
        if known[seat] & bit:
            s[_KNOWN] = (known[0] & ~bit, known[1] & ~bit)
        voids = s[_VOIDS]
        if voids >> _UNDER_SHIFT[seat] & bit:  # it was in the hand, not under the deck
            voids = _drop_under(voids, seat, bit)
        phase, turn = _AFTER_PLAY[seat][card]
        lead = s[_LEAD]
        if lead < 0:
            s[_PHASE] = phase
            s[_TURN] = turn
            s[_LEAD] = card
            s[_SECOND] = -1
            s[_VOIDS] = voids
            return
        pair = lead * 33 + card
        # A follower off the led suit has none of it; one answering a Monarch with a card of its
        # suit other than the 1 has none higher.
        s[_VOIDS] = voids | _VOID_IF_PLAYED[seat][pair]
        if phase:  # a Fox or Woodcutter as the second card: the trick waits for its owner
            s[_PHASE] = phase
            s[_TURN] = turn
            s[_SECOND] = card
            return
        _take_trick(s, card)

    def _on_decree_exchanged(self, e: DecreeExchanged) -> None:
        s = self.s
        seat, new, old = e.seat, e.card, e.old
        s[_HAND[seat]] ^= (1 << new) | (1 << old)
        # The old decree card is now publicly known to be in this hand. The seat's voids stay:
        # the hand holds no other card of those suits than its known cards.
        known = s[_KNOWN]
        if seat:
            s[_KNOWN] = (known[0], known[1] & ~(1 << new) | 1 << old)
        else:
            s[_KNOWN] = (known[0] & ~(1 << new) | 1 << old, known[1])
        voids = s[_VOIDS]
        if voids >> _UNDER_SHIFT[seat] & 1 << new:  # it was in the hand, not under the deck
            s[_VOIDS] = _drop_under(voids, seat, 1 << new)
        s[_DECREE] = new
        _effect_done(s, seat)

    def _on_decree_kept(self, e: DecreeKept) -> None:
        _effect_done(self.s, e.seat)

    def _on_card_drawn(self, e: CardDrawn) -> None:
        s = self.s
        seat = e.seat
        s[_HAND[seat]] |= 1 << e.card
        # The drawn card is hidden from the other seat: it may be of a suit this seat lacked,
        # or higher than a Monarch answer showed. A deck slot known to hold a card of a "hand
        # or deck" set moves up one; drawn, it ends that set (the drawer took the card, unseen).
        voids = s[_VOIDS] & _KEEP_VOIDS_OF_OTHER[seat]
        if voids >> _UNDER_SHIFT[0]:
            voids = _under_drawn(voids)
        s[_VOIDS] = voids
        s[_DECK] = s[_DECK][1:]

    def _on_card_returned(self, e: CardReturned) -> None:
        s = self.s
        seat, card = e.seat, e.card
        bit = 1 << card
        known = s[_KNOWN]
        deck = s[_DECK]
        # The other seat cannot see which card went under the deck, so a card it knew to be in
        # this hand may be at the deck's bottom now: this hand's known cards become a "hand or
        # deck" set (all in the hand but at most one, which is in that slot).
        s[_VOIDS] = _set_under(s[_VOIDS], seat, known[seat], len(deck))
        s[_HAND[seat]] ^= bit
        returned = s[_RETURNED]
        if seat:
            s[_KNOWN] = (known[0], 0)
            s[_RETURNED] = (returned[0], returned[1] | bit)
        else:
            s[_KNOWN] = (0, known[1])
            s[_RETURNED] = (returned[0] | bit, returned[1])
        s[_DECK] = deck + (card,)
        _effect_done(s, seat)

    def _on_round_scored(self, e: RoundScored) -> None:
        s = self.s
        target, first_dealer, dealer, round_, _, history = s[_GAME]
        history += ((e.tricks, e.points, e.treasure, e.total),)
        s[_GAME] = _new_game(Game, (target, first_dealer, dealer, round_, e.scores, history))
        # The round's Treasure is in the new totals now; its tricks stay visible until the deal.
        s[_TALLY] &= 0xFFF
        s[_TURN] = NOBODY

    def _on_game_ended(self, e: GameEnded) -> None:
        s = self.s
        s[_PHASE] = PHASE_OVER
        s[_TURN] = NOBODY


def _effect_done(s: list[Any], seat: int) -> None:
    """A Fox or Woodcutter answered: the follower plays next, or (the effect came with the
    trick's second card) the trick is taken now, with the decree as it is now."""
    second = s[_SECOND]
    if second < 0:
        s[_PHASE] = PHASE_PLAY
        s[_TURN] = 1 - seat
        return
    _take_trick(s, second)


def _take_trick(s: list[Any], second: int) -> None:
    """The trick (lead, ``second``) is decided, as ``trick_won`` tells; the next one opens."""
    leader, lead = s[_LEADER], s[_LEAD]
    won, delta = _TRICK_RESULT[leader * 33 + s[_DECREE]][lead * 33 + second]
    nxt = won.next_leader
    s[_PHASE] = PHASE_PLAY
    s[_TURN] = nxt
    s[_LEADER] = nxt
    s[_LEAD] = -1
    s[_SECOND] = -1
    s[_TALLY] += delta
    s[_LAST] = (leader, lead, second, won.winner)


# --- the read-only rules, shared by the kernel and the frozen state's functions ---------------


def _legal(phase: int, hand: int, lead: int) -> list[Any]:
    """The commands of the seat to act holding ``hand``, in the listing order search draws
    from (the shared command objects; tables by suit: [suit][the suit's 11 bits])."""
    if not phase:
        if lead >= 0:
            held = hand >> _FOLLOW_SHIFT[lead] & 0x7FF
            if held:
                if lead % 11 == 10:  # Monarch led: the 1 or the highest of the suit
                    held = (held & 1) | (1 << (held.bit_length() - 1))
                return list(_FOLLOW_PLAYS[lead][held])
        return [*_PLAYS0[hand & 0x7FF], *_PLAYS1[hand >> 11 & 0x7FF], *_PLAYS2[hand >> 22]]
    if phase == PHASE_FOX:
        e0, e1, e2 = _EXCHANGES
        return [KEEP_DECREE, *e0[hand & 0x7FF], *e1[hand >> 11 & 0x7FF], *e2[hand >> 22]]
    r0, r1, r2 = _RETURNS
    return [*r0[hand & 0x7FF], *r1[hand >> 11 & 0x7FF], *r2[hand >> 22]]


def _outcome(phase: int, game: Game) -> dict[str, Any] | None:
    """Most points wins; a tie goes to more points in the last round; still tied, both win."""
    if phase != PHASE_OVER:
        return None
    scores = list(game.scores)
    last = [0, 0]
    if game.history:
        _, _, _, last_total = game.history[-1]
        last = list(last_total)
    ranks = base.ranks_from_scores(scores, last)
    winners = [s for s in (0, 1) if ranks[s] == 1]
    return {"scores": scores, "winners": winners, "ranks": ranks, "draw": len(winners) == 2}


def legal_commands(state: State, seat: int) -> list[Any]:
    """Every command ``seat`` may send now; empty when it is not theirs to act."""
    if seat != state[_TURN]:
        return []
    return _legal(state[_PHASE], state[_HAND1] if seat else state[_HAND0], state[_LEAD])


def to_act(state: State) -> tuple[int, ...]:
    """The seat that must send a command now (empty between rounds and after the game)."""
    return _TO_ACT[state[_TURN]]


def outcome(state: State) -> dict[str, Any] | None:
    """None while the game runs; then scores, winners, ranks and whether it is a draw.

    Most points wins; a tie goes to more points in the last round; still tied, both win.
    """
    return _outcome(state[_PHASE], state[_GAME])


def _not_to_act(phase: int, seat: int) -> GameError:
    if phase == PHASE_OVER:
        return GameError(errors.GAME_OVER, "the game is over")
    return GameError(errors.NOT_YOUR_TURN, f"it is not seat {seat!r}'s turn")


def _wrong_command(phase: int, command: Any) -> GameError:
    if type(command) not in COMMANDS.values():
        return invalid_command(f"not a fox command: {command!r}", type="a fox command")
    name = _type_name(command)
    if phase == PHASE_FOX:
        return illegal(
            "pending_fox_decision",
            f"{name}: your Fox is waiting for exchange_decree or keep_decree",
        )
    if phase == PHASE_WOODCUTTER:
        return illegal(
            "pending_woodcutter_return", f"{name}: your Woodcutter is waiting for return_card"
        )
    return illegal("wrong_phase", f"{name} is not possible now: play a card")
