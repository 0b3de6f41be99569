"""Issues 25 and 37: the README's walk-throughs run verbatim against a real stack, so the
README cannot drift from the service.

Every ```sh block of the five walk-throughs (play a game, open a table, run a tournament,
bring a bot, audit a game) and of the reference's Skull, Isle of Skye and clock sections is
extracted from README.md as it is and run by bash, in order, in one script (later blocks use
``API`` and ``j`` from the first, as the README says), stopping at the first failing
pipeline. A block that starts the stack (``TABLETOP_ORGANIZER_KEYS=org1 make run``) is what
the test's own stack does: its variables are the stack's environment. The test counts the
blocks run, and fails if any was skipped."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.stack import ROOT, Stack, start_stack

pytestmark = pytest.mark.e2e

WALKTHROUGHS = (
    "Play a game",
    "Open a table and invite a friend",
    "Run a tournament",
    "Bring a bot",
    "Audit a game",
)
REFERENCE = ("Skull over HTTP", "Isle of Skye over HTTP", "Turn clocks, resigning and take-over")
SECTIONS = WALKTHROUGHS + REFERENCE
# A block that starts the service, e.g. `TABLETOP_ORGANIZER_KEYS=org1 make run`.
STACK_BLOCK = re.compile(r"^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)make run\s*$")
BOT_PORT = 8765  # the webhook the "Bring a bot" walk-through serves


def readme_blocks(text: str, heading: str) -> list[str]:
    """The ```sh blocks of the README section under ``## heading``, as written."""
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    [section] = [p for p in parts if p.startswith(heading + "\n")]
    return re.findall(r"^```sh\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)


def stack_block_env(block: str) -> dict[str, str] | None:
    """The variables of a block that only starts the stack; None for any other block."""
    lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    if len(lines) != 1 or not (match := STACK_BLOCK.match(lines[0].split(" #")[0].strip())):
        return None
    return dict(item.split("=", 1) for item in match[1].split())


def plan(text: str) -> tuple[str, int, dict[str, str]]:
    """One bash script of every block to run (each followed by a ``### ran`` marker), how many
    it runs, and the stack's environment from the blocks that start it."""
    lines = ["set -eo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    count, env = 0, {}
    for heading in SECTIONS:
        blocks = readme_blocks(text, heading)
        assert blocks, f"no sh block under '## {heading}'"
        lines.append(f"echo '=== {heading}'")
        for block in blocks:
            if (variables := stack_block_env(block)) is not None:
                env.update(variables)  # the test's stack runs with them
                continue
            count += 1
            lines += [block, f"echo '### ran {count}'"]
    return "\n".join(lines) + "\n", count, env


def test_the_script_is_extracted_from_each_section() -> None:
    script, count, env = plan((ROOT / "README.md").read_text())
    for heading in SECTIONS:
        assert f"=== {heading}" in script
    assert "jq" not in script.split()  # the README promises python3 only
    assert "TOKEN=$(j 'd[\"tokens\"][0]' < game.json)" in script
    assert env == {"TABLETOP_ORGANIZER_KEYS": "org1"}
    # Every walk-through has runnable blocks; nothing in them is a placeholder to edit.
    for heading in WALKTHROUGHS:
        runnable = [b for b in readme_blocks((ROOT / "README.md").read_text(), heading)
                    if stack_block_env(b) is None]  # fmt: skip
        assert runnable, heading
    assert "/tournaments/ID" not in script and "show ID" not in script
    assert count >= 8, count  # one a walk-through at least, and the three of the games


def test_the_readmes_install_hints_work_in_the_checkout() -> None:
    # Issue 37: `pip install 'tabletop[plots]'` named an unrelated package on the public index.
    text = (ROOT / "README.md").read_text()
    assert "tabletop[plots]" not in text
    assert "make plots" in text and "\nplots:" in (ROOT / "Makefile").read_text()
    # Audit downloads fail loudly (a 404 problem is not saved as the export).
    assert "curl -s $API/v1/games/GAME_ID/export" not in text
    assert "curl -fsS $API/v1/games/$GAME/export > game.jsonl" in text


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    _, _, env = plan((ROOT / "README.md").read_text())
    # The default command limits, as a newcomer runs it, and the README's organizer key.
    env = {"TABLETOP_RATE_COMMAND": "20/second", "TABLETOP_RATE_COMMAND_ADDR": "30/second", **env}
    running = start_stack(tmp_path_factory.mktemp("readme"), **env)  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 60
        while requests.get(f"{running.url}/readyz", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "the stack never became ready"
            time.sleep(0.2)
        yield running
    finally:
        running.stop()


def test_the_readme_walkthroughs_run_verbatim(stack: Stack, tmp_path: Path) -> None:
    script, count, _ = plan((ROOT / "README.md").read_text())
    if not _port_free(BOT_PORT):
        pytest.fail(f"port {BOT_PORT}, which 'Bring a bot' serves its webhook on, is taken")
    port = stack.url.rsplit(":", 1)[1]
    # Run where the walk-throughs are run, a checkout: its .venv and the bot kit's example.
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / "sdk").symlink_to(ROOT / "sdk")
    started = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,  # the walk-throughs write game.json and the like where they run
        env={"PATH": "/usr/bin:/bin", "PORT": port, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = done.stdout
    ran = re.findall(r"^### ran (\d+)$", out, flags=re.MULTILINE)
    print(f"{len(ran)} of {count} README blocks ran in {time.monotonic() - started:.0f} s")
    assert done.returncode == 0, (len(ran), done.returncode, out[-3000:], done.stderr[-3000:])
    assert [int(n) for n in ran] == list(range(1, count + 1)), ran
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    got = {h: out.split(f"=== {h}\n", 1)[1].split("\n=== ")[0] for h in SECTIONS}
    # Fox: played to the end (scores and an outcome with winners), the history's last events.
    fox = got["Play a game"]
    assert "'winners'" in fox and "'seed_revealed'" in fox, fox
    table = got["Open a table and invite a friend"]
    assert table.startswith("waiting\n") and f"{stack.url}/#/join/" in table, table
    tournament = got["Run a tournament"]
    assert "'heuristic'" in tournament and "status: finished" in tournament, tournament
    assert "games: 40" in tournament, tournament  # the local run
    bot = got["Bring a bot"]
    assert "'winners'" in bot and "status: finished" in bot and "'decisions'" in bot, bot
    assert "my-random" in bot, bot  # the registered bot in the tournament's standings
    assert got["Audit a game"].count("### ran") == 1
    assert got["Skull over HTTP"].startswith("placing ") and "'type': 'place'" in out
    assert got["Isle of Skye over HTTP"].startswith("prices ") and "set_prices" in out
    # The clock's game: per-seat clocks, then a resignation that ends it at once.
    clock = got["Turn clocks, resigning and take-over"]
    assert "reserve_ms" in clock and "game_over" in clock and "resignation" in clock, clock
    # Nothing of the walk-throughs lands in the checkout but files git ignores.
    ignored = (ROOT / ".gitignore").read_text().split()
    for path in tmp_path.iterdir():
        if path.name not in (".venv", "sdk"):
            assert f"/{path.name}" in ignored, path.name
