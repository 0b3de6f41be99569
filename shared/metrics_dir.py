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
