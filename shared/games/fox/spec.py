"""The Fox in the Forest's declaration (``shared.games.spec``): what the catalogue, the OpenAPI document and the
bot registry show and use of it."""

from __future__ import annotations

from types import MappingProxyType

from shared.games import base
from shared.games.fox import bots, search
from shared.games.fox.cards import PHASE_NAMES
from shared.games.fox.cards import SUITS as _SUITS
from shared.games.fox.kernel import FoxKernel
from shared.games.spec import INT, SEAT_NUMBER, GameSpec, Schema, ints, nullable

# A card in a command: the object views show, or its code.
CARD_FIELD: Schema = {
    "description": 'a card: {"suit", "rank"} (as views show it), or its code 0..32 '
    "(suit index in bells, keys, moons * 11 + rank - 1); answers always use the object",
    "oneOf": [
        {
            "type": "object",
            "required": ["suit", "rank"],
            "properties": {
                "suit": {"enum": ["bells", "keys", "moons"]},
                "rank": {"type": "integer", "minimum": 1, "maximum": 11},
            },
        },
        {"type": "integer", "minimum": 0, "maximum": 32},
    ],
}

NAME = "fox"
MIN_SEATS = 2
MAX_SEATS = 2
TRAITS = base.Traits(
    secret_options=("deal",),  # a fixed deal names every card in both hands
    secret_command_fields={"return_card": ("card",)},  # the Woodcutter's card to the deck
)

OPTIONS: dict[str, Schema] = {
        "target": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 21,
                   "description": "points that end the game (16, 21 or 35 in the rule book)"},
        "first_dealer": {"enum": [0, 1, None], "default": None,
                         "description": "the first round's dealer; null: drawn"},
        "deal": {"type": "object", "description": "organizer key only: the first round's "
                 "hands, decree and deck"},
}  # fmt: skip

SUITS = list(_SUITS)
CARD = {
    "type": "object",
    "required": ["suit", "rank"],
    "properties": {
        "suit": {"type": "string", "enum": SUITS},
        "rank": {"type": "integer", "minimum": 1, "maximum": 11},
    },
}
CARDS = {"type": "array", "items": CARD}
PLAYED_CARD = {"type": "object", "required": ["seat", "card"],
               "properties": {"seat": SEAT_NUMBER, "card": CARD}}  # fmt: skip

VIEW_FIELDS: Schema = {
    "hand": nullable({**CARDS, "description": "your hand (null in the public view)"}),
    "hand_sizes": ints("cards in each hand", minimum=0),
    "decree": nullable({**CARD, "description": "the decree card (sets the trump suit)"}),
    "trump": nullable({"type": "string", "enum": SUITS}),
    "trick": {"type": "array", "items": PLAYED_CARD, "description": "the trick on the table"},
    "leader": {**SEAT_NUMBER, "description": "who led (or leads) the trick"},
    "last_trick": nullable(
        {
            "type": "object",
            "required": ["cards", "winner"],
            "properties": {"cards": {"type": "array", "items": PLAYED_CARD}, "winner": SEAT_NUMBER},
        }
    ),  # fmt: skip
    "dealer": SEAT_NUMBER,
    "first_dealer": SEAT_NUMBER,
    "round": {**INT, "minimum": 1},
    "target": {**INT, "description": "points that end the game"},
    "tricks_won": ints("this round's tricks per seat", minimum=0),
    "treasure": ints("this round's Treasure points (from the 7s) per seat", minimum=0),
    "scores": ints("points per seat, this round's Treasure included"),
    "round_scores": {
        "type": "array",
        "description": "every finished round",
        "items": {
            "type": "object",
            "required": ["round", "tricks", "points", "treasure", "total"],
            "properties": {
                "round": INT,
                "tricks": ints(),
                "points": ints(),
                "treasure": ints(),
                "total": ints(),
            },  # fmt: skip
        },
    },
    "deck_size": {**INT, "minimum": 0},
    "played": {**CARDS, "description": "every card played this round"},
    "known_cards": {
        "type": "array",
        "items": CARDS,
        "description": "per seat, cards publicly known to be in its hand (old decree cards "
        "taken with a Fox)",
    },
    "voids": {
        "type": "array",
        "items": {"type": "array", "items": {"type": "string", "enum": SUITS}},
        "description": "per seat, suits it is known to lack (it did not follow them)",
    },
    "ranks_below": {
        "type": "array",
        "items": {"type": "object", "additionalProperties": INT},
        "description": "per seat, suit -> rank: it holds no card of the suit at or above it",
    },
    "hand_or_deck": {
        "type": "array",
        "items": nullable(
            {
                "type": "object",
                "required": ["cards", "deck_index"],
                "properties": {"cards": CARDS, "deck_index": {**INT, "minimum": 0}},
            }
        ),  # fmt: skip
        "description": "per seat, after its Woodcutter put a card under the deck: cards all "
        "in its hand but at most one, which is then the deck's card at `deck_index`",
    },
    "opponent_known_cards": nullable({**CARDS, "description": "seat views only"}),
    "deck_known": nullable(
        {
            "type": "array",
            "items": nullable(CARD),
            "description": "seat views only: the deck, top first, with the cards this seat put "
            "under it (null where unknown)",
        }
    ),  # fmt: skip
}

SPEC = GameSpec(
    name=NAME,
    title="The Fox in the Forest",
    min_seats=MIN_SEATS,
    max_seats=MAX_SEATS,
    traits=TRAITS,
    kernel=FoxKernel,
    heuristic=bots.choose,
    search=search,
    # 2: a play-out plays this round only and is worth the match chance of its scores
    # (``search.match_value``), so the search plays another way from the same view.
    policy_versions=MappingProxyType({"ismcts": 2}),
    options=MappingProxyType(OPTIONS),
    command_fields=MappingProxyType({"card": CARD_FIELD}),
    phases=tuple(PHASE_NAMES),
    view_fields=MappingProxyType(VIEW_FIELDS),
    example_seats=2,
    example_step=3,
    example_id="3f2a9c1e5b7d4a60",
    create_examples=MappingProxyType({
        "fox": {
            "summary": "The Fox in the Forest: two players (a token for each)",
            "value": {"game": "fox", "seats": [{"name": "ana"}, {"name": "bob"}]},
        },
    }),
)  # fmt: skip
