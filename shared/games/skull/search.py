"""Skull's search hooks for ``shared/bots/ismcts.py`` (the package's ``SEARCH``).

**The search (ISMCTS policy version 3)** is ``root_search``: a placing or bidding decision's
public part (another disc or open, the bid, raise or pass) is valued on deals of the seat's own
discs as a spectator deals them, so its public choices read nothing of its stack (version 2,
below, valued them knowing its stack, and a spectator read it from its bids: +13 points over
the base rate); its first disc of a round is the skull with chance ``FIRST_SKULL``, another
disc a flower. Flips, penalties and the starter are the heuristic's alone, as in version 2.

**Version 2's search** (still what ``root_commands`` and ``FLAT_SEARCH`` give ``ismcts``
without ``root_search``) is flat (``FLAT_SEARCH``): every iteration deals the
hidden discs, plays one of ``root_commands`` (the heuristic's choice first; in the placing and
the bidding also the other discs, the lowest bids, passing and one bid past the heuristic's;
elsewhere the heuristic's choice alone), then ``modelled_rollout``: the rest of the game as the
heuristic plays it for every seat, on the kernel. Random play-outs made the search weaker than
the heuristic it played against (random bids fail almost always, so a bid's play-out said
little about it): against three heuristics it won about one four-player game in ten, the
modelled search six in ten (BENCHMARKS.md, "Issue 28: Skull's search").

**The random play-out** (``random_rollout``, the search's until version 2; kept as the
kernel's random play-out that benchmarks time): uniformly random legal commands on a thawed
kernel until the game ends or ``PLAYOUT_CAP`` moves, as ``ismcts.random_playout`` plays them
in distribution, with the draws the search always made for Skull:

* a forced move draws nothing: the challenger's own stack, and a discard with one face left;
* a blind pick draws the lost disc directly (a uniform index into the face-down discs, a
  skull for an index below their skull count: a uniform disc), so the failed flip before it
  shuffles nothing (``_Unshuffled``), and a pick from a determinized order draws as one from
  a fresh one.

Engines import nothing outside ``shared.games`` (the rings), so ``PLAYOUT_CAP`` and the
rewards of a capped play-out are ``ismcts``'s restated; ``tests/unit/test_skull_search.py``
holds them equal.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from shared.games.skull import bots as heuristic
from shared.games.skull.determinize import determinize
from shared.games.skull.kernel import LISTED_COMMANDS, SkullKernel
from shared.games.skull.messages import (
    BIDDING,
    FLIPPING,
    FLOWER,
    GAME_OVER_PHASE,
    PENALTY,
    PLACING,
    SKULL,
    State,
    command_to_json,
    parse_command,
)
from shared.games.skull.view import kernel_view

T = TypeVar("T")

# ``ismcts.PLAYOUT_CAP``: a play-out stops after this many moves and is scored by win markers.
PLAYOUT_CAP = 400


class _Unshuffled:
    """The ``Rng`` a play-out applies commands with: the only draw Skull's rules make is the
    shuffle of a challenger's discs before a blind pick, and the play-out draws the picked
    disc itself, so the order stays as it is."""

    __slots__ = ()

    def shuffle(self, items: Sequence[T]) -> tuple[T, ...]:
        return tuple(items)


_UNSHUFFLED: Any = _Unshuffled()


def random_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """An ``ismcts.Rollout``: one random play-out of ``state`` (``engine`` is Skull's; not
    read); one reward per seat (1 shared among the winners, else the capped shares)."""
    below: Callable[[int], int] = rand._randbelow  # type: ignore[attr-defined]
    return play(SkullKernel.thaw(state), below, PLAYOUT_CAP)


def play(kernel: SkullKernel, randbelow: Callable[[int], int], cap: int) -> list[float]:
    """Random legal commands on ``kernel`` (changed in place) until the game ends or ``cap``
    moves; the rewards. ``randbelow(k)``: uniform in ``[0, k)``."""
    apply, legal_commands = kernel.apply_listed, kernel.legal_commands
    rng = _UNSHUFFLED
    for _ in range(cap):
        phase = kernel.phase
        if phase == GAME_OVER_PHASE:
            return _won(kernel)
        seat = kernel.turn
        assert seat is not None  # a game not over has a seat to act
        legal = legal_commands(seat)
        n = len(legal)
        # Most moves (placing, bidding, flipping another stack) draw among several commands.
        if n > 1 and phase != PENALTY:
            command = legal[randbelow(n)]
        elif phase == PENALTY:
            shuffled = kernel.shuffled
            if shuffled:
                lost = SKULL if randbelow(len(shuffled)) < shuffled.count(SKULL) else None
                command = legal[shuffled.index(SKULL) if lost else _first_flower(shuffled)]
            elif n == 1:
                command = legal[0]  # forced: no draw
            elif n:
                command = legal[randbelow(n)]
            else:
                raise RuntimeError(f"skull: seat {seat} is to act with no legal command")
        elif n == 1:
            # The challenger's own stack is forced (no draw); one other stack left is drawn.
            command = (
                legal[0] if phase == FLIPPING and legal[0].seat == seat else legal[randbelow(1)]
            )
        else:
            raise RuntimeError(f"skull: seat {seat} is to act with no legal command")
        apply(seat, command, rng, None)
    return capped_rewards(kernel.wins)


def _won(kernel: SkullKernel) -> list[float]:
    """A finished game's rewards: ``outcome()``'s winners share 1, without its dict."""
    winners = kernel.winners
    out = [0.0] * kernel.seats
    for w in winners:
        out[w] = 1.0 / len(winners)
    return out


def _first_flower(shuffled: tuple[str, ...]) -> int:
    for i, disc in enumerate(shuffled):
        if disc != SKULL:
            return i
    raise RuntimeError("skull: a blind pick among skulls only")


def capped_rewards(scores: Sequence[int]) -> list[float]:
    """``ismcts._capped`` over win markers: each seat's share of the other seats it outscores
    (ties half)."""
    n = len(scores)
    if n < 2:
        return [1.0] * n
    return [
        (sum(1.0 if mine > other else 0.5 if mine == other else 0.0 for other in scores) - 0.5)
        / (n - 1)
        for mine in scores
    ]


# --- the modelled search: the heuristic's candidates, played out as the heuristic plays -------

# A flat search (``ismcts``'s ``FLAT_SEARCH``): every iteration deals the hidden discs, plays
# one root candidate, then the rest of the game as the heuristic plays it for every seat.
FLAT_SEARCH = True


def _key(doc: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted(doc.items()))


def root_commands(view: Mapping[str, Any], rand: random.Random) -> list[dict[str, Any]] | None:
    """The root's candidates (client JSON): the heuristic's choice first; in the placing and
    the bidding (the decisions the game turns on) also each disc it may place, the lowest bid
    and the next one, passing, and one bid past the heuristic's. Elsewhere (flips, penalties,
    the starter) the heuristic's choice alone: a forced move, no search."""
    own = heuristic.choose(view, rand)
    if own is None:
        return None
    phase = view.get("phase")
    if phase not in (PLACING, BIDDING):
        return [own]
    legal: list[dict[str, Any]] = list(view.get("legal_commands") or [])
    bids = sorted((c for c in legal if c["type"] == "bid"), key=lambda c: c["count"])
    wanted = [c for c in legal if c["type"] in ("place", "pass")] + bids[:2]
    if own["type"] == "bid":
        wanted += [c for c in bids if c["count"] == own["count"] + 1]
    out = {_key(own): own}
    for doc in wanted:
        out.setdefault(_key(doc), dict(doc))
    return list(out.values())


