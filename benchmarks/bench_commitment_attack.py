"""The Fox hand-recovery attack on a registered bot's commitment (issue 35), as an opponent
holding only its own seat would run it while the game is on.

A Fox game (one hand) between a registered webhook bot (seat 0) and seat 1, in process on the
memory adapters. At each of the bot's turns where it leads a trick (its legal commands are
then its whole hand), the attacker reads the events as seat 1 does, takes the bot's
``bot_turn.sent_sha256``, and tries every hand consistent with what seat 1 knows (the cards
it has not seen, of the size the bot holds): it builds the turn body the service would send
for that hand (the view it reads of the public facts, with the candidate hand and its legal
commands) and hashes it. On a seat from before nonces (``--plain``: the old commitment) the
true hand is found; on a seat whose turns carry a nonce, nothing can match, since the body's
nonce is an HMAC of the secret seed.

    .venv/bin/python benchmarks/bench_commitment_attack.py           # today's commitment
    .venv/bin/python benchmarks/bench_commitment_attack.py --plain   # the one before
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.app import bot_registration, bot_turns, queries  # noqa: E402
from shared.app.queries import Caller  # noqa: E402
from shared.events import canonical_json  # noqa: E402
from tests.unit.test_registered_bots import (  # noqa: E402
    app_with,
    first_legal,
    play_fox,
    register,
)

SUITS = ("bells", "keys", "moons")


def _card_key(card: dict[str, Any]) -> tuple[int, int]:
    return SUITS.index(card["suit"]), card["rank"]


def attack(plain: bool) -> dict[str, Any]:
    """Play one game and attack every leading turn of the bot; what was found."""
    if plain:
        made = bot_turns.seat_spec

        def old_spec(bot: Any) -> dict[str, Any]:
            spec = made(bot)
            del spec[bot_turns.COMMITMENT]
            return spec

        bot_registration.seat_spec = old_spec  # type: ignore[assignment]
    app, hooks = app_with(first_legal)
    gid = play_fox(app, register(app)["id"])
    # What the bot was sent: the test harness keeps it, the attacker never reads it; it is
    # used only to pick the turns where the bot leads and to build the public part of a view
    # exactly as the attacker's own reading of the public facts would.
    sent = {
        json.loads(b)["turn_id"]: json.loads(b)
        for _, b, _, _ in hooks.sent
        if json.loads(b)["type"] == "turn"
    }
    seen = queries.events(app, gid, Caller(role="player", seat=1))["events"]
    deck = [{"suit": s, "rank": r} for s in SUITS for r in range(1, 12)]
    rows = []
    for env in seen:
        command = env.get("command") or {}
        turn = command.get("bot_turn")
        if not turn or env["seat"] != 0:
            continue
        body = sent[turn["turn_id"]]
        view = body["view"]
        if view["played"] or view["phase"] != "play":
            continue  # only turns where the bot leads: its legal commands are its hand
        own_at_turn = _own_hand_at(app, gid, view["version"])
        known = {json.dumps(c, sort_keys=True) for c in own_at_turn}
        known.add(json.dumps(view["decree"], sort_keys=True))
        for pair in view.get("known_cards") or []:
            known.update(json.dumps(c, sort_keys=True) for c in pair)
        unseen = [c for c in deck if json.dumps(c, sort_keys=True) not in known]
        size = len(view["hand"])
        started = time.perf_counter()
        tried = found = 0
        for combo in itertools.combinations(sorted(unseen, key=_card_key), size):
            hand = list(combo)
            legal = [{"card": c, "type": "play"} for c in hand]
            guess = {**body, "view": {**view, "hand": hand, "legal_commands": legal},
                     "legal_commands": legal}  # fmt: skip
            guess.pop("nonce", None)  # the attacker cannot know it
            tried += 1
            if hashlib.sha256(canonical_json(guess).encode()).hexdigest() == turn["sent_sha256"]:
                found += 1
                assert hand == view["hand"]
        rows.append({
            "version": view["version"], "hand_size": size, "candidates": tried,
            "found": found, "seconds": round(time.perf_counter() - started, 2),
        })  # fmt: skip
    return {"plain": plain, "turns": rows, "game": gid}


def _own_hand_at(app: Any, gid: str, version: int) -> list[dict[str, Any]]:
    """Seat 1's hand at ``version``, as its own view showed it then (the attacker kept it)."""
    from shared.match.projections import view as projected_view
    from shared.match.record import fold

    envs = app.ports.store.read(gid, limit=version)
    return list(projected_view(fold(gid, envs), 1)["hand"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plain", action="store_true", help="a seat from before nonces")
    args = parser.parse_args(argv)
    result = attack(args.plain)
    for row in result["turns"]:
        print(
            f"version {row['version']}: {row['candidates']} candidate hands of "
            f"{row['hand_size']} cards, {row['found']} matched ({row['seconds']} s)"
        )
    total = sum(r["found"] for r in result["turns"])
    kind = "plain hash (before nonces)" if args.plain else "nonce commitment"
    print(f"{kind}: the bot's hand found at {total} of {len(result['turns'])} leading turns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
