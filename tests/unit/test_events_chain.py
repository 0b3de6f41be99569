"""Envelopes and the hash chain."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.events import (
    GENESIS_HASH,
    ChainWriter,
    Envelope,
    NewEvent,
    canonical_json,
    chain_hash,
    event_salt,
    json_bytes,
    seal,
    stored_json,
    stored_piece,
    verify_chain,
    verify_links,
)


def _chain(n: int) -> list[Envelope]:
    return seal(
        [NewEvent(type="e", data={"i": i}) for i in range(n)],
        after_version=0,
        prev_hash=GENESIS_HASH,
        command_id="c",
        seat=1,
        at="2026-01-01T00:00:00Z",
        seed="chain-seed",
    )


def test_seal_links_each_envelope_to_the_one_before() -> None:
    envs = _chain(3)
    assert [e.version for e in envs] == [1, 2, 3]
    assert envs[0].prev_hash == GENESIS_HASH
    assert envs[1].prev_hash == envs[0].hash and envs[2].prev_hash == envs[1].hash
    assert verify_chain(envs, "chain-seed") == 3


def test_hash_covers_every_field() -> None:
    env = _chain(1)[0]
    base = dict(
        version=1,
        type="e",
        data={"i": 0},
        command_id="c",
        seat=1,
        at="2026-01-01T00:00:00Z",
        salt=event_salt("chain-seed", 1),
    )
    assert chain_hash(GENESIS_HASH, **base) == env.hash
    for field, other in [
        ("type", "f"),
        ("data", {"i": 1}),
        ("command_id", "d"),
        ("seat", 0),
        ("at", "2026-01-01T00:00:01Z"),
        ("salt", event_salt("another seed", 1)),
    ]:
        assert chain_hash(GENESIS_HASH, **{**base, field: other}) != env.hash


@pytest.mark.parametrize("index", [0, 1, 2])
def test_any_change_or_gap_is_detected(index: int) -> None:
    envs = _chain(3)
    forged = list(envs)
    forged[index] = dataclasses.replace(envs[index], data={"i": 42})
    with pytest.raises(ValueError):
        verify_chain(forged, "chain-seed")
    if index < 2:  # dropping the last one leaves a valid, shorter chain
        with pytest.raises(ValueError):
            verify_chain(envs[:index] + envs[index + 1 :], "chain-seed")


def test_envelope_round_trips_through_dict() -> None:
    env = _chain(1)[0]
    assert Envelope.from_dict(env.to_dict()) == env


def test_salts_differ_by_version_and_seed_and_the_chain_needs_the_seed() -> None:
    assert event_salt("s", 1) != event_salt("s", 2) != event_salt("t", 2)
    envs = _chain(3)
    with pytest.raises(ValueError):
        verify_chain(envs, "another seed")  # the salts are the seed's
    assert verify_links(envs) == 3  # the links hold without it


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), inner, max_size=4
        )
    ),  # fmt: skip
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES)
def test_canonical_json_is_the_standard_librarys_spelling(value: object) -> None:
    # The hashes were defined with json.dumps; the fast path must give the same bytes.
    assert canonical_json(value) == json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def test_canonical_json_handles_what_orjson_refuses() -> None:
    assert canonical_json({"n": 2**70}) == '{"n":' + str(2**70) + "}"
    assert canonical_json({1: "a"}) == '{"1":"a"}'


def test_the_salt_is_the_plain_hmac() -> None:
    import hashlib
    import hmac

    for seed in ("s", "x" * 100, "é"):
        expected = hmac.new(seed.encode(), b"salt:7", hashlib.sha256).hexdigest()
        assert event_salt(seed, 7) == expected


def _spec_hash(prev: str, env: Envelope, seed: str) -> str:
    """The hash as docs/fairness.md defines it, with the standard library's JSON."""
    content = {k: v for k, v in env.to_dict().items() if k not in ("prev_hash", "hash")}
    content["salt"] = event_salt(seed, env.version)
    body = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest()


