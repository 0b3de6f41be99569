"""Outside bots against the real stack (issue 24): webhook bots served by the Python bot kit.

Starts `tabletop run` (its own redis-server, gunicorn with gevent, a worker per game, Celery's
quick, search and tournament workers and the gevent remote bots' worker, as ``make run`` does) and,
in processes of their own, webhook bots served by the kit (``tabletop_client.serve_webhook``
of the kit's ``examples/random_bot.py`` policy, timed), registered with ``POST /v1/bots``.
In one run it measures:

(a) **decisions per second** of Fox games between two webhook random bots, ``--inflight``
    games at once (a finished game is replaced at once), counted by the bots over the window
    in which every game was in flight; against the **HTTP floor**: as many plain HTTP POSTs of
    real turn bodies (rebuilt from views the bots were sent, signed with their keys) to the
    same kit servers from a plain client (``http.client``, one thread per game) at the same
    concurrency, with a new connection per POST as the service makes them, and once more over
    keep-alive connections. Goal: ratio >= 0.5.
(b) **the service's own time per decision**, from the bots' side: the time from a bot's
    answer (its ``act`` returning) to the next turn of the same game reaching a bot (the next
    ``act`` starting), in the same window; and the service's recorded round trips
    (``stats.latency_ms`` of ``GET /v1/bots/{id}``) beside the bots' own time. Goal: p99 <
    10 ms with 64 games in flight. The CPU each process of the stack spent per decision in
    the window says where the time goes (``--profile``: py-spy samples too, if installed).
(c) **timeouts** of a bot that answers in ``--slow-ms`` (50) ms under a ``--budget-ms`` (500)
    budget, playing both seats of ``--inflight`` games until the service counted
    ``--slow-decisions`` (10,000) of its decisions (``stats`` of ``GET /v1/bots/{id}``).
    Goal: 0 timeouts.
(d) **games per second of an SPRT match against a round robin** of the same built-in bots
    (heuristic against random, Fox to one point) through the tournament queue's Celery
    workers, each from its creation to ``finished``.

The figures are printed as JSON (and kept with ``--json``). Nothing is asserted.

Run: ``python benchmarks/bench_outside_bots.py --json benchmarks/outside_bots_last_run.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import cpu_seconds, machine, pct, redis_cpu_seconds  # noqa: E402
from shared.redis_server import free_port  # noqa: E402

ORGANIZER = "org-bench"
EXAMPLE = ROOT / "sdk" / "python" / "examples" / "random_bot.py"
SAMPLE_EVERY = 50  # one view in this many is kept for the floor's bodies


# ---- the bot servers (a process each) -----------------------------------------------------------


def serve_bot(key: str, port: int, delay_ms: int, out: Path) -> None:
    """Serve the kit example's random bot at ``port`` with ``serve_webhook``, each ``act``
    timed (and delayed by ``delay_ms``). Each game over is appended to ``out``.over at once
    (the driver replaces finished games from it), one view in ``SAMPLE_EVERY`` to
    ``out``.views; the turns' times go to ``out`` when the process is stopped (SIGTERM)."""
    from tabletop_client import serve_webhook

    spec = importlib.util.spec_from_file_location("kit_random_bot", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    turns: list[tuple[str, int, int, float, float]] = []
    lock = threading.Lock()
    over = open(f"{out}.over", "a", buffering=1)  # noqa: SIM115 - open while serving
    views = open(f"{out}.views", "a", buffering=1)  # noqa: SIM115

    class TimedBot(example.RandomBot):  # type: ignore[name-defined]
        def act(self, view: dict[str, Any], legal_commands: list[Any]) -> Any:
            started = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process
            if delay_ms:
                time.sleep(delay_ms / 1000)
            command = super().act(view, legal_commands)
            with lock:
                turns.append((view["id"], view["seat"], view["version"], started, time.monotonic()))
                if len(turns) % SAMPLE_EVERY == 1:
                    views.write(json.dumps(view) + "\n")
            return command

        def game_over(self, message: dict[str, Any]) -> None:
            with lock:
                over.write(f"{message['game_id']}\n")

    def dump(*_: Any) -> None:
        # In the main thread, which serves and never holds the lock (act runs on the
        # server's threads); written whole, then renamed, so the driver never reads half.
        with lock:
            Path(f"{out}.tmp").write_text(json.dumps(turns))
        os.replace(f"{out}.tmp", out)

    def stop(*_: Any) -> None:
        raise SystemExit(0)  # out of serve_forever, through serve_webhook's finally

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGTERM, stop)
    try:
        serve_webhook(TimedBot(), key, "127.0.0.1", port)
    finally:
        dump()


