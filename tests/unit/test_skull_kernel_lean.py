"""Skull's play-out path on the kernel: ``apply_listed`` and the view read from the kernel play
the plain rules and show the plain view.

A play-out draws its commands from the kernel's own listing and applies them past the checks
(``SkullKernel.apply_listed``, the mutators run by the kernel itself: ``emit`` None); a
modelled play-out shows the heuristic ``kernel_view`` of the kernel, with no frozen state. These
tests hold that path to the plain one: every listed command of random games' states emits what
``apply`` emits and leaves the same state; the view read from the kernel is, in every state
and for every seat and a spectator, the view of the frozen state as ``view`` built it before
(``frozen_view`` below: that code, from the ``State``'s players), so the heuristic reads the
same values and chooses the same moves.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings

from shared.games import skull
from shared.games.kernel import recorder
from shared.games.rng import Rng
from shared.games.skull import SkullKernel, State
from shared.games.skull import bots as heuristic
from shared.games.skull.messages import DISCS, command_to_json
from shared.games.skull.search import _UNSHUFFLED, modelled_rollout, modelled_view
from shared.games.skull.view import kernel_view, view
from tests.unit.test_skull_search import game, rules, seat_counts, seeds


def frozen_view(state: State, seat: int | None) -> dict[str, Any]:
    """``view`` as it was built from the frozen state's players (the oracle)."""
    own = state.players[seat] if seat is not None else None
    counts = [0] * state.seats
    for s, _ in state.flipped:
        counts[s] += 1
    return {
        "phase": state.phase,
        "round": state.round,
        "next_starter": state.next_starter,
        "you": seat,
        "starter": state.starter,
        "turn": state.turn,
        "to_act": list(skull.to_act(state)),
        "bid": state.bid,
        "bidder": state.bidder,
        "challenger": state.challenger,
        "skull_owner": state.skull_owner,
        "table": sum(len(p.stack) for p in state.players),
        "flipped": [{"seat": s, "disc": d} for s, d in state.flipped],
        "pick_from": len(state.shuffled),
        "players": [
            {
                "seat": s,
                "stack_size": len(p.stack),
                "face_down": len(p.stack) - counts[s] if p.stack else 0,
                "hand_size": p.hand_size,
                "discs": p.discs,
                "wins": p.wins,
                "passed": p.passed,
                "eliminated": p.eliminated,
                "known_skull": p.known_skull,
            }
            for s, p in enumerate(state.players)
        ],
        "scores": [p.wins for p in state.players],
        "winners": list(state.winners),
        "hand": None if own is None else {d: own.in_hand(d) for d in DISCS},
        "stack": None if own is None else list(own.stack),
        "lost": None if own is None else list(own.lost),
        "legal_commands": []
        if seat is None
        else [command_to_json(c) for c in skull.legal_commands(state, seat)],
    }


def modelled_positions(seats: int, rule: str, seed: int) -> list[SkullKernel]:
    """Kernels along a game the heuristic plays for every seat (as a modelled play-out does):
    bids that reach challenges, flips, penalties, eliminations and game ends."""
    rand = random.Random(seed)
    state = reduce_setup(seats, rule, f"lean-{seed}")
    kernel = SkullKernel.thaw(state)
    out = []
    for _ in range(400):
        out.append(kernel.copy())
        if kernel.turn is None:
            break
        seat = kernel.turn
        pick = heuristic.choose(modelled_view(kernel, seat), rand)
        assert pick is not None
        kernel.apply(seat, skull.parse_command(pick), _UNSHUFFLED, kernel.on)
    return out


def reduce_setup(seats: int, rule: str, secret: str) -> State:
    state: Any = None
    for event in skull.setup(seats, {"next_starter": rule}, Rng(secret)):
        state = skull.evolve(state, event)
    assert isinstance(state, State)
    return state


def assert_views_agree(kernel: SkullKernel) -> None:
    state = kernel.freeze()
    for seat in [None, *range(kernel.seats)]:
        want = frozen_view(state, seat)
        assert kernel_view(kernel, seat) == want, seat
        assert view(state, seat) == want, seat
    if kernel.turn is not None:
        want = {
            **frozen_view(state, kernel.turn),
            "seat": kernel.turn,
            "to_act": [kernel.turn],
            "outcome": None,
        }
        assert modelled_view(kernel, kernel.turn) == want


