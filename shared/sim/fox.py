"""A fast simulator of The Fox in the Forest for search play-outs, equal to ``shared.games.fox``.

The pure engine (``shared.games.fox``) stays the source of truth; this module plays the same
rules on mutable ints so that a search bot's random play-outs cost less. Two ways in:

* ``Sim``: the engine's whole state as mutable slots (every field, also the public knowledge
  the rules never read: known cards, the deductions in ``voids``, cards returned, the last
  trick, the history). Its ``apply`` has the effect of ``decide`` folded through ``evolve``
  and draws from the ``Rng`` in the same calls, so ``to_state`` gives back the engine's own
  state and a new deal is the engine's deal. Property tests step it next to the engine.
* ``random_playout``: the ``Rollout`` of ``shared.bots.ismcts`` in one function of locals. It
  keeps only what decides the game (hands, trick, decree, deck, tally, scores), builds no
  command or event objects and draws with ``getrandbits``. Its choices are uniform among the
  legal commands and its deals are the engine's uniform deals; moreover it makes its draws in
  the order the engine-driven play-out does, so a ``random.Random`` whose ``_randbelow`` draws
  the way ``Draws.below`` does makes ``ismcts.random_playout`` play the very same game (the
  tests use that to prove the two equal move for move).

Rules are reused from the engine where it keeps them in tables or helpers (the trick table,
the deal's shuffle, the Monarch answers, the command listings, the deduction bits), so that
there is one statement of each rule; they are private names of ``shared.games.fox``, so a
rename there fails this module at import, and a change of meaning fails the property tests.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from shared.bots import ismcts
from shared.games import fox
from shared.games.base import ranks_from_scores

T = TypeVar("T")

# The search's own cap and reward rule (ismcts finds this module by name at run time, so the
# import does not go round in a circle).
PLAYOUT_CAP = ismcts.PLAYOUT_CAP
rewards = ismcts.rewards

_PHASE_PLAY, _PHASE_FOX, _PHASE_WOODCUTTER, _PHASE_OVER = (
    fox.PHASE_PLAY,
    fox.PHASE_FOX,
    fox.PHASE_WOODCUTTER,
    fox.PHASE_OVER,
)
_NOBODY = fox.NOBODY
_TO_ACT = fox._TO_ACT
_SCORE_BY_TRICKS = fox.SCORE_BY_TRICKS
# At most 26 plays and 6 Fox or Woodcutter decisions (each of those cards is played once).
_MAX_ROUND_MOVES = 2 * fox.TRICKS_PER_ROUND + 6

# The engine's own command objects and by-suit listings, so that ``legal_commands`` hands out
# the very objects (and order) ``fox.legal_commands`` does.
_KEEP_DECREE = fox.KEEP_DECREE
_PLAYS0, _PLAYS1, _PLAYS2 = fox._PLAYS
_EXCHANGES = fox._EXCHANGES
_RETURNS = fox._RETURNS
_FOLLOW_PLAYS = fox._FOLLOW_PLAYS
_FOLLOW_SHIFT = fox._FOLLOW_SHIFT
_SUIT_MASK_OF = fox._SUIT_MASK_OF
_VOID_IF_PLAYED = fox._VOID_IF_PLAYED
_KEEP_VOIDS_OF_OTHER = fox._KEEP_VOIDS_OF_OTHER
_monarch_answers = fox._monarch_answers
_shuffle = fox._shuffle
# The engine's deductions (StateFields.voids: voids, rank caps, "hand or deck" sets), kept with
# its own helpers: no rule reads them, so only ``Sim`` carries them, never the play-out.
_UNDER_SHIFT = fox._UNDER_SHIFT
_drop_under = fox._drop_under
_set_under = fox._set_under
_under_drawn = fox._under_drawn

# The trick table, flattened: [(leader * 33 + decree) * 1089 + lead * 33 + second] ->
# (next leader, what the trick adds to the tally). From the engine's table, so one rule.
_TRICK: tuple[tuple[int, int], ...] = tuple(
    (won.next_leader, delta) for row in fox._TRICK_RESULT for won, delta in row
)

# [11-bit mask of one suit's ranks] -> that suit's card ints, ascending: the order of the
# engine's listings, so that an index drawn here is an index into ``fox.legal_commands``.
_CARDS_BY_SUIT: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(suit * 11 + r for r in range(11) if m >> r & 1) for m in range(2048))
    for suit in range(3)
)
_CARDS0, _CARDS1, _CARDS2 = _CARDS_BY_SUIT
# [lead] -> [11 bits of the follower's cards of the led suit] -> the cards it may follow with
# (under a led Monarch only the 1 and the highest); empty when it holds none of the suit.
_FOLLOW: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        _CARDS_BY_SUIT[lead // 11][(m & 1) | (1 << (m.bit_length() - 1)) if m else 0]
        if lead % 11 == fox.MONARCH - 1
        else _CARDS_BY_SUIT[lead // 11][m]
        for m in range(2048)
    )
    for lead in range(fox.CARD_COUNT)
)
# Fox or Woodcutter: what playing the card asks its owner (1 Fox, 2 Woodcutter, else 0).
_EFFECT = tuple(
    1 if c % 11 == fox.FOX - 1 else 2 if c % 11 == fox.WOODCUTTER - 1 else 0
    for c in range(fox.CARD_COUNT)
)
# [n] -> bits per try of a uniform draw below n (n >= 2): the fewest that cover 0..n-1.
_BITS_BELOW = tuple(max(n - 1, 0).bit_length() for n in range(64))
_BIT = tuple(1 << c for c in range(fox.CARD_COUNT))
_DEAL_CHOICES = fox._DEAL_CHOICES
_DEAL_BITS = (_DEAL_CHOICES - 1).bit_length()
_RADIX_GROUPS = fox._RADIX_GROUPS


class Draws:
    """The engines' ``Rng`` interface (``below``, ``choice``, ``shuffle``) over a
    ``random.Random``, drawing exactly as ``random_playout`` does: ``below(n)`` takes
    ``(n - 1).bit_length()`` bits per try from ``getrandbits`` until the value is below ``n``,
    and nothing at all for ``n == 1``."""

    __slots__ = ("_getrandbits",)

    def __init__(self, rand: random.Random) -> None:
        self._getrandbits: Callable[[int], int] = rand.getrandbits

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 1:
            if n == 1:
                return 0
            raise ValueError("n must be positive")
        k = (n - 1).bit_length()
        getrandbits = self._getrandbits
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return r

    def choice(self, items: Sequence[T]) -> T:
        """One uniformly chosen item."""
        return items[self.below(len(items))]

    def shuffle(self, items: Sequence[T]) -> tuple[T, ...]:
        """A Fisher-Yates shuffled copy of ``items`` (from the end, as ``Rng.shuffle``)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return tuple(out)


