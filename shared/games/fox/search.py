"""Fox's search hooks (the engine's ``SEARCH``, read by ``shared/bots/ismcts.py``).

``playout_rollout`` is ISMCTS's random play-out for Fox, played on the kernel (``FoxKernel``:
one thawed copy, its ``apply`` with its own mutators as ``emit``), so the rules it plays are
the engine's very own. What it adds is only how it draws: each choice is ``Draws.below(number
of legal commands)`` as an index into the kernel's listing and each deal the engine's
``_shuffle`` over ``Draws``, i.e. ``(n - 1).bit_length()`` bits from ``getrandbits`` per try
and nothing at all for a forced move. That is how Fox's play-outs have always drawn, so the
search's choices (which audits re-decide for every recorded bot move) stay what they were.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

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


def rewards(result: Mapping[str, Any]) -> list[float]:
    """``ismcts.rewards`` of an ``outcome``: 1 to a sole winner, 1/2 each for a draw."""
    winners = result["winners"]
    out = [0.0, 0.0]
    for w in winners:
        out[w] = 1.0 / len(winners)
    return out


def playout_rollout(engine: Any, state: State, rand: random.Random) -> list[float]:
    """``random_playout`` with the ``shared.bots.ismcts.Rollout`` signature (``engine`` is
    ignored: it is Fox's), for ``ismcts.search`` (its default rollout for Fox)."""
    return random_playout(state, rand)


def random_playout(state: State, rand: random.Random) -> list[float]:
    """Uniformly random legal commands from ``state`` to the end of the game, then the rewards
    (1 to the sole winner, 1/2 each for a draw, else 0); after ``PLAYOUT_CAP`` moves,
    ``[1, 0]``, ``[0, 1]`` or ``[0.5, 0.5]`` by the scores with this round's Treasure.

    Each move is the kernel's ``legal_commands`` listing, an index drawn with ``Draws.below``
    and the kernel's ``apply``; a deal draws through the same ``Draws``.
    """
    kernel = FoxKernel.thaw(state)
    apply, on = kernel.apply, kernel.on
    draws: Any = Draws(rand)  # the engines' Rng interface, drawn as play-outs always drew
    getrandbits = rand.getrandbits
    bits_below = _BITS_BELOW
    legal_of = _legal
    for _ in range(PLAYOUT_CAP):
        seat = kernel.turn
        if seat > 1:  # nobody to act: the game is over (a command ends a round and deals)
            result = kernel.outcome()
            if result is None:
                raise RuntimeError("fox: nobody is to act in a game that is not over")
            return rewards(result)
        legal = legal_of(kernel.phase, kernel.hand1 if seat else kernel.hand0, kernel.lead)
        n = len(legal)
        if n > 1:
            k = bits_below[n]
            r = getrandbits(k)
            while r >= n:
                r = getrandbits(k)
            apply(seat, legal[r], draws, on)
        else:
            apply(seat, legal[0], draws, on)
    return _capped(kernel)


def _capped(kernel: FoxKernel) -> list[float]:
    """A play-out cut short: the higher score (this round's Treasure in) wins, a tie halves."""
    scores, tally = kernel.game.scores, kernel.tally
    score0 = scores[0] + (tally >> 12 & 15)
    score1 = scores[1] + (tally >> 16 & 15)
    if score0 != score1:
        return [1.0, 0.0] if score0 > score1 else [0.0, 1.0]
    return [0.5, 0.5]
