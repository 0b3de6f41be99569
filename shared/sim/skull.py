"""A fast, mutable simulator of Skull for search play-outs, equal to ``shared.games.skull``.

The pure engine stays the source of truth; ``tests/unit/test_sim_skull.py`` proves this one
equal to it (same ``to_act``, ``legal_commands``, ``outcome`` and, through ``to_state``, the
same state after the same commands and random draws).

Why it is faster: one mutable object instead of a new frozen ``State`` (and ``Player``) per
event, discs as small ints (0 flower, 1 skull) in per-seat lists, running counts (discs on the
table, stacks still empty, discs turned up per seat) instead of recounting, no event objects,
the engine's command objects built once, and in ``random_playout`` a uniform draw of an index
among the legal commands without listing them.

Invariants this relies on, true of every state the engine reaches (and of ``determinize``'s):
a player owns at most one skull; while flipping, every disc turned up this round is a flower
(the first skull ends the flipping); in the penalty the blind pick happens exactly when the
skull's owner is not the challenger.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from shared.bots import ismcts
from shared.games import base, skull
from shared.games.skull import (
    CHOOSING_STARTER,
    ENGLISH,
    FLOWER,
    FLOWERS_PER_PLAYER,
    MAX_SEATS,
    SKULL,
    SKULLS_PER_PLAYER,
    WINS_NEEDED,
    Bid,
    ChooseStarter,
    Discard,
    Flip,
    Pass,
    PickDisc,
    Place,
    Player,
    State,
)

T = TypeVar("T")


class Draws(Protocol):
    """What ``apply`` draws with: the engines' ``Rng`` interface (``Rng``, ``FastRng``)."""

    def shuffle(self, items: Sequence[T]) -> tuple[T, ...]: ...


# Disc faces as ints, index into FACES for the engine's strings.
F = 0
S = 1
FACES = (FLOWER, SKULL)
_FACE_CODE = {FLOWER: F, SKULL: S}

# Phases as small ints (the play-out loop tests the phase every move); PHASES[code] is the
# engine's name.
PLACING, BIDDING, FLIPPING, PENALTY, CHOOSING, OVER = range(6)
PHASES = (
    skull.PLACING,
    skull.BIDDING,
    skull.FLIPPING,
    skull.PENALTY,
    CHOOSING_STARTER,
    skull.GAME_OVER_PHASE,
)
_PHASE_CODE = {name: code for code, name in enumerate(PHASES)}

# The engine's frozen commands, made once: equal (and hashing equal) to the ones the engine
# lists, so they work as ISMCTS child keys and in ``decide``.
_MAX_TABLE = MAX_SEATS * (FLOWERS_PER_PLAYER + SKULLS_PER_PLAYER)
_BIDS = [Bid(count=c) for c in range(_MAX_TABLE + 1)]  # _BIDS[c] is Bid(count=c)
_PASS = Pass()
_PLACES = (Place(disc=FLOWER), Place(disc=SKULL))
_DISCARDS = (Discard(disc=FLOWER), Discard(disc=SKULL))
_FLIPS = tuple(Flip(seat=s) for s in range(MAX_SEATS))
_STARTERS = tuple(ChooseStarter(seat=s) for s in range(MAX_SEATS))
_PICKS = tuple(PickDisc(index=i) for i in range(FLOWERS_PER_PLAYER + SKULLS_PER_PLAYER))
# ``flipped`` entries as the engine records them, one shared tuple per (seat, face).
_FLIP_RECORDS = (
    tuple((s, FLOWER) for s in range(MAX_SEATS)),
    tuple((s, SKULL) for s in range(MAX_SEATS)),
)
_TO_ACT = tuple((s,) for s in range(MAX_SEATS))

# What ``_flip`` reports.
_GOES_ON, _WON, _OWN_SKULL, _BLIND_PICK = range(4)


def _bids(low: int, high: int) -> list[Bid]:
    """``Bid`` commands for the counts ``low`` to ``high - 1``, as the engine lists them."""
    if high <= len(_BIDS):
        return _BIDS[low:high]
    return [Bid(count=c) for c in range(low, high)]  # beyond any reachable table


