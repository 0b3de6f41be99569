"""Bot-kit classes as entrants of a local tournament: ``tabletop tournament run --local
--entrants "mypkg.mod:MyBot,heuristic"``.

A kit bot (``tabletop_client.Bot``: ``act(view, legal_commands) -> command``) plays in this
process, from the seat's own view as the service would send it, through the one play-out
driver. Its seat spec ``{"bot": "kit", "path": "mypkg.mod:MyBot"}`` is the local runner's
alone: the service's bot registry and tournament plan never accept it (a bot the service
plays is registered with ``POST /v1/bots``), so the plan is checked with a built-in stand-in
in its place and the kit spec put back after. In the play-out the seat is a player seat whose
commands come from the class, like a client's; a fresh instance plays each game.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shared.app.playout import Played
    from shared.match.record import GameRecord
    from shared.tournaments.plan import Plan

KIT = "kit"


class KitBotError(Exception):
    """A kit bot that cannot play: not loadable, or a command its game refuses."""


def is_kit(spec: Mapping[str, Any] | None) -> bool:
    """Whether ``spec`` seats a kit bot."""
    return spec is not None and spec.get("bot") == KIT


def kit_spec(item: str) -> dict[str, Any] | None:
    """``mypkg.mod:MyBot`` -> ``{"bot": "kit", "path": ...}`` after loading the class once
    (so a typo fails before any game); None when ``item`` is not spelt as a class path (a
    built-in bot's ``ismcts:iterations=200`` is not: its colon is followed by ``key=N``).
    Raises KitBotError when it is a class path that cannot be loaded."""
    from tabletop_client.loader import is_bot_path, load_bot_class

    from shared.app import bots

    text = item.strip()
    if not is_bot_path(text) or text.partition(":")[0] in bots.names():
        return None
    try:
        load_bot_class(text)
    except ValueError as exc:
        raise KitBotError(str(exc)) from None
    return {"bot": KIT, "path": text}


def parse_plan(body: Mapping[str, Any], parse: Callable[..., Plan], **kw: Any) -> Plan:
    """``parse(body, **kw)`` with each kit entrant checked as a built-in stand-in of its name,
    then given back its kit spec (names the plan made unique kept)."""
    entrants = list(body.get("entrants") or [])
    kits = {i: dict(e) for i, e in enumerate(entrants) if isinstance(e, Mapping) and is_kit(e)}
    if not kits:
        return parse(body, **kw)
    stand_ins = [
        {"bot": "random", "name": e.get("name") or e["path"]} if i in kits else e
        for i, e in enumerate(entrants)
    ]
    plan = parse({**body, "entrants": stand_ins}, **kw)
    restored = tuple(
        dataclasses.replace(e, spec={"bot": KIT, "path": kits[i]["path"]}) if i in kits else e
        for i, e in enumerate(plan.entrants)
    )
    return dataclasses.replace(plan, entrants=restored)


def play(
    game: str, specs: Sequence[Mapping[str, Any]], options: Mapping[str, Any], seed: str
) -> Played:
    """One game whose kit seats move by their classes' ``act`` (the others by their bots,
    drawing the same randomness as in any play-out); each kit bot's ``game_over`` hook, if
    any, hears the outcome as a webhook would."""
    from tabletop_client.loader import load_bot

    from shared import games
    from shared.app import playout
    from shared.match.projections import view

    engine: Any = games.get(game)
    players: dict[int, tuple[str, Any]] = {}
    seats: list[dict[str, Any]] = []
    for seat, spec in enumerate(specs):
        if is_kit(spec):
            path = str(spec["path"])
            try:
                players[seat] = (path, load_bot(path))
            except ValueError as exc:
                raise KitBotError(str(exc)) from None
            # A player seat: its commands come from the chooser, as a client's would.
            seats.append({"name": str(spec.get("name") or path)})
        else:
            seats.append(dict(spec))
    listed = engine.TRAITS.lists_all_commands

    def choose(record: GameRecord, seat: int) -> tuple[str, dict[str, Any]] | None:
        if seat not in players:
            return None
        path, bot = players[seat]
        seen = view(record, seat)
        legal = seen.get("legal_commands") or []
        command = bot.act(seen, legal)
        if not isinstance(command, Mapping) or (listed and dict(command) not in legal):
            raise KitBotError(
                f"{path} sent {command!r} at version {record.version}, seat {seat}: "
                "not one of its legal_commands"
            )
        return f"kit-{seat}-{record.version}", dict(command)

    played = playout.play(game, seats, options, seed, chooser=choose, keep_envelopes=False)
    outcome = engine.outcome(played.record.state)
    for seat, (_, bot) in players.items():
        hook = getattr(bot, "game_over", None)
        if callable(hook):
            hook({"type": "game_over", "game_id": played.record.id, "seat": seat,
                  "outcome": outcome})  # fmt: skip
    return played
