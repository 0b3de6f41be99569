"""A throwaway PostgreSQL server for the archive's tests: ``initdb`` in a temporary folder,
then ``postgres`` on a free loopback port, stopped (fast shutdown) and removed by ``stop()``.

The binaries are found on PATH or in Debian's ``/usr/lib/postgresql/<version>/bin`` (the
``postgresql`` package puts them there; ``make test`` installs it when neither has them).
PostgreSQL refuses to run as root: run as root (CI, containers), both programs run as the
``postgres`` user the Debian package makes, else as ``nobody``, in a folder that user owns.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

# Where Debian keeps each installed version's server programs (not on PATH).
DEBIAN_BINDIRS = "/usr/lib/postgresql/*/bin"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL could be started here; the message says why and what to install."""


def find_bindir() -> str:
    """The folder holding ``initdb`` and ``postgres``: PATH's, else Debian's newest."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("postgres"):
        return str(Path(os.path.realpath(on_path)).parent)
    found = [d for d in glob.glob(DEBIAN_BINDIRS) if os.access(os.path.join(d, "initdb"), os.X_OK)]
    if not found:
        raise PostgresUnavailable(
            "no PostgreSQL server programs (initdb, postgres) on PATH or in "
            f"{DEBIAN_BINDIRS}: `make test` installs Debian's postgresql package, or set "
            "TABLETOP_TEST_POSTGRES_URL to a server the tests may use"
        )

    def version(path: str) -> tuple[int, ...]:
        name = Path(path).parent.name
        return tuple(int(p) for p in name.split(".") if p.isdigit())

    return max(found, key=version)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> pwd.struct_passwd | None:
    """The user the server runs as when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise PostgresUnavailable("running as root, and no 'postgres' or 'nobody' user to run as")


def _reachable(path: str) -> bool:
    """Whether every folder above ``path`` lets others through (another user's server must
    reach its folder)."""
    here = Path(path).resolve()
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in [here, *here.parents])


class PostgresServer:
    """A PostgreSQL server child on loopback, for tests: ``url`` reaches its superuser
    ``postgres`` (trust authentication, loopback only) in database ``postgres``."""

    def __init__(self) -> None:
        bindir = find_bindir()
        self.user = _run_as()
        parent = tempfile.gettempdir()
        if self.user is not None and not _reachable(parent):
            parent = "/tmp"
        self.base = tempfile.mkdtemp(prefix="tabletop-pg-", dir=parent)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        data = os.path.join(self.base, "data")
        log_path = os.path.join(self.base, "server.log")
        try:
            if self.user is not None:
                os.chown(self.base, self.user.pw_uid, self.user.pw_gid)
            self._as_user(
                [os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
                 "-E", "UTF8", "--locale=C", "--no-sync"],
                wait=True,
            )  # fmt: skip
            self.proc = self._as_user(
                [os.path.join(bindir, "postgres"), "-D", data, "-p", str(self.port),
                 "-h", "127.0.0.1", "-k", self.base, "-c", "fsync=off",
                 "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                 "-c", "max_connections=100"],
                log=log_path,
            )  # fmt: skip
            self._wait_ready(log_path)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """The server's URL (superuser ``postgres``, database ``postgres``)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_user(
        self, argv: list[str], *, wait: bool = False, log: str | None = None
    ) -> subprocess.Popen[bytes]:
        kwargs: dict[str, Any] = {}
        if self.user is not None:
            kwargs = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C")
        out = open(log or os.path.join(self.base, "initdb.log"), "ab")  # noqa: SIM115
        try:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.base, env=env, start_new_session=True, **kwargs,
            )  # fmt: skip
        finally:
            out.close()
        if wait and proc.wait(timeout=120) != 0:
            raise PostgresUnavailable(f"{Path(argv[0]).name} failed: {self._tail('initdb.log')}")
        return proc

    def _wait_ready(self, log_path: str) -> None:
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise PostgresUnavailable(
                    f"postgres exited with {self.proc.returncode}: {self._tail('server.log')}"
                )
            try:
                with psycopg.connect(self.url, connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise PostgresUnavailable(
                        f"postgres did not answer in {START_TIMEOUT_S:.0f} s: "
                        f"{self._tail('server.log')}"
                    ) from None
                time.sleep(0.1)

    def _tail(self, name: str) -> str:
        with contextlib.suppress(OSError):
            return Path(self.base, name).read_text(errors="replace")[-2000:].strip()
        return "(no log)"

    def stop(self) -> None:
        """Stop the server (fast shutdown, then SIGKILL after ``STOP_TIMEOUT_S``) and remove
        its folder."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # fast shutdown: roll back, disconnect, stop
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.base, ignore_errors=True)
