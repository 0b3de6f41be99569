"""States consistent with one seat's view of a Skull game, for search (``determinize``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.rng import Rng
from shared.games.skull.messages import (
    FLIPPING,
    FLOWER,
    FLOWERS_PER_PLAYER,
    PENALTY,
    SKULL,
    SKULLS_PER_PLAYER,
    Player,
    State,
)


def determinize(view: Mapping[str, Any], seat: int, rng: Rng, *, keep_own: bool = True) -> State:
    """A full state consistent with ``view`` (``seat``'s view): ``seat``'s own discs, stack and
    losses as it knows them; other seats' unknown discs dealt at random within what is public
    (disc counts, stack sizes, this round's flipped faces on top of their stacks, at most one
    skull each, and ``known_skull`` from earlier rounds); the blind-pick order shuffled.

    ``keep_own`` false: ``seat``'s own discs dealt too, as a spectator deals anyone's (from the
    public counts alone: its hand, stack and losses are not read), so the deals and the draws
    they make are the same whatever is on its stack.
    """
    phase = view["phase"]
    # Faces flipped this round still bind a seat's stack while flipping; in the penalty its
    # discs are back in hand, and after its loss the challenger may no longer own them.
    flips: dict[int, list[str]] = {}
    for f in view["flipped"]:
        flips.setdefault(f["seat"], []).append(f["disc"])
    players: list[Player] = []
    for info in view["players"]:
        s = info["seat"]
        if s == seat and keep_own:
            hand, stack = view["hand"], tuple(view["stack"])
            flowers = hand[FLOWER] + stack.count(FLOWER)
            skulls = hand[SKULL] + stack.count(SKULL)
            lost = tuple(view["lost"])
        else:
            known = flips.get(s, [])
            if phase not in (FLIPPING, PENALTY) and s == view["challenger"]:
                known = []
            flowers, skulls, stack = _deal_hidden(info, known, phase == FLIPPING, rng)
            lost = (FLOWER,) * (FLOWERS_PER_PLAYER - flowers) + (SKULL,) * (
                SKULLS_PER_PLAYER - skulls
            )
        players.append(
            Player(
                flowers=flowers,
                skulls=skulls,
                stack=stack,
                wins=info["wins"],
                passed=info["passed"],
                lost=lost,
                # A view stored before this field existed lacks it: fall back to "unknown".
                known_skull=info.get("known_skull"),
            )
        )
    shuffled: tuple[str, ...] = ()
    if view["pick_from"]:
        c = players[view["challenger"]]
        shuffled = rng.shuffle((FLOWER,) * c.flowers + (SKULL,) * c.skulls)
    return State(
        seats=len(players),
        next_starter=view["next_starter"],
        players=tuple(players),
        phase=phase,
        round=view["round"],
        starter=view["starter"],
        turn=view["turn"],
        bid=view["bid"],
        bidder=view["bidder"],
        challenger=view["challenger"],
        flipped=tuple((f["seat"], f["disc"]) for f in view["flipped"]),
        skull_owner=view["skull_owner"],
        shuffled=shuffled,
        winners=tuple(view["winners"]),
    )


def _deal_hidden(
    info: Mapping[str, Any], known: list[str], on_stack: bool, rng: Rng
) -> tuple[int, int, tuple[str, ...]]:
    """(flowers, skulls, stack) for another seat: a composition that holds the ``known`` faces
    (flipped this round) and fits ``info``'s counts, and a stack with those faces on top."""
    discs = info["discs"]
    need_skull = SKULL in known
    need_flowers = known.count(FLOWER)
    public = info.get("known_skull")  # None also for a view stored before the field existed
    options = [
        k
        for k in range(SKULLS_PER_PLAYER + 1)
        if 0 <= discs - k <= FLOWERS_PER_PLAYER
        and discs - k >= need_flowers
        and (k >= 1 or not need_skull)
        and (public is None or (k >= 1) == public)
    ]
    skulls = rng.choice(options) if options else min(discs, SKULLS_PER_PLAYER)
    flowers = discs - skulls
    size = info["stack_size"]
    if not size:
        return flowers, skulls, ()
    pool = [FLOWER] * flowers + [SKULL] * skulls
    top: list[str] = []
    if on_stack:
        for face in known:  # flipped first = top of the stack
            pool.remove(face)
            top.append(face)
    rest = list(rng.shuffle(pool))
    bottom = rest[: size - len(top)]
    return flowers, skulls, (*bottom, *reversed(top))