class BotProcess:
    """A kit webhook server in a process of its own, registered with the service."""

    def __init__(self, url: str, name: str, work: Path, *, delay_ms: int, budget_ms: int) -> None:
        self.port = free_port()
        registered = requests.post(
            f"{url}/v1/bots",
            json={
                "name": name,
                "games": ["fox"],
                "transport": "webhook",
                "url": f"http://127.0.0.1:{self.port}/",
                "budget_ms": budget_ms,
                "on_failure": "random",
            },  # fmt: skip
            timeout=30,
        )
        registered.raise_for_status()
        self.id: str = registered.json()["id"]
        self.key: str = registered.json()["key"]
        self.out = work / f"{name}.json"
        argv = [sys.executable, str(Path(__file__).resolve()), "serve-bot", "--key", self.key,
                "--port", str(self.port), "--delay-ms", str(delay_ms), "--out", str(self.out)]  # fmt: skip
        self.proc = subprocess.Popen(argv, cwd=ROOT, stderr=open(work / f"{name}.log", "wb"))  # noqa: SIM115
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the bot {name} did not start")
            time.sleep(0.05)

    def ended_games(self, seen: int) -> tuple[list[str], int]:
        """Game ids over since line ``seen`` of its game-over file, and the new line count."""
        path = Path(f"{self.out}.over")
        lines = path.read_text().splitlines() if path.exists() else []
        return lines[seen:], len(lines)

    def views(self) -> list[dict[str, Any]]:
        path = Path(f"{self.out}.views")
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def turns(self) -> list[tuple[str, int, int, float, float]]:
        """Its turns so far: ``(game_id, seat, version, started, answered)``."""
        self.out.unlink(missing_ok=True)
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while not self.out.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.out.name}: no turns written")
            time.sleep(0.05)
        return [tuple(t) for t in json.loads(self.out.read_text())]

    def stop(self) -> list[tuple[str, int, int, float, float]]:
        """Stop it; its turns."""
        self.out.unlink(missing_ok=True)
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if not self.out.exists():
            return []
        return [tuple(t) for t in json.loads(self.out.read_text())]


# ---- the stack ----------------------------------------------------------------------------------


@contextlib.contextmanager
def stack(work: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], str]]:
    """`tabletop run` on a free port, rate limits off (the service is measured, not the
    limits); its URL, process and Redis URL."""
    data = work / "stack"
    data.mkdir()
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "REDIS_PORT", "TABLETOP_WORKERS", "TABLETOP_DATA_DIR")
    }
    env.update(TABLETOP_RATE_LIMITS="off", TABLETOP_ORGANIZER_KEYS=ORGANIZER)
    argv = [sys.executable, "-m", "services.cli", "run", "--port", str(port)]
    argv += ["--data-dir", str(data)]
    with open(work / "stack.log", "wb") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=err, stderr=err)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError((work / "stack.log").read_text()[-3000:])
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the stack did not come up")
            time.sleep(0.2)
        while not (data / "redis.url").exists():
            time.sleep(0.1)
        yield url, proc, (data / "redis.url").read_text().strip()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _children(pid: int) -> list[int]:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]
    return []


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return ""


def stack_processes(root: int) -> dict[str, int]:
    """The supervisor's children by role (each role's CPU includes its own children)."""
    roles = {"gateway": "gunicorn", "fox worker": "--game fox", "remote (gevent)": "remote_worker",
             "quick bots": "-Q tabletop ", "tournaments": "tabletop-tournaments"}  # fmt: skip
    found: dict[str, int] = {}
    for pid in _children(root):
        line = _cmdline(pid) + " "
        for role, needle in roles.items():
            if needle in line and role not in found:
                found[role] = pid
    return found


# ---- (a), (b), (c): games between webhook bots --------------------------------------------------


