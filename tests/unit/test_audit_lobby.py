"""A lobby game (open seats, dealt when the last seat is joined) audits like any other: the
service deals it with the last join's command, not at its creation, and the audit expects the
opening the service really draws (issue 23, item 4a). Played through the handlers on the
in-memory adapters, as the gateway's join endpoint and a worker would."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from shared.adapters.memory import FixedClock
from shared.app import commands, creation, queries, service_commands
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.events import GENESIS_HASH, chain_hash, event_salt
from tests.unit.test_handlers import drain

CLOCK = {"turn_seconds": 60, "on_timeout": "bot"}


def memory_app() -> App:
    return bootstrap(Settings(), backend="memory", clock=FixedClock(),
                     dispatcher=lambda a: InlineDispatcher().bind(a))  # fmt: skip


def send(app: App, game: str, gid: str, seat: int, body: dict[str, Any], cid: str) -> None:
    commands.submit_command(
        app, CommandMessage(command_id=cid, game_id=gid, seat=seat, body=body), game
    )
    outcomes = drain(app, game)
    assert outcomes and outcomes[0]["status"] == "accepted", outcomes


def join(app: App, game: str, gid: str, seat: int, name: str) -> None:
    """What ``POST /v1/games/{id}/seats/{seat}/join`` sends for the player it gives a token."""
    token = hashlib.sha256(f"token of {name}".encode()).hexdigest()
    send(app, game, gid, seat, {"type": service_commands.Join.TYPE, "name": name, "token_sha256": token},
         f"join-{seat}-{name}")  # fmt: skip


def play_out(app: App, game: str, gid: str) -> list[dict[str, Any]]:
    """Every human seat sends its first legal command until the game is over; the export."""
    for n in range(2000):
        public = queries.view(app, gid, None)
        assert public is not None
        if public["outcome"] is not None:
            return [e.to_dict() for e in app.ports.store.read(gid)]
        if not public["to_act"]:
            drain(app, game)  # a bot's turn
            continue
        seat = public["to_act"][0]
        mine = queries.view(app, gid, seat)
        assert mine is not None and mine["legal_commands"], mine
        send(app, game, gid, seat, mine["legal_commands"][0], f"s{seat}-{n}")
    raise AssertionError("the game did not end")


@pytest.mark.parametrize(
    ("game", "specs", "options", "clock"),
    [
        ("fox", [{"name": "host"}, {"open": True}], {"target": 1}, None),
        ("fox", [{"open": True}, {"open": True}], {"target": 1}, CLOCK),
        ("skull", [{"open": True}, {"bot": "random"}, {"open": True}], {}, None),
    ],
    ids=["fox one open seat", "fox all open with a clock", "skull open seats and a bot"],
)
def test_a_joined_lobby_game_passes_its_audit(
    game: str, specs: list[dict[str, Any]], options: dict[str, Any], clock: Any
) -> None:
    app = memory_app()
    gid = creation.create_game(app, game, specs, options, seed=f"lobby-{game}",
                               clock_spec=clock).game_id  # fmt: skip
    for seat, spec in enumerate(specs):
        if spec.get("open"):
            join(app, game, gid, seat, f"p{seat}")
    docs = play_out(app, game, gid)
    report = audit(gid, docs)
    assert report.status == "passed", report.checks
    assert "dealt by the last join" in report.checks["opening draw"], report.checks
    live = queries.audit_report(app, gid, queries.Caller(queries.SPECTATOR))
    assert live["status"] == "passed", live


def test_a_lobby_game_joined_left_and_joined_again_passes_its_audit() -> None:
    app = memory_app()
    gid = creation.create_game(app, "fox", [{"open": True}, {"open": True}], {"target": 1},
                               seed="lobby-leave").game_id  # fmt: skip
    join(app, "fox", gid, 1, "first")
    send(app, "fox", gid, 1, {"type": service_commands.Leave.TYPE}, "leave-1")
    join(app, "fox", gid, 1, "second")
    join(app, "fox", gid, 0, "third")
    assert audit(gid, play_out(app, "fox", gid)).status == "passed"


def test_a_lobby_deal_changed_by_the_store_holder_is_caught_at_its_version() -> None:
    app = memory_app()
    gid = creation.create_game(app, "fox", [{"name": "host"}, {"open": True}], {"target": 1},
                               seed="lobby-forged").game_id  # fmt: skip
    join(app, "fox", gid, 1, "guest")
    forged = copy.deepcopy(play_out(app, "fox", gid))
    at = next(i for i, d in enumerate(forged) if d["type"] == "round_dealt")
    deal = forged[at]["data"]
    deal["hands"][0][0], deal["decree"] = deal["decree"], deal["hands"][0][0]
    seed, prev = forged[-1]["data"]["seed"], GENESIS_HASH
    for d in forged:  # re-sealed with the seed, as the holder of the store can
        d["prev_hash"] = prev
        d["hash"] = prev = chain_hash(
            prev, version=d["version"], type=d["type"], data=d["data"],
            command_id=d["command_id"], seat=d["seat"], at=d["at"],
            salt=event_salt(seed, d["version"]), command=d.get("command"),
        )  # fmt: skip
    report = audit(gid, forged)
    assert report.first_failure is not None, report.checks
    assert report.first_failure["version"] == forged[at]["version"], report.first_failure
    # And a lobby game cannot pretend to have been dealt at its creation.
    early = copy.deepcopy(forged[:1]) + copy.deepcopy(forged[at : at + 1])
    early[1]["version"], early[1]["command_id"], early[1]["seat"] = 2, "create", None
    early[1]["command"] = None
    prev = GENESIS_HASH
    for d in early:
        d["prev_hash"] = prev
        d["hash"] = prev = chain_hash(
            prev, version=d["version"], type=d["type"], data=d["data"],
            command_id=d["command_id"], seat=d["seat"], at=d["at"],
            salt=event_salt(seed, d["version"]), command=d.get("command"),
        )  # fmt: skip
    caught = audit(gid, early, seed=seed)
    assert caught.first_failure is not None
    assert caught.first_failure["check"] == "opening draw" and caught.first_failure["version"] == 2
