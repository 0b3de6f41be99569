"""Connected bots through the real gateway on a socket and a real Redis (issue 24): the kit's
``play_connected`` plays a whole Fox game from ``GET /v1/bots/me/turns``; a reconnect is sent
the open turn again, byte for byte; an illegal answer is a 422 recorded as the turn's failure;
an answer after the deadline, or a second one, is a 409; another bot's key finds no turn."""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

import pytest
from tabletop_client import Bot, Client, ProblemError, play_connected

from shared.app import queries
from tests.integration.conftest import AUDITOR, Stack


class FirstLegal(Bot):
    """Plays the first legal command, keeping what it was shown."""

    def __init__(self) -> None:
        self.views: list[dict[str, Any]] = []

    def act(self, view: Any, legal_commands: Any) -> Any:
        self.views.append(dict(view))
        return legal_commands[0]


def bot_moves(client: Client, gid: str) -> list[dict[str, Any]]:
    events = client.events(gid, token=AUDITOR)["events"]
    return [e for e in events if e.get("command") and e["command_id"].startswith("bot-0-")]


def wait_until(check: Any, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while not (got := check()):
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.05)
    return got


def new_game(client: Client, bot_id: str) -> str:
    seats = [{"bot_id": bot_id}, {"bot": "random"}]
    return str(client.create_game("fox", seats, {"target": 1}, listed=False)["id"])


@pytest.mark.timeout(180)
def test_the_kits_connected_bot_plays_a_whole_fox_game(api: str) -> None:
    with Client(api) as client:
        bot = client.create_bot("nat", ["fox"], "connected", budget_ms=3000)
        player = FirstLegal()
        played: list[int] = []
        loop = threading.Thread(
            target=lambda: played.append(play_connected(player, api, bot["key"], max_games=1)),
            daemon=True,
        )
        loop.start()
        gid = new_game(client, bot["id"])
        loop.join(120)
        assert played == [1], "play_connected did not see its game end"
        assert client.game(gid)["outcome"] is not None
        moves = bot_moves(client, gid)
        assert moves and len(moves) == len(player.views)
        assert all(m["command"]["bot_turn"]["failure"] is None for m in moves)
        assert all(v["seat"] == 0 and "hand" in v for v in player.views)
        assert client.audit(gid, token=AUDITOR)["status"] == "passed"
        stats = client.bot(bot["id"])["stats"]
        assert stats["decisions"] == len(moves) and stats["fallbacks"] == 0


@pytest.mark.timeout(180)
def moved_on(client: Client, gid: str, turn: str) -> dict[str, Any] | None:
    """The bot move recorded for ``turn``, or None while there is none."""
    found = [m for m in bot_moves(client, gid) if m["command"]["bot_turn"]["turn_id"] == turn]
    return found[0] if found else None


def test_reconnect_illegal_late_and_foreign_answers(api: str, stack: Stack) -> None:
    with Client(api) as client:
        bot = client.create_bot("nat", ["fox"], "connected", budget_ms=4000)
        other = client.create_bot("other", ["fox"], "connected")
        key = bot["key"]
        gid = new_game(client, bot["id"])

        # Refused keys: none, and one of no bot (a webhook bot's is a 403: tests/unit).
        with pytest.raises(ProblemError) as none:
            client.request("GET", "/v1/bots/me/turns", token=None)
        assert none.value.status == 401
        with pytest.raises(ProblemError) as bad:
            next(client.bot_turns("tbk_" + "0" * 64))
        assert bad.value.status == 401

        def first_turn() -> Any:
            stream = client.bot_turns(key)
            try:
                return next(m for m in stream if m.event == "turn")
            finally:
                stream.close()

        # A turn read and dropped is sent again, the same bytes, to the next connection.
        turn = first_turn()
        again = first_turn()
        assert again.text == turn.text and again.id == turn.id == turn.data["turn_id"]
        doc = turn.data
        assert doc["view"] == queries.view(stack.worker_app, gid, 0)

        # Another bot's key: no such turn (whether it exists is not said).
        with pytest.raises(ProblemError) as foreign:
            client.answer_turn(other["key"], doc["turn_id"], doc["legal_commands"][0])
        assert (foreign.value.status, foreign.value.code) == (404, "turn/not_found")
        # Illegal: 422, recorded as the turn's failure; the seat plays its fallback.
        with pytest.raises(ProblemError) as illegal:
            client.answer_turn(key, doc["turn_id"], {"type": "play", "card": "XX"})
        assert illegal.value.status == 422
        with pytest.raises(ProblemError) as twice:
            client.answer_turn(key, doc["turn_id"], doc["legal_commands"][0])
        assert (twice.value.status, twice.value.code) == (409, "turn/expired")
        # On a busy machine an earlier turn may have timed out before this test read one:
        # the move is found by its turn.
        first = wait_until(lambda: moved_on(client, gid, doc["turn_id"]))
        assert first["command"]["bot_turn"]["failure"] == "illegal"
        assert first["command"]["bot_turn"]["turn_id"] == doc["turn_id"]
        assert first["command"]["bot_turn"]["sent_sha256"] == (
            hashlib.sha256(turn.text.encode()).hexdigest()
        )

        # The next turn, left unanswered past its deadline: the seat times out, then a 409.
        if client.game(gid)["outcome"] is None:
            late = first_turn()
            assert late.id != doc["turn_id"]
            timed_out = wait_until(lambda: moved_on(client, gid, late.id), 30)
            timed_out = timed_out["command"]["bot_turn"]
            assert timed_out["turn_id"] == late.id and timed_out["failure"] == "timeout"
            assert timed_out["latency_ms"] >= 4000
            with pytest.raises(ProblemError) as expired:
                client.answer_turn(key, late.id, late.data["legal_commands"][0])
            assert (expired.value.status, expired.value.code) == (409, "turn/expired")

        # The kit finishes the game (it is sent any open turn on connecting).
        finished: list[int] = []
        loop = threading.Thread(
            target=lambda: finished.append(play_connected(FirstLegal(), api, key, max_games=1)),
            daemon=True,
        )
        loop.start()
        over = wait_until(lambda: client.game(gid)["outcome"] is not None, 120)
        assert over
        assert client.audit(gid, token=AUDITOR)["status"] == "passed"
        stats = client.bot(bot["id"])["stats"]
        assert stats["illegal"] == 1 and stats["decisions"] == len(bot_moves(client, gid))
        loop.join(30)
