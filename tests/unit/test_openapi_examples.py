"""Issue 25: the OpenAPI document shows an example of events and of tournament answers, and each
example has the shape the service really answers (its keys, row by row), so it cannot drift."""

from __future__ import annotations

from typing import Any

from services.gateway import openapi_contract as contract
from services.gateway.openapi_dump import spec
from shared.adapters.memory import FixedClock
from shared.app import commands, creation, queries, tournament_views, tournaments
from shared.app.messages import CommandMessage
from shared.bootstrap import bootstrap
from shared.config import Settings


def _example(method: str, path: str, status: str) -> Any:
    content = spec()["paths"][path][method]["responses"][status]["content"]["application/json"]
    assert "example" in content, (method, path, status)
    return content["example"]


def test_events_and_tournament_answers_have_examples() -> None:
    for (method, path, status), example in contract.ANSWER_EXAMPLES.items():
        assert _example(method, path, status) == example
    assert {"/v1/games/{game_id}/events", "/v1/tournaments", "/v1/tournaments/{tournament_id}"} <= {
        path for _, path, _ in contract.ANSWER_EXAMPLES
    }


def _same_shape(example: Any, real: Any, where: str = "") -> None:
    """The example's keys are the real answer's, in every object of the first row of a list."""
    if isinstance(real, dict):
        assert isinstance(example, dict), where
        assert set(example) == set(real), (where, set(example) ^ set(real))
        for key, value in real.items():
            if value is not None and example[key] is not None:
                _same_shape(example[key], value, f"{where}.{key}")
    elif isinstance(real, list) and real and isinstance(real[0], dict | list):
        assert isinstance(example, list) and example, where
        _same_shape(example[0], real[0], f"{where}[0]")


def test_the_examples_have_the_shape_of_real_answers() -> None:
    app = bootstrap(Settings(), backend="memory", clock=FixedClock())
    body = {
        "game": "fox",
        "entrants": [{"name": "heur", "bot": "heuristic"}, {"bot": "random"}],
        "games": 2,
        "format": "duplicate",
        "seed": "docs-example",
        "options": {"target": 1},
    }
    tid, _ = tournaments.create_tournament(app, body, max_games=100)
    tournaments.play_games(app, tid, [0, 1])
    _same_shape(contract.TOURNAMENT_EXAMPLE, tournament_views.tournament_doc(app, tid))
    listed = {"tournaments": tournament_views.list_tournaments(app)}
    _same_shape(contract.TOURNAMENTS_EXAMPLE, listed)

    gid = creation.create_game(
        app, "fox", [{"name": "ana"}, {"name": "bo"}], options={"first_dealer": 1}, seed="docs"
    ).game_id
    for seat, cid in ((0, "s0-a"), (1, "s1-b")):
        seen = queries.view(app, gid, seat)
        assert seen is not None
        # A Fox (3) or a Woodcutter (5) would ask its player for one more command first.
        plain = [c for c in seen["legal_commands"] if c["card"]["rank"] not in (3, 5)]
        command = plain[0]
        message = CommandMessage(command_id=cid, game_id=gid, seat=seat, body=command)
        assert commands.decide_command(app, message)["status"] == "accepted"
    real = queries.events(app, gid, queries.Caller("seat", 0), after=3)
    assert [e["type"] for e in real["events"]][:2] == ["card_played", "card_played"]
    _same_shape(contract.EVENTS_EXAMPLE, real)
    for example, event in zip(contract.EVENTS_EXAMPLE["events"], real["events"], strict=False):
        _same_shape(example, event)
