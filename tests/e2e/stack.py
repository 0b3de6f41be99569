"""Start and stop `tabletop run` (and other process trees) for the end-to-end tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from shared.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]

# A test stack's gateway stops in a second rather than deploy/gunicorn.conf.py's 10 s: on a
# SIGTERM, gunicorn's gevent workers wait up to ``graceful_timeout`` for every open
# connection, an idle keep-alive one too (a test's session, the browser's), and a test's stop
# then waited those 10 s for nothing. GUNICORN_CMD_ARGS overrides the config file's setting;
# the stop itself is the same (the supervisor's, in order), and a request still running after
# the second is cut as after the ten.
FAST_STOP = {"GUNICORN_CMD_ARGS": "--graceful-timeout 1"}


def stack_env(**extra: str) -> dict[str, str]:
    """The environment of a test stack: its own Redis (no REDIS_URL), known keys, and limits a
    test client playing flat out stays under (the limits are tested in
    tests/integration/test_rate_limits.py)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "REDIS_PORT", "TABLETOP_WORKERS", "TABLETOP_DATA_DIR")
    }
    env.update(
        TABLETOP_ORGANIZER_KEYS="org-e2e",
        TABLETOP_AUDITOR_KEYS="aud-e2e",
        TABLETOP_RATE_COMMAND="1000/second",
        TABLETOP_RATE_COMMAND_ADDR="1000/second",
        **FAST_STOP,
    )
    env.update(extra)
    return env


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                # The command name in parentheses may hold spaces; the fields after it do not.
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid``: the supervisor puts its children in process groups
    of their own, out of reach of a killpg on its own."""
    parents = _parents()
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        frontier += kids
    return found


def cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return ""


def kill_tree(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, wait: float = 30) -> None:
    """Stop ``proc`` with ``sig``; whatever of its tree outlives it by ``wait`` s is killed."""
    if proc.poll() is None:
        below = descendants(proc.pid)
        proc.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)
        for pid in [proc.pid, *below, *descendants(proc.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    proc.wait()


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the stack exited with code {proc.returncode}"
        try:
            if requests.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    pytest.fail(f"the stack at {url} did not come up in {timeout:g} s")


@dataclass
class Stack:
    """A running `tabletop run`."""

    proc: subprocess.Popen[bytes]
    url: str
    data_dir: Path
    log: Path | None  # its stderr, when captured

    @property
    def redis_url(self) -> str:
        return (self.data_dir / "redis.url").read_text().strip()

    def children(self, needle: str) -> list[int]:
        """Pids of the supervisor's own children whose command line contains ``needle``."""
        mine = [p for p, parent in _parents().items() if parent == self.proc.pid]
        return sorted(p for p in mine if needle in cmdline(p))

    def stderr(self) -> str:
        return self.log.read_text(errors="replace") if self.log else ""

    def stop(self) -> None:
        kill_tree(self.proc)


def run_cli(*args: str) -> list[str]:
    """The argv of ``tabletop ARGS``."""
    return [sys.executable, "-m", "services.cli", *args]


def start_stack(data_dir: Path, *, workers: int = 1, capture: bool = False, **env: str) -> Stack:
    """`tabletop run` on free ports with its data in ``data_dir``, once ``/healthz`` answers.
    ``capture``: its stderr goes to ``data_dir/stderr.log`` (the supervisor's messages)."""
    port = free_port()
    log = data_dir / "stderr.log" if capture else None
    argv = run_cli("run", "--port", str(port), "--workers", str(workers))
    argv += ["--data-dir", str(data_dir)]
    with open(log, "wb") if log else contextlib.nullcontext() as err:
        proc = subprocess.Popen(argv, env=stack_env(**env), stderr=err, cwd=ROOT)
    stack = Stack(proc, f"http://127.0.0.1:{port}", data_dir, log)
    try:
        wait_healthy(stack.url, proc)
    except BaseException:
        stack.stop()
        raise
    return stack
