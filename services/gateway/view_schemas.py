"""What a view holds, per game, as OpenAPI 3.0 schemas (``FoxView``, ``SkullView``,
``SkyeView``, one of them by ``game``: ``View``), with examples taken from real positions.

The engines' views are plain dicts built in ``shared/games/*``; these schemas are written down
by hand from them (the docstrings of each engine's ``view``), because no Python type says what
they hold. ``tests/unit/test_view_schemas.py`` plays whole games of every game and checks every
seat's and the public view at every step against them, with every object closed
(``additionalProperties: false``), so a field an engine adds without documenting it here fails
there rather than drifting silently. The document itself leaves objects open: a client must
ignore fields it does not know, so adding one is not a breaking change.

OpenAPI 3.0 (what Swagger UI 4 reads), not JSON Schema 2020-12: ``nullable`` rather than a
``null`` type, ``enum`` rather than ``const``, ``example`` rather than ``examples``.
"""

from __future__ import annotations

import copy
import hashlib
from functools import cache
from typing import Any

from shared.app import clock
from shared.app.fairness import CONTRIBUTE as CONTRIBUTE_TYPE
from shared.games import fox as fox_engine
from shared.games import skull as skull_engine
from shared.games.skye import state as skye_state

Schema = dict[str, Any]

REF = "#/components/schemas/"
GAMES = ("fox", "skull", "skye")
COMPONENT = {"fox": "FoxView", "skull": "SkullView", "skye": "SkyeView"}
WAITING = "waiting"  # the phase of a game not dealt yet (open seats, client seeds to come)


def _null(schema: Schema) -> Schema:
    return {**schema, "nullable": True}


def _ints(description: str = "", **bounds: int) -> Schema:
    out: Schema = {"type": "array", "items": {"type": "integer", **bounds}}
    if description:
        out["description"] = description
    return out


INT = {"type": "integer"}
SEAT_NUMBER = {"type": "integer", "minimum": 0}
TEXT = {"type": "string"}
FLAG = {"type": "boolean"}

# ---- the service's part of every view -----------------------------------------------------------

SEAT = {
    "type": "object",
    "description": "a seat as everyone sees it: a name; a bot's name and settings; `open` "
    "while nobody holds it (the lobby). Never a token or its hash",
    "required": ["seat", "name"],
    "properties": {
        "seat": SEAT_NUMBER,
        "name": TEXT,
        "bot": {**TEXT, "description": "the bot playing the seat (see the seat spec)"},
        "budget_ms": INT,
        "iterations": INT,
        "open": {**FLAG, "description": "true: anyone may join this seat"},
        "resigned": FLAG,
        "taken_over": {**TEXT, "description": "why a bot plays a player's seat"},
    },
}

OUTCOME = {
    "type": "object",
    "nullable": True,
    "description": "null while the game runs; then the final scores, the winners (several "
    "when tied), each seat's rank (1 = first; ties share) and whether it is a draw. Resigned "
    "seats (`resigned`) rank below every other; a game that ended because all but one seat "
    "resigned has `ended_by: resignation` and no scores (null)",
    "required": ["scores", "winners", "ranks", "draw"],
    "properties": {
        "scores": _null(_ints()),
        "winners": _ints(minimum=0),
        "ranks": _ints(minimum=1),
        "draw": FLAG,
        "tiebreak": _ints("Isle of Skye: the tie-breaker of each seat (gold left)"),
        "resigned": _ints("the seats that resigned", minimum=0),
        "ended_by": {"type": "string", "enum": ["resignation"]},
    },
}

FAIRNESS = {
    "type": "object",
    "description": "games of contributed fairness only (docs/fairness.md): who must still "
    "send a client seed, and every client seed sent (null until sent)",
    "required": ["mode", "waiting_for", "client_seeds"],
    "properties": {
        "mode": {"type": "string", "enum": ["contributed"]},
        "waiting_for": _ints(minimum=0),
        "client_seeds": {"type": "array", "items": _null(TEXT)},
    },
}

CONTRIBUTE = {
    "type": "object",
    "description": "a game of contributed fairness waits for this seat's client seed: send "
    "it (POST /v1/games/{game_id}/seats/{seat}/entropy, or this command with your own seed in "
    "place of `template`)",
    "required": ["type", "client_seed"],
    "properties": {"type": {"type": "string", "enum": [CONTRIBUTE_TYPE]}, "client_seed": TEXT},
}

