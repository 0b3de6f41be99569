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
