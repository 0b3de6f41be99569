"""The live feed under load: concurrent feeds held, delivery delay, and the command path with
and without open feeds.

Starts its own redis-server, the gateway under gunicorn (``deploy/gunicorn.conf.py``: gevent
workers) and a Fox worker; opens ``--feeds`` Server-Sent Event streams on one game from one
process (non-blocking sockets), then:

* counts the streams that got their first message, and times ``/healthz`` while they are open;
* sends commands and times, for every open stream, the delay from sending the command (its
  append follows within the command's own latency) to the stream's next message: p50, p99;
* times the command path (``Prefer: wait``) with no feeds and with ``--busy-feeds`` open.

Run: ``python benchmarks/bench_feed.py --feeds 2000`` (``--json PATH`` keeps the figures).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import machine, pct  # noqa: E402
from shared.redis_server import RedisServer, free_port  # noqa: E402


class Streams:
    """Many feed connections on one selector; records when each sees an ``id:`` line."""

    def __init__(self, port: int, path: str, n: int) -> None:
        self.sel = selectors.DefaultSelector()
        self.seen: dict[int, list[float]] = {}
        self.buffers: dict[int, bytes] = {}
        request = f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode()
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(request)
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ)
            self.seen[s.fileno()] = []
            self.buffers[s.fileno()] = b""

    def pump(self, seconds: float) -> None:
        """Read whatever arrives for ``seconds``."""
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            for key, _ in self.sel.select(timeout=min(left, 0.05)):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                if not data:
                    self.sel.unregister(sock)
                    continue
                now = time.perf_counter()
                fd = sock.fileno()
                buf = self.buffers[fd] + data
                count = buf.count(b"\nid: ") + buf.startswith(b"id: ")
                self.seen[fd].extend([now] * count)
                self.buffers[fd] = buf[-8:]

    def opened(self) -> int:
        """Streams that received at least one message."""
        return sum(1 for times in self.seen.values() if times)

    def close(self) -> None:
        """Close every stream."""
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self.sel.close()


def _call(port: int, method: str, path: str, body: Any = None, headers: dict | None = None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    payload = json.dumps(body) if body is not None else None
    c.request(method, path, body=payload, headers={"Content-Type": "application/json",
                                                   **(headers or {})})  # fmt: skip
    resp = c.getresponse()
    data = resp.read()
    c.close()
    return resp.status, (json.loads(data) if data else None)


def _move(port: int, gid: str, tokens: list[str]) -> float:
    """Play the first legal command for the seat to act; seconds it took (Prefer: wait)."""
    _, public = _call(port, "GET", f"/v1/games/{gid}")
    seat = public["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    _, mine = _call(port, "GET", f"/v1/games/{gid}", headers=auth)
    start = time.perf_counter()
    status, _ = _call(port, "POST", f"/v1/games/{gid}/commands", mine["legal_commands"][0],
                      {**auth, "Prefer": "wait=10"})  # fmt: skip
    assert status == 200, status
    return time.perf_counter() - start


def _new_game(port: int) -> tuple[str, list[str]]:
    status, doc = _call(port, "POST", "/v1/games",
                        {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}],
                         "options": {"target": 1000}})  # fmt: skip
    assert status == 201
    return doc["id"], doc["tokens"]


def run(feeds: int, busy_feeds: int, commands: int) -> dict[str, Any]:
    """Start the stack, measure, stop it."""
    server = RedisServer()
    port = free_port()
    env = {**os.environ, "REDIS_URL": server.url, "TABLETOP_BOT_DISPATCH": "none",
           "TABLETOP_RATE_LIMITS": "off"}  # fmt: skip
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy/gunicorn.conf.py"),
             "--bind", f"127.0.0.1:{port}", "services.gateway.app:create_app()"],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "services.cli", "worker", "--game", "fox"],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ),
    ]  # fmt: skip
    out: dict[str, Any] = {"machine": machine(), "feeds": feeds, "busy_feeds": busy_feeds}
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if _call(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gateway did not start")
            time.sleep(0.2)
        time.sleep(1.0)
        # The command path alone.
        gid, tokens = _new_game(port)
        quiet = [_move(port, gid, tokens) for _ in range(commands)]
        # The command path with busy_feeds open on another game.
        other, _ = _new_game(port)
        busy = Streams(port, f"/v1/games/{other}/feed", busy_feeds)
        busy.pump(3.0)
        loaded = [_move(port, gid, tokens) for _ in range(commands)]
        busy.close()
        # Many feeds on one game: held, health, delivery.
        gid, tokens = _new_game(port)
        many = Streams(port, f"/v1/games/{gid}/feed", feeds)
        opened_at = time.perf_counter()
        while many.opened() < feeds and time.perf_counter() - opened_at < 60:
            many.pump(0.5)
        health = []
        for _ in range(50):
            t = time.perf_counter()
            _call(port, "GET", "/healthz")
            health.append(time.perf_counter() - t)
        delays: list[float] = []
        for _ in range(5):
            before = {fd: len(times) for fd, times in many.seen.items()}
            sent = time.perf_counter()
            _move(port, gid, tokens)
            many.pump(3.0)
            got = 0
            for fd, times in many.seen.items():
                if len(times) > before[fd]:
                    delays.append(times[before[fd]] - sent)
                    got += 1
            print(f"  a move reached {got} of {feeds} feeds", file=sys.stderr, flush=True)
        out.update(
            held=many.opened(),
            healthz_p50_ms=pct(health, 50) * 1e3,
            healthz_p99_ms=pct(health, 99) * 1e3,
            delivery_p50_ms=pct(delays, 50) * 1e3,
            delivery_p99_ms=pct(delays, 99) * 1e3,
            deliveries=len(delays),
            command_p50_ms=pct(quiet, 50) * 1e3,
            command_p99_ms=pct(quiet, 99) * 1e3,
            command_with_feeds_p50_ms=pct(loaded, 50) * 1e3,
            command_with_feeds_p99_ms=pct(loaded, 99) * 1e3,
        )
        many.close()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(20)
        server.stop()
    return out


def main() -> None:
    """Parse the arguments, run, print (and keep) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=2000)
    parser.add_argument("--busy-feeds", type=int, default=1000)
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.feeds, args.busy_feeds, args.commands)
    result["command"] = (
        f"python benchmarks/bench_feed.py --feeds {args.feeds} --busy-feeds {args.busy_feeds} "
        f"--commands {args.commands}"
    )
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
