"""The registered bots' worker counts its turns as the Celery task that played them did
(``tabletop_celery_tasks{task="bots.remote"}``), so a scrape still shows them. It patches the
process with gevent when imported, so it runs in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
from services.bots import remote_worker as rw
from prometheus_client import REGISTRY

def ok(game_id, seat, version):
    assert (game_id, seat, version) == ("g1", 0, 3)

def broken(game_id, seat, version):
    raise RuntimeError("the bot's host is gone")

rw._turn(ok, b'["g1", 0, 3]')
rw._turn(ok, b'["g1", 0, 3]')
rw._turn(broken, b'["g1", 0, 3]')
rw._turn(ok, b'not json')

def value(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0

print(value("tabletop_celery_tasks_total", task="bots.remote", state="succeeded"),
      value("tabletop_celery_tasks_total", task="bots.remote", state="failed"),
      value("tabletop_celery_task_duration_seconds_count", task="bots.remote"))
"""


def test_turns_are_counted_by_outcome_with_their_durations() -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, env=env,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    succeeded, failed, timed = (float(x) for x in done.stdout.split())
    assert (succeeded, failed, timed) == (2.0, 2.0, 4.0)
