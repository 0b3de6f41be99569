"""What each seat may see of a Skull game: its view, and each event as redacted for it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from shared.games.skull.kernel import SkullKernel, read
from shared.games.skull.messages import (
    FLOWER,
    SKULL,
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
    return read(state, lambda kernel: kernel_view(kernel, seat))


def listing_json(commands: list[Any]) -> list[dict[str, Any]]:
    """The commands' client JSON, fresh dicts."""
    return [command_to_json(c) for c in commands]


def kernel_view(
    kernel: SkullKernel,
    seat: int | None,
    as_json: Callable[[list[Any]], list[dict[str, Any]]] = listing_json,
) -> dict[str, Any]:
    """``view`` of the kernel's position, read from the kernel itself (search builds one per
    modelled move: no frozen state); ``as_json`` turns the legal commands into their JSON."""
    flowers, skulls, stacks, up = kernel.flowers, kernel.skulls, kernel.stacks, kernel.up
    wins, passed, known = kernel.wins, kernel.passed, kernel.known
    players = [
        {
            "seat": s,
            "stack_size": (size := len(stack)),
            "face_down": size - turned if size else 0,
            "hand_size": (discs := f + k) - size,
            "discs": discs,
            "wins": w,
            "passed": p,
            "eliminated": discs == 0,
            "known_skull": known_skull,
        }
        for s, stack, turned, f, k, w, p, known_skull in zip(
            range(len(stacks)), stacks, up, flowers, skulls, wins, passed, known, strict=True
        )
    ]
    if seat is None:
        hand = own_stack = lost = None
        legal: list[dict[str, Any]] = []
    else:
        stack = stacks[seat]
        f, k = flowers[seat], skulls[seat]
        hand = {
            FLOWER: f - stack.count(FLOWER) if f else 0,
            SKULL: k - stack.count(SKULL) if k else 0,
        }
        own_stack, lost = list(stack), list(kernel.lost[seat])
        legal = as_json(kernel.legal_commands(seat))
    return {
        "phase": kernel.phase,
        "round": kernel.round,
        "next_starter": kernel.next_starter,
        "you": seat,
        "starter": kernel.starter,
        "turn": kernel.turn,
        "to_act": list(kernel.to_act()),
        "bid": kernel.bid,
        "bidder": kernel.bidder,
        "challenger": kernel.challenger,
        "skull_owner": kernel.skull_owner,
        "table": kernel.table,
        "flipped": [{"seat": s, "disc": d} for s, d in kernel.flipped],
        "pick_from": len(kernel.shuffled),
        "players": players,
        "scores": wins[:],
        "winners": list(kernel.winners),
        "hand": hand,
        "stack": own_stack,
        "lost": lost,
        "legal_commands": legal,
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
