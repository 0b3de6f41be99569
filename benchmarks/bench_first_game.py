"""A newcomer's first game (issue 37): a fresh clone to a finished game against bots, by clicking.

What a person does in their first minutes, timed step by step:

1. ``git clone <repo> <tmp>/tabletop`` (the committed HEAD: uncommitted work is not in it);
2. ``make run`` in the clone, with PORT a free port and TABLETOP_DATA_DIR in the tmp dir: it
   creates .venv and installs the runtime (timed apart from the stack's start, from the lines
   make prints), then starts the stack; it is ready at its ready line / GET /readyz 200;
3. Debian's Chromium (driven by Playwright, launched as tests/e2e/test_browser.py does: its
   executable, never a downloaded browser) opens the page and presses "Play against bots" on
   The Fox in the Forest's card (its accessible name "Play The Fox in the Forest against bots"),
4. then plays by clicking: each turn the first enabled card of the hand (a play, a Fox
   exchange or a Woodcutter return) or "Keep the decree card", until the page shows the result;
5. the stack is stopped (SIGTERM to make's process group, then waiting for every process of
   it), started again on the same clone (a warm .venv: make installs nothing), and stopped.

One JSON line on stdout holds the figures; progress goes to stderr. pip may answer from its
cache and from this machine's package sources (find-links, file:// indexes): the JSON says
how big the cache was before and after, and which sources pip is configured with.

``--target N`` plays a game to N points: the landing page's card offers no target, so that
game is started from the "New game" form instead (the same heuristic bot, the same turn
clock). Without it, the card's "Play against bots" is pressed as it is (the Fox's default
target, 21 points), unless the card itself offers a target (then 1: a one-round game).

Run it with the project's .venv (it has Playwright):

    .venv/bin/python benchmarks/bench_first_game.py
    .venv/bin/python benchmarks/bench_first_game.py --workdir /tmp/fg  # kept: clone, .venv, logs
    .venv/bin/python benchmarks/bench_first_game.py --workdir /tmp/fg --reuse-venv  # no install

--reuse-venv clones afresh but keeps the previous run's .venv (same path, so its editable
installs are this clone's) and touches make's stamps: a HEAD whose dependencies changed since
is not installed again.

The figures: clone_s; install_s (``make run`` until GET /readyz answers 200; make_run splits
it into the install steps, each command make ran, and the stack's boot); page_to_first_move_s
(opening the page until the first card is clicked); game_s (that click until the result
shows); clicks; total_s (the clone's start until the result shows); warm_start (``make run``
again on the same clone); machine (cores, load average at the start and at game over).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FOX_TITLE = "The Fox in the Forest"
READY_LINE = "tabletop is running at"
STARTING_LINE = "tabletop: starting"  # `tabletop run` began: make's install steps are done
INSTALL_DEADLINE_S = 1800.0
BOOT_DEADLINE_S = 180.0
TURN_DEADLINE_MS = 150_000  # the page's turn clock is 60 s a turn; a bot never waits for it


def log(message: str) -> None:
    print(f"[first-game {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def machine(loadavg: tuple[float, float, float]) -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gib = None
    with contextlib.suppress(ValueError, OSError):
        mem_gib = round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30, 1)
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "mem_gib": mem_gib,
        "loadavg_at_start": [round(x, 2) for x in loadavg],
    }


def dir_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def pip_cache_dir() -> Path:
    out = subprocess.run(
        ["python3", "-m", "pip", "cache", "dir"], capture_output=True, text=True, check=False
    )
    text = out.stdout.strip()
    if out.returncode == 0 and text:
        return Path(text)
    return Path(os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache" / "pip")


def pip_sources() -> list[str]:
    """pip's configured package sources (find-links, index URLs): not only PyPI here."""
    out = subprocess.run(
        ["python3", "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    )
    return [
        line.strip()
        for line in out.stdout.splitlines()
        if re.search(r"index-url|find-links|no-index", line)
    ]


def clean_env(port: int, data_dir: Path) -> dict[str, str]:
    """The newcomer's shell: none of a developer's stack settings, no activated virtualenv
    (make's `python3` must be the system's)."""
    drop = {"REDIS_URL", "REDIS_PORT", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("TABLETOP_")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if "/.venv/" not in p + "/"
    )
    env["PORT"] = str(port)
    env["TABLETOP_DATA_DIR"] = str(data_dir)
    return env


class Stack:
    """`make run` in its own process group; every output line kept with its time."""

    def __init__(self, clone: Path, port: int, data_dir: Path, log_path: Path) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.lines: list[tuple[float, str]] = []
        self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (closed in stop)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            ["make", "run"],
            cwd=clone,
            env=clean_env(port, data_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            start_new_session=True,  # its own process group: SIGTERM reaches all of it
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            now = time.monotonic()
            self.lines.append((now, line.rstrip("\n")))
            self._log.write(f"{now - self.started:9.3f} {line}")
            self._log.flush()

    def first_line(self, needle: str) -> float | None:
        for at, line in list(self.lines):
            if needle in line:
                return at
        return None

    def readyz(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/readyz", timeout=2) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def wait_ready(self) -> dict[str, float]:
        """Seconds from `make run` to: `tabletop run` starting (install done), the ready line,
        /readyz 200 (asked every 0.2 s once `tabletop run` started)."""
        starting = None
        while True:
            now = time.monotonic()
            if self.proc.poll() is not None:
                raise RuntimeError(f"make run exited ({self.proc.returncode}):\n{self.tail()}")
            starting = starting or self.first_line(STARTING_LINE)
            if starting is None and now - self.started > INSTALL_DEADLINE_S:
                raise RuntimeError(f"no `tabletop run` after {INSTALL_DEADLINE_S:.0f} s")
            if starting is not None:
                if now - starting > BOOT_DEADLINE_S:
                    raise RuntimeError(f"not ready {BOOT_DEADLINE_S:.0f} s after starting")
                if self.readyz():
                    ready_at = time.monotonic()
                    # The ready line follows /readyz's first 200 within the supervisor's poll.
                    line_deadline = ready_at + 10
                    while self.first_line(READY_LINE) is None and time.monotonic() < line_deadline:
                        time.sleep(0.05)
                    line_at = self.first_line(READY_LINE)
                    return {
                        "install_steps_s": round(starting - self.started, 2),
                        "readyz_s": round(ready_at - self.started, 2),
                        "ready_line_s": round(line_at - self.started, 2) if line_at else -1.0,
                        "boot_s": round(ready_at - starting, 2),
                    }
            time.sleep(0.2)

    def install_breakdown(self) -> list[dict[str, Any]]:
        """Each command make echoed before `tabletop run` started, with its seconds: make echoes
        a command, then runs it, so a command lasts until the next one's echo (or the starting
        line); what a command prints between (pip's and setuptools' warnings) is counted apart."""
        marks: list[tuple[float, str]] = []
        for at, line in list(self.lines):
            if STARTING_LINE in line:
                marks.append((at, ""))
                break
            if line.startswith(("test -x", ".venv/bin/", "touch ", "python3 ")):
                marks.append((at, line))
        return [
            {"command": cmd[:100], "s": round(marks[i + 1][0] - at, 2)}
            for i, (at, cmd) in enumerate(marks[:-1])
        ]

    def output_before_ready(self) -> dict[str, int]:
        """What a newcomer's terminal shows before the ready line: lines, and warnings."""
        lines: list[str] = []
        for _, line in list(self.lines):
            if READY_LINE in line:
                break
            lines.append(line)
        return {
            "lines": len(lines),
            "warning_lines": sum("warning" in line.lower() for line in lines),
            "pip_location_ignored_warnings": sum("is ignored: it is neither" in x for x in lines),
            "setuptools_editable_warnings": sum("BuildBackendWarning" in x for x in lines),
            "info_log_lines": sum("[info" in x for x in lines),
        }

    def tail(self, n: int = 30) -> str:
        return "\n".join(line for _, line in self.lines[-n:])

    def stop(self) -> float:
        """SIGTERM to make's process group; wait for make, then for every process of the group
        and for the port to close. Returns the seconds it took."""
        t0 = time.monotonic()
        pgid = self.proc.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        deadline = t0 + 60
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            log("make did not exit 60 s after SIGTERM: SIGKILL to its group")
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            log("the stack's group outlived SIGTERM by 60 s: SIGKILL")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        while time.monotonic() < deadline and self.readyz():
            time.sleep(0.1)
        self._reader.join(timeout=5)
        self._log.close()
        return round(time.monotonic() - t0, 2)


def play_first_game(base: str, target: int | None, shots: Path, headed: bool) -> dict[str, Any]:
    """Open the page, start a Fox game against the bot as a newcomer would, click until the
    result shows. Returns the page's figures."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TURN_DEADLINE_MS)
    out: dict[str, Any] = {}
    errors: list[str] = []
    with sync_playwright() as p:
        t_launch = time.monotonic()
        # Debian's chromium, never a browser Playwright downloads, as tests/e2e/test_browser.py.
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=not headed)
        out["browser_launch_s"] = round(time.monotonic() - t_launch, 2)
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(TURN_DEADLINE_MS)
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            out.update(_click_through(page, expect, base, target))
        except Exception:
            with contextlib.suppress(Exception):
                shots.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shots / "first-game-failure.png"), full_page=True)
                log(f"screenshot of the failure: {shots / 'first-game-failure.png'}")
            raise
        finally:
            out["console_errors"] = errors[:10]
            context.close()
            browser.close()
    return out


def _click_through(page: Any, expect: Any, base: str, target: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    t_open = time.monotonic()
    page.goto(f"{base}/")
    card = page.locator("li.game-card[data-game-type=fox]")
    play = page.get_by_role("button", name=f"Play {FOX_TITLE} against bots")
    expect(play).to_be_enabled()
    out["page_load_s"] = round(time.monotonic() - t_open, 2)
    # A target on the card itself (none today: the card has two buttons only).
    card_target = card.locator("select, input")
    offered = card_target.count() > 0
    out["card_offers_target"] = offered
    if target is None and offered:
        target = 1
    if target is not None and offered:
        field = card_target.first
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(str(target))
        else:
            field.fill(str(target))
    if target is None or offered:
        out["started_by"] = "landing card: Play against bots"
        t_press = time.monotonic()
        play.click()
    else:
        # The card offers no target: the "New game" form does (Points to win).
        out["started_by"] = "New game form (the card offers no target)"
        t_press = time.monotonic()
        page.get_by_role("navigation", name="Main").get_by_role("link", name="New game").click()
        page.get_by_label("Game", exact=True).select_option("fox")
        page.get_by_label("Seat 1", exact=True).select_option("heuristic")  # the card's bot
        page.locator("#opt-target").fill(str(target))
        page.get_by_role("button", name="Start the game").click()
    board = page.locator(".board.fox")
    expect(board).to_be_visible()
    out["press_to_board_s"] = round(time.monotonic() - t_press, 2)
    info = page.locator(".board.fox .info").inner_text()
    m = re.search(r"Game to (\d+)", info)
    out["target"] = int(m.group(1)) if m else None
    out["url"] = page.url

    playable = page.locator(
        ".hand button.card:enabled, button:text('Keep the decree card'):enabled"
    )
    over = page.locator(".result")
    status = page.locator(".status")
    clicks = 0
    kinds: dict[str, int] = {}
    ack_s: list[float] = []  # a click until the board shows a later version
    turn_wait_s: list[float] = []  # that until the next card can be clicked (the bot's move)
    t_first = None
    t_turn = time.monotonic()
    while True:
        expect(playable.first.or_(over).first).to_be_visible()
        if over.is_visible():
            break
        now = time.monotonic()
        if t_first is None:
            t_first = now
            out["page_to_first_move_s"] = round(now - t_open, 2)
        else:
            turn_wait_s.append(now - t_turn)
        target_el = playable.first
        label = target_el.get_attribute("aria-label") or target_el.inner_text()
        kind = label.split(" ")[0] if label else "?"
        kinds[kind] = kinds.get(kind, 0) + 1
        before = int(page.locator(".game").get_attribute("data-version") or 0)
        t_click = time.monotonic()
        target_el.click()
        page.wait_for_function(
            "v => Number(document.querySelector('.game').dataset.version) > v", arg=before
        )
        t_turn = time.monotonic()
        ack_s.append(t_turn - t_click)
        clicks += 1
        if clicks % 10 == 0:
            log(f"{clicks} clicks; {status.inner_text()}")
    t_over = time.monotonic()
    assert t_first is not None
    out["game_s"] = round(t_over - t_first, 2)
    out["clicks"] = clicks
    out["click_kinds"] = kinds
    out["click_ack_ms"] = {
        "median": round(statistics.median(ack_s) * 1e3, 1),
        "max": round(max(ack_s) * 1e3, 1),
    }
    out["waiting_for_bot_s"] = {
        "total": round(sum(turn_wait_s), 2),
        "median_ms": round(statistics.median(turn_wait_s) * 1e3, 1) if turn_wait_s else 0.0,
    }
    out["status"] = status.inner_text()
    out["result"] = " ".join(over.inner_text().split())
    rounds = page.locator("section[aria-label=Rounds] li")
    out["rounds"] = rounds.count()
    out["replay_link_shown"] = (
        page.get_by_role("link", name="Replay and verify this game").count() > 0
    )
    out["_t_over"] = t_over
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default=str(ROOT), help="what to clone (default: this checkout)")
    parser.add_argument(
        "--workdir", help="the tmp dir, kept (default: a new one, removed at the end)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the workdir (clone, .venv, logs)")
    parser.add_argument(
        "--reuse-venv",
        action="store_true",
        help="a second run: keep --workdir's tabletop/.venv across the fresh clone (make "
        "installs nothing: its stamp is touched)",
    )
    parser.add_argument(
        "--target",
        type=int,
        help="the Fox's points to win (default: the card's; 1 if the card offers a target)",
    )
    parser.add_argument("--no-warm-start", action="store_true", help="skip the second start")
    parser.add_argument("--headed", action="store_true", help="show the browser")
    args = parser.parse_args()

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        print(
            "Playwright is missing: run this with the project's .venv/bin/python", file=sys.stderr
        )
        return 2
    if not Path(CHROMIUM).exists():
        print(f"chromium is missing ({CHROMIUM}): apt-get install chromium", file=sys.stderr)
        return 2
    if args.reuse_venv and not args.workdir:
        parser.error("--reuse-venv needs --workdir (a previous run's, kept with --keep)")

    load_start = os.getloadavg()
    t0 = time.monotonic()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="first-game-")).absolute()
    work.mkdir(parents=True, exist_ok=True)
    clone = work / "tabletop"
    data_dir = work / "data"
    cache = pip_cache_dir()
    result: dict[str, Any] = {
        "bench": "first_game",
        "machine": machine(load_start),
        "pip_cache": {"dir": str(cache), "bytes_before": dir_bytes(cache)},
        "pip_sources": pip_sources(),
        "python3": subprocess.run(
            ["python3", "--version"], capture_output=True, text=True, check=False
        ).stdout.strip(),
    }
    kept_venv = work / "venv-kept"
    if args.reuse_venv:
        if not (clone / ".venv" / "bin" / "tabletop").exists():
            parser.error(f"--reuse-venv: no installed {clone / '.venv'} to reuse")
        shutil.rmtree(kept_venv, ignore_errors=True)
        (clone / ".venv").rename(kept_venv)
    shutil.rmtree(clone, ignore_errors=True)
    shutil.rmtree(data_dir, ignore_errors=True)
    stacks: list[Stack] = []
    try:
        log(f"git clone {args.repo} {clone}")
        t_clone = time.monotonic()
        subprocess.run(["git", "clone", "--quiet", args.repo, str(clone)], check=True)
        result["clone_s"] = round(time.monotonic() - t_clone, 2)
        result["commit"] = subprocess.run(
            ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if args.reuse_venv:
            kept_venv.rename(clone / ".venv")
            # The clone's files are newer than make's stamps: say the runtime is installed
            # (the editable installs point at this same path, so the .venv is this clone's).
            for stamp in (".installed-run", ".installed"):
                if (clone / ".venv" / stamp).exists():
                    (clone / ".venv" / stamp).touch()
        result["venv"] = "reused (--reuse-venv)" if args.reuse_venv else "fresh"

        port = free_port()
        log(f"make run (PORT={port}, TABLETOP_DATA_DIR={data_dir})")
        stack = Stack(clone, port, data_dir, work / "make-run.log")
        stacks.append(stack)
        times = stack.wait_ready()
        result["install_s"] = times["readyz_s"]  # make run until ready (GET /readyz 200)
        result["make_run"] = {
            **times,
            "install_breakdown": stack.install_breakdown(),
            "output_before_ready": stack.output_before_ready(),
        }
        log(f"ready after {times['readyz_s']} s (install {times['install_steps_s']} s)")
        result["pip_cache"]["bytes_after"] = dir_bytes(cache)

        t_page = time.monotonic()
        page = play_first_game(stack.base, args.target, work / "screenshots", args.headed)
        t_over = page.pop("_t_over")
        result.update(page)
        result["total_s"] = round(t_over - t0, 2)  # clone start until the result shows
        result["ready_to_game_over_s"] = round(t_over - t_page, 2)
        result["machine"]["loadavg_at_game_over"] = [round(x, 2) for x in os.getloadavg()]
        log(f"game over after {page['clicks']} clicks: {page['status']}")

        result["stop_s"] = stack.stop()
        stacks.remove(stack)
        if not args.no_warm_start:
            port = free_port()
            log(f"warm start: make run again (PORT={port})")
            warm = Stack(clone, port, data_dir, work / "make-run-warm.log")
            stacks.append(warm)
            wt = warm.wait_ready()
            result["warm_start"] = {
                "make_run_to_ready_s": wt["readyz_s"],
                "install_steps_s": wt["install_steps_s"],
                "boot_s": wt["boot_s"],
                "output_before_ready": warm.output_before_ready(),
                "stop_s": warm.stop(),
            }
            stacks.remove(warm)
    finally:
        for s in stacks:
            log("stopping the stack")
            s.stop()
        if args.keep or args.workdir:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
