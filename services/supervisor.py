"""The process supervisor behind ``tabletop run``.

Keeps every child of the stack up: a child that exits while the stack runs is restarted after
an exponential back-off (``BACKOFF_FIRST`` doubling to ``BACKOFF_MAX``, reset once a child has
stayed up ``HEALTHY_AFTER``), and each exit is logged to stderr with the child's name and code.
Only a stop (Ctrl-C or SIGTERM to ``tabletop run``) ends the stack, stage by stage in dependency
order: the lowest stage first (gateway and game workers), then Celery, Redis last.

The class knows nothing of what it runs: each child is a ``ChildSpec`` whose ``start`` returns
something process-like, so the restart and stop logic is tested with fake processes and a fake
clock (tests/unit/test_supervisor.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TextIO

BACKOFF_FIRST = 0.5  # seconds before the first restart of a child
BACKOFF_MAX = 30.0  # a child that keeps failing is tried again this often, no less
HEALTHY_AFTER = 10.0  # up this long, a child's next exit counts as its first again
# A game worker's back-off stops here: with one worker per game type (the default) its type
# is unserved until it is back (about 1.5 s to start), so a worker killed again and again must
# not wait 8, 16, 30 s like the other children. A worker that cannot start costs a start
# (about 0.6 s of CPU) every few seconds instead.
WORKER_BACKOFF_MAX = 3.0
# Per stage: longer than gunicorn's graceful_timeout (10 s), so that its master outlives its
# workers and kills one that hangs rather than orphaning it (seen once in a test run).
STOP_TIMEOUT = 15.0
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
# The stack is announced only once it answers ready (the gateway's /readyz 200), asked this
# often; past READY_PATIENCE still not ready, the reason is logged once (a worker that cannot
# start, say), instead of a silence that looks like a hang.
READY_EVERY = 0.5
READY_PATIENCE = 60.0

# Shutdown stages, lowest first.
FRONT = 0  # gateway and game workers: stop taking requests and commands first
BACKGROUND = 1  # Celery: bot moves and scoring in flight finish while Redis is still there
STORE = 2  # Redis, last: everything above may still write until it has stopped


class Process(Protocol):
    """What the supervisor needs of a child (``subprocess.Popen`` has it)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


@dataclass(frozen=True)
class ChildSpec:
    """One supervised child: ``start`` spawns it (again, after each exit)."""

    name: str
    start: Callable[[], Process]
    stage: int = FRONT
    backoff_max: float | None = None  # its own cap on the restart back-off (else the stack's)


class GroupPopen(subprocess.Popen[bytes]):
    """A child leading its own process group. Ctrl-C at the terminal reaches only the
    supervisor, which stops the stack in order, and ``kill()`` takes the child's own children
    along (gunicorn's workers, Celery's pool), which would otherwise outlive a killed parent,
    gunicorn's still holding the port its restarted master needs."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        super().__init__(list(argv), env=env, process_group=0, preexec_fn=die_with_parent())

    def kill(self) -> None:
        # The group outlives its leader while any member lives, so this reaches leftovers of a
        # leader already dead; a process group id is never reused while the group exists.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


def die_with_parent() -> Callable[[], None] | None:
    """On Linux, a function for the forked child asking the kernel for SIGTERM when the
    supervisor dies (``PR_SET_PDEATHSIG``): a ``kill -9`` of ``tabletop run`` then takes its
    children along instead of leaving them on the ports. Looked up before the fork, so the
    child only makes the one call (the supervisor runs no threads that could hold a lock)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def set_pdeathsig() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the supervisor died before the call: nobody would send it
            os.kill(os.getpid(), signal.SIGTERM)

    return set_pdeathsig


def command(
    name: str,
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    stage: int = FRONT,
    backoff_max: float | None = None,
) -> ChildSpec:
    """A child that runs ``argv`` in its own process group."""
    return ChildSpec(name, lambda: GroupPopen(argv, env), stage, backoff_max)


