"""The gateway has one path per request, no twin made for speed (issue 27): every body and
query is loaded by its marshmallow schema, once per request; a waited command's answer is
the stored view with the command added, built as JSON whatever the view's spelling."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import marshmallow as ma
import pytest

from services.gateway import command_routes, schemas
from services.gateway.app import create_app
from shared.bootstrap import bootstrap
from shared.config import Settings


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many times each schema class loaded something."""
    seen: Counter[str] = Counter()
    plain = ma.Schema.load

    def counted(self: ma.Schema, *args: Any, **kwargs: Any) -> Any:
        seen[type(self).__name__] += 1
        return plain(self, *args, **kwargs)

    monkeypatch.setattr(ma.Schema, "load", counted)
    yield seen


@pytest.fixture
def http() -> Any:
    settings = Settings(rate_limits={})
    return create_app(settings, application=bootstrap(settings, backend="memory")).test_client()


def _game(http: Any) -> tuple[str, dict[str, str], dict[str, Any]]:
    created = http.post("/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201, created.get_json()
    doc = created.get_json()
    seat = doc["view"]["to_act"][0]
    auth = {"Authorization": f"Bearer {doc['tokens'][seat]}"}
    view = http.get(f"/v1/games/{doc['id']}", headers=auth).get_json()
    return doc["id"], auth, view["legal_commands"][0]


def test_a_command_body_is_loaded_by_its_schema_once(http: Any, loads: Counter[str]) -> None:
    game_id, auth, command = _game(http)
    loads.clear()
    sent = http.post(f"/v1/games/{game_id}/commands", json={**command, "id": "c1"}, headers=auth)
    assert sent.status_code == 202, sent.get_json()
    assert loads["CommandSchema"] == 1
    # A refusal is the schema's own, from the same single load.
    loads.clear()
    bad = http.post(f"/v1/games/{game_id}/commands", json={"expected_version": "1"}, headers=auth)
    assert bad.status_code == 422 and "type" in bad.get_json()["errors"]
    assert loads["CommandSchema"] == 1


def test_an_empty_query_is_loaded_by_its_schema(http: Any, loads: Counter[str]) -> None:
    game_id, auth, _ = _game(http)
    loads.clear()
    assert http.get(f"/v1/games/{game_id}", headers=auth).status_code == 200
    assert loads[schemas.ViewQuerySchema.__name__] == 1


@pytest.mark.parametrize(
    "stored",
    [b'{"to_act":[0],"version":3}', b'{"to_act": [0], "version": 3}\n', b"{ }", b'{\n  "a": 1\n}'],
)
def test_a_waited_answer_is_the_view_with_the_command(stored: bytes) -> None:
    outcome = {"status": "accepted", "command_id": "s0-c1", "events": ["played"], "version": 3}
    answer = command_routes._outcome_response(None, "g1", 0, outcome, {"X": "1"}, stored)  # type: ignore[arg-type]
    assert answer.status_code == 200 and answer.headers["X"] == "1"
    body = json.loads(answer.get_data())
    command = {"command_id": "s0-c1", "status": "accepted", "events": ["played"]}
    assert body == {**json.loads(stored), "command": command}
    assert list(body)[-1] == "command"  # after the view's own fields, as documented