# Fields of every view; the game fields come after them.
SERVICE: Schema = {
    "id": {**TEXT, "description": "the game's id"},
    "version": {
        **INT,
        "minimum": 0,
        "description": "the number of events so far; `expected_version` of a command",
    },
    "seat": _null({**SEAT_NUMBER, "description": "the seat whose view this is; null: public"}),
    "to_act": _ints("the seats that may act now (several in simultaneous phases)", minimum=0),
    "seats": {"type": "array", "items": SEAT},
    "seed_sha256": {
        **TEXT,
        "pattern": "^[0-9a-f]{64}$",
        "description": "SHA-256 of the secret seed, committed at creation: the seed itself is "
        "revealed (event `seed_revealed`) only when the game is over",
    },
    "head_hash": {**TEXT, "description": "the hash of the last event (the chain's head)"},
    "outcome": OUTCOME,
    "fairness": FAIRNESS,
    "tournament": {
        "type": "object",
        "description": "a tournament's game only: the tournament and the game's index in it",
        "properties": {"id": TEXT, "index": INT},
    },
    "listed": {**FLAG, "description": "present (false) only for an unlisted game"},
    "clock": {
        "type": "object",
        "description": "games created with a `clock` only: its settings (defaults filled in) "
        "and per seat its deadline while it is to act, its reserve left and its time-outs in "
        "a row",
        "required": [
            "turn_seconds",
            "reserve_seconds",
            "on_timeout",
            "timeout_bot",
            "takeover_after",
            "seats",
        ],
        "properties": {
            "turn_seconds": {**INT, "minimum": 1},
            "reserve_seconds": {**INT, "minimum": 0},
            "on_timeout": {"type": "string", "enum": list(clock.ON_TIMEOUT)},
            "timeout_bot": {
                "type": "object",
                "description": "a bot seat spec",
                "additionalProperties": True,
            },
            "takeover_after": {**INT, "minimum": 1},
            "seats": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["seat", "reserve_ms", "timeouts_in_a_row", "deadline"],
                    "properties": {
                        "seat": SEAT_NUMBER,
                        "reserve_ms": {**INT, "minimum": 0},
                        "timeouts_in_a_row": {**INT, "minimum": 0},
                        "deadline": _null(
                            {**TEXT, "format": "date-time", "description": "UTC; null: not to act"}
                        ),
                        "deadline_ms": {**INT, "description": "the deadline, ms since 1970"},
                        "armed_version": {**INT, "description": "the version it was armed at"},
                        "turn_started": {**TEXT, "format": "date-time"},
                    },
                },
            },
        },
    },  # fmt: skip
}
SERVICE_REQUIRED = ["id", "game", "version", "seat", "phase", "to_act", "legal_commands",
                    "outcome", "seats", "seed_sha256", "head_hash"]  # fmt: skip

# ---- The Fox in the Forest ----------------------------------------------------------------------

SUITS = list(fox_engine.SUITS)
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

FOX: Schema = {
    "hand": _null({**CARDS, "description": "your hand (null in the public view)"}),
    "hand_sizes": _ints("cards in each hand", minimum=0),
    "decree": _null({**CARD, "description": "the decree card (sets the trump suit)"}),
    "trump": _null({"type": "string", "enum": SUITS}),
    "trick": {"type": "array", "items": PLAYED_CARD, "description": "the trick on the table"},
    "leader": {**SEAT_NUMBER, "description": "who led (or leads) the trick"},
    "last_trick": _null(
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
    "tricks_won": _ints("this round's tricks per seat", minimum=0),
    "treasure": _ints("this round's Treasure points (from the 7s) per seat", minimum=0),
    "scores": _ints("points per seat, this round's Treasure included"),
    "round_scores": {
        "type": "array",
        "description": "every finished round",
        "items": {
            "type": "object",
            "required": ["round", "tricks", "points", "treasure", "total"],
            "properties": {
                "round": INT,
                "tricks": _ints(),
                "points": _ints(),
                "treasure": _ints(),
                "total": _ints(),
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
        "items": _null(
            {
                "type": "object",
                "required": ["cards", "deck_index"],
                "properties": {"cards": CARDS, "deck_index": {**INT, "minimum": 0}},
            }
        ),  # fmt: skip
        "description": "per seat, after its Woodcutter put a card under the deck: cards all "
        "in its hand but at most one, which is then the deck's card at `deck_index`",
    },
    "opponent_known_cards": _null({**CARDS, "description": "seat views only"}),
    "deck_known": _null(
        {
            "type": "array",
            "items": _null(CARD),
            "description": "seat views only: the deck, top first, with the cards this seat put "
            "under it (null where unknown)",
        }
    ),  # fmt: skip
}

# ---- Skull --------------------------------------------------------------------------------------

DISC = {"type": "string", "enum": list(skull_engine.DISCS)}
SKULL: Schema = {
    "round": {**INT, "minimum": 1},
    "next_starter": {"type": "string", "enum": [skull_engine.CZECH, skull_engine.ENGLISH]},
    "you": _null({**SEAT_NUMBER, "description": "your seat (null in the public view)"}),
    "starter": SEAT_NUMBER,
    "turn": _null(SEAT_NUMBER),
    "bid": {**INT, "minimum": 0, "description": "the highest bid (0: none yet)"},
    "bidder": _null(SEAT_NUMBER),
    "challenger": _null({**SEAT_NUMBER, "description": "who flips (the highest bidder)"}),
    "skull_owner": _null({**SEAT_NUMBER, "description": "whose skull the challenger flipped"}),
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
                "known_skull": _null(
                    {
                        **FLAG,
                        "description": "whether every seat can deduce it still owns its skull; "
                        "null: nobody can tell",
                    }
                ),  # fmt: skip
            },
        },
    },
    "scores": _ints("win markers per seat", minimum=0),
    "winners": _ints(minimum=0),
    "hand": _null(
        {
            "type": "object",
            "description": "seat views only: your discs in hand",
            "required": ["flower", "skull"],
            "properties": {"flower": {**INT, "minimum": 0}, "skull": {**INT, "minimum": 0}},
        }
    ),  # fmt: skip
    "stack": _null(
        {
            "type": "array",
            "items": DISC,
            "description": "seat views only: your stack's faces, bottom first",
        }
    ),  # fmt: skip
    "lost": _null(
        {"type": "array", "items": DISC, "description": "seat views only: your lost discs"}
    ),  # fmt: skip
}

