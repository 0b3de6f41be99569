"""The checked-in OpenAPI document is the one the code generates."""

from __future__ import annotations

import json
from pathlib import Path

from services.gateway.openapi_dump import spec

ROOT = Path(__file__).resolve().parents[2]


def test_checked_in_openapi_matches_the_code() -> None:
    generated = json.loads(json.dumps(spec(), sort_keys=True))
    checked_in = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    assert generated == checked_in, "run `make openapi` and commit openapi/openapi.json"


def test_every_endpoint_of_the_contract_is_documented() -> None:
    paths = spec()["paths"]
    for path, method in [
        ("/v1/games", "post"),
        ("/v1/games/{game_id}", "get"),
        ("/v1/games/{game_id}/commands", "post"),
        ("/v1/games/{game_id}/events", "get"),
        ("/healthz", "get"),
    ]:
        assert method in paths[path]


def test_the_problem_body_lists_every_code_of_the_catalogue() -> None:
    from shared.app.errors import CATALOGUE, ErrorCode

    problem = spec()["components"]["schemas"]["Problem"]["properties"]["code"]
    assert problem["enum"] == [c.value for c in ErrorCode]
    assert set(CATALOGUE) == set(ErrorCode)


def test_the_document_is_valid_openapi() -> None:
    from openapi_spec_validator import validate

    validate(json.loads((ROOT / "openapi" / "openapi.json").read_text()))  # raises if not


def test_the_problems_an_endpoint_names_are_problem_bodies() -> None:
    """Each error status an endpoint documents itself (``blueprint.problems``), not by
    reference to the shared responses, has its own description and a problem body."""
    own = [
        (f"{method} {path} {status}", response)
        for path, item in spec()["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict)
        for status, response in operation.get("responses", {}).items()
        # (/readyz's 503 is its readiness report, as its 200 is: not a problem)
        if status[0] in "45" and "$ref" not in response and path != "/readyz"
    ]
    assert len(own) >= 9, own
    for where, response in own:
        assert response["description"], where
        assert list(response["content"]) == ["application/problem+json"], where
        content = response["content"]["application/problem+json"]
        assert content["schema"] == {"$ref": "#/components/schemas/Problem"}, where
        # With an example of its own status (tests/integration/test_openapi_examples.py).
        assert "example" in content or "examples" in content, where
    named = dict(own)
    assert named["post /v1/games/{game_id}/commands 409"]["description"] == (
        "expected_version is stale, or the game is over"
    )
