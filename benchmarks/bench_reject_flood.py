"""A flood of illegal commands from one address (issue 23, item 7): does Redis stay bounded?

Starts its own redis-server, the gateway under gunicorn (``deploy/gunicorn.conf.py``) and a
Skull worker, with the default abuse limits (``TABLETOP_RATE_*`` unset). Creates one
six-seat Skull game and has each of its six seat tokens send, as fast as the gateway
answers and without waiting for outcomes, a ``bid`` the rules refuse (nobody may bid before
every seat has placed a disc), all from 127.0.0.1, for ``--seconds``. Then it reports:

* the answers: 202 (taken into the service, to be refused by the worker), 429 (held back by
  a limit) and any other status;
* Redis ``used_memory`` before, at its highest during, once every refusal is decided,
  once the replies (60 s) and stream entries (the worker trims every 30 s) are gone and the
  outcomes alone are held, and after ``TABLETOP_REJECTED_TTL`` (``--ttl``, short here);
* bytes per refused command held: ``(held - before) / taken``, and the mean ``MEMORY
  USAGE`` of the outcome keys.

``--root DIR`` runs the stack from another checkout (``git archive HEAD | tar -x -C DIR``):
the tree before a change, for before/after figures. A tree without the per-address limit or
the refusal TTL ignores those settings, which is the point.

Run: ``python benchmarks/bench_reject_flood.py --seconds 30 --ttl 120 [--root DIR] [--json
PATH]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import machine  # noqa: E402
from shared.redis_server import RedisServer, free_port  # noqa: E402

SEATS = 6
REPLY_TTL_S = 60  # shared/adapters/redis.py REPLY_TTL
HOUSEKEEPING_S = 30  # services/worker/deadlines.py HOUSEKEEPING_S: the streams' trim


class Conn:
    """One keep-alive HTTP connection to the gateway (reopened if the server closes it)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method: str, path: str, body: Any = None, headers: dict | None = None):
        """(status, parsed JSON or None)."""
        payload = json.dumps(body) if body is not None else None
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        for attempt in range(2):
            try:
                self.c.request(method, path, body=payload, headers=hdrs)
                resp = self.c.getresponse()
                data = resp.read()
                return resp.status, (json.loads(data) if data else None)
            except (http.client.HTTPException, OSError):
                self.c.close()
                self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                if attempt:
                    raise
        raise AssertionError("unreachable")


def _used(r: Any) -> int:
    return int(r.info("memory")["used_memory"])


def _keyspace(r: Any) -> int:
    """``used_memory`` less the clients' buffers: what the keys hold (a busy gateway opens
    more connections, each with its buffers, which is no refusal's doing)."""
    info = r.info("memory")
    return int(info["used_memory"]) - int(info["mem_clients_normal"])


def _result_keys(r: Any, gid: str) -> list[bytes]:
    return list(r.scan_iter(match=f"game:{{{gid}}}:result:*", count=1000))


