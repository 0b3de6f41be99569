"""Isle of Skye: From Chieftain to King (2–5 players): the rules engine.

The package provides the ``Engine`` names of ``shared/games/base.py`` (plus ``random_command``):
``data`` loads the packaged tiles and scoring tiles, ``territory`` holds grid geometry,
placement and areas, ``scoring`` the 16 scoring tiles, scrolls and income, ``messages`` the
commands and events, ``state`` the state and ``evolve``, ``engine`` everything else.
"""

from __future__ import annotations

from shared.games.skye.engine import (
    MAX_SEATS,
    MIN_SEATS,
    NAME,
    TRAITS,
    command_to_json,
    decide,
    determinize,
    event_from_json,
    event_to_json,
    legal_commands,
    outcome,
    parse_options,
    random_command,
    redact,
    setup,
    to_act,
    view,
)
from shared.games.skye.messages import COMMANDS, EVENTS, parse_command
from shared.games.skye.state import State, evolve

__all__ = [
    "COMMANDS",
    "EVENTS",
    "MAX_SEATS",
    "MIN_SEATS",
    "NAME",
    "State",
    "TRAITS",
    "command_to_json",
    "decide",
    "determinize",
    "event_from_json",
    "event_to_json",
    "evolve",
    "legal_commands",
    "outcome",
    "parse_command",
    "parse_options",
    "random_command",
    "redact",
    "setup",
    "to_act",
    "view",
]
