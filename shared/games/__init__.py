"""Game engines (pure rules) and the registry of games the service hosts."""

from __future__ import annotations

import importlib
from typing import Any

from shared.games.base import Engine
from shared.games.spec import GameSpec

# Game name -> module path. Adding a game to the service is one line here.
_MODULES = {
    "fox": "shared.games.fox",
    "skull": "shared.games.skull",
    "skye": "shared.games.skye",
}


def register(name: str, module: str) -> None:
    """Host the game package ``module`` (a dotted path) as ``name``: a game written outside
    ``shared/games/`` (the tests' own) is one call, nothing else changes."""
    if _MODULES.get(name, module) != module:
        raise ValueError(f"{name!r} is already {_MODULES[name]}")
    _MODULES[name] = module
    _loaded.pop(name, None)


def unregister(name: str) -> None:
    """Stop hosting a game ``register`` added."""
    _MODULES.pop(name, None)
    _loaded.pop(name, None)


# The version of each game's rules as this build decides them (what ``game_created`` records
# as ``rules_version`` when it is past 1, and what an audit compares it with). Raised when a
# change to an engine decides some recorded command otherwise (a rule fixed, a draw changed):
# games decided before it are then audited as such ("not re-checked"), never failed.
RULES_VERSIONS = {"fox": 1, "skull": 1, "skye": 1}


def rules_version(name: str) -> int:
    """The version of game ``name``'s rules in this build (1 for a game not versioned)."""
    return RULES_VERSIONS.get(name, 1)


def names() -> list[str]:
    """The game names the service knows."""
    return list(_MODULES)


_loaded: dict[str, Engine] = {}


def get(name: str) -> Engine:
    """The engine module for ``name``; raises KeyError for an unknown (or unavailable) game."""
    # A dict lookup: the worker asks several times a command, and import_module costs more.
    engine = _loaded.get(name)
    if engine is not None:
        return engine
    _loaded[name] = engine = _load(name)
    return engine


def _load(name: str) -> Engine:
    path = _MODULES[name]
    try:
        module: Any = importlib.import_module(path)
    except ModuleNotFoundError as exc:  # an engine not written yet is an unknown game
        if exc.name and path.startswith(exc.name):
            raise KeyError(name) from exc
        raise
    return module


def spec(name: str) -> GameSpec:
    """``name``'s declaration (``shared.games.spec``); raises KeyError for an unknown game."""
    engine: Any = get(name)
    declared: GameSpec = engine.SPEC
    return declared


def specs() -> list[GameSpec]:
    """Every hosted game's declaration, in ``names()`` order."""
    return [spec(name) for name in names()]
