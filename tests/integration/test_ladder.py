"""The public ladder on Redis, through the gateway and the stream workers (issue 28): a webhook
bot that opted in (``"ladder": true``) is rated for its whole Fox game and listed by name, one
that did not keeps its game off the ladder; a bot stored before the field existed reads as not
opted in."""

from __future__ import annotations

import json
import time
from typing import Any

from shared import keys
from tests.integration.conftest import Stack
from tests.integration.test_webhook_bots import first_legal, hooks, register, wait_over

__all__ = ["hooks"]  # the fixture, used by name


def ladder(stack: Stack) -> dict[str, dict[str, Any]]:
    """The rated rows (the built-ins no game rated yet are listed too, with no games)."""
    resp = stack.http.get("/v1/ratings?game=fox")
    assert resp.status_code == 200, resp.get_json()
    return {r["bot"]: r for r in resp.get_json()["ratings"] if r["games"]}


def play(stack: Stack, bot_id: str) -> str:
    seats = [{"bot_id": bot_id}, {"bot": "heuristic"}]
    created = stack.http.post("/v1/games", json={"game": "fox", "seats": seats,
                                                 "options": {"target": 1}})  # fmt: skip
    assert created.status_code == 201, created.get_json()
    gid: str = created.get_json()["id"]
    wait_over(stack.worker_app, gid)
    # Scored once over: its result is written before it is rated, in the same task.
    deadline = time.monotonic() + 60
    while stack.worker_app.ports.directory.result(gid) is None:
        assert time.monotonic() < deadline, "the game was never scored"
        time.sleep(0.05)
    return gid


def test_an_opted_in_webhook_bot_is_rated_and_one_that_did_not_opt_in_is_not(
    stack: Stack, hooks: Any
) -> None:
    hook = hooks(first_legal)
    shy = register(stack, url=hook.url, name="shy").get_json()
    keen = register(stack, url=hook.url, name="keen", ladder=True).get_json()
    assert (shy["ladder"], keen["ladder"]) == (False, True)
    assert stack.http.get(f"/v1/bots/{keen['id']}").get_json()["ladder"] is True

    play(stack, shy["id"])
    assert ladder(stack) == {}
    play(stack, keen["id"])
    deadline = time.monotonic() + 60
    while not (rows := ladder(stack)):
        assert time.monotonic() < deadline, "the opted-in bot's game was never rated"
        time.sleep(0.05)
    # The shy bot's game, scored before, rated no one: heuristic played one rated game.
    assert set(rows) == {f"bot_id={keen['id']}", "heuristic"}
    assert rows["heuristic"]["games"] == 1
    row = rows[f"bot_id={keen['id']}"]
    assert (row["bot_id"], row["name"], row["games"]) == (keen["id"], "keen", 1)
    assert row["mu_ci"][0] < row["mu"] < row["mu_ci"][1]
    by_rank = sorted(rows.values(), key=lambda r: r["rank"])
    assert by_rank[0]["ordinal"] >= by_rank[1]["ordinal"]
    assert by_rank[0]["rank"] < by_rank[1]["rank"]


def test_a_bot_stored_before_the_ladder_field_is_not_on_it(stack: Stack, hooks: Any) -> None:
    hook = hooks(first_legal)
    bot = register(stack, url=hook.url).get_json()
    key = keys.bot(bot["id"])
    doc = json.loads(stack.redis.hget(key, "doc"))  # type: ignore[arg-type]
    del doc["ladder"]
    stack.redis.hset(key, "doc", json.dumps(doc))
    assert stack.http.get(f"/v1/bots/{bot['id']}").get_json()["ladder"] is False
