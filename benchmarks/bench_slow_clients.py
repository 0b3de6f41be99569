"""Slow and waiting clients against the gateway: does `/healthz` stay quick?

Starts its own redis-server and the gateway under gunicorn (``deploy/gunicorn.conf.py``: gevent
workers), on loopback, with no game worker at first. Then, all at once:

* ``--slow`` connections send a `POST /v1/games`'s headers and trickle its body a byte at a
  time (the attack that took the gthread gateway down: 33 such connections were enough);
* ``--waits`` clients each send a command with `Prefer: wait=30` on a game of their own, which
  wait because no worker reads the stream (a stuck game type);
* one client times `GET /healthz` on a new connection every ``--every`` seconds for
  ``--hold`` seconds.

Then a Fox worker starts (every waiting command is answered), the slow bodies are finished
(every game is created), and `/metrics` is read back. Nothing here asserts a time: the e2e test
(`tests/e2e/test_slow_clients.py`) runs ``scenario`` for correctness only; this script reports
the latency (``--json`` keeps it for ``run_all.py``'s BENCHMARKS.md section).

Run: ``python benchmarks/bench_slow_clients.py --json benchmarks/slow_clients_last_run.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import machine, pct  # noqa: E402
from shared.redis_server import RedisServer, free_port  # noqa: E402

GAME = {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
BODY = json.dumps(GAME).encode()


def call(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> tuple[int, Any]:  # fmt: skip
    """One request on a new connection: (status, JSON body or None)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        payload = json.dumps(body) if body is not None else None
        c.request(method, path, body=payload,
                  headers={"Content-Type": "application/json", **(headers or {})})  # fmt: skip
        resp = c.getresponse()
        data = resp.read()
    finally:
        c.close()
    try:
        doc = json.loads(data) if data else None
    except ValueError:
        doc = data.decode(errors="replace")
    return resp.status, doc


@dataclass
class Gateway:
    """The processes of one run."""

    port: int
    redis: RedisServer
    env: dict[str, str]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_worker(self) -> None:
        """A Fox stream worker (the waiting commands' game type)."""
        self.procs.append(
            subprocess.Popen(
                [sys.executable, "-c", "from services.worker.main import run; run('fox')"],
                env=self.env,
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        )


@contextlib.contextmanager
def gateway(workers: int = 2) -> Iterator[Gateway]:
    """redis-server and gunicorn with the deploy config, on loopback; stopped on leaving."""
    server = RedisServer()
    port = free_port()
    env = {**os.environ, "REDIS_URL": server.url, "TABLETOP_BOT_DISPATCH": "none",
           "TABLETOP_RATE_LIMITS": "off", "GATEWAY_WORKERS": str(workers),
           "TABLETOP_MAX_WAIT": "30"}  # fmt: skip
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # gunicorn.conf.py makes its own
    gw = Gateway(port=port, redis=server, env=env)
    gw.procs.append(
        subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy/gunicorn.conf.py"),
             "--bind", f"127.0.0.1:{port}", "services.gateway.app:create_app()"],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError):
                if call(port, "GET", "/healthz", timeout=2)[0] == 200:
                    break
            if gw.procs[0].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the gateway did not start")
            time.sleep(0.1)
        yield gw
    finally:
        for p in gw.procs:
            p.terminate()
        for p in gw.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        server.stop()


class SlowBodies:
    """Connections that sent a POST's headers and trickle its body, one byte a ``tick``."""

    def __init__(self, port: int, n: int) -> None:
        self.socks: list[socket.socket] = []
        self.sent: dict[int, int] = {}
        head = (
            f"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(BODY)}\r\n\r\n"
        ).encode()
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(head)
            self.socks.append(s)
            self.sent[s.fileno()] = 0

    def trickle(self) -> None:
        """One more byte of every body (never the last: the request stays open)."""
        for s in self.socks:
            done = self.sent[s.fileno()]
            if done < len(BODY) - 1:
                s.sendall(BODY[done : done + 1])
                self.sent[s.fileno()] = done + 1

    def finish(self, timeout: float = 30) -> list[int]:
        """Send the rest of every body; the statuses answered (0: none)."""
        for s in self.socks:
            s.sendall(BODY[self.sent[s.fileno()] :])
        statuses: dict[int, int] = {}
        buffers: dict[int, bytes] = {s.fileno(): b"" for s in self.socks}
        sel = selectors.DefaultSelector()
        for s in self.socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while len(statuses) < len(self.socks) and (left := deadline - time.monotonic()) > 0:
            for key, _ in sel.select(timeout=min(left, 0.1)):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                with contextlib.suppress(BlockingIOError):
                    data = sock.recv(65536)
                    fd = sock.fileno()
                    buffers[fd] += data
                    if b"\r\n" in buffers[fd] or not data:
                        line = buffers[fd].split(b"\r\n", 1)[0].split()
                        statuses[fd] = int(line[1]) if len(line) > 1 else 0
                        sel.unregister(sock)
        sel.close()
        for s in self.socks:
            s.close()
        return [statuses.get(fd, 0) for fd in buffers]


