"""The v1 REST endpoints, one module per capability on one blueprint (``blueprint.blp``):

- ``game_routes``: health, the game types, creating and listing games, a game's view;
- ``command_routes``: sending a command, a command's status, and the worker's reply to a
  waited command read back into an outcome and a view (``_decided``, ``_outcome_response``);
- ``seat_routes``: joining, leaving, a seat's client seed;
- ``hint_routes``: a bot's suggestion for a stuck seat;
- ``history_routes``: the live feed, the events, the export, the audit.

Importing them registers their endpoints, in this order, before ``app`` registers ``blp``.
"""

from __future__ import annotations

from services.gateway import (  # noqa: F401  (imported for their endpoints)
    command_routes,
    game_routes,
    hint_routes,
    history_routes,
    seat_routes,
)
from services.gateway.blueprint import blp

__all__ = ["blp"]
