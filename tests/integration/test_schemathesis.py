"""The OpenAPI document, tried by a fuzzer: schemathesis generates requests for every operation
from the generated document and checks that none gets a 5xx and every response is one the
document describes (status, content type, body schema) — each operation alone, and in
sequences that follow the document's links from a created game to the operations on it."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from shared.app.dispatch import InlineDispatcher
from tests.integration.conftest import AUDITOR, ORGANIZER, Stack

# The feed streams until the game ends: not a request-response operation to fuzz.
STREAMING = "/v1/games/{game_id}/feed"
EXAMPLES = 40
# No 5xx, and only documented statuses, content types and bodies. (Whether schema-valid data is
# accepted is not checked: a seat must be a name or a bot, which the schema cannot say.)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]  # fmt: skip


def test_no_server_error_and_no_undocumented_response(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tournaments are only queued: the inline dispatcher would play a generated one (say a
    # thousand Isle of Skye games with a search bot) inside its request. Their play is tested
    # elsewhere; here only the answers count.
    monkeypatch.setattr(InlineDispatcher, "tournament", lambda self, tid: None)
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
            # (fuzz runs within this iteration: `operation` is the one it was made for)
            if operation.path == "/v1/games" and isinstance(case.body, dict):  # noqa: B023
                _tame_bots(case.body)
            case.call_and_validate(checks=CHECKS)

        try:
            fuzz()
        except Exception as exc:  # collect every operation's finding, then fail once
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}"[:2000])
    assert tried >= 20
    assert not failures, "\n\n".join(failures)


# Scenarios and steps of the stateful run (about 30 s here), and a bound on its time for a busy
# machine: past it no new step starts.
SCENARIOS = 100
STEPS = 16
BUDGET_S = 90.0


# The operations whose answers the harness reads (tokens, who sent what).
RECORDED = {"createGame", "joinSeat", "getGame", "sendCommand", "getCommand"}


class OutOfTime(Exception):
    """The stateful run's time is up."""


