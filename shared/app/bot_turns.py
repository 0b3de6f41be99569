"""A registered bot's turn, as pure functions both the service and the audit use: its key
derived from the server secret, the signed body it is sent, its ``on_failure`` fallback, and
(for the audit) why a recorded move is not what the service may have played.

**Keys.** A bot's key is ``tbk_`` + hex ``HMAC-SHA256(server secret, "bot-key:" + bot id)``.
The service keeps only its SHA-256 (to authenticate ``DELETE /v1/bots/{id}``), yet signs each
turn with the key itself: it derives the key again from the server secret whenever it signs.
So a copy of the bot records alone gives no key away, and no key is stored in any form that
can be read back; whoever holds the server secret (``TABLETOP_BOT_SECRET``; without it, one
the service makes once and keeps in the file ``<data dir>/bot-secret``, mode 0600, never in
Redis: ``RedisBotRegistry``) can derive every key, which signing needs anyway. So a copy of
Redis (an RDB or AOF file, a replica, a backup) derives no key; a new secret changes every
key (``tabletop bots rotate-secret`` issues them again).

**A turn.** For each decision the seat's bot is sent the canonical JSON (``canonical_json``,
docs/fairness.md) of ``{"type": "turn", "turn_id", "bot_id", "game", "game_id", "seat",
"version", "view", "legal_commands", "budget_ms", "nonce"}``, ``view`` being exactly the seat's
view at ``version`` (its stored projection), ``nonce`` the turn's secret (``turn_nonce``: an
HMAC of the game's secret seed, so no one can compute it before the seed is revealed), signed ``Tabletop-Signature: sha256=<hex HMAC-SHA256 of
the body keyed with the key>``. It answers 200 ``{"command": {...}}`` within ``budget_ms``.
Anything else — a timeout, a malformed or illegal command, another status (a redirect too: it
is never followed), an answer over 64 KiB, an unreachable bot — is a failure, and the seat
plays its ``on_failure`` policy: ``random`` (the random bot, drawing from ``bot_random`` of
the game's secret seed, as a built-in random bot would) or ``forfeit`` (it resigns). The
command submitted records ``bot_turn``: ``{"turn_id", "sent_sha256", "latency_ms",
"failure"}``, hashed into the log with it, so an audit rebuilds the body from the seat's view
and checks what the bot was sent, and a bot keeping the bodies it got can prove what it saw.

**The commitment hides.** ``sent_sha256`` is read by every seat and spectator while the game
runs. A plain hash of a body that holds the seat's hidden view could be tested against every
view consistent with the public record (a 13-card hand of a two-player card game is one of some 27,000): the nonce,
256 secret bits in the body, makes such guesses worthless until the seed is revealed, when the
hand is public anyway. Seats created before the nonce (their spec has no ``commitment``) were
sent bodies without one; the audit checks those as they were and says their commitment did not
hide. Other seats read a bot's turn without ``latency_ms`` and ``failure`` (how long it thought
and whether it failed can depend on its hand) until the export, once the game is over.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from shared import games
from shared.app import bots
from shared.app.ports import RegisteredBot
from shared.events import canonical_json
from shared.games import errors as rules
from shared.games.errors import GameError
from shared.games.rng import bot_random

REGISTERED = bots.REGISTERED
BOT_TURN = bots.BOT_TURN
WEBHOOK, CONNECTED = "webhook", "connected"
# ``service``: the turn's budget was spent by the service, not the bot (``ports.SERVICE_FAILURE``)
FAILURES = ("timeout", "illegal", "error", "unreachable", "service")
KEY_PREFIX = "tbk_"
# A seat spec's ``commitment``: its turns' bodies carry a ``nonce`` (absent: a seat from before).
COMMITMENT = "commitment"
NONCE_COMMITMENT = "nonce"

SIGNATURE_HEADER = "Tabletop-Signature"


def bot_key(secret: str, bot_id: str) -> str:
    """The bot's key, derived from the server secret (never stored)."""
    digest = hmac.new(secret.encode(), f"bot-key:{bot_id}".encode(), hashlib.sha256)
    return KEY_PREFIX + digest.hexdigest()


def key_hash(key: str) -> str:
    """What is stored of a key."""
    return hashlib.sha256(key.encode()).hexdigest()


def signature(key: str, body: bytes) -> str:
    """The ``Tabletop-Signature`` header's value for ``body``."""
    return "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def seat_spec(bot: RegisteredBot) -> dict[str, Any]:
    """What a seat records of its registered bot (in ``game_created``, so hashed): all an
    audit needs to rebuild the bodies it was sent."""
    return {
        "bot_id": bot.bot_id,
        "transport": bot.transport,
        "budget_ms": bot.budget_ms,
        "on_failure": bot.on_failure,
        COMMITMENT: NONCE_COMMITMENT,
    }


# ---- a turn -------------------------------------------------------------------------------------


def turn_id(game_id: str, seat: int, version: int) -> str:
    """A turn's id: one per seat and version (a repeated wake is the same turn)."""
    return f"{game_id}-{seat}-{version}"


def turn_nonce(seed: str, turn: str) -> str:
    """A turn's nonce: ``hex(HMAC-SHA256(key=utf8(seed), msg=utf8("bot-turn:" + turn_id)))``
    of the game's (server) secret seed, so it is secret until the seed is revealed and then
    anyone recomputes it."""
    return hmac.new(seed.encode(), f"bot-turn:{turn}".encode(), hashlib.sha256).hexdigest()


