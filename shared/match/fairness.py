"""Contributed fairness: shuffles no one can choose.

A game created with ``"fairness": "contributed"`` commits to its server seed (``sha256`` in
``game_created``) and deals nothing until every human seat has sent its own ``client_seed``
(``entropy_contributed`` events). Only then is it dealt, and every draw of the game (the deal,
later deals and shuffles, the bots' choices) comes from the *play seed*::

    play_seed = hex(HMAC-SHA256(key = server_seed,
                                msg = "contributed:" + canonical_json(client_seeds by seat)))

with ``null`` for a bot's seat. The service cannot grind (it committed before it saw the
contributions) and no player can (none sees the server seed before the end). The envelope
salts stay those of the server seed, so the commitment covers the waiting events too. The
audit recomputes the play seed from the revealed server seed and the recorded contributions.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any

from shared.events import canonical_json
from shared.match.aggregate import Match

STANDARD = "standard"
CONTRIBUTED = "contributed"
MODES = (STANDARD, CONTRIBUTED)
CONTRIBUTE = "contribute_entropy"  # the command a seat sends its client seed with
MAX_CLIENT_SEED = 256


def mixed_seed(server_seed: str, client_seeds: Sequence[str | None]) -> str:
    """The play seed of a contributed game (see the module's docstring)."""
    msg = ("contributed:" + canonical_json(list(client_seeds))).encode()
    return hmac.new(server_seed.encode(), msg, hashlib.sha256).hexdigest()


def play_seed(match: Match, server_seed: str) -> str:
    """The seed every draw of the game comes from: the server seed, or for a contributed game
    the mix of it and every contribution."""
    if match.fairness != CONTRIBUTED:
        return server_seed
    return mixed_seed(server_seed, match.contributions)


def waiting_for(match: Match) -> list[int]:
    """Human seats whose contribution a contributed game still waits for (empty otherwise; an
    open seat's player contributes once it joins)."""
    if match.fairness != CONTRIBUTED:
        return []
    return [
        i
        for i, seat in enumerate(match.seats)
        if seat.bot is None
        and not seat.open
        and (i >= len(match.contributions) or match.contributions[i] is None)
    ]


def undealt(match: Match) -> bool:
    """Whether the game waits before its deal: for a player to join an open seat, or for a
    client seed."""
    return bool(match.open_seats) or bool(waiting_for(match))


def play_seed_of_view(view: Mapping[str, Any], server_seed: str) -> str:
    """``play_seed`` from a seat's view (a bot's input): its ``fairness`` lists every client
    seed, which is public."""
    doc = view.get("fairness") or {}
    if doc.get("mode") != CONTRIBUTED:
        return server_seed
    return mixed_seed(server_seed, doc.get("client_seeds") or [])


def view_doc(match: Match) -> dict[str, Any] | None:
    """What views show of a contributed game: the mode, who is still awaited, every client
    seed sent (public: without the server seed they tell nothing). None for a standard game."""
    if match.fairness != CONTRIBUTED:
        return None
    return {
        "mode": CONTRIBUTED,
        "waiting_for": waiting_for(match),
        "client_seeds": list(match.contributions),
    }
