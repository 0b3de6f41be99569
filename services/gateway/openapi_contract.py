"""The contract parts of the OpenAPI document that no marshmallow schema says: per-game command
and view components with examples, operation ids, links from a created game to the operations on
it (so that a client generator names the calls, and a stateful fuzzer reaches real games),
examples of the requests a new client sends first and of every error answer (a problem body of
its status, from ``problem_pages``), the operations endpoints (``/healthz``, ``/readyz``,
``/metrics``), and the order of it all: tags and operations in the order a client works
(``ORDER``), which ``/docs`` shows.

``install`` runs on the generated document once every blueprint is registered (``create_app``);
it only adds to it, replaces the open-ended ``View`` schema with one of the per-game views, and
sets each operation's tag and place.
"""

from __future__ import annotations

import copy
from typing import Any

from apispec import APISpec

from services.gateway import openapi_operations, openapi_problems, schemas, view_schemas
from shared import games
from shared.app import bots, catalogue

Schema = dict[str, Any]
REF = view_schemas.REF

# (method, path) -> operationId: what generated clients call each operation.
OPERATION_IDS = {
    ("get", "/healthz"): "getHealth",
    ("get", "/v1/game-types"): "listGameTypes",
    ("get", "/v1/game-types/{name}"): "getGameType",
    ("get", "/v1/games"): "listGames",
    ("post", "/v1/games"): "createGame",
    ("get", "/v1/games/{game_id}"): "getGame",
    ("post", "/v1/games/{game_id}/commands"): "sendCommand",
    ("get", "/v1/games/{game_id}/commands/{command_id}"): "getCommand",
    ("get", "/v1/games/{game_id}/events"): "getEvents",
    ("get", "/v1/games/{game_id}/feed"): "getFeed",
    ("get", "/v1/games/{game_id}/export"): "exportGame",
    ("get", "/v1/games/{game_id}/audit"): "auditGame",
    ("get", "/v1/games/{game_id}/suggestion"): "getSuggestion",
    ("post", "/v1/games/{game_id}/seats/{seat}/join"): "joinSeat",
    ("post", "/v1/games/{game_id}/seats/{seat}/leave"): "leaveSeat",
    ("post", "/v1/games/{game_id}/seats/{seat}/entropy"): "sendEntropy",
    ("get", "/v1/ratings"): "getRatings",
    ("get", "/v1/tournaments"): "listTournaments",
    ("post", "/v1/tournaments"): "createTournament",
    ("get", "/v1/tournaments/{tournament_id}"): "getTournament",
    ("delete", "/v1/tournaments/{tournament_id}"): "cancelTournament",
    ("get", "/v1/tournaments/{tournament_id}/games.jsonl.gz"): "exportTournamentGames",
    ("get", "/v1/tournaments/{tournament_id}/results.csv"): "getTournamentResults",
    ("get", "/v1/bots"): "listBots",
    ("post", "/v1/bots"): "registerBot",
    ("get", "/v1/bots/{bot_id}"): "getBot",
    ("delete", "/v1/bots/{bot_id}"): "retireBot",
    ("get", "/v1/bots/me/turns"): "getBotTurns",
    ("post", "/v1/bots/me/turns/{turn_id}"): "answerBotTurn",
    ("get", "/readyz"): "getReadiness",
    ("get", "/metrics"): "getMetrics",
}

# The tags, in the order ``/docs`` shows them, with what each holds.
TAGS = [
    ("games", "Play a game: create it, take a seat, read your view, send commands, follow it "
              "live, read its events, export and audit"),
    ("game types", "The games this service hosts: each one's seats, options, commands and "
                   "views"),
    ("bots", "Bots registered from outside (webhooks, or connected to their turns' stream)"),
    ("tournaments", "Tournaments of bot games and their standings"),
    ("lobby", "Listed games: to join an open seat, or to watch"),
    ("ratings", "Ratings of the bots, across rated tournament games"),
    ("operations", "Liveness, readiness and metrics, for load balancers and operators"),
]  # fmt: skip

