"""Search time against the real stack (issue 23, items 2 and 3): hints and floods of searches.

Starts `tabletop run` (redis-server, gunicorn with gevent, a worker per game, Celery's quick,
search and tournament workers, as ``make run`` does) from a checkout (``--root``, default this
one: pointing it at an older checkout measures the code before a change), then:

1. **idle**: ``GET /healthz`` on a new connection every ``--every`` s for ``--hold`` s;
2. **hints**: the same while ``--loops`` seats (each a Fox game of two humans, each loop from a
   loopback address of its own) ask ``GET /v1/games/{id}/suggestion?bot=ismcts&budget_ms=2000``
   in a loop; every hint's status and time are kept;
3. **flood**: one anonymous client (127.0.0.2) creates ``--flood-games`` Isle of Skye games of
   four ``{"bot": "ismcts", "budget_ms": --flood-budget}`` seats (all-bot: they play on), and
   another client (127.0.0.3) creates ``--trials`` Fox games, one every ``--spacing`` s, whose
   ``{"bot": "ismcts", "budget_ms": 200}`` seat leads: the time from each creation to its
   bot's first move is kept. A creation with ``budget_ms`` 10000 (the issue's) is tried too
   and its status kept.

Before the stack, the cost of a quick bot's hint (``random``, ``heuristic``: answered in the
gateway's request) is timed in process on every view of a random game of each type.

Nothing is asserted (``tests/e2e/test_search_load.py`` checks the behaviour with generous
bounds); the figures go to stdout and, with ``--json``, to a file. The gateway tells clients
apart by address: Linux routes all of 127.0.0.0/8 to the loopback, so each client binds its
own.

Run: ``python benchmarks/bench_search_load.py --json benchmarks/search_load_last_run.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import machine, pct  # noqa: E402
from shared.redis_server import free_port  # noqa: E402

HINT = "bot=ismcts&budget_ms=2000"


class _From(HTTPAdapter):
    """Connections from a loopback address of the client's own."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def client(address: str) -> requests.Session:
    """A session whose requests come from ``address``."""
    session = requests.Session()
    session.mount("http://", _From(address))
    return session


@contextlib.contextmanager
def stack(root: Path, env_extra: dict[str, str]) -> Iterator[str]:
    """`tabletop run` from ``root`` on a free port with a data directory of its own; its URL."""
    data = Path(tempfile.mkdtemp(prefix="bench-search-"))
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "REDIS_PORT", "TABLETOP_WORKERS", "TABLETOP_DATA_DIR")
    }
    env.update(env_extra)
    argv = [sys.executable, "-m", "services.cli", "run", "--port", str(port)]
    argv += ["--data-dir", str(data)]
    with open(data / "stderr.log", "wb") as err:
        proc = subprocess.Popen(argv, cwd=root, env=env, stdout=err, stderr=err)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError((data / "stderr.log").read_text()[-3000:])
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the stack did not come up")
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(data, ignore_errors=True)


def health_while(url: str, hold: float, every: float) -> dict[str, Any]:
    """``/healthz`` on a new connection every ``every`` s for ``hold`` s."""
    times: list[float] = []
    failed = 0
    until = time.monotonic() + hold
    while time.monotonic() < until:
        started = time.perf_counter()
        try:
            ok = requests.get(f"{url}/healthz", timeout=30).status_code == 200
        except requests.RequestException:
            ok = False
        took = time.perf_counter() - started
        if ok:
            times.append(took)
        else:
            failed += 1
        time.sleep(max(0.0, every - took))
    return {
        "n": len(times),
        "failed": failed,
        "p50_ms": round(pct(times, 50) * 1e3, 1),
        "p95_ms": round(pct(times, 95) * 1e3, 1),
        "max_ms": round(max(times, default=float("nan")) * 1e3, 1),
    }


def _fox_seat(session: requests.Session, url: str) -> tuple[str, str]:
    created = session.post(
        f"{url}/v1/games", json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]}
    )
    created.raise_for_status()
    doc = created.json()
    return doc["id"], doc["tokens"][doc["view"]["to_act"][0]]


