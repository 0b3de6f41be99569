"""Fox's play-out path on the kernel: a lean kernel and ``apply_listed`` play the plain rules.

A search's play-out runs on a lean kernel (``FoxKernel.thaw_lean``: its mutators skip the
deductions only views and determinizations read) and plays the commands it draws from the
kernel's own listing with ``apply_listed`` (past ``apply``'s checks, the mutators run by the
kernel itself: ``emit`` None). These tests hold that path to the plain one: the same moves
from the same states with the same draws leave the same game on every field the rules read,
end the round with the same scores and draw exactly what the plain kernel draws.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.games import fox
from shared.games.fox import search
from shared.games.kernel import recorder
from shared.games.rng import Rng
from tests.unit.test_fox_search import midgame_states, playout_states

seeds = st.integers(min_value=0, max_value=2**32)

# Every field of the state the rules read (the other fields, ``played``, ``known``,
# ``returned``, ``voids`` and ``last``, are the deductions and records views read).
RULE_FIELDS = ("phase", "turn", "hand0", "hand1", "leader", "lead", "second", "decree", "deck",
               "tally", "game")  # fmt: skip


def rules_read(kernel: fox.FoxKernel) -> tuple[Any, ...]:
    return tuple(getattr(kernel, name) for name in RULE_FIELDS)


@settings(max_examples=40, deadline=None)
@given(seed=seeds)
def test_a_lean_kernel_plays_the_plain_kernels_round(seed: int) -> None:
    """Given the same state and the same draws, when the plain kernel checks and records
    each random listed command (``apply`` with a recorder) and the lean one takes it past the
    checks with nothing recorded (``apply_listed``, ``emit`` None), then after every move
    both hold the same on every field the rules read; at the round's end the same scores,
    history and outcome, and the same draws consumed (the next deal's one draw included)."""
    for i, state in enumerate(playout_states(seed)):
        plain, lean = fox.FoxKernel.thaw(state), fox.FoxKernel.thaw_lean(state)
        plain_rand, lean_rand = random.Random(seed + i), random.Random(seed + i)
        plain_draws, lean_draws = search.Draws(plain_rand), search.Draws(lean_rand)
        chooser = random.Random(i)
        game = plain.game
        moves = 0
        while plain.to_act() and plain.game is game:
            seat = plain.to_act()[0]
            legal = plain.legal_commands(seat)
            assert lean.to_act() == (seat,) and lean.legal_commands(seat) == legal
            command = chooser.choice(legal)
            events: list[Any] = []
            plain.apply(seat, command, plain_draws, recorder(plain, events))
            lean.apply_listed(seat, command, lean_draws, None)
            moves += 1
            if plain.game is game:
                assert rules_read(lean) == rules_read(plain), (seed, i, moves, events)
        assert lean.game.scores == plain.game.scores
        assert lean.game.history == plain.game.history
        assert lean.outcome() == plain.outcome()
        assert lean_rand.getstate() == plain_rand.getstate()
        if moves and plain.outcome() is None:  # the plain kernel dealt; the lean one drew only
            assert lean.to_act() == () and plain.game.round == game.round + 1


def test_apply_listed_gives_what_apply_gives_for_every_listed_command() -> None:
    """In every state of seeded games (every phase: leads, follows, a Fox's and a Woodcutter's
    answers, round ends), each listed command through ``apply_listed`` emits the events
    ``apply`` emits and leaves the same state; with ``emit`` None it leaves that state too."""
    seen: set[str] = set()
    for secret, options in (("listed-1", {"target": 1}), ("listed-m", {"target": 12})):
        for state in midgame_states(secret, options, random.Random(secret)):
            for seat in fox.to_act(state):
                for n, command in enumerate(fox.legal_commands(state, seat)):
                    checked_kernel, listed_kernel, silent_kernel = (
                        fox.FoxKernel.thaw(state) for _ in range(3)
                    )
                    want: list[Any] = []
                    got: list[Any] = []
                    checked_kernel.apply(seat, command, Rng(secret, f"c{n}"),
                                         recorder(checked_kernel, want))  # fmt: skip
                    listed_kernel.apply_listed(seat, command, Rng(secret, f"c{n}"),
                                               recorder(listed_kernel, got))  # fmt: skip
                    silent_kernel.apply_listed(seat, command, Rng(secret, f"c{n}"), None)
                    assert got == want
                    assert listed_kernel.freeze() == checked_kernel.freeze()
                    assert silent_kernel.freeze() == checked_kernel.freeze()
                    seen.add(fox.PHASE_NAMES[fox.state_fields(state).phase])
                    seen.update(type(e).TYPE for e in want)
    assert {"fox_exchange", "woodcutter_return", "trick_won", "round_dealt", "game_ended"} <= seen


def test_a_lean_kernel_has_no_state_to_freeze_or_copy() -> None:
    state = playout_states(1)[0]
    lean = fox.FoxKernel.thaw_lean(state)
    with pytest.raises(ValueError, match="lean"):
        lean.freeze()
    with pytest.raises(ValueError, match="lean"):
        lean.copy()
    assert fox.FoxKernel.thaw(state).freeze() == state
