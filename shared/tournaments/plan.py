"""A tournament's plan: who plays which seat of which game with which seed, from the request
alone, so that any task (or an auditor) can work out game ``i`` without a stored schedule.

Formats, for ``E`` entrants and ``k`` seats a game (``groups`` = every ``k``-subset of the
entrants in a fixed order, ``C(E, k)`` of them):

* ``round_robin``: one *cycle* plays every group once in each of its ``k`` cyclic seatings, so
  each group meets equally often and each of its entrants sits in each seat equally often; a
  game has its own deal. Two entrants in a two-seat game: seats alternate.
* ``duplicate``: the same games, but the ``k`` seatings of a group share one deal (one derived
  seed), so the luck of the cards falls on every entrant alike.

* ``gauntlet``: the entrant ``candidate`` (default 0) plays each other entrant in a duplicate
  pair (both seatings of one deal); the others do not play each other. A cycle is ``2 (E - 1)``
  games: one pair against each opponent in entrant order.
* ``sprt``: two entrants, ``[candidate, baseline]``, in duplicate pairs until the SPRT
  (``shared.tournaments.sprt``) decides, ``games`` being the cap; a cycle is one pair.

In ``gauntlet`` and ``sprt`` a game seats two entrants; in a game of more seats (``players``
defaults to the game's fewest, at least 2) the other seats are filled by ``field`` bots
(default ``{"bot": "random"}``), which are not entrants: they are in no standings. The two
entrants' seats move round the table from pair to pair (pair ``j`` uses seats ``j mod k`` and
``j + 1 mod k``), so neither format favours a seat.

An entrant is a built-in bot's spec (``{"bot": "ismcts", "iterations": 500}``) or a registered
bot's (``{"bot_id": "<id>"}``, looked up by the caller: ``parse(..., registered=)``). A game
seating a registered bot is *live* (``Plan.live``): it is played move by move through the
service's own game path, its bots asked as in any game, rather than whole in one task.

``games`` must be a whole number of cycles (``C(E, k) * k`` games; ``2 (E - 1)`` in a gauntlet,
2 in an sprt match); otherwise the request is refused with the nearest counts that work.
"""

from __future__ import annotations

import dataclasses
import hmac
import math
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from types import MappingProxyType
from typing import Any

from shared import games
from shared.app import bots
from shared.app.names import MAX_NAME as MAX_NAME  # the tournament schema shows it
from shared.app.names import name_error
from shared.app.ports import RegisteredBot
from shared.games.errors import GameError
from shared.tournaments import sprt as sprt_test

FORMATS = ("round_robin", "duplicate", "gauntlet", "sprt")
# Formats of two entrants a game (a candidate and one opponent), the other seats ``field`` bots.
DUELS = ("gauntlet", "sprt")
DEFAULT_FIELD: Mapping[str, Any] = MappingProxyType({"bot": "random"})
DEFAULT_MAX_GAMES = 10_000
MAX_ENTRANTS = 32


class PlanError(ValueError):
    """A tournament request that cannot be planned; ``errors`` maps fields to reasons."""

    def __init__(self, detail: str, errors: Mapping[str, str]) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = dict(errors)