def _wait(what: str, done: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {seconds} s")
        time.sleep(0.5)


def _undecided(r: Any, gid: str, taken: int) -> int:
    """Commands taken in and not decided yet: outcomes missing or still ``pending``."""
    found = _result_keys(r, gid)
    pending = 0
    for i in range(0, len(found), 1000):
        values = r.mget(found[i : i + 1000])
        pending += sum(1 for v in values if v is not None and b'"pending"' in v)
    return max(0, taken - len(found)) + pending


def _worker_listening(r: Any) -> bool:
    """The Skull worker has made its consumer group (it reads from then on)."""
    for stream in r.scan_iter(match="cmd:*skull*", count=100):
        if any(g.get("name") in (b"workers", "workers") for g in r.xinfo_groups(stream)):
            return True
    return False


def run(seconds: float = 30.0, ttl: int = 120, root: Path = ROOT) -> dict[str, Any]:
    """Start the stack from ``root``, flood it, watch Redis's memory, stop it."""
    import redis

    server = RedisServer()
    r = redis.Redis.from_url(server.url)
    port = free_port()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("TABLETOP_RATE")
    } | {
        "REDIS_URL": server.url,
        "TABLETOP_BOT_DISPATCH": "none",
        "TABLETOP_REJECTED_TTL": str(ttl),
        "PYTHONPATH": str(root),
    }  # fmt: skip
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(root / "deploy/gunicorn.conf.py"),
             "--bind", f"127.0.0.1:{port}", "services.gateway.app:create_app()"],
            env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "services.cli", "worker", "--game", "skull"],
            env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ),
    ]  # fmt: skip
    out: dict[str, Any] = {"machine": machine(), "root": str(root), "seconds": seconds,
                           "ttl": ttl, "tokens": SEATS}  # fmt: skip
    try:
        probe = Conn(port)

        def healthy() -> bool:
            try:
                return probe.call("GET", "/healthz")[0] == 200 and _worker_listening(r)
            except OSError:
                return False

        _wait("the stack to be ready", healthy, 60)
        status, game = probe.call(
            "POST",
            "/v1/games",
            {"game": "skull", "seats": [{"name": f"p{i}"} for i in range(SEATS)]},
        )
        assert status == 201, (status, game)
        gid, tokens = game["id"], game["tokens"]
        time.sleep(2.0)
        out["keys_before"] = int(r.dbsize())
        out["used_before"] = _used(r)
        out["keyspace_before"] = _keyspace(r)

        counts: dict[int, int] = {}
        lock = threading.Lock()
        stop = time.monotonic() + seconds
        sampled = threading.Event()
        peak = [out["used_before"], out["keyspace_before"]]

        def flood(token: str) -> None:
            conn = Conn(port)
            auth = {"Authorization": f"Bearer {token}"}
            mine: dict[int, int] = {}
            while time.monotonic() < stop:
                code, _ = conn.call("POST", f"/v1/games/{gid}/commands",
                                    {"type": "bid", "count": 1}, auth)  # fmt: skip
                mine[code] = mine.get(code, 0) + 1
            with lock:
                for code, n in mine.items():
                    counts[code] = counts.get(code, 0) + n

        def sample() -> None:
            while not sampled.is_set():
                peak[0] = max(peak[0], _used(r))
                peak[1] = max(peak[1], _keyspace(r))
                sampled.wait(0.25)

        sampler = threading.Thread(target=sample)
        sampler.start()
        flooders = [threading.Thread(target=flood, args=(t,)) for t in tokens]
        started = time.monotonic()
        for t in flooders:
            t.start()
        for t in flooders:
            t.join()
        ended = time.monotonic()
        out["used_end_of_flood"] = _used(r)
        out["keyspace_end_of_flood"] = _keyspace(r)
        taken = counts.get(202, 0)
        out.update(
            answers={str(k): v for k, v in sorted(counts.items())},
            taken=taken,
            limited=counts.get(429, 0),
            taken_per_s=taken / (ended - started),
        )
        _wait("the worker to decide every command", lambda: _undecided(r, gid, taken) == 0, 900)
        sampled.set()
        sampler.join()
        out["used_peak"], out["keyspace_peak"] = peak
        out["decide_lag_s"] = time.monotonic() - ended
        out["used_decided"] = _used(r)
        out["keyspace_decided"] = _keyspace(r)
        results = _result_keys(r, gid)
        sample_keys = results[:: max(1, len(results) // 500)]
        out["result_keys"] = len(results)
        out["result_ttl_max"] = max((int(r.ttl(k)) for k in sample_keys), default=None)
        out["result_key_bytes"] = (
            sum(int(r.memory_usage(k) or 0) for k in sample_keys) / len(sample_keys)
            if sample_keys
            else 0.0
        )
        stored = r.get(results[0]) if results else None
        out["result_body_bytes"] = len(stored) if stored else 0
        # The replies nobody waited for expire, the worker trims the acknowledged entries.
        held_at = ended + REPLY_TTL_S + 5
        time.sleep(max(0.0, held_at - time.monotonic()))
        r.execute_command("MEMORY", "PURGE")
        out["used_held"] = _used(r)
        out["keyspace_held"] = _keyspace(r)
        out["held_after_s"] = time.monotonic() - ended
        out["stream_entries_held"] = sum(
            int(r.xlen(s)) for s in r.scan_iter(match="cmd:*skull*", count=100)
        )
        out["result_keys_held"] = len(_result_keys(r, gid))
        out["keys_held"] = int(r.dbsize())
        held = out["keyspace_held"] - out["keyspace_before"]
        out["bytes_per_refusal_held"] = held / max(1, taken)
        # After the refusal TTL (the last outcome was written by decide_lag_s after the end).
        gone_at = ended + out["decide_lag_s"] + ttl + 10
        time.sleep(max(0.0, gone_at - time.monotonic()))
        r.execute_command("MEMORY", "PURGE")
        out["used_after_ttl"] = _used(r)
        out["keyspace_after_ttl"] = _keyspace(r)
        out["after_ttl_s"] = time.monotonic() - ended
        out["result_keys_after_ttl"] = len(_result_keys(r, gid))
        out["keys_after_ttl"] = int(r.dbsize())
        left = out["keyspace_after_ttl"] - out["keyspace_before"]
        out["bytes_per_refusal_after_ttl"] = left / max(1, taken)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)
        server.stop()
    return out


def main() -> None:
    """Parse the arguments, run, print (and keep) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--ttl", type=int, default=120, help="TABLETOP_REJECTED_TTL of the stack")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout to run the stack from"
    )
    parser.add_argument("--json", type=Path, help="write the figures there too")
    args = parser.parse_args()
    out = run(seconds=args.seconds, ttl=args.ttl, root=args.root.resolve())
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
