"""The hand-written ``heuristic`` bot for Skull: a pure function of one seat's view.

Policy, in brief:

* Placing: the first disc is the skull about half the time (a mixed strategy, a little more
  often with fewer flowers left), else a flower; now and then the skull goes on top of one
  flower instead. A skull on top stays on top: the bot opens at the lowest bid, so anyone who
  flips its stack meets the skull first. An all-flower stack grows while a flower is in hand
  (each flower is one more certain flip), always keeping one disc in hand, then opens at the
  highest bid worth making (below).
* Bidding: a bid no higher than its own all-flower stack is certain (the challenger flips its
  own stack first); beyond that it estimates the chance of flipping the rest from the other
  stacks (players known to have lost their skull are safe, a known skull is on a stack with a
  probability that grows with its size, the standing bidder is trusted a little) and bids the
  highest count whose chance clears a bar (low: a failure costs one disc of four, a success is
  half the game; higher for each disc already lost, lower on match point), else passes. With
  its skull down it passes (rarely it raises by one as a bluff while others are still in).
* Flipping: its own stack first (forced), then always the face-down disc least likely to be a
  skull under the same model, so known-skull-free players go before anyone else.
* Penalty: after its own skull it discards a flower while it keeps two or more flowers (the
  skull keeps catching challengers and keeps the others guessing), else the skull; the blind
  pick is uniform. Choosing the starter (English rule): itself when still in (it opens the next
  bidding first), else the player with the fewest win markers, then fewest discs.

Every random draw (bluffs, blind picks, ties) comes from ``rng``; nothing else is read.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

FLOWER = "flower"
SKULL = "skull"
DISCS_PER_PLAYER = 4

# How often the first disc of a round is the skull: a mixed strategy so that an opponent can
# never read our stack from our habits, and often enough that flipping our stack is a real
# risk (against random opponents 0.2 won about 0.28 of 4-player games, 0.55 about 0.52).
# With fewer flowers left a success needs other stacks anyway, so the skull is worth more.
SKULL_FIRST = 0.55
SKULL_FIRST_FEW_FLOWERS = 0.7
# How often a lone flower gets the skull on top (seen first by anyone flipping us).
SKULL_ON_TOP = 0.1
# Per disc placed, the chance we assume an opponent put its skull there: the skull is on a
# stack of ``s`` discs with probability 1 - (1 - p) ** s (at least s / discs, the uniform case).
SKULL_PER_DISC = 0.4
# The standing bidder claims to see flowers: trust it a little.
BIDDER_TRUST = 0.8
# The least chance of success at which we bid beyond our certain count: a failure costs one
# disc of four, a success is half the game, so even a one-in-four shot is worth taking (a bar
# of 0.55 won about 0.37 of 4-player games against random bots, 0.25 about 0.52). On match
# point a success ends the game; each disc already lost raises the bar (elimination looms).
MIN_SUCCESS = 0.25
MIN_SUCCESS_LAST = 0.2
# How often a skull-holder raises by one as a bluff (only with two or more others still in).
BLUFF_RAISE = 0.08
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
        return (
            places[SKULL]
            if rng.random() < (SKULL_FIRST_FEW_FLOWERS if few else SKULL_FIRST)
            else places[FLOWER]
        )
    if SKULL in stack:
        # We must not become the challenger, and we want the skull met early: a skull on top
        # opens at the lowest bid (the others almost never all pass it) rather than be buried.
        # An empty hand would force a bid anyway, so one disc always stays in hand.
        if bids and (stack[-1] == SKULL or hand_size < 2):
            return bids[0]
        if FLOWER in places and hand_size >= 2:
            return places[FLOWER]
        return bids[0] if bids else next(iter(places.values()))
    # An all-flower stack: every flower on it is a certain flip when we challenge.
    if len(stack) == 1 and SKULL in places and hand_size >= 2 and rng.random() < SKULL_ON_TOP:
        return places[SKULL]
    if FLOWER in places and hand_size >= 2:
        return places[FLOWER]
    if not bids:
        return next(iter(places.values()))
    return _best_bid(view, bids) or bids[0]


# --- bidding -----------------------------------------------------------------------------------


def _bid(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    bids = [c for c in legal if c["type"] == "bid"]
    passes = [c for c in legal if c["type"] == "pass"]
    if SKULL in view["stack"]:
        others_in = sum(
            1
            for p in view["players"]
            if p["seat"] != view["seat"] and not p["eliminated"] and not p["passed"]
        )
        # A rare raise with the skull down keeps the others from reading every raise as a
        # flower stack; only while two others can still take the bid off us.
        if others_in >= 2 and len(bids) >= 3 and rng.random() < BLUFF_RAISE:
            return bids[0]
        return passes[0]
    best = _best_bid(view, bids)
    return best if best is not None else passes[0]


def _best_bid(
    view: Mapping[str, Any], bids: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The highest legal bid whose challenge is likely enough to succeed (certain up to our
    own all-flower stack); None when even the lowest is not."""
    if not bids or SKULL in view["stack"]:
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
        chance = 1.0 if extra <= 0 else survival[extra] if extra < len(survival) else 0.0
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