class Sim:
    """The engine's state as mutable slots (see ``fox.StateFields`` for each field's meaning);
    per-seat pairs are lists indexed by seat, ``deck`` a list (top first), ``history`` a list.
    """

    __slots__ = (
        "phase",
        "turn",
        "hands",
        "leader",
        "lead",
        "second",
        "played",
        "decree",
        "deck",
        "tally",
        "known",
        "returned",
        "voids",
        "last",
        "target",
        "first_dealer",
        "dealer",
        "round",
        "scores",
        "history",
    )

    phase: int
    turn: int
    hands: list[int]
    leader: int
    lead: int
    second: int
    played: int
    decree: int
    deck: list[int]
    tally: int
    known: list[int]
    returned: list[int]
    voids: int
    last: tuple[int, int, int, int] | None
    target: int
    first_dealer: int
    dealer: int
    round: int
    scores: list[int]
    history: list[tuple[tuple[int, int], ...]]

    @classmethod
    def from_state(cls, state: fox.State) -> Sim:
        """A simulation of ``state`` (any engine state: any phase, round, or determinization)."""
        (phase, turn, h0, h1, leader, lead, second, played, decree, deck, tally, known, returned,
         voids, last, game) = state  # fmt: skip
        target, first_dealer, dealer, round_, scores, history = game
        sim = cls.__new__(cls)
        sim.phase = phase
        sim.turn = turn
        sim.hands = [h0, h1]
        sim.leader = leader
        sim.lead = lead
        sim.second = second
        sim.played = played
        sim.decree = decree
        sim.deck = list(deck)
        sim.tally = tally
        sim.known = list(known)
        sim.returned = list(returned)
        sim.voids = voids
        sim.last = last
        sim.target = target
        sim.first_dealer = first_dealer
        sim.dealer = dealer
        sim.round = round_
        sim.scores = list(scores)
        sim.history = list(history)
        return sim

    def copy(self) -> Sim:
        """An independent copy (for a search that branches from one simulation)."""
        sim = Sim.__new__(Sim)
        for name in Sim.__slots__:
            value = getattr(self, name)
            setattr(sim, name, value.copy() if type(value) is list else value)
        return sim

    def to_state(self) -> fox.State:
        """The engine's immutable state for this simulation (``==`` the engine's own)."""
        game = fox.Game(
            self.target,
            self.first_dealer,
            self.dealer,
            self.round,
            (self.scores[0], self.scores[1]),
            tuple(self.history),
        )
        return (
            self.phase,
            self.turn,
            self.hands[0],
            self.hands[1],
            self.leader,
            self.lead,
            self.second,
            self.played,
            self.decree,
            tuple(self.deck),
            self.tally,
            (self.known[0], self.known[1]),
            (self.returned[0], self.returned[1]),
            self.voids,
            self.last,
            game,
        )

    def to_act(self) -> tuple[int, ...]:
        """``fox.to_act``: the seat that must send a command now, or ``()``."""
        return _TO_ACT[self.turn]

    def legal_commands(self, seat: int) -> list[Any]:
        """``fox.legal_commands``: the same command objects in the same order."""
        if seat != self.turn:
            return []
        hand = self.hands[seat]
        phase = self.phase
        if not phase:
            lead = self.lead
            if lead >= 0:
                held = hand >> _FOLLOW_SHIFT[lead] & 0x7FF
                if held:
                    if lead % 11 == 10:  # under a led Monarch: the 1 or the highest
                        held = (held & 1) | (1 << (held.bit_length() - 1))
                    return list(_FOLLOW_PLAYS[lead][held])
            return [*_PLAYS0[hand & 0x7FF], *_PLAYS1[hand >> 11 & 0x7FF], *_PLAYS2[hand >> 22]]
        if phase == _PHASE_FOX:
            e0, e1, e2 = _EXCHANGES
            return [_KEEP_DECREE, *e0[hand & 0x7FF], *e1[hand >> 11 & 0x7FF], *e2[hand >> 22]]
        r0, r1, r2 = _RETURNS
        return [*r0[hand & 0x7FF], *r1[hand >> 11 & 0x7FF], *r2[hand >> 22]]

    def outcome(self) -> dict[str, Any] | None:
        """``fox.outcome``: None while the game runs, else the same dict."""
        if self.phase != _PHASE_OVER:
            return None
        scores = list(self.scores)
        last = list(self.history[-1][3]) if self.history else [0, 0]
        ranks = ranks_from_scores(scores, last)
        winners = [s for s in (0, 1) if ranks[s] == 1]
        return {"scores": scores, "winners": winners, "ranks": ranks, "draw": len(winners) == 2}

    def apply(self, seat: int, command: Any, rng: Any) -> None:
        """What folding ``fox.decide(state, seat, command, rng)`` through ``fox.evolve`` does to
        the state, drawing from ``rng`` in the same calls (only a round's end that the game
        outlives draws: the next deal). Raises the engine's ``GameError`` for a command the
        engine refuses, and then changes nothing."""
        if seat != self.turn:
            self._refuse(seat, command)
        phase = self.phase
        kind = type(command)
        hands = self.hands
        if not phase:
            if kind is not fox.Play:
                self._refuse(seat, command)
            card = command.card
            hand = hands[seat]
            if not hand >> card & 1:
                self._refuse(seat, command)
            lead = self.lead
            if lead >= 0:
                held = hand & _SUIT_MASK_OF[lead]
                if held and (
                    not held >> card & 1
                    or (lead % 11 == 10 and not _monarch_answers(held) >> card & 1)
                ):
                    self._refuse(seat, command)
            bit = 1 << card
            hands[seat] = hand ^ bit
            self.played |= bit
            known = self.known
            if known[seat] & bit:
                known[0] &= ~bit
                known[1] &= ~bit
            if self.voids >> _UNDER_SHIFT[seat] & bit:  # it was in the hand, not under the deck
                self.voids = _drop_under(self.voids, seat, bit)
            effect = _EFFECT[card]
            if lead >= 0:
                self.voids |= _VOID_IF_PLAYED[seat][lead * 33 + card]
            if effect:
                self.phase = _PHASE_FOX if effect == 1 else _PHASE_WOODCUTTER
                self.turn = seat
                if lead < 0:
                    self.lead = card
                else:
                    self.second = card
                if effect == 2:  # the Woodcutter draws at once (the engine's card_drawn)
                    deck = self.deck
                    hands[seat] |= 1 << deck.pop(0)
                    # The drawn card is hidden: it may be of a suit this seat lacked.
                    voids = self.voids & _KEEP_VOIDS_OF_OTHER[seat]
                    self.voids = _under_drawn(voids) if voids >> _UNDER_SHIFT[0] else voids
                return
            if lead < 0:
                self.lead = card
                self.turn = 1 - seat
                return
            self._take_trick(card, rng)
            return
        if phase == _PHASE_FOX and kind is fox.KeepDecree:
            pass
        elif phase == _PHASE_FOX and kind is fox.ExchangeDecree:
            new = command.card
            hand = hands[seat]
            if not hand >> new & 1:
                self._refuse(seat, command)
            old = self.decree
            hands[seat] = hand ^ (1 << new | 1 << old)
            # The old decree card is publicly known to be in this hand now.
            self.known[seat] = self.known[seat] & ~(1 << new) | 1 << old
            if self.voids >> _UNDER_SHIFT[seat] & 1 << new:
                self.voids = _drop_under(self.voids, seat, 1 << new)
            self.decree = new
        elif phase == _PHASE_WOODCUTTER and kind is fox.ReturnCard:
            card = command.card
            hand = hands[seat]
            if not hand >> card & 1:
                self._refuse(seat, command)
            bit = 1 << card
            hands[seat] = hand ^ bit
            # Unseen, the card under the deck may be one the other seat knew in this hand: those
            # become a "hand or deck" set.
            self.voids = _set_under(self.voids, seat, self.known[seat], len(self.deck))
            self.known[seat] = 0
            self.returned[seat] |= bit
            self.deck.append(card)
        else:
            self._refuse(seat, command)
        self.phase = _PHASE_PLAY
        second = self.second
        if second < 0:  # the effect came with the lead: the follower plays next
            self.turn = 1 - seat
            return
        self._take_trick(second, rng)

    def _take_trick(self, second: int, rng: Any) -> None:
        """The trick (``lead``, ``second``) is decided; a 13th trick ends the round."""
        leader, lead = self.leader, self.lead
        nxt, delta = _TRICK[(leader * 33 + self.decree) * 1089 + lead * 33 + second]
        tally = self.tally
        self.tally = tally + delta
        self.last = (leader, lead, second, delta >> 8 & 1)  # bit 8: a trick won by seat 1
        self.phase = _PHASE_PLAY
        self.turn = nxt
        self.leader = nxt
        self.lead = -1
        self.second = -1
        if tally & 15 == fox.TRICKS_PER_ROUND - 1:
            self._end_round(rng)

    def _end_round(self, rng: Any) -> None:
        """The round's score, then the next deal (drawn from ``rng`` as the engine draws it) or
        the end of the game."""
        tally = self.tally
        tricks = (tally >> 4 & 15, tally >> 8 & 15)
        treasure = (tally >> 12 & 15, tally >> 16 & 15)
        points = (_SCORE_BY_TRICKS[tricks[0]], _SCORE_BY_TRICKS[tricks[1]])
        total = (points[0] + treasure[0], points[1] + treasure[1])
        scores = self.scores
        scores[0] += total[0]
        scores[1] += total[1]
        self.history.append((tricks, points, treasure, total))
        self.tally = tally & 0xFFF  # the Treasure is in the totals now; the tricks stay shown
        self.turn = _NOBODY
        if max(scores) >= self.target:
            self.phase = _PHASE_OVER
            return
        self._deal(_shuffle(rng))

    def _deal(self, shuffled: Sequence[int]) -> None:
        """The next round from the engine's shuffled 0..32 (see ``fox._deal_event``)."""
        dealer = 1 - self.dealer
        first = 1 - dealer  # the non-dealer leads the first trick
        self.round += 1
        self.dealer = dealer
        self.phase = _PHASE_PLAY
        self.turn = first
        self.hands = [_mask(shuffled[:13]), _mask(shuffled[13:26])]
        self.leader = first
        self.lead = -1
        self.second = -1
        self.played = 0
        self.decree = shuffled[26]
        self.deck = list(shuffled[27:])
        self.tally = 0
        self.known = [0, 0]
        self.returned = [0, 0]
        self.voids = 0
        self.last = None

    def _refuse(self, seat: int, command: Any) -> None:
        """Raises the engine's own error for a command it refuses (its code, rule and text)."""
        # The engine draws only after accepting a command: a refusal consumes no draw.
        fox.decide(self.to_state(), seat, command, _NO_DRAWS)
        raise AssertionError(f"the engine accepts {command!r} from seat {seat}; Sim refused it")


