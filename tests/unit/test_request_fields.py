"""Request fields that used to pass changed or unchecked: a number that is no integer where an
integer is asked for (1.5 was stored as 1, "2" as 2), and names with control or format
characters (a NUL, an ANSI escape, a bidi override, a line separator). Each is a 422 naming
the field, at the gateway and in the application under it."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.app import create_app
from shared.app import commands, creation, service_commands
from shared.app.messages import CommandMessage
from shared.bootstrap import bootstrap
from shared.config import Settings
from shared.games.errors import GameError
from shared.tournaments import plan
from tests.unit.test_handlers import drain

ORGANIZER = "organizer-key-1"
NOT_INTEGERS = [1.5, "2", True, 2.0]
BAD_NAMES = [
    "a\x00b",  # NUL
    "\x1b[31mred",  # an ANSI escape (Cc)
    "tab\there",
    "line\nbreak",
    "\x7f",
    "\u0085next line",  # C1 control
    "\u202eevil",  # right-to-left override (Cf)
    "a\u2066b",  # left-to-right isolate (Cf)
    "zero\u200bwidth",  # zero width space (Cf)
    "\ufeffbom",
    "a\u2028b",  # line separator (Zl)
    "a\u2029b",  # paragraph separator (Zp)
]
# A lone surrogate (Cs) has no UTF-8: the gateway refuses any body holding one before reading
# its fields; the application refuses it as a name.
SURROGATE = "\ud800"
GOOD_NAMES = ["ann", "Zoë", "名前", "ana maria", "🏳️‍🌈 fan", "می‌خواهم"]  # ZWJ, ZWNJ kept


@pytest.fixture
def http() -> Any:
    settings = Settings(rate_limits={}, organizer_keys=frozenset({ORGANIZER}))
    return create_app(settings, application=bootstrap(settings, backend="memory")).test_client()


def create(http: Any, **fields: Any) -> Any:
    body = {"game": "fox", "seats": [{"name": "a"}, {"bot": "random"}], **fields}
    return http.post("/v1/games", json=body)


def refused(resp: Any, field: str) -> dict[str, Any]:
    assert resp.status_code == 422, (resp.status_code, resp.get_json())
    body: dict[str, Any] = resp.get_json()
    assert resp.mimetype == "application/problem+json"
    assert field in body["errors"], body
    return body


@pytest.mark.parametrize("value", NOT_INTEGERS)
@pytest.mark.parametrize("field", ["turn_seconds", "reserve_seconds", "takeover_after"])
def test_a_clock_number_that_is_no_integer_is_a_422(http: Any, field: str, value: Any) -> None:
    refused(create(http, clock={field: value}), f"clock.{field}")


@pytest.mark.parametrize("kind", ["fraction", "string", "bool", "float"])
@pytest.mark.parametrize("field", ["budget_ms", "iterations"])
def test_a_bot_setting_that_is_no_integer_is_a_422(http: Any, field: str, kind: str) -> None:
    number = 200 if field == "budget_ms" else 50  # in range once made an integer
    bad = {"fraction": number + 0.5, "string": str(number), "bool": True, "float": float(number)}[
        kind
    ]
    seats = [{"name": "a"}, {"bot": "ismcts", field: bad}]
    refused(create(http, seats=seats), f"seats[1].{field}")
    timeout_bot = {"bot": "ismcts", field: bad}
    refused(create(http, clock={"timeout_bot": timeout_bot}), f"clock.timeout_bot.{field}")
    entrants = [{"bot": "random"}, {"bot": "ismcts", field: bad}]
    resp = http.post("/v1/tournaments", json={"game": "fox", "entrants": entrants, "games": 2},
                     headers={"Authorization": f"Bearer {ORGANIZER}"})  # fmt: skip
    refused(resp, f"entrants[1].{field}")


@pytest.mark.parametrize("value", NOT_INTEGERS)
def test_a_tournament_count_that_is_no_integer_is_a_422(http: Any, value: Any) -> None:
    entrants = [{"bot": "random"}, {"bot": "heuristic"}]
    auth = {"Authorization": f"Bearer {ORGANIZER}"}
    for field in ("games", "players"):
        body = {"game": "fox", "entrants": entrants, "games": 2, field: value}
        refused(http.post("/v1/tournaments", json=body, headers=auth), field)


def test_integers_still_pass(http: Any) -> None:
    clock = {"turn_seconds": 30, "reserve_seconds": 0, "takeover_after": 2,
             "timeout_bot": {"bot": "ismcts", "iterations": 20}}  # fmt: skip
    seats = [{"name": "a"}, {"bot": "ismcts", "budget_ms": 100}]
    resp = create(http, seats=seats, clock=clock)
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["view"]["clock"]["turn_seconds"] == 30


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_name_with_control_or_format_characters_is_a_422(http: Any, name: str) -> None:
    refused(create(http, seats=[{"name": "a"}, {"name": name}]), "seats[1].name")
    refused(create(http, seats=[{"name": "a"}, {"bot": "random", "name": name}]), "seats[1].name")
    lobby = create(http, seats=[{"name": "a"}, {"open": True}])
    assert lobby.status_code == 201, lobby.get_json()
    joined = http.post(f"/v1/games/{lobby.get_json()['id']}/seats/1/join", json={"name": name})
    refused(joined, "name")
    entrants = [{"bot": "random", "name": name}, {"bot": "heuristic"}]
    resp = http.post("/v1/tournaments", json={"game": "fox", "entrants": entrants, "games": 2},
                     headers={"Authorization": f"Bearer {ORGANIZER}"})  # fmt: skip
    refused(resp, "entrants[0].name")


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_names_in_any_script_still_pass(http: Any, name: str) -> None:
    resp = create(http, seats=[{"name": "a"}, {"name": name}])
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["view"]["seats"][1]["name"] == name


@pytest.mark.parametrize("name", [*BAD_NAMES, SURROGATE])
def test_the_application_refuses_such_names_without_the_gateway(name: str) -> None:
    app = bootstrap(Settings(), backend="memory")
    with pytest.raises(GameError) as created:
        creation.create_game(app, "fox", [{"name": "a"}, {"name": name}])
    assert "seats[1].name" in (created.value.errors or {})
    with pytest.raises(plan.PlanError) as planned:
        plan.parse({"game": "fox", "entrants": [{"bot": "random", "name": name},
                                                {"bot": "heuristic"}], "games": 2})  # fmt: skip
    assert "entrants[0].name" in planned.value.errors
    # A join as a worker decides it (what the gateway's join endpoint sends).
    gid = creation.create_game(app, "fox", [{"name": "a"}, {"open": True}]).game_id
    join = {"type": service_commands.Join.TYPE, "name": name, "token_sha256": "0" * 64}
    commands.submit_command(app, CommandMessage(command_id="j1", game_id=gid, seat=1, body=join),
                            "fox")  # fmt: skip
    (outcome,) = drain(app, "fox")
    assert outcome["status"] == "rejected" and "name" in outcome["error"]["errors"], outcome