@settings(max_examples=30, deadline=None)
@given(seats=seat_counts, rule=rules, seed=seeds)
def test_the_view_read_from_the_kernel_is_the_frozen_states_view(
    seats: int, rule: str, seed: int
) -> None:
    """Given the states of a random game and of a game the heuristic plays, when each is
    viewed from the kernel (``kernel_view``, ``modelled_view``) and through ``view``, then
    every seat and a spectator see exactly the frozen state's view (the oracle)."""
    for state in game(seats, rule, seed):
        assert_views_agree(SkullKernel.thaw(state))
    for kernel in modelled_positions(seats, rule, seed):
        assert_views_agree(kernel)


@settings(max_examples=30, deadline=None)
@given(seats=seat_counts, rule=rules, seed=seeds)
def test_apply_listed_gives_what_apply_gives_for_every_listed_command(
    seats: int, rule: str, seed: int
) -> None:
    """In every state of a random game, each listed command through ``apply_listed`` emits
    the events ``apply`` emits (drawing the same shuffles) and leaves the same state; with
    ``emit`` None it leaves that state too."""
    seen: set[str] = set()
    for n, state in enumerate(game(seats, rule, seed)):
        for seat in skull.to_act(state):
            for command in skull.legal_commands(state, seat):
                checked, listed, silent = (SkullKernel.thaw(state) for _ in range(3))
                want: list[Any] = []
                got: list[Any] = []
                checked.apply(seat, command, Rng(f"l{seed}", f"{n}"), recorder(checked, want))
                listed.apply_listed(seat, command, Rng(f"l{seed}", f"{n}"), recorder(listed, got))
                silent.apply_listed(seat, command, Rng(f"l{seed}", f"{n}"), None)
                assert got == want
                assert listed.freeze() == checked.freeze()
                assert silent.freeze() == checked.freeze()
                seen.update(type(e).TYPE for e in want)
    assert {"disc_placed", "bid_made"} <= seen


def test_every_event_is_reached_through_apply_listed() -> None:
    """Seeded games reach every rule's effect: each event type is emitted by some listed
    command above (so the property covers every branch of ``apply_listed``)."""
    seen: set[str] = set()
    for seed in range(40):
        for state in game(4 + seed % 3, skull.NEXT_STARTER_RULES[seed % 2], seed):
            for seat in skull.to_act(state):
                for command in skull.legal_commands(state, seat):
                    kernel = SkullKernel.thaw(state)
                    events: list[Any] = []
                    kernel.apply_listed(
                        seat, command, Rng("all", str(seed)), recorder(kernel, events)
                    )
                    seen.update(type(e).TYPE for e in events)
    assert seen >= set(skull.EVENTS) - {"game_set_up"}


def test_a_modelled_playout_draws_as_the_checked_path() -> None:
    """The modelled play-out (the kernel's listing, ``apply_listed``, the kernel's view) ends
    each game as the heuristic playing through ``apply`` and ``parse_command`` on the frozen
    state's view ends it, with the same draws."""
    for seed in range(30):
        state = reduce_setup(3 + seed % 4, skull.NEXT_STARTER_RULES[seed % 2], f"m{seed}")
        fast_rand, slow_rand = random.Random(seed), random.Random(seed)
        fast = modelled_rollout(skull, state, fast_rand)
        kernel = SkullKernel.thaw(state)
        slow: list[float] | None = None
        for _ in range(400):
            if kernel.turn is None:
                slow = [
                    1.0 / len(kernel.winners) if s in kernel.winners else 0.0
                    for s in range(kernel.seats)
                ]
                break
            seat = kernel.turn
            doc = {**frozen_view(kernel.freeze(), seat), "seat": seat, "outcome": None}
            pick = heuristic.choose(doc, slow_rand)
            assert pick is not None
            kernel.apply(seat, skull.parse_command(pick), _UNSHUFFLED, kernel.on)
        assert slow is not None
        assert fast == slow
        assert fast_rand.getstate() == slow_rand.getstate()
