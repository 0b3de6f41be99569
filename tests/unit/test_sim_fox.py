"""The fast Fox simulator (``shared.sim.fox``) against the pure engine it must equal."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.bots import ismcts
from shared.games import fox
from shared.games.errors import GameError
from shared.games.rng import Rng
from shared.sim import fox as sim
from shared.sim.fox import Sim

seeds = st.integers(min_value=0, max_value=2**32)
# None: the default options (a match to 21).
targets = st.sampled_from([1, 1, 2, 5, 10, None])

EVERY_COMMAND = [*fox.PLAY, *fox.EXCHANGE, *fox.RETURN, fox.KEEP_DECREE]
REWARDS = ([1.0, 0.0], [0.0, 1.0], [0.5, 0.5])


def options_for(target: int | None) -> dict[str, Any]:
    return {} if target is None else {"target": target}


def start(secret: str, options: dict[str, Any]) -> fox.State:
    """The state after setup from ``secret`` (the service's ``setup`` label)."""
    state: Any = None
    for event in fox.setup(2, options, Rng(secret)):
        state = fox.evolve(state, event)
    return state


def engine_step(state: fox.State, seat: int, command: Any, rng: Any) -> fox.State:
    """``decide`` folded through ``evolve``."""
    for event in fox.decide(state, seat, command, rng):
        state = fox.evolve(state, event)
    return state


class Recording:
    """An ``Rng`` that logs every call with its arguments and result."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self.calls: list[tuple[Any, ...]] = []

    def below(self, n: int) -> int:
        value = self.rng.below(n)
        self.calls.append(("below", n, value))
        return value

    def choice(self, items: Sequence[Any]) -> Any:
        value = self.rng.choice(items)
        self.calls.append(("choice", tuple(items), value))
        return value

    def shuffle(self, items: Sequence[Any]) -> tuple[Any, ...]:
        value = self.rng.shuffle(items)
        self.calls.append(("shuffle", tuple(items), value))
        return value


class Twin(random.Random):
    """A ``random.Random`` whose ``_randbelow`` (what ``ismcts.random_playout`` draws with)
    draws the way ``sim.Draws.below`` and ``sim.random_playout`` do."""

    def _randbelow(self, n: int) -> int:
        if n == 1:
            return 0
        k = (n - 1).bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r


def assert_same(s: Sim, state: fox.State) -> None:
    """``s`` tells everything as the engine tells it of ``state``."""
    assert s.to_state() == state
    assert s.to_act() == fox.to_act(state)
    assert s.outcome() == fox.outcome(state)
    for seat in (0, 1):
        assert s.legal_commands(seat) == fox.legal_commands(state, seat)


def lockstep(
    state: fox.State, secret: str, chooser: random.Random, max_moves: int = 10_000
) -> tuple[fox.State, int]:
    """Plays random legal commands from ``state`` with the engine and with one ``Sim`` side by
    side (and a fresh ``Sim.from_state`` at random points), each action's ``Rng`` labelled
    ``v<n>``; checks them equal at every step and that they draw the same. Returns the final
    state and the number of moves."""
    s = Sim.from_state(state)
    assert_same(s, state)
    n = 0
    while fox.to_act(state) and n < max_moves:
        seat = fox.to_act(state)[0]
        command = chooser.choice(fox.legal_commands(state, seat))
        fresh = Sim.from_state(state) if chooser.random() < 0.15 else None
        engine_rng, sim_rng = Recording(Rng(secret, f"v{n}")), Recording(Rng(secret, f"v{n}"))
        state = engine_step(state, seat, command, engine_rng)
        s.apply(seat, command, sim_rng)
        assert sim_rng.calls == engine_rng.calls
        assert_same(s, state)
        if fresh is not None:
            fresh_rng = Recording(Rng(secret, f"v{n}"))
            fresh.apply(seat, command, fresh_rng)
            assert fresh_rng.calls == engine_rng.calls
            assert_same(fresh, state)
        n += 1
    return state, n


@settings(max_examples=150, deadline=None)
@given(seed=seeds, target=targets)
def test_sim_plays_like_the_engine(seed: int, target: int | None) -> None:
    secret = f"sim-{seed}"
    options = options_for(target)
    final, moves = lockstep(start(secret, options), secret, random.Random(seed))
    assert fox.outcome(final) is not None and moves > 0


@settings(max_examples=30, deadline=None)
@given(seed=seeds)
def test_sim_accepts_and_refuses_what_the_engine_does(seed: int) -> None:
    """Every command from both seats at states along a game: the same state after it, or the
    engine's very error (code, rule, text) and no change."""
    secret = f"sim-legal-{seed}"
    chooser = random.Random(seed)
    state = start(secret, {"target": 2})
    seen_phases = set()
    while fox.to_act(state):
        seat = fox.to_act(state)[0]
        s = Sim.from_state(state)
        if chooser.random() < 0.3 or fox.state_fields(state).phase:
            seen_phases.add(fox.state_fields(state).phase)
            for who in (seat, 1 - seat):
                for command in [*EVERY_COMMAND, "play", None]:
                    trial = s.copy()
                    try:
                        expected: Any = engine_step(state, who, command, Rng(secret, "x"))
                    except GameError as exc:
                        expected = exc
                    if isinstance(expected, GameError):
                        try:
                            trial.apply(who, command, Rng(secret, "x"))
                            raise AssertionError(f"Sim accepted {command!r} from {who}")
                        except GameError as exc:
                            assert (exc.code, exc.rule, exc.detail) == (
                                expected.code,
                                expected.rule,
                                expected.detail,
                            )
                        assert trial.to_state() == state
                    else:
                        trial.apply(who, command, Rng(secret, "x"))
                        assert trial.to_state() == expected
            assert s.to_state() == state  # the copies left the original alone
        command = chooser.choice(fox.legal_commands(state, seat))
        state = engine_step(state, seat, command, Rng(secret, "v"))
    assert seen_phases >= {fox.PHASE_PLAY}
    s = Sim.from_state(state)  # game over: every command refused as the engine refuses it
    for command in (fox.PLAY[0], fox.KEEP_DECREE):
        for who in (0, 1, fox.NOBODY):
            try:
                fox.decide(state, who, command, Rng("x"))
                raise AssertionError("the engine accepted a command after the end")
            except GameError as expected:
                try:
                    s.apply(who, command, Rng("x"))
                    raise AssertionError("Sim accepted a command after the end")
                except GameError as exc:
                    assert (exc.code, exc.rule) == (expected.code, expected.rule)


def midgame_states(
    secret: str, options: dict[str, Any], chooser: random.Random, max_moves: int = 10_000
) -> list[Any]:
    """Every state of an engine game played with random legal commands (at most
    ``max_moves``: then the last state is not over)."""
    state = start(secret, options)
    states = [state]
    n = 0
    while fox.to_act(state) and n < max_moves:
        seat = fox.to_act(state)[0]
        state = engine_step(
            state, seat, chooser.choice(fox.legal_commands(state, seat)), Rng(secret, f"v{n}")
        )
        states.append(state)
        n += 1
    return states


@settings(max_examples=100, deadline=None)
@given(seed=seeds, target=targets)
def test_determinized_states_play_like_the_engine(seed: int, target: int | None) -> None:
    """From what a seat's search deals itself (any phase: also a Fox or Woodcutter pending)."""
    secret = f"sim-det-{seed}"
    chooser = random.Random(seed)
    states = midgame_states(secret, options_for(target), chooser)[:-1]
    state = chooser.choice(states)
    seat = fox.to_act(state)[0]
    dealt = fox.determinize(fox.view(state, seat), seat, Rng(secret, "det"))
    final, _ = lockstep(dealt, secret, chooser, max_moves=40)
    assert sim.random_playout(dealt, random.Random(seed)) in REWARDS
    assert sim.random_playout(final, random.Random(seed)) in REWARDS


def test_states_with_a_decision_pending_are_covered() -> None:
    """The property tests above meet Fox and Woodcutter decisions, led and followed (a guard:
    without it a strategy change could stop exercising them unnoticed)."""
    pending: set[tuple[int, bool]] = set()
    for k in range(8):
        for state in midgame_states(f"cover-{k}", {"target": 1}, random.Random(k)):
            f = fox.state_fields(state)
            if f.phase in (fox.PHASE_FOX, fox.PHASE_WOODCUTTER):
                pending.add((f.phase, f.second >= 0))
                assert Sim.from_state(state).to_state() == state
    assert pending == {(p, s) for p in (fox.PHASE_FOX, fox.PHASE_WOODCUTTER) for s in (0, 1)}


def playout_states(seed: int) -> list[Any]:
    """Start states (one hand, a few rounds, a match, and a target no play-out reaches before
    ``PLAYOUT_CAP``), states mid-game and determinizations of them."""
    chooser = random.Random(seed)
    out: list[Any] = []
    for options in ({"target": 1}, {"target": 5}, {}, {"target": fox.MAX_TARGET}):
        secret = f"po-{seed}-{options}"
        # A game to 1000 is too long to play out here: a few moves of it.
        cut = 3 + chooser.randrange(40) if options.get("target") == fox.MAX_TARGET else 10_000
        states = midgame_states(secret, options, chooser, max_moves=cut)
        out.append(start(secret, options))
        out.extend(chooser.sample(states[:-1], 2))
        state = chooser.choice(states[:-1])
        seat = fox.to_act(state)[0]
        out.append(fox.determinize(fox.view(state, seat), seat, Rng(secret, "det")))
        out.append(states[-1])  # over, unless cut short
    return out


@settings(max_examples=60, deadline=None)
@given(seed=seeds)
def test_random_playout_is_the_engine_playout_move_for_move(seed: int) -> None:
    """Given a generator that draws as ``sim.Draws`` does, ``random_playout`` plays the same
    game as ``ismcts.random_playout`` over the engine: the same rewards, and the generator
    left in the same state (the same number of draws of the same sizes, deals included). The
    target of 1000 runs into ``PLAYOUT_CAP``."""
    for i, state in enumerate(playout_states(seed)):
        ours, theirs = Twin(seed + i), Twin(seed + i)
        got = sim.random_playout(state, ours)
        assert got == ismcts.random_playout(fox, state, theirs)
        assert ours.getstate() == theirs.getstate()
        assert got in REWARDS


def test_a_capped_playout_is_scored_by_the_scores() -> None:
    """A play-out cut at ``PLAYOUT_CAP`` (nobody near a target of 1000): scored by score, a
    tie shared, as ``ismcts`` scores it; and the cap is the search's."""
    assert sim.PLAYOUT_CAP == ismcts.PLAYOUT_CAP
    state = start("cap", {"target": fox.MAX_TARGET})
    seen = []
    for k in range(6):
        got = sim.random_playout(state, Twin(k))
        assert got == ismcts.random_playout(fox, state, Twin(k))
        seen.append(got)
    assert all(g in REWARDS for g in seen)


def statistics_states() -> list[tuple[str, Any]]:
    """Fixed states whose winner depends much on the play: a deal, a Fox and a Woodcutter
    decision pending (led or followed), late tricks of a hand, a deal in a longer game."""
    states = midgame_states("stat", {"target": 1}, random.Random(7))
    picked = [("deal", states[0])]
    for name, phase in (("fox", fox.PHASE_FOX), ("woodcutter", fox.PHASE_WOODCUTTER)):
        picked.append((name, next(s for s in states if fox.state_fields(s).phase == phase)))
    # Four tricks left in a hand that is still open (seat 0 wins about half the play-outs).
    late = midgame_states("stat", {"target": 1}, random.Random(11))
    picked.append(("late", next(s for s in late if fox.state_fields(s).tally & 15 == 9)))
    picked.append(("match", start("stat-match", {"target": 6})))
    return picked


def test_random_playout_wins_as_often_as_the_engine_playout() -> None:
    """Seat 0's mean reward and the draw rate over 1500 play-outs each from fixed states, with
    fixed seeds (so it cannot flake): a biased choice or deal would show. The engine's side
    uses plain ``random.Random`` (the two share no draws); the tolerance is over 4 standard
    errors."""
    for name, state in statistics_states():
        ours = [sim.random_playout(state, random.Random(k)) for k in range(1500)]
        theirs = [ismcts.random_playout(fox, state, random.Random(10**6 + k)) for k in range(1500)]
        mean_ours = sum(r[0] for r in ours) / len(ours)
        mean_theirs = sum(r[0] for r in theirs) / len(theirs)
        assert abs(mean_ours - mean_theirs) < 0.055, (name, mean_ours, mean_theirs)
        draws_ours = sum(r[0] == 0.5 for r in ours) / len(ours)
        draws_theirs = sum(r[0] == 0.5 for r in theirs) / len(theirs)
        assert abs(draws_ours - draws_theirs) < 0.04, (name, draws_ours, draws_theirs)


def test_rewards_and_rollout_fit_the_search() -> None:
    for done in (
        {"scores": [3, 1], "winners": [0]},
        {"scores": [1, 3], "winners": [1]},
        {"scores": [2, 2], "winners": [0, 1]},
    ):
        assert sim.rewards(done) == ismcts.rewards(done)
    state = start("rollout", {"target": 1})
    assert sim.playout_rollout(fox, state, Twin(3)) == ismcts.random_playout(fox, state, Twin(3))
    view = {**fox.view(state, fox.to_act(state)[0]), "game": "fox"}
    result = ismcts.search(view, random.Random(1), iterations=40, rollout=sim.playout_rollout)
    assert result.command in view["legal_commands"] and result.iterations == 40


def test_draws_are_uniform_and_drawn_like_the_playout() -> None:
    rand, twin = random.Random(5), Twin(5)
    draws = sim.Draws(rand)
    counts = [0] * 5
    for _ in range(5000):
        value = draws.below(5)
        assert value == twin._randbelow(5)
        counts[value] += 1
    assert all(900 < c < 1100 for c in counts)
    assert draws.below(1) == 0 and rand.getstate() == twin.getstate()
    assert sorted(draws.shuffle(range(10))) == list(range(10))
    assert draws.choice("abc") in "abc"


def test_copy_is_independent() -> None:
    state = start("copy", {"target": 1})
    s = Sim.from_state(state)
    twin = s.copy()
    seat = s.to_act()[0]
    s.apply(seat, s.legal_commands(seat)[0], Rng("copy", "v0"))
    assert twin.to_state() == state and s.to_state() != state
