"""Isle of Skye's declaration (``shared.games.spec``): what the catalogue, the OpenAPI document and the
bot registry show and use of it."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from shared.games.skye import bots, data, engine, search, state
from shared.games.skye.kernel import Table
from shared.games.spec import FLAG, INT, SEAT_NUMBER, TEXT, GameSpec, Schema, ints, nullable

OPTIONS: dict[str, Schema] = {
        "scoring_tiles": {"type": ["array", "object", "null"], "default": None,
                          "description": "4 scoring tiles for A..D (ids or indices 0..15); "
                          "null: drawn"},
        "first_player": {"type": ["integer", "null"], "minimum": 0, "default": None},
        "advanced_variant": {"type": "boolean", "default": False,
                             "description": "the 2-3 player variant: one extra tile a round"},
}  # fmt: skip

TILE = {**TEXT, "description": "a tile's id (`L07`; castles `C1`..)"}
OFFER = {"type": "object", "additionalProperties": {**INT, "minimum": 1},
         "description": "tile -> its price in gold"}  # fmt: skip
PLACED = {
    "type": "object",
    "required": ["tile", "x", "y", "rotation"],
    "properties": {
        "tile": TILE,
        "x": INT,
        "y": INT,
        "rotation": {"type": "integer", "enum": [0, 90, 180, 270]},
    },  # fmt: skip
}
SKYE_PLAYER = {
    "type": "object",
    "required": [
        "seat",
        "castle",
        "territory",
        "gold",
        "free_gold",
        "score",
        "score_breakdown",
        "prices_set",
        "drawn",
        "discard",
        "offer",
        "to_place",
    ],  # fmt: skip
    "properties": {
        "seat": SEAT_NUMBER,
        "castle": TILE,
        "territory": {"type": "array", "items": PLACED},
        "gold": {**INT, "description": "gold held, counting gold lying on its own offer"},
        "free_gold": nullable({**INT, "description": "gold in hand; null while secret"}),
        "score": INT,
        "score_breakdown": {
            "type": "object",
            "required": ["rounds", "scrolls", "gold"],
            "properties": {
                "rounds": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["round", "points"],
                        "properties": {
                            "round": INT,
                            "points": {
                                "type": "object",
                                "additionalProperties": INT,
                                "description": "scoring tile letter -> points",
                            },  # fmt: skip
                        },
                    },
                },
                "scrolls": {"type": "object", "additionalProperties": INT},
                "gold": INT,
            },
        },
        "prices_set": FLAG,
        "drawn": {"type": "array", "items": TILE},
        "discard": nullable({**TILE, "description": "the tile under the axe; null while secret"}),
        "offer": nullable({**OFFER, "description": "the priced tiles; null while secret"}),
        "to_place": {"type": "array", "items": TILE},
    },
}
VIEW_FIELDS: Schema = {
    "round": {**INT, "minimum": 0},
    "rounds": {**INT, "minimum": 1},
    "start_player": SEAT_NUMBER,
    "scoring_tiles": {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["letter", "id", "name", "definition", "rounds"],
            "properties": {
                "letter": {"type": "string", "enum": ["A", "B", "C", "D"]},
                "id": TEXT,
                "name": TEXT,
                "definition": TEXT,
                "rounds": ints("the rounds it scores in"),
            },  # fmt: skip
        },
    },
    "schedule": {
        "type": "array",
        "items": {"type": "array", "items": TEXT},
        "description": "per round, the letters of the scoring tiles scored",
    },  # fmt: skip
    "advanced_variant": FLAG,
    "revealed": {**FLAG, "description": "whether this round's prices are revealed"},
    "current_buyer": nullable(SEAT_NUMBER),
    "extra_tile": nullable(
        {
            "type": "object",
            "required": ["tile", "price"],
            "properties": {"tile": TILE, "price": INT},
        }
    ),  # fmt: skip
    "players": {"type": "array", "items": SKYE_PLAYER},
    "drawn": nullable({"type": "array", "items": TILE, "description": "seat views only"}),
    "discard": nullable({**TILE, "description": "seat views only"}),
    "offer": nullable({**OFFER, "description": "seat views only"}),
    "to_place": nullable({"type": "array", "items": TILE, "description": "seat views only"}),
    "bag_size": {**INT, "minimum": 0},
    "scores": ints(),
}


def _tiles() -> dict[str, Any]:
    """The tiles as the engine plays them (its overrides applied), without the data's
    provenance notes: what the web page needs to draw terrain, roads and objects."""
    keep = ("id", "edges", "center_terrain", "areas", "roads", "features", "scroll",
            "has_whisky", "income_gold", "player_color")  # fmt: skip
    tiles: dict[str, Any] = {}
    for key in ("castle_tiles", "landscape_tiles"):
        for raw in data.TILES_DOC[key]:
            patched = {**raw, **data.TILE_OVERRIDES.get(raw["id"], {})}
            tiles[raw["id"]] = {k: patched[k] for k in keep if k in patched}
    return {"tiles": tiles}


SPEC = GameSpec(
    name=engine.NAME,
    title="Isle of Skye",
    min_seats=engine.MIN_SEATS,
    max_seats=engine.MAX_SEATS,
    traits=engine.TRAITS,
    kernel=Table,
    heuristic=bots.choose,
    search=search,
    options=MappingProxyType(OPTIONS),
    command_fields=MappingProxyType({
        "prices": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1},
                   "description": "gold on each drawn tile but the axed one"},
        "discard": {"type": ["string", "null"], "description": "the tile under the axe"},
    }),
    phases=tuple(state.PHASES),
    view_fields=MappingProxyType(VIEW_FIELDS),
    example_seats=3,
    example_step=3,
    example_id="b5e7a1c3d9f20468",
    create_examples=MappingProxyType({
        "skye-bots": {
            "summary": "Isle of Skye against two bots, unlisted",
            "value": {
                "game": "skye",
                "listed": False,
                "seats": [{"name": "ana"}, {"bot": "heuristic"},
                          {"bot": "ismcts", "budget_ms": 200}],
            },
        },
    }),
    # Its search plays the heuristic's candidate moves and plays out with its valuation.
    policy_follows=MappingProxyType({"ismcts": "heuristic"}),
    web_assets=MappingProxyType({"skye-tiles.json": _tiles}),
)  # fmt: skip
