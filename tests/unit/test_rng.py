"""The documented randomness algorithm: deterministic, uniform enough, recomputable."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest

from shared.games.rng import Rng, bot_choice_index, bot_random, seed_hash


def test_same_seed_and_label_give_the_same_stream() -> None:
    assert Rng("s", "v3").shuffle(range(33)) == Rng("s", "v3").shuffle(range(33))
    assert Rng("s", "v3").shuffle(range(33)) != Rng("s", "v4").shuffle(range(33))
    assert Rng("s", "v3").shuffle(range(33)) != Rng("t", "v3").shuffle(range(33))


def test_below_follows_the_documented_algorithm() -> None:
    block = hmac.new(b"seed", b"setup:0", hashlib.sha256).digest()
    assert Rng("seed").below(33) == int.from_bytes(block, "big") % 33


def test_shuffle_is_a_permutation_and_leaves_the_input_alone() -> None:
    items = list(range(20))
    out = Rng("x").shuffle(items)
    assert sorted(out) == items and items == list(range(20))


def test_below_is_roughly_uniform() -> None:
    rng = Rng("uniform")
    counts = Counter(rng.below(6) for _ in range(6000))
    assert set(counts) == set(range(6))
    assert all(800 < c < 1200 for c in counts.values())


def test_below_rejects_non_positive() -> None:
    with pytest.raises(ValueError):
        Rng("x").below(0)


def test_seed_hash_is_sha256_hex() -> None:
    assert seed_hash("abc") == hashlib.sha256(b"abc").hexdigest()


def test_bot_randomness_comes_from_the_secret_seed_seat_and_version() -> None:
    assert len({bot_random(seed, 1, 17).random() for seed in ("a", "b", "c")}) == 3
    assert bot_random("a", 1, 17).random() == bot_random("a", 1, 17).random()
    assert bot_random("a", 1, 17).random() != bot_random("a", 2, 17).random()
    assert bot_random("a", 1, 17).random() != bot_random("a", 1, 18).random()


def test_bot_randomness_follows_the_documented_derivation() -> None:
    def block(i: int) -> int:
        digest = hmac.new(b"seed", f"bot:2:v9:{i}".encode(), hashlib.sha256).digest()
        return int.from_bytes(digest, "big")

    bits = format(block(0), "0256b") + format(block(1), "0256b")  # the stream, in order
    assert bot_random("seed", 2, 9).getrandbits(5) == int(bits[:5], 2)
    # choice(20 items) reads (20 - 1).bit_length() = 5 bits per try until below 20.
    pos, expected = 0, None
    while expected is None:
        r = int(bits[pos : pos + 5], 2)
        pos += 5
        expected = r if r < 20 else None
    assert bot_random("seed", 2, 9).choice(range(20)) == expected
    assert bot_choice_index("seed", 2, 9, 20) == expected
    # Later draws go on where the last one stopped: one block serves many small draws.
    rng = bot_random("seed", 2, 9)
    assert [rng.getrandbits(3) for _ in range(100)] == [
        int(bits[3 * i : 3 * i + 3], 2) for i in range(100)
    ]


def test_a_single_choice_draws_nothing() -> None:
    assert bot_choice_index("seed", 0, 1, 1) == 0
    assert bot_random("seed", 0, 1).choice(["only"]) == "only"


def test_bot_randomness_is_uniform_enough() -> None:
    counts = Counter(bot_random("u", 0, v).choice("abc") for v in range(3000))
    assert all(900 < c < 1100 for c in counts.values())


@pytest.mark.parametrize("seed", ["", "s", "x" * 63, "y" * 64, "z" * 65, "é" * 40, "k" * 500])
def test_blocks_are_hmac_sha256_for_keys_of_every_length(seed: str) -> None:
    rng = Rng(seed, "v7")
    for i in range(3):
        expected = hmac.new(seed.encode(), f"v7:{i}".encode(), hashlib.sha256).digest()
        assert rng._block() == int.from_bytes(expected, "big")


def test_the_fast_bot_choice_is_the_bit_streams_choice() -> None:
    for n in (2, 3, 5, 7, 13, 33, 1000, 2**40 + 1):
        for v in range(60):
            assert bot_choice_index("s", 1, v, n) == bot_random("s", 1, v).choice(range(n))