def keep_in_flight(
    url: str,
    seats: list[str],
    watch: BotProcess,
    inflight: int,
    *,
    seconds: float | None = None,
    until: Any = None,
    drain_s: float = 300,
    at_window_end: Any = None,
) -> dict[str, Any]:
    """Fox games of the registered bots ``seats`` (ids), ``inflight`` at once, each finished
    one replaced, until ``seconds`` have passed with all in flight (or ``until()`` is true);
    then the last ones are waited for. ``watch`` is a bot seated in every game: its game-over
    notices tell which games ended. The window: from all in flight to the last creation."""
    session = requests.Session()
    body: dict[str, Any] = {"game": "fox", "seats": [{"bot_id": b} for b in seats]}
    live: set[str] = set()
    seen = created = 0
    full_at: float | None = None
    checked = 0.0
    while True:
        ended, seen = watch.ended_games(seen)
        live.difference_update(ended)
        now = time.monotonic()
        if seconds is not None and full_at is not None and now - full_at >= seconds:
            break
        if until is not None and now - checked >= 1.0:  # a GET a second, not a flood
            checked = now
            if until():
                break
        while len(live) < inflight:
            resp = session.post(f"{url}/v1/games", json=body, timeout=30)
            resp.raise_for_status()
            live.add(resp.json()["id"])
            created += 1
        if full_at is None:
            full_at = time.monotonic()
        time.sleep(0.02)
    stopped_at = time.monotonic()
    if at_window_end is not None:
        at_window_end()
    deadline = stopped_at + drain_s
    while live and time.monotonic() < deadline:
        ended, seen = watch.ended_games(seen)
        live.difference_update(ended)
        time.sleep(0.1)
    return {"window": (full_at, stopped_at), "games_created": created, "unfinished": len(live)}


def decision_figures(
    turns: list[tuple[str, int, int, float, float]], window: tuple[float, float]
) -> dict[str, Any]:
    """Decisions per second in the window, and the gaps from each answer to the same game's
    next turn (answer in the window)."""
    start, end = window
    inside = [t for t in turns if start <= t[3] < end]
    by_game: dict[str, list[tuple[str, int, int, float, float]]] = {}
    for t in turns:
        by_game.setdefault(t[0], []).append(t)
    gaps: list[float] = []
    for game in by_game.values():
        game.sort(key=lambda t: t[2])
        for before, after in zip(game, game[1:], strict=False):
            if start <= before[4] < end:
                gaps.append(after[3] - before[4])
    own = [t[4] - t[3] for t in inside]
    return {
        "window_s": round(end - start, 1),
        "decisions": len(inside),
        "decisions_per_s": round(len(inside) / (end - start), 1),
        "next_turn_gaps": len(gaps),
        "service_ms_p50": round(pct(gaps, 50) * 1e3, 2),
        "service_ms_p90": round(pct(gaps, 90) * 1e3, 2),
        "service_ms_p99": round(pct(gaps, 99) * 1e3, 2),
        "service_ms_max": round(max(gaps, default=float("nan")) * 1e3, 2),
        "bot_act_ms_p50": round(pct(own, 50) * 1e3, 3),
        "bot_act_ms_p99": round(pct(own, 99) * 1e3, 3),
    }


def bot_stats(url: str, bot_id: str) -> dict[str, Any]:
    resp = requests.get(f"{url}/v1/bots/{bot_id}", timeout=30)
    resp.raise_for_status()
    stats: dict[str, Any] = resp.json()["stats"]
    return stats


def profile(pids: dict[str, int], seconds: float, out: Path) -> dict[str, list[str]]:
    """py-spy samples of each process for ``seconds`` (with its children): its top functions
    by own time. Empty when py-spy is missing (on the PATH, or named by ``PY_SPY``)."""
    spy = os.environ.get("PY_SPY") or shutil.which("py-spy")
    if spy is None:
        return {}
    procs = {}
    for role, pid in pids.items():
        dest = out / f"{role.split()[0]}.txt"
        argv = [spy, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", "200", "-s",
                "-f", "raw", "-o", str(dest), "--nonblocking"]  # fmt: skip
        procs[role] = (
            subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
            dest,
        )
    tops: dict[str, list[str]] = {}
    for role, (proc, dest) in procs.items():
        proc.wait(seconds + 60)
        if dest.exists():
            tops[role] = _top_frames(dest)
    return tops


def _top_frames(raw: Path, n: int = 12) -> list[str]:
    """The ``n`` functions holding most samples at the stack's top (own time), with shares.
    py-spy samples busy threads only, so waiting (select, epoll, recv) is not counted."""
    own: dict[str, int] = {}
    total = 0
    for line in raw.read_text().splitlines():
        stack_, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack_.split(";")
        top = frames[-1]
        total += int(count)
        own[top] = own.get(top, 0) + int(count)
    ranked = sorted(own.items(), key=lambda kv: -kv[1])[:n]
    return [f"{100 * c / total:.1f}% {frame}" for frame, c in ranked]


