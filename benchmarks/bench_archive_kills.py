"""Faults while finished games move to the archive (issue 36): kill -9 the process moving
games (the stream worker holding ``archiver:lock``), Redis, and a game worker, in turn, during
a long tournament run on `tabletop run` with ``TABLETOP_ARCHIVE_AFTER_S=0``; then check that
every game is archived exactly once, nothing is left in Redis, and every archived export passes
the audit.

    .venv/bin/python benchmarks/bench_archive_kills.py --games 20000 --kills 20
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import redis
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared import keys  # noqa: E402
from shared.archive import open_archive  # noqa: E402
from shared.audit import audit  # noqa: E402
from shared.tournaments.plan import game_id  # noqa: E402
from tests.e2e.stack import Stack, start_stack  # noqa: E402

ORG = {"Authorization": "Bearer org-e2e"}
TARGETS = ("archiver", "redis", "worker --game")


def _pid(stack: Stack, target: str) -> int | None:
    if target == "archiver":
        try:
            holder = redis.Redis.from_url(stack.redis_url).get("archiver:lock")
        except redis.RedisError:
            return None
        return int(holder.split(b":")[1]) if holder else None
    needle = "redis-server" if target == "redis" else target
    pids = stack.children(needle)
    return pids[0] if pids else None


def _killer(stack: Stack, kills: int, every: float, stop: threading.Event,
            killed: collections.Counter[str]) -> None:  # fmt: skip
    for i in range(kills):
        if stop.wait(every):
            return
        target = TARGETS[i % len(TARGETS)]
        deadline = time.monotonic() + 30  # the supervisor may be starting it again
        while (pid := _pid(stack, target)) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
                killed[target] += 1
            except ProcessLookupError:
                pass


def _get(url: str, **kw: Any) -> Any:
    """A GET that waits out a restarting stack (Redis killed)."""
    for _ in range(120):
        try:
            resp = requests.get(url, timeout=30, **kw)
            if resp.status_code == 200:
                return resp.json()
        except requests.RequestException:
            pass
        time.sleep(1)
    raise RuntimeError(f"no answer from {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--every", type=float, default=4.0, help="seconds between kills")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-archive-kills-"))
    stack = start_stack(data, capture=True, TABLETOP_ARCHIVE_AFTER_S="0",
                        TABLETOP_MAX_TOURNAMENT_GAMES=str(args.games))  # fmt: skip
    killed: collections.Counter[str] = collections.Counter()
    stop = threading.Event()
    started = time.monotonic()
    try:
        body = {"game": "fox", "entrants": [{"bot": "random"}, {"bot": "heuristic"}],
                "games": args.games, "seed": "archive-kills", "options": {"target": 1}}  # fmt: skip
        created = requests.post(f"{stack.url}/v1/tournaments", json=body, headers=ORG, timeout=60)
        created.raise_for_status()
        tid = created.json()["id"]
        killer = threading.Thread(target=_killer, args=(stack, args.kills, args.every, stop,
                                                        killed), daemon=True)  # fmt: skip
        killer.start()
        while True:
            doc = _get(f"{stack.url}/v1/tournaments/{tid}?limit=1", headers=ORG)
            if doc["status"] == "finished":
                break
            time.sleep(1)
        killer.join()
        played_s = time.monotonic() - started
        r = redis.Redis.from_url(stack.redis_url)
        deadline = time.monotonic() + 600
        while r.zcard(keys.GAMES) and time.monotonic() < deadline:
            time.sleep(1)
        left_in_redis = int(r.zcard(keys.GAMES))
        logs_left = sum(1 for _ in r.scan_iter(match="game:{*}:log", count=1000))
        standings = doc["progress"]
    finally:
        stop.set()
        stack.stop()
    path = data / "archive.sqlite3"
    with sqlite3.connect(path) as conn:
        query = "SELECT count(*), count(DISTINCT game_id) FROM games"
        total, distinct = conn.execute(query).fetchone()
    archive = open_archive(str(path))
    failed: list[str] = []
    missing = 0
    audit_started = time.monotonic()
    for index in range(args.games):
        gid = game_id(tid, index)
        envelopes = archive.read(gid)
        if not envelopes:
            missing += 1
            continue
        report = audit(gid, (e.to_dict() for e in envelopes))
        if report.status != "passed":
            failed.append(gid)
    archive.close()
    result = {
        "games": args.games, "kills": dict(killed), "played_s": round(played_s, 1),
        "progress": standings, "archived_rows": total, "archived_distinct": distinct,
        "missing_from_archive": missing, "left_in_redis": left_in_redis,
        "logs_left_in_redis": logs_left, "audits_failed": len(failed),
        "audit_s": round(time.monotonic() - audit_started, 1), "cores": os.cpu_count(),
        "archive_bytes_per_game": round(
            sum(p.stat().st_size for p in data.glob("archive.sqlite3*")) / max(1, total)),
        "load": os.getloadavg(),
    }  # fmt: skip
    print(json.dumps(result), flush=True)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