def describe_exit(code: int) -> str:
    """``-9`` -> ``code -9 (SIGKILL)``: a signal's name says more than its number."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"code {code} ({signal.Signals(-code).name})"
    return f"code {code}"


@dataclass
class _Child:
    spec: ChildSpec
    proc: Process | None = None
    started: float = 0.0
    failures: int = 0  # exits in a row, each within HEALTHY_AFTER of its start
    restart_at: float | None = None  # when a dead child is due to start again
    restarts: int = 0


@dataclass
class Supervisor:
    """Starts, watches, restarts and stops the children of one stack."""

    specs: Sequence[ChildSpec]
    clock: Callable[[], float] = time.monotonic
    out: TextIO = field(default_factory=lambda: sys.stderr)
    backoff_first: float = BACKOFF_FIRST
    backoff_max: float = BACKOFF_MAX
    healthy_after: float = HEALTHY_AFTER
    stop_timeout: float = STOP_TIMEOUT
    # Plain flags, not threading.Event: they are set from a signal handler, and an Event's
    # set() can deadlock on the lock its own thread holds inside wait().
    stopping: bool = False
    hurry: bool = False
    # None when the stack answers ready, else why not (``http_readiness``); ``on_ready`` is
    # called once, the first time it is.
    readiness: Callable[[], str | None] | None = None
    on_ready: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        self.children = [_Child(spec) for spec in self.specs]
        self._in_stop = False
        self._ready = False
        self._ready_asked: float | None = None
        self._ready_since: float | None = None
        self._told_unready = False

    def log(self, message: str) -> None:
        print(f"tabletop: {message}", file=self.out, flush=True)

    def adopt(self, name: str, proc: Process) -> None:
        """Record that ``name`` was started by the caller already (Redis, which must answer
        before anything else starts)."""
        child = self._child(name)
        child.proc, child.started = proc, self.clock()

    def start(self) -> None:
        """Start every child not started yet, in the order given."""
        for child in self.children:
            if child.proc is None:
                self._spawn(child)

    def pid(self, name: str) -> int | None:
        """The pid of child ``name`` while it runs."""
        proc = self._child(name).proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def check(self) -> None:
        """One round: note children that exited, start those whose back-off is over."""
        if self.stopping:
            return
        now = self.clock()
        for child in self.children:
            if child.proc is not None and child.restart_at is None:
                code = child.proc.poll()
                if code is not None:
                    self._exited(child, code, now)
            if child.restart_at is not None and now >= child.restart_at:
                self._spawn(child)

    def _exited(self, child: _Child, code: int, now: float) -> None:
        assert child.proc is not None
        # Whatever of its process group outlived it goes too, before a new one starts.
        child.proc.kill()
        up = now - child.started
        child.failures = 1 if up >= self.healthy_after else child.failures + 1
        delay = self._delay(child)
        child.restart_at = now + delay
        self.log(
            f"{child.spec.name} (pid {child.proc.pid}) exited with {describe_exit(code)} "
            f"after {up:.1f} s; restarting in {delay:g} s"
        )

    def _delay(self, child: _Child) -> float:
        cap = self.backoff_max if child.spec.backoff_max is None else child.spec.backoff_max
        return float(min(cap, self.backoff_first * 2 ** (child.failures - 1)))

    def _spawn(self, child: _Child) -> None:
        now = self.clock()
        child.restart_at = None
        try:
            proc = child.spec.start()
        except Exception as exc:  # e.g. Redis's port taken meanwhile: try again, later
            child.failures += 1
            delay = self._delay(child)
            child.restart_at = now + delay
            self.log(f"{child.spec.name} could not start ({exc}); retrying in {delay:g} s")
            return
        if child.proc is not None:
            child.restarts += 1
            self.log(f"{child.spec.name} restarted (pid {proc.pid}, restart {child.restarts})")
        child.proc, child.started = proc, now

    def watch_ready(self) -> None:
        """Ask ``readiness`` (at most every READY_EVERY seconds) until it answers ready once,
        then call ``on_ready``; log the reason once if that takes longer than READY_PATIENCE."""
        if self._ready or self.readiness is None or self.stopping:
            return
        now = self.clock()
        if self._ready_since is None:
            self._ready_since = now
        if self._ready_asked is not None and now - self._ready_asked < READY_EVERY:
            return
        self._ready_asked = now
        why = self.readiness()
        if why is None:
            self._ready = True
            if self.on_ready is not None:
                self.on_ready()
        elif not self._told_unready and now - self._ready_since >= READY_PATIENCE:
            self._told_unready = True
            self.log(f"not ready after {READY_PATIENCE:g} s: {why} (still waiting)")

    def request_stop(self, *_: object) -> None:
        """The signal handler: the first signal stops in order, a second one hurries it (every
        child still running is killed at once)."""
        if self.stopping:
            self.hurry = True
            if not self._in_stop:
                # Stuck before the stop began (a restarted Redis loading a big file): break
                # out of it; run() still stops every child on the way out.
                raise KeyboardInterrupt
        self.stopping = True

    def run(self, poll: float = 0.2) -> None:
        """Start, then watch until SIGINT or SIGTERM; then stop every child in order."""
        signal.signal(signal.SIGINT, self.request_stop)
        signal.signal(signal.SIGTERM, self.request_stop)
        try:
            self.start()
            while not self.stopping:
                self.check()
                self.watch_ready()
                time.sleep(poll)
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop every child, stage by stage, lowest first: SIGTERM, then SIGKILL to what is
        still running after ``stop_timeout`` (at once if hurried)."""
        self.stopping = True
        self._in_stop = True
        running = [c for c in self.children if c.proc is not None and c.proc.poll() is None]
        if running:
            self.log(f"stopping {len(running)} processes, in order")
        began = self.clock()
        for stage in sorted({c.spec.stage for c in self.children}):
            group = [c for c in self.children if c.spec.stage == stage and c.proc is not None]
            for child in group:
                assert child.proc is not None
                if child.proc.poll() is None:
                    child.proc.terminate()
            deadline = self.clock() + self.stop_timeout
            for child in group:
                assert child.proc is not None
                while child.proc.poll() is None and not self.hurry:
                    left = deadline - self.clock()
                    if left <= 0:
                        self.log(f"{child.spec.name} did not stop in {self.stop_timeout:g} s")
                        break
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        child.proc.wait(min(left, 0.2))
                # Also the leftovers of a child that did stop (its group's stragglers).
                child.proc.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.proc.wait(5)
            if running and group:
                names = ", ".join(sorted({c.spec.name.rsplit("-", 1)[0] for c in group}))
                self.log(f"stopped {names} ({self.clock() - began:.1f} s)")

    def _child(self, name: str) -> _Child:
        for child in self.children:
            if child.spec.name == name:
                return child
        raise KeyError(name)


