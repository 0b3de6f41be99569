"""prometheus-client's multiprocess directory, prepared before prometheus-client is imported.

prometheus-client picks file-backed values at import when ``PROMETHEUS_MULTIPROC_DIR`` is
set, so a process type whose children share one /metrics (gunicorn's workers, Celery's pool)
must set it first; this module imports nothing of prometheus-client for that reason.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ENV = "PROMETHEUS_MULTIPROC_DIR"


def clean(path: str | os.PathLike[str]) -> None:
    """Remove the value files a previous run left (a restarted stack starts from zero; a
    dead process's counters would otherwise be summed in for ever)."""
    for stale in Path(path).glob("*.db"):
        stale.unlink(missing_ok=True)


def prepare(path: str | None, prefix: str) -> str:
    """Use ``path`` (created if missing), else a new temporary directory; set ``ENV`` to it
    for this process and its children and return it."""
    chosen = path or tempfile.mkdtemp(prefix=prefix)
    Path(chosen).mkdir(parents=True, exist_ok=True)
    os.environ[ENV] = chosen
    return chosen


def clean_tree(path: str | os.PathLike[str]) -> None:
    """``clean`` for a directory and every directory below it (a stack's metrics root: the
    gateway's, the stream workers' and each Celery worker's directories)."""
    for stale in Path(path).glob("**/*.db"):
        stale.unlink(missing_ok=True)


def adopt(path: str | None) -> str | None:
    """A process whose values others sum in (a stream worker): ``path`` is its directory,
    set as ``ENV``; without it, no directory at all. An inherited ``ENV`` is never kept: the
    gateway's would put this process's values into the gateway's sum (and counted wherever
    else that directory is read) instead of where they are looked for."""
    if path:
        return prepare(path, "")
    os.environ.pop(ENV, None)
    return None
