"""The bot registry: every bot the seat schema, the CLI, the play-out driver and the
suggestion endpoint accept, with the settings each takes.

A bot is a pure function of one seat's view, a random source (derived from the game's secret
seed by the caller: ``rng.bot_random``) and its settings, returning a client command or None.
It never gets the game state, so it cannot cheat.

Seat specs: ``{"bot": "random"}``, ``{"bot": "heuristic"}``, ``{"bot": "ismcts",
"budget_ms": 200}`` or ``{"bot": "ismcts", "iterations": 2000}`` (one of the two).

An auditor re-decides every bot move once the seed is revealed (``shared.audit``): every bot
but a search on a time budget is a function of its view and its randomness alone. A
``budget_ms`` search is not (how many iterations fit depends on the machine), so ``decide``
also returns the iterations it ran; the service records them with the command
(``BOT_ITERATIONS``) and ``replay`` runs exactly that many.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from shared import events, games

Play = Callable[[Mapping[str, Any], random.Random, Mapping[str, Any]], dict[str, Any] | None]

# The recorded command's field of a timed search's iterations (see ``shared.events``).
BOT_ITERATIONS = events.BOT_ITERATIONS
# A seat played by a bot registered from outside (``shared/app/remote.py``): its Seat.bot. Not
# in ``BOTS`` (no one asks for it by name: a seat spec names its ``bot_id``).
REGISTERED = "registered"
# In a registered bot's recorded command: the turn it was sent and what came of it.
BOT_TURN = events.BOT_TURN


@dataclass(frozen=True, slots=True)
class Decision:
    """A bot's command (None: nothing to do), and for a search on a time budget the iterations
    it ran (None for every other bot: its spec alone says how it decides)."""

    command: dict[str, Any] | None
    iterations: int | None = None


class BotSpecError(ValueError):
    """A seat spec the registry refuses; ``field`` names the offending key."""

    def __init__(self, field_: str, message: str) -> None:
        super().__init__(f"{field_}: {message}")
        self.field = field_
        self.message = message


@dataclass(frozen=True, slots=True, kw_only=True)
class BotKind:
    """One bot: how it plays, and the integer settings it takes (name -> (low, high))."""

    name: str
    play: Play
    settings: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    one_of: tuple[str, ...] = ()  # at most one of these settings may be given
    description: str = ""
    slow: bool = False  # it searches: its moves run on their own workers
    # The setting that bounds it by wall time (its moves then depend on the clock), the
    # setting that bounds it by a count instead, and how it plays on the clock, with the count
    # it reached: an audit replays that count.
    timed: str | None = None
    counted: str | None = None
    timed_play: Callable[[Mapping[str, Any], random.Random, Mapping[str, Any]], Decision] | None = (
        None
    )


def random_bot(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """A uniformly random legal command, or None when the seat has nothing to do.

    Games whose ``legal_commands`` cannot list every command (``TRAITS.lists_all_commands``
    false: prices chosen from a range) provide ``random_command(view, rng)``; for the rest any
    listed command is sendable as it is.
    """
    if view.get("seat") not in view.get("to_act", []):
        return None
    engine: Any = games.get(str(view["game"]))
    if not engine.TRAITS.lists_all_commands:
        command: dict[str, Any] = engine.random_command(view, rng)
        return command
    legal = view.get("legal_commands") or []
    return dict(rng.choice(legal)) if legal else None


def _random(view: Mapping[str, Any], rng: random.Random, _spec: Mapping[str, Any]) -> Any:
    return random_bot(view, rng)


def _heuristic(view: Mapping[str, Any], rng: random.Random, _spec: Mapping[str, Any]) -> Any:
    """The game's own hand-written policy (its spec's ``heuristic``)."""
    if view.get("seat") not in view.get("to_act", []) or view.get("outcome"):
        return None
    choose = games.spec(view["game"]).heuristic
    if choose is None:
        return random_bot(view, rng)  # a game without a policy of its own plays at random
    return choose(view, rng)


def _ismcts(view: Mapping[str, Any], rng: random.Random, spec: Mapping[str, Any]) -> Any:
    """Information-set MCTS over the engine's ``determinize`` (``shared/bots/ismcts.py``)."""
    from shared.bots import ismcts

    budget = spec.get("budget_ms")
    iterations = spec.get("iterations")
    if budget is None and iterations is None:
        iterations = ISMCTS_DEFAULT_ITERATIONS
    return ismcts.choose(
        view, rng, iterations=iterations, budget_ms=float(budget) if budget is not None else None
    )