@dataclass(frozen=True, slots=True, kw_only=True)
class Entrant:
    """One competitor: a display name and a bot seat spec (``{"bot", settings...}``)."""

    name: str
    spec: Mapping[str, Any]

    @property
    def label(self) -> str:
        """The spec in the CLI's spelling, e.g. ``ismcts:iterations=500``."""
        return spec_label(self.spec)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """A checked tournament request."""

    game: str
    entrants: tuple[Entrant, ...]
    players: int
    games: int
    format: str
    seed: str
    options: Mapping[str, Any]
    # gauntlet and sprt: the candidate's entrant index, and the bot of the other seats.
    candidate: int = 0
    field: Mapping[str, Any] = dataclasses.field(default_factory=lambda: dict(DEFAULT_FIELD))
    # sprt: elo0, elo1, alpha, beta (``sprt_test.params``); empty otherwise.
    sprt: Mapping[str, float] | None = None

    @property
    def groups(self) -> tuple[tuple[int, ...], ...]:
        """Every ``players``-subset of entrant indexes, in lexicographic order."""
        return tuple(combinations(range(len(self.entrants)), self.players))

    @property
    def cycle(self) -> int:
        """Games in one cycle: every group in each of its seatings."""
        return cycle_length(len(self.entrants), self.players, self.format)

    @property
    def duel(self) -> bool:
        """Whether a game seats two entrants, the field filling the other seats."""
        return self.format in DUELS

    def seating(self, index: int) -> tuple[int | None, ...]:
        """Entrant index at each seat of game ``index`` (None: a field bot's seat)."""
        if self.duel:
            return self._duel_seating(index)
        group, shift = self._slot(index)
        members = self.groups[group]
        k = self.players
        return tuple(members[(s - shift) % k] for s in range(k))

    def opponents(self) -> tuple[int, ...]:
        """Who the candidate meets, in order: every other entrant (the baseline in sprt)."""
        return tuple(e for e in range(len(self.entrants)) if e != self.candidate)

    def _duel_seating(self, index: int) -> tuple[int | None, ...]:
        if not 0 <= index < self.games:
            raise IndexError(index)
        pair, second = divmod(index, 2)
        opponents = self.opponents()
        opponent = opponents[pair % len(opponents)]
        k = self.players
        first, other = pair % k, (pair + 1) % k
        if second:  # the pair's second game: the same deal with the two seats swapped
            first, other = other, first
        seats: list[int | None] = [None] * k
        seats[first], seats[other] = self.candidate, opponent
        return tuple(seats)

    def deal(self, index: int) -> int:
        """The deal game ``index`` plays: its own in ``round_robin``; shared by the seatings
        of one group's cycle in ``duplicate``, by the two games of a pair in ``gauntlet`` and
        ``sprt``."""
        if self.format == "round_robin":
            return index
        return index // (2 if self.duel else self.players)

    def game_seed(self, index: int) -> str:
        """The secret seed of game ``index``: HMAC-SHA256 of the tournament's seed over its
        deal, so games can be re-derived (and audited) from the tournament's seed alone."""
        label = f"tournament-deal:{self.deal(index)}".encode()
        return hmac.digest(self.seed.encode(), label, "sha256").hex()

    @property
    def registered(self) -> frozenset[int]:
        """Indexes of the entrants that are registered bots (``{"bot_id"}``)."""
        return frozenset(i for i, e in enumerate(self.entrants) if "bot_id" in e.spec)

    def live(self, index: int) -> bool:
        """Whether game ``index`` seats a registered bot: it is played as a live game, its
        bots asked move by move (``shared.app.tournaments``), not whole in one task."""
        registered = self.registered
        return bool(registered) and any(e in registered for e in self.seating(index))

    def seat_specs(self, index: int) -> list[dict[str, Any]]:
        """Creation seat specs of game ``index`` (name and bot spec per seat)."""
        return [
            {"name": f"field {seat}", **self.field}
            if e is None
            else {"name": self.entrants[e].name, **self.entrants[e].spec}
            for seat, e in enumerate(self.seating(index))
        ]

    def seat_names(self, index: int) -> list[str]:
        """The name at each seat of game ``index``."""
        return [str(spec["name"]) for spec in self.seat_specs(index)]

    def _slot(self, index: int) -> tuple[int, int]:
        if not 0 <= index < self.games:
            raise IndexError(index)
        within = index % self.cycle
        return within // self.players, within % self.players

    def to_doc(self) -> dict[str, Any]:
        """The plan as stored (JSON); ``from_doc`` reads it back."""
        doc = {
            "game": self.game,
            "entrants": [{"name": e.name, **e.spec} for e in self.entrants],
            "players": self.players,
            "games": self.games,
            "format": self.format,
            "seed": self.seed,
            "options": dict(self.options),
        }
        if self.duel:
            doc["candidate"] = self.candidate
            doc["field"] = dict(self.field)
        if self.sprt is not None:
            doc["sprt"] = dict(self.sprt)
        return doc

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Plan:
        """A stored plan (already checked when it was made)."""
        return cls(
            game=doc["game"],
            entrants=tuple(_entrant(e) for e in doc["entrants"]),
            players=int(doc["players"]),
            games=int(doc["games"]),
            format=doc["format"],
            seed=doc["seed"],
            options=doc.get("options") or {},
            candidate=int(doc.get("candidate", 0)),
            field=doc.get("field") or DEFAULT_FIELD,
            sprt=doc.get("sprt"),
        )


