"""The audit re-decides every command: forged logs that are consistently re-hashed are still
caught, at the right version — a later Fox deal, a Woodcutter draw, a Skull blind pick, a Skye
bag draw, an inserted illegal command, a dropped command; and an export replays to the live
game's digest."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from shared.adapters.memory import FixedClock, MemoryCommandBus
from shared.app import commands, creation
from shared.app.dispatch import InlineDispatcher
from shared.app.messages import CommandMessage
from shared.app.playout import play
from shared.audit import CHECKS, audit, state_digest
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.events import GENESIS_HASH, chain_hash, event_salt


def log(game: str, seats: int, options: dict[str, Any], seed: str) -> list[dict[str, Any]]:
    """A finished bot game's envelopes as an auditor reads them."""
    played = play(game, [{"bot": "random"}] * seats, options, seed)
    return [e.to_dict() for e in played.envelopes]


def rehash(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a forger holding the store (and so the seed) does after editing: renumber and
    re-chain, salts and all."""
    seed = docs[-1]["data"]["seed"]
    prev = GENESIS_HASH
    for version, e in enumerate(docs, start=1):
        e["version"] = version
        e["prev_hash"] = prev
        e["hash"] = prev = chain_hash(
            prev,
            version=version,
            type=e["type"],
            data=e["data"],
            command_id=e["command_id"],
            seat=e["seat"],
            at=e["at"],
            salt=event_salt(seed, version),
            command=e.get("command"),
        )
    return docs


def caught(docs: list[dict[str, Any]], check: str, version: int) -> None:
    report = audit("forged", docs)
    assert report.status == "failed", report.checks
    assert report.first_failure is not None
    assert (report.first_failure["check"], report.first_failure["version"]) == (check, version), (
        report.first_failure
    )


@pytest.mark.parametrize(
    ("game", "seats", "options"), [("fox", 2, {"target": 10}), ("skull", 4, {}), ("skye", 3, {})]
)
def test_an_honest_log_passes_every_check(game: str, seats: int, options: dict) -> None:
    report = audit("g", log(game, seats, options, f"honest-{game}"))
    assert report.status == "passed", report.checks
    assert set(report.checks) == set(CHECKS) - {"complete"}
    assert report.commands > 10 and report.digest


def test_a_changed_later_fox_deal_is_caught_at_its_version() -> None:
    docs = log("fox", 2, {"target": 10}, "forge-deal")
    at = next(
        i for i, e in enumerate(docs) if e["type"] == "round_dealt" and e["command_id"] != "create"
    )
    deal = docs[at]["data"]
    # Stack the deck: seat 0 gets the decree card, the decree one of its cards.
    deal["hands"][0][0], deal["decree"] = deal["decree"], deal["hands"][0][0]
    caught(rehash(docs), "outcomes recomputed", docs[at]["version"])


def test_a_changed_woodcutter_draw_is_caught() -> None:
    for k in range(20):
        docs = log("fox", 2, {"target": 5}, f"forge-wood-{k}")
        drawn = [i for i, e in enumerate(docs) if e["type"] == "card_drawn"]
        if drawn:
            break
    at = drawn[0]
    card = docs[at]["data"]["card"]
    docs[at]["data"]["card"] = {**card, "rank": card["rank"] % 11 + 1}
    caught(rehash(docs), "outcomes recomputed", docs[at]["version"])


def test_a_changed_skull_blind_pick_is_caught() -> None:
    for k in range(40):
        docs = log("skull", 3, {}, f"forge-pick-{k}")
        picks = [i for i, e in enumerate(docs) if e["type"] == "disc_lost"
                 and e["data"].get("index") is not None]  # fmt: skip
        if picks:
            break
    at = picks[0]
    lost = docs[at]["data"]
    lost["disc"] = "flower" if lost["disc"] == "skull" else "skull"
    caught(rehash(docs), "outcomes recomputed", docs[at]["version"])


def test_a_changed_skye_bag_draw_is_caught() -> None:
    docs = log("skye", 3, {}, "forge-bag")
    at = [
        i for i, e in enumerate(docs) if e["type"] == "tiles_drawn" and e["command_id"] != "create"
    ][0]
    tiles = docs[at]["data"]["tiles"]
    tiles[0][0], tiles[1][0] = tiles[1][0], tiles[0][0]
    caught(rehash(docs), "outcomes recomputed", docs[at]["version"])


def test_an_inserted_illegal_command_is_caught() -> None:
    docs = log("fox", 2, {"target": 1}, "forge-insert")
    # A copy of a later play, inserted before the first move: not a card the seat may play
    # then (or not its turn).
    first = next(i for i, e in enumerate(docs) if e.get("command"))
    later = next(i for i, e in enumerate(docs) if i > first + 4 and e.get("command")
                 and e["type"] == "card_played")  # fmt: skip
    forged = copy.deepcopy(docs[later])
    forged["command_id"] = "forged-1"
    docs.insert(first, forged)
    caught(rehash(docs), "commands legal", first + 1)


def test_a_dropped_command_is_caught() -> None:
    docs = log("skull", 4, {}, "forge-drop")
    starts = [i for i, e in enumerate(docs) if e.get("command")]
    drop = starts[3]
    end = starts[4]
    del docs[drop:end]
    report = audit("forged", rehash(docs))
    assert report.status == "failed"
    assert report.first_failure["version"] == drop + 1  # type: ignore[index]
    assert report.first_failure["check"] in ("commands legal", "outcomes recomputed")  # type: ignore[index]


def test_a_running_game_waits_for_the_seed_unless_it_is_given() -> None:
    played = play("fox", [{"bot": "random"}] * 2, {"target": 1}, "running")
    docs = [e.to_dict() for e in played.envelopes]
    cut = [i for i, e in enumerate(docs) if e.get("command")][-5]
    docs = docs[:cut]  # five commands before the end: no seed revealed
    report = audit("g", docs)
    assert report.status == "incomplete"
    assert set(report.waiting) == {"hash chain", "seed commitment", "opening draw",
                                   "commands legal", "outcomes recomputed",
                                   "bot moves"}  # fmt: skip
    full = audit("g", docs, seed="running")
    assert full.status == "passed", full.checks
    assert audit("g", docs, seed="wrong").status == "failed"


def test_a_log_that_stops_before_the_head_fails() -> None:
    docs = log("fox", 2, {"target": 1}, "short")
    report = audit("g", docs[:20], head_version=len(docs))
    assert report.first_failure == {
        "check": "complete",
        "version": 21,
        "reason": f"the log ends at version 20, before the head version {len(docs)}",
    }


@pytest.mark.parametrize(("game", "seats"), [("fox", 2), ("skull", 3), ("skye", 2)])
def test_an_export_replays_to_the_live_games_digest(game: str, seats: int) -> None:
    app = bootstrap(Settings(), backend="memory", clock=FixedClock(),
                    dispatcher=lambda a: InlineDispatcher().bind(a))  # fmt: skip
    options = {"target": 1} if game == "fox" else {}
    created = creation.create_game(app, game, [{"bot": "random"}] * seats, options)
    bus = app.ports.bus
    assert isinstance(bus, MemoryCommandBus)
    while queued := bus.take(game):
        for fields in queued:
            commands.decide_command(app, CommandMessage.from_fields(fields))
    live = app.load(created.game_id)
    export = [e.to_dict() for e in app.ports.store.read(created.game_id)]
    report = audit("exported-copy", export)
    assert report.status == "passed", report.checks
    assert report.digest == state_digest(live)
