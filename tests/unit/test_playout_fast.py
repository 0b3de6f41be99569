"""The fast play-out (``play(..., keep_envelopes=False)``: ``tabletop simulate``, benchmarks)
plays on one kernel for the whole game, and plays the same games as the sealed path, which
decides every command through ``steps.decide``: the same commands by the same seats, the same
final state (frozen, ``==``), the same version count, the same outcome, for every game and any
mix of bots. And Isle of Skye's random bot drawn from the state (``random_command_at``) is
the one drawn from the view."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from shared import games
from shared.app import playout
from shared.app.opening import seats_from_specs
from shared.app.playout import Played, play
from shared.games import skye
from shared.games.rng import bot_random
from shared.match.projections import game_view

RANDOM = {"bot": "random"}
HEURISTIC = {"bot": "heuristic"}
SEARCH = {"bot": "ismcts", "iterations": 12}

# (game, seat specs, options, seeds): random games by the many, bot mixes by the few.
CASES = [
    ("fox", [RANDOM] * 2, {"target": 7}, 40),
    ("fox", [HEURISTIC, RANDOM], {"target": 7}, 8),
    ("fox", [RANDOM, SEARCH], {"target": 1}, 2),
    ("skull", [RANDOM] * 3, {}, 25),
    ("skull", [RANDOM] * 6, {}, 10),
    ("skull", [RANDOM, HEURISTIC, RANDOM, HEURISTIC], {}, 8),
    ("skull", [SEARCH, RANDOM, RANDOM], {}, 1),
    ("skye", [RANDOM] * 2, {}, 6),
    ("skye", [RANDOM] * 5, {}, 2),
    ("skye", [HEURISTIC, RANDOM, RANDOM], {}, 2),
]


@pytest.fixture
def kuhn() -> Iterator[Any]:
    """The tests' own game (a kernel written only for them), hosted for one test."""
    games.register("kuhn", "tests.games.kuhn")
    try:
        yield games.get("kuhn")
    finally:
        games.unregister("kuhn")


def commands_applied(monkeypatch: pytest.MonkeyPatch, kernel_cls: type) -> list[tuple[int, Any]]:
    """(seat, command) of every command the fast path applies to its kernel from now on (the
    outer call only: Fox's ``apply`` calls its ``apply_listed``; not a search bot's copies)."""
    applied: list[tuple[int, Any]] = []
    played: list[Any] = []
    depth = [0]
    real_start = playout._kernel_at

    def start(*args: Any) -> Any:
        played.append(real_start(*args))
        return played[-1]

    monkeypatch.setattr(playout, "_kernel_at", start)
    for name in ("apply", "apply_listed"):
        real = kernel_cls.__dict__.get(name)
        if real is None:
            continue

        def spy(kernel: Any, seat: int, command: Any, *args: Any, _real: Any = real) -> Any:
            if not depth[0] and played and kernel is played[-1]:
                applied.append((seat, command))
            depth[0] += 1
            try:
                return _real(kernel, seat, command, *args)
            finally:
                depth[0] -= 1

        monkeypatch.setattr(kernel_cls, name, spy)
    return applied


def assert_same_game(engine: Any, sealed: Played, fast: Played, applied: Sequence[Any]) -> None:
    """``fast`` is ``sealed``'s game: its commands, end state, versions and outcome."""
    sealed_commands = [(seat, engine.parse_command(body)) for _, seat, body in sealed.commands]
    assert list(applied) == sealed_commands
    assert fast.actions == sealed.actions == len(sealed.commands)
    assert fast.record.state == sealed.record.state
    assert fast.record.version == sealed.record.version == sealed.envelopes[-1].version
    assert engine.outcome(fast.record.state) == engine.outcome(sealed.record.state) is not None
    assert fast.record.seed == sealed.record.seed


