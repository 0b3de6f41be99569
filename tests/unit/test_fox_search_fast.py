"""Fox's search iteration, made cheaper (issue 38), held to the plain one.

What an iteration skips now: the freeze and thaw between the tree and the play-out (the
play-out runs on the tree's own kernel, ``search.kernel_rollout``), the checks of the
commands the tree takes from the kernel's listing (``apply_listed``), the hashing of Fox's
commands (a frozen dataclass hashes in Python: the tree tells them apart by identity, which
``FoxKernel.SHARED_COMMANDS`` declares), the event objects of a play-out's moves and round
end (the mutators' rules run from the fields), ``random.shuffle``'s call a card and
``math.log``'s argument parsing. Each must leave every draw and choice as it was: an audit
re-decides a recorded search by its iteration count.
"""

from __future__ import annotations

import math
import random
import sys
from types import FrameType
from typing import Any

import pytest

from shared.bots import ismcts
from shared.games import fox
from shared.games.fox import search
from shared.games.rng import Rng
from shared.match import projections
from tests.unit.test_fox_search import midgame_states, playout_states

ENGINE: Any = fox  # the engine contract, as the service holds it

# Bytecode instructions a one-hand iteration at most (the first six one-hand views below, 300
# iterations each; CPython 3.11's count): 7,317 before issue 38's second part, 5,999 after.
ONE_HAND_OPS_PER_ITERATION = 6_400


def test_listed_commands_are_the_shared_objects() -> None:
    """``SHARED_COMMANDS``: every listed command is the object ``parse_command`` returns for
    it, so equal commands are one object and identity tells them apart as equality does."""
    assert fox.FoxKernel.SHARED_COMMANDS
    seen: dict[Any, int] = {}
    for secret, options in (("shared-1", {"target": 1}), ("shared-m", {"target": 12})):
        for state in midgame_states(secret, options, random.Random(secret)):
            for seat in fox.to_act(state):
                listed = fox.FoxKernel.thaw(state).legal_commands(seat)
                assert len({id(c) for c in listed}) == len(set(listed)) == len(listed)
                for command in listed:
                    assert fox.parse_command(fox.command_to_json(command)) is command
                    assert seen.setdefault(command, id(command)) == id(command)
    kinds = {type(c) for c in seen}
    assert kinds == {fox.Play, fox.ExchangeDecree, fox.KeepDecree, fox.ReturnCard}


@pytest.mark.parametrize("seed", range(6))
def test_the_kernel_rollout_is_the_frozen_states_playout(seed: int) -> None:
    """On a plain kernel (the tree's), from every kind of state: the same values and the same
    draws as ``random_playout`` of its frozen state."""
    for i, state in enumerate(playout_states(seed)):
        plain_rand, kernel_rand = random.Random(seed * 100 + i), random.Random(seed * 100 + i)
        kernel = fox.FoxKernel.thaw(state)
        assert search.kernel_rollout(kernel, kernel_rand) == search.random_playout(
            state, plain_rand
        )
        assert kernel_rand.getstate() == plain_rand.getstate()
        assert kernel.lean  # spent: its deductions are stale


def test_winners_are_the_outcomes() -> None:
    for secret, options in (("win-1", {"target": 1}), ("win-5", {"target": 5})):
        for state in midgame_states(secret, options, random.Random(secret)):
            result = fox.outcome(state)
            winners = fox.FoxKernel.thaw(state).winners()
            assert (winners is None) == (result is None)
            if winners is not None and result is not None:
                assert list(winners) == result["winners"]
                assert search.rewards(result) == list(search._REWARDS[winners])


def views() -> list[dict[str, Any]]:
    """Seats' views with a choice in one-hand games and a match: leads, follows, a Fox's and
    a Woodcutter's answers among them."""
    out = []
    for secret, options in (("fast-1", {"target": 1}), ("fast-2", {"target": 1}),
                            ("fast-m", {"target": 12})):  # fmt: skip
        for n, state in enumerate(midgame_states(secret, options, random.Random(secret))):
            for seat in fox.to_act(state):
                if n % 5 == 0 and len(fox.legal_commands(state, seat)) > 1:
                    out.append({**projections.game_view(ENGINE, state, seat), "game": "fox"})
    phases = {v["phase"] for v in out}
    assert {"play", "fox_exchange", "woodcutter_return"} <= phases
    return out


def plain_shuffle(self: ismcts.FastRng, items: Any) -> tuple[Any, ...]:
    """``FastRng.shuffle`` as it was: ``random.Random.shuffle`` itself."""
    out = list(items)
    self._random.shuffle(out)
    return tuple(out)


def test_the_search_is_the_plain_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same commands, visits and mean rewards as the search with every fast path off
    (commands hashed, listed commands checked, each play-out on a frozen and thawed copy,
    ``random.shuffle``, ``math.log``), for views of every decision."""
    cases = views()
    fast = [ismcts.search(view, random.Random(i), iterations=120) for i, view in enumerate(cases)]
    real_init = ismcts._Search.__init__

    def plain_init(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        self.listed = False
        self.by_identity = False
        self.kernel_rollout = None

    monkeypatch.setattr(ismcts._Search, "__init__", plain_init)
    monkeypatch.setattr(ismcts.FastRng, "shuffle", plain_shuffle)
    monkeypatch.setattr(ismcts, "_ln_table", lambda size: ismcts._Ln())
    plain = [ismcts.search(view, random.Random(i), iterations=120) for i, view in enumerate(cases)]
    for i, (got, want) in enumerate(zip(fast, plain, strict=True)):
        assert (got.command, got.iterations, got.children) == (
            want.command,
            want.iterations,
            want.children,
        ), i


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="bytecode counts are CPython 3.11's")
def test_a_one_hand_iteration_costs_at_most_its_budget() -> None:
    """Bytecode instructions (the interpreter's count: no noise) of one-hand searches, deal,
    tree and play-out together."""
    cases = [v for v in views() if v["target"] == 1][:6]
    ops = 0

    def trace(frame: FrameType, event: str, _arg: Any) -> Any:
        nonlocal ops
        if event == "opcode":
            ops += 1
        elif event == "call":
            frame.f_trace_opcodes = True
        return trace

    for view in cases:
        ismcts.search(view, random.Random(0), iterations=5)  # tables made once per process
    sys.settrace(trace)
    try:
        for i, view in enumerate(cases):
            ismcts.search(view, random.Random(i), iterations=300)
    finally:
        sys.settrace(None)
    per_iteration = ops / (300 * len(cases))
    assert per_iteration <= ONE_HAND_OPS_PER_ITERATION, f"{per_iteration:.0f} per iteration"
    assert math.isfinite(per_iteration)


def test_a_round_end_without_events_is_the_recorded_one() -> None:
    """The play-out's round end (``emit`` None: no event built) leaves the state the recorded
    one leaves, for a game's end and for a match's next deal."""
    for secret, options in (("end-1", {"target": 1}), ("end-m", {})):
        states = midgame_states(secret, options, random.Random(secret))
        ended = 0
        for state in states:
            if fox.state_fields(state).tally & 15 != 12 or fox.state_fields(state).phase:
                continue
            seat = fox.to_act(state)[0]
            if fox.state_fields(state).lead < 0:
                continue
            for command in fox.legal_commands(state, seat):
                silent = fox.FoxKernel.thaw(state)
                silent.apply_listed(seat, command, Rng(secret, "deal"), None)
                want = fox.evolve_all(state, fox.decide(state, seat, command, Rng(secret, "deal")))
                assert silent.freeze() == want
                ended += 1
        assert ended
