"""The contract every game engine keeps, and helpers to serialize its messages.

A game is a module under ``shared/games/`` (or a package, for a large game) that satisfies
``Engine``. Everything in it is pure: no I/O, no clock, no global random. State changes only
through ``evolve``; replay is ``functools.reduce(evolve, events, None)``.

Conventions every engine follows:

* Seats are ints ``0..n-1`` in turn order (clockwise).
* Commands and events are frozen dataclasses (``frozen=True, slots=True, kw_only=True``) with
  a class attribute ``TYPE`` (``"play"``, ``"card_played"``): commands are imperative, events
  past tense. Their fields hold JSON-ready values (int, str, bool, None, tuples of those, or
  dicts); ``to_json``/``from_json`` below convert them through one name registry.
* ``decide`` validates and raises ``GameError`` (see ``errors.py``) naming the broken rule; it
  returns the events that the command causes, including turn, trick, round and game-end events.
  Any random draw comes from the ``Rng`` it is given and its result is recorded in an event.
* ``evolve`` never fails and never draws. ``evolve(None, first_setup_event)`` makes the state.
* The service reserves the event types ``game_created`` and ``seed_revealed``; engines must not
  use them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from shared.games import kernel
from shared.games.rng import Rng


@dataclass(frozen=True, slots=True, kw_only=True)
class Traits:
    """What an engine declares about itself, so the service never guesses.

    ``simultaneous``: several seats may be to act at once (Isle of Skye's prices and
    building). ``secret_options``: options that would reveal hidden facts (a fixed ``deal``),
    shown to players as ``"hidden"``. ``lists_all_commands``: ``legal_commands`` lists every
    command a seat may send; when False the engine provides ``random_command(view, rng)`` for
    bots (Isle of Skye's prices cannot be listed). ``secret_command_fields``: command type ->
    the fields only its sender (and auditors) may read in the command log (a Skull disc).
    """

    simultaneous: bool = False
    # Event types that begin a new decision (a phase or a round): in a simultaneous phase an
    # ``expected_version`` stays good through other seats' moves until one of these.
    phase_events: tuple[str, ...] = ()
    secret_options: tuple[str, ...] = ()
    lists_all_commands: bool = True
    secret_command_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


class Message(Protocol):
    """A command or an event: a frozen dataclass with a ``TYPE`` name."""

    TYPE: ClassVar[str]


class Engine(Protocol):
    """What the service needs from a game; each game module provides these names."""

    NAME: str
    MIN_SEATS: int
    MAX_SEATS: int
    TRAITS: Traits

    def parse_options(self, seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """Validated options with defaults filled in; raises ``GameError(options/invalid)``."""
        ...

    def setup(self, seats: int, options: Mapping[str, Any], rng: Rng) -> list[Any]:
        """The opening events (players, deal, first player); the first one creates the state."""
        ...

    def parse_command(self, data: Mapping[str, Any]) -> Any:
        """A command object from client JSON; raises ``GameError(command/invalid)``."""
        ...

    def decide(self, state: Any, seat: int, command: Any, rng: Rng) -> list[Any]:
        """The events ``command`` by ``seat`` causes, or ``GameError`` naming the rule."""
        ...

    def evolve(self, state: Any, event: Any) -> Any:
        """The state after ``event``; never fails, never draws."""
        ...

    def legal_commands(self, state: Any, seat: int) -> list[Any]:
        """Every command ``seat`` may send now (empty when it is not theirs to act)."""
        ...

    def to_act(self, state: Any) -> tuple[int, ...]:
        """The seats that must send a command now (several in simultaneous phases)."""
        ...

    def view(self, state: Any, seat: int | None) -> dict[str, Any]:
        """JSON-ready projection: what ``seat`` (None: a spectator) may know. Has ``phase``
        and ``scores``."""
        ...

    def outcome(self, state: Any) -> dict[str, Any] | None:
        """None while the game runs; then ``{"scores": [...], "winners": [...], "ranks": [...]}``
        where ``ranks[seat]`` is 1 for the winners (ties share a rank)."""
        ...

    def redact(self, event: Any, seat: int | None) -> dict[str, Any] | None:
        """The event as ``seat`` may see it (JSON, ``{"type", "data"}``), or None if hidden."""
        ...

    def determinize(self, view: Mapping[str, Any], seat: int, rng: Rng) -> Any:
        """A full state consistent with ``view`` (what ``seat`` knows), for search bots."""
        ...

    def command_to_json(self, command: Any) -> dict[str, Any]:
        """Flat client JSON ``{"type": ..., field: ...}`` that ``parse_command`` reads back."""
        ...

    def event_to_json(self, event: Any) -> dict[str, Any]:
        """``{"type": ..., "data": {...}}`` as stored; ``event_from_json`` reads it back."""
        ...

    def event_from_json(self, doc: Mapping[str, Any]) -> Any:
        """The event ``event_to_json`` wrote."""
        ...

    # Optional: ``random_command(view, rng: random.Random) -> dict`` — a uniformly random legal
    # command (client JSON) from a seat's view, for games whose ``legal_commands`` cannot list
    # every command (Isle of Skye's prices). Without it, bots choose among the view's
    # ``legal_commands``. Optional with it: ``random_command_at(state, seat, rng) -> command``,
    # the same draw read from the state or the kernel (no view), as an engine command: the
    # play-out driver's random bot (``shared/app/playout.py``).

    EVENTS: Mapping[str, type]
    COMMANDS: Mapping[str, type]


def registry(*classes: type) -> dict[str, type]:
    """A name registry ``{cls.TYPE: cls}``; fails on a duplicate name."""
    out: dict[str, type] = {}
    for cls in classes:
        name = cls.TYPE  # type: ignore[attr-defined]
        if name in out:
            raise ValueError(f"duplicate message type {name!r}")
        out[name] = cls
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _frozen(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def to_json(message: Any) -> dict[str, Any]:
    """``{"type": TYPE, "data": {field: value}}`` with tuples as lists."""
    data = {f.name: _jsonable(getattr(message, f.name)) for f in dataclasses.fields(message)}
    return {"type": message.TYPE, "data": data}


def command_json(command: Any) -> dict[str, Any]:
    """Flat ``{"type": TYPE, field: value}``: the default ``command_to_json``."""
    out: dict[str, Any] = {"type": command.TYPE}
    for f in dataclasses.fields(command):
        out[f.name] = _jsonable(getattr(command, f.name))
    return out


def from_json(names: Mapping[str, type], doc: Mapping[str, Any]) -> Any:
    """The message that ``to_json`` wrote; lists come back as tuples. Raises KeyError/TypeError
    on an unknown type or wrong fields."""
    cls = names[doc["type"]]
    data = doc.get("data") or {}
    return cls(**{k: _frozen(v) for k, v in data.items()})


def replay(engine: Engine, events: Iterable[Any], state: Any = None) -> Any:
    """Fold ``events`` into a state with ``engine.evolve`` (or at once with the engine's
    ``evolve_all``, when its kernel provides one: one thaw and one freeze)."""
    evolve_all = getattr(engine, "evolve_all", None)
    if evolve_all is not None:
        return evolve_all(state, events)
    evolve = engine.evolve
    for event in events:
        state = evolve(state, event)
    return state


def ranks_from_scores(
    scores: Sequence[int | float], keys: Sequence[Any] | None = None
) -> list[int]:
    """Competition ranks (1 = best, ties share) from scores, ties broken by ``keys`` if given."""
    full = [(s, k) for s, k in zip(scores, keys or [0] * len(scores), strict=True)]
    return [1 + sum(1 for other in full if other > mine) for mine in full]


_KEEP: Any = object()  # a generated replacer's default: "leave this field as it is"


@functools.cache
def replacer(cls: type) -> Callable[..., Any]:
    """``dataclasses.replace`` for the frozen slotted dataclass ``cls``, without re-running
    ``__init__`` and its checks (an engine's ``evolve`` makes a state per event, and
    ``dataclasses.replace`` was half of a random play-out's time). Generated the way
    ``dataclasses`` generates ``__init__``: one statement per field and no loop, each slot set
    through its descriptor (the cheapest way past ``frozen``); an unknown field raises
    ``TypeError``."""
    names = [f.name for f in dataclasses.fields(cls)]
    params = ", ".join(f"{name}=_KEEP" for name in names)
    body = "".join(
        f"    _set_{name}(_new, _obj.{name} if {name} is _KEEP else {name})\n" for name in names
    )
    source = f"def replace(_obj, *, {params}):\n    _new = _make(_cls)\n{body}    return _new\n"
    scope: dict[str, Any] = {"_KEEP": _KEEP, "_make": object.__new__, "_cls": cls}
    scope.update({f"_set_{name}": cls.__dict__[name].__set__ for name in names})
    exec(compile(source, f"<replace {cls.__name__}>", "exec"), scope)
    return scope["replace"]


def step(engine: Engine, state: Any, seat: int, command: Any, rng: Rng) -> tuple[list[Any], Any]:
    """(the events ``command`` causes, the state after them): on the game's kernel when it has
    one (``shared.games.kernel.step``: one thaw, one freeze), else ``decide`` then ``replay``.
    Raises ``GameError`` as ``decide`` does."""
    kernel_cls = getattr(engine, "KERNEL", None)
    if kernel_cls is not None:
        return kernel.step(kernel_cls, state, seat, command, rng)
    events = engine.decide(state, seat, command, rng)
    return events, replay(engine, events, state)