def measured_games(
    url: str, bots: list[BotProcess], watch: BotProcess, inflight: int, seconds: float,
    root_pid: int, redis_url: str, profile_dir: Path | None,
) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """(a) and (b): the window's figures and each process's CPU per decision."""
    import redis

    r = redis.Redis.from_url(redis_url)
    pids = stack_processes(root_pid)
    cpu_before = {role: cpu_seconds(pid) for role, pid in pids.items()}
    cpu_before["redis-server"] = redis_cpu_seconds(r)
    cpu_before["bot servers"] = sum(cpu_seconds(b.proc.pid) for b in bots)
    tops: dict[str, list[str]] = {}
    if profile_dir is not None:
        # Sampled in the window's middle, so that every game is in flight.
        def sample() -> None:
            time.sleep(min(10.0, seconds / 4))
            tops.update(profile(pids, min(20.0, seconds / 2), profile_dir))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
    cpu_after: dict[str, float] = {}

    def window_end() -> None:
        # At the window's end, not after the drain: CPU and decisions over the same time.
        cpu_after.update({role: cpu_seconds(pid) for role, pid in pids.items()})
        cpu_after["redis-server"] = redis_cpu_seconds(r)
        cpu_after["bot servers"] = sum(cpu_seconds(b.proc.pid) for b in bots)

    run = keep_in_flight(
        url, [b.id for b in bots], watch, inflight, seconds=seconds, at_window_end=window_end
    )
    if profile_dir is not None:
        sampler.join(120)
    return run, {"cpu_s": {k: cpu_after[k] - cpu_before[k] for k in cpu_before}, "profile": tops}


# ---- the HTTP floor -----------------------------------------------------------------------------


def http_floor(
    targets: list[tuple[int, str, list[bytes]]], total: int, concurrency: int, keep_alive: bool
) -> dict[str, Any]:
    """``total`` signed POSTs of ``bodies`` to the kit servers ``targets`` (port, key,
    bodies), ``concurrency`` threads (spread over the targets), each POST on a new connection
    (as the service sends turns) or over one keep-alive connection per thread."""
    from shared.app.remote import SIGNATURE_HEADER, signature

    signed = [
        (port, [(body, signature(key, body)) for body in bodies]) for port, key, bodies in targets
    ]
    counter = iter(range(total))
    lock = threading.Lock()
    times: list[float] = []
    failures = [0]

    def loop(i: int) -> None:
        port, work = signed[i % len(signed)]
        conn: http.client.HTTPConnection | None = None
        k = i
        while True:
            with lock:
                if next(counter, None) is None:
                    break
            body, sig = work[k % len(work)]
            k += 1
            started = time.perf_counter()
            if conn is None or not keep_alive:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sig}
            if not keep_alive:
                headers["Connection"] = "close"
            try:
                conn.request("POST", "/", body=body, headers=headers)
                resp = conn.getresponse()
                resp.read()
                ok = resp.status == 200
            except OSError:  # a reset (the server's accept queue overflowing) is a failure
                ok = False
            if not keep_alive or not ok:
                conn.close()
                conn = None
            took = time.perf_counter() - started
            with lock:
                times.append(took)
                failures[0] += not ok
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(concurrency)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - started
    return {
        "posts": len(times),
        "non_200": failures[0],
        "posts_per_s": round(len(times) / took, 1),
        "p50_ms": round(pct(times, 50) * 1e3, 2),
        "p99_ms": round(pct(times, 99) * 1e3, 2),
    }


def floor_bodies(bot: BotProcess) -> list[bytes]:
    """Turn bodies as the service sends them (``remote.turn_body``), rebuilt from views the
    bot was sent: the same sizes as the measured decisions'."""
    from shared.app.remote import turn_body, turn_id

    spec = {"bot_id": bot.id, "budget_ms": 500, "commitment": "nonce"}
    return [
        turn_body(
            turn=turn_id(v["id"], v["seat"], v["version"]),
            spec=spec,
            game_id=v["id"],
            seat=v["seat"],
            view=v,
            seed="0" * 64,  # the nonce's bytes, not its value, matter here
        )  # fmt: skip
        for v in bot.views()
        if v.get("legal_commands")
    ]


# ---- (d): tournaments through Celery ------------------------------------------------------------


