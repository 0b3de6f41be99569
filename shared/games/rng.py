"""Deterministic randomness from a game's secret seed (HMAC-SHA256, Fisher-Yates).

The algorithm, documented so that an auditor can recompute every draw once the seed is
revealed:

* A stream is named by a label (``"setup"``, or the game version a command was decided at,
  e.g. ``"v17"``). Block ``i`` of that stream is
  ``HMAC-SHA256(key=seed_utf8, msg=f"{label}:{i}")``, read as a big-endian 256-bit integer.
* ``below(n)`` draws integers from successive blocks by rejection sampling: take the block
  modulo ``2**256``; if it is ``>= (2**256 // n) * n`` draw again, else return ``block % n``.
  (The rejection probability is below 2**-200 for any n in a game, so draws are uniform.)
* ``shuffle(items)`` is Fisher-Yates from the end: for ``i`` from ``len-1`` down to ``1``,
  ``j = below(i + 1)``, swap ``i`` and ``j``. It returns a new tuple; the input is untouched.

Engines take an ``Rng`` as an argument and record every result in an event, so replaying a
game never needs the seed.

Bots draw from the same secret: the bot at seat ``s`` deciding at version ``v`` uses
``bot_random(seed, s, v)``, a ``random.Random`` whose ``choice``/``randint``/``shuffle`` read the
bits of stream ``bot:<s>:v<v>`` in order (``BitStream``: ``k = (n - 1).bit_length()`` bits per
try until the value is below ``n``). Nobody can recompute a bot's choices before the seed is
revealed (so its choices tell nothing about its hidden hand), and everybody can after.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")

_SPACE = 1 << 256


class Rng:
    """A stream of uniform integers derived from ``seed`` and ``label``; pure and replayable."""

    __slots__ = ("_pads", "_label", "_counter")

    def __init__(self, seed: str, label: str = "setup") -> None:
        self._pads = _hmac_pads(seed)
        self._label = label
        self._counter = 0

    def _block(self) -> int:
        msg = f"{self._label}:{self._counter}".encode()
        self._counter += 1
        return _hmac_block(self._pads, msg)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (_SPACE // n) * n
        while True:
            x = self._block()
            if x < limit:
                return x % n

    def choice(self, items: Sequence[T]) -> T:
        """One uniformly chosen item."""
        return items[self.below(len(items))]

    def shuffle(self, items: Sequence[T]) -> tuple[T, ...]:
        """A Fisher-Yates shuffled copy of ``items``."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return tuple(out)


def _hmac_block(pads: tuple[Any, Any], msg: bytes) -> int:
    """HMAC-SHA256 of ``msg`` from the key's precomputed pads, as a big-endian integer: the
    same bytes as ``hmac.new(seed, msg, sha256).digest()``, without hashing the key's pads
    again for every block."""
    inner, outer = pads
    h = inner.copy()
    h.update(msg)
    o = outer.copy()
    o.update(h.digest())
    return int.from_bytes(o.digest(), "big")


def hmac_hex(seed: str, msg: bytes) -> str:
    """``hmac.new(seed, msg, sha256).hexdigest()`` from the key's cached pads (the envelope
    salts: one per event)."""
    inner, outer = _hmac_pads(seed)
    h = inner.copy()
    h.update(msg)
    o = outer.copy()
    o.update(h.digest())
    return o.hexdigest()


def hmac_pads(seed: str) -> tuple[Any, Any]:
    """SHA-256 states after the HMAC inner and outer key pads of ``seed`` (cached): copy
    them, then feed a message to the inner and the inner's digest to the outer."""
    return _hmac_pads(seed)


@functools.lru_cache(maxsize=4096)
def _hmac_pads(seed: str) -> tuple[Any, Any]:
    """SHA-256 states after the HMAC inner and outer key pads (RFC 2104) of ``seed``."""
    key = seed.encode()
    if len(key) > _BLOCK_SIZE:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK_SIZE, b"\0")
    inner = hashlib.sha256(key.translate(_IPAD))
    outer = hashlib.sha256(key.translate(_OPAD))
    return inner, outer


