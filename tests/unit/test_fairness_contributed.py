"""Contributed fairness: a game commits to its seed, waits for every human seat's client seed,
and is dealt from their mix; its audit recomputes the mixed seed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from shared.adapters.memory import FixedClock, MemoryCommandBus
from shared.app import commands, creation, queries
from shared.app.context import App
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.audit import audit
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.events import GENESIS_HASH, chain_hash, event_salt
from shared.games import fox
from shared.games.errors import GameError
from shared.games.rng import Rng
from shared.match import fairness

SEED = "server-seed-of-the-test"


def memory_app() -> App:
    return bootstrap(Settings(), backend="memory", clock=FixedClock(),
                     dispatcher=lambda a: InlineDispatcher().bind(a))  # fmt: skip


def send(app: App, gid: str, seat: int, body: dict[str, Any], cid: str) -> dict[str, Any]:
    outcome = commands.decide_command(
        app, CommandMessage(command_id=cid, game_id=gid, seat=seat, body=body)
    )
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    while queued := bus.take("fox"):  # the bots' moves, as a worker decides them
        for fields in queued:
            commands.decide_command(app, CommandMessage.from_fields(fields))
    return outcome


def contribute(seed: str) -> dict[str, Any]:
    return {"type": fairness.CONTRIBUTE, "client_seed": seed}


def view(app: App, gid: str, seat: int | None) -> dict[str, Any]:
    doc = queries.view(app, gid, seat)
    assert doc is not None
    return doc


def test_the_game_waits_for_every_client_seed_then_deals_from_their_mix() -> None:
    app = memory_app()
    created = creation.create_game(app, "fox", [{"name": "a"}, {"name": "b"}], {"target": 1},
                                   seed=SEED, fairness_mode=fairness.CONTRIBUTED)  # fmt: skip
    gid = created.game_id
    waiting = view(app, gid, 0)
    assert waiting["phase"] == "waiting" and waiting["to_act"] == []
    assert waiting["fairness"] == {"mode": "contributed", "waiting_for": [0, 1],
                                   "client_seeds": [None, None]}  # fmt: skip
    assert waiting["legal_commands"] == [{"type": "contribute_entropy", "client_seed": "template"}]
    # No move before the deal.
    refused = send(app, gid, 0, {"type": "play", "card": {"suit": "bells", "rank": 1}}, "s0-1")
    assert refused["status"] == "rejected" and refused["error"]["code"] == "game/waiting"
    assert send(app, gid, 0, contribute("alpha"), "s0-e")["status"] == "accepted"
    assert view(app, gid, None)["fairness"]["waiting_for"] == [1]
    twice = send(app, gid, 0, contribute("again"), "s0-e2")
    assert twice["status"] == "rejected" and twice["error"]["rule"] == "no_contribution_due"
    bad = send(app, gid, 1, contribute(""), "s1-bad")
    assert bad["status"] == "rejected" and "client_seed" in bad["error"]["errors"]
    assert send(app, gid, 1, contribute("beta"), "s1-e")["status"] == "accepted"
    dealt = view(app, gid, 0)
    assert dealt["phase"] == "play" and len(dealt["hand"]) == 13
    assert dealt["fairness"] == {"mode": "contributed", "waiting_for": [],
                                 "client_seeds": ["alpha", "beta"]}  # fmt: skip
    # The deal is the setup of the mixed seed, not of the server seed alone.
    record = app.load(gid)
    mixed = fairness.mixed_seed(SEED, ["alpha", "beta"])
    state = None
    for e in fox.setup(2, record.options, Rng(mixed, "setup")):
        state = fox.evolve(state, e)
    assert fox.view(state, 0)["hand"] == dealt["hand"]
    alone = None
    for e in fox.setup(2, record.options, Rng(SEED, "setup")):
        alone = fox.evolve(alone, e)
    assert fox.view(alone, 0)["hand"] != dealt["hand"]
    assert created.record.seed_sha256 == record.seed_sha256  # committed before any seed came


def finished_contributed_game() -> tuple[App, str]:
    app = memory_app()
    created = creation.create_game(app, "fox", [{"name": "a"}, {"bot": "random"}], {"target": 1},
                                   seed=SEED, fairness_mode=fairness.CONTRIBUTED)  # fmt: skip
    gid = created.game_id
    assert view(app, gid, None)["fairness"]["waiting_for"] == [0]  # a bot sends no seed
    send(app, gid, 0, contribute("only-human"), "s0-e")
    n = 0
    while view(app, gid, None)["outcome"] is None:
        mine = view(app, gid, 0)
        if 0 in mine["to_act"]:
            n += 1
            assert send(app, gid, 0, mine["legal_commands"][0], f"s0-{n}")["status"] == "accepted"
    return app, gid


def test_an_audit_recomputes_the_mixed_seed_and_catches_a_changed_client_seed() -> None:
    app, gid = finished_contributed_game()
    docs = [e.to_dict() for e in app.ports.store.read(gid)]
    report = audit(gid, docs)
    assert report.status == "passed", report.checks
    assert "play seed" in report.checks["opening draw"]
    # A history in which the player's client seed was another (re-hashed by whoever holds the
    # store, salts and all) deals another game: caught where the deal is.
    forged = copy.deepcopy(docs)
    at = next(i for i, d in enumerate(forged) if d["type"] == "entropy_contributed")
    forged[at]["data"]["client_seed"] = "chosen-by-the-house"
    forged[at]["command"]["client_seed"] = "chosen-by-the-house"
    prev = GENESIS_HASH
    for d in forged:
        d["prev_hash"] = prev
        d["hash"] = prev = chain_hash(
            prev, version=d["version"], type=d["type"], data=d["data"],
            command_id=d["command_id"], seat=d["seat"], at=d["at"],
            salt=event_salt(SEED, d["version"]), command=d.get("command"),
        )  # fmt: skip
    failed = audit(gid, forged)
    assert failed.first_failure is not None
    assert failed.first_failure["check"] == "outcomes recomputed"
    deal = next(d for d in forged if d["type"] == "round_dealt")
    assert failed.first_failure["version"] == deal["version"]  # the deal


def test_the_bots_draw_from_the_mixed_seed() -> None:
    app, gid = finished_contributed_game()
    mixed = fairness.mixed_seed(SEED, ["only-human", None])
    for env in app.ports.store.read(gid):
        if env.command_id and env.command_id.startswith("bot-") and env.command is not None:
            _, seat, version = env.command_id.split("-")
            record_before = app.ports.store.read(gid, limit=int(version))
            from shared.app import bots
            from shared.games.rng import bot_random
            from shared.match.projections import view as project
            from shared.match.record import fold

            doc = project(fold(gid, record_before), int(seat))
            assert (
                bots.play({"bot": "random"}, doc, bot_random(mixed, int(seat), int(version)))
                == env.command
            )
            return
    pytest.fail("no bot move")


def test_contributed_fairness_needs_a_human_seat() -> None:
    with pytest.raises(GameError) as info:
        creation.create_game(memory_app(), "fox", [{"bot": "random"}] * 2,
                             fairness_mode=fairness.CONTRIBUTED)  # fmt: skip
    assert "fairness" in info.value.errors
