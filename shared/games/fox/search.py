"""Fox's search hooks (the engine's ``SEARCH``, read by ``shared/bots/ismcts.py``).

``playout_rollout`` is ISMCTS's random play-out for Fox, played on the kernel (``FoxKernel``:
one lean thawed copy, each listed command through its ``apply_listed``, the mutators run by
the kernel itself), so the rules it plays are the engine's very own. What it adds is only how
it draws: each choice is ``Draws.below(number of legal commands)`` as an index into the
kernel's listing and each deal the engine's ``_shuffle`` over ``Draws``, i.e.
``(n - 1).bit_length()`` bits from ``getrandbits`` per try and nothing at all for a forced
move. That is how Fox's play-outs have always drawn, so the search's choices (which audits
re-decide for every recorded bot move) stay what they were.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from shared.games.fox.cards import SCORE_BY_TRICKS, TRICKS_PER_ROUND
from shared.games.fox.kernel import FoxKernel, _legal
from shared.games.fox.state import State

T = TypeVar("T")

# ISMCTS's play-out cap (``shared.bots.ismcts.PLAYOUT_CAP``; engines import only
# ``shared.games``, so it is restated here and a test holds the two equal): after that many
# moves a play-out is scored by the scores.
PLAYOUT_CAP = 400
# [n] -> bits per try of a uniform draw below n (n >= 2): the fewest that cover 0..n-1.
_BITS_BELOW = tuple(max(n - 1, 0).bit_length() for n in range(64))


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


# The winners of a finished game -> ``rewards`` of its outcome.
_REWARDS = {(0,): (1.0, 0.0), (1,): (0.0, 1.0), (0, 1): (0.5, 0.5)}


def rewards(result: Mapping[str, Any]) -> list[float]:
    """``ismcts.rewards`` of an ``outcome``: 1 to a sole winner, 1/2 each for a draw."""
    winners = result["winners"]
    out = [0.0, 0.0]
    for w in winners:
        out[w] = 1.0 / len(winners)
    return out


# A round's points, as the match value below models them: the tricks seat 0 takes ~
# Binomial(13, 1/2), and each of the three 7s (the Treasure) to either seat with even odds.
# A model, not a measurement of good play: what it must get right is the shape of the
# scoring table (3 points apart may be one trick or a whole round) and how close each seat
# is to the target, so that a play-out worth a round's points is worth them in this match.
def _round_model() -> tuple[tuple[int, int, float], ...]:
    outcomes: dict[tuple[int, int], float] = {}
    for tricks in range(TRICKS_PER_ROUND + 1):
        p_tricks = math.comb(TRICKS_PER_ROUND, tricks) / 2**TRICKS_PER_ROUND
        for sevens in range(4):
            p = p_tricks * math.comb(3, sevens) / 8
            key = (SCORE_BY_TRICKS[tricks] + sevens,
                   SCORE_BY_TRICKS[TRICKS_PER_ROUND - tricks] + 3 - sevens)  # fmt: skip
            outcomes[key] = outcomes.get(key, 0.0) + p
    return tuple((a, b, p) for (a, b), p in sorted(outcomes.items()))


_ROUND = _round_model()


# Needs of more points than this are valued as this far from the target, their difference
# kept (a long match's early rounds): the table stays small for any target (up to 1000).
_HORIZON = 64


def match_value(score0: int, score1: int, target: int) -> float:
    """Seat 0's chance to win the match from these scores between rounds, rounds drawn from
    the model above until a seat reaches ``target`` (most points wins; a tie, which the last
    round's points would break, counts half)."""
    need0, need1 = target - score0, target - score1
    if need0 <= 0 or need1 <= 0:
        return 1.0 if need0 < need1 else 0.0 if need0 > need1 else 0.5
    shift = max(need0, need1) - _HORIZON
    if shift > 0:
        need0, need1 = need0 - shift, need1 - shift
        if need0 <= 0 or need1 <= 0:  # a lead of more than the horizon
            return 1.0 if need0 < need1 else 0.0
    return _value_to_need(need0, need1)


@functools.cache
def _value_to_need(need0: int, need1: int) -> float:
    """``match_value`` with each seat ``need`` points from the target (both at least 1). Every
    round gives someone a point, so the recursion ends."""
    total = 0.0
    for a, b, p in _ROUND:
        left0, left1 = need0 - a, need1 - b
        if left0 <= 0 or left1 <= 0:
            total += p * (1.0 if left0 < left1 else 0.0 if left0 > left1 else 0.5)
        else:
            total += p * _value_to_need(left0, left1)
    return total


def playout_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """``random_playout`` with the ``shared.bots.ismcts.Rollout`` signature (``engine`` is
    ignored: it is Fox's), for ``ismcts.search`` (its default rollout for Fox)."""
    return random_playout(state, rand)


def random_playout(state: State, rand: random.Random) -> list[float]:
    """Uniformly random legal commands from ``state`` to the end of this round, then what
    its points are worth: the rewards if the game is over (1 to the sole winner, 1/2 each for
    a draw, else 0), else each seat's ``match_value`` at the new scores. A match is many
    rounds: playing the later ones at random only adds noise to what this round's play is
    worth. (A round is at most 13 tricks of four commands: ``PLAYOUT_CAP`` is never reached.)

    Each move is the kernel's ``legal_commands`` listing, an index drawn with ``Draws.below``
    and the kernel's ``apply_listed`` (the listed command, not checked again) on a lean kernel
    (no deductions kept: nothing here reads them); a deal draws through the same ``Draws``.
    """
    return kernel_rollout(FoxKernel.thaw_lean(state), rand)


def kernel_rollout(kernel: FoxKernel, rand: random.Random) -> list[float]:
    """``random_playout`` from the state ``kernel`` holds, played on ``kernel`` itself (made
    lean: its deductions go stale, so it is spent; ISMCTS's ``kernel_rollout`` hook, for the
    kernel its tree walked to the leaf, which it throws away afterwards): the same draws and
    values as ``random_playout(kernel.freeze(), rand)`` without the freeze and the thaw."""
    kernel.lean = True
    if kernel.turn > 1:  # nobody to act: a play-out from a finished game
        result = kernel.outcome()
        if result is None:
            raise RuntimeError("fox: nobody is to act in a game that is not over")
        return rewards(result)
    apply = kernel.apply_listed
    draws: Any = Draws(rand)  # the engines' Rng interface, drawn as play-outs always drew
    getrandbits = rand.getrandbits
    bits_below = _BITS_BELOW
    legal_of = _legal
    game = kernel.game
    for _ in range(PLAYOUT_CAP):
        seat = kernel.turn
        legal = legal_of(kernel.phase, kernel.hand1 if seat else kernel.hand0, kernel.lead)
        n = len(legal)
        if n > 1:
            k = bits_below[n]
            r = getrandbits(k)
            while r >= n:
                r = getrandbits(k)
            apply(seat, legal[r], draws, None)
        else:
            apply(seat, legal[0], draws, None)
        if kernel.game is not game:
            # The round was scored (a mutator replaced the game's record): the game is over,
            # or the next deal is drawn (a lean kernel does not deal it).
            winners = kernel.winners()
            if winners is not None:
                return list(_REWARDS[winners])  # ``rewards(kernel.outcome())``
            scores = kernel.game.scores
            value = match_value(scores[0], scores[1], game.target)
            return [value, 1.0 - value]
    raise RuntimeError("fox: a round longer than the play-out cap")