def _ismcts_timed(view: Mapping[str, Any], rng: random.Random, spec: Mapping[str, Any]) -> Decision:
    """ISMCTS on its ``budget_ms``, with the iterations the search ran in that time."""
    from shared.bots import ismcts

    found = ismcts.search(view, rng, budget_ms=float(spec["budget_ms"]))
    return Decision(found.command, found.iterations if found.command is not None else None)


ISMCTS_DEFAULT_ITERATIONS = 1000


class _SpecTable(Mapping[tuple[str, str], Any]):
    """``(bot, game) -> value`` read from ``game``'s spec field (``name -> value``) on lookup,
    so that a process playing one game (``tabletop simulate``, a game's worker) loads no
    other game's package to look up a policy; iterating reads every spec."""

    def __init__(self, field_: str) -> None:
        self._field = field_

    def _of(self, game: str) -> Mapping[str, Any]:
        table: Mapping[str, Any] = getattr(games.spec(game), self._field)
        return table

    def __getitem__(self, key: tuple[str, str]) -> Any:
        bot, game = key
        try:
            return self._of(game)[bot]
        except KeyError:
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter([(bot, name) for name in games.names() for bot in self._of(name)])

    def __len__(self) -> int:
        return sum(len(self._of(name)) for name in games.names())


# Each bot's policy version per game type: (bot name, game) -> version; absent, 1. An audit
# can re-decide a bot's move only with the policy the bot played by, so a game records the
# versions of the bots it may use where they are not 1 (``game_created``'s ``bot_policies``:
# ``policies_of``) and the audit leaves out of its re-check ("not re-checked") the moves of a
# bot whose recorded version is not this service's. Raise a bot's version with any change that
# makes it play otherwise from the same view and randomness, or every older honest game of it
# fails its audit. Each game's spec declares its own (``policy_versions``).
POLICY_VERSIONS: Mapping[tuple[str, str], int] = _SpecTable("policy_versions")

# A bot whose policy in a game is built on another bot's: its version moves with that one's
# (each game's spec declares them: ``policy_follows``: a search that plays its heuristic's
# candidates and valuation): (bot, game) -> the bot it follows there.
POLICY_FOLLOWS: Mapping[tuple[str, str], str] = _SpecTable("policy_follows")

# The key of ``game_created``'s data that records the policy versions (bot name -> version).
BOT_POLICIES = "bot_policies"

BOTS: dict[str, BotKind] = {
    b.name: b
    for b in (
        BotKind(name="random", play=_random, description="a uniformly random legal command"),
        BotKind(name="heuristic", play=_heuristic, description="a hand-written policy per game"),
        BotKind(
            name="ismcts",
            play=_ismcts,
            settings={"budget_ms": (10, 10_000), "iterations": (1, 100_000)},
            one_of=("budget_ms", "iterations"),
            slow=True,
            timed="budget_ms",
            counted="iterations",
            timed_play=_ismcts_timed,
            description=f"information-set MCTS; budget_ms or iterations (default "
            f"{ISMCTS_DEFAULT_ITERATIONS} iterations)",
        ),
    )
}


def policy_version(bot: str, game: str) -> int:
    """The version of ``bot``'s policy in ``game`` that this service plays (1 unless
    ``POLICY_VERSIONS`` says otherwise). A bot built on another's counts that one's changes
    too (``POLICY_FOLLOWS``): its own version plus the other's past 1, so a change of either
    raises it."""
    own = POLICY_VERSIONS.get((bot, game), 1)
    base = POLICY_FOLLOWS.get((bot, game))
    return own if base is None else own + policy_version(base, game) - 1