# (method, path, tag), in the order a client works: create a game, join, view, command, follow,
# read back; then the catalogue, bots, tournaments, the lobby, ratings, operations. Operations
# not listed keep their tag and come last.
ORDER = [
    ("post", "/v1/games", "games"),
    ("post", "/v1/games/{game_id}/seats/{seat}/join", "games"),
    ("get", "/v1/games/{game_id}", "games"),
    ("post", "/v1/games/{game_id}/commands", "games"),
    ("get", "/v1/games/{game_id}/commands/{command_id}", "games"),
    ("get", "/v1/games/{game_id}/feed", "games"),
    ("get", "/v1/games/{game_id}/events", "games"),
    ("get", "/v1/games/{game_id}/export", "games"),
    ("get", "/v1/games/{game_id}/audit", "games"),
    ("get", "/v1/games/{game_id}/suggestion", "games"),
    ("post", "/v1/games/{game_id}/seats/{seat}/leave", "games"),
    ("post", "/v1/games/{game_id}/seats/{seat}/entropy", "games"),
    ("get", "/v1/game-types", "game types"),
    ("get", "/v1/game-types/{name}", "game types"),
    ("post", "/v1/bots", "bots"),
    ("get", "/v1/bots", "bots"),
    ("get", "/v1/bots/{bot_id}", "bots"),
    ("delete", "/v1/bots/{bot_id}", "bots"),
    ("get", "/v1/bots/me/turns", "bots"),
    ("post", "/v1/bots/me/turns/{turn_id}", "bots"),
    ("post", "/v1/tournaments", "tournaments"),
    ("get", "/v1/tournaments", "tournaments"),
    ("get", "/v1/tournaments/{tournament_id}", "tournaments"),
    ("delete", "/v1/tournaments/{tournament_id}", "tournaments"),
    ("get", "/v1/tournaments/{tournament_id}/results.csv", "tournaments"),
    ("get", "/v1/tournaments/{tournament_id}/games.jsonl.gz", "tournaments"),
    ("get", "/v1/games", "lobby"),
    ("get", "/v1/ratings", "ratings"),
    ("get", "/healthz", "operations"),
    ("get", "/readyz", "operations"),
    ("get", "/metrics", "operations"),
]