def _spec_entry(env: Envelope) -> bytes:
    """The stored entry as the store first wrote it: the envelope's dict but ``prev_hash``."""
    doc = env.to_dict()
    del doc["prev_hash"]
    return orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS)


@settings(max_examples=200, deadline=None)
@given(
    events=st.lists(
        st.tuples(st.sampled_from(["a", "card_played", "é", 'q"x']), JSON_VALUES), max_size=4
    ),  # fmt: skip
    command=st.none() | st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3),
    command_id=st.none() | st.text(max_size=12),
    seat=st.none() | st.integers(0, 11),
    at=st.text(max_size=30),
    after=st.integers(0, 500),
    seed=st.text(min_size=1, max_size=40),
)
def test_seal_hashes_and_stores_as_the_definition_says(
    events: list[tuple[str, object]],
    command: dict | None,
    command_id: str | None,
    seat: int | None,
    at: str,
    after: int,
    seed: str,
) -> None:
    """Held to the written definitions, not to another spelling of the same pieces: each hash
    is SHA-256 of the link and ``json.dumps`` of the content with its salt, each entry the
    envelope's own dict but ``prev_hash``; the verifier agrees, and so does an envelope
    ``replace`` made (which ``stored_json`` spells from its fields)."""
    new = [NewEvent(type=t, data={"v": v, "k": 1}) for t, v in events]
    envs = seal(new, after_version=after, prev_hash="ab" * 32, command_id=command_id,
                seat=seat, at=at, seed=seed, command=command)  # fmt: skip
    prev = "ab" * 32
    for env in envs:
        assert env.prev_hash == prev
        assert env.hash == _spec_hash(prev, env, seed)
        assert env.hash == chain_hash(prev, version=env.version, type=env.type, data=env.data,
                                      command_id=env.command_id, seat=env.seat, at=env.at,
                                      salt=event_salt(seed, env.version), command=env.command)  # fmt: skip
        assert stored_json(env) == _spec_entry(env)
        assert stored_json(dataclasses.replace(env)) == _spec_entry(env)
        prev = env.hash
    assert [e.command for e in envs] == [command, *[None] * len(envs)][: len(envs)]


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(st.tuples(st.sampled_from(["a", "card_played", "é"]), JSON_VALUES), max_size=5),
    command=st.none() | JSON_VALUES,
    command_id=st.none() | st.text(max_size=12),
    seat=st.none() | st.integers(0, 11),
    at=st.text(max_size=30),
    after=st.integers(0, 500),
    seed=st.text(min_size=1, max_size=80),
)
def test_the_chain_writer_seals_as_seal_does(
    events: list[tuple[str, object]],
    command: object,
    command_id: str | None,
    seat: int | None,
    at: str,
    after: int,
    seed: str,
) -> None:
    new = [NewEvent(type=t, data={"v": v}) for t, v in events]
    prev = "ab" * 32
    expected = seal(
        new,
        after_version=after,
        prev_hash=prev,
        command_id=command_id,
        seat=seat,
        at=at,
        seed=seed,
        command=command,  # type: ignore[arg-type]
    )
    writer = ChainWriter(seed, version=after, prev_hash=prev)
    writer.begin(command_id=command_id, seat=seat, at=at)
    for i, event in enumerate(new):
        recorded = json_bytes(command) if i == 0 and command is not None else None
        writer.add(event.type, json_bytes(event.data), recorded)
    assert writer.log.envelopes() == expected
    # What the store keeps: the envelope's fields but prev_hash, in the store's own spelling.
    assert [orjson.loads(raw) for _v, raw in writer.log.entries] == [
        orjson.loads(_spec_entry(e)) for e in expected
    ]
    assert [v for v, _raw in writer.log.entries] == [e.version for e in expected]
    assert (writer.version, writer.hash, writer.log.hash) == (
        (expected[-1].version, expected[-1].hash, expected[-1].hash)
        if expected
        else (after, prev, prev)
    )


