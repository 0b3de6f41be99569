"""Event envelopes and the hash chain that makes a game's history tamper-evident.

An envelope wraps one event with what the store knows about it: ``version`` (1..n, contiguous),
``type`` and ``data`` (the event as JSON), ``command_id`` and ``seat`` (what caused it),
``at`` (ISO-8601 UTC time it was appended), ``prev_hash`` and ``hash``. The first envelope a
decided command appends also records that ``command`` (its JSON as the engine parsed it), so an
auditor can run ``decide`` again; the others, and the service's own events, have none.

``hash = sha256(prev_hash + "\\n" + canonical_json({version, type, data, command_id, seat, at}))``
with ``command`` in the hashed object too when the envelope has one
in lowercase hex, with canonical JSON = ``json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False)``; the first envelope's ``prev_hash`` is 64 zeros. An auditor recomputes
the chain with ``verify_chain``.
"""

from __future__ import annotations

import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from shared.games.rng import hmac_hex, hmac_pads

GENESIS_HASH = "0" * 64
# In a recorded command (the first envelope's ``command``) of a bot searching on a time budget:
# the iterations its search ran, which an audit replays (the budget alone does not say).
BOT_ITERATIONS = "bot_iterations"

# Service-level event types; engines never emit these.
GAME_CREATED = "game_created"
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
    and the canonical JSON of its content with its ``salt`` (see docs/fairness.md)."""
    content: dict[str, Any] = {
        "version": version,
        "type": type,
        "data": data,
        "command_id": command_id,
        "seat": seat,
        "at": at,
        "salt": salt,
    }
    if command is not None:
        content["command"] = command
    body = canonical_json(content)
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


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
    given."""
    out: list[Envelope] = []
    version = after_version
    for event in events:
        version += 1
        data = dict(event.data)
        recorded = command if version == after_version + 1 else None
        h = chain_hash(
            prev_hash,
            version=version,
            type=event.type,
            data=data,
            command_id=command_id,
            seat=seat,
            at=at,
            salt=event_salt(seed, version),
            command=recorded,
        )
        out.append(
            Envelope(
                version=version,
                type=event.type,
                data=data,
                command_id=command_id,
                seat=seat,
                at=at,
                prev_hash=prev_hash,
                hash=h,
                command=recorded,
            )
        )
        prev_hash = h
    return out


def json_bytes(value: Any) -> bytes:
    """``canonical_json(value)`` as UTF-8 bytes: the piece of a hashed body that stands for
    ``value`` (compact canonical JSON nests: an object's spelling is its members' spellings in
    key order)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return canonical_json(value).encode()


def stored_json(env: Envelope) -> bytes:
    """The bytes the store keeps for ``env``: its fields but ``prev_hash``, which is the entry
    before's ``hash`` (not stored twice: a sixth of the bytes)."""
    doc = env.to_dict()
    del doc["prev_hash"]
    return orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS)


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
        """The envelopes the entries stand for."""
        out = []
        prev = self.prev_hash
        for raw in self.raws:
            doc = orjson.loads(raw)
            doc["prev_hash"] = prev
            prev = doc["hash"]
            out.append(Envelope.from_dict(doc))
        return out


