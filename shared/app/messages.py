"""Messages of the application: a command on its way, a created game, command outcomes."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared.games.errors import GameError
from shared.match.record import GameRecord

BOT_COMMAND_PREFIX = "bot-"  # a bot's command id: bot-<seat>-<version>


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandMessage:
    """A command as it travels on a command stream."""

    command_id: str
    game_id: str
    seat: int
    body: Mapping[str, Any]
    expected_version: int | None = None
    # The hash of the seat token the gateway authenticated the sender with: the worker checks
    # it against the roster it folds, so a token a player gave up (leaving a seat) stops
    # working even where a gateway's cached roster is behind.
    by: str | None = None

    def to_fields(self) -> dict[str, str]:
        """Stream entry fields."""
        fields = {
            "id": self.command_id,
            "game": self.game_id,
            "seat": str(self.seat),
            "body": json.dumps(self.body, separators=(",", ":")),
            "ev": "" if self.expected_version is None else str(self.expected_version),
        }
        if self.by is not None:
            fields["by"] = self.by
        return fields

    @classmethod
    def from_fields(cls, fields: Mapping[bytes | str, bytes | str]) -> CommandMessage:
        """The message ``to_fields`` wrote."""
        f = {_s(k): _s(v) for k, v in fields.items()}
        return cls(
            command_id=f["id"],
            game_id=f["game"],
            seat=int(f["seat"]),
            body=json.loads(f["body"]),
            expected_version=int(f["ev"]) if f.get("ev") else None,
            by=f.get("by") or None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Created:
    """A new game: its id, one secret token per human seat (None for bots), its record."""

    game_id: str
    tokens: list[str | None]
    record: GameRecord


@dataclass(frozen=True, slots=True)
class Reply:
    """What the worker hands a waiting client: the command's outcome (compact JSON) and, when
    it was accepted, the seat's new view (its projection's JSON, passed on unparsed).

    On the wire (the bus's reply value) it is the outcome, then a newline and the view when
    there is one: compact JSON holds no raw newline, so the first one splits them. This class
    is the only place that writes or reads that format."""

    outcome: str
    view: str | None = None

    def to_wire(self) -> str:
        """The reply as the bus stores it."""
        return self.outcome if self.view is None else self.outcome + "\n" + self.view

    @classmethod
    def from_wire(cls, raw: bytes | str) -> Reply:
        """The reply ``to_wire`` wrote."""
        text = raw.decode() if isinstance(raw, bytes) else raw
        outcome, newline, view = text.partition("\n")
        return cls(outcome, view if newline else None)

    def outcome_doc(self) -> dict[str, Any]:
        """The outcome, parsed."""
        doc: dict[str, Any] = json.loads(self.outcome)
        return doc


def token_hash(token: str) -> str:
    """What is stored of a seat token."""
    return hashlib.sha256(token.encode()).hexdigest()


def seat_for_token(token_hashes: Sequence[str | None], token: str) -> int | None:
    """The seat whose token this is, comparing every stored hash in constant time."""
    presented = token_hash(token)
    found: int | None = None
    for i, stored in enumerate(token_hashes):
        if stored is not None and hmac.compare_digest(stored, presented):
            found = i
    return found


def key_matches(keys_: frozenset[str], presented: str) -> bool:
    """Whether ``presented`` is one of ``keys_`` (constant time per key)."""
    ok = False
    for k in keys_:
        ok |= hmac.compare_digest(k.encode(), presented.encode())
    return ok


def shard_of(game_id: str, shards: int) -> int:
    """The shard a game's commands go to (stable across processes)."""
    return zlib.crc32(game_id.encode()) % shards


def new_command_id() -> str:
    """A fresh command id."""
    return secrets.token_hex(12)


def accepted(cid: str, record: GameRecord, versions: tuple[int, int]) -> dict[str, Any]:
    """The outcome of an applied command."""
    return {
        "command_id": cid,
        "status": "accepted",
        "version": record.version,
        "events": {"first": versions[0], "last": versions[1]},
    }


def rejected(cid: str, exc: GameError, version: int | None) -> dict[str, Any]:
    """The outcome of a refused command."""
    return {"command_id": cid, "status": "rejected", "version": version, "error": exc.to_dict()}


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
