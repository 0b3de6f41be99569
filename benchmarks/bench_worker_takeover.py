"""How long a game type goes unserved when the worker holding a game's shard is killed
(``kill -9``) under ``tabletop run``: from the kill to the moment a command sent right after it
is decided.

For each ``--workers`` count it starts a stack (its own Redis, ports and data directory),
creates a Fox game between two players, and ``--kills`` times: waits until the worker holding
the game's shard has been up long enough for its restart to be a first one (the supervisor's
back-off doubles for a child that keeps dying within ``HEALTHY_AFTER``), kills it, sends the
next legal move at once with ``Prefer: wait`` and times it until it is accepted. It also notes
which worker decided it: the restarted one (same consumer name) or another one.

Run: ``python benchmarks/bench_worker_takeover.py --workers 1,2 --kills 5``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
import requests  # noqa: E402

from benchmarks.common import machine  # noqa: E402
from services.supervisor import HEALTHY_AFTER  # noqa: E402
from shared.adapters.shard_leases import lease_key  # noqa: E402
from shared.app.messages import shard_of  # noqa: E402
from shared.config import DEFAULT_SHARDS  # noqa: E402
from tests.e2e.stack import Stack, start_stack  # noqa: E402


def _until(what: str, check: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def _consumer_of(pid: int) -> str | None:
    with contextlib.suppress(OSError):
        for item in (Path("/proc") / str(pid) / "environ").read_bytes().split(b"\0"):
            if item.startswith(b"TABLETOP_CONSUMER_NAME="):
                return item.split(b"=", 1)[1].decode()
    return None


def _age(pid: int) -> float:
    """Seconds since ``pid`` started (0 if it is gone)."""
    try:
        start_ticks = int(
            (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[19]
        )
    except (OSError, ValueError, IndexError):
        return 0.0
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def _owner(r: redis.Redis, gid: str) -> str | None:
    """The consumer name holding the lease on the game's shard."""
    owner = r.get(lease_key("fox", shard_of(gid, DEFAULT_SHARDS)))
    return owner.decode() if isinstance(owner, bytes) else owner


def _holder(stack: Stack, r: redis.Redis, gid: str) -> tuple[int, str] | None:
    """(pid, consumer name) of the Fox worker holding the game's shard, when one does."""
    owner = _owner(r, gid)
    for pid in stack.children("worker --game fox"):
        if owner is not None and _consumer_of(pid) == owner:
            return pid, owner
    return None


def _next_move(url: str, gid: str, tokens: list[str]) -> tuple[str, dict[str, Any]]:
    public = requests.get(f"{url}/v1/games/{gid}", timeout=30).json()
    seat = public["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    mine = requests.get(f"{url}/v1/games/{gid}", headers=auth, timeout=30).json()
    return tokens[seat], mine["legal_commands"][0]


def _send(url: str, gid: str, token: str, body: dict[str, Any]) -> None:
    """Send ``body`` and return once it is accepted (waiting as long as it takes)."""
    auth = {"Authorization": f"Bearer {token}"}
    resp = requests.post(f"{url}/v1/games/{gid}/commands", json=body,
                         headers={**auth, "Prefer": "wait=30"}, timeout=60)  # fmt: skip
    if resp.status_code == 200:
        return
    assert resp.status_code == 202, resp.text
    cid = resp.json()["command_id"]

    def accepted() -> bool:
        got = requests.get(f"{url}/v1/games/{gid}/commands/{cid}", headers=auth, timeout=30)
        status = got.json().get("status") if got.status_code == 200 else None
        assert status in (None, "pending", "accepted"), got.text
        return status == "accepted"

    _until("the command decided", accepted)


def one_stack(workers: int, kills: int, rapid: bool = False) -> dict[str, Any]:
    """The take-over times of ``kills`` kills with ``workers`` Fox workers (``rapid``: each
    kill as soon as the game is served again, not once the worker has been up
    ``HEALTHY_AFTER``)."""
    with tempfile.TemporaryDirectory(prefix="takeover-") as tmp:
        stack = start_stack(Path(tmp), workers=workers, capture=True)
        try:
            r = redis.Redis.from_url(stack.redis_url)
            created = requests.post(
                f"{stack.url}/v1/games",
                json={"game": "fox", "seats": [{"name": "a"}, {"name": "b"}],
                      "options": {"target": 1000}},
                timeout=30,
            ).json()  # fmt: skip
            gid, tokens = created["id"], created["tokens"]
            times: list[float] = []
            by: list[str] = []
            for _ in range(kills):
                _send(stack.url, gid, *_next_move(stack.url, gid, tokens))  # served now
                pid, name = _until("a worker holding the shard", lambda: _holder(stack, r, gid))
                if not rapid:
                    _until("its restart a first one", lambda pid=pid: _age(pid) > HEALTHY_AFTER + 1)
                token, body = _next_move(stack.url, gid, tokens)
                began = time.monotonic()
                os.kill(pid, signal.SIGKILL)
                _send(stack.url, gid, token, body)
                times.append(round(time.monotonic() - began, 2))
                by.append("restarted" if _owner(r, gid) == name else "another")
                print(f"workers={workers}: decided {times[-1]} s after the kill ({by[-1]})",
                      flush=True)  # fmt: skip
            return {
                "workers": workers,
                "rapid": rapid,
                "seconds": times,
                "median_s": statistics.median(times),
                "max_s": max(times),
                "decided_by": by,
            }
        finally:
            stack.stop()


def main() -> None:
    """Parse the arguments, run, print (and write) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--rapid", action="store_true",
                        help="kill again as soon as the game is served (no wait for the "
                        "worker to have been up HEALTHY_AFTER)")  # fmt: skip
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    runs = [one_stack(int(w), args.kills, args.rapid) for w in args.workers.split(",")]
    doc = {"machine": machine(), "runs": runs}
    print(json.dumps(doc, indent=2))
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
