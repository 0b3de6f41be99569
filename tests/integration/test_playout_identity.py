"""One play-out driver: a game played in process and the same commands sent through the
service (same seed, same command ids, same clock) give byte-identical event logs; and no seat
reads another seat's secret through a recorded command."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
import redis

from services.worker.consumer import StreamConsumer
from shared.adapters.memory import FixedClock
from shared.app import commands, creation
from shared.app.messages import CommandMessage
from shared.app.playout import play
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.events import Envelope, canonical_json
from shared.games import skull
from shared.match.projections import visible_events

GAMES = [("fox", 2, {"target": 1}), ("skull", 3, {}), ("skye", 2, {})]


class TickingClock(FixedClock):
    """Each reading 1 ms later, for both sides alike."""

    def now(self) -> str:
        text = super().now()
        self.advance(0.001)
        return text


def _log(envs: list[Any]) -> list[str]:
    return [canonical_json(e.to_dict()) for e in envs]


def _entry(env: Envelope) -> bytes:
    """What the store keeps for ``env`` by its definition: its dict but ``prev_hash``."""
    doc = env.to_dict()
    del doc["prev_hash"]
    return orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS)


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
def test_in_process_and_through_the_service_give_the_same_bytes(
    redis_client: redis.Redis, game: str, seats: int, options: dict[str, Any]
) -> None:
    seed = f"identity-{game}"
    local_clock = TickingClock()
    # Bot seats (no fresh tokens to tell the logs apart); the service's own bots stay idle
    # (no dispatcher) and the driver's commands are sent for them, with the same ids.
    played = play(game, [{"bot": "random"}] * seats, options, seed, clock=local_clock.now)
    assert played.record.engine.outcome(played.record.state) is not None

    service_clock = TickingClock()
    app = bootstrap(Settings(), client=redis_client, clock=service_clock)
    created = creation.create_game(app, game, [{"bot": "random"}] * seats, options, seed=seed)
    worker = StreamConsumer(redis_client, app, game, name="w")
    worker.ensure_groups()
    for cid, seat, body in played.commands:
        commands.submit_command(
            app, CommandMessage(command_id=cid, game_id=created.game_id, seat=seat, body=body), game
        )
        assert worker.poll_once(block_ms=1000) == 1
    through_service = app.ports.store.read(created.game_id)
    assert through_service[-1].type == "seed_revealed"
    assert _log(played.envelopes) == _log(through_service)


def test_no_seat_reads_another_seats_secret_in_a_recorded_command() -> None:
    for seed in range(3):
        played = play("skull", [{"bot": "random"}] * 4, {}, f"secret-{seed}")
        engine = played.record.engine
        placed = [e for e in played.envelopes if e.command and e.command["type"] == "place"]
        assert placed and all("disc" in e.command for e in placed)
        for reader in (None, 0, 1, 2, 3):
            for doc in visible_events(engine, played.envelopes, reader):
                command = doc.get("command")
                if command is None or doc["seat"] == reader:
                    continue
                for secret in engine.TRAITS.secret_command_fields.get(command["type"], ()):
                    assert secret not in command, (reader, doc)
                if command["type"] in ("place", "discard"):
                    assert command.get("redacted") is True
            own = [
                d["command"]
                for d in visible_events(engine, played.envelopes, reader)
                if d.get("command") and d["seat"] == reader and d["command"]["type"] == "place"
            ]
            if reader is not None:
                assert own and all(c["disc"] in skull.DISCS for c in own)


@pytest.mark.parametrize(("game", "secret_type"), [("fox", "return_card"), ("skye", "set_prices")])
def test_secret_commands_of_fox_and_skye_reach_only_their_sender(
    game: str, secret_type: str
) -> None:
    seats = 2
    found = 0
    for seed in range(6):
        played = play(
            game,
            [{"bot": "random"}] * seats,
            {"target": 7} if game == "fox" else {},
            f"s-{game}-{seed}",
        )
        engine = played.record.engine
        for reader in (None, 0, 1):
            for doc in visible_events(engine, played.envelopes, reader):
                command = doc.get("command")
                if not command or command["type"] != secret_type:
                    continue
                found += 1
                fields = engine.TRAITS.secret_command_fields[secret_type]
                if doc["seat"] == reader:
                    assert all(f in command for f in fields)
                else:
                    assert not any(f in command for f in fields), json.dumps(doc)
    assert found > 0


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
def test_the_fast_path_plays_the_same_game(game: str, seats: int, options: dict[str, Any]) -> None:
    for i in range(3):
        full = play(game, [{"bot": "random"}] * seats, options, f"fast-{i}")
        fast = play(game, [{"bot": "random"}] * seats, options, f"fast-{i}", keep_envelopes=False)
        assert fast.record.state == full.record.state
        assert (fast.record.version, fast.actions) == (full.record.version, full.actions)
        assert fast.record.version == full.envelopes[-1].version


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
def test_the_sealed_path_writes_the_general_loops_log(
    game: str, seats: int, options: dict[str, Any]
) -> None:
    # Without a chooser or an observer ``play`` seals through a ChainWriter from JSON kept
    # per event; an observer that does nothing sends it through the general loop instead.
    specs = [{"bot": "heuristic"}, *[{"bot": "random"}] * (seats - 1)]
    for i in range(2):
        tour = {"id": "t0", "index": i}
        a_clock, b_clock = TickingClock(), TickingClock()
        sealed = play(game, specs, options, f"sealed-{i}", clock=a_clock.now, tournament=tour)
        general = play(
            game,
            specs,
            options,
            f"sealed-{i}",
            clock=b_clock.now,
            tournament=tour,
            on_step=lambda *_: None,
        )
        assert _log(sealed.envelopes) == _log(general.envelopes)
        assert sealed.envelopes == general.envelopes
        assert sealed.commands == general.commands
        assert sealed.record == general.record
        assert sealed.actions == general.actions
        # What a tournament stores: the entries the store writes for the general loop's
        # envelopes, byte for byte (the data and commands in the engine's own key order).
        encoded = play(game, specs, options, f"sealed-{i}", clock=TickingClock().now,
                       tournament=tour, encoded=True)  # fmt: skip
        assert encoded.log is not None
        assert encoded.log.raws == [_entry(env) for env in general.envelopes]