class Sim:
    """A Skull game as one mutable object: ``apply`` changes it in place.

    Per seat (lists indexed by seat): ``flowers``/``skulls`` owned, ``stacks`` (faces bottom
    first, 0 flower / 1 skull), ``up`` (discs turned up this round), ``wins``, ``passed``,
    ``lost`` (engine face strings), ``known`` (the public ``known_skull``), ``alive``. The
    rest mirrors the engine's ``State`` fields, plus two running counts: ``table`` (discs on
    the table) and ``bare`` (players still in with an empty stack: the bidding opens at 0).
    The lists are changed in place, never replaced, so a loop may hold them.
    """

    __slots__ = (
        "seats",
        "next_starter",
        "english",
        "flowers",
        "skulls",
        "stacks",
        "up",
        "wins",
        "passed",
        "lost",
        "known",
        "alive",
        "phase",
        "round",
        "starter",
        "turn",
        "bid",
        "bidder",
        "challenger",
        "flipped",
        "skull_owner",
        "shuffled",
        "winners",
        "table",
        "bare",
    )

    seats: int
    next_starter: str
    english: bool
    flowers: list[int]
    skulls: list[int]
    stacks: list[list[int]]
    up: list[int]
    wins: list[int]
    passed: list[bool]
    lost: list[list[str]]
    known: list[bool | None]
    alive: list[bool]
    phase: int
    round: int
    starter: int | None
    turn: int | None
    bid: int
    bidder: int | None
    challenger: int | None
    flipped: list[tuple[int, str]]
    skull_owner: int | None
    shuffled: tuple[str, ...]
    winners: tuple[int, ...]
    table: int
    bare: int

    # --- conversion ---------------------------------------------------------------------------

    @classmethod
    def from_state(cls, state: State) -> Sim:
        """A simulator at the engine's ``state`` (any phase, determinized states included)."""
        sim = cls.__new__(cls)
        sim._load(state)
        return sim

    def _load(self, state: State) -> None:
        players = state.players
        n = state.seats
        self.seats = n
        self.next_starter = state.next_starter
        self.english = state.next_starter == ENGLISH
        self.flowers = [p.flowers for p in players]
        self.skulls = [p.skulls for p in players]
        self.stacks = [[_FACE_CODE[d] for d in p.stack] for p in players]
        up = [0] * n
        for s, _ in state.flipped:
            up[s] += 1
        self.up = up
        self.wins = [p.wins for p in players]
        self.passed = [p.passed for p in players]
        self.lost = [list(p.lost) for p in players]
        self.known = [p.known_skull for p in players]
        self.alive = [p.flowers + p.skulls > 0 for p in players]
        self.phase = _PHASE_CODE[state.phase]
        self.round = state.round
        self.starter = state.starter
        self.turn = state.turn
        self.bid = state.bid
        self.bidder = state.bidder
        self.challenger = state.challenger
        self.flipped = list(state.flipped)
        self.skull_owner = state.skull_owner
        self.shuffled = tuple(state.shuffled)
        self.winners = tuple(state.winners)
        self.table = sum(len(p.stack) for p in players)
        self.bare = sum(1 for p in players if not p.stack and p.flowers + p.skulls > 0)

    def to_state(self) -> State:
        """The engine's ``State`` for this position (``==`` the engine's own; not fast)."""
        players = tuple(
            Player(
                flowers=self.flowers[s],
                skulls=self.skulls[s],
                stack=tuple(FACES[d] for d in self.stacks[s]),
                wins=self.wins[s],
                passed=self.passed[s],
                lost=tuple(self.lost[s]),
                known_skull=self.known[s],
            )
            for s in range(self.seats)
        )
        return State(
            seats=self.seats,
            next_starter=self.next_starter,
            players=players,
            phase=PHASES[self.phase],
            round=self.round,
            starter=self.starter,
            turn=self.turn,
            bid=self.bid,
            bidder=self.bidder,
            challenger=self.challenger,
            flipped=tuple(self.flipped),
            skull_owner=self.skull_owner,
            shuffled=self.shuffled,
            winners=self.winners,
        )

    # --- queries ------------------------------------------------------------------------------

    def to_act(self) -> tuple[int, ...]:
        """``skull.to_act``: the one seat to act, or () when the game is over."""
        turn = self.turn
        if turn is None or self.phase == OVER:
            return ()
        return _TO_ACT[turn] if 0 <= turn < MAX_SEATS else (turn,)

    def legal_commands(self, seat: int) -> list[Any]:
        """``skull.legal_commands``: equal commands in the same order (a new list each call)."""
        turn = self.turn
        if turn is None or seat != turn or self.phase == OVER:
            return []
        phase = self.phase
        if phase == PLACING:
            stack = self.stacks[seat]
            out: list[Any] = []
            if self.flowers[seat] - stack.count(F) > 0:
                out.append(_PLACES[F])
            if self.skulls[seat] - stack.count(S) > 0:
                out.append(_PLACES[S])
            if not self.bare:
                out += _bids(self.bid + 1, self.table + 1)
            return out
        if phase == BIDDING:
            return [*_bids(self.bid + 1, self.table + 1), _PASS]
        if phase == FLIPPING:
            up, stacks = self.up, self.stacks
            if up[seat] < len(stacks[seat]):
                return [_FLIPS[seat]]
            return [_FLIPS[s] for s in range(self.seats) if s != seat and up[s] < len(stacks[s])]
        if phase == PENALTY:
            if self.shuffled:
                return list(_PICKS[: len(self.shuffled)])
            out = []
            if self.flowers[seat] > 0:
                out.append(_DISCARDS[F])
            if self.skulls[seat] > 0:
                out.append(_DISCARDS[S])
            return out
        if phase == CHOOSING:
            return [_STARTERS[s] for s in range(self.seats) if self.alive[s]]
        return []

    def outcome(self) -> dict[str, Any] | None:
        """``skull.outcome``: None while the game runs, then scores, winners, ranks, draw."""
        if self.phase != OVER:
            return None
        won = [1 if s in self.winners else 0 for s in range(self.seats)]
        keys = [(self.wins[s], self.flowers[s] + self.skulls[s]) for s in range(self.seats)]
        return {
            "scores": list(self.wins),
            "winners": list(self.winners),
            "ranks": base.ranks_from_scores(won, keys),
            "draw": False,
        }

    # --- commands -----------------------------------------------------------------------------

    def apply(self, seat: int, command: Any, rng: Draws) -> None:
        """``seat`` sends ``command``: the state ``skull.decide`` and ``skull.evolve`` would
        give, drawing from ``rng`` exactly as ``decide`` does (one ``shuffle`` of the
        challenger's discs when it meets another player's skull).

        A command the simulator does not list as legal goes to the engine itself, which
        raises its ``GameError`` (or, for a command only the engine accepts, such as a
        subclass of a command type, is decided and applied there)."""
        if command not in self.legal_commands(seat):
            self._through_engine(seat, command, rng)
            return
        kind = type(command)
        if kind is Place:
            self._place(seat, _FACE_CODE[command.disc])
        elif kind is Bid:
            self._bid(seat, command.count)
        elif kind is Pass:
            self._pass(seat)
        elif kind is Flip:
            if self._flip(seat, command.seat) == _BLIND_PICK:
                discs = (FLOWER,) * self.flowers[seat] + (SKULL,) * self.skulls[seat]
                self.shuffled = tuple(rng.shuffle(discs))
        elif kind is PickDisc:
            self._lose(_FACE_CODE[self.shuffled[command.index]])
        elif kind is Discard:
            self._lose(_FACE_CODE[command.disc])
        else:  # ChooseStarter: the only other command type listed
            self._start_round(self.round + 1, command.seat)

    def _through_engine(self, seat: int, command: Any, rng: Any) -> None:
        state = self.to_state()
        for event in skull.decide(state, seat, command, rng):
            state = skull.evolve(state, event)
        self._load(state)

    # The moves, each the net effect of the events ``decide`` makes for it. They assume a
    # legal move (``apply`` checks; ``random_playout`` draws only legal ones).

    def _place(self, seat: int, face: int) -> None:
        stack = self.stacks[seat]
        if not stack:
            self.bare -= 1
        stack.append(face)
        self.table += 1
        self.turn = self._next(seat)

    def _bid(self, seat: int, count: int) -> None:
        self.phase = BIDDING
        self.bid = count
        self.bidder = seat
        if count == self.table:
            self.phase = FLIPPING
            self.challenger = seat
            self.turn = seat
        else:
            self.turn = self._next_bidder(seat)

    def _pass(self, seat: int) -> None:
        n = self.seats
        alive, passed = self.alive, self.passed
        # The engine's test is "the players still in, but ``seat``, are [bidder]": find the
        # first of them clockwise and whether there is a second.
        first = -1
        for step in range(1, n):
            s = (seat + step) % n
            if alive[s] and not passed[s]:
                if first >= 0:
                    break
                first = s
        else:
            if first >= 0 and first == self.bidder:
                passed[seat] = True
                self.phase = FLIPPING
                self.challenger = first
                self.turn = first
                return
        passed[seat] = True
        self.turn = first if first >= 0 else seat

    def _flip(self, seat: int, target: int) -> int:
        """Turn up ``target``'s top face-down disc (``seat``'s own: its whole stack, stopping
        at a skull); what happened, as one of ``_GOES_ON`` ... ``_BLIND_PICK``."""
        stack = self.stacks[target]
        up = self.up
        flipped = self.flipped
        height = len(stack)
        take = height - up[target] if target == seat else 1
        done = len(flipped)
        bid = self.bid
        for k in range(take):
            face = stack[height - 1 - up[target]]
            up[target] += 1
            flipped.append(_FLIP_RECORDS[face][target])
            done += 1
            if face == S:
                self.known[target] = True
                self.phase = PENALTY
                self.skull_owner = target
                self.turn = target
                self._discs_back()
                return _OWN_SKULL if target == seat else _BLIND_PICK
            # Every disc of ``target`` turned up this round was a flower (a skull would have
            # ended the flipping): as many as it owns prove it has no skull.
            if up[target] >= self.flowers[target] + self.skulls[target]:
                self.known[target] = False
            if done >= bid and (target != seat or k == take - 1):
                wins = self.wins[seat] + 1
                self.wins[seat] = wins
                self._discs_back()
                if wins >= WINS_NEEDED:
                    self.phase = OVER
                    self.winners = (seat,)
                    self.turn = None
                else:
                    self._start_round(self.round + 1, seat)
                return _WON
        return _GOES_ON

    def _lose(self, face: int) -> None:
        """The challenger loses a disc of ``face``: elimination, game end or the next round."""
        c = self.challenger
        assert c is not None
        discs = self.flowers[c] + self.skulls[c]
        # Others do not see which disc went, so only "no skull" survives the loss.
        self.known[c] = False if discs <= 1 or self.known[c] is False else None
        self.lost[c].append(FACES[face])
        if face == F:
            self.flowers[c] -= 1
        else:
            self.skulls[c] -= 1
        self.shuffled = ()
        alive = self.alive
        out = discs == 1
        if out:
            alive[c] = False
        if alive.count(True) == 1:
            self.phase = OVER
            self.winners = (alive.index(True),)
            self.turn = None
            return
        owner = self.skull_owner
        if self.english:
            if owner == c:
                self.phase = CHOOSING
                self.turn = c
                return
            assert owner is not None
            starter = owner
        elif out:
            starter = self._next(c)  # the next player still in on the challenger's left
        else:
            starter = c
        self._start_round(self.round + 1, starter)

    def _start_round(self, number: int, starter: int) -> None:
        n = self.seats
        for stack in self.stacks:
            if stack:
                stack.clear()
        self.up[:] = [0] * n
        self.passed[:] = [False] * n
        self.flipped.clear()
        self.phase = PLACING
        self.round = number
        self.starter = starter
        self.turn = starter
        self.bid = 0
        self.bidder = None
        self.challenger = None
        self.skull_owner = None
        self.shuffled = ()
        self.table = 0
        self.bare = self.alive.count(True)

    def _discs_back(self) -> None:
        for stack in self.stacks:
            if stack:
                stack.clear()
        self.table = 0
        self.bare = self.alive.count(True)

    def _next(self, seat: int) -> int:
        """The next seat clockwise still in the game (``seat`` itself if none)."""
        n = self.seats
        alive = self.alive
        for step in range(1, n + 1):
            s = (seat + step) % n
            if alive[s]:
                return s
        return seat

    def _next_bidder(self, seat: int) -> int:
        """The next seat clockwise still in the game and the bidding (``seat`` if none)."""
        n = self.seats
        alive, passed = self.alive, self.passed
        for step in range(1, n + 1):
            s = (seat + step) % n
            if alive[s] and not passed[s]:
                return s
        return seat

    # --- play-outs ----------------------------------------------------------------------------

    def play(self, randbelow: Callable[[int], int], cap: int) -> list[float]:
        """Uniformly random legal moves until the game ends or ``cap`` moves, as
        ``ismcts.random_playout`` plays them; the rewards (``ismcts.rewards``, or the capped
        score-rank shares of ``ismcts._capped``). ``randbelow(k)``: uniform in ``[0, k)``.

        Each move draws one index among the legal commands in the engine's order. A blind
        pick draws the lost disc directly (a uniform index into a uniformly shuffled order
        is a uniform disc), so no shuffle is made: between the failed flip and the pick,
        ``shuffled`` stays empty, unlike the engine's state."""
        flowers, skulls, stacks, up, alive = (
            self.flowers,
            self.skulls,
            self.stacks,
            self.up,
            self.alive,
        )
        n = self.seats
        for _ in range(cap):
            phase = self.phase
            if phase == OVER:
                out = [0.0] * n
                share = 1.0 / len(self.winners)
                for w in self.winners:
                    out[w] = share
                return out
            seat = self.turn
            assert seat is not None
            if phase == PLACING:
                stack = stacks[seat]
                has_flower = flowers[seat] - stack.count(F) > 0
                places = has_flower + (skulls[seat] - stack.count(S) > 0)
                bids = 0 if self.bare else self.table - self.bid
                k = places + bids
                if k <= 0:
                    raise RuntimeError(f"skull sim: seat {seat} is to act with no legal command")
                r = randbelow(k)
                if r < places:
                    self._place(seat, F if r == 0 and has_flower else S)
                else:
                    self._bid(seat, self.bid + 1 + r - places)
            elif phase == BIDDING:
                bids = self.table - self.bid
                r = randbelow(bids + 1)
                if r < bids:
                    self._bid(seat, self.bid + 1 + r)
                else:
                    self._pass(seat)
            elif phase == FLIPPING:
                if up[seat] < len(stacks[seat]):
                    self._flip(seat, seat)
                else:
                    targets = [s for s in range(n) if s != seat and up[s] < len(stacks[s])]
                    if not targets:
                        raise RuntimeError(f"skull sim: seat {seat} has nothing to flip")
                    self._flip(seat, targets[randbelow(len(targets))])
            elif phase == PENALTY:
                c = self.challenger
                assert c is not None
                if self.skull_owner != c:
                    self._lose(S if randbelow(flowers[c] + skulls[c]) < skulls[c] else F)
                elif flowers[c] and skulls[c]:
                    self._lose(randbelow(2))  # the Discard order is flower, skull: F, S
                else:
                    self._lose(F if flowers[c] else S)
            else:  # choosing the starter
                seats = [s for s in range(n) if alive[s]]
                self._start_round(self.round + 1, seats[randbelow(len(seats))])
        return self.capped_rewards()

    def capped_rewards(self) -> list[float]:
        """``ismcts._capped``: each seat's share of the other seats it outscores in win
        markers (ties half)."""
        scores = self.wins
        n = len(scores)
        if n < 2:
            return [1.0] * n
        return [
            (sum(1.0 if mine > other else 0.5 if mine == other else 0.0 for other in scores) - 0.5)
            / (n - 1)
            for mine in scores
        ]


def _randbelow(rand: random.Random) -> Callable[[int], int]:
    """``rand``'s unchecked uniform integer in ``[0, n)`` (never returns for ``n == 0``):
    what ``randrange`` and ``choice`` call after checking their arguments."""
    below: Callable[[int], int] = rand._randbelow  # type: ignore[attr-defined]
    return below


def random_playout(state: State, rand: random.Random) -> list[float]:
    """``ismcts.random_playout(skull, state, rand)`` in distribution: uniformly random legal
    commands from ``state`` until the game ends or ``ismcts.PLAYOUT_CAP`` moves; one reward
    per seat (1 for the winner, else 0; score-rank shares when capped). Draws from ``rand``
    differently from the engine path, so the same ``rand`` does not give the same game."""
    return Sim.from_state(state).play(_randbelow(rand), ismcts.PLAYOUT_CAP)


def playout_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """``random_playout`` as an ``ismcts.Rollout`` (``engine`` is Skull's; not read)."""
    return random_playout(state, rand)