def hint_load(url: str, loops: int, hold: float, every: float) -> dict[str, Any]:
    """``/healthz`` while ``loops`` seats ask for ISMCTS hints in a loop."""
    stop = threading.Event()
    answers: list[tuple[int, float]] = []
    lock = threading.Lock()

    def ask(i: int) -> None:
        with client(f"127.0.0.{11 + i}") as s:
            gid, token = _fox_seat(s, url)
            while not stop.is_set():
                started = time.perf_counter()
                resp = s.get(
                    f"{url}/v1/games/{gid}/suggestion?{HINT}",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=120,
                )
                with lock:
                    answers.append((resp.status_code, time.perf_counter() - started))

    threads = [threading.Thread(target=ask, args=(i,), daemon=True) for i in range(loops)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(answers) < loops and time.monotonic() < deadline:  # every loop's search going
        time.sleep(0.05)
    health = health_while(url, hold, every)
    stop.set()
    for t in threads:
        t.join(120)
    statuses: dict[str, int] = {}
    for status, _ in answers:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    took = [t for status, t in answers if status == 200]
    return {
        "loops": loops,
        "healthz": health,
        "hints": statuses,
        "hint_p50_s": round(pct(took, 50), 2),
        "hint_p95_s": round(pct(took, 95), 2),
    }


def flood(url: str, games: int, budget: int, trials: int, spacing: float) -> dict[str, Any]:
    """Another client's bot's first move while one client floods the search workers."""
    attacker, other = client("127.0.0.2"), client("127.0.0.3")
    big = attacker.post(
        f"{url}/v1/games",
        json={"game": "skye", "seats": [{"bot": "ismcts", "budget_ms": 10_000}] * 4},
    )
    statuses = []
    for _ in range(games):
        created = attacker.post(
            f"{url}/v1/games",
            json={"game": "skye", "seats": [{"bot": "ismcts", "budget_ms": budget}] * 4},
        )
        statuses.append(created.status_code)
    first_moves: list[float | None] = []
    for trial in range(trials):
        if trial:
            time.sleep(spacing)  # spread the trials over the flood
        created = other.post(
            f"{url}/v1/games",
            json={
                "game": "fox",
                "seats": [{"name": "ana"}, {"bot": "ismcts", "budget_ms": 200}],
                "options": {"first_dealer": 0},  # the non-dealer, the bot, leads
            },
        )
        created.raise_for_status()
        started = time.monotonic()
        gid, version = created.json()["id"], created.json()["view"]["version"]
        took: float | None = None
        while time.monotonic() - started < 300:
            if other.get(f"{url}/v1/games/{gid}").json()["version"] > version:
                took = time.monotonic() - started
                break
            time.sleep(0.05)
        first_moves.append(round(took, 2) if took is not None else None)
    return {
        "flood_games": games,
        "flood_budget_ms": budget,
        "flood_statuses": statuses,
        "budget_10000_status": big.status_code,
        "fox_first_move_s": first_moves,
    }


def quick_hints() -> dict[str, dict[str, float]]:
    """What a quick bot's hint costs the gateway (it is answered in the request): the bot's
    time on every view of a random game per game type, in this process."""
    from shared.app import bots
    from shared.app.playout import play
    from shared.games.rng import bot_random
    from shared.match import projections

    out: dict[str, dict[str, float]] = {}
    for game, seats, options in (("fox", 2, {"target": 5}), ("skull", 6, {}), ("skye", 5, {})):
        for name in ("random", "heuristic"):
            times: list[float] = []

            def chooser(
                record: Any, seat: int, name: str = name, times: list[float] = times
            ) -> None:
                view = projections.view(record, seat)
                started = time.perf_counter()
                bots.play({"bot": name}, view, bot_random("bench", seat, record.version))
                times.append(time.perf_counter() - started)

            play(game, [{"bot": "random"}] * seats, options, "bench", chooser=chooser)
            out[f"{game} {name}"] = {
                "views": len(times),
                "p50_ms": round(pct(times, 50) * 1e3, 2),
                "p99_ms": round(pct(times, 99) * 1e3, 2),
                "max_ms": round(max(times) * 1e3, 2),
            }
    return out


def main() -> None:
    """Parse the arguments, run the three phases, print (and keep) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--loops", type=int, default=4)
    parser.add_argument("--hold", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=0.05)
    parser.add_argument("--flood-games", type=int, default=5)
    parser.add_argument("--flood-budget", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--spacing", type=float, default=10.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    load = round(os.getloadavg()[0], 1)  # other work on the machine skews every time here
    quick = quick_hints()
    # Hints at the loops' pace: the per-token limit (20/minute) is not what is measured.
    with stack(args.root.resolve(), {"TABLETOP_RATE_SUGGEST": "600/minute"}) as url:
        idle = health_while(url, min(args.hold, 10.0), args.every)
        hints = hint_load(url, args.loops, args.hold, args.every)
    with stack(args.root.resolve(), {}) as url:
        flooded = flood(url, args.flood_games, args.flood_budget, args.trials, args.spacing)
    result = {
        "machine": machine(),
        "load_average_before": load,
        "root": str(args.root),
        "quick_hint_cost": quick,
        "idle_healthz": idle,
        "hint_load": hints,
        "flood": flooded,
        "command": " ".join(["python benchmarks/bench_search_load.py", *sys.argv[1:]]),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


run = main  # the name tests/unit/test_benchmarks_import.py looks for


if __name__ == "__main__":
    main()