def hides(spec: Mapping[str, Any]) -> bool:
    """Whether the seat's turns carry a nonce (its commitments hide what they commit to)."""
    return spec.get(COMMITMENT) == NONCE_COMMITMENT


def turn_body(
    *,
    turn: str,
    spec: Mapping[str, Any],
    game_id: str,
    seat: int,
    view: Mapping[str, Any],
    seed: str | None,
) -> bytes:
    """The exact bytes a bot is sent for a turn (its audit rebuilds them from the log).
    ``seed``: the game's secret seed, which draws the nonce of a seat whose spec says so (a
    seat from before nonces is sent none; ``seed`` may then be None)."""
    doc: dict[str, Any] = {
        "type": "turn",
        "turn_id": turn,
        "bot_id": spec["bot_id"],
        "game": view["game"],
        "game_id": game_id,
        "seat": seat,
        "version": view["version"],
        "view": view,
        "legal_commands": view.get("legal_commands", []),
        "budget_ms": spec["budget_ms"],
    }
    if hides(spec):
        if seed is None:
            raise ValueError("a hiding turn's nonce needs the game's seed")
        doc["nonce"] = turn_nonce(seed, turn)
    return canonical_json(doc).encode()


def fallback(
    spec: Mapping[str, Any], view: Mapping[str, Any], play_seed: str, seat: int, version: int
) -> dict[str, Any]:
    """The seat's ``on_failure`` command: the random bot's (``bot_random`` of the play seed,
    as a built-in random bot draws) or a resignation."""
    if spec.get("on_failure") == "forfeit":
        return {"type": "resign"}
    command = bots.random_bot(view, bot_random(play_seed, seat, version))
    if command is None:
        raise GameError(rules.NOT_YOUR_TURN, f"seat {seat} has nothing to do")
    return dict(command)


def listed_command(view: Mapping[str, Any], seat: int, command: Any) -> dict[str, Any] | None:
    """``command`` as the engine spells it when ``view`` lists it among the seat's legal
    commands, the seat alone being to act in a game whose ``legal_commands`` list every
    command: the view's version fixes the state, and that list is the engine's own for it,
    so the game need not be loaded to check it (the command is submitted pinned to that
    version: if the game moved on since, the worker refuses it). None when the list cannot
    tell (the full check, ``check_command``, decides)."""
    if not isinstance(command, dict) or view.get("to_act") != [seat]:
        return None
    engine = games.get(str(view["game"]))
    if not engine.TRAITS.lists_all_commands:
        return None
    try:
        spelled: dict[str, Any] = engine.command_to_json(engine.parse_command(command))
    except Exception:  # a bot's untrusted command: any failure to read it is the full check's
        return None
    # Compared as canonical JSON: the view went through JSON (a tuple came back a list), and
    # a template (a fairness contribution's client seed) is no command to match.
    wanted = canonical_json(spelled)
    for listed in view.get("legal_commands") or ():
        if "template" not in listed.values() and canonical_json(listed) == wanted:
            return spelled
    return None


def turn_fault(
    view: Mapping[str, Any],
    spec: Mapping[str, Any],
    game_id: str,
    seat: int,
    at: int,
    recorded: Mapping[str, Any],
    play_seed: str,
    seed: str,
) -> str | None:
    """Why a registered bot's move recorded at the version after ``at`` is not what the
    service may have played (None: it is). ``view`` is the seat's view at ``at`` recomputed
    from the log, ``recorded`` the command with its ``bot_turn``, ``seed`` the game's server
    seed (the nonce's). The body is rebuilt and its hash must be ``sent_sha256`` (the bot was
    sent that seat's view and nothing else); a failure's move must be its ``on_failure``
    policy's (the random bot's is re-drawn)."""
    turn = recorded.get(BOT_TURN)
    if not isinstance(turn, Mapping) or set(turn) != {
        "turn_id", "sent_sha256", "latency_ms", "failure"
    }:  # fmt: skip
        return f"a registered bot's move without its {BOT_TURN}"
    failure = turn["failure"]
    if failure is not None and failure not in FAILURES:
        return f"a registered bot's move with an unknown failure {failure!r}"
    body = turn_body(
        turn=str(turn["turn_id"]), spec=spec, game_id=game_id, seat=seat, view=view, seed=seed
    )
    if hashlib.sha256(body).hexdigest() != turn["sent_sha256"]:
        return "its sent_sha256 is not the hash of the turn rebuilt from the seat's view"
    if failure is None:
        return None  # the bot's own command: the rules check it ("commands legal")
    move = {k: v for k, v in recorded.items() if k != BOT_TURN}
    try:
        expected = fallback(spec, view, play_seed, seat, at)
    except GameError as exc:
        return f"its on_failure move cannot be replayed ({exc})"
    engine = games.get(str(view["game"]))
    if spec.get("on_failure") == "forfeit":
        return None if move == expected else "a forfeit's move that is not a resignation"
    try:
        again = json.loads(json.dumps(engine.command_to_json(engine.parse_command(expected))))
    except GameError:
        return "its fallback cannot be replayed"
    same = again == json.loads(json.dumps(move))
    return None if same else "its fallback is not what the random bot plays from that view"