def http_readiness(url: str, timeout: float = 1.0) -> Callable[[], str | None]:
    """A ``readiness`` asking ``url`` (a gateway's ``/readyz``) through the bot kit's client:
    None on a 200, else one line of why not (the status and the body's ``missing``, or the
    connection's error)."""
    api, sep, rest = url.rpartition("/readyz")
    if not sep or rest:
        raise ValueError(f"{url!r} is not a gateway's /readyz URL")

    def ask() -> str | None:
        # Imported here: only `tabletop run` waits on a gateway, and httpx is no light import.
        import httpx
        from tabletop_client import Client, ProblemError, TabletopError, TransportError

        try:
            # A transport of its own: no proxy from the environment (the gateway is on this
            # machine), which httpx would otherwise route the probe through.
            with Client(api, timeout=timeout, transport=httpx.HTTPTransport()) as client:
                client.readiness()
            return None
        except ProblemError as exc:  # 503 with the reasons in its body
            missing = exc.body.get("missing")
            reasons = "; ".join(map(str, missing)) if isinstance(missing, list) else ""
            return f"{exc.status}: {reasons or exc.title}"
        except TransportError as exc:  # not up yet
            return f"no answer from {url}: {exc.reason}"
        except TabletopError as exc:  # a 200 that is no JSON object: something else listens
            return f"no readiness report from {url}: {exc}"

    return ask


# Celery queues and their pools, as deploy/Procfile and deploy/docker-compose.yml run them:
# quick bots and searching bots apart, so that a search of seconds never holds up the random and
# heuristic moves of every other game; searches (bots' and hints', taken fairly by priority:
# shared/app/searches.py) one process per core, since each keeps a core busy for its budget;
# tournament batches (whole games) on a third, one process per core. (queue, node name,
# concurrency; None: Celery's default, one per core.)
CELERY_QUEUES: tuple[tuple[str, str, int | None], ...] = (
    ("tabletop", "bots", 2),
    ("tabletop-search", "search", None),
    ("tabletop-tournaments", "tournaments", None),
)
# Registered bots' turns wait on webhooks: greenlets, 200 at once in one process, taken from a
# plain Redis list rather than a Celery queue (``services/bots/remote_worker.py``).
REMOTE_WORKER = ("-m", "services.bots.remote_worker", "--concurrency", "200")


