"""Redis memory and tournament speed with finished games moving to the archive (issue 36).

Starts `tabletop run` (its own Redis and data directory), then runs tournaments one after
another through the API, as an organizer would: each ``--games`` random-vs-random Fox games
(``--target 1``: one-hand games; a larger target plays whole matches). After each tournament
it reads Redis's ``used_memory`` once the archiver has caught up (or at once with
``--no-wait``), the tournament's games/s, and the archive's size.

    .venv/bin/python benchmarks/bench_archive_stack.py --tournaments 50 --games 2000
    .venv/bin/python benchmarks/bench_archive_stack.py --archive off --tournaments 3  # before
    .venv/bin/python benchmarks/bench_archive_stack.py --maxmemory 48mb --games 12000 \
        --tournaments 1 --live 20    # capped Redis, live games played beside it

``--live N`` plays N live games (a human seat sending the first legal command, against the
random bot) while the tournaments run, and reports how many finished.
"""

from __future__ import annotations

import argparse
import json
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
from tests.e2e.stack import start_stack  # noqa: E402

ORG = {"Authorization": "Bearer org-e2e"}


def tournament(url: str, games: int, target: int, seed: str) -> tuple[str, float]:
    """Run one tournament to its end; its id and games/s (creation to finished)."""
    body = {"game": "fox", "entrants": [{"bot": "random"}, {"bot": "random"}],
            "games": games, "seed": seed, "options": {"target": target}}  # fmt: skip
    started = time.monotonic()
    created = requests.post(f"{url}/v1/tournaments", json=body, headers=ORG, timeout=60)
    created.raise_for_status()
    tid = created.json()["id"]
    last, stalled_since = -1, time.monotonic()
    while True:
        doc = requests.get(f"{url}/v1/tournaments/{tid}?limit=1", headers=ORG, timeout=60).json()
        if doc["status"] in ("finished", "cancelled", "failed"):
            break
        done = doc["progress"]["done"]
        if done != last:
            last, stalled_since = done, time.monotonic()
        elif time.monotonic() - stalled_since > 300:
            raise RuntimeError(f"tournament {tid} stalled at {done}: {doc.get('paused_reason')}")
        time.sleep(0.5)
    return tid, games / (time.monotonic() - started)


def play_live(url: str, stop: threading.Event, out: dict[str, int]) -> None:
    """Live Fox games against the random bot, one after another, until ``stop``."""
    s = requests.Session()
    while not stop.is_set():
        created = s.post(f"{url}/v1/games", json={"game": "fox", "seats": [{"name": "a"},
                         {"bot": "random"}], "options": {"target": 1}}, timeout=60)  # fmt: skip
        if created.status_code != 201:
            out["refused"] = out.get("refused", 0) + 1
            time.sleep(1)
            continue
        gid, token = created.json()["id"], created.json()["tokens"][0]
        auth = {"Authorization": f"Bearer {token}"}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not stop.is_set():
            view = s.get(f"{url}/v1/games/{gid}", headers=auth, timeout=60).json()
            if view.get("outcome") is not None:
                out["finished"] = out.get("finished", 0) + 1
                break
            if 0 in view.get("to_act", []):
                s.post(f"{url}/v1/games/{gid}/commands", json=view["legal_commands"][0],
                       headers={**auth, "Prefer": "wait=10"}, timeout=60)  # fmt: skip
            else:
                time.sleep(0.02)


def export_reads(url: str, data: Path, n: int) -> dict[str, Any]:
    """GET /v1/games/{id}/export of ``n`` archived games (spread over the archive), timed:
    p50 and p95 in ms, through the gateway."""
    path = data / "archive.sqlite3"
    if not path.exists() or n <= 0:
        return {}
    with sqlite3.connect(path) as conn:
        ids = [r[0] for r in conn.execute(
            "SELECT game_id FROM games ORDER BY (seq * 7919) % 10007 LIMIT ?", (n,))]  # fmt: skip
    s = requests.Session()
    times = []
    for gid in ids:
        began = time.perf_counter()
        resp = s.get(f"{url}/v1/games/{gid}/export", timeout=60)
        times.append((time.perf_counter() - began) * 1000)
        resp.raise_for_status()
    times.sort()
    return {"n": len(times), "p50_ms": round(times[len(times) // 2], 2),
            "p95_ms": round(times[int(len(times) * 0.95)], 2)}  # fmt: skip


def archived(data: Path) -> int:
    path = data / "archive.sqlite3"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=5)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--target", type=int, default=1)
    parser.add_argument("--archive", default="on", choices=["on", "off"])
    parser.add_argument("--after-s", default="0", help="TABLETOP_ARCHIVE_AFTER_S")
    parser.add_argument("--maxmemory", default="1gb", help="TABLETOP_REDIS_MAXMEMORY")
    parser.add_argument("--live", type=int, default=0, help="live games played beside")
    parser.add_argument("--no-wait", action="store_true", help="read memory at once")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON")
    parser.add_argument("--exports", type=int, default=200,
                        help="archived games whose export is then read through the API, timed")  # fmt: skip
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-archive-"))
    env = {"TABLETOP_ARCHIVE_AFTER_S": args.after_s, "TABLETOP_REDIS_MAXMEMORY": args.maxmemory,
           "TABLETOP_MAX_TOURNAMENT_GAMES": str(max(10_000, args.games))}  # fmt: skip
    if args.archive == "off":
        env["TABLETOP_ARCHIVE_URL"] = "off"
    stack = start_stack(data, capture=True, **env)
    rows: list[dict[str, Any]] = []
    stop = threading.Event()
    live: dict[str, int] = {}
    threads = [threading.Thread(target=play_live, args=(stack.url, stop, live), daemon=True)
               for _ in range(min(args.live, 4))]  # fmt: skip
    try:
        r = redis.Redis.from_url(stack.redis_url)
        for t in threads:
            t.start()
        for n in range(args.tournaments):
            tid, rate = tournament(stack.url, args.games, args.target, f"bench-archive-{n}")
            if args.archive == "on" and not args.no_wait:
                deadline = time.monotonic() + 600
                while r.zcard(keys.GAMES) > 0 and time.monotonic() < deadline:
                    time.sleep(0.5)
            mem = r.info("memory")
            row = {"tournament": n + 1, "games": (n + 1) * args.games, "games_s": round(rate, 1),
                   "used_memory": int(mem["used_memory"]), "in_redis": int(r.zcard(keys.GAMES)),
                   "archived": archived(data)}  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
        reads = export_reads(stack.url, data, args.exports) if args.archive == "on" else {}
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        size = sum(p.stat().st_size for p in data.glob("archive.sqlite3*"))
        stack.stop()
    first = rows[0]["used_memory"] if rows else 0
    summary = {"rows": rows, "archive_bytes": size, "live": live, "export_reads": reads,
               "memory_ratio_last_to_first": round(rows[-1]["used_memory"] / first, 3)
               if rows and first else None,
               "archive_bytes_per_game": round(size / max(1, rows[-1]["archived"]))
               if rows and rows[-1]["archived"] else None}  # fmt: skip
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}), flush=True)
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