class Waiters:
    """One thread a command, each sent with ``Prefer: wait=<wait>``."""

    def __init__(self, port: int, games: list[tuple[str, str, dict[str, Any]]], wait: int):
        self.results: list[tuple[int, float]] = []
        self._lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._send, args=(port, g, wait), daemon=True) for g in games
        ]
        for t in self.threads:
            t.start()

    def _send(self, port: int, game: tuple[str, str, dict[str, Any]], wait: int) -> None:
        gid, token, command = game
        started = time.perf_counter()
        try:
            status, _ = call(port, "POST", f"/v1/games/{gid}/commands", command,
                             {"Authorization": f"Bearer {token}", "Prefer": f"wait={wait}"},
                             timeout=wait + 30)  # fmt: skip
        except OSError:
            status = 0
        with self._lock:
            self.results.append((status, time.perf_counter() - started))

    def join(self, timeout: float) -> None:
        """Wait for every thread, up to ``timeout`` seconds in all."""
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))


def new_game(port: int) -> tuple[str, str, dict[str, Any]]:
    """A Fox game: (id, the token of the seat to act, its first legal command)."""
    status, doc = call(port, "POST", "/v1/games", GAME)
    assert status == 201, (status, doc)
    gid = doc["id"]
    seat = doc["view"]["to_act"][0] if doc.get("view") else None
    if seat is None:
        seat = call(port, "GET", f"/v1/games/{gid}")[1]["to_act"][0]
    token = doc["tokens"][seat]
    _, mine = call(port, "GET", f"/v1/games/{gid}", headers={"Authorization": f"Bearer {token}"})
    return gid, token, mine["legal_commands"][0]


def scenario(gw: Gateway, slow: int, waits: int, hold: float, every: float) -> dict[str, Any]:
    """The run described above; every status seen and every `/healthz` time."""
    games = [new_game(gw.port) for _ in range(waits)]
    # The yardstick: `/healthz` on this machine, now, with nothing else open.
    quiet = []
    for _ in range(40):
        started = time.perf_counter()
        call(gw.port, "GET", "/healthz", timeout=10)
        quiet.append(time.perf_counter() - started)
        time.sleep(every)
    bodies = SlowBodies(gw.port, slow)
    waiters = Waiters(gw.port, games, 30)
    health: list[tuple[int, float]] = []
    offsets: list[float] = []  # when each probe began, in seconds since the clients started
    begun = time.monotonic()
    end = begun + hold
    next_tick = time.monotonic()
    while time.monotonic() < end:
        if time.monotonic() >= next_tick:
            bodies.trickle()
            next_tick = time.monotonic() + 0.5
        offsets.append(time.monotonic() - begun)
        started = time.perf_counter()
        try:
            status, _ = call(gw.port, "GET", "/healthz", timeout=10)
        except OSError:
            status = 0
        health.append((status, time.perf_counter() - started))
        time.sleep(every)
    held = sum(1 for t in waiters.threads if t.is_alive())
    gw.start_worker()  # the waiting commands are answered now
    waiters.join(60)
    slow_statuses = bodies.finish()
    _, metrics_text = call(gw.port, "GET", "/metrics")
    latencies = [t for _, t in health]
    # The first second: the waiting clients' commands arrive all at once (200 POSTs parsed,
    # validated, put on the stream); after it only held connections remain.
    steady = [t for t, at in zip(latencies, offsets, strict=True) if at >= 1.0] or latencies
    worst = max(range(len(latencies)), key=latencies.__getitem__)
    return {
        "slow": slow,
        "waits": waits,
        "hold_s": hold,
        "waits_held_through_the_hold": held,
        "healthz_statuses": sorted({s for s, _ in health}),
        "healthz_probes": len(health),
        "healthz_quiet_p50_ms": pct(quiet, 50) * 1e3,
        "healthz_quiet_p99_ms": pct(quiet, 99) * 1e3,
        "healthz_p50_ms": pct(latencies, 50) * 1e3,
        "healthz_p99_ms": pct(latencies, 99) * 1e3,
        "healthz_max_ms": max(latencies) * 1e3,
        "healthz_max_at_s": offsets[worst],
        "healthz_steady_p50_ms": pct(steady, 50) * 1e3,
        "healthz_steady_p99_ms": pct(steady, 99) * 1e3,
        "healthz_steady_max_ms": max(steady) * 1e3,
        "wait_statuses": [s for s, _ in waiters.results],
        "slow_statuses": slow_statuses,
        "metrics": metrics_text if isinstance(metrics_text, str) else "",
    }