_COMMAND = st.tuples(
    st.lists(
        st.tuples(st.sampled_from(["a", "card_played", "é", 'q"x']), JSON_VALUES), max_size=4
    ),  # fmt: skip
    st.none() | JSON_VALUES,
    st.none() | st.text(max_size=12),
    st.none() | st.integers(0, 11),
    st.sampled_from(["2026-01-01T00:00:00.000Z", "t2", 'é\n"', ""]),
)


def _sorted(value: object) -> object:
    """``value`` with its objects' keys in sorted order, as ``json_bytes`` spells them."""
    return orjson.loads(json_bytes(value))


@settings(max_examples=200, deadline=None)
@given(
    commands=st.lists(_COMMAND, max_size=5),
    before=st.lists(JSON_VALUES, max_size=2),
    after=st.integers(0, 50),
    seed=st.text(min_size=1, max_size=20),
)
def test_the_chain_writer_stores_a_whole_log_byte_for_byte(
    commands: list[tuple[list[tuple[str, object]], object, str | None, int | None, str]],
    before: list[object],
    after: int,
    seed: str,
) -> None:
    """Several commands, each begun anew (time, seat and id changing), and envelopes before
    any ``begin``: the stored bytes are the entries of what ``seal`` seals (the data's
    keys sorted, as the writer is handed them)."""
    writer = ChainWriter(seed, version=after, prev_hash="ab" * 32)
    expected: list[Envelope] = []
    version, head = after, "ab" * 32

    def sealed(new: list[NewEvent], **cause: object) -> None:
        nonlocal version, head
        envs = seal(new, after_version=version, prev_hash=head, seed=seed, **cause)  # type: ignore[arg-type]
        expected.extend(envs)
        if envs:
            version, head = envs[-1].version, envs[-1].hash

    for value in before:
        sealed([NewEvent(type="x", data={"v": _sorted(value)})], command_id=None, seat=None,
               at=None)  # fmt: skip
        writer.add("x", json_bytes({"v": value}))
    for events, command, command_id, seat, at in commands:
        new = [NewEvent(type=t, data={"v": _sorted(v)}) for t, v in events]
        sealed(new, command_id=command_id, seat=seat, at=at,
               command=None if command is None else _sorted(command))  # fmt: skip
        writer.begin(command_id=command_id, seat=seat, at=at)
        for i, event in enumerate(new):
            recorded = json_bytes(command) if i == 0 and command is not None else None
            writer.add(event.type, json_bytes(event.data), recorded)
    assert writer.log.raws == [_spec_entry(e) for e in expected]
    assert writer.log.envelopes() == expected
    assert (writer.version, writer.hash, writer.log.hash) == (version, head, head)


def test_the_bot_command_ids_json_is_json_bytes() -> None:
    for seat in range(12):
        for version in (0, 1, 99, 10**6):
            assert b'"bot-%d-%d"' % (seat, version) == json_bytes(f"bot-{seat}-{version}")


def test_the_chain_writer_spells_what_orjson_refuses_as_canonical_json() -> None:
    _writer_matches_seal({3: "x"})
    # An integer beyond 64 bits has a hashed spelling, but the store could not keep it
    # (orjson refuses to write it, and reads such a number back as a float): sealing refuses.
    with pytest.raises(TypeError):
        _writer_matches_seal({"n": 2**70})


def test_a_chain_sealed_with_integer_keys_verifies_once_read_back() -> None:
    """The store keeps an integer key as a string; the hash is of what it gives back (the
    keys sorted as strings: "10" before "2"), not of the keys sorted as integers."""
    envs = seal(
        [NewEvent(type="t", data={2: "a", 10: {1: "b", "x": 3}})],
        after_version=0,
        prev_hash=GENESIS_HASH,
        command_id="c",
        seat=0,
        at="now",
        seed="s",
        command={5: "k"},  # type: ignore[dict-item]
    )
    read = [Envelope.from_dict({**orjson.loads(stored_json(e)), "prev_hash": GENESIS_HASH})
            for e in envs]  # fmt: skip
    assert read[0].data == {"2": "a", "10": {"1": "b", "x": 3}}
    assert verify_chain(read, "s") == 1