def cycle_length(entrants: int, players: int, fmt: str = "round_robin") -> int:
    """Games in one cycle of format ``fmt``."""
    if fmt == "sprt":
        return 2
    if fmt == "gauntlet":
        return 2 * (entrants - 1)
    return math.comb(entrants, players) * players


def spec_label(spec: Mapping[str, Any]) -> str:
    """A bot spec in the CLI's spelling: ``bot`` or ``bot:key=value[:key=value]`` (sorted);
    a registered bot's ``bot_id=<id>``."""
    if "bot_id" in spec:
        return f"bot_id={spec['bot_id']}"
    settings = sorted((k, v) for k, v in spec.items() if k not in ("bot", "name"))
    return ":".join([str(spec["bot"]), *(f"{k}={v}" for k, v in settings)])


def _entrant(doc: Mapping[str, Any]) -> Entrant:
    spec = {k: v for k, v in doc.items() if k != "name"}
    return Entrant(name=str(doc.get("name") or spec_label(spec)), spec=spec)


def parse(
    body: Mapping[str, Any],
    *,
    max_games: int = DEFAULT_MAX_GAMES,
    registered: Callable[[str], RegisteredBot | None] | None = None,
) -> Plan:
    """The plan of a ``POST /v1/tournaments`` body; PlanError names every field at fault.
    ``registered`` looks up the bots of ``{"bot_id"}`` entrants (the service's registry;
    without it, as in a local run, such an entrant is refused)."""
    game = body.get("game")
    if game not in games.names():
        raise PlanError("unknown game", {"game": f"one of {', '.join(games.names())}"})
    engine = games.get(str(game))
    raw = body.get("entrants")
    if not isinstance(raw, list) or not raw:
        raise PlanError("entrants must be a non-empty list", {"entrants": "a list of bot specs"})
    if len(raw) > MAX_ENTRANTS:
        raise PlanError("too many entrants", {"entrants": f"at most {MAX_ENTRANTS}"})
    errors: dict[str, str] = {}
    entrants: list[Entrant] = []
    for i, doc in enumerate(raw):
        if not isinstance(doc, Mapping):
            errors[f"entrants[{i}]"] = 'an object like {"bot": "random"}'
            continue
        name = doc.get("name")
        if name is not None and (problem := name_error(name)) is not None:
            errors[f"entrants[{i}].name"] = problem
            continue
        if "bot_id" in doc:
            found = _registered_entrant(doc, str(game), registered)
            if isinstance(found, tuple):
                errors[f"entrants[{i}].{found[0]}"] = found[1]
            else:
                entrants.append(Entrant(name=name or found.name, spec={"bot_id": found.bot_id}))
            continue
        try:
            settings = bots.parse_spec(doc)
        except bots.BotSpecError as exc:
            errors[f"entrants[{i}].{exc.field}"] = exc.message
            continue
        spec = {"bot": str(doc["bot"]), **settings}
        entrants.append(Entrant(name=name or spec_label(spec), spec=spec))
    if errors:
        raise PlanError("some entrants are not valid bot specs", errors)
    names = [e.name for e in entrants]
    if len(set(names)) != len(names):
        entrants = _unique_names(entrants)
    fmt = body.get("format", "round_robin")
    if fmt not in FORMATS:
        raise PlanError("unknown format", {"format": f"one of {', '.join(FORMATS)}"})
    duel = fmt in DUELS
    # A duel seats two entrants a game: the game's smallest table by default, not one seat each.
    seated = 2 if duel else len(entrants)
    players = body.get("players", min(max(seated, engine.MIN_SEATS), engine.MAX_SEATS))
    if isinstance(players, bool) or not isinstance(players, int):
        raise PlanError("players must be an integer", {"players": "an integer"})
    if not engine.MIN_SEATS <= players <= engine.MAX_SEATS:
        raise PlanError(
            f"{game} seats {engine.MIN_SEATS} to {engine.MAX_SEATS} players",
            {"players": f"from {engine.MIN_SEATS} to {engine.MAX_SEATS}"},
        )
    if not duel and len(entrants) < players:
        raise PlanError(
            f"{players} seats a game need at least {players} entrants, got {len(entrants)}",
            {"entrants": f"at least {players} (one per seat)"},
        )
    candidate, field, test = _duel_settings(body, str(fmt), len(entrants))
    count = body.get("games")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise PlanError("games must be a positive integer", {"games": "a positive integer"})
    if count > max_games:
        raise PlanError(
            f"at most {max_games} games a tournament", {"games": f"at most {max_games}"}
        )
    unit = cycle_length(len(entrants), players, str(fmt))
    if count % unit:
        lower = count // unit * unit
        counts = [n for n in (lower, lower + unit) if 0 < n <= max_games]
        suggestion = " or ".join(str(n) for n in counts) or "none under the cap"
        cycle = (
            "a duplicate pair against each opponent"
            if duel
            else f"every group of {players} in each seating"
        )
        raise PlanError(
            f"{fmt} with {len(entrants)} entrants and {players} seats plays whole cycles of "
            f"{unit} games ({cycle}); try {suggestion}",
            {"games": f"a multiple of {unit}"},
        )
    seed = body.get("seed")
    if seed is None:
        seed = secrets.token_hex(32)
    if not isinstance(seed, str) or not 0 < len(seed) <= 256:
        raise PlanError("seed must be a string", {"seed": "a string of 1 to 256 characters"})
    options = body.get("options") or {}
    if not isinstance(options, Mapping):
        raise PlanError("options must be an object", {"options": "an object"})
    if options.get("deal") is not None:
        raise PlanError("a tournament deals its own games", {"options.deal": "not allowed"})
    try:
        parsed = engine.parse_options(players, dict(options))
    except GameError as exc:
        fields: dict[str, Any] = dict(exc.errors) if exc.errors else {"": str(exc)}
        raise PlanError(
            str(exc), {f"options.{k}" if k else "options": str(v) for k, v in fields.items()}
        ) from None
    return Plan(
        game=str(game),
        entrants=tuple(entrants),
        players=players,
        games=count,
        format=str(fmt),
        seed=seed,
        options=parsed,
        candidate=candidate,
        field=field,
        sprt=test,
    )