# Client JSON of the commands listings hand out, by identity (hashing a frozen command is a
# Python call; ``id`` is not): the heuristic only reads the listing, so one dict per command
# serves every view. And back: the command of a listed command's JSON values (``(type,
# field)``), which is the heuristic's pick (a copy of one listed dict) without
# ``parse_command``.
_JSON_BY_ID: dict[int, dict[str, Any]] = {id(c): command_to_json(c) for c in LISTED_COMMANDS}
_LISTED: dict[tuple[Any, ...], Any] = {
    tuple(doc.values()): c for c in LISTED_COMMANDS for doc in (_JSON_BY_ID[id(c)],)
}


def _listing_json(commands: list[Any]) -> list[dict[str, Any]]:
    """The shared JSON of listed commands (a command made outside the tables, which the rules
    never list, gets its own)."""
    get = _JSON_BY_ID.get
    return [get(id(c)) or _fresh_json(c) for c in commands]


def _fresh_json(command: Any) -> dict[str, Any]:
    doc = command_to_json(command)
    _LISTED[tuple(doc.values())] = command
    return doc


def modelled_view(kernel: SkullKernel, seat: int) -> dict[str, Any]:
    """What the service shows ``seat`` (its view, listing, turn), for the heuristic: read
    from the kernel (``kernel_view``, no frozen state)."""
    doc = kernel_view(kernel, seat, _listing_json)
    doc.update(seat=seat, to_act=[seat], outcome=None)
    return doc


