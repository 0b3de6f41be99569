"""Skull's rules, written once: the mutable kernel (``SkullKernel``) and the table it starts from.

Each ``_on_<event>`` mutator is the only statement of how that event changes a game; ``apply``
checks a command against the rules and hands the events it causes to ``emit`` one at a time, so
each later step reads the state the earlier events left. The engine contract's ``decide`` and
``evolve`` are derived from it (``shared/games/kernel.py``); search plays on ``copy()``, each
command drawn from the kernel's own listing and applied past the checks (``apply_listed``: the
effect half of each rule, which ``apply`` calls after its checks; with ``emit`` None the
kernel runs the mutators itself, the busiest moves' without ``on``).

Why it is fast enough to be the search's play-out too: one mutable object instead of a frozen
``State`` (and ``Player``) per event; per-seat lists changed in place; running counts (discs on
the table, players still in with an empty stack, discs turned up per seat) instead of
recounting; commands and events made once per distinct value at import (a listing is a slice of
a prebuilt list); and ``freeze`` reuses the frozen ``Player`` of every seat no event touched.

Invariants the counts rely on, true of every state the rules reach and of ``determinize``'s:
``table`` is the sum of the stack heights, ``bare`` the players still in with an empty stack,
``up[s]`` the entries of ``flipped`` for ``s`` and ``alive[s]`` whether ``s`` owns a disc.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from shared.games import base
from shared.games.errors import GAME_OVER, NOT_YOUR_TURN, GameError, illegal
from shared.games.kernel import Emit, Kernel
from shared.games.rng import Rng
from shared.games.skull.messages import (
    BIDDING,
    CHOOSING_STARTER,
    COMMANDS,
    DISCS,
    ENGLISH,
    EVENTS,
    FLIPPING,
    FLOWER,
    FLOWERS_PER_PLAYER,
    GAME_OVER_PHASE,
    MAX_SEATS,
    NAME,
    PENALTY,
    PLACING,
    REASON_CHALLENGES,
    REASON_LAST_STANDING,
    SKULL,
    SKULLS_PER_PLAYER,
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
    invalid_command,
)

# --- shared messages ---------------------------------------------------------------------------

# Commands and events are frozen values, so the ones made on every turn are made once here and
# shared: equal (and hashing equal) to fresh ones, so they key ISMCTS children and compare in
# tests. Only a seat or count of type ``int`` indexes these tables: a ``True`` sent for seat 1
# gets a fresh message holding ``True``, exactly the value it was asked for.
_MAX_TABLE = MAX_SEATS * (FLOWERS_PER_PLAYER + SKULLS_PER_PLAYER)
_SEATS = range(MAX_SEATS)
_COUNTS = range(_MAX_TABLE + 1)
_BIDS = [Bid(count=c) for c in _COUNTS]  # _BIDS[c] is Bid(count=c)
_PASS = Pass()
_PLACE = {FLOWER: Place(disc=FLOWER), SKULL: Place(disc=SKULL)}
_DISCARD = {FLOWER: Discard(disc=FLOWER), SKULL: Discard(disc=SKULL)}
_FLIPS = [Flip(seat=s) for s in _SEATS]
_STARTERS = [ChooseStarter(seat=s) for s in _SEATS]
_PICKS = [PickDisc(index=i) for i in range(FLOWERS_PER_PLAYER + SKULLS_PER_PLAYER)]
_TO_ACT = [(s,) for s in _SEATS]

_PLACED = {d: [DiscPlaced(seat=s, disc=d) for s in _SEATS] for d in DISCS}
_FLIPPED = {d: [DiscFlipped(seat=s, disc=d) for s in _SEATS] for d in DISCS}
_TURNS = [TurnStarted(seat=s) for s in _SEATS]
_PASSED = [BidPassed(seat=s) for s in _SEATS]
_BIDS_MADE = [[BidMade(seat=s, count=c) for c in _COUNTS] for s in _SEATS]
_CHALLENGES = [[ChallengeStarted(seat=s, bid=c) for c in _COUNTS] for s in _SEATS]
_ELIMINATED = [PlayerEliminated(seat=s) for s in _SEATS]
_FAILED = [[ChallengeFailed(seat=s, skull_owner=o) for o in _SEATS] for s in _SEATS]
_WON = [[ChallengeWon(seat=s, wins=w) for w in range(WINS_NEEDED + 1)] for s in _SEATS]
# Rounds past this many are made when met (a random game of 12 players ends well before).
_ROUNDS_KEPT = 64
_ROUNDS = [[RoundStarted(round=r, starter=s) for s in _SEATS] for r in range(_ROUNDS_KEPT)]
_NBIDS = len(_BIDS)
# Every shared command a listing hands out (search keys their JSON by identity: these live
# as long as the module).
LISTED_COMMANDS: tuple[Any, ...] = (
    *_BIDS,
    _PASS,
    *_PLACE.values(),
    *_DISCARD.values(),
    *_FLIPS,
    *_STARTERS,
    *_PICKS,
)
# ``Place`` commands a seat may list, by (a flower in hand, a skull in hand); copied per call.
_PLACINGS = [[[], [_PLACE[SKULL]]], [[_PLACE[FLOWER]], [_PLACE[FLOWER], _PLACE[SKULL]]]]
_PLAYER = Player()
_STATE = State(seats=0)


def _bids(low: int, high: int) -> list[Any]:
    """``Bid`` commands for the counts ``low`` to ``high - 1``."""
    if high <= _NBIDS:
        return _BIDS[low:high]
    return [Bid(count=c) for c in range(low, high)]  # beyond any table the rules reach


def _after(alive: list[bool]) -> list[int]:
    """For each seat, the next seat clockwise (to the left) still in the game, or the seat
    itself if there is none: what ``_next`` reads, remade only when a player goes out."""
    n = len(alive)
    out = []
    for seat in range(n):
        for step in range(1, n + 1):
            s = (seat + step) % n
            if alive[s]:
                out.append(s)
                break
        else:
            out.append(seat)
    return out


def _round_started(number: int, starter: int) -> RoundStarted:
    """``RoundStarted(round=number, starter=starter)``, shared when the table holds it."""
    if type(number) is int and type(starter) is int and 0 <= number < _ROUNDS_KEPT:
        row = _ROUNDS[number]
        if 0 <= starter < len(row):
            return row[starter]
    return RoundStarted(round=number, starter=starter)


def _to_act(turn: int | None, phase: str) -> tuple[int, ...]:
    """The one seat that must act now, or () when the game is over."""
    if turn is None or phase == GAME_OVER_PHASE:
        return ()
    return _TO_ACT[turn] if type(turn) is int and 0 <= turn < MAX_SEATS else (turn,)


def _not_a_command(command: Any) -> GameError:
    return invalid_command(f"not a {NAME} command: {command!r}", type="a skull command")


def _wrong_phase(command: Any, phase: str) -> GameError:
    return illegal("wrong_phase", f"{command.TYPE} is not allowed in the {phase} phase")


_COMMAND_TYPES = tuple(COMMANDS.values())


class SkullKernel(Kernel):
    """A Skull game as one mutable table.

    Per seat (lists indexed by seat): ``flowers``/``skulls`` owned, ``stacks`` (faces, bottom
    first, as tuples), ``up`` (discs turned up this round), ``wins``, ``passed``, ``lost``
    (tuples), ``known`` (the public ``known_skull``), ``alive`` and ``frozen`` (the seat's
    frozen ``Player`` while no event changed it, else None). The rest are ``State``'s fields
    (``flipped`` as a list) plus ``english`` (the rule as a flag) and the running counts
    ``table`` and ``bare`` (see the module's invariants).
    """

    __slots__ = (
        "seats", "next_starter", "english", "flowers", "skulls", "stacks", "up", "wins",
        "passed", "lost", "known", "alive", "frozen", "phase", "round", "starter", "turn",
        "bid", "bidder", "challenger", "flipped", "skull_owner", "shuffled", "winners",
        "table", "bare", "after",
    )  # fmt: skip

    EVENTS: ClassVar[dict[str, type]] = EVENTS
    # Elimination follows from the disc count ``disc_lost`` leaves; the event announces it.
    INERT: ClassVar[tuple[str, ...]] = ("player_eliminated",)

    seats: int
    next_starter: str
    english: bool
    flowers: list[int]
    skulls: list[int]
    stacks: list[tuple[str, ...]]
    up: list[int]
    wins: list[int]
    passed: list[bool]
    lost: list[tuple[str, ...]]
    known: list[bool | None]
    alive: list[bool]
    frozen: list[Player | None]
    phase: str
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
    after: list[int]  # after[s]: the next seat clockwise from s still in the game (s if none)

    def on(self, event: Any) -> None:
        """Run ``event``'s mutator on this kernel (``Kernel.on`` with the table read as a
        module global: the play-out's busiest call, twice a move)."""
        _MUTATORS[type(event)](self, event)

    # --- to and from the frozen state ---------------------------------------------------------

    @classmethod
    def thaw(cls, state: State) -> SkullKernel:
        """The kernel at ``state`` (any state: determinized and hand-built ones too).

        A state ``freeze`` just made comes back as the kernel it kept (see ``_KEPT``): the
        play-out driver, the derived ``evolve`` and the search all thaw the state they froze
        a moment before, and copying its lists costs a third of a rebuild from the players."""
        kept = _take(state)
        if kept is not None:
            return kept
        k = cls.__new__(cls)
        players = state.players
        k.seats = state.seats
        k.next_starter = state.next_starter
        k.english = state.next_starter == ENGLISH
        k.flowers = [p.flowers for p in players]
        k.skulls = [p.skulls for p in players]
        k.stacks = stacks = [p.stack for p in players]
        k.wins = [p.wins for p in players]
        k.passed = [p.passed for p in players]
        k.lost = [p.lost for p in players]
        k.known = [p.known_skull for p in players]
        k.alive = alive = [p.flowers + p.skulls != 0 for p in players]
        k.after = _after(alive)
        k.frozen = list(players)
        k.phase = state.phase
        k.round = state.round
        k.starter = state.starter
        k.turn = state.turn
        k.bid = state.bid
        k.bidder = state.bidder
        k.challenger = state.challenger
        k.flipped = list(state.flipped)
        k.skull_owner = state.skull_owner
        k.shuffled = state.shuffled
        k.winners = state.winners
        up = [0] * len(players)
        for s, _ in state.flipped:
            up[s] += 1
        k.up = up
        k.table = sum(map(len, stacks))
        k.bare = len([p for p in players if not p.stack and p.flowers + p.skulls != 0])
        return k

    @classmethod
    def start(cls, event: Any) -> SkullKernel:
        """The kernel ``game_set_up`` creates."""
        assert isinstance(event, GameSetUp), "the first skull event is game_set_up"
        k = cls.__new__(cls)
        k._on_game_set_up(event)
        return k

    def freeze(self) -> State:
        """Today's frozen ``State`` of this position (``==`` what the events evolved to)."""
        frozen = self.frozen
        for s, p in enumerate(frozen):
            if p is None:
                frozen[s] = _replace_player(
                    _PLAYER,
                    flowers=self.flowers[s],
                    skulls=self.skulls[s],
                    stack=self.stacks[s],
                    wins=self.wins[s],
                    passed=self.passed[s],
                    lost=self.lost[s],
                    known_skull=self.known[s],
                )
        state: State = _replace_state(
            _STATE,
            seats=self.seats,
            next_starter=self.next_starter,
            players=tuple(frozen),
            phase=self.phase,
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
        _keep(state, self.copy())
        return state

    def copy(self) -> SkullKernel:
        """An independent kernel at the same position (the lists copied, their items shared:
        they are immutable)."""
        k = SkullKernel.__new__(SkullKernel)
        k.seats = self.seats
        k.next_starter = self.next_starter
        k.english = self.english
        k.flowers = self.flowers[:]
        k.skulls = self.skulls[:]
        k.stacks = self.stacks[:]
        k.up = self.up[:]
        k.wins = self.wins[:]
        k.passed = self.passed[:]
        k.lost = self.lost[:]
        k.known = self.known[:]
        k.alive = self.alive[:]
        k.after = self.after  # replaced, never changed in place: shared
        k.frozen = self.frozen[:]
        k.phase = self.phase
        k.round = self.round
        k.starter = self.starter
        k.turn = self.turn
        k.bid = self.bid
        k.bidder = self.bidder
        k.challenger = self.challenger
        k.flipped = self.flipped[:]
        k.skull_owner = self.skull_owner
        k.shuffled = self.shuffled
        k.winners = self.winners
        k.table = self.table
        k.bare = self.bare
        return k

    # --- the mutators: how each event changes the game ----------------------------------------

    def _on_game_set_up(self, event: GameSetUp) -> None:
        n = event.seats
        has_skull = event.skulls > 0
        self.seats = n
        self.next_starter = event.next_starter
        self.english = event.next_starter == ENGLISH
        self.flowers = [event.flowers] * n
        self.skulls = [event.skulls] * n
        self.stacks = [()] * n
        self.up = [0] * n
        self.wins = [0] * n
        self.passed = [False] * n
        self.lost = [()] * n
        self.known = [has_skull] * n
        self.alive = [event.flowers + event.skulls != 0] * n
        self.after = _after(self.alive)
        player = Player(flowers=event.flowers, skulls=event.skulls, known_skull=has_skull)
        self.frozen = [player] * n
        self.phase = PLACING
        self.round = 0
        self.starter = self.turn = self.bidder = self.challenger = self.skull_owner = None
        self.bid = 0
        self.flipped = []
        self.shuffled = ()
        self.winners = ()
        self.table = 0
        self.bare = self.alive.count(True)

    def _on_round_started(self, event: RoundStarted) -> None:
        stacks, passed, frozen = self.stacks, self.passed, self.frozen
        for s in range(len(stacks)):
            if stacks[s] or passed[s]:
                stacks[s] = ()
                passed[s] = False
                frozen[s] = None
        self.up = [0] * len(stacks)
        self.flipped = []
        self.phase = PLACING
        self.round = event.round
        self.starter = self.turn = event.starter
        self.bid = 0
        self.bidder = self.challenger = self.skull_owner = None
        self.shuffled = ()
        self.table = 0
        self.bare = self.alive.count(True)

    def _on_disc_placed(self, event: DiscPlaced) -> None:
        seat = event.seat
        stack = self.stacks[seat]
        if not stack and self.alive[seat]:
            self.bare -= 1
        # A redacted copy (disc None) still shows the stack grew; a flower stands in.
        self.stacks[seat] = stack + ((event.disc or FLOWER),)
        self.table += 1
        self.frozen[seat] = None

    def _on_turn_started(self, event: TurnStarted) -> None:
        self.turn = event.seat

    def _on_bid_made(self, event: BidMade) -> None:
        self.phase = BIDDING
        self.bid = event.count
        self.bidder = event.seat

    def _on_bid_passed(self, event: BidPassed) -> None:
        self.passed[event.seat] = True
        self.frozen[event.seat] = None

    def _on_challenge_started(self, event: ChallengeStarted) -> None:
        self.phase = FLIPPING
        self.challenger = self.bidder = self.turn = event.seat
        self.bid = event.bid

    def _on_disc_flipped(self, event: DiscFlipped) -> None:
        seat, disc = event.seat, event.disc
        flipped = self.flipped
        flipped.append((seat, disc))
        up = self.up[seat] + 1
        self.up[seat] = up
        if disc == SKULL:
            known: bool | None = True
        else:
            # As many flowers turned up this round as it owns: it owns no skull. ``up`` counts
            # every face, so it is the cheap necessary test before the count.
            owned = self.flowers[seat] + self.skulls[seat]
            if up < owned or flipped.count((seat, FLOWER)) < owned:
                return
            known = False
        if known is not self.known[seat]:
            self.known[seat] = known
            self.frozen[seat] = None

    def _on_challenge_won(self, event: ChallengeWon) -> None:
        self.wins[event.seat] = event.wins
        self.frozen[event.seat] = None
        self._discs_back()

    def _on_challenge_failed(self, event: ChallengeFailed) -> None:
        self.phase = PENALTY
        self.skull_owner = self.turn = event.skull_owner
        self._discs_back()

    def _on_discs_shuffled(self, event: DiscsShuffled) -> None:
        self.shuffled = tuple(event.order or (FLOWER,) * event.count)

    def _on_disc_lost(self, event: DiscLost) -> None:
        seat = event.seat
        owned = self.flowers[seat] + self.skulls[seat]
        # The others do not see which disc went (a skull known before may be gone now), so
        # only "no skull" survives a loss; with no disc left there is no skull either.
        self.known[seat] = False if owned <= 1 or self.known[seat] is False else None
        disc = event.disc or FLOWER
        self.lost[seat] = (*self.lost[seat], disc)
        if disc == FLOWER:
            self.flowers[seat] -= 1
        else:
            self.skulls[seat] -= 1
        self.frozen[seat] = None
        self.shuffled = ()
        if self.alive[seat] and self.flowers[seat] + self.skulls[seat] == 0:
            self.alive[seat] = False
            self.after = _after(self.alive)
            if not self.stacks[seat]:
                self.bare -= 1

    def _on_starter_choice_offered(self, event: StarterChoiceOffered) -> None:
        self.phase = CHOOSING_STARTER
        self.turn = event.seat

    def _on_game_won(self, event: GameWon) -> None:
        self.phase = GAME_OVER_PHASE
        self.winners = tuple(event.winners)
        self.turn = None

    def _discs_back(self) -> None:
        """Everyone takes their discs back; the round's flips stay on record until the next."""
        stacks, frozen = self.stacks, self.frozen
        for s in range(len(stacks)):
            if stacks[s]:
                stacks[s] = ()
                frozen[s] = None
        self.table = 0
        self.bare = self.alive.count(True)

    # --- the read-only rules ------------------------------------------------------------------

    def to_act(self) -> tuple[int, ...]:
        """The one seat that must act now, or () when the game is over."""
        return _to_act(self.turn, self.phase)

    def legal_commands(self, seat: int) -> list[Any]:
        """Every command ``seat`` may send now (empty when it is not theirs to act); a new list
        each call, in the order the rules list them."""
        turn = self.turn
        phase = self.phase
        if turn is None or seat != turn or phase == GAME_OVER_PHASE:
            return []
        if phase == PLACING:
            stack = self.stacks[seat]
            places = _PLACINGS[self.flowers[seat] > stack.count(FLOWER)][
                self.skulls[seat] > stack.count(SKULL)
            ]
            if self.bare:
                return places[:]
            high = self.table + 1
            return places + (
                _BIDS[self.bid + 1 : high] if high <= _NBIDS else _bids(self.bid + 1, high)
            )
        if phase == BIDDING:
            high = self.table + 1
            out: list[Any] = (
                _BIDS[self.bid + 1 : high] if high <= _NBIDS else _bids(self.bid + 1, high)
            )
            out.append(_PASS)
            return out
        if phase == FLIPPING:
            up, stacks = self.up, self.stacks
            if up[seat] < len(stacks[seat]):
                return [_FLIPS[seat]]
            return [_FLIPS[s] for s in range(self.seats) if s != seat and up[s] < len(stacks[s])]
        if phase == PENALTY:
            count = len(self.shuffled)
            if count:
                return (
                    _PICKS[:count]
                    if count <= len(_PICKS)
                    else [PickDisc(index=i) for i in range(count)]
                )
            return [
                _DISCARD[d]
                for d, owned in ((FLOWER, self.flowers[seat]), (SKULL, self.skulls[seat]))
                if owned > 0
            ]
        if phase == CHOOSING_STARTER:
            alive = self.alive
            return [_STARTERS[s] for s in range(self.seats) if alive[s]]
        return []

    def outcome(self) -> dict[str, Any] | None:
        """None while the game runs; then scores (win markers), winners, ranks and ``draw``.

        Ranks: the winner first, then by win markers, then by discs still owned (ties
        share)."""
        if self.phase != GAME_OVER_PHASE:
            return None
        won = [1 if s in self.winners else 0 for s in range(self.seats)]
        keys = [(self.wins[s], self.flowers[s] + self.skulls[s]) for s in range(self.seats)]
        return {
            "scores": self.wins[:],
            "winners": list(self.winners),
            "ranks": base.ranks_from_scores(won, keys),
            "draw": False,
        }

    # --- apply: the command rules -------------------------------------------------------------

    def apply(self, seat: int, command: Any, rng: Rng, emit: Emit) -> None:
        """``seat`` sends ``command``: raises ``GameError`` naming the broken rule before any
        event, else hands each event it causes to ``emit`` in order."""
        if self.phase == GAME_OVER_PHASE:
            raise GameError(GAME_OVER, "the game is over")
        if type(seat) is not int or seat != self.turn or not 0 <= seat < self.seats:
            self._check_actor(seat, command)  # raises unless ``seat`` is to act after all
        # One dict lookup by the command's type instead of a chain of ``isinstance`` (a
        # subclass of a command type finds its rule the slow way, as the chain did).
        rule = _RULES.get(type(command)) or _rule_for(command)
        rule(self, seat, command, rng, emit)

    def apply_listed(self, seat: int, command: Any, rng: Rng, emit: Emit | None) -> None:
        """``apply`` past its checks, for a command of this kernel's own listing: ``command``
        must be one of ``legal_commands(seat)`` now (a play-out draws its commands from that
        listing, which these same rules generate: checking them again would only repeat it;
        anything else is ``apply``'s to refuse, and here it makes a wrong state).

        ``emit`` as ``apply``'s, or None when nothing records the events (a play-out): the
        kernel then runs each event's mutator itself. Either way the same events, in the
        same order."""
        _EFFECTS[type(command)](self, seat, command, rng, emit)

    # Each command's rule, reached through ``apply`` only (after the turn is checked): its
    # checks, then its effect (``_<rule>ed``, what ``apply_listed`` runs). A seat or count of
    # type ``int`` may take a shared message from the tables; anything else (a ``True`` for
    # seat 1) gets a fresh one holding exactly the value sent.

    def _place(self, seat: int, command: Place, rng: Rng, emit: Emit) -> None:
        phase = self.phase
        if phase != PLACING:
            raise _wrong_phase(command, phase)
        disc = command.disc
        stack = self.stacks[seat]
        flowers = self.flowers[seat]
        skulls = self.skulls[seat]
        if flowers + skulls == len(stack):
            raise illegal("must_bid_empty_hand", "you have no disc in hand: you must bid")
        owned = flowers if disc == FLOWER else skulls if disc == SKULL else 0
        if not owned or owned == stack.count(disc):
            raise illegal("no_such_disc", f"you have no {disc} in hand")
        self._placed(seat, command, rng, emit)

    def _placed(self, seat: int, command: Place, rng: Rng, emit: Emit | None) -> None:
        disc = command.disc
        placed = _PLACED.get(disc) if type(seat) is int and type(disc) is str else None
        event = placed[seat] if placed else DiscPlaced(seat=seat, disc=disc)
        turn = _TURNS[self.after[seat]]  # ``_next(seat)``
        if emit is None:  # the play-out's busiest move: its two mutators called directly
            self._on_disc_placed(event)
            self._on_turn_started(turn)
        else:
            emit(event)
            emit(turn)

    def _bid(self, seat: int, command: Bid, rng: Rng, emit: Emit) -> None:
        phase = self.phase
        if phase != PLACING and phase != BIDDING:
            raise _wrong_phase(command, phase)
        if phase == PLACING and self.bare:
            raise illegal(
                "place_first_disc", "everyone places a first disc before the bidding opens"
            )
        count = command.count
        cap = self.table
        if count > cap:
            raise illegal("bid_above_cap", f"there are only {cap} discs on the table")
        if count <= self.bid:
            raise illegal("bid_not_higher", f"the bid must be higher than {self.bid}")
        self._bidded(seat, command, rng, emit)

    def _bidded(self, seat: int, command: Bid, rng: Rng, emit: Emit | None) -> None:
        count = command.count
        shared = type(seat) is int and type(count) is int
        made = _BIDS_MADE[seat][count] if shared else BidMade(seat=seat, count=count)
        if emit is None:
            self._on_bid_made(made)
            if count == self.table:
                self._on_challenge_started(
                    _CHALLENGES[seat][count] if shared else ChallengeStarted(seat=seat, bid=count)
                )
            else:
                self._on_turn_started(_TURNS[self._next_bidder(seat)])
            return
        emit(made)
        if count == self.table:
            emit(_CHALLENGES[seat][count] if shared else ChallengeStarted(seat=seat, bid=count))
        else:
            emit(_TURNS[self._next_bidder(seat)])

    def _pass(self, seat: int, command: Pass, rng: Rng, emit: Emit) -> None:
        phase = self.phase
        if phase != BIDDING:
            raise _wrong_phase(command, phase)
        self._passed(seat, command, rng, emit)

    def _passed(self, seat: int, command: Pass, rng: Rng, emit: Emit | None) -> None:
        if emit is None:
            emit = self.on
        alive, passed = self.alive, self.passed
        still_in = [s for s in range(self.seats) if alive[s] and not passed[s] and s != seat]
        bidder = self.bidder
        # Read before the pass: a seat with no one left to bid after it names itself.
        following = self._next_bidder(seat)
        emit(_PASSED[seat] if type(seat) is int else BidPassed(seat=seat))
        if still_in == [bidder]:
            assert bidder is not None
            bid = self.bid
            shared = type(bidder) is int and type(bid) is int and 0 <= bid < len(_COUNTS)
            emit(_CHALLENGES[bidder][bid] if shared else ChallengeStarted(seat=bidder, bid=bid))
        else:
            emit(_TURNS[following])

    def _pick(self, seat: int, command: PickDisc, rng: Rng, emit: Emit) -> None:
        phase = self.phase
        if phase != PENALTY:
            raise _wrong_phase(command, phase)
        shuffled = self.shuffled
        if not shuffled:
            raise illegal("own_skull_discard", "it was your own skull: choose a disc with discard")
        index = command.index
        if not 0 <= index < len(shuffled):
            raise illegal("no_such_disc", f"pick an index from 0 to {len(shuffled) - 1}")
        self._picked(seat, command, rng, emit)

    def _picked(self, seat: int, command: PickDisc, rng: Rng, emit: Emit | None) -> None:
        index = command.index
        self._lose(self.shuffled[index], seat, index, emit or self.on)

    def _discard(self, seat: int, command: Discard, rng: Rng, emit: Emit) -> None:
        phase = self.phase
        if phase != PENALTY:
            raise _wrong_phase(command, phase)
        if self.shuffled:
            raise illegal("not_own_skull", "the skull's owner picks one of your discs blindly")
        disc = command.disc
        owned = self.flowers[seat] if disc == FLOWER else self.skulls[seat] if disc == SKULL else 0
        if owned == 0:
            raise illegal("no_such_disc", f"you have no {disc} left")
        self._discarded(seat, command, rng, emit)

    def _discarded(self, seat: int, command: Discard, rng: Rng, emit: Emit | None) -> None:
        self._lose(command.disc, seat, None, emit or self.on)

    def _choose_starter(self, seat: int, command: ChooseStarter, rng: Rng, emit: Emit) -> None:
        phase = self.phase
        if phase != CHOOSING_STARTER:
            raise _wrong_phase(command, phase)
        target = command.seat
        if not 0 <= target < self.seats:
            raise illegal("no_such_seat", f"there is no seat {target}")
        if not self.alive[target]:
            raise illegal("eliminated", f"seat {target} is out of the game")
        self._chose_starter(seat, command, rng, emit)

    def _chose_starter(
        self, seat: int, command: ChooseStarter, rng: Rng, emit: Emit | None
    ) -> None:
        (emit or self.on)(_round_started(self.round + 1, command.seat))

    def _check_actor(self, seat: int, command: Any) -> None:
        """Raise unless ``seat`` is the one to act, naming the most helpful rule (an object
        that is no Skull command is ``command/invalid`` whoever sends it)."""
        if not isinstance(seat, int) or not 0 <= seat < self.seats:
            raise GameError(NOT_YOUR_TURN, f"there is no seat {seat}")
        if seat in self.to_act():
            return
        if not isinstance(command, _COMMAND_TYPES):
            raise _not_a_command(command)
        if isinstance(command, PickDisc) and self.phase == PENALTY:
            raise illegal("not_skull_owner", "only the revealed skull's owner picks the disc")
        if not self.alive[seat]:
            raise illegal("eliminated", "you are out of the game")
        if self.phase == BIDDING and self.passed[seat] and isinstance(command, Bid | Pass):
            raise illegal("passed", "you passed and are out of this bidding")
        raise GameError(NOT_YOUR_TURN, f"it is seat {self.turn}'s turn")

    def _flip(self, seat: int, command: Flip, rng: Rng, emit: Emit) -> None:
        phase = self.phase
        if phase != FLIPPING:
            raise _wrong_phase(command, phase)
        target = command.seat
        if not 0 <= target < self.seats:
            raise illegal("no_such_seat", f"there is no seat {target}")
        up, stacks = self.up, self.stacks
        if target != seat and up[seat] < len(stacks[seat]):
            raise illegal("own_discs_first", "flip all your own discs first")
        stack = stacks[target]
        height = len(stack)
        if up[target] >= height:
            raise illegal("empty_stack", f"seat {target} has no face-down disc left")
        self._flipped(seat, command, rng, emit)

    def _flipped(self, seat: int, command: Flip, rng: Rng, emit: Emit | None) -> None:
        turn_up: Emit  # the flips' own events: their mutator called directly in a play-out
        if emit is None:
            emit, turn_up = self.on, self._on_disc_flipped
        else:
            turn_up = emit
        target = command.seat
        up = self.up
        stack = self.stacks[target]
        height = len(stack)
        # Your own stack turns over in one go, top down, and all of it even past the bid (the
        # book: "Nejprve odkryje všechny žetony, které sám vyložil" - first all the discs you
        # placed), so a skull of your own always fails you; another stack gives one disc.
        take = height - up[target] if target == seat else 1
        # Shared events only for seats of type ``int`` (see ``apply``).
        exact = type(target) is int and type(seat) is int
        flipped = self.flipped
        for k in range(take):
            disc = stack[height - up[target] - 1]
            shared = _FLIPPED.get(disc) if exact else None
            turn_up(shared[target] if shared else DiscFlipped(seat=target, disc=disc))
            if disc == SKULL:
                emit(
                    _FAILED[seat][target]
                    if exact
                    else ChallengeFailed(seat=seat, skull_owner=target)
                )
                if target != seat:
                    discs = (FLOWER,) * self.flowers[seat] + (SKULL,) * self.skulls[seat]
                    emit(DiscsShuffled(seat=seat, count=len(discs), order=rng.shuffle(discs)))
                return
            if len(flipped) >= self.bid and (target != seat or k == take - 1):
                wins = self.wins[seat] + 1
                emit(
                    _WON[seat][wins]
                    if exact and 0 < wins <= WINS_NEEDED
                    else ChallengeWon(seat=seat, wins=wins)
                )
                if wins >= WINS_NEEDED:
                    emit(GameWon(winners=(seat,), reason=REASON_CHALLENGES))
                else:
                    emit(_round_started(self.round + 1, seat))
                return

    def _lose(self, disc: str, picked_by: int, index: int | None, emit: Emit) -> None:
        """The challenger loses ``disc``: elimination, game end or the next round's start."""
        challenger = self.challenger
        assert challenger is not None
        emit(DiscLost(seat=challenger, disc=disc, picked_by=picked_by, index=index))
        out = not self.alive[challenger]
        if out:
            emit(
                _ELIMINATED[challenger]
                if type(challenger) is int
                else PlayerEliminated(seat=challenger)
            )
        alive = self.alive
        if alive.count(True) == 1:
            emit(GameWon(winners=(alive.index(True),), reason=REASON_LAST_STANDING))
            return
        owner = self.skull_owner
        assert owner is not None
        if self.english:
            if owner == challenger:
                emit(StarterChoiceOffered(seat=challenger))
                return
            starter = owner
        else:
            # Czech book: the challenger starts; if out, the next player still in on the left.
            starter = self._next(challenger) if out else challenger
        emit(_round_started(self.round + 1, starter))

    def _next(self, seat: int) -> int:
        """The next seat clockwise (to the left) still in the game (``seat`` if none)."""
        return self.after[seat]

    def _next_bidder(self, seat: int) -> int:
        """The next seat clockwise still in the game and the bidding (``seat`` if none)."""
        n = self.seats
        alive, passed = self.alive, self.passed
        s = seat + 1
        if s < n and alive[s] and not passed[s]:  # mostly the very next seat: no loop
            return s
        for step in range(1, n + 1):
            s = (seat + step) % n
            if alive[s] and not passed[s]:
                return s
        return seat


_MUTATORS = SkullKernel.MUTATORS
Rule = Callable[[SkullKernel, int, Any, Rng, Emit], None]

# Command type -> its rule, in the order the ``isinstance`` chain tested them.
_RULES: dict[type, Rule] = {
    Place: SkullKernel._place,
    Bid: SkullKernel._bid,
    Pass: SkullKernel._pass,
    Flip: SkullKernel._flip,
    PickDisc: SkullKernel._pick,
    Discard: SkullKernel._discard,
    ChooseStarter: SkullKernel._choose_starter,
}


# Command type -> its effect (``apply_listed``: a listed command is of one of these types).
_EFFECTS: dict[type, Callable[[SkullKernel, int, Any, Rng, Emit | None], None]] = {
    Place: SkullKernel._placed,
    Bid: SkullKernel._bidded,
    Pass: SkullKernel._passed,
    Flip: SkullKernel._flipped,
    PickDisc: SkullKernel._picked,
    Discard: SkullKernel._discarded,
    ChooseStarter: SkullKernel._chose_starter,
}


def _rule_for(command: Any) -> Rule:
    """The rule of a command whose type is not one of ``_RULES``' own: the first command
    type it is an instance of, else ``command/invalid``."""
    for cls, rule in _RULES.items():
        if isinstance(command, cls):
            return rule
    raise _not_a_command(command)


# --- the kernel a freeze keeps ---------------------------------------------------------------

# (state, kernel): the last state ``freeze`` made and a kernel at that state that no one else
# holds, for the ``thaw`` that nearly always follows (the next command's ``decide``, ``evolve``
# or ``step``, a search's play-out from the position it froze). A list used as one slot because
# ``pop`` is atomic: a kept kernel goes to one caller only, also across threads, and a state is
# matched by identity, so a kept kernel is always the position of the state asked for.
_KEPT: list[tuple[State, SkullKernel]] = []


def _keep(state: State, kernel: SkullKernel) -> None:
    """Keep ``kernel`` (at ``state``, held by no one else) for the next ``thaw`` of ``state``."""
    _KEPT[:] = ((state, kernel),)


def _take(state: State) -> SkullKernel | None:
    """The kept kernel if it is ``state``'s (then no longer kept), else None."""
    try:
        kept_state, kernel = _KEPT.pop()
    except IndexError:
        return None
    return kernel if kept_state is state else None


# --- the frozen face's read-only rules ---------------------------------------------------------

R = TypeVar("R")


def read(state: State, reader: Callable[[SkullKernel], R]) -> R:
    """``reader`` of the kernel at ``state``, which is kept again for the ``thaw`` that
    follows (``reader`` must change nothing)."""
    kernel = SkullKernel.thaw(state)
    result = reader(kernel)
    _keep(state, kernel)
    return result


def to_act(state: State) -> tuple[int, ...]:
    """The one seat that must act now, or () when the game is over."""
    return _to_act(state.turn, state.phase)


def legal_commands(state: State, seat: int) -> list[Any]:
    """Every command ``seat`` may send now (empty when it is not theirs to act)."""
    if seat not in _to_act(state.turn, state.phase):
        return []
    # Read on the kernel ``thaw`` gives, which is kept again for the ``decide`` that follows
    # (listing changes nothing).
    kernel = SkullKernel.thaw(state)
    listing = kernel.legal_commands(seat)
    _keep(state, kernel)
    return listing


def outcome(state: State) -> dict[str, Any] | None:
    """None while the game runs; then scores (win markers), winners, ranks and ``draw``."""
    if state.phase != GAME_OVER_PHASE:
        return None
    kernel = SkullKernel.thaw(state)
    result = kernel.outcome()
    _keep(state, kernel)
    return result
