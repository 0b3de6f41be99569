"""Fox's rules, written once: the kernel (``shared/games/kernel.py``) and its read-only rules.

``FoxKernel`` holds the whole game in one slot per field of ``StateFields`` (``state.py``),
named as there: thawing a frozen ``State`` is one unpacking into the slots, freezing one tuple
of them, and a copy for search both (every field is an int or an immutable tuple). The hot
path reads and writes slots, the cheapest field access CPython has (a list indexed by named
constants costs three instructions a read). Its ``_on_<event>`` mutators are the only
statement of how each event changes the state; ``apply`` checks a command against the rules and hands each
event to ``emit`` as it goes. The engine's ``decide``/``evolve`` are derived from it
(``decide_with``/``evolve_with``), and search plays on it directly: a play-out on a lean
kernel (no deductions kept), each command drawn from the kernel's listing and applied past
the checks (``apply_listed``, the mutators run without ``emit``). Three mutators state their
rule from the event's fields (``_card_played``, ``_round_scored``, ``_game_ended``), so that a
play-out, which records nothing, builds no event object for its moves and its round's end.

Speed is part of the rules' shape here: the hot path (a card played) reads tables built at
import (the trick's result, the deductions a follow sets, who acts next), hands out shared
event objects and takes the trick already with the card that completes it, so ``trick_won``
is the record of what the rules decided and changes nothing (``INERT``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from shared.games import errors
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
from shared.games.fox.setup import _deal_event, _draw_deal, _shuffle
from shared.games.fox.state import (
    _GAME,
    _HAND0,
    _HAND1,
    _LEAD,
    _PHASE,
    _TURN,
    Game,
    State,
    StateFields,
)
from shared.games.kernel import Emit, Kernel
from shared.games.rng import Rng

_new = object.__new__
# ``voids`` at or above this holds a "hand or deck" set (``deductions``: they sit above the rest).
_ANY_UNDER = 1 << min(_UNDER_SHIFT)
_new_game = tuple.__new__  # Game from a tuple, in C (NamedTuple's own __new__ is Python)


class FoxKernel(Kernel):
    """The mutable Fox game: one slot per field of ``StateFields`` (see ``state.py``), named
    and ordered as there, and ``lean``.

    A **lean** kernel (``thaw_lean``, for a random play-out) keeps only what the rules read:
    its mutators skip the deductions that views and determinizations read and the rules do not
    (``played``, ``known``, ``returned``, ``voids``, ``last``: one ``if`` in each mutator),
    so those fields are stale and it cannot be frozen or copied; and it plays to the end of
    its round, where the next deal is drawn as the rules draw it and not dealt (a play-out
    reads the scores there). Hands, tricks, scores, the decree, the deck, whose turn, the
    trick on the table and every draw are those of the plain kernel, move for move
    (``tests/unit/test_fox_kernel_lean.py``).
    """

    # A slot read is one instruction where a list field indexed by a named constant is three:
    # the play-out's hot path reads and writes a dozen fields a move.
    __slots__ = ("phase", "turn", "hand0", "hand1", "leader", "lead", "second", "played",
                 "decree", "deck", "tally", "known", "returned", "voids", "last", "game",
                 "lean")  # fmt: skip

    EVENTS: ClassVar[dict[str, type]] = EVENTS
    INERT: ClassVar[tuple[str, ...]] = (
        "trick_won",
    )  # taken with the trick's last card: see module doc
    # Its listings hand out the shared command objects of ``messages`` (one per command), the
    # ones ``parse_command`` returns (``tests/unit/test_fox_search_fast.py``).
    SHARED_COMMANDS: ClassVar[bool] = True

    phase: int
    turn: int
    hand0: int
    hand1: int
    leader: int
    lead: int
    second: int
    played: int
    decree: int
    deck: tuple[int, ...]
    tally: int
    known: tuple[int, int]
    returned: tuple[int, int]
    voids: int
    last: tuple[int, int, int, int] | None
    game: Game
    lean: bool

    # --- frozen state in and out ----------------------------------------------------------

    @classmethod
    def thaw(cls, state: State) -> FoxKernel:
        """A kernel holding ``state`` (any state: any phase, round, or determinization)."""
        kernel: FoxKernel = _new(cls)
        _load(kernel, state)
        kernel.lean = False
        return kernel

    @classmethod
    def thaw_lean(cls, state: State) -> FoxKernel:
        """A lean kernel holding ``state``, for a play-out (see the class)."""
        kernel: FoxKernel = _new(cls)
        _load(kernel, state)
        kernel.lean = True
        return kernel

    @classmethod
    def start(cls, event: GameStarted) -> FoxKernel:
        """The kernel ``game_started`` creates (``evolve(None, event)``)."""
        kernel: FoxKernel = _new(cls)
        kernel.lean = False
        kernel._on_game_started(event)
        return kernel

    def freeze(self) -> State:
        """The engine's frozen ``State`` (a plain tuple, ``==`` the pure engine's own)."""
        if self.lean:
            raise ValueError("a lean kernel's deductions are stale: it has no state to freeze")
        return (self.phase, self.turn, self.hand0, self.hand1, self.leader, self.lead,
                self.second, self.played, self.decree, self.deck, self.tally, self.known,
                self.returned, self.voids, self.last, self.game)  # fmt: skip

    def copy(self) -> FoxKernel:
        """An independent copy (every field is immutable: copying the slots is a deep copy)."""
        kernel: FoxKernel = _new(FoxKernel)
        _load(kernel, self.freeze())
        kernel.lean = False
        return kernel

    # --- read-only rules ------------------------------------------------------------------

    def to_act(self) -> tuple[int, ...]:
        """The seat that must send a command now (empty between rounds and after the game)."""
        return _TO_ACT[self.turn]

    def legal_commands(self, seat: int) -> list[Any]:
        """Every command ``seat`` may send now; empty when it is not theirs to act."""
        if seat != self.turn:
            return []
        return list(_legal(self.phase, self.hand1 if seat else self.hand0, self.lead))

    def outcome(self) -> dict[str, Any] | None:
        """None while the game runs; then scores, winners, ranks and whether it is a draw."""
        return _outcome(self.phase, self.game)

    def winners(self) -> tuple[int, ...] | None:
        """``outcome()["winners"]`` (None while the game runs), without the outcome's dict."""
        if self.phase != PHASE_OVER:
            return None
        return _WINNERS[_final_ranks(self.game)]

    # --- commands -------------------------------------------------------------------------

    def apply(self, seat: int, command: Any, rng: Rng, emit: Emit) -> None:
        """``command`` by ``seat`` checked against the rules (``GameError`` naming the rule,
        before any event), then its events handed to ``emit`` in order (``apply_listed``).

        ``rng`` is used only when the command ends a round that the game outlives (the next
        deal: one ``rng.below(33! / 13!)``, see ``setup._shuffle``).
        """
        if seat != self.turn:
            raise _not_to_act(self.phase, seat)
        phase = self.phase
        kind = type(command)
        hand = self.hand1 if seat else self.hand0
        if not phase:
            if kind is not Play:
                raise _wrong_command(PHASE_PLAY, command)
            card = command.card  # an int 0..32: Play checks it when built
            if not hand >> card & 1:
                raise illegal("card_not_in_hand", f"{_card_name(card)} is not in your hand")
            lead = self.lead
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
        elif phase == PHASE_FOX and kind is KeepDecree:
            pass
        elif (phase == PHASE_FOX and kind is ExchangeDecree) or (
            phase == PHASE_WOODCUTTER and kind is ReturnCard
        ):
            card = command.card
            if not hand >> card & 1:
                raise illegal("card_not_in_hand", f"{_card_name(card)} is not in your hand")
        else:
            raise _wrong_command(phase, command)
        self.apply_listed(seat, command, rng, emit)

    def apply_listed(self, seat: int, command: Any, rng: Rng, emit: Emit | None) -> None:
        """``apply`` past its checks, for a command of this kernel's own listing: ``command``
        must be one of ``legal_commands(seat)`` now (a play-out draws its commands from that
        listing, which these same rules generate: checking them again would only repeat it;
        anything else is ``apply``'s to refuse, and here it makes a wrong state).

        ``emit`` as ``apply``'s, or None when nothing records the events (a play-out): the
        kernel then runs each event's mutator itself, and leaves out ``trick_won``, whose
        mutator changes nothing (``INERT``). Either way the same events, in the same order.
        """
        if self.phase:  # a Fox or Woodcutter waits for its owner
            self._answer(seat, command, rng, emit)
            return
        # Playing a card is the hot path of search bots' play-outs: literals and tables; with
        # nothing recording, ``card_played``'s rule runs from its fields (no event looked up).
        card = command.card
        rank0 = card % 11  # rank - 1
        if rank0 == 4:  # Woodcutter: the draw is the deck's top card; the return comes next
            drawn = _CARD_DRAWN[seat][self.deck[0]]
            if emit is None:
                self._card_played(seat, card)
                self._on_card_drawn(drawn)
            else:
                emit(_CARD_PLAYED[seat][card])
                emit(drawn)
            return
        lead = self.lead
        if lead < 0 or rank0 == 2:  # a lead, or a Fox whose owner decides before the trick ends
            if emit is None:
                self._card_played(seat, card)
            else:
                emit(_CARD_PLAYED[seat][card])
            return
        # The trick's second card: its mutator takes the trick (by the table ``won`` is from).
        if emit is None:
            self._card_played(seat, card)
        else:
            won = _TRICK_RESULT[self.leader * 33 + self.decree][lead * 33 + card][0]
            emit(_CARD_PLAYED[seat][card])
            emit(won)
        if self.tally & 15 == TRICKS_PER_ROUND:  # the low 4 bits count the tricks taken
            self._end_round(rng, emit)

    def _answer(self, seat: int, command: Any, rng: Rng, emit: Emit | None) -> None:
        """The owner's answer to a Fox (exchange or keep) or a Woodcutter (return a card), as
        ``apply_listed`` takes it: checked by ``apply``, or listed."""
        kind = type(command)
        decree = self.decree
        if kind is KeepDecree:
            event: Any = _DECREE_KEPT[seat]
        elif kind is ExchangeDecree:
            new = command.card
            event = _DECREE_EXCHANGED[seat][new * 33 + decree]
            decree = new  # already trump for this trick
        else:
            event = _CARD_RETURNED[seat][command.card]
        second = self.second
        # With the lead, the follower plays next; with the trick's second card, the trick is
        # taken now (by the mutator: ``won`` is from its table).
        if emit is None:
            self.on(event)
            if second < 0:
                return
        elif second < 0:
            emit(event)
            return
        else:
            won = _TRICK_RESULT[self.leader * 33 + decree][self.lead * 33 + second][0]
            emit(event)
            emit(won)
        if self.tally & 15 == TRICKS_PER_ROUND:
            self._end_round(rng, emit)

    def _end_round(self, rng: Rng, emit: Emit | None) -> None:
        """After the 13th trick: ``round_scored``, then the next deal or ``game_ended``.

        With ``emit`` None (nothing records the events: a play-out) the mutators' own rules
        (``_round_scored``, ``_game_ended``) run without the event objects being built."""
        tally = self.tally
        tricks = (tally >> 4 & 15, tally >> 8 & 15)
        treasure = (tally >> 12 & 15, tally >> 16 & 15)
        points = (SCORE_BY_TRICKS[tricks[0]], SCORE_BY_TRICKS[tricks[1]])
        total = (points[0] + treasure[0], points[1] + treasure[1])
        game = self.game
        scores = (game.scores[0] + total[0], game.scores[1] + total[1])
        over = max(scores) >= game.target
        if emit is None:
            self._round_scored(tricks, points, treasure, total, scores)
            if over:
                self._game_ended()
                return
        else:
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
            if over:
                ranks = _ranks(scores, total)
                winners = _WINNERS[ranks]
                emit(GameEnded(scores=scores, winners=winners, ranks=ranks, draw=len(winners) == 2))
                return
        if self.lean:
            # A lean kernel plays to the round's end (a play-out reads the scores there): the
            # next deal is drawn as the rules draw it, and not dealt.
            _draw_deal(rng)
        else:
            (emit or self.on)(_deal_event(game.round + 1, 1 - game.dealer, _shuffle(rng)))

    # --- mutators: the only statement of how each event changes the state -----------------

    def _on_game_started(self, e: GameStarted) -> None:
        game = Game(e.target, e.first_dealer, e.first_dealer, 0, (0, 0), ())
        _load(self, (PHASE_PLAY, NOBODY, 0, 0, 1 - e.first_dealer, -1, -1, 0, -1, (), 0, (0, 0),
                     (0, 0), 0, None, game))  # fmt: skip

    def _on_round_dealt(self, e: RoundDealt) -> None:
        target, first_dealer, _, _, scores, history = self.game
        game = _new_game(Game, (target, first_dealer, e.dealer, e.round, scores, history))
        first = 1 - e.dealer  # the non-dealer leads the first trick
        _load(self, (PHASE_PLAY, first, _mask(e.hands[0]), _mask(e.hands[1]), first, -1, -1, 0,
                     e.decree, tuple(e.deck), 0, (0, 0), (0, 0), 0, None, game))  # fmt: skip

    def _on_card_played(self, e: CardPlayed) -> None:
        self._card_played(e.seat, e.card)

    def _card_played(self, seat: int, card: int) -> None:
        """``card_played``'s rule, from its fields (a play-out's moves build no event)."""
        bit = 1 << card
        if seat:
            self.hand1 ^= bit
        else:
            self.hand0 ^= bit
        lead = self.lead
        if not self.lean:
            self.played |= bit
            known = self.known
            if known[seat] & bit:
                self.known = (known[0] & ~bit, known[1] & ~bit)
            voids = self.voids
            # (No "hand or deck" set at all, the common case, is one comparison.)
            if voids >= _ANY_UNDER and voids >> _UNDER_SHIFT[seat] & bit:  # not under the deck
                voids = _drop_under(voids, seat, bit)
            if lead >= 0:
                # A follower off the led suit has none of it; one answering a Monarch with a
                # card of its suit other than the 1 has none higher.
                voids |= _VOID_IF_PLAYED[seat][lead * 33 + card]
            self.voids = voids
        phase, turn = _AFTER_PLAY[seat][card]
        if lead < 0:
            self.phase = phase
            self.turn = turn
            self.lead = card
            self.second = -1
            return
        if phase:  # a Fox or Woodcutter as the second card: the trick waits for its owner
            self.phase = phase
            self.turn = turn
            self.second = card
            return
        _take_trick(self, card)

    def _on_decree_exchanged(self, e: DecreeExchanged) -> None:
        seat, new, old = e.seat, e.card, e.old
        if seat:
            self.hand1 ^= (1 << new) | (1 << old)
        else:
            self.hand0 ^= (1 << new) | (1 << old)
        self.decree = new
        if not self.lean:
            # The old decree card is now publicly known to be in this hand. The seat's voids
            # stay: the hand holds no other card of those suits than its known cards.
            known = self.known
            if seat:
                self.known = (known[0], known[1] & ~(1 << new) | 1 << old)
            else:
                self.known = (known[0] & ~(1 << new) | 1 << old, known[1])
            voids = self.voids
            if voids >> _UNDER_SHIFT[seat] & 1 << new:  # it was in the hand, not under the deck
                self.voids = _drop_under(voids, seat, 1 << new)
        _effect_done(self, seat)

    def _on_decree_kept(self, e: DecreeKept) -> None:
        _effect_done(self, e.seat)

    def _on_card_drawn(self, e: CardDrawn) -> None:
        if e.seat:
            self.hand1 |= 1 << e.card
        else:
            self.hand0 |= 1 << e.card
        self.deck = self.deck[1:]
        if not self.lean:
            # The drawn card is hidden from the other seat: it may be of a suit this seat
            # lacked, or higher than a Monarch answer showed. A deck slot known to hold a card
            # of a "hand or deck" set moves up one; drawn, it ends that set (the drawer took
            # the card, unseen).
            voids = self.voids & _KEEP_VOIDS_OF_OTHER[e.seat]
            if voids >> _UNDER_SHIFT[0]:
                voids = _under_drawn(voids)
            self.voids = voids

    def _on_card_returned(self, e: CardReturned) -> None:
        seat, card = e.seat, e.card
        bit = 1 << card
        if seat:
            self.hand1 ^= bit
        else:
            self.hand0 ^= bit
        deck = self.deck
        self.deck = deck + (card,)
        if not self.lean:
            # The other seat cannot see which card went under the deck, so a card it knew to be
            # in this hand may be at the deck's bottom now: this hand's known cards become a
            # "hand or deck" set (all in the hand but at most one, which is in that slot).
            known = self.known
            self.voids = _set_under(self.voids, seat, known[seat], len(deck))
            returned = self.returned
            if seat:
                self.known = (known[0], 0)
                self.returned = (returned[0], returned[1] | bit)
            else:
                self.known = (0, known[1])
                self.returned = (returned[0] | bit, returned[1])
        _effect_done(self, seat)

    def _on_round_scored(self, e: RoundScored) -> None:
        self._round_scored(e.tricks, e.points, e.treasure, e.total, e.scores)

    def _round_scored(
        self,
        tricks: tuple[int, int],
        points: tuple[int, int],
        treasure: tuple[int, int],
        total: tuple[int, int],
        scores: tuple[int, int],
    ) -> None:
        """``round_scored``'s rule, from its fields (a play-out's round end builds no event)."""
        target, first_dealer, dealer, round_, _, history = self.game
        history += ((tricks, points, treasure, total),)
        self.game = _new_game(Game, (target, first_dealer, dealer, round_, scores, history))
        # The round's Treasure is in the new totals now; its tricks stay visible until the deal.
        self.tally &= 0xFFF
        self.turn = NOBODY

    def _on_game_ended(self, e: GameEnded) -> None:
        self._game_ended()

    def _game_ended(self) -> None:
        """``game_ended``'s rule (its fields are the record of the scores: nothing here)."""
        self.phase = PHASE_OVER
        self.turn = NOBODY