def modelled_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """The rest of the game as the heuristic plays it for every seat, on the kernel; the
    rewards (1 shared among the winners; capped: the win markers' shares)."""
    kernel = SkullKernel.thaw(state)
    apply, choose, listed = kernel.apply_listed, heuristic.choose, _LISTED
    for _ in range(PLAYOUT_CAP):
        if kernel.phase == GAME_OVER_PHASE:
            return _won(kernel)
        seat = kernel.turn
        assert seat is not None
        pick = choose(modelled_view(kernel, seat), rand)
        assert pick is not None
        # The pick is one of the listing's commands: the kernel's own, past the checks.
        apply(seat, listed[tuple(pick.values())], _UNSHUFFLED, None)
    return capped_rewards(kernel.wins)


def playout_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """What ``ismcts`` uses by default for Skull: ``modelled_rollout``."""
    return modelled_rollout(engine, state, rand)


# --- the tell-free search (ISMCTS policy version 3) ------------------------------------------

# How often a round's first disc is the skull (when both faces are in hand; the only moment it
# goes down, as for the heuristic). The search's public choices cannot use where its skull is,
# so every skull down is a bid it may have to fail: in four-player games against three
# heuristics at 100 iterations, 0 won 73% (its stack always flowers: nothing hidden, so
# nothing to read, and any opponent who knows the policy knows its stack), 0.35 43%, the
# heuristic's 0.65 about 15% (BENCHMARKS.md, "A search that is not readable").
FIRST_SKULL = 0.2


class _Draws:
    """The engines' ``Rng`` interface over a ``random.Random``, for ``determinize``."""

    __slots__ = ("below", "choice", "_random")

    def __init__(self, rand: random.Random) -> None:
        self._random = rand
        self.below: Callable[[int], int] = rand.randrange
        self.choice: Callable[[Sequence[Any]], Any] = rand.choice

    def random(self) -> float:
        return self._random.random()

    def shuffle(self, items: Sequence[T]) -> tuple[T, ...]:
        out = list(items)
        self._random.shuffle(out)
        return tuple(out)


Public = tuple[Any, ...]
Children = list[tuple[dict[str, Any], int, float]]


def public_part(doc: Mapping[str, Any]) -> Public:
    """What every seat sees of a command: its type, a bid's count, a flipped seat; not the face
    of a placed disc."""
    return (doc["type"], doc.get("count"), doc.get("seat"))


