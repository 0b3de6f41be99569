"""Golden playthroughs replay to the same bytes (see tests/golden/golden.py)."""

from __future__ import annotations

import json

import pytest

from tests.golden.golden import GAMES, HERE, replay


@pytest.mark.parametrize("name", [g[0] for g in GAMES])
def test_a_golden_game_replays_to_the_same_events_and_views(name: str) -> None:
    doc = json.loads((HERE / f"{name}.json").read_text())
    got = replay(doc)
    expected = doc["expected"]
    assert got["version"] == expected["version"]
    for i, (a, b) in enumerate(zip(got["envelopes"], expected["envelopes"], strict=True)):
        assert a == b, f"{name}: envelope {i + 1} differs"
    assert got["views"] == expected["views"], f"{name}: a final view differs"
