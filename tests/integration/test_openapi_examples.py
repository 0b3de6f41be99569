"""Issue 37, items 3: the document a client reads at ``/docs`` starts where a client starts
(create a game, join, view, command, follow, read back; then bots, tournaments, the lobby,
ratings, operations); every example of an answer holds to its response's schema, and every
error example is a real problem body of its own status; every problem ``type`` the document
or the service names is a page saying what it means and what to do."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from schemathesis.specs.openapi.converter import to_json_schema

from services.gateway import problem_pages
from services.gateway.problems import PROBLEM_TYPE
from shared.app.errors import CATALOGUE, ErrorCode
from tests.integration.api import problem
from tests.integration.conftest import Stack

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("get", "post", "put", "patch", "delete")


def _document(stack: Stack) -> dict[str, Any]:
    resp = stack.http.get("/openapi.json")
    assert resp.status_code == 200
    doc: dict[str, Any] = json.loads(resp.get_data(as_text=True))  # in the order it is served
    return doc


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def _resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        *_, kind, name = node["$ref"].split("/")
        node = doc["components"][kind][name]
    return node


def _examples(doc: dict[str, Any]) -> list[tuple[str, str, str, Any, dict[str, Any]]]:
    """(where, status, media type, example, schema) for every example of an answer."""
    out = []
    for method, path, op in _operations(doc):
        for status, response in op.get("responses", {}).items():
            for media, content in _resolve(doc, response).get("content", {}).items():
                where = f"{method.upper()} {path} {status} {media}"
                if "example" in content:
                    out.append((where, status, media, content["example"], content["schema"]))
                for key, named in content.get("examples", {}).items():
                    out.append((f"{where} {key}", status, media, named["value"], content["schema"]))
    return out


def _validator(doc: dict[str, Any], schema: dict[str, Any]) -> Any:
    components = {
        name: to_json_schema(s, "nullable", is_response_schema=True)
        for name, s in doc["components"]["schemas"].items()
    }
    root = {**to_json_schema(schema, "nullable", is_response_schema=True),
            "components": {"schemas": components}}  # fmt: skip
    return jsonschema_rs.Draft4Validator(root)


def test_the_document_lists_operations_in_the_order_a_client_works(stack: Stack) -> None:
    doc = _document(stack)
    assert [t["name"] for t in doc["tags"]] == [
        "games", "game types", "bots", "tournaments", "lobby", "ratings", "operations"
    ]  # fmt: skip
    ids = [op["operationId"] for _, _, op in _operations(doc)]
    first = ["createGame", "joinSeat", "getGame", "sendCommand", "getCommand", "getFeed",
             "getEvents", "exportGame", "auditGame"]  # fmt: skip
    assert [i for i in ids if i in first] == first
    assert ids[0] == "createGame"
    # Swagger UI shows the tags in their order, each tag's operations in the document's.
    by_tag: dict[str, list[str]] = {t["name"]: [] for t in doc["tags"]}
    for _, _, op in _operations(doc):
        assert len(op["tags"]) == 1, op["operationId"]
        by_tag[op["tags"][0]].append(op["operationId"])
    assert by_tag["games"][: len(first)] == first
    assert by_tag["lobby"] == ["listGames"]
    assert by_tag["ratings"] == ["getRatings"]
    assert by_tag["operations"] == ["getHealth", "getReadiness", "getMetrics"]
    assert by_tag["bots"][:2] == ["registerBot", "listBots"]
    assert by_tag["tournaments"][:2] == ["createTournament", "listTournaments"]
    # The checked-in document keeps the same order (`make openapi`).
    checked_in = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    assert list(checked_in["paths"]) == list(doc["paths"])
    assert checked_in["tags"] == doc["tags"]


def test_the_operations_endpoints_are_documented_and_answer_as_documented(stack: Stack) -> None:
    doc = _document(stack)
    for path in ("/healthz", "/readyz", "/metrics"):
        assert doc["paths"][path]["get"]["tags"] == ["operations"], path
    ready = stack.http.get("/readyz")
    schema = doc["paths"]["/readyz"]["get"]["responses"][str(ready.status_code)]
    check = _validator(doc, schema["content"]["application/json"]["schema"])
    assert check.is_valid(ready.get_json()), ready.get_json()
    metrics = stack.http.get("/metrics")
    assert metrics.status_code == 200 and metrics.mimetype == "text/plain"
    assert "text/plain" in doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"]


def test_getting_a_bot_documents_its_problems(stack: Stack) -> None:
    responses = _document(stack)["paths"]["/v1/bots/{bot_id}"]["get"]["responses"]
    assert {"401", "403", "404"} <= set(responses)
    assert "bot/not_found" in responses["404"]["description"]
    problem(stack.http.get("/v1/bots/no-such-bot"), 404, "bot/not_found")
    problem(stack.http.get("/v1/bots/x", headers={"Authorization": "Basic x"}), 401)


def test_every_example_holds_to_its_schema_and_an_error_to_its_status(stack: Stack) -> None:
    doc = _document(stack)
    examples = _examples(doc)
    errors = [e for e in examples if e[1][0] in "45" or e[1] == "default"]
    assert len(errors) > 100, len(errors)  # every operation has some
    for where, status, media, example, schema in examples:
        found = [f"{list(e.instance_path)}: {e.message}"[:300]
                 for e in _validator(doc, schema).iter_errors(example)]  # fmt: skip
        assert not found, (where, found[:3])
        if media != PROBLEM_TYPE:
            continue
        assert set(example) >= {"type", "title", "status", "detail", "code", "errors"}, where
        if status == "default":
            assert example["status"] >= 400, where
        else:
            assert example["status"] == int(status), where
        assert example["type"] == f"/problems/{example['code']}", where
        assert CATALOGUE[ErrorCode(example["code"])][0] == example["status"] or (
            example["code"] == "http/error"
        ), where
        for field, messages in example["errors"].items():
            assert isinstance(messages, list) and all(isinstance(m, str) for m in messages), (
                where,
                field,
            )
    codes = {e[3]["code"] for e in errors if e[2] == PROBLEM_TYPE}
    assert len(codes) >= 12, codes  # not one code for every status


def test_an_error_example_has_the_shape_of_a_real_answer(stack: Stack) -> None:
    doc = _document(stack)
    shared = doc["components"]["responses"]["UNPROCESSABLE_ENTITY"]["content"][PROBLEM_TYPE]
    real = problem(stack.http.post("/v1/games", json={"game": "fox", "seats": [{"bot": "x"}]}),
                   422, "request/invalid")  # fmt: skip
    assert set(shared["example"]) == set(real)
    assert all(isinstance(v, list) for v in real["errors"].values())
    assert shared["example"]["errors"] and all(
        isinstance(v, list) for v in shared["example"]["errors"].values()
    )


def _type_uris(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set().union(*(_type_uris(v) for v in node.values()), set())
    if isinstance(node, list):
        return set().union(*(_type_uris(v) for v in node), set())
    if isinstance(node, str) and re.fullmatch(r"/problems/[a-z_]+/[a-z_]+", node):
        return {node}
    return set()


def test_every_problem_type_is_a_page(stack: Stack) -> None:
    named = _type_uris(_document(stack))
    assert "/problems/request/invalid" in named and len(named) >= 12, named
    every = named | {problem_pages.problem_type(c.value) for c in ErrorCode}
    for uri in sorted(every):
        page = stack.http.get(uri)
        assert page.status_code == 200 and page.mimetype == "text/html", uri
        text = page.get_data(as_text=True)
        assert "What it means" in text and "What to do" in text, uri
        answer = stack.http.get(uri, headers={"Accept": "application/json"})
        assert answer.status_code == 200 and answer.mimetype == "application/json", uri
        body = answer.get_json()
        code = uri.removeprefix("/problems/")
        assert body["code"] == code and body["type"] == uri
        assert body["status"] == CATALOGUE[ErrorCode(code)][0]
        assert body["means"] and body["todo"]
    problem(stack.http.get("/problems/no/such"), 404, "http/not_found")
    index = stack.http.get("/problems", headers={"Accept": "application/json"}).get_json()
    assert {p["code"] for p in index["problems"]} == {c.value for c in ErrorCode}


def test_a_real_problem_body_names_a_page(stack: Stack) -> None:
    body = problem(stack.http.get("/v1/games/no-such-game"), 404, "game/not_found")
    page = stack.http.get(body["type"], headers={"Accept": "application/json"})
    assert page.status_code == 200 and page.get_json()["code"] == "game/not_found"


# A code in the source: a string literal of a known family (``"seat/taken"``).
_FAMILIES = sorted({c.value.split("/")[0] for c in ErrorCode})
_LITERAL = re.compile(rf"""["']((?:{"|".join(_FAMILIES)})/[a-z_]+)["']""")


@pytest.mark.parametrize("where", ["services", "shared"])
def test_every_code_the_service_can_answer_has_a_page(where: str) -> None:
    """The catalogue has every code the source spells out, and a page for each of its codes."""
    assert set(problem_pages.PAGES) == set(ErrorCode) == set(CATALOGUE)
    spelled = {
        code for path in (ROOT / where).rglob("*.py") for code in _LITERAL.findall(path.read_text())
    }
    assert spelled, where
    assert spelled <= {c.value for c in ErrorCode}, spelled - {c.value for c in ErrorCode}
