"""Issue 35 on the real processes (`tabletop run`): a registered webhook bot served by the kit
answers its games' turns at the same time, and the README's audit recipe — the export saved by
curl as ``game.jsonl``, then ``tabletop audit --file game.jsonl`` — passes on one of its
finished games, though the file is not named after the game (the audit reads the game's id
from the export). The recipe run on a game that does not exist says so in one line."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from tabletop_client import Bot, make_webhook_server

from shared.redis_server import free_port
from tests.e2e.stack import ROOT, Stack

pytestmark = pytest.mark.e2e

GAMES = 3


class SlowBot(Bot):
    """Plays the first legal command after 0.3 s; counts the act calls under way at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = self.turns = 0

    def act(self, view: Mapping[str, Any], legal_commands: Sequence[Any]) -> Any:
        with self.lock:
            self.now += 1
            self.turns += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(0.3)
        finally:
            with self.lock:
                self.now -= 1
        return legal_commands[0]


@dataclass
class Played:
    stack: Stack
    bot: SlowBot
    bot_id: str
    games: list[str]


@pytest.fixture(scope="module")
def played(shared_stack: Stack) -> Iterator[Played]:
    """A stack (a default one, shared with other files: tests/e2e/conftest.py), and ``GAMES``
    Fox games played at once by one registered webhook bot of its own, served by the kit (in
    this process), against the heuristic bot, all finished."""
    stack = shared_stack
    server = None
    try:
        base = stack.url
        deadline = time.monotonic() + 60
        while requests.get(f"{base}/readyz", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "the stack never became ready"
            time.sleep(0.2)
        port = free_port()
        body = {"name": "kit-slow", "games": ["fox"], "transport": "webhook",
                "url": f"http://127.0.0.1:{port}/", "budget_ms": 5000}  # fmt: skip
        created = requests.post(f"{base}/v1/bots", json=body, timeout=10)
        assert created.status_code == 201, created.text
        registered = created.json()
        bot = SlowBot()
        server = make_webhook_server(bot, registered["key"], "127.0.0.1", port)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        games = []
        for _ in range(GAMES):
            game = {"game": "fox", "seats": [{"bot_id": registered["id"]}, {"bot": "heuristic"}],
                    "options": {"target": 1}, "listed": False}  # fmt: skip
            resp = requests.post(f"{base}/v1/games", json=game, timeout=10)
            assert resp.status_code == 201, resp.text
            games.append(resp.json()["id"])
        deadline = time.monotonic() + 180
        for gid in games:
            while requests.get(f"{base}/v1/games/{gid}", timeout=10).json()["outcome"] is None:
                assert time.monotonic() < deadline, f"game {gid} did not end"
                time.sleep(0.2)
        yield Played(stack, bot, registered["id"], games)
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()


def test_the_kits_webhook_answers_several_games_turns_at_once(played: Played) -> None:
    stats = requests.get(f"{played.stack.url}/v1/bots/{played.bot_id}", timeout=10).json()
    assert stats["stats"]["fallbacks"] == 0, stats
    assert stats["stats"]["decisions"] == played.bot.turns
    assert played.bot.most >= 2, "the games' turns were answered one at a time"


def audit_recipe() -> str:
    """The README's shell block under '## Audit a game', as written."""
    text = (ROOT / "README.md").read_text()
    [section] = [p for p in re.split(r"^## ", text, flags=re.MULTILINE)
                 if p.startswith("Audit a game\n")]  # fmt: skip
    blocks = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)
    assert blocks, "no sh block under '## Audit a game'"
    recipe = str(blocks[0])
    assert "/export > game.jsonl" in recipe and "tabletop audit --file game.jsonl" in recipe
    return recipe


def run_recipe(url: str, game_id: str, where: Path) -> subprocess.CompletedProcess[str]:
    """The recipe for ``game_id``, run by bash in ``where`` (where ``.venv`` is the
    project's, as in a checkout)."""
    (where / ".venv").symlink_to(ROOT / ".venv")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(where), "API": url}
    env.update({k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL")})
    return subprocess.run(
        ["bash", "-c", audit_recipe().replace("GAME_ID", game_id)],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_readmes_audit_recipe_passes_on_an_export_not_named_after_its_game(
    played: Played, tmp_path: Path
) -> None:
    gid = played.games[0]
    done = run_recipe(played.stack.url, gid, tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert (tmp_path / "game.jsonl").exists() and gid != "game"
    assert "bot moves: ok" in done.stdout and "AUDIT PASSED" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr, done.stderr


def test_the_recipe_on_a_game_that_does_not_exist_says_so_in_one_line(
    played: Played, tmp_path: Path
) -> None:
    done = run_recipe(played.stack.url, "no-such-game", tmp_path)
    # curl -f stops the recipe at the 404, in one line, before anything is audited.
    assert done.returncode == 22, (done.stdout, done.stderr)
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "404" in err, err
    assert "AUDIT" not in done.stdout