_BLOCK_SIZE = 64  # SHA-256's block size in bytes
# Each byte XOR the HMAC pad byte, as ``bytes.translate`` tables (a play-out of a new seed
# pays for the pads once: a loop over the key's bytes cost it as much as a dozen bot draws).
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))


def seed_hash(seed: str) -> str:
    """The commitment published in a game's first event: hex ``sha256(seed)``."""
    return hashlib.sha256(seed.encode()).hexdigest()


def bot_label(seat: int, version: int) -> str:
    """The stream label of the bot at ``seat`` deciding at ``version`` (never an engine label:
    those are ``setup`` and ``v<version>``)."""
    return f"bot:{seat}:v{version}"


class BitStream:
    """The bits of an ``Rng`` stream in order: each block's 256 bits, most significant first.

    ``below(n)`` reads ``k = (n - 1).bit_length()`` bits at a time until the value is below
    ``n`` (no bits at all for ``n == 1``): a bot's small draws share one HMAC block.
    """

    __slots__ = ("_rng", "_bits", "_left")

    def __init__(self, rng: Rng) -> None:
        self._rng = rng
        self._bits = 0
        self._left = 0

    def bits(self, k: int) -> int:
        """The next ``k`` bits as an integer."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        out = 0
        while k:
            if not self._left:
                self._bits, self._left = self._rng._block(), 256
            take = min(k, self._left)
            self._left -= take
            out = (out << take) | ((self._bits >> self._left) & ((1 << take) - 1))
            k -= take
        return out

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("n must be positive")
        k = (n - 1).bit_length()
        r = self.bits(k)
        while r >= n:
            r = self.bits(k)
        return r


class BotRandom(random.Random):
    """``random.Random`` drawing from a ``BitStream`` instead of a Mersenne Twister.

    ``choice``, ``randrange``, ``randint`` and ``shuffle`` take their integers from
    ``BitStream.below``, ``getrandbits(k)`` the next ``k`` bits, ``random()`` 53 of them.
    Nothing is seeded up front: a bot that draws nothing costs nothing.
    """

    def __init__(self, rng: Rng) -> None:  # no super().__init__: the twister is never used
        self._stream = BitStream(rng)

    def _randbelow(self, n: int) -> int:
        """What ``choice``, ``randrange``, ``randint`` and ``shuffle`` draw with."""
        return self._stream.below(n)

    def getrandbits(self, k: int) -> int:
        """The next ``k`` bits of the stream."""
        return self._stream.bits(k)

    def random(self) -> float:
        """A float in [0, 1) from 53 bits."""
        return self._stream.bits(53) * (2.0**-53)

    def seed(self, *args: object, **kwargs: object) -> None:
        """Seeding is the ``Rng``'s business; ignored."""

    def getstate(self) -> tuple[Any, ...]:
        """Not supported: the state is the stream position."""
        raise NotImplementedError

    def setstate(self, state: object) -> None:
        """Not supported."""
        raise NotImplementedError


def bot_choice_index(seed: str, seat: int, version: int, n: int) -> int:
    """``bot_random(seed, seat, version).choice(items)``'s index for ``n`` items, without
    building the ``random.Random`` (the play-out driver's fast path, once per bot move)."""
    if n == 1:
        return 0
    k = (n - 1).bit_length()
    # Block 0 of stream ``bot_label(seat, version)``, spelt as bytes and hashed here (the
    # ``_hmac_block`` inlined): every random bot move of every play-out pays for this.
    inner, outer = _hmac_pads(seed)
    h = inner.copy()
    h.update(b"bot:%d:v%d:0" % (seat, version))
    o = outer.copy()
    o.update(h.digest())
    block = int.from_bytes(o.digest(), "big")
    left = 256
    mask = (1 << k) - 1
    while left >= k:  # BitStream.below within the first block
        left -= k
        r = (block >> left) & mask
        if r < n:
            return r
    return BitStream(Rng(seed, bot_label(seat, version))).below(n)  # a draw across blocks


def bot_random(seed: str, seat: int, version: int) -> random.Random:
    """The random source of the bot at ``seat`` deciding at ``version``: stream
    ``bot:<seat>:v<version>`` of the game's secret seed, so it cannot be recomputed from
    anything public before the seed is revealed."""
    return BotRandom(Rng(seed, bot_label(seat, version)))
