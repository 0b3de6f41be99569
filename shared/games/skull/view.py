"""What each seat may see of a Skull game: its view, and each event as redacted for it."""

from __future__ import annotations

import dataclasses
from typing import Any

from shared.games.skull.kernel import legal_commands, to_act
from shared.games.skull.messages import (
    DISCS,
    DiscLost,
    DiscPlaced,
    DiscsShuffled,
    State,
    command_to_json,
    event_to_json,
)


def view(state: State, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may know, JSON-ready.

    Keys: ``phase``, ``round``, ``next_starter``, ``you``, ``starter``, ``turn``,
    ``to_act``, ``bid``, ``bidder``, ``challenger``, ``skull_owner``, ``table`` (discs on the
    table), ``flipped`` ([{seat, disc}] in flip order), ``pick_from`` (face-down discs to pick
    among), ``players`` ([{seat, stack_size, face_down, hand_size, discs, wins, passed,
    eliminated, known_skull}], ``known_skull`` true/false when every seat can deduce whether
    that player owns a skull, else null), ``scores``, ``winners``, and for a seat only:
    ``hand`` ({flower, skull}), ``stack`` (own faces, bottom first), ``lost`` (own lost
    discs), ``legal_commands``.
    """
    own = state.players[seat] if seat is not None else None
    flipped_by_seat = _flipped_counts(state)
    return {
        "phase": state.phase,
        "round": state.round,
        "next_starter": state.next_starter,
        "you": seat,
        "starter": state.starter,
        "turn": state.turn,
        "to_act": list(to_act(state)),
        "bid": state.bid,
        "bidder": state.bidder,
        "challenger": state.challenger,
        "skull_owner": state.skull_owner,
        "table": _table_size(state),
        "flipped": [{"seat": s, "disc": d} for s, d in state.flipped],
        "pick_from": len(state.shuffled),
        "players": [
            {
                "seat": s,
                "stack_size": len(p.stack),
                "face_down": len(p.stack) - flipped_by_seat[s] if p.stack else 0,
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
        else [command_to_json(c) for c in legal_commands(state, seat)],
    }


def redact(event: Any, seat: int | None) -> dict[str, Any] | None:
    """The event as ``seat`` may see it: a placed or lost disc's face only for its owner, a
    shuffle's order for no one."""
    match event:
        case DiscPlaced() if event.seat != seat:
            event = dataclasses.replace(event, disc=None)
        case DiscLost() if event.seat != seat:
            event = dataclasses.replace(event, disc=None)
        case DiscsShuffled():
            # Not even the challenger sees it: the order is the picker's blind choice.
            event = dataclasses.replace(event, order=None)
    return event_to_json(event)


def _table_size(state: State) -> int:
    return sum([len(p.stack) for p in state.players])  # a list sums faster than a generator


def _flipped_counts(state: State) -> list[int]:
    counts = [0] * state.seats
    for s, _ in state.flipped:
        counts[s] += 1
    return counts
