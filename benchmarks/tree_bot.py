"""Another checkout's built-in bot as a kit bot: the baseline of a match between a bot and
its own earlier version, both at the same budget, without a copy of the old code in this tree.

``TABLETOP_BASELINE_TREE`` names the checkout (a git worktree of the commit to beat, say) and
``TABLETOP_BASELINE_BOT`` its bot spec as the command line spells one (default
``ismcts:budget_ms=100``). The bot runs in a child process started in that checkout, with that
checkout's code first on its path (it checks so), one per process that plays: each turn sends
the seat's view and a seed, and the child answers with the old bot's command, timed by its own
clock as the service times a search. For example (an SPRT of this tree's ISMCTS against the
one at commit C, one game at a time so that both searches see the same machine)::

    git worktree add ../baseline C
    TABLETOP_BASELINE_TREE=../baseline tabletop tournament run --local --jobs 1 \\
        --game fox --option target=1 --format sprt --games 2000 \\
        --entrants ismcts:budget_ms=100,benchmarks.tree_bot:TreeBot
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tabletop_client import Bot

# The child: reads one JSON turn a line, answers one JSON command a line.
_CHILD = r"""
import json, sys
root = sys.argv[1]
sys.path.insert(0, root)
import shared
if not shared.__file__.startswith(root):
    raise SystemExit(f"the baseline's code did not load from {root}: {shared.__file__}")
from shared.app import bots
from shared.games.rng import bot_random
spec = json.loads(sys.argv[2])
for line in sys.stdin:
    turn = json.loads(line)
    view = turn["view"]
    command = bots.play(spec, view, bot_random(turn["seed"], view["seat"], view["version"]))
    sys.stdout.write(json.dumps({"command": command}) + "\n")
    sys.stdout.flush()
"""


def _spec(text: str) -> dict[str, Any]:
    """``ismcts:budget_ms=100`` -> ``{"bot": "ismcts", "budget_ms": 100}``."""
    name, *settings = text.strip().split(":")
    spec: dict[str, Any] = {"bot": name}
    for setting in settings:
        key, _, value = setting.partition("=")
        spec[key] = int(value)
    return spec


class _Child:
    """The baseline's process, started on first use and shared by this process's games."""

    def __init__(self, tree: Path, spec: Mapping[str, Any]) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(tree), json.dumps(dict(spec))],
            cwd=tree,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._lock = threading.Lock()

    def ask(self, view: Mapping[str, Any], seed: str) -> Any:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with self._lock:
            self._proc.stdin.write(json.dumps({"view": view, "seed": seed}) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the baseline bot's process ended")
        return json.loads(line)["command"]


_child: _Child | None = None
_started = threading.Lock()


def _the_child() -> _Child:
    global _child
    with _started:
        if _child is None:
            tree = os.environ.get("TABLETOP_BASELINE_TREE")
            if not tree:
                raise RuntimeError("TABLETOP_BASELINE_TREE names no checkout")
            spec = _spec(os.environ.get("TABLETOP_BASELINE_BOT", "ismcts:budget_ms=100"))
            _child = _Child(Path(tree).resolve(), spec)
        return _child


class TreeBot(Bot):
    """The baseline checkout's bot (``TABLETOP_BASELINE_BOT``), played in its own process."""

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        # The child's randomness: the game and the move, as a built-in bot's is (not secret:
        # this is a measuring tool, not a seat of the service).
        return _the_child().ask(view, f"baseline:{view.get('id')}")
