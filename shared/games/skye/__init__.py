"""Isle of Skye: From Chieftain to King (2–5 players): the rules engine.

The package provides the ``Engine`` names of ``shared/games/base.py`` (plus ``random_command``
and ``random_command_at``, its draw from the state): ``data`` loads the packaged tiles and
scoring tiles, ``territory`` holds grid geometry, placement and areas, ``scoring`` the 16
scoring tiles, scrolls and income, ``messages`` the commands and events, ``state`` the frozen
state, ``kernel`` the rules (``KERNEL``, from which ``decide``, ``evolve`` and ``evolve_all``
are derived), ``engine`` options, setup, views and the rest; ``bots`` the heuristic
(``HEURISTIC``) and ``search`` ISMCTS's hooks (``SEARCH``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.games.kernel import decide_with, evolve_all_with, evolve_with
from shared.games.skye import bots, search
from shared.games.skye.engine import (
    MAX_SEATS,
    MIN_SEATS,
    NAME,
    TRAITS,
    command_to_json,
    determinize,
    event_from_json,
    event_to_json,
    legal_commands,
    outcome,
    parse_options,
    random_command,
    random_command_at,
    redact,
    setup,
    to_act,
    view,
)
from shared.games.skye.kernel import Table
from shared.games.skye.messages import COMMANDS, EVENTS, parse_command
from shared.games.skye.spec import SPEC
from shared.games.skye.state import State

KERNEL = Table
decide = decide_with(KERNEL)
evolve = evolve_with(KERNEL)
evolve_all = evolve_all_with(KERNEL)
SEARCH = search
HEURISTIC: Callable[..., Any] = bots.choose

__all__ = [
    "COMMANDS",
    "EVENTS",
    "HEURISTIC",
    "KERNEL",
    "MAX_SEATS",
    "MIN_SEATS",
    "NAME",
    "SEARCH",
    "SPEC",
    "State",
    "TRAITS",
    "command_to_json",
    "decide",
    "determinize",
    "event_from_json",
    "event_to_json",
    "evolve",
    "evolve_all",
    "legal_commands",
    "outcome",
    "parse_command",
    "parse_options",
    "random_command",
    "random_command_at",
    "redact",
    "setup",
    "to_act",
    "view",
]
