"""Stacks shared by the end-to-end files that need the same kind of stack and no fresh one.

A stack costs ten seconds and more to start and several to stop: the files that only play
through a default stack (tests/e2e/test_stack.py, test_clock_stack.py, test_audit_recipe.py)
share one (``shared_stack``), and the browser's files (test_browser.py,
test_invite_link.py) share theirs (``browser_stack_url``). A shared stack is started by the
first test that asks for it and stopped after the last one that does (see
``pytest_runtest_teardown``), not at the session's end: the tests after them do not run
beside an idle stack.

Files whose stack must be fresh or of their own keep their own: the ones that kill its
processes (test_crashes.py, test_supervisor.py; the latter counts the restarts in its log), read its output from the start
(test_run_quiet.py), measure a first search on cold workers (test_live_search.py), leave a
flood of searches running (test_search_load.py), or run with other settings (test_readme.py,
test_archive_stack.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests

from shared.redis_server import free_port
from tests.e2e.stack import FAST_STOP, Stack, start_stack

BROWSER_ORGANIZER_KEY = "org-browser"  # the browser stack's (test_browser.ORGANIZER_KEY)
# The shared stacks' fixtures: each is stopped right after the last test using it.
SHARED = ("shared_stack", "browser_stack_url")
_stops: dict[str, list[object]] = {name: [] for name in SHARED}
_last_users: dict[str, str] = {}  # fixture -> node id of the last test using it


@pytest.fixture(scope="session")
def shared_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A default stack (``start_stack``), its stderr in ``stderr.log``."""
    # Its own data directory: ./run/redis is a `make run`'s (locked while that one runs).
    stack = start_stack(tmp_path_factory.mktemp("shared-stack"), capture=True)
    _stops["shared_stack"].append(stack.stop)
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="session")
def browser_stack_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The whole stack, as tests/e2e/test_stack.py starts it, but in a directory of its own:
    `tabletop run` keeps Redis's files in ./run/redis, which another stack on this machine
    (a developer's, or test_stack's) would share otherwise. The browser's keys, no rate
    limits (a page's polling and a test's clicks come from one address)."""
    port = free_port()
    # Its own Redis and data: none of a developer's stack settings.
    mine = ("REDIS_URL", "REDIS_PORT", "TABLETOP_DATA_DIR", "TABLETOP_WORKERS")
    env = {k: v for k, v in os.environ.items() if k not in mine}
    env.update(
        TABLETOP_AUDITOR_KEYS="aud-browser",
        TABLETOP_ORGANIZER_KEYS=BROWSER_ORGANIZER_KEY,
        TABLETOP_RATE_LIMITS="off",
        **FAST_STOP,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "run", "--port", str(port)],
        env=env,
        cwd=tmp_path_factory.mktemp("stack"),
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"

    def stop() -> None:
        if proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    _stops["browser_stack_url"].append(stop)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, "tabletop run exited"
            try:
                if requests.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.2)
        else:
            pytest.fail("the stack did not come up")
        yield url
    finally:
        stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the last test using a shared stack (its own fixtures torn down), stop it."""
    yield
    if not _last_users:
        _last_users.update(dict.fromkeys(SHARED, ""))  # "": nothing runs using it
        for later in item.session.items:
            for name in SHARED:
                if name in getattr(later, "fixturenames", ()):
                    _last_users[name] = later.nodeid
    for name in SHARED:
        if _last_users.get(name) == item.nodeid:
            while _stops[name]:
                stop = _stops[name].pop()
                assert callable(stop)
                stop()