# ---- Isle of Skye -------------------------------------------------------------------------------

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
        "free_gold": _null({**INT, "description": "gold in hand; null while secret"}),
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
        "discard": _null({**TILE, "description": "the tile under the axe; null while secret"}),
        "offer": _null({**OFFER, "description": "the priced tiles; null while secret"}),
        "to_place": {"type": "array", "items": TILE},
    },
}
SKYE: Schema = {
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
                "rounds": _ints("the rounds it scores in"),
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
    "current_buyer": _null(SEAT_NUMBER),
    "extra_tile": _null(
        {
            "type": "object",
            "required": ["tile", "price"],
            "properties": {"tile": TILE, "price": INT},
        }
    ),  # fmt: skip
    "players": {"type": "array", "items": SKYE_PLAYER},
    "drawn": _null({"type": "array", "items": TILE, "description": "seat views only"}),
    "discard": _null({**TILE, "description": "seat views only"}),
    "offer": _null({**OFFER, "description": "seat views only"}),
    "to_place": _null({"type": "array", "items": TILE, "description": "seat views only"}),
    "bag_size": {**INT, "minimum": 0},
    "scores": _ints(),
}

PHASES = {
    "fox": list(fox_engine.PHASE_NAMES),
    "skull": [skull_engine.PLACING, skull_engine.BIDDING, skull_engine.FLIPPING,
              skull_engine.PENALTY, skull_engine.CHOOSING_STARTER, skull_engine.GAME_OVER_PHASE],
    "skye": list(skye_state.PHASES),
}  # fmt: skip
FIELDS = {"fox": FOX, "skull": SKULL, "skye": SKYE}
TITLES = {"fox": "The Fox in the Forest", "skull": "Skull", "skye": "Isle of Skye"}


def command_ref(game: str) -> str:
    """The component of the game's commands (``openapi_contract`` registers them)."""
    return f"{REF}{game.capitalize()}Command"


@cache
def _view_schema(game: str) -> Schema:
    fields = FIELDS[game]
    properties: Schema = {
        "game": {"type": "string", "enum": [game]},
        "phase": {
            "type": "string",
            "enum": [WAITING, *PHASES[game]],
            "description": f"`{WAITING}`: not dealt yet (open seats to join, or client seeds "
            "to come): the view then holds only the service's fields",
        },
        "legal_commands": {
            "type": "array",
            "description": "seat views only: every command this seat may send now, ready to "
            "send (Isle of Skye's `set_prices` is a template: choose `discard` and `prices`)",
            "items": {"anyOf": [{"$ref": command_ref(game)}, CONTRIBUTE]},
        },
        **SERVICE,
        **fields,
    }
    return {
        "type": "object",
        "title": f"{TITLES[game]} view",
        "description": f"What a seat (its token), a spectator (no token) or an auditor "
        f"(`?seat=N`) sees of a {TITLES[game]} game: the service's fields, and once dealt "
        "every field of the game (another seat's hidden facts are null or absent).",
        "required": SERVICE_REQUIRED,
        "properties": properties,
        # Dealt: every game field is there. (OpenAPI 3.0 has no if/then: one of two shapes.)
        "anyOf": [
            {"properties": {"phase": {"type": "string", "enum": [WAITING]}}},
            {"required": sorted(fields)},
        ],
    }


def view_schema(game: str) -> Schema:
    """The OpenAPI schema of ``game``'s view (a copy: callers may add to it)."""
    return copy.deepcopy(_view_schema(game))


