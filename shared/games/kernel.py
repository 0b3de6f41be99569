"""One statement of a game's rules with two faces: a mutable kernel and the pure engine.

A game's **kernel** is a mutable table (a ``Kernel`` subclass with ``__slots__``) holding the
whole state of a game. Two kinds of method change it, and only these:

* ``_on_<event type>(self, event)``, one per event type: the only statement of how that event
  changes the state (the eventsourcing library's ``@event`` idea: the mutator *is* the rule);
* ``apply(self, seat, command, rng, emit)``: checks ``command`` against the rules (raising
  ``GameError`` before it emits anything, as ``decide`` does) and hands every event it causes to
  ``emit``, in order. ``emit`` runs the event's mutator (``kernel.on``) and may record it, so
  the rest of ``apply`` reads the state the earlier events left (pgx's single ``step``, which is
  both the fast path and the truth).

Search calls ``apply`` on a cheap ``copy()`` with ``emit=kernel.on``. The service calls the
**pure face**, derived here by ``pure_face``: ``decide`` thaws the frozen state, applies with a
recorder and returns the events; ``evolve`` thaws, runs that event's mutator and freezes. The
two faces are equal by construction: there is no second statement of a rule to hold equal.

A subclass provides ``thaw(state)`` (a kernel from the frozen state), ``freeze()`` (the frozen
state: the engine contract's own type, so handlers, audits and projections see no change),
``start(event)`` (the kernel the first setup event creates: ``evolve(None, event)``),
``copy()``, ``apply`` and its mutators, plus the read-only rules ``to_act()``,
``legal_commands(seat)`` and ``outcome()`` that search needs without freezing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Protocol, TypeVar

from shared.games.rng import Rng

K = TypeVar("K", bound="Kernel")
Emit = Callable[[Any], None]


class Kernel:
    """Base of a game's mutable table: mutator dispatch by event type.

    ``MUTATORS`` maps an event class to its ``_on_<TYPE>`` function; it is built once per
    subclass from the ``EVENTS`` registry the subclass names (``type name -> class``), and a
    subclass that misses a mutator for one of its events fails at import, not in play.
    """

    __slots__ = ()

    EVENTS: ClassVar[dict[str, type]] = {}
    MUTATORS: ClassVar[dict[type, Callable[[Any, Any], None]]] = {}
    # Event types whose effect is already made by an earlier event's mutator (Fox's
    # ``trick_won`` is taken with the trick's last card): their mutator is a no-op by design.
    INERT: ClassVar[tuple[str, ...]] = ()
    # Whether ``legal_commands`` hands out one shared object per distinct command (two equal
    # commands it lists are the same object, as the engine's ``parse_command`` returns them
    # too): search then tells the commands of its tree apart by identity, without hashing
    # them (a frozen dataclass hashes in Python). A test of the game holds it.
    SHARED_COMMANDS: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.EVENTS:
            return
        mutators: dict[type, Callable[[Any, Any], None]] = {}
        for name, event_cls in cls.EVENTS.items():
            if name in cls.INERT:
                mutators[event_cls] = _inert
                continue
            method = getattr(cls, f"_on_{name}", None)
            if method is None:
                raise TypeError(f"{cls.__name__} has no mutator _on_{name}")
            mutators[event_cls] = method
        cls.MUTATORS = mutators
        # The table's dispatch, unless the class (or a base below ``Kernel``) has its own ``on``.
        if cls.on is Kernel.on or cls.on in _DISPATCHERS:
            cls.on = _dispatch(mutators)  # type: ignore[method-assign,assignment]

    def on(self, event: Any) -> None:
        """Run ``event``'s mutator on this kernel."""
        self.MUTATORS[type(event)](self, event)

    # --- what a subclass provides ------------------------------------------------------------

    @classmethod
    def thaw(cls: type[K], state: Any) -> K:
        raise NotImplementedError

    @classmethod
    def start(cls: type[K], event: Any) -> K:
        raise NotImplementedError

    def freeze(self) -> Any:
        raise NotImplementedError

    def copy(self: K) -> K:
        raise NotImplementedError

    def apply(self, seat: int, command: Any, rng: Rng, emit: Emit) -> None:
        raise NotImplementedError

    def to_act(self) -> tuple[int, ...]:
        raise NotImplementedError

    def legal_commands(self, seat: int) -> list[Any]:
        raise NotImplementedError

    def outcome(self) -> dict[str, Any] | None:
        raise NotImplementedError