def test_sequences_through_the_links_reach_real_games(stack: Stack) -> None:
    """Stateful: schemathesis chains operations by the document's links (create a game, read
    its view, send one of its legal commands, ask what became of it, join, leave...). The
    harness only picks who calls: mostly the seat to act (its token from the create or join
    answer), sometimes another seat, an auditor, an organizer or nobody."""
    schema = (
        schemathesis.openapi.from_wsgi("/openapi.json", stack.app)
        .exclude(path=STREAMING)
        # Covered alone above (with real games): the steps go to playing them.
        .exclude(path_regex="^/(healthz|v1/game-types|v1/ratings|v1/tournaments)")
        .exclude(path_regex="/(audit|export|suggestion|entropy)$")
    )
    tokens: dict[str, dict[int, str]] = {}  # game id -> seat -> token, from the answers
    senders: dict[str, tuple[str, str]] = {}  # command id -> (its game, the token that sent it)
    readers: dict[str, str] = {}  # game id -> the token of its last seat view read
    answered: Counter[tuple[str, int]] = Counter()
    failures: list[str] = []

    def to_act(gid: str) -> list[int]:
        resp = stack.http.get(f"/v1/games/{gid}")
        return list(resp.get_json().get("to_act", [])) if resp.status_code == 200 else []

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def before_call(self, case: Any) -> None:
            if time.monotonic() > deadline:
                raise OutOfTime
            headers = dict(case.headers or {})
            # A generated `Prefer: wait=N` would hold a step up to N seconds; commands wait a
            # little so that the next step sees their outcome.
            headers.pop("Prefer", None)
            headers.pop("Authorization", None)
            label = case.operation.definition.raw.get("operationId", "")
            if label == "sendCommand" and random.random() < 0.7:
                headers["Prefer"] = "wait=2"
            if label == "createGame" and isinstance(case.body, dict):
                _tame_bots(case.body)
            gid = (case.path_parameters or {}).get("game_id")
            seats = tokens.get(gid, {}) if isinstance(gid, str) else {}
            roll = random.random()
            sender = senders.get(str((case.path_parameters or {}).get("command_id")), ("", ""))[1]
            reader = readers.get(gid) if label == "sendCommand" and isinstance(gid, str) else None
            if sender and roll < 0.65:
                headers["Authorization"] = f"Bearer {sender}"
            elif reader is not None and roll < 0.65:  # a command from that view's seat
                headers["Authorization"] = f"Bearer {reader}"
            elif seats and roll < 0.65:
                acting = [s for s in to_act(gid) if s in seats] or list(seats)
                headers["Authorization"] = f"Bearer {seats[random.choice(acting)]}"
            elif seats and roll < 0.75:
                headers["Authorization"] = f"Bearer {random.choice(list(seats.values()))}"
            elif roll < 0.82:
                headers["Authorization"] = f"Bearer {AUDITOR}"
            elif roll < 0.88:
                headers["Authorization"] = f"Bearer {ORGANIZER}"
            case.headers = headers

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            label = case.operation.definition.raw.get("operationId", "")
            status = response.status_code
            answered[(label, status)] += 1
            if status not in (200, 201, 202) or label not in RECORDED:
                return
            body = response.json()
            token = (case.headers or {}).get("Authorization", " ").split(" ", 1)[1]
            gid = (case.path_parameters or {}).get("game_id")
            if label == "createGame":
                tokens[body["id"]] = {i: t for i, t in enumerate(body["tokens"]) if t}
            elif label == "joinSeat":
                tokens.setdefault(gid, {})[body["seat"]] = body["token"]
            elif label == "getGame" and body.get("seat") is not None:
                readers[gid] = token
            elif label == "sendCommand":
                senders[body.get("command_id") or body["command"]["command_id"]] = (gid, token)

        def teardown(self) -> None:
            nonlocal scenarios
            scenarios += 1
            super().teardown()

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None,
                              **kwargs: Any) -> None:  # fmt: skip
            try:
                case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs or None,
                                       recorder=self.recorder)  # fmt: skip
            except Exception as exc:  # keep going: one report of every finding at the end
                # The whole body too: schemathesis shortens the value it shows.
                failures.append(f"{case.operation.label}: {exc}"[:2000]
                                + f"\nresponse body: {response.text[:8000]}")  # fmt: skip

    def applied() -> int:
        """The commands the fuzzer sent that a game applied (asked with the token that sent
        each)."""
        return sum(
            stack.http.get(
                f"/v1/games/{gid}/commands/{cid}", headers={"Authorization": f"Bearer {t}"}
            )
            .get_json()
            .get("status")
            == "accepted"
            for cid, (gid, t) in senders.items()
        )

    started = time.monotonic()
    deadline = started + BUDGET_S
    scenarios = 0
    # Until SCENARIOS ran and one command sent through the links was applied, or the budget is
    # spent: which commands the fuzzer sends is random, and a run of scenarios whose few
    # commands were all refused (not its seat's turn) says nothing of the links.
    while (scenarios < SCENARIOS or not applied()) and time.monotonic() < deadline:
        try:
            Workflow.run(
                settings=settings(
                    max_examples=max(SCENARIOS - scenarios, 10),
                    stateful_step_count=STEPS,
                    deadline=None,
                    database=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
            )
        except OutOfTime:
            break
        except (Flaky, AssertionError) as exc:
            # A replay that drew differently: the service's state is not what it was on the
            # first run of those steps (games exist, seats are taken). Go on with new scenarios,
            # as schemathesis' own runner does.
            if isinstance(exc, AssertionError) and not _inconsistent_replay(exc):
                raise
    elapsed = time.monotonic() - started
    accepted = applied()
    print(
        f"stateful run: {elapsed:.1f} s, {scenarios} scenarios, {accepted} commands applied;",
        sorted(answered.items()),
    )  # shown on a failure
    assert not failures, "\n\n".join(failures[:10])
    # The links led somewhere: games were created and read, and commands sent by following
    # them (a view's legal command, with that view's token) were applied.
    reached = {key for key, n in answered.items() if n}
    for needed in [("createGame", 201), ("getGame", 200), ("getEvents", 200)]:
        assert needed in reached, needed
    assert accepted, "no command sent through the links was accepted"
    assert scenarios >= 20, scenarios


def _inconsistent_replay(exc: AssertionError) -> bool:
    """Whether Hypothesis asserted that a replay drew past what the first run drew (it asserts
    rather than raising ``Flaky`` there): the assertion is raised in its data tree."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__", "").startswith(
        "hypothesis.internal.conjecture"
    )


def _tame_bots(body: dict[str, Any]) -> None:
    """Bots of a generated game think at most 20 ms (or 5 iterations) a move: a search bot at
    10 s a move would hold a worker for minutes (shapes, and so validation, are unchanged)."""
    seats = body.get("seats")
    for seat in seats if isinstance(seats, list) else []:
        if not isinstance(seat, dict):
            continue
        budget, iterations = seat.get("budget_ms"), seat.get("iterations")
        if isinstance(budget, int) and not isinstance(budget, bool) and budget > 20:
            seat["budget_ms"] = 20
        if isinstance(iterations, int) and not isinstance(iterations, bool) and iterations > 5:
            seat["iterations"] = 5
        if seat.get("bot") == "ismcts" and budget is None and iterations is None:
            seat["iterations"] = 5
