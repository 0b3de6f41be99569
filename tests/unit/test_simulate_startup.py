"""``tabletop simulate`` of one game loads that game alone: the bot registry reads a game's
policy versions from that game's spec when asked, and the rating model (openskill) is made on
first rating, so start-up pays for neither the other games' packages nor openskill."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import contextlib, io, json, sys
from services import cli
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = cli.main(["simulate", "--game", "fox", "--games", "2", "--seed", "startup"])
loaded = sorted(m for m in sys.modules if m.startswith(("shared.games.", "openskill")))
print(json.dumps({"code": code, "loaded": loaded}))
"""


def test_simulating_fox_loads_no_other_game_and_no_rating_model() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0
    loaded = found["loaded"]
    assert "shared.games.fox" in loaded
    assert not [m for m in loaded if m.startswith(("shared.games.skull", "shared.games.skye"))]
    assert not [m for m in loaded if m.startswith("openskill")]


def test_policy_tables_read_every_game_when_listed() -> None:
    from shared import games
    from shared.app import bots

    listed = dict(bots.POLICY_VERSIONS)
    declared = {
        (bot, spec.name): v for spec in games.specs() for bot, v in spec.policy_versions.items()
    }
    assert listed == declared
    assert len(bots.POLICY_VERSIONS) == len(declared)
    assert bots.POLICY_VERSIONS.get(("ismcts", "no-such-game"), 1) == 1
    assert dict(bots.POLICY_FOLLOWS) == {
        (bot, spec.name): base
        for spec in games.specs()
        for bot, base in spec.policy_follows.items()
    }