if FoxKernel.__slots__[:-1] != StateFields._fields:  # thaw and freeze read and write in order
    raise TypeError("FoxKernel's slots are not StateFields' fields, in order")


def _load(k: FoxKernel, state: State) -> None:
    """Every slot of ``k`` from a ``State`` (``StateFields``' order): thaw, copy, deal."""
    (k.phase, k.turn, k.hand0, k.hand1, k.leader, k.lead, k.second, k.played, k.decree, k.deck,
     k.tally, k.known, k.returned, k.voids, k.last, k.game) = state  # fmt: skip


def _effect_done(k: FoxKernel, seat: int) -> None:
    """A Fox or Woodcutter answered: the follower plays next, or (the effect came with the
    trick's second card) the trick is taken now, with the decree as it is now."""
    second = k.second
    if second < 0:
        k.phase = PHASE_PLAY
        k.turn = 1 - seat
        return
    _take_trick(k, second)


def _take_trick(k: FoxKernel, second: int) -> None:
    """The trick (lead, ``second``) is decided, as ``trick_won`` tells; the next one opens."""
    leader, lead = k.leader, k.lead
    won, delta = _TRICK_RESULT[leader * 33 + k.decree][lead * 33 + second]
    nxt = won.next_leader
    k.phase = PHASE_PLAY
    k.turn = nxt
    k.leader = nxt
    k.lead = -1
    k.second = -1
    k.tally += delta
    if not k.lean:
        k.last = (leader, lead, second, won.winner)


