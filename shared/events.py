"""Event envelopes and the hash chain that makes a game's history tamper-evident.

An envelope wraps one event with what the store knows about it: ``version`` (1..n, contiguous),
``type`` and ``data`` (the event as JSON), ``command_id`` and ``seat`` (what caused it),
``at`` (ISO-8601 UTC time it was appended), ``prev_hash`` and ``hash``. The first envelope a
decided command appends also records that ``command`` (its JSON as the engine parsed it), so an
auditor can run ``decide`` again; the others, and the service's own events, have none.

``hash = sha256(prev_hash + "\\n" + canonical_json({version, type, data, command_id, seat, at,
salt}))`` with ``command`` in the hashed object too when the envelope has one
in lowercase hex, with canonical JSON = ``json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False)``; the first envelope's ``prev_hash`` is 64 zeros. ``ChainWriter`` is the
one writer of envelopes (``seal`` is a command's worth of it); an auditor recomputes the chain
with ``verify_chain``.
"""

from __future__ import annotations

import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from shared.games.rng import hmac_hex, hmac_pads

GENESIS_HASH = "0" * 64
# In a recorded command (the first envelope's ``command``) of a bot searching on a time budget:
# the iterations its search ran, which an audit replays (the budget alone does not say).
BOT_ITERATIONS = "bot_iterations"
# In a registered bot's recorded command: the turn it was sent and what came of it
# (``shared/app/bot_turns.py``); other seats read only ``BOT_TURN_PUBLIC`` of it while the game
# runs (its latency and failure can depend on the seat's hidden view; the export has them).
BOT_TURN = "bot_turn"
BOT_TURN_PUBLIC = ("turn_id", "sent_sha256")

# Service-level event types; engines never emit these.
GAME_CREATED = "game_created"
# ``game_created``'s key of the rules version the game is decided under (``shared.games.
# rules_version``; absent: 1).
RULES_VERSION = "rules_version"
SEED_REVEALED = "seed_revealed"
SEAT_CHANGED = "seat_changed"  # a seat's occupant changed (a join, a bot taking over)
SEAT_RESIGNED = "seat_resigned"
SEAT_TAKEN_OVER = "seat_taken_over"  # a bot plays the seat from now on (time-outs, resigning)
CLOCK_SET = "clock_set"
DEADLINE_ARMED = "deadline_armed"  # a seat's turn clock started
CLOCK_STOPPED = "clock_stopped"  # a seat's turn clock stopped (it acted, or no longer acts)
TURN_TIMED_OUT = "turn_timed_out"
ENTROPY_CONTRIBUTED = "entropy_contributed"
SERVICE_EVENTS = frozenset(
    {
        GAME_CREATED,
        SEED_REVEALED,
        SEAT_CHANGED,
        SEAT_RESIGNED,
        SEAT_TAKEN_OVER,
        CLOCK_SET,
        DEADLINE_ARMED,
        CLOCK_STOPPED,
        TURN_TIMED_OUT,
        ENTROPY_CONTRIBUTED,
    }
)


