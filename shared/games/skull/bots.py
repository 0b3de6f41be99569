"""The hand-written ``heuristic`` bot for Skull (the package's ``HEURISTIC``): a pure function of
one seat's view.

Policy, in brief:

* No tells: every public choice (place another disc or open, the bid, raise or pass) is a
  function of public facts alone (stack and hand sizes, the bid, the other players' records),
  never of what is on its own stack. Whether its skull is down shows only in which disc it
  places, which nobody sees, so a spectator reading its bids learns nothing about its stack
  (``benchmarks/bench_skull_tells.py`` measures it). The skull goes down only as the first
  disc of a round, so neither does the stack's size.
* Placing: the first disc is the skull about two times in three (a mixed strategy: more
  often with fewer flowers left), else a flower; then flowers while two or more discs are in
  hand (one disc always stays in hand), then it opens at the highest bid worth making.
* Bidding: its own stack is flipped first, so a bid no higher than its stack counts on its
  own discs at a fixed risk (the same whether the skull is down or not); beyond that it
  estimates the chance of flipping the rest from the other stacks (players known to have
  lost their skull are safe, a known skull is on a stack with a probability that grows with
  its size, the standing bidder is trusted a little) and bids the highest count whose chance
  clears a bar (low: a failure costs one disc of four, a success is half the game; higher for
  each disc already lost, lower on match point), else passes.
* Flipping: its own stack first (forced; it is public from then on), then always the
  face-down disc least likely to be a skull under the same model, so known-skull-free players
  go before anyone else.
* Penalty: after its own skull it discards a flower while it keeps two or more flowers (the
  skull keeps catching challengers and keeps the others guessing), else the skull; the blind
  pick is uniform. Choosing the starter (English rule): itself when still in (it opens the next
  bidding first), else the player with the fewest win markers, then fewest discs.

Every random draw (the first disc, blind picks, ties) comes from ``rng``; nothing else is read.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

FLOWER = "flower"
SKULL = "skull"
DISCS_PER_PLAYER = 4

# How often the first disc of a round is the skull (the only moment it goes down): a mixed
# strategy, so that its stack is never known, and often enough that flipping it is a real
# risk. Against random bots the skull is what wins (they challenge blindly and fail on it):
# with the bids below, 0.55 won about 0.54 of 4-player games, 0.65 about 0.60, 0.75 about
# 0.65 (2000 games each); 0.65 keeps the stack close to a toss-up for anyone reading it.
# With fewer flowers left a success needs other stacks anyway, so the skull is worth more.
SKULL_FIRST = 0.65
SKULL_FIRST_FEW_FLOWERS = 0.7
# The risk it counts on its own stack when it bids, whatever is on it: bidding as if the
# stack were all flowers makes it challenge its own skull too often (0 won about 0.54), as
# if it held the skull as often as it does (0.65) it hardly ever bids (about 0.25).
OWN_STACK_RISK = 0.3
# Per disc placed, the chance we assume an opponent put its skull there: the skull is on a
# stack of ``s`` discs with probability 1 - (1 - p) ** s (at least s / discs, the uniform case).
SKULL_PER_DISC = 0.4
# The standing bidder claims to see flowers: trust it a little.
BIDDER_TRUST = 0.8
# The least chance of success at which we bid: a failure costs one disc of four, a success is
# half the game, so even a one-in-three shot is worth taking (against random bots a bar of
# 0.15 won about 0.42 of 4-player games, 0.3 about 0.60, 0.45 about 0.49). On match point a
# success ends the game; each disc already lost raises the bar (elimination looms).
MIN_SUCCESS = 0.3
MIN_SUCCESS_LAST = 0.2
# Added to the bar for each disc already lost.
CAUTION_PER_LOST_DISC = 0.08


def choose(view: Mapping[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """One of ``view["legal_commands"]`` for the seat to act, or None when it is not its turn
    or the game is over."""
    legal: Sequence[Mapping[str, Any]] = view.get("legal_commands") or []
    seat = view.get("seat")
    if view.get("outcome") is not None or seat not in view.get("to_act", []) or not legal:
        return None
    phase = view["phase"]
    if phase == "placing":
        pick = _place(view, legal, rng)
    elif phase == "bidding":
        pick = _bid(view, legal, rng)
    elif phase == "flipping":
        pick = _flip(view, legal, rng)
    elif phase == "penalty":
        pick = _penalty(view, legal, rng)
    elif phase == "choosing_starter":
        pick = _starter(view, legal, rng)
    else:
        pick = None
    if pick is None:  # a phase this bot does not know: any legal command beats none
        pick = rng.choice(list(legal))
    return dict(pick)


# --- placing -----------------------------------------------------------------------------------


def _place(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    stack: list[str] = view["stack"]
    hand: Mapping[str, int] = view["hand"]
    places = {c["disc"]: c for c in legal if c["type"] == "place"}
    bids = [c for c in legal if c["type"] == "bid"]
    hand_size = hand[FLOWER] + hand[SKULL]
    if not stack:  # the first disc: no bid is legal yet
        if FLOWER not in places:
            return places[SKULL]
        if SKULL not in places:
            return places[FLOWER]
        few = hand[FLOWER] <= 1
        first = SKULL_FIRST_FEW_FLOWERS if few else SKULL_FIRST
        return places[SKULL] if rng.random() < first else places[FLOWER]
    # From here on the choice is public: another disc while two are in hand, else open. Its
    # face is private and always a flower (a skull would make the stack's size a tell).
    if hand_size >= 2 or not bids:
        return places.get(FLOWER) or places[SKULL]
    return _best_bid(view, bids) or bids[0]


# --- bidding -----------------------------------------------------------------------------------


def _bid(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    bids = [c for c in legal if c["type"] == "bid"]
    passes = [c for c in legal if c["type"] == "pass"]
    best = _best_bid(view, bids)
    return best if best is not None else passes[0]


def _best_bid(
    view: Mapping[str, Any], bids: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The highest legal bid whose challenge is likely enough to succeed; None when even the
    lowest is not. Reads public facts only: its own stack counts by its size, at
    ``OWN_STACK_RISK`` whatever is on it, so the bid tells nothing of the stack."""
    if not bids:
        return None
    own = len(view["stack"])
    me = _player(view, view["seat"])
    need = MIN_SUCCESS_LAST if me is not None and me["wins"] >= 1 else MIN_SUCCESS
    if me is not None:  # each disc already lost makes the next failure dearer
        need += CAUTION_PER_LOST_DISC * (DISCS_PER_PLAYER - me["discs"])
    high = bids[-1]["count"]
    survival = _survival_curve(view, high - own) if high > own else [1.0]
    best = None
    for c in bids:
        extra = c["count"] - own
        others = 1.0 if extra <= 0 else survival[extra] if extra < len(survival) else 0.0
        chance = (1.0 - OWN_STACK_RISK) * others
        if chance >= need:
            best = c
    return best