def public_candidates(view: Mapping[str, Any], own: Mapping[str, Any]) -> list[Public]:
    """The public actions searched, from public facts alone: the heuristic's (``own``, whose
    public part reads none of its discs) first, then another disc, the two lowest bids, one
    bid past the heuristic's, passing."""
    legal: list[dict[str, Any]] = list(view.get("legal_commands") or [])
    counts = sorted({c["count"] for c in legal if c["type"] == "bid"})
    wanted: list[Public] = [public_part(own)]
    if any(c["type"] == "place" for c in legal):
        wanted.append(("place", None, None))
    wanted += [("bid", n, None) for n in counts[:2]]
    if own["type"] == "bid" and own["count"] + 1 in counts:
        wanted.append(("bid", own["count"] + 1, None))
    if any(c["type"] == "pass" for c in legal):
        wanted.append(("pass", None, None))
    return list(dict.fromkeys(wanted))


def spectator_deal(view: Mapping[str, Any], seat: int, rng: Any) -> State:
    """A state ``seat``'s public choices are valued on: ``determinize`` with its own discs
    dealt as a spectator who knows this policy deals them (``keep_own=False``, then its
    stack: the skull at the bottom with chance ``FIRST_SKULL`` when the deal gave it one, or
    when the stack holds more discs than its flowers; else flowers). Nothing of its own
    hand, stack or losses is read, and the draws are the same whatever they are."""
    state = determinize(view, seat, rng, keep_own=False)
    p = state.players[seat]
    size = len(p.stack)
    if not size:
        return state
    drawn = rng.random()  # drawn whatever follows, so the stream never depends on the deal
    down = p.skulls >= 1 and (drawn < FIRST_SKULL or p.flowers < size)
    stack = (SKULL,) + (FLOWER,) * (size - 1) if down else (FLOWER,) * size
    players = list(state.players)
    players[seat] = dataclasses.replace(p, stack=stack)
    return dataclasses.replace(state, players=tuple(players))


def root_search(
    engine: Any,
    view: Mapping[str, Any],
    rand: random.Random,
    iterations: int | None,
    budget_s: float | None,
    rollout: Any = None,
) -> tuple[dict[str, Any], int, Children] | None:
    """``ismcts``'s ``root_search`` hook for a placing or bidding decision (None elsewhere,
    drawing nothing: flips, penalties and the starter stay the heuristic's alone).

    * A round's first disc (all private): the skull with chance ``FIRST_SKULL`` when both
      faces are in hand; no search.
    * Another disc's face (private): a flower while the hand holds one.
    * The public part (another disc or open, the bid, raise or pass): each of
      ``public_candidates`` valued on ``spectator_deal``'s states, so these values, and the
      draws that make them, are the same whatever is on its stack: its public choices carry
      none of it. Flat, with common draws: each round deals once and plays out every
      candidate from one seed (``modelled_rollout``), so candidates are compared on the same
      worlds; the best mean wins, ties to the heuristic's.

    ``iterations`` counts play-outs, and a time budget's count, given as ``iterations``,
    plays the same (``_rounds``); ``budget_s``, seconds of play-outs, is counted from the
    first deal, past this set-up (``ismcts``'s time budget). Answers without a search count
    none."""
    phase = view.get("phase")
    seat = view.get("seat")
    if phase not in (PLACING, BIDDING) or not isinstance(seat, int):
        return None
    own = heuristic.choose(view, rand)
    if own is None:
        return None
    legal: list[dict[str, Any]] = list(view.get("legal_commands") or [])
    if not view.get("stack"):  # a round's first disc
        faces = {c["disc"] for c in legal if c["type"] == "place"}
        if len(faces) == 1:
            return {"type": "place", "disc": faces.pop()}, 0, []
        disc = SKULL if rand.random() < FIRST_SKULL else FLOWER
        return {"type": "place", "disc": disc}, 0, []
    public = public_candidates(view, own)
    if len(public) == 1:  # one public action: no search
        return _listed(legal, public[0], own), 0, []
    draws = _Draws(random.Random(rand.getrandbits(64)))

    def deal(rng: Any) -> State:
        return spectator_deal(view, seat, rng)

    part = _Part(deal, draws, public, _dealt_command)
    done = _rounds(engine, part, seat, iterations, budget_s, rollout or modelled_rollout)
    ranked = part.ranked()
    children = [(_listed(legal, a, own), part.visits, m) for a, m in ranked]
    return _listed(legal, ranked[0][0], own), done, children