def stack_specs(
    *,
    python: str,
    env: Mapping[str, str],
    port: int,
    gateway_workers: int,
    workers: int,
    games: Sequence[str],
    gunicorn_conf: str,
    stack_id: str,
    metrics_root: str | None = None,
) -> list[ChildSpec]:
    """The children of ``tabletop run`` (Redis aside): gunicorn, ``workers`` stream consumers
    per game type, a Celery worker per queue and the remote bots' worker. ``stack_id`` (the supervisor's pid) keeps
    consumer and node names apart from another stack's on the same Redis. With
    ``metrics_root``, each process type writes its metrics to a directory below it and the
    gateway's /metrics sums them all (``metrics_env``)."""
    worker_dir = celery_root = None
    gateway_env = dict(env)
    if metrics_root is not None:
        worker_dir = os.path.join(metrics_root, "workers")
        celery_root = os.path.join(metrics_root, "celery")
        # Only the gateway's processes share the gunicorn directory: anyone else writing
        # there would be summed in twice or under the wrong process.
        env = {k: v for k, v in env.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        gateway_env = {
            **env,
            "PROMETHEUS_MULTIPROC_DIR": os.path.join(metrics_root, "gateway"),
            "TABLETOP_WORKER_METRICS_DIR": worker_dir,
            "TABLETOP_CELERY_METRICS_DIR": celery_root,
        }
    specs = [
        command(
            "gateway",
            [
                python,
                "-m",
                "gunicorn",
                "-c",
                gunicorn_conf,
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(gateway_workers),
                # Its start-up lines (listening, booting each worker) would bury the ready
                # line `tabletop run` prints; warnings and errors still show.
                "--log-level",
                "warning",
                "services.gateway.app:create_app()",
            ],
            gateway_env,
        )
    ]
    for game in games:
        for i in range(1, workers + 1):
            # A consumer name of its own in group `workers`, the same across restarts: the
            # restarted worker re-reads its predecessor's pending commands at once, instead of
            # another worker claiming them once idle for CLAIM_IDLE_MS.
            name = f"worker-{game}-{i}"
            consumer = f"{socket.gethostname()}-{stack_id}-{game}-{i}"
            worker_env = {**env, "TABLETOP_CONSUMER_NAME": consumer}
            if worker_dir is not None:  # one directory for them all: a file per process
                worker_env["TABLETOP_WORKER_METRICS_DIR"] = worker_dir
            argv = [python, "-m", "services.cli", "worker", "--game", game]
            specs.append(command(name, argv, worker_env, backoff_max=WORKER_BACKOFF_MAX))
    for queue, node, concurrency in CELERY_QUEUES:
        # -q: no banner (a screenful per worker, three before the ready line); with
        # --loglevel WARNING a worker says nothing unless something is wrong.
        argv = [python, "-m", "celery", "-q", "-A", "services.bots.worker", "worker", "-Q", queue]
        argv += ["--concurrency", str(concurrency or os.cpu_count() or 2)]
        argv += ["--loglevel", "WARNING", "-n", f"{node}-{stack_id}@%h"]
        celery_env = dict(env)
        if celery_root is not None:
            # A directory each: a Celery worker's own port serves its pool's sum, not all of
            # them; the gateway reads every one below celery_root.
            celery_env["TABLETOP_CELERY_METRICS_DIR"] = os.path.join(celery_root, node)
        specs.append(command(f"celery-{node}", argv, celery_env, BACKGROUND))
    remote_env = dict(env)
    if celery_root is not None:  # its turns counted beside the Celery tasks', in the gateway's sum
        remote_env["TABLETOP_REMOTE_METRICS_DIR"] = os.path.join(celery_root, "remote")
    specs.append(command("remote-bots", [python, *REMOTE_WORKER], remote_env, BACKGROUND))
    return specs
