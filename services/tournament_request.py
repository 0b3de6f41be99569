"""``tabletop tournament``: the command line read into a tournament request, and the one-line
errors of every part of the command.

``request_body`` turns ``tournament run``'s options into the ``POST /v1/tournaments`` body,
which the service plays as it is and ``--local`` parses into the same plan; every mistake is a
``CliError``: one line on stderr, exit code 2 for a request that cannot work (a bad bot spec,
an option that is no JSON...), 1 when the service fails or refuses.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from services.cli_args import default_api, parse_bot

# Spelled out rather than imported from shared.tournaments.plan so that building the parser
# (every ``tabletop`` command) imports no engine; a unit test keeps the two equal.
FORMATS = ("round_robin", "duplicate", "gauntlet", "sprt")
EXIT_SERVICE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


class CliError(Exception):
    """A failure reported as one line on stderr, with the exit code to return."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())  # one line, whatever the service sent
        self.code = code


def parse_entrants(text: str) -> list[dict[str, Any]]:
    """``ismcts:iterations=200,heuristic`` -> checked bot specs; CliError names the bad one.
    ``mypkg.mod:MyBot`` names a bot-kit class (``services.kit_entrants``: ``--local`` only);
    ``bot_id=<id>`` a bot registered with ``POST /v1/bots`` (the service only)."""
    from services import kit_entrants
    from shared.app import bots

    specs: list[dict[str, Any]] = []
    for n, item in enumerate(text.split(",")):
        if not item.strip():
            raise CliError(f"--entrants: entrants[{n}] is empty (bots are separated by commas)")
        key, sep, bot_id = item.strip().partition("=")
        if key == "bot_id" and sep:  # a registered bot (POST /v1/bots): the service checks it
            if not bot_id.strip():
                raise CliError(f"--entrants: entrants[{n}] {item.strip()!r}: bot_id=<id>")
            specs.append({"bot_id": bot_id.strip()})
            continue
        try:
            kit = kit_entrants.kit_spec(item)
        except kit_entrants.KitBotError as exc:
            raise CliError(f"--entrants: entrants[{n}] {item.strip()!r}: {exc}") from None
        if kit is not None:
            specs.append(kit)
            continue
        try:
            spec = parse_bot(item)
            bots.parse_spec(spec)
        except bots.BotSpecError as exc:
            raise CliError(
                f"--entrants: entrants[{n}] {item.strip()!r}: {exc}; bots: {', '.join(bots.names())}"
            ) from None
        except ValueError as exc:
            raise CliError(f"--entrants: entrants[{n}] {item.strip()!r}: {exc}") from None
        specs.append(spec)
    return specs


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """``["target=1", "first_dealer=0"]`` -> ``{"target": 1, "first_dealer": 0}``."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--option {item!r} is not KEY=JSON")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            raise CliError(
                f"--option {item!r}: the value is not JSON (a string needs quotes: "
                f"{key.strip()}='\"{value}\"')"
            ) from None
    return options


def request_body(args: argparse.Namespace) -> dict[str, Any]:
    """The ``POST /v1/tournaments`` body of the command line (the local plan reads it too)."""
    body: dict[str, Any] = {
        "game": args.game,
        "entrants": parse_entrants(args.entrants),
        "games": args.games,
        "format": args.format,
    }
    if args.players is not None:
        body["players"] = args.players
    # Drawn here, not by the plan or the service (which would keep it to itself), short enough
    # to print and type again: the rule `tabletop simulate` follows too.
    body["seed"] = args.seed if args.seed is not None else secrets.token_hex(8)
    options = parse_options(args.option)
    if options:
        body["options"] = options
    if getattr(args, "candidate", None) is not None:
        body["candidate"] = args.candidate
    if getattr(args, "field", None):
        (body["field"],) = parse_entrants(args.field)
    if getattr(args, "sprt", None):
        body["sprt"] = parse_sprt(args.sprt)
    return body


def parse_sprt(text: str) -> dict[str, float]:
    """``elo0=0,elo1=5`` -> ``{"elo0": 0.0, "elo1": 5.0}`` (the plan checks the keys)."""
    out: dict[str, float] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise CliError(f"--sprt {item!r} is not KEY=NUMBER (elo0, elo1, alpha, beta)")
    return out


def api_url(args: argparse.Namespace) -> str:
    """``--api``, else the shell's default service (``services.cli_args.default_api``),
    checked to be an http(s) URL."""
    api = (args.api or default_api()).rstrip("/")
    if not api.startswith(("http://", "https://")):
        raise CliError(f"--api {api!r} is not an http:// or https:// URL")
    return api


def organizer_key(env: Mapping[str, str] | None = None) -> str | None:
    """``TABLETOP_ORGANIZER_KEY``, else the first of ``TABLETOP_ORGANIZER_KEYS`` (the
    service's own list, so a shell that starts the service can also drive it)."""
    env = os.environ if env is None else env
    if env.get("TABLETOP_ORGANIZER_KEY"):
        return env["TABLETOP_ORGANIZER_KEY"]
    keys = [k.strip() for k in env.get("TABLETOP_ORGANIZER_KEYS", "").split(",") if k.strip()]
    return keys[0] if keys else None


def fields(errors: Any) -> str:
    """`` (field: reason; field: reason)`` from a PlanError's or a problem body's errors."""
    if not errors:
        return ""
    if isinstance(errors, Mapping):
        parts = [
            f"{k or 'request'}: {'; '.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in errors.items()
        ]
    else:
        parts = [str(errors)]
    return " (" + ", ".join(parts) + ")"
