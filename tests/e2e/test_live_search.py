"""A live bot's timed search searches as the same view does in process (issue 38), on the real
stack (`tabletop run`: the bots' Celery tasks on the search workers).

An all-bot game with one ``ismcts`` seat on ``budget_ms`` plays to its end; its log (the
auditor's export) records each of that seat's timed moves with ``bot_iterations``. Each
searched move (a count past 0: a decision its game's search hooks leave to the heuristic's
choice alone records 0, live and in process alike) is searched again here, in process, from
the view the bot read (folded from the log at the version its command id names) at the same
budget. Live, the search once lost its budget to its set-up in the search worker (the game's
package loaded on a worker's first search; the heuristic's valuations cold in a process that
plays none of the heuristic seats' moves): 1 iteration against hundreds. The bounds are
generous (a busy 2-core machine stalls either side): live runs at least ``SHARE`` of the
in-process iterations over the game's searches, and the median search at least ``MEDIAN`` of
its own (one search starved by a busy moment must not fail it; the bug starved nearly all).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from shared.bots import ismcts
from shared.events import Envelope
from shared.games.rng import bot_random
from shared.match.projections import view
from shared.match.record import GameRecord, fold
from tests.e2e.stack import Stack, start_stack

pytestmark = pytest.mark.e2e

ORGANIZER = {"Authorization": "Bearer org-e2e"}  # tests/e2e/stack.py's keys
AUDITOR = {"Authorization": "Bearer aud-e2e"}
BUDGET_MS = 100
SHARE = 0.7  # the goal, over a game's searches
MEDIAN = 0.5  # the median search's share (the bug gave 1 iteration in hundreds, most moves)


def _median_share(pairs: list[tuple[int, int]]) -> float:
    """The median of live / in-process iterations over searches."""
    shares = sorted(live / max(1, here) for live, here in pairs)
    return shares[len(shares) // 2]


GAMES = 2  # per game type: more searched moves than one game of Skye's six prices


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = start_stack(tmp_path_factory.mktemp("live-search"))
    try:
        yield running
    finally:
        running.stop()


def _play(url: str, game: str, players: int) -> str:
    """An all-bot game (seat 0 the timed search, heuristics elsewhere) played to its end."""
    seats: list[dict[str, Any]] = [{"bot": "ismcts", "budget_ms": BUDGET_MS}]
    seats += [{"bot": "heuristic"}] * (players - 1)
    created = requests.post(
        f"{url}/v1/games", json={"game": game, "seats": seats}, headers=ORGANIZER, timeout=30
    )
    assert created.status_code == 201, created.text
    gid: str = created.json()["id"]
    deadline = time.monotonic() + 300
    while requests.get(f"{url}/v1/games/{gid}", timeout=30).json().get("outcome") is None:
        assert time.monotonic() < deadline, f"game {gid} did not end"
        time.sleep(0.5)
    return gid


def _searched_moves(url: str, gid: str) -> list[tuple[dict[str, Any], int, int]]:
    """Seat 0's timed moves that searched: (the view it read, the version it read, the
    iterations recorded), from the auditor's export."""
    export = requests.get(f"{url}/v1/games/{gid}/export", headers=AUDITOR, timeout=30)
    assert export.status_code == 200, export.text
    envelopes = [Envelope.from_dict(json.loads(line)) for line in export.text.splitlines()]
    # One command's envelopes together, as the audit groups them.
    groups: list[list[Envelope]] = []
    for env in envelopes:
        if groups and groups[-1][0].command_id == env.command_id and env.command is None:
            groups[-1].append(env)
        else:
            groups.append([env])
    seen: dict[int, GameRecord] = {}
    record: GameRecord | None = None
    out = []
    for group in groups:
        first = group[0]
        command = first.command or {}
        counted = command.get("bot_iterations")
        if record is not None and first.seat == 0 and isinstance(counted, int) and counted > 0:
            at = int(str(first.command_id).rpartition("-")[2])  # bot-<seat>-<version read>
            out.append((view(seen[at], 0), at, counted))
        record = fold(gid, group, record)
        seen[record.version] = record
    return out


@pytest.mark.parametrize(("game", "players"), [("skye", 3), ("skull", 3)])
def test_a_live_timed_search_runs_the_iterations_it_runs_in_process(
    stack: Stack, game: str, players: int
) -> None:
    moves = []
    for _ in range(GAMES):
        moves += _searched_moves(stack.url, _play(stack.url, game, players))
    assert len(moves) >= 4, f"only {len(moves)} searched moves"
    rows = []
    for doc, at, live in moves:
        again = ismcts.search(doc, bot_random("in-process", 0, at), budget_ms=BUDGET_MS)
        rows.append((at, live, again.iterations))
    table = ", ".join(f"v{at}: {live} live / {here} here" for at, live, here in rows)
    print(f"{game} at {BUDGET_MS} ms, live / in process: {table}")
    live_total = sum(live for _, live, _ in rows)
    here_total = sum(here for _, _, here in rows)
    assert live_total >= SHARE * here_total, table
    assert _median_share([(live, here) for _, live, here in rows]) >= MEDIAN, table


def test_a_timed_hint_searches_as_the_same_view_does_in_process(stack: Stack) -> None:
    """Hints (``/suggestion``) are searched on the same workers by the same search: the same
    fix holds for them. A Skye price decision (the game opens with one: every seat prices at
    once) asked as a hint of a human seat, several games, against the same views in process."""
    rows = []
    for _ in range(3):
        seats = [{"name": "me"}, {"bot": "heuristic"}, {"bot": "heuristic"}]
        created = requests.post(f"{stack.url}/v1/games", json={"game": "skye", "seats": seats},
                                headers=ORGANIZER, timeout=30)  # fmt: skip
        assert created.status_code == 201, created.text
        gid, token = created.json()["id"], created.json()["tokens"][0]
        mine = {"Authorization": f"Bearer {token}"}
        deadline = time.monotonic() + 60
        # The heuristic seats price at once; then the game waits on this seat alone.
        while requests.get(f"{stack.url}/v1/games/{gid}", headers=mine,
                           timeout=30).json()["to_act"] != [0]:  # fmt: skip
            assert time.monotonic() < deadline, "the heuristic seats did not price"
            time.sleep(0.2)
        hint = requests.get(f"{stack.url}/v1/games/{gid}/suggestion", headers=mine, timeout=60,
                            params={"bot": "ismcts", "budget_ms": str(BUDGET_MS)})  # fmt: skip
        assert hint.status_code == 200, hint.text
        live = hint.json()["iterations"]
        doc = requests.get(f"{stack.url}/v1/games/{gid}", headers=mine, timeout=30).json()
        assert doc["version"] == hint.json()["version"]
        again = ismcts.search(doc, bot_random("in-process", 0, doc["version"]), budget_ms=BUDGET_MS)
        rows.append((live, again.iterations))
    table = ", ".join(f"{live} live / {here} here" for live, here in rows)
    print(f"skye hints at {BUDGET_MS} ms: {table}")
    assert sum(live for live, _ in rows) >= SHARE * sum(here for _, here in rows), table
    assert _median_share(rows) >= MEDIAN, table
