"""Commands through the whole path (HTTP → gunicorn → stream → worker → Lua append →
projections → reply) with ``Prefer: wait``: throughput and latency, next to three yardsticks
measured in the same run with the same load generator: the raw Redis round trip (PING), a
bare Flask endpoint under the same gunicorn settings that checks a body and does one XADD
(``benchmarks/bare_endpoint.py``), and the skeleton of the same shape
(``benchmarks/skeleton_path.py``: a route that checks the body with marshmallow, puts it on a
stream and waits for the reply as the gateway does, a worker that reads it as the worker
does, writes one view and replies; no rules, no event store), sent the same requests: the
commands of Fox games played beforehand with the engine, with the GET of the view and the
game creations the whole path's client makes.

Starts a stack per contender (its own redis-server, gunicorn and, for the whole path, Fox
worker(s)), all on loopback, then drives them in turn, A B A B, in ``--rounds`` rounds of
``--seconds / --rounds`` each, so that every contender sees the same noise: client processes
each drive their own two-human games (or, for the bare endpoint, the same POST over and over)
over keep-alive HTTP connections, bounded in time and in requests (``--max-requests`` per
contender and round). ``--baseline-tree DIR`` adds the whole path from another checkout (the
code before a change) as another contender; ``--no-skeleton`` leaves the skeleton out;
``--profile DIR`` samples each whole-path gateway (and, with the skeleton, both stacks'
gateways and workers) with py-spy for one extra round each (not counted in the figures).
A table goes to stderr, the figures as JSON to stdout.

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
SKELETON = "skeleton"
WHOLE = "whole path"
BEFORE = "whole path, baseline tree"
# A Fox command as a client sends it, for the bare endpoint (it checks the shape only).
BARE_BODY = {"type": "play", "card": {"suit": "bells", "rank": 7}}
NEW_GAME: dict[str, Any] = {
    "game": "fox",
    "seats": [{"name": "a"}, {"name": "b"}],
    "options": {"target": 35},
}
# A game the skeleton is sent: (seat, command) in the order a client sends them.
Script = list[tuple[int, dict[str, Any]]]


def fox_scripts(games: int, seed: int) -> list[Script]:
    """``games`` two-seat Fox games to 35 played with the engine, each command chosen at random
    among the legal ones as the whole path's client chooses from its view: the requests the
    skeleton is sent, so that it carries the same bodies and the same GETs per command."""
    from shared.games import fox
    from shared.games.rng import Rng

    chooser = random.Random(seed)
    out = []
    for g in range(games):
        secret = f"skeleton-{seed}-{g}"
        state: Any = None
        for event in fox.setup(2, fox.parse_options(2, NEW_GAME["options"]), Rng(secret)):
            state = fox.evolve(state, event)
        script: Script = []
        while seats := fox.to_act(state):
            cmd = chooser.choice(fox.legal_commands(state, seats[0]))
            script.append((seats[0], fox.command_to_json(cmd)))
            for event in fox.decide(state, seats[0], cmd, Rng(secret, f"v{len(script)}")):
                state = fox.evolve(state, event)
        out.append(script)
    return out


def _client(
    port: int,
    seconds: float,
    threads: int,
    seed: int,
    out: Any,
    mode: str,
    max_requests: int,
    scripts: list[Script] | None = None,
) -> None:
    """One client process: ``threads`` keep-alive connections, each playing two-human Fox
    games to the end (``mode`` "games"), sending the games of ``scripts`` as a client playing
    them would, GETs and creations included (``mode`` "replay"), or posting ``BARE_BODY``
    (``mode`` "bare"), until the time is up or this process has sent ``max_requests``
    commands. Puts (latencies, non-200 answers, other requests sent, its own CPU seconds) on
    ``out``."""
    import threading

    lat: list[float] = []
    errors = [0]
    sent = [0]
    others = [0]  # the GETs and the creations around the commands
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
        extra = 0
        while mode == "replay" and scripts and time.monotonic() < stop_at:
            script = scripts[rng.randrange(len(scripts))]
            _, game = call("POST", "/v1/games", NEW_GAME)
            extra += 1
            gid, tokens = game["id"], game["tokens"]
            viewed: int | None = None  # the creation answers the public view
            finished = True
            for seat, cmd in script:
                if not more():
                    finished = False
                    break
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                if viewed != seat:  # as the game client: the other seat's view first
                    call("GET", f"/v1/games/{gid}", headers=auth)
                    extra += 1
                t = time.perf_counter()
                status, _ = call(
                    "POST", f"/v1/games/{gid}/commands", cmd, {**auth, "Prefer": "wait=10"}
                )
                mine.append(time.perf_counter() - t)
                if status != 200:
                    errors[0] += 1
                viewed = seat
            if not finished:
                break
        if mode == "bare":  # the same request shape as a command, to the bare route
            auth = {"Authorization": "Bearer " + "x" * 32, "Prefer": "wait=10"}
            while more():
                t = time.perf_counter()
                status, _ = call("POST", "/bare/commands", BARE_BODY, auth)
                mine.append(time.perf_counter() - t)
                if status != 200:
                    errors[0] += 1
        while mode == "games" and time.monotonic() < stop_at:
            status, game = call("POST", "/v1/games", NEW_GAME)
            gid, tokens = game["id"], game["tokens"]
            view = game["view"]
            extra += 1
            while view["outcome"] is None and more():
                seat = view["to_act"][0]
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                if view.get("seat") != seat:
                    _, view = call("GET", f"/v1/games/{gid}", headers=auth)
                    extra += 1
                cmd = rng.choice(view["legal_commands"])
                t = time.perf_counter()
                status, new = call(
                    "POST", f"/v1/games/{gid}/commands", cmd, {**auth, "Prefer": "wait=10"}
                )
                mine.append(time.perf_counter() - t)
                if status != 200:
                    errors[0] += 1
                    _, view = call("GET", f"/v1/games/{gid}", headers=auth)
                    extra += 1
                    continue
                view = new
            if view["outcome"] is None:  # out of requests or time
                break
        with lock:
            lat.extend(mine)
            others[0] += extra

    ts = [threading.Thread(target=drive, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((lat, errors[0], others[0], time.process_time()))


# Per contender: the load generator's mode, the gunicorn app, the worker's command (none for
# the bare endpoint) and the readiness path.
KINDS: dict[str, tuple[str, str, list[str] | None, str]] = {
    BARE: ("bare", "benchmarks.bare_endpoint:create_app()", None, "/bare/healthz"),
    SKELETON: ("replay", "benchmarks.skeleton_path:create_app()",
               ["-m", "benchmarks.skeleton_path", "worker"], "/healthz"),
    WHOLE: ("games", "services.gateway.app:create_app()",
            ["-m", "services.cli", "worker", "--game", "fox"], "/healthz"),
}  # fmt: skip
KINDS[BEFORE] = KINDS[WHOLE]


class Stack:
    """One contender: a redis-server, gunicorn (the gateway's settings) and, but for the bare
    endpoint, its worker(s) (Fox workers, or the skeleton's), with the code of ``tree``; all on
    loopback."""

    def __init__(
        self,
        name: str,
        tree: Path,
        gateway_workers: int,
        game_workers: int,
        scripts: list[Script] | None = None,
    ) -> None:
        self.name, self.tree, self.scripts = name, tree, scripts
        self.mode, app, worker, self.ready_path = KINDS[name]
        self.server = RedisServer()
        self.port = free_port()
        env = {"GATEWAY_THREADS": "16", **os.environ, "REDIS_URL": self.server.url}
        env.pop("PYTHONPATH", None)  # the tree's own packages: it is the working directory
        gunicorn = [
            sys.executable, "-m", "gunicorn", "-c", str(tree / "deploy/gunicorn.conf.py"),
            "--bind", f"127.0.0.1:{self.port}", "--workers", str(gateway_workers), app,
        ]  # fmt: skip
        quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        gateway_env = {**env, "TABLETOP_BOT_DISPATCH": "none", "TABLETOP_RATE_LIMITS": "off"}
        self.procs = [subprocess.Popen(gunicorn, env=gateway_env, cwd=tree, **quiet)]
        command = [sys.executable, *worker] if worker is not None else []
        for _ in range(game_workers if command else 0):
            self.procs.append(subprocess.Popen(command, env=env, cwd=tree, **quiet))

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 120  # a busy shared machine imports slowly
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", self.ready_path)
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
                kwargs={"scripts": self.scripts},
            )
            for i in range(clients)
        ]
        before = self.cpu()
        start = time.perf_counter()
        for p in ps:
            p.start()
        lat: list[float] = []
        errors = others = 0
        client_cpu = 0.0
        for _ in ps:
            got, err, more, spent = q.get()
            lat.extend(got)
            errors += err
            others += more
            client_cpu += spent
        elapsed = time.perf_counter() - start
        after = self.cpu()
        for p in ps:
            p.join()
        cpu = {k: after[k] - before[k] for k in before}
        return {"lat": lat, "errors": errors, "others": others, "elapsed": elapsed, "cpu": cpu,
                "client_cpu": client_cpu}  # fmt: skip

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
        # HTTP requests per command: its POST, and the GETs and creations around it.
        "requests_per_command": 1 + sum(r.get("others", 0) for r in rounds) / n,
        "cpu_ms_per_command": cpu,
        # The load generator's own, on the same cores (not in the processes' sum).
        "client_cpu_ms_per_command": sum(r.get("client_cpu", 0.0) for r in rounds) * 1e3 / n,
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
    skeleton: bool = True,
) -> dict[str, Any]:
    """Start the stacks, drive them in turn, stop them; returns the whole path's figures with
    the yardsticks' (``bare``, ``skeleton``, ``redis_ping_*``) and, with ``baseline_tree``, the
    baseline's (``before``). ``seconds`` is each contender's load time, over ``rounds``
    rounds."""
    load_at_start = os.getloadavg()[0]  # other work on the same cores, for the report
    names = [BARE, WHOLE] + ([SKELETON] if skeleton else []) + ([BEFORE] if baseline_tree else [])
    # Absolute: each stack runs in its tree, where a relative path would name another place.
    trees = {BARE: ROOT, SKELETON: ROOT, WHOLE: ROOT,
             BEFORE: baseline_tree.resolve() if baseline_tree else ROOT}  # fmt: skip
    # Enough games that the connections rarely play the same one at once.
    scripts = fox_scripts(8 * clients * threads, seed=7) if skeleton else None
    stacks: dict[str, Stack] = {}
    profiles: dict[str, dict[str, Path]] = {}
    try:
        for name in names:
            stacks[name] = Stack(name, trees[name], gateway_workers, game_workers, scripts)
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
                got = _profile(stacks[name], profile, per_round, clients, threads, max_requests)
                # py-spy may not attach (ptrace): an empty file is no profile.
                profiles[name] = {k: v for k, v in got.items() if v.exists() and v.stat().st_size}
    finally:
        for stack in stacks.values():
            stack.stop()
    whole = _summary(results[WHOLE])
    bare = _summary(results[BARE])
    bare.pop("latencies_ms")
    out: dict[str, Any] = {
        **whole,
        "redis_ping_p50_ms": raw["p50_ms"],
        "redis_ping_ops_per_s": raw["ops_per_s"],
        "bare": bare,
        "ratio_to_bare": statistics.median(_ratios(results[WHOLE], results[BARE])),
        "ratios_to_bare": _ratios(results[WHOLE], results[BARE]),
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
    if skeleton:
        skel = _summary(results[SKELETON])
        skel.pop("latencies_ms")
        out["skeleton"] = skel
        out["ratios_to_skeleton"] = _ratios(results[WHOLE], results[SKELETON])
        out["ratio_to_skeleton"] = statistics.median(out["ratios_to_skeleton"])
    if baseline_tree is not None:
        before = _summary(results[BEFORE])
        before.pop("latencies_ms")
        out["before"] = before
        out["baseline_tree"] = str(baseline_tree)
        out["after_vs_before"] = _ratios(results[WHOLE], results[BEFORE])
        out["gateway_cpu_after_vs_before"] = [
            a / b
            for a, b in zip(
                whole["rounds_gateway_cpu_ms"], before["rounds_gateway_cpu_ms"], strict=True
            )
        ]
    cpu = {WHOLE: whole, BEFORE: out.get("before"), SKELETON: out.get("skeleton")}
    for name, paths in profiles.items():
        per_command = cpu[name]["cpu_ms_per_command"]  # type: ignore[index]
        if "gateway" in paths:
            out.setdefault("profile", {})[name] = summarize_profile(
                paths["gateway"], per_command["gateway (gunicorn)"]
            ) | {"file": str(paths["gateway"])}
        if "worker" in paths:
            out.setdefault("worker_profile", {})[name] = summarize_worker_profile(
                paths["worker"], per_command["game worker(s)"]
            ) | {"file": str(paths["worker"])}
    return out


def _ratios(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[float]:
    """Commands/s of ``a`` over ``b``, round by round."""
    return [
        (len(x["lat"]) / x["elapsed"]) / (len(y["lat"]) / y["elapsed"])
        for x, y in zip(a, b, strict=True)
    ]


def _py_spy() -> str | None:
    here = Path(sys.executable).parent / "py-spy"
    return str(here) if here.exists() else shutil.which("py-spy")


def _profile(
    stack: Stack, folder: Path, seconds: float, clients: int, threads: int, max_requests: int
) -> dict[str, Path]:
    """One more round of load with py-spy sampling the gateway's processes and, but for the
    baseline tree, the first worker's (blocking: it pauses them to read consistent stacks, so
    the round is slower and is not counted). The raw stacks' files by "gateway", "worker"."""
    spy = _py_spy()
    if spy is None:
        raise RuntimeError("--profile needs py-spy (pip install py-spy)")
    folder.mkdir(parents=True, exist_ok=True)
    slug = {BEFORE: "before", WHOLE: "after", SKELETON: "skeleton"}[stack.name]
    targets = {"gateway": stack.procs[0].pid}
    if stack.name != BEFORE and len(stack.procs) > 1:
        targets["worker"] = stack.procs[1].pid
    paths = {what: folder / f"{what}_profile_{slug}.txt" for what in targets}
    record = [spy, "record", "--format", "raw", "--rate", "200", "--subprocesses",
              "--duration", str(max(1, int(seconds)))]  # fmt: skip
    samplers = [
        subprocess.Popen(
            [*record, "--output", str(paths[what]), "--pid", str(pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for what, pid in targets.items()
    ]
    time.sleep(0.5)  # py-spy attaches
    stack.drive(seconds, clients, threads, max_requests, seed=99)
    for sampler in samplers:
        try:
            sampler.wait(seconds + 30)
        except subprocess.TimeoutExpired:
            sampler.kill()
            sampler.wait()
    return paths


# What the gateway spends its CPU on, by the first frame of a stack that matches (py-spy's
# collapsed stacks; frames as "function (file)", or "Class.function (file)" where py-spy names
# the class). Shares are of the samples where a gateway process was busy; the idle frames
# (the event loop waiting) are left out. A pattern matches the start of a frame, with or
# without its class, or, starting with "(", its file anywhere.
PARTS = [
    ("gunicorn: read and parse the request",
     ("Parser.__next__ (gunicorn/", "__next__ (gunicorn/http/parser")),
    ("gunicorn: write the response (the headers' send wakes the client)",
     ("Response.write (gunicorn/", "Response.close (gunicorn/", "write (gunicorn/http/wsgi",
      "close (gunicorn/http/wsgi")),
    ("gunicorn and gevent: per-request bookkeeping (environ, timeouts, keep-alive)",
     ("AsyncWorker.", "GeventWorker.", "create (gunicorn/", "Timeout.", "Config.__getattr__",
      "PreRequest.", "_handle_and_close_when_done", "Hub.", "Response.should_close",
      "(gunicorn/workers/", "(gunicorn/config", "(gevent/timeout", "(gevent/hub",
      "should_close (gunicorn/")),
    # Before the Flask part: a hook's frames start with "Flask." too.
    ("before/after-request hooks (metrics, log context, CORS)",
     ("Flask.preprocess_request", "Flask.process_response", "Flask.do_teardown_request",
      "install.<locals>._", "preprocess_request (flask/", "process_response (flask/",
      "do_teardown_request (flask/", "(services/gateway/observe", "(services/gateway/http_extras",
      "(services/gateway/limits_guard")),
    ("Flask: request context, routing, dispatch, response object",
     ("RequestContext.", "Flask.", "Response.__call__ (werkzeug/", "View.as_view",
      "MethodView.dispatch_request", "(flask/app.py", "(flask/ctx.py", "(flask/views.py",
      "__call__ (werkzeug/wrappers/response")),
    ("request body and query: JSON, webargs, marshmallow (or the hand check)",
     ("Parser.parse (webargs/", "JsonBodyParser.parse (services/", "parse (webargs/core",
      "parse (services/gateway/routes", "load (marshmallow/schema", "get_json (werkzeug/")),
    ("flask-smorest and webargs decorators",
     ("ArgumentsMixin.", "ResponseMixin.", "Blueprint.doc", "Parser.use_args",
      "(flask_smorest/", "wrapper (webargs/core")),
    ("POST commands: submit (SET NX + XADD pipeline)", ("submit_command (shared/",)),
    ("POST commands: wait for the reply (BLPOP)", ("wait_reply (shared/app/queries",)),
    ("POST commands: submit and wait for the reply (one round trip: [SET NX +] XADD + BLPOP)",
     ("submit_and_wait (shared/", "put_and_wait (benchmarks/skeleton_path")),
    ("POST commands: the seat from the token", ("_seat_of (services/", "_seat (benchmarks/")),
    ("POST commands: the rest of the view function",
     ("Commands.post (services/", "post (services/gateway/command_routes",
      "post_command (benchmarks/skeleton_path")),
    ("GET view: the client's read of the other seat's view",
     ("Game.get (services/", "get (services/gateway/game_routes",
      "get_view (benchmarks/skeleton_path")),
    ("POST /v1/games (a new game every ~200 commands)",
     ("Games.post (services/", "post (services/gateway/game_routes",
      "create_game (benchmarks/skeleton_path")),
]  # fmt: skip
IDLE = ("Hub.run (gevent/hub", "acquire_with_timeout (gevent", "poll.poll (gevent",
        "Arbiter.", "Hub.wait", "_Condition.wait (gevent", "run (gevent/hub",
        "wait (gevent/hub", "(gunicorn/arbiter")  # fmt: skip


def _idle(frame: str) -> bool:
    """Whether the innermost ``frame`` is a process waiting (the event loop, the arbiter)."""
    return _matches(frame, IDLE)


def _matches(frame: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``frame`` matches one of ``patterns`` (see ``PARTS``)."""
    name, _, where = frame.partition(" (")
    short = name.rsplit(".", 1)[-1] + " (" + where
    return any(
        p in frame if p.startswith("(") else frame.startswith(p) or short.startswith(p)
        for p in patterns
    )


def _clean(stack: str) -> list[str]:
    """A raw py-spy stack's frames as "function (file)", paths from the package or the
    project's top folder, without line numbers."""
    frames = [re.sub(r" \(.*?/site-packages/", " (", f) for f in stack.split(";")]
    frames = [re.sub(r" \(/\S*?/(services|shared|benchmarks)/", r" (\1/", f) for f in frames]
    return [re.sub(r":\d+\)$", ")", f) for f in frames]


def _frames(path: Path) -> list[tuple[list[str], int]]:
    stacks = []
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack:
            continue
        frames = _clean(stack)
        if len(frames) < 3 or not frames[1].startswith("process ") or _idle(frames[-1]):
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
            hit = next((lab for lab, pre in PARTS if _matches(frame, pre)), None)
            if hit is not None:
                label = hit
                break
        parts[label] += n
    rows: list[dict[str, Any]] = [
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


def summarize_worker_profile(path: Path, worker_cpu_ms: float, top: int = 14) -> dict[str, Any]:
    """The worker's busy samples by the project's own functions (``services/``, ``shared/``,
    ``benchmarks/``), each counted inclusively (with what it calls) in µs per command from the
    measured CPU per command, the loop that holds them all (over 97%) left out; and the top
    frames by self time."""
    stacks = []
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [f for f in _clean(stack) if not f.startswith(("process ", "thread "))]
        if frames and not _idle(frames[-1]):
            stacks.append((frames, int(count)))
    busy = sum(n for _, n in stacks) or 1
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for frames, n in stacks:
        own[frames[-1]] += n
        for frame in set(frames):
            if re.search(r" \((services|shared|benchmarks)/", frame):
                inclusive[frame] += n
    rows = [
        {"frame": f, "share": k / busy, "us_per_command": k / busy * worker_cpu_ms * 1e3}
        for f, k in inclusive.most_common()
        if k / busy <= 0.97
    ][:top]
    top_self = [{"frame": f, "share": k / busy} for f, k in own.most_common(10)]
    return {"busy_samples": busy, "functions": rows, "top_self": top_self}


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
    skel = g.get("skeleton")
    if skel:
        lines.append(
            f"| skeleton of the same shape (yardstick) | {skel['commands_per_s']:,.0f} | "
            f"{skel['p50_ms']:.1f} ms | {skel['p99_ms']:.1f} ms | {skel['errors']} | "
            f"{skel['cpu_ms_per_command']['gateway (gunicorn)']:.2f} ms |"
        )
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
    if skel:
        rounds = ", ".join(f"{r:.2f}" for r in g["ratios_to_skeleton"])
        lines += [
            f"Whole path ÷ skeleton (`benchmarks/skeleton_path.py`: the same requests through a "
            "route that checks the body with marshmallow, XADD and BLPOP, and a worker that "
            "reads the stream, SETs one view and replies; no rules, no event store), "
            f"commands/s: **{g['ratio_to_skeleton']:.2f}** (median of the rounds {rounds}).",
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
    create = share.get("POST /v1/games (a new game every ~200 commands)", 0.0)
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


def probe(tree: Path, script: str, count: int, timeout: float) -> dict[str, Any]:
    """``script`` (``WSGI_PROBE``, ``WORKER_PROBE``) in a fresh process with the code of
    ``tree``, given ``count``: the JSON of its last line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(count)],
        cwd=tree, env=env, check=True, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    doc: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return doc


def probe_rounds(
    baseline: Path,
    rounds: int,
    script: str,
    count: tuple[str, int],
    figures: tuple[str, ...],
    timeout: float,
) -> dict[str, Any]:
    """``probe`` of this tree and of ``baseline`` in turn, A B A B; per-round ratios of each
    of ``figures``, and ``count`` (its name, its value) recorded with them."""
    name, value = count
    rows = []
    for _ in range(rounds):
        after = probe(ROOT, script, value, timeout)
        before = probe(baseline, script, value, timeout)
        rows.append({"after": after, "before": before})
    out: dict[str, Any] = {"rounds": rows, name: value}
    for key in figures:
        ratios = [r["after"][key] / r["before"][key] for r in rows]
        out[key] = {
            "before": statistics.median(r["before"][key] for r in rows),
            "after": statistics.median(r["after"][key] for r in rows),
            "ratios": ratios,
            "median_ratio": statistics.median(ratios),
        }
    return out


# The worker's own cost per command with no load generator and no other process in the way:
# the tree's Fox consumer (``build_consumer``) in process, against a real redis-server, each
# command posted through the WSGI app without waiting (202) and then decided by one
# ``poll_once``. Counted over the polls alone: CPU time; then, for fewer commands, the
# Redis commands per command (INFO commandstats around each poll) and the Python function
# calls per command (cProfile), which the machine's other work does not move.
WORKER_PROBE = """
import cProfile, collections, json, os, pstats, random, sys, tempfile, time
sys.path.insert(0, os.getcwd())
os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp()
from shared.redis_server import RedisServer
server = RedisServer()
os.environ.update(REDIS_URL=server.url, TABLETOP_BOT_DISPATCH="none", TABLETOP_RATE_LIMITS="off")
import redis
from werkzeug.test import EnvironBuilder
from services.gateway.app import create_app
from services.worker.main import build_consumer
app = create_app()
consumer = build_consumer("fox")
consumer.ensure_groups()
spy = redis.Redis.from_url(server.url)
def call(method, path, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else b""
    env = EnvironBuilder(path=path, method=method, data=data, headers=headers or {},
                         content_type="application/json").get_environ()
    out = []
    raw = b"".join(app(env, lambda status, h, exc=None: out.append(status)))
    return out[0], json.loads(raw or b"null")
def commands(n):
    rng = random.Random(1)
    while True:
        _, game = call("POST", "/v1/games", {"game": "fox", "seats": [{"name": "a"},
                       {"name": "b"}], "options": {"target": 35}})
        tokens = game["tokens"]
        path = "/v1/games/" + game["id"]
        while True:
            _, view = call("GET", path, headers={"Authorization": "Bearer " + tokens[0]})
            if view["outcome"] is not None:
                break
            auth = {"Authorization": "Bearer " + tokens[view["to_act"][0]]}
            _, view = call("GET", path, headers=auth)
            status, _ = call("POST", path + "/commands", rng.choice(view["legal_commands"]), auth)
            assert status.startswith("202"), status
            yield
            n -= 1
            if n == 0:
                return
def poll():
    while not consumer.poll_once(block_ms=100):
        pass
n = int(sys.argv[1])
for _ in commands(200):  # warm: caches, scripts loaded, leases taken
    poll()
spent = 0.0
for _ in commands(n):
    start = time.process_time()
    poll()
    spent += time.process_time() - start
counted, calls, profiler = max(1, n // 4), collections.Counter(), cProfile.Profile()
for _ in commands(counted):
    before = spy.info("commandstats")
    profiler.enable()
    poll()
    profiler.disable()
    for name, row in spy.info("commandstats").items():
        calls[name.removeprefix("cmdstat_")] += row["calls"] - before.get(name, {}).get("calls", 0)
calls["info"] -= counted  # the second INFO of each pair counts the first
server.stop()
print(json.dumps({"worker_us": spent / n * 1e6,
                  "redis_commands": sum(calls.values()) / counted,
                  "redis_by_command": {k: v / counted for k, v in sorted(calls.items()) if v},
                  "python_calls": pstats.Stats(profiler).total_calls / counted}))
"""


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
    parser.add_argument("--no-skeleton", action="store_true",
                        help="leave the skeleton (benchmarks/skeleton_path.py) out")  # fmt: skip
    parser.add_argument("--profile", type=Path, help="folder for py-spy profiles of the gateway")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--wsgi-requests", type=int, default=0,
                        help="with --baseline-tree: also the gateway's CPU per request without "
                        "HTTP (WSGI_PROBE), this many requests of each kind per round")  # fmt: skip
    parser.add_argument("--worker-commands", type=int, default=0,
                        help="with --baseline-tree: also the worker's CPU per command without "
                        "load (WORKER_PROBE), this many commands per tree and round")  # fmt: skip
    a = parser.parse_args()
    result = run(
        a.seconds, a.clients, a.threads, a.gateway_workers, a.game_workers,
        rounds=a.rounds, max_requests=a.max_requests, baseline_tree=a.baseline_tree,
        profile=a.profile, skeleton=not a.no_skeleton,
    )  # fmt: skip
    result.pop("latencies_ms")
    if a.wsgi_requests and a.baseline_tree:
        result["wsgi"] = probe_rounds(a.baseline_tree, a.rounds, WSGI_PROBE,
                                      ("requests", a.wsgi_requests),
                                      ("get_view_us", "post_command_us"), 600)  # fmt: skip
    if a.worker_commands and a.baseline_tree:
        result["worker_probe"] = probe_rounds(
            a.baseline_tree, a.rounds, WORKER_PROBE, ("commands", a.worker_commands),
            ("worker_us", "redis_commands", "python_calls"), 900)  # fmt: skip
    result["command"] = "python benchmarks/bench_gateway.py " + " ".join(sys.argv[1:])
    result["when"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["machine"] = machine()
    text = json.dumps(result, indent=2)
    if a.json:
        a.json.write_text(text)
    print("\n".join(table(result)), file=sys.stderr)
    print(text)


def table(g: dict[str, Any]) -> list[str]:
    """The contenders side by side, in Markdown: commands/s, latency, HTTP requests and CPU
    per command by process; then the ratios, round by round."""
    rows = [(WHOLE, g)] + [
        (name, g[key]) for name, key in ((SKELETON, "skeleton"), (BEFORE, "before"),
                                         (BARE, "bare")) if key in g
    ]  # fmt: skip
    cpu = list(g["cpu_ms_per_command"])
    lines = [
        "| contender | commands/s | p50 | p99 | non-200 | HTTP requests per command | "
        + " | ".join(f"CPU ms per command: {k}" for k in cpu)
        + " | CPU ms per command: all | load generator's CPU ms per command |",
        "| --- " * (8 + len(cpu)) + "|",
    ]
    for name, d in rows:
        per = d["cpu_ms_per_command"]
        lines.append(
            f"| {name} | {d['commands_per_s']:,.0f} | {d['p50_ms']:.1f} ms | "
            f"{d['p99_ms']:.1f} ms | {d['errors']} | {d.get('requests_per_command', 1):.2f} | "
            + " | ".join(f"{per[k]:.2f}" for k in cpu)
            + f" | {sum(per.values()):.2f} | {d.get('client_cpu_ms_per_command', 0):.2f} |"
        )
    lines += ["", f"Redis PING, one connection: {g['redis_ping_ops_per_s']:,.0f}/s.", ""]
    for label, key in (("whole path ÷ skeleton", "ratios_to_skeleton"),
                       ("whole path ÷ bare endpoint", "ratios_to_bare"),
                       ("whole path, this tree ÷ baseline tree", "after_vs_before"),
                       ("gateway CPU per command, this tree ÷ baseline tree",
                        "gateway_cpu_after_vs_before")):  # fmt: skip
        if key in g:
            by_round = ", ".join(f"{r:.2f}" for r in g[key])
            lines.append(f"{label}: {statistics.median(g[key]):.2f} (median; by round {by_round})")
    for key, what in (("wsgi", "the gateway's CPU per request, WSGI app alone"),
                      ("worker_probe", "the worker alone, per command")):  # fmt: skip
        for name, row in g.get(key, {}).items():
            if isinstance(row, dict) and "median_ratio" in row:
                lines.append(
                    f"{what}, {name}: before {row['before']:,.1f}, after {row['after']:,.1f}, "
                    f"after ÷ before {row['median_ratio']:.2f} (median; by round "
                    + ", ".join(f"{r:.2f}" for r in row["ratios"])
                    + ")"
                )
    return lines + _profile_table(g)


def _profile_table(g: dict[str, Any]) -> list[str]:
    """With profiles: the gateways' parts side by side in µs per command (whole path,
    skeleton, the difference), then the whole path's worker by its own functions."""
    prof = g.get("profile", {})
    lines: list[str] = []
    if WHOLE in prof:
        names = [n for n in (WHOLE, SKELETON, BEFORE) if n in prof]
        us = {n: {r["part"]: r["us_per_command"] for r in prof[n]["parts"]} for n in names}
        parts = sorted(
            us[WHOLE].keys() | us.get(SKELETON, {}).keys(), key=lambda k: -us[WHOLE].get(k, 0)
        )
        diff = SKELETON in us
        lines += [
            "",
            "Gateway CPU by part, µs per command (py-spy, one extra round per stack; "
            + ", ".join(f"{n}: {prof[n]['busy_samples']} busy samples" for n in names)
            + "):",
            "",
            "| part | " + " | ".join(names) + (" | whole − skeleton |" if diff else " |"),
            "| --- " * (len(names) + 1 + diff) + "|",
        ]
        for part in parts:
            row = [f"{us[n].get(part, 0):,.0f}" for n in names]
            if diff:
                row.append(f"{us[WHOLE].get(part, 0) - us[SKELETON].get(part, 0):+,.0f}")
            lines.append(f"| {part} | " + " | ".join(row) + " |")
    for name, w in g.get("worker_profile", {}).items():
        lines += [
            "",
            f"Worker CPU of the {name} by function, inclusive, µs per command "
            f"({w['busy_samples']} busy samples):",
            "",
            "| function | share | µs per command |",
            "| --- | --- | --- |",
            *[
                f"| {r['frame']} | {r['share']:.0%} | {r['us_per_command']:,.0f} |"
                for r in w["functions"]
            ],
            "",
            "Top frames by self time: "
            + "; ".join(f"{r['frame']} {r['share']:.0%}" for r in w["top_self"][:5]),
        ]
    return lines


if __name__ == "__main__":
    main()
