"""Fox's search hooks (``shared.games.fox.search``, the engine's ``SEARCH``): the play-out
ISMCTS runs for Fox, on the kernel, drawn as Fox's play-outs always drew.

The kernel's two faces are held equal by the shared conformance suite; what is Fox's own
here is how the rollout draws (``Draws``), the cap and the rewards it gives the search.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.bots import ismcts
from shared.games import fox
from shared.games.fox import search
from shared.games.rng import Rng

seeds = st.integers(min_value=0, max_value=2**32)
REWARDS = ([1.0, 0.0], [0.0, 1.0], [0.5, 0.5])


def start(secret: str, options: dict[str, Any]) -> fox.State:
    """The state after setup from ``secret`` (the service's ``setup`` label)."""
    state: Any = None
    for event in fox.setup(2, options, Rng(secret)):
        state = fox.evolve(state, event)
    return state


class Twin(random.Random):
    """A ``random.Random`` whose ``_randbelow`` (what ``ismcts.random_playout`` draws with)
    draws the way ``search.Draws.below`` and ``search.random_playout`` do."""

    def _randbelow(self, n: int) -> int:
        if n == 1:
            return 0
        k = (n - 1).bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r


def midgame_states(
    secret: str, options: dict[str, Any], chooser: random.Random, max_moves: int = 10_000
) -> list[Any]:
    """Every state of a game played with random legal commands (at most ``max_moves``)."""
    state = start(secret, options)
    states = [state]
    n = 0
    while fox.to_act(state) and n < max_moves:
        seat = fox.to_act(state)[0]
        command = chooser.choice(fox.legal_commands(state, seat))
        for event in fox.decide(state, seat, command, Rng(secret, f"v{n}")):
            state = fox.evolve(state, event)
        states.append(state)
        n += 1
    return states


def playout_states(seed: int) -> list[Any]:
    """Start states (one hand, a few rounds, a match, a target no play-out reaches before
    ``PLAYOUT_CAP``), states mid-game (a Fox or Woodcutter pending among them) and
    determinizations of them."""
    chooser = random.Random(seed)
    out: list[Any] = []
    for options in ({"target": 1}, {"target": 5}, {}, {"target": fox.MAX_TARGET}):
        secret = f"po-{seed}-{options}"
        cut = 3 + chooser.randrange(40) if options.get("target") == fox.MAX_TARGET else 10_000
        states = midgame_states(secret, options, chooser, max_moves=cut)
        out.append(start(secret, options))
        out.extend(chooser.sample(states[:-1], 2))
        state = chooser.choice(states[:-1])
        seat = fox.to_act(state)[0]
        out.append(fox.determinize(fox.view(state, seat), seat, Rng(secret, "det")))
        out.append(states[-1])  # over, unless cut short
    return out


def test_the_search_finds_the_hooks_and_shares_the_cap() -> None:
    assert fox.SEARCH is search
    assert ismcts.default_rollout(fox) is search.playout_rollout
    assert search.PLAYOUT_CAP == ismcts.PLAYOUT_CAP
    for done in (
        {"scores": [3, 1], "winners": [0]},
        {"scores": [1, 3], "winners": [1]},
        {"scores": [2, 2], "winners": [0, 1]},
    ):
        assert search.rewards(done) == ismcts.rewards(done)


def round_playout(state: Any, rand: random.Random) -> list[float]:
    """What the rollout must give, written plainly: random legal commands (drawn as
    ``ismcts.random_playout`` draws them) on the kernel until the round is scored, then the
    rewards if the game is over, else each seat's match chance at the new scores."""
    kernel = fox.FoxKernel.thaw(state)
    rng = ismcts.FastRng(rand)
    round_ = kernel.game.round
    while True:
        result = kernel.outcome()
        if result is not None:
            return ismcts.rewards(result)
        if kernel.game.round != round_:
            game = kernel.game
            value = search.match_value(game.scores[0], game.scores[1], game.target)
            return [value, 1.0 - value]
        seat = kernel.to_act()[0]
        legal = kernel.legal_commands(seat)
        kernel.apply(seat, legal[rand._randbelow(len(legal))], rng, kernel.on)  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(seed=seeds)
def test_the_rollout_is_the_kernel_playout_move_for_move(seed: int) -> None:
    """Given a generator that draws as ``Draws`` does, the rollout plays the very round that
    a plain random play-out on the kernel plays (same value, same draws consumed): it adds
    nothing to the rules, only its way of drawing and the value of the round's end; a game
    of one round is ``ismcts.random_playout`` itself."""
    for i, state in enumerate(playout_states(seed)):
        ours, theirs = Twin(seed + i), Twin(seed + i)
        got = search.random_playout(state, ours)
        assert got == round_playout(state, theirs)
        assert ours.getstate() == theirs.getstate()
        assert sum(got) == 1.0 and all(0.0 <= r <= 1.0 for r in got)
        if fox.state_fields(state).game.target == 1:
            assert got == ismcts.random_playout(fox, state, Twin(seed + i))
            assert got in REWARDS


def test_a_match_playout_ends_with_the_round_at_its_match_chance() -> None:
    """In a match (here to 1000, nobody near it) a play-out stops when the round is scored:
    its value is the match chance of the scores it reached, between 0 and 1, not a win or a
    loss decided by rounds played at random after it."""
    state = start("cap", {"target": fox.MAX_TARGET})
    values = set()
    for k in range(6):
        got = search.random_playout(state, Twin(k))
        assert got == round_playout(state, Twin(k))
        assert 0.0 < got[0] < 1.0 and got[0] + got[1] == 1.0
        values.add(got[0])
    assert len(values) > 1  # the rounds' scores differ, and so do their values


def test_match_chances_are_symmetric_monotone_and_exact_at_the_end() -> None:
    for target in (5, 16, 21, 35, fox.MAX_TARGET):
        assert abs(search.match_value(0, 0, target) - 0.5) < 1e-9
        for lead in (1, 5, 12):
            ahead = search.match_value(lead, 0, target)
            assert ahead > 0.5 or lead >= target
            assert abs(ahead + search.match_value(0, lead, target) - 1.0) < 1e-9
            assert ahead <= search.match_value(lead + 1, 0, target)  # more points never hurt
    assert search.match_value(21, 20, 21) == 1.0
    assert search.match_value(20, 22, 21) == 0.0
    assert search.match_value(22, 22, 21) == 0.5
    # One round to go whoever wins it: a lead of 6 (a whole round's points) is worth more
    # there than at the start of a long match.
    assert search.match_value(20, 14, 21) > search.match_value(6, 0, 35) > 0.5


def statistics_states() -> list[tuple[str, Any]]:
    """Fixed states whose winner depends much on the play: a deal, a Fox and a Woodcutter
    decision pending, late tricks of a hand, a deal in a longer game."""
    states = midgame_states("stat", {"target": 1}, random.Random(7))
    picked = [("deal", states[0])]
    for name, phase in (("fox", fox.PHASE_FOX), ("woodcutter", fox.PHASE_WOODCUTTER)):
        picked.append((name, next(s for s in states if fox.state_fields(s).phase == phase)))
    late = midgame_states("stat", {"target": 1}, random.Random(11))
    picked.append(("late", next(s for s in late if fox.state_fields(s).tally & 15 == 9)))
    picked.append(("match", start("stat-match", {"target": 6})))
    return picked


def test_the_rollout_wins_as_often_as_plain_random_play() -> None:
    """Seat 0's mean reward and the draw rate over 1500 play-outs each from fixed states, with
    fixed seeds (so it cannot flake): a biased choice or deal in ``Draws`` would show. The
    other side draws with plain ``random.Random`` (the two share no draws); the tolerance is
    over 4 standard errors."""
    for name, state in statistics_states():
        ours = [search.random_playout(state, random.Random(k)) for k in range(1500)]
        theirs = [ismcts.random_playout(fox, state, random.Random(10**6 + k)) for k in range(1500)]
        mean_ours = sum(r[0] for r in ours) / len(ours)
        mean_theirs = sum(r[0] for r in theirs) / len(theirs)
        assert abs(mean_ours - mean_theirs) < 0.055, (name, mean_ours, mean_theirs)
        draws_ours = sum(r[0] == 0.5 for r in ours) / len(ours)
        draws_theirs = sum(r[0] == 0.5 for r in theirs) / len(theirs)
        assert abs(draws_ours - draws_theirs) < 0.04, (name, draws_ours, draws_theirs)


def test_the_rollout_fits_the_search() -> None:
    state = start("rollout", {"target": 1})
    assert search.playout_rollout(fox, state, Twin(3)) == ismcts.random_playout(fox, state, Twin(3))
    view = {**fox.view(state, fox.to_act(state)[0]), "game": "fox"}
    result = ismcts.search(view, random.Random(1), iterations=40, rollout=search.playout_rollout)
    assert result.command in view["legal_commands"] and result.iterations == 40


def test_draws_are_uniform_and_drawn_like_the_playout() -> None:
    rand, twin = random.Random(5), Twin(5)
    draws = search.Draws(rand)
    counts = [0] * 5
    for _ in range(5000):
        value = draws.below(5)
        assert value == twin._randbelow(5)
        counts[value] += 1
    assert all(900 < c < 1100 for c in counts)
    assert draws.below(1) == 0 and rand.getstate() == twin.getstate()
    assert sorted(draws.shuffle(range(10))) == list(range(10))
    assert draws.choice("abc") in "abc"


def test_a_kernel_copy_is_independent() -> None:
    state = start("copy", {"target": 1})
    kernel = fox.KERNEL.thaw(state)
    twin = kernel.copy()
    seat = kernel.to_act()[0]
    kernel.apply(seat, kernel.legal_commands(seat)[0], Rng("copy", "v0"), kernel.on)
    assert twin.freeze() == state and kernel.freeze() != state