# --- the read-only rules, shared by the kernel and the frozen state's functions ---------------


def _legal(phase: int, hand: int, lead: int) -> tuple[Any, ...]:
    """The commands of the seat to act holding ``hand``, in the listing order search draws
    from (the shared command objects; tables by suit: [suit][the suit's 11 bits]). A tuple:
    a follow's is the table's own, so the play-out's most common listing builds nothing."""
    if not phase:
        if lead >= 0:
            held = hand >> _FOLLOW_SHIFT[lead] & 0x7FF
            if held:
                if lead % 11 == 10:  # Monarch led: the 1 or the highest of the suit
                    held = (held & 1) | (1 << (held.bit_length() - 1))
                return _FOLLOW_PLAYS[lead][held]
        return _PLAYS0[hand & 0x7FF] + _PLAYS1[hand >> 11 & 0x7FF] + _PLAYS2[hand >> 22]
    if phase == PHASE_FOX:
        e0, e1, e2 = _EXCHANGES
        return (KEEP_DECREE, *e0[hand & 0x7FF], *e1[hand >> 11 & 0x7FF], *e2[hand >> 22])
    r0, r1, r2 = _RETURNS
    return r0[hand & 0x7FF] + r1[hand >> 11 & 0x7FF] + r2[hand >> 22]