class ChainWriter:
    """Seals and encodes one envelope at a time, byte for byte as ``seal`` hashes and the store
    encodes, for logs written in one go (a tournament's whole game): the caller hands over each
    value's canonical JSON (``json_bytes``), which it can keep for values that recur (an
    engine's events repeat from game to game), and both the hashed body and the stored entry
    are joined from those pieces instead of encoding every envelope whole, twice. A property
    test holds it to ``seal``."""

    __slots__ = ("version", "_hash", "_log", "_inner", "_outer", "_at_text", "_at", "_cid",
                 "_seat_type", "_cause", "_types", "_seats")  # fmt: skip

    def __init__(self, seed: str, *, version: int, prev_hash: str) -> None:
        self.version = version
        self._hash = prev_hash.encode()  # hex, as bytes: it is joined into the next body
        self._log = EncodedLog(prev_hash=prev_hash, first=version + 1, raws=[], hash=prev_hash)
        self._inner, self._outer = hmac_pads(seed)
        self._at_text: str | None = None
        self._at = b"null"
        self._types: dict[str, bytes] = {}
        self._seats: dict[int | None, tuple[bytes, bytes]] = {}
        # Before any ``begin``: no command, no seat, no time (``null`` each).
        self._cid = b"null"
        self._seat_type = b'","seat":null,"type":'
        self._cause = b',"command_id":null,"seat":null,"at":null,"hash":"'

    @property
    def hash(self) -> str:
        """The last envelope's hash (the ``prev_hash`` given while none was added)."""
        return self._hash.decode()

    @property
    def log(self) -> EncodedLog:
        """The log written so far, its ``hash`` brought up to date (the same object each
        time: its entries grow as envelopes are added)."""
        self._log.hash = self._hash.decode()
        return self._log

    def begin(self, *, command_id: str | None, seat: int | None, at: str) -> None:
        """What caused the envelopes that follow, and when."""
        self.begin_json(json_bytes(command_id), seat, at)

    def begin_json(self, command_id_json: bytes, seat: int | None, at: str) -> None:
        """``begin`` with the command id given as its ``json_bytes`` (a caller that spells it
        itself: ``b'"bot-%d-%d"'``)."""
        if at != self._at_text:  # a log written in one go has one time, mostly
            self._at, self._at_text = json_bytes(at), at
        # What every envelope of one command shares, around its data, salt, type and version:
        # the hashed body's keys in sorted order, the stored entry's in the envelope's.
        at_json, cid = self._at, command_id_json
        pieces = self._seats.get(seat)
        if pieces is None:
            seat_json = b"null" if seat is None else b"%d" % seat
            pieces = self._seats[seat] = (seat_json, b'","seat":%s,"type":' % seat_json)
        seat_json, self._seat_type = pieces
        self._cid = cid
        self._cause = b',"command_id":%s,"seat":%s,"at":%s,"hash":"' % (cid, seat_json, at_json)

    def add(self, type: str, data_json: bytes, command_json: bytes | None = None) -> None:
        """The next envelope, of ``type`` with data ``data_json`` (``json_bytes`` of the data,
        stored as it is), recording the command whose ``json_bytes`` is ``command_json`` if
        given."""
        type_json = self._types.get(type)
        if type_json is None:
            type_json = self._types[type] = json_bytes(type)
        recorded = None if command_json is None else (command_json, command_json)
        self._envelopes(recorded, [(type_json, data_json, data_json)])

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
        ``stored_data_json`` (the data as ``stored_json`` spells it: the engine's key
        order, so that the entry is byte for byte what ``seal`` and the store write), the
        first recording the command given as ``(json_bytes, stored spelling)``. Per envelope
        this is the salt, the link and two joins."""
        self.begin_json(command_id_json, seat, at)
        self._envelopes(command_json, events)

    def _envelopes(
        self, command_json: tuple[bytes, bytes] | None, events: Iterable[tuple[bytes, bytes, bytes]]
    ) -> None:
        """The next envelopes, of the cause ``begin_json`` set (``command``'s pieces)."""
        at_json, cid, seat_type, cause = self._at, self._cid, self._seat_type, self._cause
        inner, outer, append = self._inner, self._outer, self._log.raws.append
        version, h = self.version, self._hash
        for type_json, data_json, stored_data in events:
            version += 1
            salt = inner.copy()
            salt.update(b"salt:%d" % version)
            keyed = outer.copy()
            keyed.update(salt.digest())
            if command_json is None:
                h = _hex(_sha256(b'%s\n{"at":%s,"command_id":%s,"data":%s,"salt":"%s%s%s,"version":%d}' % (
                    h, at_json, cid, data_json, _hex(keyed.digest()), seat_type, type_json,
                    version)).digest())  # fmt: skip
                append(b'{"version":%d,"type":%s,"data":%s%s%s"}' % (
                    version, type_json, stored_data, cause, h))  # fmt: skip
            else:
                hashed, stored = command_json
                h = _hex(_sha256(b'%s\n{"at":%s,"command":%s,"command_id":%s,"data":%s,"salt":"%s%s%s,"version":%d}' % (  # noqa: E501
                    h, at_json, hashed, cid, data_json, _hex(keyed.digest()), seat_type,
                    type_json, version)).digest())  # fmt: skip
                append(b'{"version":%d,"type":%s,"data":%s%s%s","command":%s}' % (
                    version, type_json, stored_data, cause, h, stored))  # fmt: skip
                command_json = None
        self.version, self._hash = version, h


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
        if env.version != expected:
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