class _NoDraws:
    """An ``Rng`` for asking the engine why it refuses a command: any draw is a bug."""

    def below(self, n: int) -> int:
        raise AssertionError("a refused command drew")

    def choice(self, items: Sequence[T]) -> T:
        raise AssertionError("a refused command drew")

    def shuffle(self, items: Sequence[T]) -> tuple[T, ...]:
        raise AssertionError("a refused command drew")


_NO_DRAWS: Any = _NoDraws()


def _mask(cards: Sequence[int]) -> int:
    return sum(map(_BIT.__getitem__, cards))


# --- random play-outs ------------------------------------------------------------------------


def playout_rollout(engine: Any, state: fox.State, rand: random.Random) -> list[float]:
    """``random_playout`` with the ``shared.bots.ismcts.Rollout`` signature (``engine`` is
    ignored: it is Fox's), for ``ismcts.search(..., rollout=playout_rollout)``."""
    return random_playout(state, rand)


def random_playout(state: fox.State, rand: random.Random) -> list[float]:
    """Uniformly random legal commands from ``state`` to the end of the game, then the rewards
    (1 to the sole winner, 1/2 each for a draw, else 0): ``ismcts.random_playout`` for Fox,
    with its ``PLAYOUT_CAP`` (after that many moves, ``[1, 0]``, ``[0, 1]`` or ``[0.5, 0.5]`` by
    the scores with this round's Treasure).

    Each choice is ``Draws(rand).below(number of legal commands)`` as an index into
    ``fox.legal_commands`` and each deal ``fox._shuffle(Draws(rand))``, which makes it the same
    game as ``ismcts.random_playout`` given a ``random.Random`` that draws like ``Draws``.
    """
    (phase, turn, h0, h1, leader, lead, second, _, decree, deck_, tally, _, _, _, _,
     game) = state  # fmt: skip
    target, _, dealer, round_, scores, history = game
    if phase == _PHASE_OVER:
        last = history[-1][3] if history else (0, 0)
        return _rewards(scores[0], scores[1], last[0], last[1])
    if turn == _NOBODY:
        raise RuntimeError("fox: nobody is to act in a game that is not over")
    s0, s1 = scores
    hands = [h0, h1]
    deck = list(deck_)
    getrandbits = rand.getrandbits
    bits_below = _BITS_BELOW
    cards0, cards1, cards2 = _CARDS0, _CARDS1, _CARDS2
    follow_of, follow_shift, effect_of, trick = _FOLLOW, _FOLLOW_SHIFT, _EFFECT, _TRICK
    score_by_tricks = _SCORE_BY_TRICKS
    # Where in its trick the state is: 0 a lead to play, 1 the leader's Fox or Woodcutter to
    # answer, 2 the follower to play, 3 the follower's Fox or Woodcutter to answer. A pending
    # Woodcutter (effect 3) has drawn already and only returns a card.
    if lead < 0:
        stage = 0
    elif not phase:
        stage = 2
    else:
        stage = 1 if second < 0 else 3
    pending = 1 if phase == _PHASE_FOX else 3
    # Moves made, counted as the engine-driven play-out counts them against the cap: 26 plays
    # per round (less those already made in the first) plus one per Fox or Woodcutter.
    moves = -(2 * (tally & 15) + (lead >= 0) + (second >= 0))
    while True:
        while True:  # one trick
            if stage < 2:
                hand = hands[leader]
                if stage == 0:
                    t = cards0[hand & 0x7FF] + cards1[hand >> 11 & 0x7FF] + cards2[hand >> 22]
                    n = len(t)
                    if n > 1:
                        k = bits_below[n]
                        r = getrandbits(k)
                        while r >= n:
                            r = getrandbits(k)
                        lead = t[r]
                    else:
                        lead = t[0]
                    hand ^= 1 << lead
                    effect = effect_of[lead]
                else:
                    effect = pending
                if effect:
                    moves += 1
                    if effect == 1:  # Fox: keep (0) or exchange with the r-th card of the hand
                        t = cards0[hand & 0x7FF] + cards1[hand >> 11 & 0x7FF] + cards2[hand >> 22]
                        n = len(t) + 1
                        k = bits_below[n]
                        r = getrandbits(k)
                        while r >= n:
                            r = getrandbits(k)
                        if r:
                            new = t[r - 1]
                            hand ^= 1 << new | 1 << decree
                            decree = new
                    else:  # Woodcutter: draw the top card (unless done), return any card
                        if effect == 2:
                            hand |= 1 << deck.pop(0)
                        t = cards0[hand & 0x7FF] + cards1[hand >> 11 & 0x7FF] + cards2[hand >> 22]
                        n = len(t)
                        if n > 1:
                            k = bits_below[n]
                            r = getrandbits(k)
                            while r >= n:
                                r = getrandbits(k)
                            card = t[r]
                        else:
                            card = t[0]
                        hand ^= 1 << card
                        deck.append(card)
                hands[leader] = hand
            follower = 1 - leader
            hand = hands[follower]
            if stage < 3:
                t = follow_of[lead][hand >> follow_shift[lead] & 0x7FF]
                if not t:
                    t = cards0[hand & 0x7FF] + cards1[hand >> 11 & 0x7FF] + cards2[hand >> 22]
                n = len(t)
                if n > 1:
                    k = bits_below[n]
                    r = getrandbits(k)
                    while r >= n:
                        r = getrandbits(k)
                    second = t[r]
                else:
                    second = t[0]
                hand ^= 1 << second
                effect = effect_of[second]
            else:
                effect = pending
            if effect:
                moves += 1
                if effect == 1:
                    t = cards0[hand & 0x7FF] + cards1[hand >> 11 & 0x7FF] + cards2[hand >> 22]
                    n = len(t) + 1
                    k = bits_below[n]
                    r = getrandbits(k)
                    while r >= n:
                        r = getrandbits(k)
                    if r:
                        new = t[r - 1]
                        hand ^= 1 << new | 1 << decree
                        decree = new
                else:
                    if effect == 2:
                        hand |= 1 << deck.pop(0)
                    t = cards0[hand & 0x7FF] + cards1[hand >> 11 & 0x7FF] + cards2[hand >> 22]
                    n = len(t)
                    if n > 1:
                        k = bits_below[n]
                        r = getrandbits(k)
                        while r >= n:
                            r = getrandbits(k)
                        card = t[r]
                    else:
                        card = t[0]
                    hand ^= 1 << card
                    deck.append(card)
            hands[follower] = hand
            leader, delta = trick[(leader * 33 + decree) * 1089 + lead * 33 + second]
            tally += delta
            stage = 0
            if tally & 15 == 13:
                break
        moves += 26
        treasure0 = tally >> 12 & 15
        treasure1 = tally >> 16 & 15
        total0 = score_by_tricks[tally >> 4 & 15] + treasure0
        total1 = score_by_tricks[tally >> 8 & 15] + treasure1
        s0 += total0
        s1 += total1
        if s0 >= target or s1 >= target:
            return _rewards(s0, s1, total0, total1)
        # The next deal: the engine's shuffle, from one draw made the way Draws.below makes it.
        k = getrandbits(_DEAL_BITS)
        while k >= _DEAL_CHOICES:
            k = getrandbits(_DEAL_BITS)
        shuffled = list(range(33))
        for radices, product in _RADIX_GROUPS:
            chunk = k % product
            k //= product
            for radix in radices:
                j = chunk % radix
                chunk //= radix
                i = radix - 1
                shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
        dealer = 1 - dealer
        round_ += 1
        leader = 1 - dealer
        hands = [_mask(shuffled[:13]), _mask(shuffled[13:26])]
        decree = shuffled[26]
        deck = shuffled[27:]
        tally = 0
        if moves + _MAX_ROUND_MOVES >= PLAYOUT_CAP:
            # The cap may fall inside this round: play it out move by move, counting.
            sim = Sim.from_state(
                (_PHASE_PLAY, leader, hands[0], hands[1], leader, -1, -1, 0, decree, tuple(deck),
                 0, (0, 0), (0, 0), 0, None,
                 fox.Game(target, 0, dealer, round_, (s0, s1),
                          (((0, 0), (0, 0), (0, 0), (total0, total1)),)))
            )  # fmt: skip
            return _careful_playout(sim, Draws(rand), moves)