def _outcome(phase: int, game: Game) -> dict[str, Any] | None:
    """Most points wins; a tie goes to more points in the last round; still tied, both win."""
    if phase != PHASE_OVER:
        return None
    ranks = _final_ranks(game)
    winners = _WINNERS[ranks]
    return {"scores": list(game.scores), "winners": list(winners), "ranks": list(ranks),
            "draw": len(winners) == 2}  # fmt: skip


def _final_ranks(game: Game) -> tuple[int, int]:
    """The ranks of a finished game: by its scores, a tie by the last round's points."""
    return _ranks(game.scores, game.history[-1][3] if game.history else (0, 0))


def _ranks(scores: tuple[int, int], last: tuple[int, int]) -> tuple[int, int]:
    """Each seat's rank (1 = best, a tie shares 1) by its points, a tie broken by its points in
    the last round: ``base.ranks_from_scores`` for two seats, without its loops (the end of
    every play-out of a one-round game asks twice)."""
    mine, theirs = (scores[0], last[0]), (scores[1], last[1])
    return (1 + (theirs > mine), 1 + (mine > theirs))


# Ranks -> the winners, in seat order.
_WINNERS = {(1, 1): (0, 1), (1, 2): (0,), (2, 1): (1,)}


def legal_commands(state: State, seat: int) -> list[Any]:
    """Every command ``seat`` may send now; empty when it is not theirs to act."""
    if seat != state[_TURN]:
        return []
    return list(_legal(state[_PHASE], state[_HAND1] if seat else state[_HAND0], state[_LEAD]))


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