def components() -> dict[str, Schema]:
    """Component name -> schema: one view per game, and ``View``, one of them by ``game``."""
    out = {COMPONENT[g]: view_schema(g) for g in GAMES}
    out["View"] = {
        "description": "A game's view: the schema of its game (`game` tells which). Fields a "
        "client does not know must be ignored: new ones may be added.",
        "oneOf": [{"$ref": REF + COMPONENT[g]} for g in GAMES],
        "discriminator": {
            "propertyName": "game",
            "mapping": {g: REF + COMPONENT[g] for g in GAMES},
        },
    }
    return out


# ---- examples -----------------------------------------------------------------------------------

EXAMPLE_SEATS = {"fox": 2, "skull": 3, "skye": 3}
EXAMPLE_STEP = {"fox": 3, "skull": 4, "skye": 3}  # a few moves in: a trick, bids, prices set
EXAMPLE_ID = {"fox": "3f2a9c1e5b7d4a60", "skull": "8c41d2e09f3b6a75", "skye": "b5e7a1c3d9f20468"}


@cache
def examples() -> dict[str, dict[str, Any]]:
    """Name -> ``{"summary", "value"}``: per game a seat's view and the public view a few moves
    into a real game (a fixed seed and the ``random`` bots: the same every time, so the
    generated document is stable)."""
    from shared.app.playout import play
    from shared.projections import view

    out: dict[str, dict[str, Any]] = {}
    for game in GAMES:
        seen: dict[str, Any] = {}

        def keep(record: Any, seat: int, *_: Any, game: str = game, seen: dict = seen) -> None:
            if len(seen) < EXAMPLE_STEP[game]:
                seen[str(len(seen))] = (view(record, seat), view(record, None))

        seats = [{"name": n} for n in ("ana", "bob", "cyd")[: EXAMPLE_SEATS[game]]]
        play(game, seats, {}, f"example-{game}", on_step=keep,
             clock=lambda: "2026-01-01T12:00:00.000Z")  # fmt: skip
        mine, public = seen[str(EXAMPLE_STEP[game] - 1)]
        for doc in (mine, public):
            _fix(doc, game)
        out[f"{game}-seat"] = {"summary": f"{TITLES[game]}: a seat's view", "value": mine}
        out[f"{game}-public"] = {"summary": f"{TITLES[game]}: the public view", "value": public}
    out["skull-waiting"] = {
        "summary": "Skull in the lobby: two open seats, not dealt yet",
        "value": _waiting_view("skull", [{"name": "ana"}, {"open": True}, {"open": True}]),
    }
    return out


def _waiting_view(game: str, specs: list[dict[str, Any]]) -> dict[str, Any]:
    """The public view of a game created with open seats (before its deal)."""
    from shared import games
    from shared.app.handlers import creation_events, seats_from_specs
    from shared.events import GENESIS_HASH, seal
    from shared.projections import view
    from shared.record import fold

    seats, _ = seats_from_specs(specs)
    options = games.get(game).parse_options(len(seats), {})
    seed = f"example-{game}-lobby"
    envelopes = seal(creation_events(game, seats, options, seed), after_version=0,
                     prev_hash=GENESIS_HASH, command_id="create", seat=None,
                     at="2026-01-01T12:00:00.000Z", seed=seed)  # fmt: skip
    doc = view(fold(EXAMPLE_ID[game], envelopes), None)
    _fix(doc, game)
    return doc


def _fix(doc: dict[str, Any], game: str) -> None:
    """A stable id and head hash: the real hash covers the seats' random token hashes, and the
    generated document must be the same at every run."""
    doc["id"] = EXAMPLE_ID[game]
    doc["head_hash"] = hashlib.sha256(f"example {game} {doc['version']}".encode()).hexdigest()


# ---- the catalogue's JSON Schema ----------------------------------------------------------------


def catalogue_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A catalogue entry (``GET /v1/game-types``) with its ``view`` as the full JSON Schema of
    the view (the catalogue's own lists only the top-level fields and their JSON types)."""
    return {**entry, "view": json_schema(entry["name"])}


def json_schema(game: str) -> Schema:
    """``game``'s view schema in JSON Schema (the catalogue's dialect, like its commands): null
    as a type, ``examples``; a legal command refers to the entry's ``command_schema``."""
    out = _to_json_schema(view_schema(game))
    out["properties"]["legal_commands"]["items"] = {
        "anyOf": [{"$ref": "#/command_schema"}, _to_json_schema(CONTRIBUTE)]
    }
    return out


def _to_json_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _to_json_schema(v) for k, v in schema.items() if k not in ("discriminator",)}
    if "example" in out:
        out["examples"] = [out.pop("example")]
    if out.pop("nullable", False):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out