@pytest.mark.parametrize(("game", "specs", "options", "seeds"), CASES)
def test_the_fast_path_plays_the_sealed_paths_games(
    monkeypatch: pytest.MonkeyPatch,
    game: str,
    specs: list[dict[str, Any]],
    options: dict[str, Any],
    seeds: int,
) -> None:
    engine: Any = games.get(game)
    for i in range(seeds):
        seed = f"fast-{game}-{len(specs)}-{i}"
        sealed = play(game, specs, options, seed)
        with monkeypatch.context() as patch:
            applied = commands_applied(patch, engine.KERNEL)
            fast = play(game, specs, options, seed, keep_envelopes=False)
        assert_same_game(engine, sealed, fast, applied)


def test_a_registered_games_kernel_plays_the_same_games(
    monkeypatch: pytest.MonkeyPatch, kuhn: Any
) -> None:
    for i in range(20):
        sealed = play("kuhn", [RANDOM, HEURISTIC], {"hands": 3}, f"kuhn-{i}")
        with monkeypatch.context() as patch:
            applied = commands_applied(patch, kuhn.KERNEL)
            fast = play("kuhn", [RANDOM, HEURISTIC], {"hands": 3}, f"kuhn-{i}",
                        keep_envelopes=False)  # fmt: skip
        assert_same_game(kuhn, sealed, fast, applied)


def test_an_engine_without_a_kernel_plays_the_same_games() -> None:
    # The engine contract does not require a kernel: ``_fast`` then folds the pure face.
    fox: Any = games.get("fox")
    pure = SimpleNamespace(**{name: getattr(fox, name) for name in fox.__all__ if name != "KERNEL"})
    assert not hasattr(pure, "KERNEL")
    seats, _ = seats_from_specs([RANDOM, HEURISTIC])
    options = fox.parse_options(2, {"target": 5})
    for i in range(5):
        seed = f"pure-{i}"
        sealed = playout._sealed(pure, "fox", seats, options, seed, lambda: "t", 10_000, None)
        fast = playout._fast(pure, "fox", seats, options, seed, 10_000)
        assert fast.record.state == sealed.record.state
        assert (fast.record.version, fast.actions) == (sealed.record.version, sealed.actions)


def test_a_seat_without_a_bot_plays_random_in_both_paths() -> None:
    specs = [{"name": "ann"}, RANDOM, {"name": "bob"}]
    sealed = play("skull", specs, {}, "humans")
    fast = play("skull", specs, {}, "humans", keep_envelopes=False)
    assert fast.record.state == sealed.record.state
    assert fast.record.version == sealed.record.version


def skye_positions(count: int) -> Iterator[tuple[Any, int, int]]:
    """(state, seat to act, version) of seeded random Isle of Skye games: every phase, every
    seat to act in a simultaneous phase, 2 to 5 seats."""
    found = 0
    for i in range(count):
        seats = 2 + i % 4
        played: list[tuple[Any, int, int]] = []

        def keep(record: Any, seat: int, *_: Any, _into: list[Any] = played) -> None:
            _into.extend((record.state, s, record.version) for s in skye.to_act(record.state))

        play("skye", [RANDOM] * seats, {}, f"positions-{i}", on_step=keep)
        for position in played[:: 1 + len(played) // 60]:
            yield position
            found += 1
    assert found > 100


def test_skyes_random_bot_draws_from_the_state_as_from_the_view() -> None:
    engine: Any = skye
    phases = set()
    for state, seat, version in skye_positions(6):
        phases.add(state.phase)
        from_view = skye.random_command(
            game_view(engine, state, seat), bot_random("s", seat, version)
        )
        from_state = skye.random_command_at(state, seat, bot_random("s", seat, version))
        assert from_state == skye.parse_command(from_view)
        # On the kernel, with no frozen state at all: the same draw.
        table = skye.KERNEL.thaw(state)
        assert skye.random_command_at(table, seat, bot_random("s", seat, version)) == from_state
        # And the same bits read: the next draw of each stream is the same.
        a, b = bot_random("s", seat, version), bot_random("s", seat, version)
        skye.random_command(game_view(engine, state, seat), a)
        skye.random_command_at(state, seat, b)
        assert a.getrandbits(64) == b.getrandbits(64)
    assert phases == {"prices", "buying", "building"}
