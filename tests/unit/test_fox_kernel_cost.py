"""What a move of Fox's kernel costs, counted in bytecode instructions (issue 26's speed).

Search plays its moves on the kernel (a play-out: ``apply_listed`` on a lean kernel, see
``test_fox_kernel_lean.py``), so the kernel's cost per move is the search's speed. Timing it in a test would be noise on a
shared machine; the interpreter's own count of the instructions it runs is not: the same
play-outs run the same instructions on every machine, so a budget on them fails exactly when
the hot path grows. The counts are CPython 3.11's (another version compiles other bytecode):
elsewhere the test is skipped. The simulator the kernel replaced ran ~111 instructions a move
(no checks, no deductions, no events); the first kernel ran 385 a move and 42,374 an
iteration, this one 339 and 37,611 (slots for fields, a closure for ``on``, tuple listings).
Since issue 28 a play-out plays the current round only (worth its scores' match chance): 355
a move (its fixed costs, the thaw and the round's closing deal, spread over one round's moves
instead of a match's) and 9,455 an iteration of a search in a match to 21. Then the play-out's
own path (issue 26, "the play-out's cost"): a lean kernel (no deductions kept, the next deal
drawn and not dealt), the listed command taken past the checks and the mutators run without
``emit``, two-seat ranks without loops: 228 a move and 6,888 an iteration.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from shared.bots import ismcts
from shared.games import fox
from shared.games.fox import search
from shared.games.rng import Rng

pytestmark = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11), reason="bytecode counts are CPython 3.11's"
)

# Instructions per move of a random play-out (the apply calls of the play-out), all included:
# the play-out loop, the listing, apply's checks, the mutators, round ends and deals.
PLAYOUT_OPS_PER_MOVE = 235
# Instructions per ISMCTS iteration on a fixed follow view (determinize, tree, play-out).
SEARCH_OPS_PER_ITERATION = 7_100


def start(secret: str) -> Any:
    """A match to 21 right after setup."""
    state: Any = None
    for event in fox.setup(2, {}, Rng(secret)):
        state = fox.evolve(state, event)
    return state


def count(run: Callable[[], Any]) -> tuple[int, int]:
    """(bytecode instructions ``run`` executes, calls of the kernel's ``apply_listed`` among
    them: a play-out's moves)."""
    ops = applies = 0
    apply_code = fox.FoxKernel.apply_listed.__code__

    def trace(frame: FrameType, event: str, _arg: Any) -> Any:
        nonlocal ops, applies
        if event == "opcode":
            ops += 1
        elif event == "call":
            frame.f_trace_opcodes = True
            applies += frame.f_code is apply_code
        return trace

    sys.settrace(trace)
    try:
        run()
    finally:
        sys.settrace(None)
    return ops, applies


def test_a_playout_move_costs_at_most_its_budget() -> None:
    states = [start(f"cost-{k}") for k in range(20)]
    for score0 in range(21):  # the table of match chances to 21: made once per process
        for score1 in range(21):
            search.match_value(score0, score1, 21)

    def run() -> None:
        for k, state in enumerate(states):
            search.random_playout(state, random.Random(k))

    ops, moves = count(run)
    assert moves > 400  # a play-out plays its round: 20 rounds of about 26 moves
    assert ops / moves <= PLAYOUT_OPS_PER_MOVE, f"{ops / moves:.0f} instructions a move"


def follow_view() -> dict[str, Any]:
    """The first follow with a choice in a seeded random match (the benchmark's kind)."""
    rnd = random.Random(7)
    state = start("cost-search")
    for n in range(1_000):
        seat = fox.to_act(state)[0]
        legal = fox.legal_commands(state, seat)
        if fox.state_fields(state).lead >= 0 and len(legal) > 1 and n > 10:
            view = fox.view(state, seat)
            return {**view, "game": "fox", "seat": seat, "to_act": [seat], "outcome": None}
        events = fox.decide(state, seat, rnd.choice(legal), Rng("cost-search", f"v{n}"))
        state = fox.evolve_all(state, events)
    raise AssertionError("no follow with a choice")


def test_a_search_iteration_costs_at_most_its_budget() -> None:
    view = follow_view()
    for score0 in range(21):  # the table of match chances to 21, made once per process
        for score1 in range(21):
            search.match_value(score0, score1, 21)
    found: list[ismcts.SearchResult] = []
    ops, _ = count(lambda: found.append(ismcts.search(view, random.Random(1), iterations=40)))
    assert found[0].iterations == 40 and found[0].command is not None
    per_iteration = ops / 40
    assert per_iteration <= SEARCH_OPS_PER_ITERATION, f"{per_iteration:.0f} per iteration"