def section(path: Path) -> list[str]:
    """BENCHMARKS.md lines for a ``--json`` result (``run_all.py``)."""
    if not path.exists():
        return []
    d = json.loads(path.read_text())
    return [
        "",
        "## Slow and waiting clients",
        "",
        f"`{d['command']}` on {d['machine']}:",
        "the gateway under gunicorn with its default gevent workers (2) on loopback,",
        f"{d['slow']} connections trickling a request body a byte every 0.5 s and "
        f"{d['waits']} clients",
        "waiting with `Prefer: wait=30` on a game type with no worker, for "
        f"{d['hold_s']:.0f} s, while",
        "`/healthz` is timed on a new connection every 50 ms; then a worker starts and answers",
        "every waiting command.",
        "",
        "| figure | value |",
        "| --- | --- |",
        f"| `/healthz` p50 / p99 / max (goal < 100 ms), all {d['healthz_probes']} probes | "
        f"{d['healthz_p50_ms']:.1f} ms / {d['healthz_p99_ms']:.1f} ms / "
        f"{d['healthz_max_ms']:.1f} ms (at {d['healthz_max_at_s']:.1f} s) |",
        f"| the same after the first second (the {d['waits']} commands' arrival) | "
        f"{d['healthz_steady_p50_ms']:.1f} ms / {d['healthz_steady_p99_ms']:.1f} ms / "
        f"{d['healthz_steady_max_ms']:.1f} ms |",
        f"| `/healthz` with no other client (the yardstick, same run), p50 / p99 | "
        f"{d['healthz_quiet_p50_ms']:.1f} ms / {d['healthz_quiet_p99_ms']:.1f} ms |",
        f"| `/healthz` statuses | {', '.join(map(str, d['healthz_statuses']))} |",
        f"| waiting commands still held when the worker started | "
        f"{d['waits_held_through_the_hold']} of {d['waits']} |",
        f"| waiting commands answered 200 | {d['wait_statuses'].count(200)} of {d['waits']} |",
        f"| slow bodies answered 201 when finished | {d['slow_statuses'].count(201)} of "
        f"{d['slow']} |",
        "",
        "The slowest probe is the first one, sent as the waiting clients' commands all arrive",
        "at once (each parsed, checked and put on its stream by the gateway; sent from as many",
        "threads of the measuring process). With every connection held after that, `/healthz`",
        f"p99 is {d['healthz_steady_p99_ms'] - d['healthz_quiet_p99_ms']:+.1f} ms from the "
        "yardstick measured just before. The",
        f"machine's load average was {d.get('load_average', '?')} when the run began (other "
        "work on the same 2 cores).",
    ]


def main() -> None:
    """Parse the arguments, run, print (and keep) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--waits", type=int, default=200)
    parser.add_argument("--hold", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=0.05)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    load = round(os.getloadavg()[0], 1)  # other work on the machine skews every time here
    with gateway() as gw:
        result = scenario(gw, args.slow, args.waits, args.hold, args.every)
    result.pop("metrics")
    result["machine"] = machine()
    result["load_average"] = load
    result["command"] = (
        f"python benchmarks/bench_slow_clients.py --slow {args.slow} --waits {args.waits} "
        f"--hold {args.hold:g}"
    )
    print(json.dumps({k: v for k, v in result.items() if not k.endswith("statuses")}, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


run = main  # the name tests/unit/test_benchmarks_import.py looks for


if __name__ == "__main__":
    main()
