"""The game catalogue describes what the engines accept: every example parses, every schema
names each field the engine's command has."""

from __future__ import annotations

import pytest

from shared import games
from shared.app.catalogue import catalogue


def test_every_game_is_listed_with_its_seat_limits() -> None:
    entries = {e["name"]: e for e in catalogue()}
    assert set(entries) == set(games.names())
    for name, entry in entries.items():
        engine = games.get(name)
        assert entry["seats"] == {"min": engine.MIN_SEATS, "max": engine.MAX_SEATS}


@pytest.mark.parametrize("name", games.names())
def test_every_example_is_a_command_the_engine_parses(name: str) -> None:
    engine = games.get(name)
    entry = next(e for e in catalogue() if e["name"] == name)
    types = {c["title"] for c in entry["commands"]}
    assert types == set(engine.COMMANDS)
    examples = 0
    for schema in entry["commands"]:
        for example in schema.get("examples", []):
            examples += 1
            assert set(schema["required"]) <= set(example)
            engine.parse_command(example)  # raises if the engine refuses it
    # Every command has one, the rare ones too (Skull's pick_disc, choose_starter).
    without = [c["title"] for c in entry["commands"] if not c.get("examples")]
    assert not without and examples == len(types), without


@pytest.mark.parametrize("name", games.names())
def test_option_defaults_are_the_engines(name: str) -> None:
    engine = games.get(name)
    entry = next(e for e in catalogue() if e["name"] == name)
    parsed = engine.parse_options(engine.MIN_SEATS, {})
    for key, schema in entry["options"]["properties"].items():
        if "default" in schema and key in parsed:
            assert parsed[key] == schema["default"], key