def tournament_rate(url: str, body: dict[str, Any]) -> dict[str, Any]:
    """Seconds from ``POST /v1/tournaments`` to ``finished`` (polled every 50 ms), games per
    second counted on the games done."""
    org = {"Authorization": f"Bearer {ORGANIZER}"}
    started = time.monotonic()
    created = requests.post(f"{url}/v1/tournaments", json=body, headers=org, timeout=30)
    created.raise_for_status()
    tid = created.json()["id"]
    doc = created.json()
    while doc["status"] not in ("finished", "cancelled"):
        if time.monotonic() - started > 600:
            raise RuntimeError(f"tournament {tid} not finished: {doc.get('progress')}")
        time.sleep(0.05)
        doc = requests.get(f"{url}/v1/tournaments/{tid}?limit=1", headers=org, timeout=30).json()
    took = time.monotonic() - started
    done = doc["progress"]["done"]
    sprt = doc.get("sprt")
    return {
        "format": body["format"],
        "games_cap": body["games"],
        "games_done": done,
        "seconds": round(took, 2),
        "games_per_s": round(done / took, 1),
        "answer": (sprt or {}).get("result"),
        "llr": round(sprt["llr"], 2) if sprt else None,
        "bounds": [round(sprt["lower"], 2), round(sprt["upper"], 2)] if sprt else None,
    }


# ---- the run ------------------------------------------------------------------------------------