GAME_ID = "$response.body#/id"
# (method, path, status) -> link name -> link. Each names its target by operationId and says
# where the target's parameters come from in this response (or request).
LINKS: dict[tuple[str, str, str], dict[str, Schema]] = {
    ("post", "/v1/games", "201"): {
        "GetGame": {"operationId": "getGame", "parameters": {"game_id": GAME_ID},
                    "description": "the new game's view (send a seat token for its seat's)"},
        "SendCommand": {"operationId": "sendCommand", "parameters": {"game_id": GAME_ID},
                        "description": "play: send a command with a seat token from `tokens`"},
        "GetEvents": {"operationId": "getEvents", "parameters": {"game_id": GAME_ID}},
        "GetFeed": {"operationId": "getFeed", "parameters": {"game_id": GAME_ID},
                    "description": "follow the game live"},
        "GetSuggestion": {"operationId": "getSuggestion", "parameters": {"game_id": GAME_ID}},
        "JoinSeat": {"operationId": "joinSeat", "parameters": {"game_id": GAME_ID, "seat": 1},
                     "description": "take an open seat (when the game was created with one)"},
        "AuditGame": {"operationId": "auditGame", "parameters": {"game_id": GAME_ID}},
        "ExportGame": {"operationId": "exportGame", "parameters": {"game_id": GAME_ID}},
    },
    ("get", "/v1/games", "200"): {
        "GetListedGame": {"operationId": "getGame",
                          "parameters": {"game_id": "$response.body#/games/0/id"}},
        "JoinListedGame": {"operationId": "joinSeat",
                           "parameters": {"game_id": "$response.body#/games/0/id", "seat": 1}},
    },
    ("get", "/v1/games/{game_id}", "200"): {
        "PlayALegalCommand": {
            "operationId": "sendCommand",
            "parameters": {"game_id": GAME_ID},
            "requestBody": "$response.body#/legal_commands/0",
            # The command as the view lists it, not mixed into a generated body.
            "x-schemathesis": {"merge_body": False},
            "description": "send one of the view's `legal_commands` as it is (same token)",
        },
        "AskForAHint": {"operationId": "getSuggestion", "parameters": {"game_id": GAME_ID}},
        "EventsSinceTheView": {
            "operationId": "getEvents",
            "parameters": {"game_id": GAME_ID, "after": "$response.body#/version"},
        },
        "FollowFromTheView": {
            "operationId": "getFeed",
            "parameters": {"game_id": GAME_ID, "after": "$response.body#/version"},
        },
    },
    ("post", "/v1/games/{game_id}/commands", "202"): {
        "GetCommandOutcome": {
            "operationId": "getCommand",
            "parameters": {"game_id": "$request.path.game_id",
                           "command_id": "$response.body#/command_id"},
        },  # fmt: skip
    },
    ("post", "/v1/games/{game_id}/commands", "200"): {
        "PlayOnFromTheNewView": {
            "operationId": "sendCommand",
            "parameters": {"game_id": "$request.path.game_id"},
            "requestBody": "$response.body#/legal_commands/0",
            "x-schemathesis": {"merge_body": False},
            "description": "when still to act: the next of the new view's `legal_commands`",
        },
        "GetGameAfterTheCommand": {"operationId": "getGame",
                                   "parameters": {"game_id": "$request.path.game_id"}},
        "GetCommandAccepted": {
            "operationId": "getCommand",
            "parameters": {"game_id": "$request.path.game_id",
                           "command_id": "$response.body#/command/command_id"},
        },  # fmt: skip
    },
    ("post", "/v1/games/{game_id}/seats/{seat}/join", "200"): {
        "GetJoinedGame": {"operationId": "getGame",
                          "parameters": {"game_id": "$request.path.game_id"},
                          "description": "with the `token` answered"},
        "LeaveTheSeat": {"operationId": "leaveSeat",
                         "parameters": {"game_id": "$request.path.game_id",
                                        "seat": "$response.body#/seat"}},
    },
    ("post", "/v1/games/{game_id}/seats/{seat}/leave", "200"): {
        "JoinAgain": {"operationId": "joinSeat",
                      "parameters": {"game_id": GAME_ID, "seat": "$request.path.seat"}},
    },
    ("get", "/v1/game-types", "200"): {
        "GetFirstGameType": {"operationId": "getGameType",
                             "parameters": {"name": "$response.body#/game_types/0/name"}},
    },
    ("post", "/v1/tournaments", "201"): {
        "GetTournament": {"operationId": "getTournament",
                          "parameters": {"tournament_id": GAME_ID}},
        "CancelTournament": {"operationId": "cancelTournament",
                             "parameters": {"tournament_id": GAME_ID}},
    },
}  # fmt: skip

# ``POST /v1/games`` bodies, from each game's spec; the other examples show the first game.
CREATE_EXAMPLES = {k: v for spec in games.specs() for k, v in spec.create_examples.items()}
_GAME = games.names()[0]
_OPTIONS = {k: v.get("default") for k, v in games.spec(_GAME).options.items()}


_HASH = "36ad6f353fd907e711a349c86d185356e486d3bbc00bb872cfe55364deff3bf9"
_CI = [0.0945, 0.9055]

# ``GET /v1/games/{id}/events?after=3`` as seat 0 of a Fox game reads it: its own move carries
# its command; the deal's other hand is redacted. ``tests/unit/test_openapi_examples.py`` keeps
# these examples to the shapes the service answers.
EVENTS_EXAMPLE: dict[str, Any] = {
    "game": "83d4d01830630ba9",
    "version": 5,
    "events": [
        {
            "version": 4, "type": "card_played",
            "data": {"seat": 0, "card": {"suit": "bells", "rank": 6}},
            "command_id": "s0-my-first-play", "seat": 0, "at": "2026-01-01T00:00:00.000Z",
            "prev_hash": "275c063fd914dfe65ffe026f14d7e78e54853de417e9db0630bb9fd9dabb3034",
            "hash": _HASH,
            "command": {"type": "play", "card": {"suit": "bells", "rank": 6}},
        },
        {
            "version": 5, "type": "card_played",
            "data": {"seat": 1, "card": {"suit": "bells", "rank": 9}},
            "command_id": "bot-1-4", "seat": 1, "at": "2026-01-01T00:00:00.150Z",
            "prev_hash": _HASH,
            "hash": "9c0f1e7d2a4b6c8e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
            "command": {"type": "play", "card": {"suit": "bells", "rank": 9}},
        },
    ],
}  # fmt: skip

