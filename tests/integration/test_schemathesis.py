"""The OpenAPI document, tried by a fuzzer: schemathesis generates requests for every operation
from the generated document and checks that none gets a 5xx and every response is one the
document describes (status, content type, body schema)."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.integration.conftest import AUDITOR, ORGANIZER, Stack

# The feed streams until the game ends: not a request-response operation to fuzz.
STREAMING = "/v1/games/{game_id}/feed"
EXAMPLES = 40
# No 5xx, and only documented statuses, content types and bodies. (Whether schema-valid data is
# accepted is not checked: a seat must be a name or a bot, which the schema cannot say.)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]  # fmt: skip


def test_no_server_error_and_no_undocumented_response(stack: Stack) -> None:
    api = schemathesis.openapi.from_wsgi("/openapi.json", stack.app)
    # Real games for the path parameters, so that requests reach past "no such game": a Fox
    # game between two players (its seat token), a Skye game, and a tournament.
    fox = stack.http.post(
        "/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    ).get_json()
    skye = stack.http.post("/v1/games", json={"game": "skye", "seats": [{"name": "a"}] * 2})
    tournament = stack.http.post(
        "/v1/tournaments",
        json={"game": "fox", "entrants": [{"bot": "random"}] * 2, "games": 2,
              "options": {"target": 1}},
        headers={"Authorization": f"Bearer {ORGANIZER}"},
    ).get_json()  # fmt: skip
    ids = {
        "game_id": [fox["id"], skye.get_json()["id"], "no-such-game"],
        "tournament_id": [tournament["id"], "no-such-tournament"],
    }
    callers = [
        {},
        {"Authorization": f"Bearer {fox['tokens'][0]}"},
        {"Authorization": f"Bearer {ORGANIZER}"},
        {"Authorization": f"Bearer {AUDITOR}"},
    ]
    failures: list[str] = []
    tried = 0
    for result in api.get_all_operations():
        operation = result.ok()
        if operation.path == STREAMING:
            continue
        tried += 1

        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(case=operation.as_strategy(), pick=st.integers(0, 11))
        def fuzz(case, pick: int) -> None:  # type: ignore[no-untyped-def]
            for name, choices in ids.items():
                if case.path_parameters and name in case.path_parameters:
                    case.path_parameters[name] = choices[pick % len(choices)]
            headers = {**(case.headers or {}), **callers[pick % len(callers)]}
            # A generated `Prefer: wait=N` would hold each example up to N seconds.
            headers.pop("Prefer", None)
            case.headers = headers
            case.call_and_validate(checks=CHECKS)

        try:
            fuzz()
        except Exception as exc:  # collect every operation's finding, then fail once
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}"[:2000])
    assert tried >= 20
    assert not failures, "\n\n".join(failures)