# --- flipping ----------------------------------------------------------------------------------


def _flip(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    if len(legal) == 1:  # our own stack, which must go first, or one stack left
        return legal[0]
    stacks = _stacks(view)
    risk = {seat: _next_risk(*stacks[seat]) for seat in stacks}
    best = min(risk.get(c["seat"], 1.0) for c in legal)
    ties = [c for c in legal if risk.get(c["seat"], 1.0) <= best + 1e-12]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


# --- penalty and starter -----------------------------------------------------------------------


def _penalty(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    discards = {c["disc"]: c for c in legal if c["type"] == "discard"}
    if not discards:  # the blind pick: no information, so uniform
        return rng.choice(list(legal))
    hand: Mapping[str, int] = view["hand"]  # discs are back in hand in the penalty
    flowers = hand[FLOWER] + view["stack"].count(FLOWER)
    # Lose a flower while two remain: the skull still catches challengers and the loss is
    # secret, so the others cannot tell whether we hold it. With one flower left the skull
    # goes: a lone skull can never win a challenge, a lone flower can.
    if FLOWER in discards and (flowers >= 3 or SKULL not in discards):
        return discards[FLOWER]
    return discards.get(SKULL) or discards[FLOWER]


def _starter(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    seat = view["seat"]
    for c in legal:
        if c["seat"] == seat:  # starting lets us place first and open the bidding first
            return c

    def weakness(c: Mapping[str, Any]) -> tuple[int, int]:
        p = _player(view, c["seat"])
        return (p["wins"], p["discs"]) if p is not None else (0, 0)

    low = min(weakness(c) for c in legal)
    ties = [c for c in legal if weakness(c) == low]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


# --- the skull model ---------------------------------------------------------------------------


def _player(view: Mapping[str, Any], seat: int) -> Mapping[str, Any] | None:
    for p in view["players"]:
        if p["seat"] == seat:
            return p
    return None


def _stacks(view: Mapping[str, Any]) -> dict[int, tuple[float, int, int]]:
    """For each other seat with face-down discs: (chance its stack holds a skull, stack size,
    flowers already flipped from it this round)."""
    me = view["seat"]
    flipped: dict[int, int] = {}
    for f in view["flipped"]:
        flipped[f["seat"]] = flipped.get(f["seat"], 0) + 1
    bidder = view.get("bidder")
    out: dict[int, tuple[float, int, int]] = {}
    for p in view["players"]:
        s = p["seat"]
        size = p["stack_size"]
        if s == me or p["eliminated"] or not size or p["face_down"] <= 0:
            continue
        out[s] = (_skull_on_stack(p, bidder), size, flipped.get(s, 0))
    return out


def _skull_on_stack(p: Mapping[str, Any], bidder: int | None) -> float:
    known = p["known_skull"]
    discs = max(p["discs"], 1)
    size = p["stack_size"]
    if known is False:
        return 0.0
    # Unknown after unseen losses: a skull survives d random losses from 4 with chance d/4.
    owns = 1.0 if known else min(1.0, discs / DISCS_PER_PLAYER)
    # At least the uniform share size/discs, so certain once everything it owns is down.
    on = min(1.0, max(size / discs, 1.0 - (1.0 - SKULL_PER_DISC) ** size))
    chance = owns * on
    if p["seat"] == bidder:
        chance *= BIDDER_TRUST
    return chance


def _next_risk(chance: float, size: int, done: int) -> float:
    """The chance the next face-down disc of a stack is its skull, given ``done`` flowers
    already turned from its top (skull position uniform on the stack)."""
    left = size - chance * done
    return chance / left if left > 0 else 1.0


def _survival_curve(view: Mapping[str, Any], most: int) -> list[float]:
    """``out[n]``: the best chance of flipping ``n`` more discs of other stacks without a skull,
    for n = 0..most. Each stack's survival is linear in the discs taken (1 - c*j/s), so its log
    is concave and taking the safest next disc each time is optimal."""
    stacks = _stacks(view)
    taken = {s: 0 for s in stacks}
    room = {s: size - done for s, (_, size, done) in stacks.items()}
    out = [1.0]
    chance = 1.0
    for _ in range(most):
        best_seat, best_risk = None, 2.0
        for s, (c, size, done) in stacks.items():
            if taken[s] >= room[s]:
                continue
            r = _next_risk(c, size, done + taken[s])
            if r < best_risk:
                best_seat, best_risk = s, r
        if best_seat is None:
            break
        taken[best_seat] += 1
        chance *= 1.0 - best_risk
        out.append(chance)
    return out