_ENTRANTS = [
    {"entrant": 0, "name": "heur", "spec": {"bot": "heuristic"}, "label": "heuristic"},
    {"entrant": 1, "name": "random", "spec": {"bot": "random"}, "label": "random"},
]
_AHEAD = {"games": 2, "ahead": 1.0, "rate": 0.5, "rate_ci": _CI}
_MATRIX = {"names": ["heur", "random"], "matrix": [[None, _AHEAD], [_AHEAD, None]]}

# ``GET /v1/tournaments/{id}``: a finished two-game duplicate match.
TOURNAMENT_EXAMPLE: dict[str, Any] = {
    "id": "tccd5eb660f7e", "game": _GAME, "format": "duplicate", "players": 2,
    "options": _OPTIONS,
    "entrants": _ENTRANTS,
    "created_at": "2026-01-01T00:00:00.000Z", "finished_at": "2026-01-01T00:00:04.000Z",
    "status": "finished", "progress": {"done": 2, "total": 2}, "rated_games": 2,
    "paused": False, "paused_reason": None,
    "standings": [
        {"entrant": 0, "name": "heur", "spec": {"bot": "heuristic"}, "games": 2, "wins": 1.0,
         "win_rate": 0.5, "win_rate_ci": _CI, "mean_score": 5.0,
         "mean_score_ci": [1.08, 8.92], "mean_rank": 1.5},
        {"entrant": 1, "name": "random", "spec": {"bot": "random"}, "games": 2, "wins": 1.0,
         "win_rate": 0.5, "win_rate_ci": _CI, "mean_score": 4.5,
         "mean_score_ci": [1.56, 7.44], "mean_rank": 1.5},
    ],
    "ratings": [
        {"entrant": 1, "name": "random", "mu": 25.41, "sigma": 7.82, "mu_ci": [10.08, 40.74],
         "ordinal": 1.94},
        {"entrant": 0, "name": "heur", "mu": 24.59, "sigma": 7.82, "mu_ci": [9.26, 39.92],
         "ordinal": 1.12},
    ],
    "head_to_head": _MATRIX, "pairwise": _MATRIX, "draws": 0,
    "games": {"offset": 0, "limit": 100, "total": 2, "items": [
        {"index": 0, "id": "tccd5eb660f7e-00000", "seats": ["heur", "random"], "deal": 0,
         "finished": True},
        {"index": 1, "id": "tccd5eb660f7e-00001", "seats": ["random", "heur"], "deal": 0,
         "finished": True},
    ]},
    "candidate": None, "field": None, "sprt": None,
}  # fmt: skip

TOURNAMENTS_EXAMPLE: dict[str, Any] = {
    "tournaments": [
        {"id": "tccd5eb660f7e", "game": _GAME, "format": "duplicate",
         "entrants": ["heur", "random"], "created_at": "2026-01-01T00:00:00.000Z",
         "status": "finished", "progress": {"done": 2, "total": 2},
         "paused": False, "paused_reason": None},
    ]
}  # fmt: skip

TOURNAMENT_CREATED_EXAMPLE: dict[str, Any] = {
    "id": "tccd5eb660f7e",
    "status": "queued",
    "progress": {"done": 0, "total": 2},
    "location": "/v1/tournaments/tccd5eb660f7e",
}

# (method, path, status) -> the example of that answer.
ANSWER_EXAMPLES: dict[tuple[str, str, str], dict[str, Any]] = {
    ("get", "/v1/games/{game_id}/events", "200"): EVENTS_EXAMPLE,
    ("post", "/v1/tournaments", "201"): TOURNAMENT_CREATED_EXAMPLE,
    ("get", "/v1/tournaments", "200"): TOURNAMENTS_EXAMPLE,
    ("get", "/v1/tournaments/{tournament_id}", "200"): TOURNAMENT_EXAMPLE,
}


