"""Skull's search hooks for ``shared/bots/ismcts.py`` (the package's ``SEARCH``).

**The search (ISMCTS policy version 2)** is flat (``FLAT_SEARCH``): every iteration deals the
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

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from shared.games.skull import bots as heuristic
from shared.games.skull.kernel import SkullKernel
from shared.games.skull.messages import (
    BIDDING,
    FLIPPING,
    GAME_OVER_PHASE,
    PENALTY,
    PLACING,
    SKULL,
    State,
    command_to_json,
    parse_command,
)
from shared.games.skull.view import view

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
    apply, on, legal_commands = kernel.apply, kernel.on, kernel.legal_commands
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
        apply(seat, command, rng, on)
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


def modelled_view(kernel: SkullKernel, seat: int) -> dict[str, Any]:
    """What the service shows ``seat`` (its view, listing, turn), for the heuristic."""
    doc = view(kernel.freeze(), seat)
    doc["legal_commands"] = [command_to_json(c) for c in kernel.legal_commands(seat)]
    doc.update(seat=seat, to_act=[seat], outcome=None)
    return doc


def modelled_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """The rest of the game as the heuristic plays it for every seat, on the kernel; the
    rewards (1 shared among the winners; capped: the win markers' shares)."""
    kernel = SkullKernel.thaw(state)
    apply, on = kernel.apply, kernel.on
    for _ in range(PLAYOUT_CAP):
        if kernel.phase == GAME_OVER_PHASE:
            return _won(kernel)
        seat = kernel.turn
        assert seat is not None
        pick = heuristic.choose(modelled_view(kernel, seat), rand)
        assert pick is not None
        apply(seat, parse_command(pick), _UNSHUFFLED, on)
    return capped_rewards(kernel.wins)


def playout_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """What ``ismcts`` uses by default for Skull: ``modelled_rollout``."""
    return modelled_rollout(engine, state, rand)