def policies_of(game: str, bot_names: Iterable[str]) -> dict[str, int]:
    """What a game records of the policies of the bots it may use (``BOT_POLICIES``): each
    one's version where it is not 1, so the logs of games whose bots are all at their first
    version (and golden logs, fairness vectors) stay as they were."""
    versions = {name: policy_version(name, game) for name in sorted(set(bot_names))}
    return {name: v for name, v in versions.items() if v != 1}


def names() -> list[str]:
    """The bot names, as the seat schema lists them."""
    return list(BOTS)


def get(name: str) -> BotKind:
    """The bot called ``name``; KeyError if there is none."""
    return BOTS[name]


def parse_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The bot settings of a seat spec (``{"bot": ..., setting: value}``), checked against the
    bot's bounds: ``{setting: value}`` without ``bot`` and ``name``. Raises BotSpecError."""
    name = spec.get("bot")
    if name not in BOTS:
        raise BotSpecError("bot", f"one of {', '.join(BOTS)}")
    kind = BOTS[str(name)]
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key in ("bot", "name"):
            continue
        if key not in kind.settings:
            allowed = ", ".join(kind.settings) or "no settings"
            raise BotSpecError(key, f"the {name} bot takes {allowed}")
        low, high = kind.settings[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BotSpecError(key, f"an integer from {low} to {high}")
        out[key] = value
    given = [k for k in out if k in kind.one_of]  # in the order the spec gives them
    if len(given) > 1:
        raise BotSpecError(given[1], f"give only one of {' or '.join(kind.one_of)}")
    return out


def play(spec: Mapping[str, Any], view: Mapping[str, Any], rng: random.Random) -> Any:
    """The command the bot of ``spec`` sends from ``view`` (None: nothing to do)."""
    return decide(spec, view, rng).command


def decide(spec: Mapping[str, Any], view: Mapping[str, Any], rng: random.Random) -> Decision:
    """``play``, with the iterations a search on a time budget ran (to be recorded with the
    command it sends: ``BOT_ITERATIONS``)."""
    settings = parse_spec(spec)
    kind = BOTS[str(spec["bot"])]
    if kind.timed_play is not None and kind.timed in settings:
        return kind.timed_play(view, rng, settings)
    return Decision(kind.play(view, rng, settings))


def replay(
    spec: Mapping[str, Any],
    view: Mapping[str, Any],
    rng: random.Random,
    iterations: int | None = None,
) -> Any:
    """The command the bot of ``spec`` sent from ``view`` (an audit's re-decision): a search
    on a time budget runs the ``iterations`` recorded with its command, any other bot plays as
    ``play`` does. Raises BotSpecError when the recorded count does not fit the spec (missing
    for a timed search, present for any other bot, not a count)."""
    settings = parse_spec(spec)
    kind = BOTS[str(spec["bot"])]
    timed = kind.timed is not None and kind.timed in settings
    if not timed:
        if iterations is not None:
            raise BotSpecError(BOT_ITERATIONS, f"recorded, but {spec['bot']} is not timed")
        return kind.play(view, rng, settings)
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise BotSpecError(BOT_ITERATIONS, "a search on a time budget records its iterations")
    assert kind.counted is not None
    # The same search with its clock replaced by the count it reached: the count is the only
    # thing the clock decided (the search draws nothing from the time).
    counted = {k: v for k, v in settings.items() if k != kind.timed}
    counted[kind.counted] = iterations
    return kind.play(view, rng, counted)


def bot_spec(view: Mapping[str, Any], seat: int) -> dict[str, Any]:
    """The spec of the bot at ``seat`` as the view lists it (``{"bot", setting...}``);
    ``random`` for a seat without one."""
    listed = dict(view["seats"][seat])
    for key in ("seat", "name", "resigned", "taken_over"):  # the seat's, not the bot's
        listed.pop(key, None)
    return listed if listed.get("bot") else {"bot": "random"}