def install(spec: APISpec) -> None:
    """Add the contract to ``spec`` (see the module's docstring)."""
    registered = spec.components.schemas  # apispec keeps the component dicts here
    openapi_operations.add(spec)
    if "Seat" in registered:
        registered["Seat"] = _seat_shapes(registered["Seat"])
    if "CreateGame" in registered:
        registered.update(_create_per_game(registered["CreateGame"]))
    commands = _command_components()
    for name, schema in {**commands, **view_schemas.components()}.items():
        registered[name] = schema  # replaces the open-ended View of schemas.ViewSchema
    for holder in ("Created", "Joined"):
        props = registered.get(holder, {}).get("properties", {})
        if "view" in props:
            # Null only if the view is not projected yet (a join answered before its view).
            described = props["view"].get("description", "your view")
            props["view"] = {"allOf": [{"$ref": REF + "View"}], "nullable": True,
                             "description": described}  # fmt: skip
    for path, operations in spec._paths.items():  # apispec keeps the registered paths here
        for method, op in operations.items():
            if not isinstance(op, dict) or method == "parameters":
                continue
            if _reads_a_malformed_request(method, path, op):
                # A body that is not JSON, or a malformed `Prefer`, `Idempotency-Key` or
                # `Last-Event-ID` header (`request/malformed`).
                op.setdefault("responses", {}).setdefault(
                    "400", spec.components.get_ref("response", "BAD_REQUEST")
                )
            operation_id = OPERATION_IDS.get((method, path))
            if operation_id is not None:
                op.setdefault("operationId", operation_id)
            for status, response in op.get("responses", {}).items():
                links = LINKS.get((method, path, status))
                if links and isinstance(response, dict) and "$ref" not in response:
                    response["links"] = copy.deepcopy(links)
        _examples(path, operations, registered)
    openapi_problems.own_problems(spec)
    openapi_problems.problem_examples(spec)
    _order(spec)


def _order(spec: APISpec) -> None:
    """Tags and paths in ``TAGS`` and ``ORDER`` order (a path where its first operation is,
    its operations in that order), each listed operation under its tag."""
    paths = spec._paths  # apispec keeps the registered paths here
    ordered: dict[str, dict[str, Any]] = {}
    for method, path, tag in ORDER:
        if method not in paths.get(path, {}):
            continue
        item = ordered.setdefault(path, {k: v for k, v in paths[path].items() if k == "parameters"})
        item[method] = paths[path][method]
        item[method]["tags"] = [tag]
    for path, item in paths.items():  # the rest, as they were
        for key, value in item.items():
            ordered.setdefault(path, {}).setdefault(key, value)
    paths.clear()
    paths.update(ordered)
    used = {t for item in paths.values() for op in item.values() if isinstance(op, dict)
            for t in op.get("tags", [])}  # fmt: skip
    described = {t["name"]: t for t in spec._tags}  # apispec keeps the tags here
    spec._tags[:] = [{"name": name, "description": text} for name, text in TAGS if name in used]
    spec._tags.extend(t for name, t in described.items() if name in used and name not in dict(TAGS))


def _reads_a_malformed_request(method: str, path: str, op: dict[str, Any]) -> bool:
    headers = {p.get("name") for p in op.get("parameters", []) if isinstance(p, dict)}
    return method == "post" or path.endswith("/feed") or bool(headers & {"Prefer"})


def _examples(path: str, operations: dict[str, Any], registered: dict[str, Schema]) -> None:
    for (method, at, status), example in ANSWER_EXAMPLES.items():
        if at == path and method in operations and status in operations[method]["responses"]:
            _content(operations[method], status)["example"] = copy.deepcopy(example)
    views = view_schemas.examples()
    if path == "/v1/games/{game_id}":
        _content(operations["get"], "200")["examples"] = copy.deepcopy(views)
    elif path == "/v1/games" and "post" in operations:
        body = operations["post"].get("requestBody", {}).get("content", {})
        if "application/json" in body:
            body["application/json"]["examples"] = copy.deepcopy(CREATE_EXAMPLES)
        _content(operations["post"], "201")["example"] = _created_example(views)
    elif path == "/v1/games/{game_id}/commands" and "post" in operations:
        content = operations["post"]["requestBody"]["content"]["application/json"]
        content["schema"] = {
            "anyOf": [{"$ref": view_schemas.command_ref(g)} for g in view_schemas.GAMES]
            + [{"$ref": REF + "ContributeCommand"}]
            + [
                {"$ref": REF + name}
                for name in _any_game_commands(content.get("schema", {}), registered)
            ],
            "description": "a command of the game's type (GET /v1/game-types lists them; the "
            "view's `legal_commands` lists those you may send now)",
        }
        accepted = dict(views[f"{_GAME}-seat"]["value"])
        accepted["command"] = {"command_id": "s1-a1b2", "status": "accepted", "events": 1}
        _content(operations["post"], "200")["example"] = accepted


