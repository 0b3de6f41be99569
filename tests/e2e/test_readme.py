"""Issue 25: the README's walkthroughs run verbatim against a real stack, so the README cannot
drift from the service. The shell blocks of the Fox, Skull, Isle of Skye and clock sections are
extracted from README.md as they are and run by bash, in order, in one script (later sections
use ``API`` and ``j`` from the first, as the README says)."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.stack import ROOT, Stack, start_stack

SECTIONS = (
    "Play a whole game of The Fox in the Forest with curl",
    "Skull over HTTP",
    "Isle of Skye over HTTP",
    "Turn clocks, resigning and take-over",
)


def readme_blocks(text: str, heading: str) -> list[str]:
    """The ```sh blocks of the README section under ``## heading``, as written."""
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    [section] = [p for p in parts if p.startswith(heading + "\n")]
    return re.findall(r"^```sh\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)


def walkthrough(text: str) -> str:
    """One bash script of every walkthrough block, stopping at the first failing pipeline."""
    lines = ["set -eo pipefail"]
    for heading in SECTIONS:
        blocks = readme_blocks(text, heading)
        assert blocks, f"no sh block under '## {heading}'"
        lines += [f"echo '=== {heading}'", *blocks]
    return "\n".join(lines) + "\n"


def test_the_script_is_extracted_from_each_section() -> None:
    script = walkthrough((ROOT / "README.md").read_text())
    for heading in SECTIONS:
        assert f"=== {heading}" in script
    assert "jq" not in script.split()  # the README promises python3 only
    assert "TOKEN=$(j 'd[\"tokens\"][0]' < game.json)" in script


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # The default command limits, as a newcomer runs it.
    running = start_stack(
        tmp_path_factory.mktemp("readme"),
        TABLETOP_RATE_COMMAND="20/second",
        TABLETOP_RATE_COMMAND_ADDR="30/second",
    )
    try:
        deadline = time.monotonic() + 60
        while requests.get(f"{running.url}/readyz", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "the stack never became ready"
            time.sleep(0.2)
        yield running
    finally:
        running.stop()


def test_the_readme_walkthroughs_run_verbatim(stack: Stack, tmp_path: Path) -> None:
    script = walkthrough((ROOT / "README.md").read_text())
    port = stack.url.rsplit(":", 1)[1]
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,  # the walkthroughs write game.json where they run
        env={"PATH": "/usr/bin:/bin", "PORT": port, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    assert done.returncode == 0, (done.returncode, out[-3000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    fox, skull, skye, clock = (out.split(f"=== {h}\n", 1)[1].split("=== ")[0] for h in SECTIONS)
    # Fox: played to the end (scores and an outcome with winners), the history's last events.
    assert "'winners'" in fox and "'seed_revealed'" in fox, fox
    assert skull.startswith("placing ") and "'type': 'place'" in skull, skull
    assert skye.startswith("prices ") and "set_prices" in skye, skye
    # The clock's game: per-seat clocks, then a resignation that ends it at once.
    assert "reserve_ms" in clock and "game_over" in clock and "resignation" in clock, clock