def _registered_entrant(
    doc: Mapping[str, Any], game: str, registered: Callable[[str], RegisteredBot | None] | None
) -> RegisteredBot | tuple[str, str]:
    """The registered bot of an entrant ``{"bot_id", "name"?}``, or (field, reason): an
    unknown or retired bot, one not registered for ``game``, or other settings beside it."""
    extra = sorted(k for k in doc if k not in ("bot_id", "name"))
    if extra:
        return extra[0], 'a registered bot\'s entrant is {"bot_id", "name"?} alone'
    bot_id = doc["bot_id"]
    if registered is None:
        return "bot_id", "registered bots play only on the service (not in a local run)"
    bot = registered(bot_id) if isinstance(bot_id, str) and bot_id else None
    if bot is None or bot.retired:
        return "bot_id", "no such bot"
    if game not in bot.games:
        return "bot_id", f"bot {bot_id} is not registered for {game}"
    return bot


def _duel_settings(
    body: Mapping[str, Any], fmt: str, entrants: int
) -> tuple[int, Mapping[str, Any], dict[str, float] | None]:
    """``candidate``, ``field`` and ``sprt`` of a gauntlet or an sprt match (defaults for
    the other formats, which refuse them)."""
    if fmt not in DUELS:
        for key in ("candidate", "field", "sprt"):
            if body.get(key) is not None:
                raise PlanError(
                    f"{key} is for the {' and '.join(DUELS)} formats",
                    {key: f"only with format {' or '.join(DUELS)}"},
                )
        return 0, DEFAULT_FIELD, None
    if fmt == "sprt" and entrants != 2:
        raise PlanError(
            f"an sprt match has two entrants, got {entrants}",
            {"entrants": "exactly two: [candidate, baseline]"},
        )
    if fmt == "gauntlet" and entrants < 2:
        raise PlanError("a gauntlet needs opponents", {"entrants": "at least 2"})
    candidate = body.get("candidate", 0)
    if isinstance(candidate, bool) or not isinstance(candidate, int):
        raise PlanError("candidate must be an entrant's index", {"candidate": "an integer"})
    if fmt == "sprt" and candidate != 0:
        raise PlanError(
            "an sprt match's candidate is its first entrant", {"candidate": "0 (or left out)"}
        )
    if not 0 <= candidate < entrants:
        raise PlanError(
            f"candidate {candidate} is not an entrant's index",
            {"candidate": f"an index from 0 to {entrants - 1}"},
        )
    raw_field = body.get("field")
    field: Mapping[str, Any] = DEFAULT_FIELD
    if raw_field is not None:
        if not isinstance(raw_field, Mapping) or "name" in raw_field:
            raise PlanError(
                "field must be a bot spec", {"field": 'a bot spec like {"bot": "random"}'}
            )
        try:
            settings = bots.parse_spec(raw_field)
        except bots.BotSpecError as exc:
            raise PlanError(
                "field is not a valid bot spec", {f"field.{exc.field}": exc.message}
            ) from None
        field = {"bot": str(raw_field["bot"]), **settings}
    test = None
    if fmt == "sprt":
        test = _sprt_settings(body.get("sprt"))
    elif body.get("sprt") is not None:
        raise PlanError("sprt is for the sprt format", {"sprt": "only with format sprt"})
    return candidate, field, test


