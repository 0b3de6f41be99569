"""Golden playthroughs: complete recorded games (seed and commands in; events and final views
out) that the service must replay to the same bytes, so that a change of rules or of the log's
format that alters history shows up in review as a changed file here.

Regenerate (only when such a change is intended): ``python -m tests.golden.golden``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from shared.adapters.memory import FixedClock
from shared.app import commands, creation
from shared.app.messages import CommandMessage
from shared.app.playout import play
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.events import canonical_json

HERE = Path(__file__).resolve().parent
AT = 1_767_225_600.0  # 2026-01-01T00:00:00Z: every envelope's time

# (file, game, seats, options, seed)
GAMES = [
    (
        "fox-one-hand",
        "fox",
        [{"bot": "random"}, {"bot": "heuristic"}],
        {"target": 1},
        "golden-fox-1",
    ),
    ("fox-match", "fox", [{"bot": "heuristic"}, {"bot": "random"}], {"target": 10}, "golden-fox-2"),
    (
        "skull-4",
        "skull",
        [{"bot": "random"}] * 2 + [{"bot": "heuristic"}] * 2,
        {},
        "golden-skull-1",
    ),
    (
        "skull-6-english",
        "skull",
        [{"bot": "random"}] * 6,
        {"next_starter": "english"},
        "golden-skull-2",
    ),
    (
        "skye-3",
        "skye",
        [{"bot": "random"}, {"bot": "heuristic"}, {"bot": "random"}],
        {},
        "golden-skye-1",
    ),
]


def record(game: str, seats: list[dict[str, Any]], options: dict[str, Any], seed: str) -> dict:
    """The input of a golden game: its bots' commands, as the play-out driver decides them."""
    played = play(game, seats, options, seed, clock=FixedClock(AT).now)
    return {
        "game": game,
        "seats": seats,
        "options": options,
        "seed": seed,
        "commands": [
            {"id": cid, "seat": seat, "body": body} for cid, seat, body in played.commands
        ],
    }


def replay(doc: dict[str, Any]) -> dict[str, Any]:
    """The output of a golden game replayed through the service's handlers (creation, then each
    command as the worker decides it): every envelope and every final view, as canonical JSON."""
    app = bootstrap(Settings(), backend="memory", clock=FixedClock(AT))
    created = creation.create_game(app, doc["game"], doc["seats"], doc["options"], seed=doc["seed"])
    gid = created.game_id
    for command in doc["commands"]:
        message = CommandMessage(
            command_id=command["id"], game_id=gid, seat=command["seat"], body=command["body"]
        )
        outcome = commands.decide_command(app, message)
        if outcome["status"] != "accepted":
            raise AssertionError(f"command {command['id']} refused: {outcome}")
    record = app.load(gid)
    views = []
    for seat in [*range(len(doc["seats"])), None]:
        raw = app.ports.read_models.read(gid, seat)
        assert raw is not None
        view = json.loads(raw)
        view.pop("id", None)  # random per replay; not part of history
        views.append(canonical_json(view))
    return {
        "version": record.version,
        "envelopes": [canonical_json(e.to_dict()) for e in app.ports.store.read(gid)],
        "views": views,
    }


def main() -> None:
    """Write every golden file anew from the current code."""
    for name, game, seats, options, seed in GAMES:
        doc = record(game, seats, options, seed)
        doc["expected"] = replay(doc)
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path.name}: {len(doc['commands'])} commands, "
              f"{doc['expected']['version']} events", file=sys.stderr)  # fmt: skip


if __name__ == "__main__":
    main()