def _dealt_command(kernel: SkullKernel, seat: int, action: Public) -> Any:
    """The engine command for a public action in a deal: another disc is a flower while the
    dealt hand holds one, as the seat places them."""
    kind = action[0]
    if kind == "place":
        flowers = kernel.flowers[seat] - kernel.stacks[seat].count(FLOWER)
        return parse_command({"type": "place", "disc": FLOWER if flowers > 0 else SKULL})
    if kind == "bid":
        return parse_command({"type": "bid", "count": action[1]})
    return parse_command({"type": "pass"})


def _listed(
    legal: Sequence[dict[str, Any]], action: Public, own: Mapping[str, Any]
) -> dict[str, Any]:
    """The listed command for a public action: the heuristic's when it is that action (its
    other disc is a flower while the hand holds one), else a flower when the hand holds one."""
    if public_part(own) == action:
        return dict(own)
    matches = [c for c in legal if public_part(c) == action]
    flower = [c for c in matches if c.get("disc") == FLOWER]
    return dict((flower or matches)[0])


class _Part:
    """A flat search's table: how it deals, its draws, its candidates, the engine command of
    a candidate in a deal, and each candidate's total reward over ``visits`` deals."""

    __slots__ = ("deal", "draws", "candidates", "command", "totals", "visits")

    def __init__(
        self,
        deal: Callable[[Any], State],
        draws: _Draws,
        candidates: Sequence[Public],
        command: Callable[[SkullKernel, int, Public], Any],
    ) -> None:
        self.deal = deal
        self.draws = draws
        self.candidates = list(candidates)
        self.command = command
        self.totals = dict.fromkeys(self.candidates, 0.0)
        self.visits = 0

    def ranked(self) -> list[tuple[Public, float]]:
        """Candidates by mean reward, best first; ties in the order proposed."""
        n = max(self.visits, 1)
        order = sorted(enumerate(self.candidates), key=lambda ia: (-self.totals[ia[1]], ia[0]))
        return [(a, self.totals[a] / n) for _, a in order]


def _rounds(
    engine: Any,
    part: _Part,
    seat: int,
    iterations: int | None,
    budget_s: float | None,
    play_out: Any,
) -> int:
    """Rounds (one deal, every candidate played out on it from one seed) until ``iterations``
    play-outs or ``budget_s`` seconds from the first deal; the play-outs made. Both are checked
    after each play-out (after the first round), so a round may stop part-way: its rewards are
    then left out (every mean is over the same deals), and a count of play-outs stops where a
    deadline stopped."""
    clock = time.perf_counter
    deadline = None if budget_s is None else clock() + budget_s
    rand = part.draws._random
    candidates = part.candidates
    last = len(candidates)
    done = 0
    while True:
        dealt = part.deal(part.draws)
        seed = rand.getrandbits(64)
        rewards: list[float] = []
        for action in candidates:
            kernel = SkullKernel.thaw(dealt)
            kernel.apply(seat, part.command(kernel, seat, action), _UNSHUFFLED, kernel.on)
            rewards.append(play_out(engine, kernel.freeze(), random.Random(seed))[seat])
            done += 1
            stop = (iterations is not None and done >= iterations) or (
                deadline is not None and clock() >= deadline
            )
            if stop and part.visits and len(rewards) < last:
                return done  # part-way through a round: left out
        for action, reward in zip(candidates, rewards, strict=True):
            part.totals[action] += reward
        part.visits += 1
        if stop:
            return done