def _sprt_settings(raw: object) -> dict[str, float]:
    """The SPRT's ``elo0``, ``elo1``, ``alpha``, ``beta`` (defaults 0, 10, 0.05, 0.05)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise PlanError("sprt must be an object", {"sprt": '{"elo0", "elo1", "alpha", "beta"}'})
    errors: dict[str, str] = {}
    for key in raw:
        if key not in sprt_test.DEFAULTS:
            errors[f"sprt.{key}"] = "unknown: elo0, elo1, alpha or beta"
    values: dict[str, float] = {}
    for key, default in sprt_test.DEFAULTS.items():
        value = raw.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            errors[f"sprt.{key}"] = "a number"
            continue
        values[key] = float(value)
    for key in ("alpha", "beta"):
        if key in values and not 0 < values[key] < 0.5:
            errors[f"sprt.{key}"] = "an error rate between 0 and 0.5"
    for key in ("elo0", "elo1"):
        if key in values and not -1000 <= values[key] <= 1000:
            errors[f"sprt.{key}"] = "an Elo difference from -1000 to 1000"
    if not errors and values["elo0"] >= values["elo1"]:
        errors["sprt.elo1"] = "greater than elo0"
    if errors:
        raise PlanError("the sprt settings are not valid", errors)
    return values


def _unique_names(entrants: Sequence[Entrant]) -> list[Entrant]:
    """Entrants with repeated names told apart by ``#2``, ``#3``... (first keeps its name)."""
    seen: dict[str, int] = {}
    out = []
    for e in entrants:
        seen[e.name] = seen.get(e.name, 0) + 1
        name = e.name if seen[e.name] == 1 else f"{e.name} #{seen[e.name]}"
        out.append(Entrant(name=name, spec=e.spec))
    return out


def game_id(tournament_id: str, index: int) -> str:
    """The id of game ``index``: derived, so a task run twice targets the same game."""
    return f"{tournament_id}-{index:05d}"