def _writer_matches_seal(data: dict) -> None:
    [expected] = seal(
        [NewEvent(type="t", data=data)],
        after_version=0,
        prev_hash=GENESIS_HASH,
        command_id="c",
        seat=0,
        at="now",
        seed="s",
    )
    writer = ChainWriter("s", version=0, prev_hash=GENESIS_HASH)
    writer.begin(command_id="c", seat=0, at="now")
    writer.add("t", json_bytes(data))
    assert writer.hash == expected.hash


_DATA = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)
_SEALED = st.tuples(
    st.none() | st.text(max_size=12),  # the command id
    st.none() | st.integers(0, 5),  # the seat
    st.sampled_from(["2026-01-01T00:00:00.000Z", "t2", 'é\n"']) | st.text(max_size=10),
    st.none() | _DATA,  # the command recorded
    st.lists(st.tuples(st.text(max_size=12), _DATA), min_size=1, max_size=4),  # its events
    st.integers(0, 2),  # envelopes added after it with the same cause (no new begin)
)


@settings(max_examples=80, deadline=None)
@given(
    commands=st.lists(_SEALED, min_size=1, max_size=4),
    after=st.integers(0, 50),
    seed=st.text(min_size=1, max_size=20),
)
def test_sealing_a_command_in_one_call_is_beginning_it_and_adding_each_envelope(
    commands: list[tuple[str | None, int | None, str, dict | None, list[tuple[str, dict]], int]],
    after: int,
    seed: str,
) -> None:
    whole = ChainWriter(seed, version=after, prev_hash="cd" * 32)
    stepwise = ChainWriter(seed, version=after, prev_hash="cd" * 32)
    expected: list[Envelope] = []
    version, head = after, "cd" * 32
    for command_id, seat, at, command, events, more in commands:
        cid = json_bytes(command_id)
        recorded = None if command is None else json_bytes(command)
        spelt = None if command is None else (json_bytes(command), stored_piece(command))
        pieces = [(json_bytes(t), json_bytes(d), stored_piece(d)) for t, d in events]
        whole.command(cid, seat, at, spelt, pieces)
        stepwise.begin_json(cid, seat, at)
        for i, (t, d) in enumerate(events):
            stepwise.add(t, json_bytes(d), recorded if i == 0 else None)
        assert (whole.version, whole.hash) == (stepwise.version, stepwise.hash)
        for k in range(more):
            for writer in (whole, stepwise):
                writer.add("more", json_bytes({"k": k}))
        # One cause for the command's envelopes and those added after it; seal records the
        # command in the first. The entries keep the data's own key order, as seal's do (add
        # stores its pieces as given: sorted here).
        new = [NewEvent(type=t, data=d) for t, d in events]
        new += [NewEvent(type="more", data={"k": k}) for k in range(more)]
        envs = seal(
            new,
            after_version=version,
            prev_hash=head,
            command_id=command_id,
            seat=seat,
            at=at,
            seed=seed,
            command=command,
        )
        expected.extend(envs)
        version, head = envs[-1].version, envs[-1].hash
    assert whole.log.raws == [_spec_entry(e) for e in expected]
    assert [orjson.loads(r) for r in whole.log.raws] == [orjson.loads(r) for r in stepwise.log.raws]
    assert whole.log.envelopes() == expected
    assert (whole.version, whole.hash, whole.log.hash) == (version, head, head)
    assert (stepwise.version, stepwise.hash) == (version, head)


def test_a_version_must_be_an_integer_not_a_boolean() -> None:
    """``true == 1`` in Python: a first envelope whose version is ``true``, hashed as the
    definition says (``"version":true``), is refused, not checked against ``1``'s spelling."""
    [env] = _chain(1)
    forged = dataclasses.replace(env, version=True)
    forged = dataclasses.replace(forged, hash=_spec_hash(GENESIS_HASH, forged, "chain-seed"))
    with pytest.raises(ValueError, match="where 1 was expected"):
        verify_chain([forged], "chain-seed")
