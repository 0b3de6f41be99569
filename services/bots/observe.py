"""Celery's metrics and logs: task outcomes and times from Celery's signals, the workers'
/metrics served by the main process, structured logs carrying the task's game id.

``connect_signals()`` is called by the worker entry module only (``services/bots/worker.py``):
a process that merely sends tasks (the gateway, the stream workers) counts nothing here.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import structlog
from celery import signals

from shared import logs, metrics_dir
from shared.adapters import metrics

# Start times of the tasks running in this pool process, by task id.
_started: dict[str, float] = {}
# Task names whose first argument is a game id (bound to the task's log lines).
GAME_TASKS = frozenset({"bots.move", "scoring.finalize"})


def _name(task: Any) -> str:
    return str(getattr(task, "name", None) or "unknown")


def on_prerun(task_id: str = "", task: Any = None, args: Any = (), **_: Any) -> None:
    """Note the start; bind the task (and its game) to the lines it logs."""
    _started[task_id] = time.perf_counter()
    fields: dict[str, Any] = {"task": _name(task), "task_id": task_id}
    if _name(task) in GAME_TASKS and args:
        fields["game_id"] = args[0]
    structlog.contextvars.bind_contextvars(**fields)


def on_postrun(task_id: str = "", task: Any = None, state: str | None = None, **_: Any) -> None:
    """Count the task by its final state and observe its time."""
    started = _started.pop(task_id, None)
    name = _name(task)
    if started is not None:
        metrics.CELERY_LATENCY.labels(name).observe(time.perf_counter() - started)
    label = {"SUCCESS": "succeeded", "FAILURE": "failed", "RETRY": "retried"}.get(
        state or "", (state or "unknown").lower()
    )
    metrics.CELERY_TASKS.labels(name, label).inc()
    structlog.contextvars.clear_contextvars()


def on_revoked(request: Any = None, **_: Any) -> None:
    """A task revoked (or expired) before it ran."""
    metrics.CELERY_TASKS.labels(str(getattr(request, "task", None) or "unknown"), "revoked").inc()


def on_rejected(message: Any = None, **_: Any) -> None:
    """A message no task could take (unknown, or malformed)."""
    metrics.CELERY_TASKS.labels("unknown", "rejected").inc()


def on_worker_init(**_: Any) -> None:
    """In the main process, before the pool starts: start from empty value files and serve
    the children's sum."""
    path = os.environ.get(metrics_dir.ENV)
    if path:
        metrics_dir.clean(path)
    metrics.serve(metrics.multiprocess_registry())


def on_process_shutdown(pid: int | None = None, **_: Any) -> None:
    """A pool child exits: its live gauges leave the sum (its counters stay counted)."""
    if os.environ.get(metrics_dir.ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid())


def on_setup_logging(loglevel: Any = None, **_: Any) -> None:
    """Celery's own logging set-up replaced by the service's (``TABLETOP_LOG_FORMAT``)."""
    level = loglevel if isinstance(loglevel, int) else None
    if isinstance(loglevel, str):
        level = logging.getLevelName(loglevel.upper())
    logs.configure("celery", level=level if isinstance(level, int) else logging.INFO)


def connect_signals() -> None:
    """Connect the handlers above (weak=False: they are module functions, kept anyway)."""
    signals.task_prerun.connect(on_prerun, weak=False)
    signals.task_postrun.connect(on_postrun, weak=False)
    signals.task_revoked.connect(on_revoked, weak=False)
    signals.task_rejected.connect(on_rejected, weak=False)
    signals.worker_init.connect(on_worker_init, weak=False)
    signals.worker_process_shutdown.connect(on_process_shutdown, weak=False)
    signals.setup_logging.connect(on_setup_logging, weak=False)
