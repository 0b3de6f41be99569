"""The hand-packed commands of a batch of whole logs are the bytes redis-py packs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.connection import PythonRespSerializer

from shared.store.redis_streams import _LARGE, _resp_chunks

ARG = st.binary(max_size=40) | st.text(max_size=20) | st.integers(-(2**40), 2**40)
BIG = st.binary(min_size=_LARGE + 1, max_size=_LARGE + 50)


def _encode(value: object) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(ARG | BIG, max_size=8), min_size=1, max_size=5))
def test_the_chunks_are_what_redis_py_packs(arguments: list[list[object]]) -> None:
    # A command's name first (redis-py splits a name with a space in it into words).
    commands = [[b"EVALSHA", *args] for args in arguments]
    packer = PythonRespSerializer(_LARGE, _encode)
    expected = b"".join(b"".join(packer.pack(*args)) for args in commands)
    chunks = _resp_chunks(commands)
    assert b"".join(chunks) == expected
    # A large argument goes as it is, not copied into a packed buffer.
    for args in commands:
        for arg in args:
            if isinstance(arg, bytes) and len(arg) > _LARGE:
                assert any(chunk is arg for chunk in chunks)


@pytest.mark.parametrize("bad", [1.5, True, None, ["x"]])
def test_an_argument_of_another_type_is_refused(bad: object) -> None:
    with pytest.raises(TypeError):
        _resp_chunks([[b"SET", "k", bad]])