def main() -> None:
    """Parse the arguments, start the stack and the bots, measure (a)-(d), print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    serve = sub.add_parser("serve-bot", help="(internal) serve one timed kit bot")
    serve.add_argument("--key", required=True)
    serve.add_argument("--port", type=int, required=True)
    serve.add_argument("--delay-ms", type=int, default=0)
    serve.add_argument("--out", type=Path, required=True)
    parser.add_argument("--inflight", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=40.0, help="(a)/(b)'s window")
    parser.add_argument("--alone-seconds", type=float, default=10.0, help="one game alone")
    parser.add_argument("--slow-decisions", type=int, default=10_000)
    parser.add_argument("--slow-ms", type=int, default=50)
    parser.add_argument("--budget-ms", type=int, default=500)
    parser.add_argument("--tournament-games", type=int, default=2000)
    parser.add_argument("--profile", action="store_true", help="py-spy the stack in (a)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.mode == "serve-bot":
        serve_bot(args.key, args.port, args.delay_ms, args.out)
        return
    load = round(os.getloadavg()[0], 1)
    work = Path(tempfile.mkdtemp(prefix="bench-outside-"))
    result: dict[str, Any] = {"machine": machine(), "load_average_before": load}
    bots: list[BotProcess] = []
    try:
        with stack(work) as (url, proc, redis_url):
            # (d) first, on a quiet stack.
            base = {"game": "fox", "entrants": [{"bot": "heuristic"}, {"bot": "random"}],
                    "games": args.tournament_games, "seed": "bench-sprt",
                    "options": {"target": 1}}  # fmt: skip
            result["d_tournaments"] = [
                tournament_rate(url, {**base, "format": "sprt"}),
                tournament_rate(url, {**base, "format": "round_robin"}),
            ]
            sprt, rr = result["d_tournaments"]
            result["d_sprt_over_round_robin_games_per_s"] = round(
                sprt["games_per_s"] / rr["games_per_s"], 2
            )
            # (a) and (b): two webhook random bots.
            a = BotProcess(url, "random-a", work, delay_ms=0, budget_ms=args.budget_ms)
            b = BotProcess(url, "random-b", work, delay_ms=0, budget_ms=args.budget_ms)
            bots += [a, b]
            # One game alone first: the service's time per decision when nothing queues.
            alone = keep_in_flight(url, [a.id, b.id], a, 1, seconds=args.alone_seconds)
            profile_dir = work / "profiles" if args.profile else None
            if profile_dir is not None:
                profile_dir.mkdir()
            run, cpu = measured_games(
                url, [a, b], a, args.inflight, args.seconds, proc.pid, redis_url, profile_dir
            )
            stats_a, stats_b = bot_stats(url, a.id), bot_stats(url, b.id)
            # (c): a bot answering in slow_ms, both seats, until the service counted enough.
            slow = BotProcess(url, "slow", work, delay_ms=args.slow_ms, budget_ms=args.budget_ms)
            bots.append(slow)
            started = time.monotonic()
            slow_run = keep_in_flight(
                url, [slow.id, slow.id], slow, args.inflight,
                until=lambda: bot_stats(url, slow.id)["decisions"] >= args.slow_decisions,
                drain_s=0,  # counted at the 10,000th: the games in flight are not waited for
            )  # fmt: skip
            slow_took = time.monotonic() - started
            slow_stats = bot_stats(url, slow.id)
        # The floor, with the stack stopped: the kit servers and a plain client alone.
        bodies_a, bodies_b = floor_bodies(a), floor_bodies(b)
        # The turns so far (the bots would time the floor's POSTs too: they are no decisions).
        so_far = a.turns() + b.turns()
        figures = decision_figures(so_far, run["window"])
        alone_figures = decision_figures(so_far, alone["window"])
        targets = [(a.port, a.key, bodies_a), (b.port, b.key, bodies_b)]
        floor_new = http_floor(targets, figures["decisions"], args.inflight, keep_alive=False)
        floor_keep = http_floor(targets, figures["decisions"], args.inflight, keep_alive=True)
        for bot in (a, b):
            bot.stop()
            bots.remove(bot)
        slow_turns = slow.stop()
        bots.remove(slow)
    finally:
        for bot in bots:
            with contextlib.suppress(Exception):
                bot.stop()
    per = figures["decisions"]
    sizes = [len(x) for x in bodies_a + bodies_b]
    result["a_decisions"] = {
        "games_in_flight": args.inflight,
        "games_created": run["games_created"],
        "window_s": figures["window_s"],
        "decisions": per,
        "decisions_per_s": figures["decisions_per_s"],
        "turn_body_bytes_p50": int(pct([float(s) for s in sizes], 50)) if sizes else None,
        "floor_bodies": len(sizes),
        "http_floor_new_connection": floor_new,
        "http_floor_keep_alive": floor_keep,
        "ratio_to_floor_new_connection": round(
            figures["decisions_per_s"] / floor_new["posts_per_s"], 3
        ),
        "ratio_to_floor_keep_alive": round(
            figures["decisions_per_s"] / floor_keep["posts_per_s"], 3
        ),
        "goal": ">= 0.5",
    }
    result["b_service_time_per_decision"] = {
        "games_in_flight": args.inflight,
        "gaps": figures["next_turn_gaps"],
        "p50_ms": figures["service_ms_p50"],
        "p90_ms": figures["service_ms_p90"],
        "p99_ms": figures["service_ms_p99"],
        "max_ms": figures["service_ms_max"],
        "bot_act_ms_p50": figures["bot_act_ms_p50"],
        "bot_act_ms_p99": figures["bot_act_ms_p99"],
        "one_game_alone": {
            k: alone_figures[k]
            for k in (
                "decisions",
                "decisions_per_s",
                "service_ms_p50",
                "service_ms_p90",
                "service_ms_p99",
                "service_ms_max",
            )
        },  # fmt: skip
        "little_law_ms": round(1e3 * args.inflight / figures["decisions_per_s"], 1),
        "service_recorded_round_trip_ms": {
            "random-a": stats_a["latency_ms"],
            "random-b": stats_b["latency_ms"],
        },  # fmt: skip
        "bot_stats": {"random-a": stats_a, "random-b": stats_b},
        "cpu_ms_per_decision": {k: round(v * 1e3 / per, 3) for k, v in cpu["cpu_s"].items()},
        "profile_top_own_time": cpu["profile"],
        "goal": "p99 < 10 ms",
    }
    result["c_slow_bot"] = {
        "answers_in_ms": args.slow_ms,
        "budget_ms": args.budget_ms,
        "games_in_flight": args.inflight,
        "games_created": slow_run["games_created"],
        "seconds": round(slow_took, 1),
        "stats": slow_stats,
        "bot_answers": len(slow_turns),
        "goal": f"0 timeouts in {args.slow_decisions} decisions",
    }
    result["goals_met"] = {
        "a_ratio_ge_0.5": result["a_decisions"]["ratio_to_floor_new_connection"] >= 0.5,
        "b_p99_lt_10ms": figures["service_ms_p99"] < 10,
        "c_zero_timeouts": slow_stats["timeouts"] == 0
        and slow_stats["decisions"] >= args.slow_decisions,
    }
    result["load_average_after"] = round(os.getloadavg()[0], 1)
    result["command"] = " ".join(["python benchmarks/bench_outside_bots.py", *sys.argv[1:]])
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)


run = main  # the name tests/unit/test_benchmarks_import.py looks for


if __name__ == "__main__":
    main()
