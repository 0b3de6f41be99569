"""Skull's declaration (``shared.games.spec``): what the catalogue, the OpenAPI document and the
bot registry show and use of it."""

from __future__ import annotations

from types import MappingProxyType

from shared.games.skull import bots, search
from shared.games.skull import messages as engine
from shared.games.skull.kernel import SkullKernel
from shared.games.spec import FLAG, INT, SEAT_NUMBER, GameSpec, Schema, ints, nullable

OPTIONS: dict[str, Schema] = {
        "next_starter": {"enum": ["czech", "english"], "default": "czech",
                         "description": "who starts after a challenge (the Czech or the "
                         "English rule book)"},
        "first_player": {"type": ["integer", "null"], "minimum": 0, "default": None,
                         "description": "the seat that starts; null: drawn"},
}  # fmt: skip

DISC = {"type": "string", "enum": list(engine.DISCS)}
VIEW_FIELDS: Schema = {
    "round": {**INT, "minimum": 1},
    "next_starter": {"type": "string", "enum": [engine.CZECH, engine.ENGLISH]},
    "you": nullable({**SEAT_NUMBER, "description": "your seat (null in the public view)"}),
    "starter": SEAT_NUMBER,
    "turn": nullable(SEAT_NUMBER),
    "bid": {**INT, "minimum": 0, "description": "the highest bid (0: none yet)"},
    "bidder": nullable(SEAT_NUMBER),
    "challenger": nullable({**SEAT_NUMBER, "description": "who flips (the highest bidder)"}),
    "skull_owner": nullable({**SEAT_NUMBER, "description": "whose skull the challenger flipped"}),
    "table": {**INT, "minimum": 0, "description": "discs on the table"},
    "flipped": {
        "type": "array",
        "description": "discs flipped this round, in order",
        "items": {
            "type": "object",
            "required": ["seat", "disc"],
            "properties": {"seat": SEAT_NUMBER, "disc": DISC},
        },  # fmt: skip
    },
    "pick_from": {**INT, "minimum": 0, "description": "face-down discs to pick a penalty from"},
    "players": {
        "type": "array",
        "items": {
            "type": "object",
            "required": [
                "seat",
                "stack_size",
                "face_down",
                "hand_size",
                "discs",
                "wins",
                "passed",
                "eliminated",
                "known_skull",
            ],  # fmt: skip
            "properties": {
                "seat": SEAT_NUMBER,
                "stack_size": {**INT, "minimum": 0},
                "face_down": {**INT, "minimum": 0},
                "hand_size": {**INT, "minimum": 0},
                "discs": {**INT, "minimum": 0, "description": "discs still owned"},
                "wins": {**INT, "minimum": 0},
                "passed": FLAG,
                "eliminated": FLAG,
                "known_skull": nullable(
                    {
                        **FLAG,
                        "description": "whether every seat can deduce it still owns its skull; "
                        "null: nobody can tell",
                    }
                ),  # fmt: skip
            },
        },
    },
    "scores": ints("win markers per seat", minimum=0),
    "winners": ints(minimum=0),
    "hand": nullable(
        {
            "type": "object",
            "description": "seat views only: your discs in hand",
            "required": ["flower", "skull"],
            "properties": {"flower": {**INT, "minimum": 0}, "skull": {**INT, "minimum": 0}},
        }
    ),  # fmt: skip
    "stack": nullable(
        {
            "type": "array",
            "items": DISC,
            "description": "seat views only: your stack's faces, bottom first",
        }
    ),  # fmt: skip
    "lost": nullable(
        {"type": "array", "items": DISC, "description": "seat views only: your lost discs"}
    ),  # fmt: skip
}

SPEC = GameSpec(
    name=engine.NAME,
    title="Skull",
    min_seats=engine.MIN_SEATS,
    max_seats=engine.MAX_SEATS,
    traits=engine.TRAITS,
    kernel=SkullKernel,
    heuristic=bots.choose,
    search=search,
    options=MappingProxyType(OPTIONS),
    command_fields=MappingProxyType({"disc": {"enum": ["flower", "skull"]}}),
    # Skull's choose_starter exists only under the English rule: tried after the defaults.
    example_options=(MappingProxyType({}), MappingProxyType({"next_starter": "english"})),
    phases=(engine.PLACING, engine.BIDDING, engine.FLIPPING, engine.PENALTY,
            engine.CHOOSING_STARTER, engine.GAME_OVER_PHASE),
    view_fields=MappingProxyType(VIEW_FIELDS),
    example_seats=3,
    example_step=4,
    example_id="8c41d2e09f3b6a75",
    lobby_example=True,
    create_examples=MappingProxyType({
        "skull-lobby": {
            "summary": "Skull in the lobby: you, two open seats to join, and a bot",
            "value": {
                "game": "skull",
                "options": {"next_starter": "english"},
                "seats": [{"name": "ana"}, {"open": True}, {"open": True}, {"bot": "heuristic"}],
            },
        },
    }),
    # Version 2: its bids no longer give its stack away (issue 23): every public choice is
    # made from public facts alone, the skull goes down only as a round's first disc and
    # more often, and the bluffs of version 1 are gone. From the same view and randomness
    # it places and bids otherwise than version 1 did.
    # ismcts 2: a flat search of the heuristic's candidates, each played out as the
    # heuristic plays (``search.modelled_rollout``); it follows the heuristic's changes.
    # ismcts 3: tell-free (``search.root_search``): its public choices are valued on deals of
    # its own discs as a spectator deals them, so they read nothing of its stack.
    policy_versions=MappingProxyType({"heuristic": 2, "ismcts": 3}),
    policy_follows=MappingProxyType({"ismcts": "heuristic"}),
)  # fmt: skip