def _careful_playout(sim: Sim, draws: Draws, moves: int) -> list[float]:
    """The rest of a play-out one ``Sim.apply`` at a time, ``moves`` made so far: the loop of
    ``ismcts.random_playout`` (the cap is checked first, then the end)."""
    while True:
        if moves >= PLAYOUT_CAP:
            treasure = sim.tally
            return _rewards(
                sim.scores[0] + (treasure >> 12 & 15), sim.scores[1] + (treasure >> 16 & 15), 0, 0
            )
        if sim.phase == _PHASE_OVER:
            last = sim.history[-1][3] if sim.history else (0, 0)
            return _rewards(sim.scores[0], sim.scores[1], last[0], last[1])
        seat = sim.turn
        legal = sim.legal_commands(seat)
        sim.apply(seat, legal[draws.below(len(legal))], draws)
        moves += 1


def _rewards(score0: int, score1: int, key0: int, key1: int) -> list[float]:
    """The rewards of two seats by score, a tie broken by ``key`` (the last round's total):
    ``rewards(fox.outcome(...))`` without building the outcome."""
    if score0 != score1:
        return [1.0, 0.0] if score0 > score1 else [0.0, 1.0]
    if key0 != key1:
        return [1.0, 0.0] if key0 > key1 else [0.0, 1.0]
    return [0.5, 0.5]
