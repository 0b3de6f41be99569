"""What a game declares about itself, so the service's generic code needs no game's name.

Each game package exports ``SPEC``, a ``GameSpec``: its title and seat limits, its traits, the
JSON Schema of its options and of the command fields whose Python type does not say enough, the
OpenAPI schema of its view's fields with its phases, how to show it in examples, its kernel, its
heuristic bot and its search hooks, and its bots' policy versions. The catalogue
(``GET /v1/game-types``), the OpenAPI document's per-game schemas and examples, the bot
registry and the search read it; adding a game is adding a package, not editing them.

Schemas here are OpenAPI 3.0 (what the served document uses: ``nullable``, ``example``) for
views, and JSON Schema for options and command fields (what the catalogue uses), as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from shared.games.base import Traits

Schema = dict[str, Any]

# Building blocks of view schemas (OpenAPI 3.0).
INT: Schema = {"type": "integer"}
SEAT_NUMBER: Schema = {"type": "integer", "minimum": 0}
TEXT: Schema = {"type": "string"}
FLAG: Schema = {"type": "boolean"}


def nullable(schema: Schema) -> Schema:
    """``schema`` that may also be null."""
    return {**schema, "nullable": True}


def ints(description: str = "", **bounds: int) -> Schema:
    """An array of integers (with ``minimum``/``maximum`` bounds on each)."""
    out: Schema = {"type": "array", "items": {"type": "integer", **bounds}}
    if description:
        out["description"] = description
    return out


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSpec:
    """One game's declaration (see the module's docstring)."""

    name: str
    title: str
    min_seats: int
    max_seats: int
    traits: Traits
    # Option name -> its JSON Schema (with ``default`` and ``description``).
    options: Mapping[str, Schema] = field(default_factory=_empty)
    # Command field name -> its JSON Schema where the dataclass field's type does not say.
    command_fields: Mapping[str, Schema] = field(default_factory=_empty)
    # Option sets tried, in order, until random play meets every command type (for examples).
    example_options: tuple[Mapping[str, Any], ...] = (MappingProxyType({}),)
    # The view: its phases (in order) and each game field's OpenAPI schema.
    phases: tuple[str, ...] = ()
    view_fields: Mapping[str, Schema] = field(default_factory=_empty)
    # Examples in the OpenAPI document: seats of the example game, the move whose views are
    # shown, the example's fixed id, and whether a lobby (open seats) example is shown too.
    example_seats: int = 2
    example_step: int = 3
    example_id: str = "0000000000000000"
    lobby_example: bool = False
    # Bodies of ``POST /v1/games`` shown as examples: name -> {"summary", "value"}.
    create_examples: Mapping[str, Mapping[str, Any]] = field(default_factory=_empty)
    # The mutable kernel (``shared.games.kernel.Kernel``), the heuristic bot's
    # ``choose(view, rng)``, and the search's hooks (see ``shared.bots.ismcts``).
    kernel: type | None = None
    heuristic: Callable[..., Any] | None = None
    search: Any = None
    # Bot name -> its policy's version in this game where it is not 1, and bot name -> the bot
    # whose policy it is built on (its version moves with that one's): ``shared.app.bots``.
    policy_versions: Mapping[str, int] = field(default_factory=_empty)
    policy_follows: Mapping[str, str] = field(default_factory=_empty)
    # Files the web page reads for this game: name -> a function giving the JSON document.
    web_assets: Mapping[str, Callable[[], Any]] = field(default_factory=_empty)

    @property
    def component(self) -> str:
        """The OpenAPI component of its view (``FoxView``); commands: ``FoxCommand``."""
        return f"{self.name.capitalize()}View"