def _any_game_commands(body: Schema, registered: dict[str, Schema]) -> list[str]:
    """The commands of any game (``resign``...) among the variants ``routes`` documents, as
    components (``ResignCommand``); the games' own are registered per game already."""
    names = []
    prefixes = tuple(f"{g} " for g in view_schemas.GAMES)
    for variant in body.get("anyOf", []):
        title = str(variant.get("title", ""))
        if not title or title.startswith(prefixes):
            continue
        name = "".join(p.capitalize() for p in title.split("_")) + "Command"
        schema = to_openapi30(copy.deepcopy(variant))
        schema.setdefault("properties", {}).update(_envelope())
        registered[name] = schema
        names.append(name)
    return names


def _content(op: dict[str, Any], status: str) -> dict[str, Any]:
    response = op["responses"][status]
    content: dict[str, Any] = response["content"]["application/json"]
    return content


def _created_example(views: dict[str, Any]) -> dict[str, Any]:
    public = views[f"{_GAME}-public"]["value"]
    tokens = ["q1c5d6VfUu8bQ3o2kQmY1zkVvJ2hYt3A", "Zx8WcE0r5nDq1YbS2Lw7tPaK9mHj4Gf6"]
    return {
        "id": public["id"],
        "game": _GAME,
        "version": public["version"],
        "seats": [
            {"seat": i, "name": s["name"], "token": tokens[i]}
            for i, s in enumerate(public["seats"])
        ],  # fmt: skip
        "tokens": tokens,
        "view": public,
    }


def _seat_shapes(seat: Schema) -> Schema:
    """``Seat`` as one of its three shapes (a player, a bot with its settings, an open seat),
    which marshmallow's flat schema (every field optional) cannot say."""
    props = seat.get("properties", {})
    shapes: list[Schema] = [
        {"type": "object", "title": "a player", "required": ["name"],
         "properties": {"name": props.get("name", {"type": "string"})},
         "additionalProperties": False},
        {"type": "object", "title": "an open seat (the lobby)", "required": ["open"],
         "properties": {"open": {**props.get("open", {}), "type": "boolean", "enum": [True]}},
         "additionalProperties": False},
    ]  # fmt: skip
    for kind in bots.BOTS.values():
        properties: Schema = {"bot": {"type": "string", "enum": [kind.name],
                                      "description": kind.description}}  # fmt: skip
        for setting, (low, high) in kind.settings.items():
            properties[setting] = {**props.get(setting, {}), "type": "integer",
                                   "minimum": low, "maximum": high}  # fmt: skip
        shape = {"type": "object", "title": f"a bot: {kind.name}", "required": ["bot"],
                 "properties": properties, "additionalProperties": False}  # fmt: skip
        if len(kind.one_of) > 1:
            shape["description"] = f"give at most one of {' or '.join(kind.one_of)}"
        shapes.append(shape)
    return {
        "description": "A seat: a player (`name`: the answer gives its secret token), a bot "
        "(`bot`, with its settings) or an open seat anyone may join (`open`)",
        "oneOf": shapes,
        "example": {"name": "ana"},
    }


def _create_per_game(create: Schema) -> dict[str, Schema]:
    """``CreateGame`` as one of a body per game (``CreateFoxGame``...): the game's name, its
    seat limits and its options (the catalogue's) in place of any game, seats and options."""
    out: dict[str, Schema] = {}
    mapping: dict[str, str] = {}
    for entry in catalogue.catalogue():
        name = f"Create{entry['name'].capitalize()}Game"
        body = copy.deepcopy(create)
        props = body.setdefault("properties", {})
        body["title"] = f"a game of {entry['title']}"
        props["game"] = {"type": "string", "enum": [entry["name"]]}
        props.setdefault("seats", {}).update(
            minItems=entry["seats"]["min"], maxItems=entry["seats"]["max"]
        )
        props["options"] = to_openapi30(entry["options"])
        out[name] = body
        mapping[entry["name"]] = REF + name
    out["CreateGame"] = {
        "description": "Body of `POST /v1/games`: the game (see GET /v1/game-types), its seats "
        "in order, its options",
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "game", "mapping": mapping},
    }
    return out


