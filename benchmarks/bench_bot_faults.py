"""Faults of the service during registered bots' games (issue 35): kill -9 the remote bots'
worker and the game workers again and again while webhook bots play, then count what was
charged to the bots that they never received.

``tabletop run`` on its own data directory; a webhook bot served here (a threaded loopback
server that records every ``turn_id`` it is sent and answers the first legal command),
registered with ``POST /v1/bots``; ``--games`` one-hand Fox games against the random bot, all
in flight at once; ``--kills`` SIGKILLs, alternating the remote bots' worker and a game worker
(the supervisor starts each again), ``--every`` seconds apart. Then, from each game's export:

* charged, never received: a registered move recorded with a failure other than ``service``
  whose ``turn_id`` the bot never received (the goal: 0);
* lost: a game that did not finish; doubled: two commands recorded for one turn;
* audits: ``shared.audit`` on every export (all must pass).

    .venv/bin/python benchmarks/bench_bot_faults.py --games 64 --kills 20
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.audit import audit  # noqa: E402
from tests.e2e.stack import start_stack  # noqa: E402

ORGANIZER = "org-e2e"


class Bot:
    """A webhook bot that keeps every turn id it received."""

    def __init__(self, backlog: int) -> None:
        self.received: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        bot = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's spelling
                doc = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer: dict[str, Any] = {}
                if doc.get("type") == "turn":
                    with bot.lock:
                        bot.received[doc["turn_id"]] += 1
                    answer = {"command": doc["legal_commands"][0]}
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            # A real bot server's backlog (the kit's is 128): with http.server's default of 5,
            # a burst of turns overflows it and connections wait for SYN retries (1 s), the
            # bot's own shortfall rather than the service's (``--backlog 5`` shows it).
            request_queue_size = backlog

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/turn"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def run(games: int, kills: int, every: float, timeout: float, backlog: int) -> dict[str, Any]:
    bot = Bot(backlog)
    data = Path(tempfile.mkdtemp(prefix="bench-bot-faults-"))
    stack = start_stack(data, capture=True)
    http = requests.Session()
    try:
        reg = http.post(f"{stack.url}/v1/bots", json={"name": "faults", "games": ["fox"],
                        "transport": "webhook", "url": bot.url, "budget_ms": 500}).json()  # fmt: skip
        ids = []
        for _ in range(games):
            body = {"game": "fox", "seats": [{"bot_id": reg["id"]}, {"bot": "random"}],
                    "options": {"target": 1}}  # fmt: skip
            resp = http.post(f"{stack.url}/v1/games", json=body,
                             headers={"Authorization": f"Bearer {ORGANIZER}"})  # fmt: skip
            assert resp.status_code == 201, resp.text
            ids.append(resp.json()["id"])
        killed: collections.Counter[str] = collections.Counter()
        for i in range(kills):
            time.sleep(every)
            needle = "remote_worker" if i % 2 == 0 else "worker --game"
            found = time.monotonic() + 30  # the supervisor may still be starting it again
            while not (pids := stack.children(needle)) and time.monotonic() < found:
                time.sleep(0.2)
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed[needle] += 1
        deadline = time.monotonic() + timeout
        left = set(ids)
        while left and time.monotonic() < deadline:
            for gid in list(left):
                view = http.get(f"{stack.url}/v1/games/{gid}").json()
                if view.get("outcome"):
                    left.discard(gid)
            time.sleep(1)
        charged = service = doubled = passed = decisions = 0
        failures: collections.Counter[str] = collections.Counter()
        charged_latency: list[int] = []
        for gid in ids:
            if gid in left:
                continue
            lines = http.get(f"{stack.url}/v1/games/{gid}/export").text.splitlines()
            docs = [json.loads(line) for line in lines if line.strip()]
            seen: collections.Counter[str] = collections.Counter()
            for doc in docs:
                turn = (doc.get("command") or {}).get("bot_turn")
                if not turn:
                    continue
                decisions += 1
                seen[turn["turn_id"]] += 1
                failure = turn["failure"]
                if failure is not None:
                    failures[failure] += 1
                if failure == "service":
                    service += 1
                elif failure is not None and bot.received[turn["turn_id"]] == 0:
                    charged += 1
                    charged_latency.append(turn["latency_ms"])
            doubled += sum(n - 1 for n in seen.values() if n > 1)
            passed += audit(gid, docs).status == "passed"
        return {
            "games": games,
            "bot_backlog": backlog,
            "kills": dict(killed),
            "finished": games - len(left),
            "lost": len(left),
            "decisions": decisions,
            "failures": dict(failures),
            "charged_never_received": charged,
            "charged_latency_ms": sorted(charged_latency),
            "service_failures": service,
            "turns_received_twice": sum(1 for n in bot.received.values() if n > 1),
            "doubled": doubled,
            "audits_passed": passed,
        }
    finally:
        stack.stop()
        bot.server.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--every", type=float, default=1.5, help="seconds between kills")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--backlog", type=int, default=1024, help="the bot server's listen queue")
    args = parser.parse_args(argv)
    result = run(args.games, args.kills, args.every, args.timeout, args.backlog)
    print(json.dumps(result, indent=2))
    ok = result["charged_never_received"] == 0 and result["lost"] == 0 and not result["doubled"]
    return 0 if ok and result["audits_passed"] == result["games"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
