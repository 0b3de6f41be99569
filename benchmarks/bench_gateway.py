"""Commands through the whole path (HTTP → gunicorn → stream → worker → Lua append →
projections → reply) with ``Prefer: wait``: throughput and latency, next to two yardsticks
measured in the same run with the same load generator: the raw Redis round trip (PING) and a
bare Flask endpoint under the same gunicorn settings that checks a body and does one XADD
(``benchmarks/bare_endpoint.py``).

Starts a stack per contender (its own redis-server, gunicorn and, for the whole path, Fox
worker(s)), all on loopback, then drives them in turn, A B A B, in ``--rounds`` rounds of
``--seconds / --rounds`` each, so that every contender sees the same noise: client processes
each drive their own two-human games (or, for the bare endpoint, the same POST over and over)
over keep-alive HTTP connections, bounded in time and in requests (``--max-requests`` per
contender and round). ``--baseline-tree DIR`` adds the whole path from another checkout (the
code before a change) as a third contender; ``--profile DIR`` then samples each whole-path
gateway with py-spy for one extra round (not counted in the figures).

    python benchmarks/bench_gateway.py --clients 2 --threads 8 --seconds 20
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import cpu_seconds, machine, pct, redis_round_trip  # noqa: E402
from shared.redis_server import RedisServer, free_port  # noqa: E402

BARE = "bare endpoint"
WHOLE = "whole path"
BEFORE = "whole path, baseline tree"
# A Fox command as a client sends it, for the bare endpoint (it checks the shape only).
BARE_BODY = {"type": "play", "card": {"suit": "bells", "rank": 7}}


def _client(
    port: int, seconds: float, threads: int, seed: int, out: Any, mode: str, max_requests: int
) -> None:
    """One client process: ``threads`` keep-alive connections, each playing two-human Fox
    games to the end (``mode`` "games") or posting ``BARE_BODY`` (``mode`` "bare"), until the
    time is up or this process has sent ``max_requests`` commands."""
    import threading

    lat: list[float] = []
    errors = [0]
    sent = [0]
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def more() -> bool:
        with lock:
            if sent[0] >= max_requests:
                return False
            sent[0] += 1
        return time.monotonic() < stop_at

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
        if mode == "bare":  # the same request shape as a command, to the bare route
            auth = {"Authorization": "Bearer " + "x" * 32, "Prefer": "wait=10"}
            while more():
                t = time.perf_counter()
                status, _ = call("POST", "/bare/commands", BARE_BODY, auth)
                mine.append(time.perf_counter() - t)
                if status != 200:
                    errors[0] += 1
        while mode == "games" and time.monotonic() < stop_at:
            status, game = call(
                "POST",
                "/v1/games",
                {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}], "options": {"target": 35}},
            )
            gid, tokens = game["id"], game["tokens"]
            view = game["view"]
            while view["outcome"] is None and more():
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
            if view["outcome"] is None:  # out of requests or time
                break
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=drive, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((lat, errors[0]))


class Stack:
    """One contender: a redis-server, gunicorn (the gateway's settings) and, for the whole
    path, Fox worker(s), with the code of ``tree``; all on loopback."""

    def __init__(self, name: str, tree: Path, gateway_workers: int, game_workers: int) -> None:
        self.name, self.tree = name, tree
        self.mode = "bare" if name == BARE else "games"
        self.server = RedisServer()
        self.port = free_port()
        env = {"GATEWAY_THREADS": "16", **os.environ, "REDIS_URL": self.server.url}
        env.pop("PYTHONPATH", None)  # the tree's own packages: it is the working directory
        app = (
            "benchmarks.bare_endpoint:create_app()"
            if self.mode == "bare"
            else "services.gateway.app:create_app()"
        )
        gunicorn = [
            sys.executable, "-m", "gunicorn", "-c", str(tree / "deploy/gunicorn.conf.py"),
            "--bind", f"127.0.0.1:{self.port}", "--workers", str(gateway_workers), app,
        ]  # fmt: skip
        quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        gateway_env = {**env, "TABLETOP_BOT_DISPATCH": "none", "TABLETOP_RATE_LIMITS": "off"}
        self.procs = [subprocess.Popen(gunicorn, env=gateway_env, cwd=tree, **quiet)]
        for _ in range(game_workers if self.mode == "games" else 0):
            worker = [sys.executable, "-m", "services.cli", "worker", "--game", "fox"]
            self.procs.append(subprocess.Popen(worker, env=env, cwd=tree, **quiet))

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        path = "/healthz" if self.mode == "games" else "/bare/healthz"
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", path)
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: gateway did not start")
            time.sleep(0.2)

    def cpu(self) -> dict[str, float]:
        return {
            "gateway (gunicorn)": cpu_seconds(self.procs[0].pid),
            "game worker(s)": sum(cpu_seconds(p.pid) for p in self.procs[1:]),
            "redis-server": cpu_seconds(self.server.proc.pid),
        }

    def drive(
        self, seconds: float, clients: int, threads: int, max_requests: int, seed: int
    ) -> dict[str, Any]:
        """One round of load; the latencies, errors, elapsed time and CPU by process."""
        q: Any = mp.Queue()
        per_client = max(1, max_requests // clients)
        ps = [
            mp.Process(
                target=_client,
                args=(self.port, seconds, threads, seed * 100 + i, q, self.mode, per_client),
            )
            for i in range(clients)
        ]
        before = self.cpu()
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
        after = self.cpu()
        for p in ps:
            p.join()
        cpu = {k: after[k] - before[k] for k in before}
        return {"lat": lat, "errors": errors, "elapsed": elapsed, "cpu": cpu}

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.server.stop()


def _summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    lat = [x for r in rounds for x in r["lat"]]
    elapsed = sum(r["elapsed"] for r in rounds)
    n = max(len(lat), 1)
    cpu = {k: sum(r["cpu"][k] for r in rounds) * 1e3 / n for k in rounds[0]["cpu"]}
    return {
        "commands": len(lat),
        "commands_per_s": len(lat) / elapsed,
        "p50_ms": pct(lat, 50) * 1e3,
        "p99_ms": pct(lat, 99) * 1e3,
        "errors": sum(r["errors"] for r in rounds),
        "cpu_ms_per_command": cpu,
        "rounds_commands_per_s": [len(r["lat"]) / r["elapsed"] for r in rounds],
        "rounds_gateway_cpu_ms": [
            r["cpu"]["gateway (gunicorn)"] * 1e3 / max(len(r["lat"]), 1) for r in rounds
        ],
        "latencies_ms": [x * 1e3 for x in lat],
    }


def run(
    seconds: float = 15.0,
    clients: int = 2,
    threads: int = 8,
    gateway_workers: int = 2,
    game_workers: int = 1,
    *,
    rounds: int = 3,
    max_requests: int = 100_000,
    baseline_tree: Path | None = None,
    profile: Path | None = None,
) -> dict[str, Any]:
    """Start the stacks, drive them in turn, stop them; returns the whole path's figures with
    the yardsticks' (``bare``, ``redis_ping_*``) and, with ``baseline_tree``, the baseline's
    (``before``). ``seconds`` is each contender's load time, over ``rounds`` rounds."""
    load_at_start = os.getloadavg()[0]  # other work on the same cores, for the report
    names = [BARE, WHOLE] + ([BEFORE] if baseline_tree else [])
    trees = {BARE: ROOT, WHOLE: ROOT, BEFORE: baseline_tree or ROOT}
    stacks: dict[str, Stack] = {}
    profiles: dict[str, Path] = {}
    try:
        for name in names:
            stacks[name] = Stack(name, trees[name], gateway_workers, game_workers)
        for stack in stacks.values():
            stack.wait_ready()
        time.sleep(1.0)  # let the workers join their consumer group
        raw = redis_round_trip(stacks[WHOLE].server.url)
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        per_round = seconds / rounds
        for r in range(rounds):
            order = names[r % len(names) :] + names[: r % len(names)]  # rotate who goes first
            for name in order:
                results[name].append(
                    stacks[name].drive(per_round, clients, threads, max_requests, seed=r)
                )
        if profile is not None:
            for name in names[1:]:
                path = _profile(stacks[name], profile, per_round, clients, threads, max_requests)
                if path.exists() and path.stat().st_size:  # py-spy may not attach (ptrace)
                    profiles[name] = path
    finally:
        for stack in stacks.values():
            stack.stop()
    whole = _summary(results[WHOLE])
    bare = _summary(results[BARE])
    bare.pop("latencies_ms")
    ratios = [
        (len(w["lat"]) / w["elapsed"]) / (len(b["lat"]) / b["elapsed"])
        for w, b in zip(results[WHOLE], results[BARE], strict=True)
    ]
    out: dict[str, Any] = {
        **whole,
        "redis_ping_p50_ms": raw["p50_ms"],
        "redis_ping_ops_per_s": raw["ops_per_s"],
        "bare": bare,
        "ratio_to_bare": statistics.median(ratios),
        "ratios_to_bare": ratios,
        "concurrency": clients * threads,
        "clients": clients,
        "threads": threads,
        "seconds": seconds,
        "rounds": rounds,
        "max_requests": max_requests,
        "gateway_workers": gateway_workers,
        "game_workers": game_workers,
        "load_average_at_start": load_at_start,
        "load_average_at_end": os.getloadavg()[0],
    }
    if baseline_tree is not None:
        before = _summary(results[BEFORE])
        before.pop("latencies_ms")
        out["before"] = before
        out["baseline_tree"] = str(baseline_tree)
        out["after_vs_before"] = [
            (len(w["lat"]) / w["elapsed"]) / (len(b["lat"]) / b["elapsed"])
            for w, b in zip(results[WHOLE], results[BEFORE], strict=True)
        ]
        out["gateway_cpu_after_vs_before"] = [
            a / b
            for a, b in zip(
                whole["rounds_gateway_cpu_ms"], before["rounds_gateway_cpu_ms"], strict=True
            )
        ]
    if profiles:
        cpu = {WHOLE: whole, BEFORE: out.get("before", whole)}
        out["profile"] = {
            name: summarize_profile(path, cpu[name]["cpu_ms_per_command"]["gateway (gunicorn)"])
            | {"file": str(path)}
            for name, path in profiles.items()
        }
    return out


def _py_spy() -> str | None:
    here = Path(sys.executable).parent / "py-spy"
    return str(here) if here.exists() else shutil.which("py-spy")


def _profile(
    stack: Stack, folder: Path, seconds: float, clients: int, threads: int, max_requests: int
) -> Path:
    """One more round of load with py-spy sampling the gateway's processes (blocking: it
    pauses them to read consistent stacks, so the round is slower and is not counted)."""
    spy = _py_spy()
    if spy is None:
        raise RuntimeError("--profile needs py-spy (pip install py-spy)")
    folder.mkdir(parents=True, exist_ok=True)
    slug = "before" if stack.name == BEFORE else "after"
    path = folder / f"gateway_profile_{slug}.txt"
    sampler = subprocess.Popen(
        [spy, "record", "--format", "raw", "--rate", "200", "--subprocesses",
         "--duration", str(max(1, int(seconds))), "--output", str(path),
         "--pid", str(stack.procs[0].pid)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(0.5)  # py-spy attaches
    stack.drive(seconds, clients, threads, max_requests, seed=99)
    try:
        sampler.wait(seconds + 30)
    except subprocess.TimeoutExpired:
        sampler.kill()
        sampler.wait()
    return path


# What the gateway spends its CPU on, by the first frame of a stack that matches (py-spy's
# collapsed stacks; frames as "function (file)"). Shares are of the samples where a gateway
# process was busy; the idle frames (the event loop waiting) are left out.
PARTS = [
    ("gunicorn: read and parse the request", ("Parser.__next__ (gunicorn/",)),
    ("gunicorn: write the response (the headers' send wakes the client)",
     ("Response.write (gunicorn/", "Response.close (gunicorn/")),
    ("gunicorn and gevent: per-request bookkeeping (environ, timeouts, keep-alive)",
     ("AsyncWorker.", "GeventWorker.", "create (gunicorn/", "Timeout.", "Config.__getattr__",
      "PreRequest.", "_handle_and_close_when_done", "Hub.", "Response.should_close")),
    # Before the Flask part: a hook's frames start with "Flask." too.
    ("before/after-request hooks (metrics, log context, CORS)",
     ("Flask.preprocess_request", "Flask.process_response", "Flask.do_teardown_request",
      "install.<locals>._")),
    ("Flask: request context, routing, dispatch, response object",
     ("RequestContext.", "Flask.", "Response.__call__ (werkzeug/", "View.as_view",
      "MethodView.dispatch_request")),
    ("request body and query: JSON, webargs, marshmallow (or the hand check)",
     ("Parser.parse (webargs/", "JsonBodyParser.parse (services/")),
    ("flask-smorest and webargs decorators", ("ArgumentsMixin.", "ResponseMixin.",
                                              "Blueprint.doc", "Parser.use_args")),
    ("POST commands: submit (SET NX + XADD pipeline)", ("submit_command (shared/",)),
    ("POST commands: wait for the reply (BLPOP)", ("wait_reply (shared/app/queries",)),
    ("POST commands: the seat from the token", ("_seat_of (services/",)),
    ("POST commands: the rest of the view function", ("Commands.post (services/",)),
    ("GET view: the client's read of the other seat's view", ("Game.get (services/",)),
    ("POST /v1/games (a new game every ~60 commands)", ("Games.post (services/",)),
]  # fmt: skip
IDLE = ("Hub.run (gevent/hub", "acquire_with_timeout (gevent", "poll.poll (gevent",
        "Arbiter.", "Hub.wait", "_Condition.wait (gevent")  # fmt: skip


def _frames(path: Path) -> list[tuple[list[str], int]]:
    stacks = []
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack:
            continue
        frames = [re.sub(r" \(.*?/site-packages/", " (", f) for f in stack.split(";")]
        frames = [re.sub(r" \(/\S*?/(services|shared|benchmarks)/", r" (\1/", f) for f in frames]
        frames = [re.sub(r":\d+\)$", ")", f) for f in frames]
        if len(frames) < 3 or not frames[1].startswith("process ") or frames[-1].startswith(IDLE):
            continue  # the master's own samples (it only waits), and idle frames
        stacks.append((frames[2:], int(n)))  # the master's and the worker's process frames
    return stacks


def summarize_profile(path: Path, gateway_cpu_ms: float) -> dict[str, Any]:
    """Shares of the gateway's busy samples by ``PARTS`` (each stack counted in its first,
    innermost-but-one matching part from the top down), in µs per command from the measured
    CPU per command; and the top frames by self time."""
    stacks = _frames(path)
    busy = sum(n for _, n in stacks) or 1
    parts: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for frames, n in stacks:
        own[frames[-1]] += n
        label = "other"
        # The innermost matching part wins: a Redis call inside Commands.post is the call.
        for frame in reversed(frames):
            hit = next((lab for lab, pre in PARTS if frame.startswith(pre)), None)
            if hit is not None:
                label = hit
                break
        parts[label] += n
    rows = [
        {
            "part": lab,
            "share": parts[lab] / busy,
            "us_per_command": parts[lab] / busy * gateway_cpu_ms * 1e3,
        }
        for lab, _ in [*PARTS, ("other", ())]
        if parts[lab]
    ]
    rows.sort(key=lambda r: -r["share"])
    top_self = [{"frame": f, "share": n / busy} for f, n in own.most_common(10)]
    return {"busy_samples": busy, "parts": rows, "top_self": top_self}


def section(g: dict[str, Any], cuts: Path, *, image: bool = True) -> list[str]:
    """BENCHMARKS.md's section: ``g`` from ``run`` in ``make bench``, and the before/after of
    the hot-path cuts from ``cuts`` (``--baseline-tree ... --json``) when it exists."""
    bare = g.get("bare")
    ping_us = g["redis_ping_p50_ms"] * 1e3
    lines = [
        "",
        "## Commands through the whole path with `Prefer: wait`",
        "",
        "HTTP → gunicorn (gevent workers, `deploy/gunicorn.conf.py`) → Flask → SET NX + XADD →",
        "worker (XREADGROUP, decide, Lua append, projections, reply, XACK in one pipeline) →",
        "BLPOP → 200 with the new view. "
        f"{g['gateway_workers']} gunicorn workers, {g['game_workers']} Fox worker, "
        f"{g['concurrency']} concurrent clients ({g.get('clients', 2)} processes × "
        f"{g.get('threads', 8)} keep-alive connections), all-human Fox games (each command also "
        "costs the client a GET of the other seat's view when that seat is to act: two HTTP "
        "requests per command). The bare endpoint (`benchmarks/bare_endpoint.py`: one Flask "
        "route under the same gunicorn settings and Redis client that checks the body by hand "
        "and does one XADD) and the whole path are driven in turn by the same load generator, "
        f"{g.get('rounds', 1)} rounds of {g['seconds'] / g.get('rounds', 1):.0f} s each, on "
        "loopback, each stack with its own redis-server; the ratio is taken round by round.",
        "",
        *(
            [f"From `{g['command']}` on {g['when']} ({g['machine']}).", ""]
            if "command" in g
            else []
        ),
        "| contender | commands/s | p50 | p99 | non-200 | gateway CPU per command |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| whole path | {g['commands_per_s']:,.0f} | {g['p50_ms']:.1f} ms | "
        f"{g['p99_ms']:.1f} ms | {g['errors']} | "
        f"{g['cpu_ms_per_command']['gateway (gunicorn)']:.2f} ms |",
    ]
    if bare:
        lines.append(
            f"| bare endpoint (yardstick) | {bare['commands_per_s']:,.0f} | "
            f"{bare['p50_ms']:.1f} ms | {bare['p99_ms']:.1f} ms | {bare['errors']} | "
            f"{bare['cpu_ms_per_command']['gateway (gunicorn)']:.2f} ms |"
        )
    lines += [
        f"| Redis PING, one connection (yardstick) | {g['redis_ping_ops_per_s']:,.0f} | "
        f"{ping_us:.0f} µs | | | |",
        "",
    ]
    if bare:
        rounds = ", ".join(f"{r:.2f}" for r in g["ratios_to_bare"])
        lines += [
            f"Whole path ÷ bare endpoint, commands/s: **{g['ratio_to_bare']:.2f}** (median of "
            f"the rounds {rounds}; goal ≥ 0.5). Whole path p99 {g['p99_ms']:.1f} ms (goal "
            f"< 25 ms), {g['commands']:,} commands measured.",
            "",
        ]
    if "light" in g:
        light = g["light"]
        lines += [
            f"With {light['concurrency']} concurrent clients instead: "
            f"{light['commands_per_s']:,.0f} commands/s, p50 {light['p50_ms']:.1f} ms, "
            f"p99 {light['p99_ms']:.1f} ms ({light['errors']} non-200)"
            + (
                f"; the bare endpoint {light['bare']['commands_per_s']:,.0f}/s, ratio "
                f"{light['ratio_to_bare']:.2f}."
                if "bare" in light
                else "."
            ),
            "",
        ]
    lines += [
        "CPU per command of the whole path, by process (the client's GET included):",
        "",
        "| process | CPU ms per command |",
        "| --- | --- |",
        *[f"| {k} | {v:.2f} |" for k, v in g["cpu_ms_per_command"].items()],
        "",
    ]
    if "load_average_at_start" in g:
        lines += [
            f"Load average when the run began: {g['load_average_at_start']:.1f}"
            + (
                f", when it ended: {g['load_average_at_end']:.1f}"
                if "load_average_at_end" in g
                else ""
            )
            + f", on {os.cpu_count()} cores (other work shares them: read the ratios, not the "
            "absolute figures).",
            "",
        ]
    lines += _profile_lines(g.get("profile", {}).get(WHOLE), "The gateway's CPU, by part")
    if bare:
        whole_cpu = sum(g["cpu_ms_per_command"].values())
        bare_cpu = sum(bare["cpu_ms_per_command"].values())
        lines += [
            *_where_lines(g.get("profile", {}).get(WHOLE)),
            "Why the ratio stays far from 0.5: on these two shared cores the figures are "
            "CPU-bound. The whole path costs "
            f"{whole_cpu:.2f} ms of CPU per command over its processes against the bare "
            f"endpoint's {bare_cpu:.2f} ms ({whole_cpu / bare_cpu:.1f}×), and its throughput "
            f"is {g['ratio_to_bare']:.2f} of the bare endpoint's: the ratio follows the CPU. "
            "Half the bare endpoint's throughput needs at most twice its CPU per command, "
            "while a command here is two HTTP requests (each at least the bare endpoint's "
            "cost) and a worker process decides, appends and projects it on the same cores. "
            "What is left, largest first: one Redis round trip per command instead of two "
            "(the put and the wait on one connection, in `shared/adapters/redis.py` and "
            "`commands.submit_command`); clients that take their next view from the 200 "
            "answer or the feed rather than a GET (this load generator plays both seats, so "
            "it must read the other seat's view); the worker's CPU per command; and a load "
            "generator on another machine.",
            "",
        ]
    if image:  # make bench draws it from the same run
        lines += ["![latency histogram](benchmarks/latency.png)"]
    lines += _cuts_lines(cuts)
    return lines


def _where_lines(prof: dict[str, Any] | None) -> list[str]:
    """The profile's parts in three groups, in words."""
    if not prof:
        return []
    share = {r["part"]: r["share"] for r in prof["parts"]}
    server = sum(v for k, v in share.items() if k.startswith(("gunicorn", "Flask")))
    redis_calls = sum(
        v
        for k, v in share.items()
        if k.startswith(("POST commands: submit", "POST commands: wait"))
    )
    get_view = share.get("GET view: the client's read of the other seat's view", 0.0)
    create = share.get("POST /v1/games (a new game every ~60 commands)", 0.0)
    rest = 1 - server - redis_calls - get_view - create
    return [
        f"Where the gateway's CPU goes: {server:.0%} is the HTTP server's own work per request "
        "(gunicorn reading and parsing it, and writing the answer: the first send of each "
        "response is the expensive one on loopback, it delivers the segment and wakes the "
        "client) and the bookkeeping of gunicorn, gevent and Flask around each request; "
        f"{redis_calls:.0%} is the POST's two Redis round trips (the SET NX + XADD pipeline, "
        f"the BLPOP) and {get_view:.0%} the client's GET of the other seat's view (mostly its "
        "Redis read), each Redis call with a pool checkout that polls the socket first "
        "(redis-py) and a switch to gevent's hub; the rest, the application's own Python "
        f"(body checks, auth, hooks, the view functions), is {rest:.0%}, and creating the "
        f"games {create:.0%}. Every command is two HTTP requests here, its POST and that GET.",
        "",
    ]


def _profile_lines(prof: dict[str, Any] | None, title: str) -> list[str]:
    if not prof:
        return []
    return [
        f"{title} (py-spy on the gateway's processes for one extra round, "
        f"{prof['busy_samples']:,} busy samples; µs per command = share × the gateway's "
        "measured CPU per command):",
        "",
        "| part | share | ≈ µs per command |",
        "| --- | --- | --- |",
        *[
            f"| {r['part']} | {r['share']:.1%} | {r['us_per_command']:,.0f} |"
            for r in prof["parts"]
        ],
        "",
    ]


def _cuts_lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    d = json.loads(path.read_text())
    before, after = d["before"], d
    cps = ", ".join(f"{r:.2f}" for r in d["after_vs_before"])
    cpu = ", ".join(f"{r:.2f}" for r in d["gateway_cpu_after_vs_before"])
    cpu_b = before["cpu_ms_per_command"]["gateway (gunicorn)"]
    cpu_a = after["cpu_ms_per_command"]["gateway (gunicorn)"]
    lines = [
        "",
        "### The gateway's hot path, before and after",
        "",
        f"`{d['command']}` on {d['when']} ({d['machine']}; load average "
        f"{d['load_average_at_start']:.1f} when it began"
        + (
            f" and {d['load_average_at_end']:.1f} when it ended"
            if "load_average_at_end" in d
            else ""
        )
        + ": other agents' work shares these 2 cores): the tree without the cuts and this "
        "tree, with the bare endpoint, in turn in each round of one run.",
        "",
        "| | before | after | after ÷ before, by round (median) |",
        "| --- | --- | --- | --- |",
        f"| commands/s | {before['commands_per_s']:,.0f} | {after['commands_per_s']:,.0f} | "
        f"{cps} ({statistics.median(d['after_vs_before']):.2f}) |",
        f"| gateway CPU per command | {cpu_b:.2f} ms | {cpu_a:.2f} ms | {cpu} "
        f"({statistics.median(d['gateway_cpu_after_vs_before']):.2f}) |",
        f"| p50 / p99 | {before['p50_ms']:.0f} / {before['p99_ms']:.0f} ms | "
        f"{after['p50_ms']:.0f} / {after['p99_ms']:.0f} ms | |",
        f"| non-200 | {before['errors']} | {after['errors']} | |",
        f"| bare endpoint, same run | {d['bare']['commands_per_s']:,.0f}/s | | |",
    ]
    for key, what in (("get_view_us", "GET view"), ("post_command_us", "POST command (202)")):
        w = d.get("wsgi", {}).get(key)
        if w:
            lines.append(
                f"| gateway CPU per {what}, WSGI app alone | {w['before']:.0f} µs | "
                f"{w['after']:.0f} µs | {', '.join(f'{r:.2f}' for r in w['ratios'])} "
                f"({w['median_ratio']:.2f}) |"
            )
    lines += [
        "",
        "`--baseline-tree` named a copy of this tree with only the edits below taken out "
        "(`routes.py` without the parsing shortcuts, `observe.py` as it was), so both sides "
        "run the same worker, adapters and settings (to redo it on a later tree: "
        "`git worktree add ../before <a commit>` and `--baseline-tree ../before`). The WSGI rows "
        f"(`--wsgi-requests {d.get('wsgi', {}).get('requests', 0)}`) call the Flask app "
        "directly on prepared requests against a real redis-server, in a fresh process per "
        "tree and round, and count CPU time: they isolate the code that changed from gunicorn, "
        "the sockets and the worker, whose noise on this shared machine is larger than the "
        f"change: the whole path's after ÷ before ranges {min(d['after_vs_before']):.2f}–"
        f"{max(d['after_vs_before']):.2f} from round to round, so no change of its throughput "
        "can be read from this run; the WSGI rows and the profiles show the cut.",
        "",
        "What changed (the API answers the same; the listed integration tests pass, and "
        "`tests/unit/test_gateway_fast_paths.py` checks the shortcut against the schema):",
        "",
        "- **The command body without marshmallow** (`routes.JsonBodyParser.parse`): a body "
        "whose `type`, `id` and `expected_version` have the exact types the schema loads and "
        "pass the schema's own validators is returned as the schema would return it; anything "
        "else goes through webargs and marshmallow as before, so every refusal is unchanged. "
        "The shortcut reads `CommandSchema`'s fields at import and turns itself off if they "
        "change shape.",
        "- **No parsing of an empty query string** where the schema loads nothing to `{}` "
        "(the view's `?seat=`, the feed's query), found once per schema.",
        "- **Cheaper request metrics and log context** (`observe.py`): the labelled Prometheus "
        "children kept per (method, route, status) instead of `labels()` twice a request; "
        "the log fields bound with structlog's tokens and reset from them, without two "
        "generator context managers per request.",
        "",
    ]
    prof = d.get("profile", {})
    lines += _profile_lines(prof.get(BEFORE), "Before the cuts, the gateway's CPU by part")
    lines += _profile_lines(prof.get(WHOLE), "After")
    return lines


# The gateway's own CPU per request with no HTTP server and no sockets in front: the WSGI app
# called directly on prepared environs, against a real redis-server, in a fresh process with
# the code of the tree it runs in (its working directory). A POST without `Prefer: wait`
# (submit, 202: no worker needed) and a GET of the seat's view, the two requests a command
# costs the load above; CPU time, so the machine's other work moves it less than throughput.
WSGI_PROBE = """
import io, json, os, sys, tempfile, time
sys.path.insert(0, os.getcwd())
os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp()  # as under gunicorn
from shared.redis_server import RedisServer
server = RedisServer()
os.environ.update(REDIS_URL=server.url, TABLETOP_BOT_DISPATCH="none", TABLETOP_RATE_LIMITS="off")
from werkzeug.test import EnvironBuilder
from services.gateway.app import create_app
app = create_app()
def call(method, path, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else b""
    env = EnvironBuilder(path=path, method=method, data=data, headers=headers or {},
                         content_type="application/json").get_environ()
    def run():
        e = dict(env); e["wsgi.input"] = io.BytesIO(data)
        out = []
        body = b"".join(app(e, lambda status, h, exc=None: out.append(status)))
        return out[0], body
    return run
status, raw = call("POST", "/v1/games", {"game": "fox", "seats": [{"name": "a"}, {"name": "b"}]})()
game = json.loads(raw)
seat = game["view"]["to_act"][0]
auth = {"Authorization": "Bearer " + game["tokens"][seat]}
view = json.loads(call("GET", "/v1/games/" + game["id"], headers=auth)()[1])
get = call("GET", "/v1/games/" + game["id"], headers=auth)
post = call("POST", "/v1/games/%s/commands" % game["id"], view["legal_commands"][0], auth)
n = int(sys.argv[1])
for _ in range(200):
    get(); post()
assert get()[0].startswith("200") and post()[0].startswith("202")
out = {}
for name, fn in (("get_view", get), ("post_command", post)):
    start = time.process_time()
    for _ in range(n):
        fn()
    out[name + "_us"] = (time.process_time() - start) / n * 1e6
server.stop()
print(json.dumps(out))
"""


def wsgi_probe(tree: Path, requests: int) -> dict[str, float]:
    """``WSGI_PROBE`` in a fresh process with the code of ``tree``: µs of CPU per request."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", WSGI_PROBE, str(requests)],
        cwd=tree, env=env, check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    doc: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return doc


def wsgi_rounds(baseline: Path, rounds: int, requests: int) -> dict[str, Any]:
    """``wsgi_probe`` of this tree and of ``baseline`` in turn, A B A B; per-round ratios."""
    rows = []
    for _ in range(rounds):
        after, before = wsgi_probe(ROOT, requests), wsgi_probe(baseline, requests)
        rows.append({"after": after, "before": before})
    out: dict[str, Any] = {"rounds": rows, "requests": requests}
    for key in ("get_view_us", "post_command_us"):
        ratios = [r["after"][key] / r["before"][key] for r in rows]
        out[key] = {
            "before": statistics.median(r["before"][key] for r in rows),
            "after": statistics.median(r["after"][key] for r in rows),
            "ratios": ratios,
            "median_ratio": statistics.median(ratios),
        }
    return out


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=15, help="load time per contender")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--threads", type=int, default=8, help="connections per client")
    parser.add_argument("--max-requests", type=int, default=100_000,
                        help="commands per contender and round at most")  # fmt: skip
    parser.add_argument("--gateway-workers", type=int, default=2)
    parser.add_argument("--game-workers", type=int, default=1)
    parser.add_argument("--baseline-tree", type=Path, help="also the whole path from this tree")
    parser.add_argument("--profile", type=Path, help="folder for py-spy profiles of the gateway")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--wsgi-requests", type=int, default=0,
                        help="with --baseline-tree: also the gateway's CPU per request without "
                        "HTTP (WSGI_PROBE), this many requests of each kind per round")  # fmt: skip
    a = parser.parse_args()
    result = run(
        a.seconds, a.clients, a.threads, a.gateway_workers, a.game_workers,
        rounds=a.rounds, max_requests=a.max_requests, baseline_tree=a.baseline_tree,
        profile=a.profile,
    )  # fmt: skip
    result.pop("latencies_ms")
    if a.wsgi_requests and a.baseline_tree:
        result["wsgi"] = wsgi_rounds(a.baseline_tree, a.rounds, a.wsgi_requests)
    result["command"] = "python benchmarks/bench_gateway.py " + " ".join(sys.argv[1:])
    result["when"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["machine"] = machine()
    text = json.dumps(result, indent=2)
    if a.json:
        a.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
