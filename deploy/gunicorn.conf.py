"""gunicorn settings for the gateway.

gevent workers by default (``GATEWAY_WORKER_CLASS=gthread`` for threads): a request that waits
for its command's outcome (``Prefer: wait``) or holds a live feed open blocks on Redis, and a
greenlet per such request costs far less than a thread.
"""

import os


def _default_worker_class() -> str:
    # gevent: a live feed (Server-Sent Events) or a `Prefer: wait` then holds a greenlet, not
    # one of a few threads, so thousands stay open while other requests are answered at once.
    try:
        import gevent  # noqa: F401
    except ImportError:
        return "gthread"
    return "gevent"


worker_class = os.environ.get("GATEWAY_WORKER_CLASS") or _default_worker_class()
worker_connections = int(os.environ.get("GATEWAY_CONNECTIONS", "4000"))
workers = int(os.environ.get("GATEWAY_WORKERS", "2"))
threads = int(os.environ.get("GATEWAY_THREADS", "16"))
timeout = 60
graceful_timeout = 10
keepalive = 30
accesslog = os.environ.get("GATEWAY_ACCESS_LOG") or None
# gunicorn's control socket would be one file in the home directory shared by every stack on
# the machine; nothing here uses gunicornctl.
control_socket_disable = True
# The request line without its query string: a live feed's `?access_token=` never reaches a log.
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(f)s" "%(a)s"'

# ---- metrics and logs ----------------------------------------------------------------------
# Several worker processes answer /metrics: prometheus-client's multiprocess mode, each worker
# writing its values to files in PROMETHEUS_MULTIPROC_DIR that any worker sums on a scrape. The
# directory is the stack's own when given (the supervisor sets one per stack), else a new
# temporary one; it is set here, in the master, before any worker imports prometheus-client.
import shutil  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout, for `shared`

from shared import metrics_dir  # noqa: E402

_given_dir = os.environ.get(metrics_dir.ENV)
_metrics_dir = metrics_dir.prepare(_given_dir, "tabletop-gateway-metrics-")


def on_starting(server):
    # A restarted gateway starts from zero: files of the last run's workers would be summed in.
    metrics_dir.clean(_metrics_dir)


def post_fork(server, worker):
    from shared import logs

    logs.configure("gateway")


def child_exit(server, worker):
    # A dead worker's live gauges leave the sum; its counters' files stay (counts never drop).
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if _given_dir is None:  # ours alone: nothing else reads it
        shutil.rmtree(_metrics_dir, ignore_errors=True)
