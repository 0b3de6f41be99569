"""Writes docs/fairness_vectors.json: the test vectors of docs/fairness.md, computed by the
service's own code (``shared.games.rng``, ``shared.events`` and the engines), so that the
document cannot drift from what the service does.

    .venv/bin/python docs/make_fairness_vectors.py           # (re)write the file
    .venv/bin/python docs/make_fairness_vectors.py --check   # exit 1 if the file is stale

Integers that may exceed 2**53 (bounds, blocks, the Fox deal's draw) are decimal strings, so
that every JSON reader keeps them exact.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys
from pathlib import Path
from typing import Any

from shared.app.bot_turns import turn_nonce
from shared.events import (
    GENESIS_HASH,
    NewEvent,
    canonical_json,
    chain_hash,
    event_salt,
    seal,
)
from shared.games import fox, skull
from shared.games.rng import BitStream, Rng, bot_choice_index, bot_label, seed_hash
from shared.games.skye import engine as skye
from shared.games.skye.data import LANDSCAPE_IDS, SCORING_TILES

PATH = Path(__file__).with_name("fairness_vectors.json")
SEED = "0123456789abcdef" * 4  # a real seed is 64 hex digits too (secrets.token_hex(32))
AT = "2026-01-01T12:00:00.000Z"
SPACE = 1 << 256


def _blocks(label: str, count: int) -> list[str]:
    """The first ``count`` blocks of a stream as hex (the HMAC tags themselves)."""
    return [
        hmac.new(SEED.encode(), f"{label}:{i}".encode(), hashlib.sha256).hexdigest()
        for i in range(count)
    ]


def _below_sequence() -> dict[str, Any]:
    """One stream, several draws in a row: each ``below`` continues where the last stopped."""
    bounds = [2, 3, 4, 6, 33, 73, 1_000_000, fox._DEAL_CHOICES, 2**64]
    rng = Rng(SEED, "setup")
    draws = [{"n": str(n), "value": str(rng.below(n))} for n in bounds]
    return {"label": "setup", "draws": draws, "blocks_used": rng._counter}


def _rejection() -> dict[str, Any]:
    """A draw whose first block is rejected: with ``n = 2**255 + 1`` about half of all blocks
    are at or above ``(2**256 // n) * n = n``. The first label ``vectors:rejection:<i>`` whose
    block 0 is rejected, with every block the draw read (all but the last rejected)."""
    n = 2**255 + 1
    limit = (SPACE // n) * n
    for i in range(256):
        label = f"vectors:rejection:{i}"
        if int(_blocks(label, 1)[0], 16) >= limit:
            rng = Rng(SEED, label)
            value = rng.below(n)
            used = rng._counter
            return {
                "label": label,
                "n": str(n),
                "limit": str(limit),
                "blocks": [str(int(b, 16)) for b in _blocks(label, used)],
                "value": str(value),
                "blocks_used": used,
            }
    raise AssertionError("no rejected first block in 256 labels")  # probability 2**-256


def _envelopes() -> list[dict[str, Any]]:
    """Two sealed envelopes: the service's own first event (no command) and a command's first
    event (which records the command), with the salts and hashed text spelled out."""
    first = seal(
        [
            NewEvent(
                type="game_created",
                data={
                    "game": "fox",
                    "seats": [{"name": "Žofie"}, {"name": "random bot 1", "bot": "random"}],
                    "options": {"target": 21, "first_dealer": None, "deal": None},
                    "seed_sha256": seed_hash(SEED),
                },
            )
        ],
        after_version=0,
        prev_hash=GENESIS_HASH,
        command_id="create",
        seat=None,
        at=AT,
        seed=SEED,
    )
    second = seal(
        [NewEvent(type="card_played", data={"seat": 0, "card": {"suit": "moons", "rank": 7}})],
        after_version=1,
        prev_hash=first[-1].hash,
        command_id="c-42",
        seat=0,
        at=AT,
        seed=SEED,
        command={"type": "play", "card": {"suit": "moons", "rank": 7}},
    )
    out = []
    for env in [*first, *second]:
        salt = event_salt(SEED, env.version)
        content: dict[str, Any] = {
            "version": env.version,
            "type": env.type,
            "data": env.data,
            "command_id": env.command_id,
            "seat": env.seat,
            "at": env.at,
            "salt": salt,
        }
        if env.command is not None:
            content["command"] = env.command
        text = canonical_json(content)
        # The spelled-out text is this script's; the hash is the service's: they must agree.
        assert hashlib.sha256(f"{env.prev_hash}\n{text}".encode()).hexdigest() == env.hash
        assert (
            chain_hash(
                env.prev_hash,
                version=env.version,
                type=env.type,
                data=env.data,
                command_id=env.command_id,
                seat=env.seat,
                at=env.at,
                salt=salt,
                command=env.command,
            )
            == env.hash
        )
        out.append({"envelope": env.to_dict(), "salt": salt, "hashed_text": text})
    return out


def _fox() -> dict[str, Any]:
    """The opening (label ``setup``: first dealer, then the deal) and a later deal."""
    rng = Rng(SEED, "setup")
    dealer = rng.below(2)
    k = rng.below(fox._DEAL_CHOICES)
    rng = Rng(SEED, "setup")
    rng.below(2)
    arrangement = fox._shuffle(rng)
    opening = [fox.event_to_json(e) for e in fox.setup(2, {}, Rng(SEED, "setup"))]
    assert opening[1] == fox.event_to_json(fox._deal_event(1, dealer, arrangement))
    later_rng = Rng(SEED, "v57")
    later_k = later_rng.below(fox._DEAL_CHOICES)
    later = fox._shuffle(Rng(SEED, "v57"))
    return {
        "deal_choices": str(fox._DEAL_CHOICES),
        "opening": {
            "label": "setup",
            "first_dealer": dealer,
            "k": str(k),
            "arrangement": arrangement,
            "events": opening,
        },
        "later": {
            "label": "v57",
            "round": 2,
            "dealer": 1 - dealer,
            "k": str(later_k),
            "arrangement": later,
            "event": fox.event_to_json(fox._deal_event(2, 1 - dealer, later)),
        },
    }


def _shuffle33() -> dict[str, Any]:
    """``Rng.shuffle`` (Fisher-Yates, 32 draws) of the 33 Fox card codes 0..32."""
    shuffled = list(Rng(SEED, "vectors:shuffle").shuffle(range(fox.CARD_COUNT)))
    return {
        "label": "vectors:shuffle",
        "items": list(range(fox.CARD_COUNT)),
        "shuffled": shuffled,
        "shuffled_cards": [fox.card_json(c) for c in shuffled],
    }


def _skull() -> dict[str, Any]:
    first = [skull.event_to_json(e) for e in skull.setup(4, {}, Rng(SEED, "setup"))]
    shuffles = []
    for label, flowers, skulls in (("v113", 3, 1), ("v154", 2, 1), ("v200", 1, 0)):
        discs = ("flower",) * flowers + ("skull",) * skulls
        order = list(Rng(SEED, label).shuffle(discs))
        shuffles.append({"label": label, "flowers": flowers, "skulls": skulls, "order": order})
    return {"setup": {"label": "setup", "seats": 4, "events": first}, "shuffles": shuffles}


def _skye() -> dict[str, Any]:
    events = [skye.event_to_json(e) for e in skye.setup(3, {}, Rng(SEED, "setup"))]
    started = next(e for e in events if e["type"] == "game_started")
    drawn = next(e for e in events if e["type"] == "tiles_drawn")
    return {
        "landscape_ids": sorted(LANDSCAPE_IDS),
        "scoring_tile_ids": [s.id for s in SCORING_TILES],
        "setup": {
            "label": "setup",
            "seats": 3,
            "scoring_tiles": started["data"]["scoring_tiles"],
            "first_player": started["data"]["first_player"],
            "tiles": drawn["data"]["tiles"],
            "extra": drawn["data"]["extra"],
        },
    }


def _bot() -> dict[str, Any]:
    seat, version = 1, 7
    bounds = [5, 2, 100, 1, 300, 3]
    stream = BitStream(Rng(SEED, bot_label(seat, version)))
    return {
        "label": bot_label(seat, version),
        "draws": [{"n": n, "value": stream.below(n)} for n in bounds],
        "choice_index_of_5": bot_choice_index(SEED, seat, version, 5),
    }


def _contributed() -> dict[str, Any] | None:
    """The play seed of a game of contributed fairness (when the service has that mode)."""
    try:
        from shared.match import fairness
    except ImportError:
        return None
    client_seeds = ["hráč 0 náhoda", None, "c0ffee"]
    return {
        "server_seed": SEED,
        "client_seeds": client_seeds,
        "message": "contributed:" + canonical_json(client_seeds),
        "play_seed": fairness.mixed_seed(SEED, client_seeds),
    }


def build() -> dict[str, Any]:
    """Every vector, from the code as it is now."""
    doc: dict[str, Any] = {
        "about": "Test vectors of docs/fairness.md, written by docs/make_fairness_vectors.py "
        "from the service's code. Integers that may exceed 2**53 are decimal strings; Fox "
        "cards are int codes (suit index * 11 + rank - 1, suits bells, keys, moons) unless "
        "spelled {suit, rank}.",
        "seed": SEED,
        "seed_sha256": seed_hash(SEED),
        "hmac": [
            {
                "key": k,
                "msg": m,
                "hex": hmac.new(k.encode(), m.encode(), hashlib.sha256).hexdigest(),
            }
            for k, m in ((SEED, "setup:0"), ("", "setup:0"), ("k" * 100, "v17:3"))
        ],
        "blocks": {"setup": _blocks("setup", 3), "v17": _blocks("v17", 2)},
        "below": _below_sequence(),
        "rejection": _rejection(),
        "choice": {
            "label": "vectors:choice",
            "items": ["a", "b", "c", "d", "e"],
            "picks": [],
        },
        "shuffle": _shuffle33(),
        "fox": _fox(),
        "skull": _skull(),
        "skye": _skye(),
        "bot": _bot(),
        "salts": [{"version": v, "salt": event_salt(SEED, v)} for v in (1, 2, 1000)],
        "turn_nonces": [
            {"turn_id": t, "nonce": turn_nonce(SEED, t)}
            for t in ("0f1e2d3c4b5a6978-0-3", "0f1e2d3c4b5a6978-3-1000")
        ],
        "canonical_json": [
            {"value": value, "text": canonical_json(value)}
            for value in (
                {"b": 1, "a": [True, False, None], "A": {}, "é": "z", "z": -17},
                {"s": 'quote " backslash \\ newline \n tab \t bell \u0007 del \u007f'},
                {"s": "Příliš žluťoučký kůň 🦊 漢字", "n": [0, 9007199254740991, -1]},
            )
        ],
        "envelopes": _envelopes(),
    }
    rng = Rng(SEED, "vectors:choice")
    doc["choice"]["picks"] = [rng.choice(doc["choice"]["items"]) for _ in range(6)]
    contributed = _contributed()
    if contributed is not None:
        doc["contributed"] = contributed
    return doc


def render(doc: dict[str, Any]) -> str:
    """The file's text: indented, UTF-8 as is, one trailing newline."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the vectors, or with ``--check`` compare them with the file."""
    parser = argparse.ArgumentParser(description="Write docs/fairness_vectors.json.")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        current = PATH.read_text(encoding="utf-8") if PATH.exists() else ""
        if current != text:
            print(f"{PATH} is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{PATH} is up to date")
        return 0
    PATH.write_text(text, encoding="utf-8")
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