def _command_components() -> dict[str, Schema]:
    """Per game, one component per command (``FoxPlay``...) and ``FoxCommand``: one of them by
    ``type``; and ``ContributeCommand`` (a client seed, in any game of contributed fairness)."""
    envelope = _envelope()
    out: dict[str, Schema] = {}
    for entry in catalogue.catalogue():
        game = entry["name"]
        mapping: dict[str, str] = {}
        for command in entry["commands"]:
            kind = command["properties"]["type"]["const"]
            name = game.capitalize() + "".join(p.capitalize() for p in kind.split("_"))
            schema = to_openapi30({k: v for k, v in command.items() if k != "examples"})
            schema["title"] = f"{entry['title']}: {kind}"
            schema["properties"].update(copy.deepcopy(envelope))
            if command.get("examples"):
                schema["example"] = command["examples"][0]
            out[name] = schema
            mapping[kind] = REF + name
        out[f"{game.capitalize()}Command"] = {
            "title": f"{entry['title']}: a command",
            "description": f"any command of {entry['title']}, by its `type`",
            "oneOf": [{"$ref": ref} for ref in mapping.values()],
            "discriminator": {"propertyName": "type", "mapping": mapping},
        }
    out["ContributeCommand"] = {
        **copy.deepcopy(view_schemas.CONTRIBUTE),
        "title": "contribute: a client seed",
        "example": {
            "type": view_schemas.CONTRIBUTE_TYPE,
            "client_seed": "9f86d081884c7d659a2feaa0c55ad015",
        },
    }
    out["ContributeCommand"]["properties"].update(copy.deepcopy(envelope))
    return out


def _envelope() -> dict[str, Schema]:
    """The fields any command may add, from ``schemas.CommandSchema`` (its validators)."""
    fields = schemas.CommandSchema().fields
    pattern = fields["id"].validators[0].regex.pattern  # type: ignore[attr-defined]
    return {
        "id": {
            "type": "string",
            "pattern": pattern,
            "description": fields["id"].metadata["description"],
        },  # fmt: skip
        "expected_version": {
            "type": "integer",
            "minimum": 0,
            "description": "409 `game/stale_version` unless the game is at this version (the "
            "view's `version`). In a simultaneous phase (seats acting at once) the version you "
            "read stands while you are still to act and every event since is another seat's "
            "move in the same phase: other seats' moves do not make it stale; a new phase or "
            "round does",
        },
    }


def to_openapi30(schema: Any) -> Any:
    """A JSON Schema (the catalogue's) in OpenAPI 3.0's dialect: ``const`` as a one-value
    ``enum``, a ``null`` type (or a null branch of ``anyOf``) as ``nullable``, several types as
    ``anyOf``, ``examples`` as ``example``."""
    if isinstance(schema, list):
        return [to_openapi30(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: to_openapi30(v) for k, v in schema.items()}
    if "const" in out:
        out["enum"] = [out.pop("const")]
    if isinstance(out.get("enum"), list) and None in out["enum"]:
        out["nullable"] = True
    if "examples" in out and isinstance(out["examples"], list):
        examples = out.pop("examples")
        if examples:
            out["example"] = examples[0]
    kinds = out.get("type")
    if isinstance(kinds, list):
        rest = [k for k in kinds if k != "null"]
        if len(rest) < len(kinds):
            out["nullable"] = True
        if len(rest) == 1:
            out["type"] = rest[0]
        else:
            del out["type"]
            out["anyOf"] = [{"type": k} for k in rest]
    if isinstance(out.get("anyOf"), list):
        branches = [b for b in out["anyOf"] if b != {"type": "null"}]
        if len(branches) < len(out["anyOf"]):
            out["nullable"] = True
            if len(branches) == 1 and set(out) == {"anyOf", "nullable"}:
                return {**branches[0], "nullable": True}
            out["anyOf"] = branches
    return out
