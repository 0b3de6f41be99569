"""Commands through the whole path (HTTP → gunicorn → stream → worker → Lua append →
projections → reply) with ``Prefer: wait``: throughput and latency, next to raw Redis.

Starts its own redis-server, gunicorn and Fox worker(s); client processes each drive their own
two-human games over keep-alive HTTP connections for a fixed time.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import pct, redis_round_trip  # noqa: E402
from shared.redis_server import RedisServer, free_port  # noqa: E402


def _client(port: int, seconds: float, threads: int, seed: int, out: Any) -> None:
    import threading

    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def drive(tid: int) -> None:
        rng = random.Random(seed * 1000 + tid)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

        def call(method: str, path: str, body: Any = None, headers: dict | None = None):
            data = json.dumps(body) if body is not None else None
            h = {"Content-Type": "application/json", **(headers or {})}
            conn.request(method, path, body=data, headers=h)
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"null")

        mine: list[float] = []
        while time.monotonic() < stop_at:
            status, game = call(
                "POST",
                "/v1/games",
                {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "options": {"target": 35}},
            )
            gid, tokens = game["id"], game["tokens"]
            view = game["view"]
            while view["outcome"] is None and time.monotonic() < stop_at:
                seat = view["to_act"][0]
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                if view.get("seat") != seat:
                    _, view = call("GET", f"/v1/games/{gid}", headers=auth)
                cmd = rng.choice(view["legal_commands"])
                t = time.perf_counter()
                status, new = call(
                    "POST", f"/v1/games/{gid}/commands", cmd, {**auth, "Prefer": "wait=10"}
                )
                mine.append(time.perf_counter() - t)
                if status != 200:
                    errors[0] += 1
                    _, view = call("GET", f"/v1/games/{gid}", headers=auth)
                    continue
                view = new
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=drive, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((lat, errors[0]))


def _cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of a process and all its descendants (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return total


def run(
    seconds: float = 15.0,
    clients: int = 2,
    threads: int = 8,
    gateway_workers: int = 2,
    game_workers: int = 1,
) -> dict[str, Any]:
    """Start the stack, drive it, stop it; returns the figures."""
    server = RedisServer()
    port = free_port()
    env = {"GATEWAY_THREADS": "16", **os.environ, "REDIS_URL": server.url}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "deploy/gunicorn.conf.py"),
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(gateway_workers),
                "services.gateway.app:create_app()",
            ],
            env={**env, "TABLETOP_BOT_DISPATCH": "none", "TABLETOP_RATE_LIMITS": "off"},
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    for _ in range(game_workers):
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "services.cli", "worker", "--game", "fox"],
                env=env,
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gateway did not start")
            time.sleep(0.2)
        time.sleep(1.0)  # let the workers join their consumer group
        raw = redis_round_trip(server.url)
        q: Any = mp.Queue()
        ps = [
            mp.Process(target=_client, args=(port, seconds, threads, i, q)) for i in range(clients)
        ]
        roles = {
            "gateway (gunicorn)": procs[0].pid,
            "game worker(s)": None,
            "redis-server": server.proc.pid,
        }
        before = {
            "gateway (gunicorn)": _cpu_seconds(procs[0].pid),
            "game worker(s)": sum(_cpu_seconds(p.pid) for p in procs[1:]),
            "redis-server": _cpu_seconds(server.proc.pid),
        }
        start = time.perf_counter()
        for p in ps:
            p.start()
        lat: list[float] = []
        errors = 0
        for _ in ps:
            got, err = q.get()
            lat.extend(got)
            errors += err
        elapsed = time.perf_counter() - start
        after = {
            "gateway (gunicorn)": _cpu_seconds(procs[0].pid),
            "game worker(s)": sum(_cpu_seconds(p.pid) for p in procs[1:]),
            "redis-server": _cpu_seconds(server.proc.pid),
        }
        for p in ps:
            p.join()
        del roles
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        server.stop()
    return {
        "commands": len(lat),
        "commands_per_s": len(lat) / elapsed,
        "p50_ms": pct(lat, 50) * 1e3,
        "p99_ms": pct(lat, 99) * 1e3,
        "errors": errors,
        "redis_ping_p50_ms": raw["p50_ms"],
        "redis_ping_ops_per_s": raw["ops_per_s"],
        "concurrency": clients * threads,
        "seconds": seconds,
        "gateway_workers": gateway_workers,
        "game_workers": game_workers,
        "latencies_ms": [x * 1e3 for x in lat],
        "cpu_ms_per_command": {k: (after[k] - before[k]) * 1e3 / max(len(lat), 1) for k in before},
    }


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--gateway-workers", type=int, default=2)
    parser.add_argument("--game-workers", type=int, default=1)
    a = parser.parse_args()
    result = run(a.seconds, a.clients, a.threads, a.gateway_workers, a.game_workers)
    result.pop("latencies_ms")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
