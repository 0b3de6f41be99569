"""The Celery worker's entry: ``celery -A services.bots.worker worker``.

The Celery command line finds an app instance by module, so this one module builds it when the
worker process starts; everything else builds its app with ``create_celery``.

Metrics: the tasks run in pool children, so the main process serves their sum from a
multiprocess directory of this worker's own (``TABLETOP_CELERY_METRICS_DIR``, else a fresh
temporary one; never the gateway's), on the first free port from ``TABLETOP_METRICS_PORT``.
"""

import os

from shared import metrics_dir

# Before anything imports prometheus-client (the tasks' metrics do).
metrics_dir.prepare(os.environ.get("TABLETOP_CELERY_METRICS_DIR"), "tabletop-celery-metrics-")

from services.bots import observe  # noqa: E402
from services.bots.celery_app import create_celery  # noqa: E402

app = create_celery()
observe.connect_signals()
