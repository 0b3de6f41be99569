"""The gateway's parsing shortcuts agree with the schemas they skip: a command body the hand
check passes is one ``CommandSchema`` loads to the same dict, and an empty query string needs
no parsing only where the schema loads it as ``{}``."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway import routes, schemas

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False), st.text(max_size=120),
)  # fmt: skip
IDS = st.one_of(st.from_regex(r"[A-Za-z0-9_.:-]{1,100}", fullmatch=True), SCALARS)
VERSIONS = st.one_of(st.integers(min_value=-3, max_value=2**54), SCALARS)
BODIES = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(st.text(min_size=0, max_size=70), SCALARS),
        "id": IDS,
        "expected_version": VERSIONS,
        "card": st.one_of(SCALARS, st.dictionaries(st.text(max_size=5), SCALARS, max_size=3)),
    },
)


def test_the_fast_path_is_on_for_todays_schema() -> None:
    # If CommandSchema changes shape, the shortcut turns itself off (and this says so).
    assert routes._FAST_FIELDS is not None


@settings(max_examples=800, deadline=None)
@given(body=st.one_of(BODIES, SCALARS, st.lists(SCALARS, max_size=2)))
def test_a_body_the_hand_check_passes_loads_to_itself(body: Any) -> None:
    if not routes._command_body_ok(body):
        return  # the schema decides, as before
    loaded = schemas.CommandSchema().load(body)
    assert loaded == body
    assert list(loaded)[0] == "type"


@settings(max_examples=400, deadline=None)
@given(body=BODIES)
def test_every_body_the_schema_takes_unchanged_without_id_issues_is_fast(body: Any) -> None:
    # The shortcut is not a stricter schema in disguise: what the schema loads to itself, with
    # exact types, passes it.
    try:
        loaded = schemas.CommandSchema().load(body)
    except ma.ValidationError:
        assert not routes._command_body_ok(body)
        return
    exact = all(
        type(body[k]) is t for k, t in (("type", str), ("id", str), ("expected_version", int))
        if k in body
    )  # fmt: skip
    assert routes._command_body_ok(body) == (loaded == body and exact)


def test_empty_query_shortcut_only_where_the_schema_loads_nothing() -> None:
    assert routes._empty_query_loads_empty(schemas.ViewQuerySchema())
    assert not routes._empty_query_loads_empty(schemas.EventsQuerySchema())  # has defaults
    assert not routes._empty_query_loads_empty(schemas.ListGamesQuerySchema())
