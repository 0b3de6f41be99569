"""Random input never gets a 500 and never changes a game unless it is accepted."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.conftest import Stack

# Numbers past 64 bits, and past what JSON clients carry exactly, once gave a 500.
big_ints = st.sampled_from([2**53, 2**63, 2**64, -(2**63) - 1, 10**30])
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | big_ints
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

FIELDS = [
    "card",
    "disc",
    "count",
    "seat",
    "index",
    "tile",
    "x",
    "y",
    "rotation",
    "prices",
    "discard",
    "expected_version",
    "id",
]
TYPES = [
    "play",
    "exchange_decree",
    "keep_decree",
    "return_card",
    "place",
    "bid",
    "pass",
    "flip",
    "pick_disc",
    "discard",
    "choose_starter",
    "set_prices",
    "buy",
]

commands = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.sampled_from(TYPES) | st.text(max_size=8)},
        optional={f: json_values | st.integers(-3, 80) | big_ints for f in FIELDS},
    ),
)

SEATS = {"fox": 2, "skull": 3, "skye": 2}
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
OK = {200, 202, 400, 401, 403, 404, 409, 422}


def _game(stack: Stack, game: str) -> tuple[str, list[str]]:
    seats = [{"name": f"p{i}"} for i in range(SEATS[game])]
    body = stack.http.post("/v1/games", json={"game": game, "seats": seats}).get_json()
    return body["id"], body["tokens"]


def _fuzz_commands(stack: Stack, game: str, data: st.DataObject) -> None:
    gid, tokens = _game(stack, game)
    for _ in range(6):
        before = stack.http.get(f"/v1/games/{gid}").get_json()
        seat = data.draw(st.integers(0, len(tokens) - 1))
        body = data.draw(commands)
        resp = stack.http.post(
            f"/v1/games/{gid}/commands",
            data=json.dumps(body),
            content_type="application/json",
            headers={"Authorization": f"Bearer {tokens[seat]}", "Prefer": "wait=5"},
        )
        assert resp.status_code in OK, (body, resp.get_data(as_text=True))
        if resp.status_code >= 400:
            assert resp.mimetype == "application/problem+json"
            problem = resp.get_json()
            assert {"type", "title", "status", "detail"} <= set(problem)
            assert stack.http.get(f"/v1/games/{gid}").get_json() == before


@FUZZ
@given(data=st.data())
def test_fox_commands_fuzz(stack: Stack, data: st.DataObject) -> None:
    _fuzz_commands(stack, "fox", data)


@FUZZ
@given(data=st.data())
def test_skull_commands_fuzz(stack: Stack, data: st.DataObject) -> None:
    _fuzz_commands(stack, "skull", data)


@FUZZ
@given(data=st.data())
def test_skye_commands_fuzz(stack: Stack, data: st.DataObject) -> None:
    _fuzz_commands(stack, "skye", data)


option_values = st.dictionaries(
    st.sampled_from(
        [
            "target",
            "first_dealer",
            "deal",
            "first_player",
            "next_starter",
            "advanced_variant",
            "scoring_tiles",
        ]
    )
    | st.text(max_size=8),
    json_values | st.integers(-3, 40) | big_ints,
    max_size=3,
)


@FUZZ
@given(
    game=st.sampled_from(["fox", "skull", "skye", "chess"]),
    seats=st.integers(0, 13),
    options=json_values | option_values,
    raw=st.booleans(),
)
def test_create_fuzz(stack: Stack, game: str, seats: int, options: object, raw: bool) -> None:
    body: object = {
        "game": game,
        "seats": [{"name": f"p{i}"} for i in range(seats)],
        "options": options,
    }
    if raw:
        body = options
    resp = stack.http.post("/v1/games", data=json.dumps(body), content_type="application/json")
    assert resp.status_code in OK | {201}, (body, resp.get_data(as_text=True))
    if resp.status_code >= 400:
        assert resp.mimetype == "application/problem+json"


@FUZZ
@given(
    query=st.dictionaries(
        st.sampled_from(["after", "limit", "seat", "x"]),
        st.integers().map(str) | big_ints.map(str) | st.text(max_size=6),
        max_size=3,
    )
)
def test_query_fuzz(stack: Stack, query: dict[str, str]) -> None:
    gid, tokens = _game(stack, "fox")
    for path in (f"/v1/games/{gid}", f"/v1/games/{gid}/events"):
        resp = stack.http.get(
            path, query_string=query, headers={"Authorization": f"Bearer {tokens[0]}"}
        )
        assert resp.status_code in OK, (path, query, resp.get_data(as_text=True))
        if resp.status_code >= 400:
            assert resp.mimetype == "application/problem+json"