def _inert(_kernel: Any, _event: Any) -> None:
    return None


def _dispatch(mutators: dict[type, Callable[[Any, Any], None]]) -> Callable[[Any, Any], None]:
    """A subclass's ``on``: ``Kernel.on`` with its table in a closure. Search calls ``on`` for
    every event it plays, and a closure cell is read in one instruction where the class
    attribute ``MUTATORS``, looked up through the instance, is a dictionary walk."""

    def on(self: Any, event: Any) -> None:
        """Run ``event``'s mutator on this kernel."""
        mutators[type(event)](self, event)

    _DISPATCHERS.add(on)
    return on


# The ``on`` functions ``_dispatch`` made: a kernel whose ``on`` is one of them does exactly
# what its ``MUTATORS`` say, so ``recorder`` may run them itself.
_DISPATCHERS: set[Callable[..., None]] = set()


class PureFace(Protocol):
    """The engine contract's ``decide``/``evolve`` (and ``evolve_all``) derived from a kernel."""

    def decide(self, state: Any, seat: int, command: Any, rng: Rng) -> list[Any]: ...

    def evolve(self, state: Any, event: Any) -> Any: ...

    def evolve_all(self, state: Any, events: Iterable[Any]) -> Any: ...


def recorder(kernel: Kernel, events: list[Any]) -> Emit:
    """An ``emit`` that runs each event's mutator and appends the event to ``events``."""
    mutators = kernel.MUTATORS
    append = events.append
    if type(kernel).on not in _DISPATCHERS:
        on = kernel.on  # a kernel with its own ``on``: it decides what an event does

        def emit_on(event: Any) -> None:
            on(event)
            append(event)

        return emit_on

    def emit(event: Any) -> None:
        # ``on``'s own dispatch, without its call: the pure face and the service's play-out
        # driver record every event of every command through here.
        mutators[type(event)](kernel, event)
        append(event)

    return emit


def decide_with(kernel_cls: type[Kernel]) -> Callable[[Any, int, Any, Rng], list[Any]]:
    """``decide`` of the engine contract: thaw, apply with a recorder, return the events."""
    thaw = kernel_cls.thaw

    def decide(state: Any, seat: int, command: Any, rng: Rng) -> list[Any]:
        kernel = thaw(state)
        events: list[Any] = []
        kernel.apply(seat, command, rng, recorder(kernel, events))
        return events

    return decide


def evolve_with(kernel_cls: type[Kernel]) -> Callable[[Any, Any], Any]:
    """``evolve`` of the engine contract: thaw, run the event's mutator, freeze
    (``evolve(None, first_event)`` starts the kernel from the setup event)."""
    thaw, start = kernel_cls.thaw, kernel_cls.start
    # An event whose effect an earlier one's mutator made leaves the state as it is: no thaw.
    inert = frozenset(kernel_cls.EVENTS[name] for name in kernel_cls.INERT)

    def evolve(state: Any, event: Any) -> Any:
        if state is None:
            return start(event).freeze()
        if type(event) in inert:
            return state
        kernel = thaw(state)
        kernel.on(event)
        return kernel.freeze()

    return evolve


def evolve_all_with(kernel_cls: type[Kernel]) -> Callable[[Any, Iterable[Any]], Any]:
    """Many events folded at once: thaw once, run each mutator, freeze once (a replay's or a
    command's events cost one thaw and one freeze, not one each)."""
    thaw, start = kernel_cls.thaw, kernel_cls.start

    def evolve_all(state: Any, events: Iterable[Any]) -> Any:
        kernel: Kernel | None = None if state is None else thaw(state)
        for event in events:
            if kernel is None:
                kernel = start(event)
            else:
                kernel.on(event)
        return state if kernel is None else kernel.freeze()

    return evolve_all


def step(
    kernel_cls: type[Kernel], state: Any, seat: int, command: Any, rng: Rng
) -> tuple[list[Any], Any]:
    """``decide`` and the fold of its events at once: (the events, the state after them). One
    thaw and one freeze: the kernel that recorded the events already holds the state after
    them (``decide`` followed by ``evolve`` per event would thaw and freeze once per event)."""
    kernel = kernel_cls.thaw(state)
    events: list[Any] = []
    kernel.apply(seat, command, rng, recorder(kernel, events))
    return events, kernel.freeze()
