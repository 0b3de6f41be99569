"""The bot kit's ``Client`` (sdk/python) against the real gateway over HTTP: a Fox game against
the random bot created, played to the end from its feed with ``Prefer: wait``, refusals raised
as problems, and the history read back (events, export, audit)."""

from __future__ import annotations

import time

import pytest
from tabletop_client import Client, ProblemError

from tests.integration.conftest import AUDITOR


@pytest.mark.timeout(180)
def test_a_fox_game_played_to_the_end_through_the_kit(api: str) -> None:
    with Client(api) as anyone:
        created = anyone.create_game(
            "fox", [{"name": "ana"}, {"bot": "random"}], {"target": 1}, listed=False
        )
    gid, token = created["id"], created["tokens"][0]
    assert created["tokens"][1] is None
    with Client(api, token) as ana:
        feed = ana.feed(gid)
        first = next(feed)
        assert first.event == "update" and first.id == str(first.data["version"])
        assert first.data["view"]["seat"] == 0 and first.data["view"]["hand"]
        versions = [first.data["version"]]
        moves = 0
        deadline = time.monotonic() + 120
        message = first
        while message.data["view"]["outcome"] is None:
            assert time.monotonic() < deadline, f"stuck at version {versions[-1]}"
            seen = message.data["view"]
            if 0 in seen["to_act"] and seen["legal_commands"]:
                outcome = ana.submit(
                    gid, seen["legal_commands"][0], wait=10, expected_version=seen["version"]
                )
                assert outcome["version"] > seen["version"]  # the new view, not a 202
                moves += 1
            message = next(feed)  # the bot's move, or ours: the feed says what changed
            assert int(message.id or 0) == message.data["version"] > versions[-1]
            versions.append(message.data["version"])
        # The stream ends after the game-over message.
        assert list(feed) == []
        assert moves >= 1 and len(versions) > 3
        over = ana.game(gid)
        assert over["outcome"] is not None and over["version"] == versions[-1]

        # A command after the end is a problem with its fields, raised, not returned.
        with pytest.raises(ProblemError) as caught:
            ana.submit(gid, {"type": "keep_decree"}, wait=5)
        problem = caught.value
        assert problem.status == 409 and problem.code == "game/over"
        assert problem.body["status"] == 409 and problem.type and problem.title and problem.detail

        # A reconnect after a version brings only what came after it.
        resumed = list(ana.feed(gid, after=versions[-2]))
        assert [m.data["version"] for m in resumed] == [versions[-1]]

    with Client(api, AUDITOR) as auditor:
        events = auditor.events(gid)["events"]
        assert [e["version"] for e in events] == list(range(1, over["version"] + 1))
        export = auditor.export(gid)
        assert [e["hash"] for e in export] == [e["hash"] for e in events]
        assert auditor.audit(gid)["status"] == "passed"
    with Client(api) as anyone, pytest.raises(ProblemError) as missing:
        anyone.game("no-such-game")
    assert missing.value.status == 404 and missing.value.code == "game/not_found"