def canonical_json(value: Any) -> str:
    """The one JSON spelling used for hashing and for projections (stable bytes): sorted keys,
    no whitespace, UTF-8 without escaping beyond JSON's own (RFC 8785 for the values we hash:
    strings, integers, booleans, null, arrays, objects; never floats).

    orjson writes exactly ``json.dumps(sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)`` for such values (a property test holds it to that) about seven
    times faster; whatever orjson refuses (an integer beyond 64 bits, a non-string key) is
    written by ``json`` itself."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewEvent:
    """An event about to be appended: its JSON and what caused it."""

    type: str
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope:
    """A stored event with its position in the game's stream and its link in the hash chain."""

    version: int
    type: str
    data: Mapping[str, Any]
    command_id: str | None
    seat: int | None
    at: str
    prev_hash: str
    hash: str
    command: Mapping[str, Any] | None = None
    # The entry ``ChainWriter`` wrote for it (``stored_json``'s bytes), kept so that the store
    # does not encode again what sealing just encoded. Not an init field: ``replace`` makes an
    # envelope without it, whose entry ``stored_json`` then spells from its fields.
    _stored: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, all fields (``command`` only when the envelope records one)."""
        doc = {
            "version": self.version,
            "type": self.type,
            "data": self.data,
            "command_id": self.command_id,
            "seat": self.seat,
            "at": self.at,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }
        if self.command is not None:
            doc["command"] = self.command
        return doc

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Envelope:
        """The envelope ``to_dict`` wrote."""
        return cls(**{k: doc[k] for k in _FIELDS}, command=doc.get("command"))


_FIELDS = ("version", "type", "data", "command_id", "seat", "at", "prev_hash", "hash")

# The one spelling of an envelope's hashed body and of its stored entry, joined from each
# value's JSON: by ``ChainWriter`` when it seals (``json_bytes`` pieces in the body,
# ``stored_piece`` ones in the entry), by ``chain_hash`` when a chain is verified and by
# ``stored_json`` for an envelope the writer did not write.
# The body: ``prev_hash``, a newline, then the canonical JSON of the content, its keys sorted
# (at, command, command_id, data, salt, seat, type, version); the salt is hex.
_BODY = b'%s\n{"at":%s,"command_id":%s,"data":%s,"salt":"%s","seat":%s,"type":%s,"version":%d}'
_BODY_COMMAND = (
    b'%s\n{"at":%s,"command":%s,"command_id":%s,"data":%s,"salt":"%s","seat":%s,"type":%s,'
    b'"version":%d}'
)
# The entry: the envelope's fields in ``to_dict``'s order but ``prev_hash``; ``_CAUSE`` is
# what the envelopes of one command share, joined once per command by the writer.
_CAUSE = b',"command_id":%s,"seat":%s,"at":%s,"hash":"'
_NO_CAUSE = _CAUSE % (b"null", b"null", b"null")
_ENTRY = b'{"version":%d,"type":%s,"data":%s%s%s"}'
_ENTRY_COMMAND = b'{"version":%d,"type":%s,"data":%s%s%s","command":%s}'


def event_salt(seed: str, version: int) -> str:
    """The secret salt hashed into the envelope at ``version``: HMAC-SHA256 keyed with the
    game's seed over ``salt:<version>`` (hex). Unknown until the seed is revealed, it makes
    every hash a hiding commitment: no one can test a guess of a hidden disc or price against
    a hash, so hashes can be shown to everyone; anyone recomputes them once the game ends."""
    return hmac_hex(seed, f"salt:{version}".encode())


def chain_hash(
    prev_hash: str,
    *,
    version: int,
    type: str,
    data: Mapping[str, Any],
    command_id: str | None,
    seat: int | None,
    at: str,
    salt: str,
    command: Mapping[str, Any] | None = None,
) -> str:
    """The hash of one envelope given the hash before it: SHA-256 of ``prev_hash``, a newline
    and the canonical JSON of its content with its ``salt`` (hex, as ``event_salt`` gives it;
    see docs/fairness.md). What an auditor recomputes; ``ChainWriter`` seals with the same
    body."""
    prev, at_json, cid = prev_hash.encode(), json_bytes(at), json_bytes(command_id)
    data_json, seat_json, type_json = json_bytes(data), json_bytes(seat), json_bytes(type)
    if command is None:
        body = _BODY % (prev, at_json, cid, data_json, salt.encode(), seat_json, type_json,
                        version)  # fmt: skip
    else:
        body = _BODY_COMMAND % (prev, at_json, json_bytes(command), cid, data_json,
                                salt.encode(), seat_json, type_json, version)  # fmt: skip
    return hashlib.sha256(body).hexdigest()


def seal(
    events: Iterable[NewEvent],
    *,
    after_version: int,
    prev_hash: str,
    command_id: str | None,
    seat: int | None,
    at: str,
    seed: str,
    command: Mapping[str, Any] | None = None,
) -> list[Envelope]:
    """Envelopes for ``events`` appended after ``after_version`` whose last hash is
    ``prev_hash``, salted from the game's ``seed``; the first records ``command`` when one is
    given. Sealed by a ``ChainWriter``: each envelope keeps the entry it wrote."""
    writer = ChainWriter(seed, version=after_version, prev_hash=prev_hash)
    return writer.seal(events, command_id=command_id, seat=seat, at=at, command=command)


def json_bytes(value: Any) -> bytes:
    """``canonical_json(value)`` as UTF-8 bytes: the piece of a hashed body that stands for
    ``value`` (compact canonical JSON nests: an object's spelling is its members' spellings in
    key order).

    A non-string key is spelt as the store keeps it and gives it back, a string, and sorted
    as one (``canonical_json`` sorts the keys themselves: 2 before 10), so that a chain
    sealed with such a key still verifies once read back."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        pass
    try:
        read_back = orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
        return orjson.dumps(read_back, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # what orjson cannot write at all (an integer beyond 64 bits)
        return canonical_json(value).encode()


def stored_json(env: Envelope) -> bytes:
    """The bytes the store keeps for ``env``: its fields but ``prev_hash``, which is the entry
    before's ``hash`` (not stored twice: a sixth of the bytes), each value as ``stored_piece``
    spells it. The entry the writer wrote, when it sealed ``env``."""
    raw = env._stored
    if raw is not None:
        return raw
    cause = _CAUSE % (stored_piece(env.command_id), stored_piece(env.seat), stored_piece(env.at))
    type_json, data_json, h = stored_piece(env.type), stored_piece(env.data), env.hash.encode()
    if env.command is None:
        return _ENTRY % (env.version, type_json, data_json, cause, h)
    return _ENTRY_COMMAND % (env.version, type_json, data_json, cause, h,
                             stored_piece(env.command))  # fmt: skip


_new = object.__new__
_set = object.__setattr__  # past the frozen dataclass's refusal, as its own ``__init__`` does


def _envelope(
    version: int,
    type: str,
    data: Mapping[str, Any],
    command_id: str | None,
    seat: int | None,
    at: str,
    prev_hash: str,
    hash: str,
    command: Mapping[str, Any] | None,
    stored: bytes,
) -> Envelope:
    """``Envelope(...)`` that keeps its entry ``stored``, its fields set directly: the
    dataclass's keyword ``__init__`` was two fifths of sealing one event (it has no
    ``__post_init__`` to run)."""
    env = _new(Envelope)
    _set(env, "version", version)
    _set(env, "type", type)
    _set(env, "data", data)
    _set(env, "command_id", command_id)
    _set(env, "seat", seat)
    _set(env, "at", at)
    _set(env, "prev_hash", prev_hash)
    _set(env, "hash", hash)
    _set(env, "command", command)
    _set(env, "_stored", stored)
    return env


@dataclass(slots=True)
class EncodedLog:
    """Sealed envelopes as the store keeps them: ``raws``, each the ``stored_json`` (compact
    JSON: never a raw newline) of versions ``first``, ``first + 1``, ..., the first chained to
    ``prev_hash``; what a log written in one go appends without building an ``Envelope`` for
    each event."""

    prev_hash: str
    first: int
    raws: list[bytes]
    hash: str  # the last entry's

    @property
    def entries(self) -> list[tuple[int, bytes]]:
        """(version, raw) of each entry."""
        return list(enumerate(self.raws, self.first))

    def envelopes(self) -> list[Envelope]:
        """The envelopes the entries stand for (each keeping its entry)."""
        out = []
        prev = self.prev_hash
        for raw in self.raws:
            doc = orjson.loads(raw)
            out.append(_envelope(doc["version"], doc["type"], doc["data"], doc["command_id"],
                                 doc["seat"], doc["at"], prev, doc["hash"], doc.get("command"),
                                 raw))  # fmt: skip
            prev = doc["hash"]
        return out


class ChainWriter:
    """The one writer of sealed envelopes: joins each envelope's hashed body and its stored
    entry from its values' JSON, one envelope at a time. ``seal`` (the live path: one
    command's events) hands it the events; a log written in one go (a tournament's whole
    game) hands over each value's canonical JSON (``json_bytes``), which it can keep for
    values that recur (an engine's events repeat from game to game), and takes the entries
    whole (``log``) without an ``Envelope`` for each."""

    __slots__ = ("version", "_hash", "_prev", "_raws", "_log", "_inner", "_outer", "_at_text",
                 "_at", "_cid", "_seat", "_cause")  # fmt: skip

    def __init__(self, seed: str, *, version: int, prev_hash: str) -> None:
        self.version = version
        self._hash = prev_hash.encode()  # hex, as bytes: it is joined into the next body
        self._prev = prev_hash
        self._raws: list[bytes] = []
        self._log: EncodedLog | None = None  # made when asked for (``seal`` never asks)
        self._inner, self._outer = hmac_pads(seed)
        self._at_text: str | None = None
        # Before any ``begin``: no command, no seat, no time (``null`` each).
        self._at = self._cid = self._seat = b"null"
        self._cause = _NO_CAUSE

    @property
    def hash(self) -> str:
        """The last envelope's hash (the ``prev_hash`` given while none was added)."""
        return self._hash.decode()

    @property
    def log(self) -> EncodedLog:
        """The log written so far, its ``hash`` brought up to date (the same object each
        time: its entries grow as envelopes are added)."""
        log = self._log
        if log is None:
            first = self.version - len(self._raws) + 1
            log = self._log = EncodedLog(prev_hash=self._prev, first=first, raws=self._raws,
                                         hash=self._prev)  # fmt: skip
        log.hash = self._hash.decode()
        return log

    def begin(self, *, command_id: str | None, seat: int | None, at: str) -> None:
        """What caused the envelopes that follow, and when."""
        self.begin_json(json_bytes(command_id), seat, at)

    def begin_json(self, command_id_json: bytes, seat: int | None, at: str) -> None:
        """``begin`` with the command id given as its ``json_bytes`` (a caller that spells it
        itself: ``b'"bot-%d-%d"'``)."""
        if at != self._at_text:  # a log written in one go has one time, mostly
            self._at, self._at_text = json_bytes(at), at
        seat_json = b"null" if seat is None else b"%d" % seat
        self._cid, self._seat = command_id_json, seat_json
        self._cause = _CAUSE % (command_id_json, seat_json, self._at)

    def add(self, type: str, data_json: bytes, command_json: bytes | None = None) -> None:
        """The next envelope, of ``type`` with data ``data_json`` (``json_bytes`` of the data,
        stored as it is), recording the command whose ``json_bytes`` is ``command_json`` if
        given."""
        recorded = None if command_json is None else (command_json, command_json)
        self._envelopes(recorded, [(_type_json(type), data_json, data_json)])

    def command(
        self,
        command_id_json: bytes,
        seat: int | None,
        at: str,
        command_json: tuple[bytes, bytes] | None,
        events: Iterable[tuple[bytes, bytes, bytes]],
    ) -> None:
        """One command's envelopes in one call, its shared pieces joined once (a tournament's
        play-out seals every command here): ``begin_json``, then for each ``(type_json,
        data_json, stored_data_json)`` of ``events`` an envelope whose hashed body holds
        ``data_json`` (``json_bytes`` of the data) and whose stored entry holds
        ``stored_data_json`` (the data as ``stored_piece`` spells it: the engine's key
        order, so that the entry is byte for byte what ``seal`` writes), the first recording
        the command given as ``(json_bytes, stored_piece)``. Per envelope this is the salt,
        the link and two joins."""
        self.begin_json(command_id_json, seat, at)
        self._envelopes(command_json, events)

    def seal(
        self,
        events: Iterable[NewEvent],
        *,
        command_id: str | None,
        seat: int | None,
        at: str,
        command: Mapping[str, Any] | None = None,
    ) -> list[Envelope]:
        """``begin``, then envelopes for ``events``, the first recording ``command`` if
        given: the live path's one command. Each envelope keeps its entry (the log holds it
        too)."""
        self.begin_json(json_bytes(command_id), seat, at)
        prev, version, raws = self._hash.decode(), self.version, self._raws
        start = len(raws)
        new, pieces, types = [], [], _TYPES
        for event in events:
            data, type = dict(event.data), event.type
            new.append((type, data))
            pieces.append((types.get(type) or _type_json(type), json_bytes(data),
                           stored_piece(data)))  # fmt: skip
        recorded = None if command is None else (json_bytes(command), stored_piece(command))
        hashes: list[bytes] = []
        self._envelopes(recorded, pieces, hashes)
        out = []
        for i, (type, data) in enumerate(new):
            h = hashes[i].decode()
            out.append(_envelope(version + i + 1, type, data, command_id, seat, at, prev, h,
                                 None if i else command, raws[start + i]))  # fmt: skip
            prev = h
        return out

    def _envelopes(
        self,
        command_json: tuple[bytes, bytes] | None,
        events: Iterable[tuple[bytes, bytes, bytes]],
        hashes: list[bytes] | None = None,
    ) -> None:
        """The next envelopes, of the cause ``begin_json`` set (``command``'s pieces), each
        hash appended to ``hashes`` if given."""
        at_json, cid, seat_json, cause = self._at, self._cid, self._seat, self._cause
        inner, outer, append = self._inner, self._outer, self._raws.append
        body, body_command, entry, entry_command = _BODY, _BODY_COMMAND, _ENTRY, _ENTRY_COMMAND
        version, h = self.version, self._hash
        for type_json, data_json, stored_data in events:
            version += 1
            salt = inner.copy()
            salt.update(b"salt:%d" % version)
            keyed = outer.copy()
            keyed.update(salt.digest())
            if command_json is None:
                h = _hex(_sha256(body % (h, at_json, cid, data_json, _hex(keyed.digest()),
                                         seat_json, type_json, version)).digest())  # fmt: skip
                append(entry % (version, type_json, stored_data, cause, h))
            else:
                hashed, stored = command_json
                h = _hex(_sha256(body_command % (h, at_json, hashed, cid, data_json,
                                                 _hex(keyed.digest()), seat_json, type_json,
                                                 version)).digest())  # fmt: skip
                append(entry_command % (version, type_json, stored_data, cause, h, stored))
                command_json = None
            if hashes is not None:
                hashes.append(h)
        self.version, self._hash = version, h


# Event types' JSON, kept: a game has a few dozen (bounded all the same: a caller could make
# up as many as it likes).
_TYPES: dict[str, bytes] = {}


def _type_json(type: str) -> bytes:
    found = _TYPES.get(type)
    if found is None:
        if len(_TYPES) >= 4096:
            _TYPES.clear()
        found = _TYPES[type] = json_bytes(type)
    return found


def stored_piece(value: Any) -> bytes:
    """``value`` as ``stored_json`` spells it inside an entry: compact, in its own key order
    (``json_bytes`` is the hashed spelling, keys sorted)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


_hex = binascii.hexlify  # a digest's lowercase hex, as bytes (hexdigest's, encoded)
_sha256 = hashlib.sha256


def verify_chain(envelopes: Iterable[Envelope], seed: str) -> int:
    """Checks versions are contiguous from 1 and every hash (salted from ``seed``); returns the
    last version.

    Raises ValueError naming the first broken envelope.
    """
    prev, expected = GENESIS_HASH, 1
    for env in envelopes:
        if type(env.version) is not int or env.version != expected:  # not ``true`` for 1
            raise ValueError(f"version {env.version} where {expected} was expected")
        if env.prev_hash != prev:
            raise ValueError(f"version {env.version}: prev_hash does not match")
        h = chain_hash(
            prev,
            version=env.version,
            type=env.type,
            data=env.data,
            command_id=env.command_id,
            seat=env.seat,
            at=env.at,
            salt=event_salt(seed, env.version),
            command=env.command,
        )
        if h != env.hash:
            raise ValueError(f"version {env.version}: hash does not match its content")
        prev, expected = h, expected + 1
    return expected - 1


def verify_links(envelopes: Iterable[Envelope]) -> int:
    """Without the seed: versions contiguous from 1 and each ``prev_hash`` the hash before it
    (the content's hashes wait for the seed); returns the last version."""
    prev, expected = GENESIS_HASH, 1
    for env in envelopes:
        if env.version != expected:
            raise ValueError(f"version {env.version} where {expected} was expected")
        if env.prev_hash != prev:
            raise ValueError(f"version {env.version}: prev_hash does not match")
        prev, expected = env.hash, expected + 1
    return expected - 1
